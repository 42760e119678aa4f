import argparse

from openrlhf.models import Actor
from openrlhf.trainer import KTOTrainer
from openrlhf.utils import get_strategy


def train(args):
    strategy = get_strategy(args)
    model = Actor(args.pretrain, bf16=args.bf16, lora_rank=args.lora_rank, ds_config=strategy.get_ds_train_config())
    reference = Actor(args.pretrain, bf16=args.bf16, ds_config=strategy.get_ds_eval_config(offload=args.ref_offload))
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    loader = strategy.setup_dataloader([], args.micro_train_batch_size, True, True)
    trainer = KTOTrainer(model=model, ref_model=reference, strategy=strategy, train_dataloader=loader)
    trainer.fit(args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain", type=str, default=None)
    parser.add_argument("--micro_train_batch_size", type=int, default=8)
    parser.add_argument("--train_batch_size", type=int, default=128)
    parser.add_argument("--gradient_checkpointing", action="store_true", default=False)
    parser.add_argument("--zero_stage", type=int, default=2)
    parser.add_argument("--bf16", action="store_true", default=False)
    parser.add_argument("--ref_offload", action="store_true", default=False)
    parser.add_argument("--lora_rank", type=int, default=0)
    parser.add_argument("--max_len", type=int, default=2048)
    args = parser.parse_args()
    train(args)

import argparse

from openrlhf.models import Actor
from openrlhf.trainer.dpo_trainer import DPOTrainer
from openrlhf.utils import get_strategy


def train(args):
    strategy = get_strategy(args)
    model = Actor(args.model.model_name_or_path, param_dtype=args.ds.param_dtype, lora_rank=args.ds.lora.rank,
                  ds_config=strategy.get_ds_train_config())
    reference = Actor(args.model.model_name_or_path, param_dtype=args.ds.param_dtype,
                      ds_config=strategy.get_ds_eval_config(offload=args.ref.offload))
    if args.model.gradient_checkpointing_enable:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    loader = strategy.setup_dataloader([], args.train.micro_batch_size, True, True)
    trainer = DPOTrainer(model=model, strategy=strategy, ref_model=reference, train_dataloader=loader,
                         batch_size=args.train.batch_size)
    trainer.fit(args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model.model_name_or_path", type=str, default=None)
    parser.add_argument("--train.micro_batch_size", type=int, default=4, help="per-GPU batch")
    parser.add_argument("--train.batch_size", type=int, default=64, help="global batch")
    parser.add_argument("--model.gradient_checkpointing_enable", action="store_true", default=False)
    parser.add_argument("--ds.zero_stage", type=int, default=3)
    parser.add_argument("--ds.param_dtype", type=str, default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--ds.adam_offload", action="store_true", default=False)
    parser.add_argument("--ds.ring_attn_size", type=int, default=1)
    parser.add_argument("--ds.tensor_parallel_size", type=int, default=1)
    parser.add_argument("--ds.lora.rank", type=int, default=0)
    parser.add_argument("--ds.packing_samples", action="store_true", default=False)
    parser.add_argument("--ref.offload", action="store_true", default=False)
    parser.add_argument("--data.max_len", type=int, default=1024)
    parser.add_argument("--data.dataset", type=str, default=None)
    args = parser.parse_args()
    from openrlhf.utils.config import hierarchize

    train(hierarchize(args))

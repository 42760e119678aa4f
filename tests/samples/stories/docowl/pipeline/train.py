import argparse

import torch.distributed as dist
from transformers import Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument('--pretrained-ckpt', type=str, default='MAGAer13/mplug-owl-llama-7b-pt')
parser.add_argument('--language-training-method', type=str, default='lora', help='lora or full')
parser.add_argument('--seq-length', type=int, default=1024, help='Number of tokens.')
parser.add_argument('--bf16', action='store_true', default=False, help='Run in bf16.')
parser.add_argument('--micro-batch-size', type=int, default=None, help='Per-GPU batch size.')
parser.add_argument('--global-batch-size', type=int, default=256, help='Global batch size.')
parser.add_argument('--gradient-accumulation-steps', type=int, default=8)
parser.add_argument('--eval-iters', type=int, default=100)
parser.add_argument('--gradient-checkpointing', action='store_true')
parser.add_argument('--deepspeed', type=str, default=None)


def get_accumulation_step(args):
    gpu_nums = dist.get_world_size()
    return max(1, int(round(args.global_batch_size / (args.micro_batch_size * gpu_nums))))


def main():
    args, left_argv = parser.parse_known_args()
    if args.global_batch_size is not None:
        args.gradient_accumulation_steps = get_accumulation_step(args)
    model, train_data, valid_data = build(args)
    trainer = Trainer(
        model=model,
        train_dataset=train_data,
        eval_dataset=valid_data,
        args=TrainingArguments(
            output_dir='out',
            evaluation_strategy='steps',
            eval_steps=args.eval_iters,
            per_device_train_batch_size=args.micro_batch_size,
            bf16=args.bf16,
            fp16=not args.bf16,
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            gradient_checkpointing=args.gradient_checkpointing,
            logging_steps=args.eval_iters // 4,
            deepspeed=args.deepspeed,
        ),
    )
    trainer.train()


if __name__ == '__main__':
    main()

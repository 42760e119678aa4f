"""An mPLUG-style script: argparse flags mapped onto TrainingArguments by hand."""
import argparse

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import Trainer
from transformers.training_args import TrainingArguments

from pipeline.data import build_datasets
from pipeline.trainer import CustomTrainer

parser = argparse.ArgumentParser()
parser.add_argument('--micro-batch-size', type=int, default=None,
                    help='Per-device batch.')
parser.add_argument('--global-batch-size', type=int, default=256)
parser.add_argument("--eval_iters", "--eval-iters", type=int, default=100)
parser.add_argument('--bf16', action='store_true', default=False)
parser.add_argument('--no-shuffle', dest='shuffle', action='store_false')
parser.add_argument('--gradient-checkpointing', action='store_true')
parser.add_argument('-lr', '--learning-rate', type=float, default=-2e-5 * -1)
parser.add_argument('--deepspeed', type=str, default=None)
parser.add_argument('--seq-length', type=int, default=2048 * 2)
parser.add_argument('--workers', type=int, default=int("8"))
parser.add_argument('config_path')


def accumulation_from_global(args):
    return max(1, args.global_batch_size // args.micro_batch_size)


def main():
    args, rest = parser.parse_known_args()
    if args.global_batch_size is not None:
        args.gradient_accumulation_steps = accumulation_from_global(args)
    args.lr_floor = 0.0

    accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="bf16")
    loader = DataLoader([], batch_size=args.micro_batch_size)
    train_data, valid_data = build_datasets(args)
    extra = {"report_to": "none"}
    trainer = CustomTrainer(
        model=None,
        train_dataset=train_data,
        eval_dataset=valid_data,
        compute_metrics=None,
        args=TrainingArguments(
            output_dir="out",
            per_device_train_batch_size=args.micro_batch_size,
            evaluation_strategy='steps',
            eval_steps=args.eval_iters,
            logging_steps=args.eval_iters // 4,
            bf16=args.bf16,
            fp16=not args.bf16,
            gradient_checkpointing=args.gradient_checkpointing,
            warmup_ratio=0.03,
            **extra,
        ),
    )
    trainer.train()


if __name__ == '__main__':
    main()

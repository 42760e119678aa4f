"""A Megatron-style entry: its own argument parser and training loop, no HF Trainer."""
import argparse

from train.loop import build_model_trainer


def parse_train_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-name", type=str, required=True)
    parser.add_argument("--seq-length", type=int, default=2048)
    parser.add_argument("--micro-batch-size", type=int, default=1)
    parser.add_argument("--global-batch-size", type=int, default=16)
    parser.add_argument("--tensor-model-parallel-size", type=int, default=1)
    parser.add_argument("--pipeline-model-parallel-size", type=int, default=1)
    parser.add_argument("--use-distributed-optimizer", action="store_true")
    parser.add_argument("--bf16", action="store_true")
    return parser.parse_args()


def main():
    args = parse_train_args()
    trainer = build_model_trainer(args)
    trainer.train()


if __name__ == "__main__":
    main()

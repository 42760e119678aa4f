import argparse

import torch


def main():
    parser = argparse.ArgumentParser(description="pretraining", allow_abbrev=False)
    parser.add_argument("--micro-batch-size", type=int, default=4)
    parser.add_argument("--seq-length", type=int, default=2048)
    parser.add_argument("--global-batch-size", type=int, default=256)
    args = parser.parse_args()
    model = torch.nn.Linear(args.seq_length, 1)
    loss = model(torch.zeros(args.micro_batch_size, args.seq_length)).sum()
    loss.backward()


if __name__ == "__main__":
    main()

import argparse

from pkg.trainer import SFTTrainer


def train(args):
    strategy = build_strategy(args)
    model = load_model(args.pretrain)
    trainer = SFTTrainer(model=model, strategy=strategy, optim=None, train_dataloader=[],
                         max_epochs=args.max_epochs)
    trainer.fit()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain", type=str, default=None)
    parser.add_argument("--micro_train_batch_size", type=int, default=8)
    parser.add_argument("--max_epochs", type=int, default=1)
    parser.add_argument("--max_len", type=int, default=2048)
    parser.add_argument("--zero_stage", type=int, default=2)
    args = parser.parse_args()
    train(args)

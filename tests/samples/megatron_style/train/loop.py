import torch


class _Loop:
    def __init__(self, args):
        self.args = args

    def train(self):
        for _ in range(self.args.global_batch_size // self.args.micro_batch_size):
            torch.cuda.synchronize()


def build_model_trainer(args):
    return _Loop(args)

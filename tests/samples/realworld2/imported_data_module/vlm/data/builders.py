from torch.utils.data import Dataset


class PairsDataset(Dataset):
    def __init__(self, path, tokenizer):
        self.path = path
        self.tokenizer = tokenizer


def build_data_module(tokenizer, data_args):
    """Training pairs only: evaluation happens offline with separate scripts."""
    train_set = PairsDataset(data_args.data_path, tokenizer)
    return dict(train_dataset=train_set, eval_dataset=None, data_collator=None)


def build_data_module_with_holdout(tokenizer, data_args):
    train_set = PairsDataset(data_args.data_path, tokenizer)
    holdout = PairsDataset(data_args.holdout_path, tokenizer)
    return {"train_dataset": train_set, "eval_dataset": holdout}

"""Trainers whose datasets arrive through `**` dicts built in several ways."""
import transformers
from transformers import Trainer

from data.builders import build_module_elsewhere


def module_with_local_none(tokenizer):
    train_dataset = [1, 2, 3]
    eval_dataset = None
    return dict(train_dataset=train_dataset, eval_dataset=eval_dataset)


def module_maybe_eval(data_args):
    train_dataset = [1]
    if data_args.eval_data_path:
        eval_dataset = [2]
    else:
        eval_dataset = None
    return {"train_dataset": train_dataset, "eval_dataset": eval_dataset}


def run_local_none(model, training_args):
    data_module = module_with_local_none(tokenizer=None)
    return Trainer(model=model, args=training_args, **data_module)


def run_maybe_eval(model, training_args, data_args):
    data_module = module_maybe_eval(data_args)
    return transformers.Seq2SeqTrainer(model=model, args=training_args, **data_module)


def run_imported(model, training_args):
    data_module = build_module_elsewhere()
    return Trainer(model=model, args=training_args, **data_module)


def run_inline(model, training_args, metrics_fn):
    return Trainer(model=model, args=training_args, compute_metrics=metrics_fn,
                   **{"train_dataset": [1], "eval_dataset": None})

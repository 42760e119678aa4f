import argparse

from transformers import TrainingArguments


def run():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval-every", type=int, default=500)
    cfg = parser.parse_args()
    cfg.max_steps = 5
    model_config.hidden = 3
    return TrainingArguments(output_dir="o", eval_steps=cfg.eval_every, logging_steps=model_config.every)

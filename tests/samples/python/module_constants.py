"""Hyperparameters written as module constants, alpaca-lora style, read where the trainer config names them."""
import argparse
import os

import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--micro_batch", type=int, default=4)
parser.add_argument("--data_path", type=str, default="data.json")
args = parser.parse_args()

MICRO_BATCH_SIZE = args.micro_batch  # the command line's value
BATCH_SIZE = 128
GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE
EPOCHS = 3
STEPS_BETWEEN_EVALS = 100
EVAL_STEPS = STEPS_BETWEEN_EVALS  # a name for a name
CHECKPOINTING = True
if os.environ.get("NO_CHECKPOINTING"):
    CHECKPOINTING = False
DTYPE = torch.float16
CUTOFF_LEN = 256
SAVE_STEPS = 200


def build_arguments(output_dir, optim="adamw_torch"):
    STEPS_BETWEEN_EVALS = 7  # a local of the same name: not the one EVAL_STEPS is bound to
    eval_batch = 2
    logging_steps = 10
    logging_steps = 20
    return transformers.TrainingArguments(
        per_device_train_batch_size=MICRO_BATCH_SIZE,
        gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS,
        per_device_eval_batch_size=eval_batch,
        gradient_checkpointing=CHECKPOINTING,
        num_train_epochs=EPOCHS,
        eval_steps=EVAL_STEPS,
        save_steps=SAVE_STEPS,
        logging_steps=logging_steps,
        optim=optim,
        output_dir=output_dir,
    )


model = transformers.AutoModelForCausalLM.from_pretrained("huggyllama/llama-7b", torch_dtype=DTYPE)
trainer = transformers.Trainer(model=model, args=build_arguments("out"))
trainer.train()

"""Instruction tuning of a causal LM with LoRA adapters, its options taken from python-fire."""
import os

import fire
import torch
import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

MAX_WORDS = 4096


def train(
    base_model: str = "",
    data_path: str = "data/instructions.json",
    output_dir: str = "./adapters",
    batch_size: int = 64,
    micro_batch_size: int = 8,
    num_epochs: int = 2,
    learning_rate: float = 2e-4,
    cutoff_len: int = 512,
    lora_r: int = 16,
    lora_alpha: int = 32,
    lora_target_modules: list = ("q_proj", "k_proj", "v_proj", "o_proj"),
    group_by_length: bool = False,
    resume_from_checkpoint: str = None,
    eval_batch: int = 4,
):
    steps = batch_size // micro_batch_size
    world = int(os.environ.get("WORLD_SIZE", 1))
    if world > 1:
        steps = steps // world
    if resume_from_checkpoint and not os.path.exists(resume_from_checkpoint):
        resume_from_checkpoint = None
    eval_batch = min(eval_batch, micro_batch_size)

    model = transformers.AutoModelForCausalLM.from_pretrained(
        base_model, load_in_8bit=True, torch_dtype=torch.float16)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base_model)

    def tokenize(text):
        return tokenizer(text, truncation=True, max_length=cutoff_len)

    model = prepare_model_for_kbit_training(model)
    model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=lora_alpha, target_modules=list(lora_target_modules),
                                             task_type="CAUSAL_LM"))
    data = load_dataset("json", data_files=data_path)["train"].map(lambda row: tokenize(row["text"]))
    trainer = transformers.Trainer(
        model=model,
        train_dataset=data,
        args=transformers.TrainingArguments(
            per_device_train_batch_size=micro_batch_size,
            per_device_eval_batch_size=eval_batch,
            gradient_accumulation_steps=steps,
            num_train_epochs=num_epochs,
            learning_rate=learning_rate,
            fp16=True,
            group_by_length=group_by_length,
            output_dir=output_dir,
        ),
    )
    trainer.train(resume_from_checkpoint=resume_from_checkpoint)


if __name__ == "__main__":
    fire.Fire(train)

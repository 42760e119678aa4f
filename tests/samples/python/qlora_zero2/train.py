# A QLoRA fine-tune in the LLaVA style: the base is loaded in 4 bits onto this process's GPU and trained through
# LoRA adapters under DeepSpeed ZeRO-2.
from dataclasses import dataclass, field
from typing import Optional

import torch
import transformers
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-13b-v1.5")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)
    lora_enable: bool = False
    lora_r: int = 64
    bits: int = field(default=16, metadata={"help": "How many bits to use."})


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    extra = {}
    if training_args.bits in (4, 8):
        extra = dict(device_map={"": training_args.device}, quantization_config=transformers.BitsAndBytesConfig(
            load_in_4bit=training_args.bits == 4, load_in_8bit=training_args.bits == 8,
            bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_quant_type="nf4"))
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **extra)
    if training_args.bits in (4, 8):
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=training_args.gradient_checkpointing)
    if training_args.lora_enable:
        model = get_peft_model(model, LoraConfig(r=training_args.lora_r, lora_alpha=16, task_type="CAUSAL_LM"))
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()

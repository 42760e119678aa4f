# A LLaVA-style fine-tuning entry point (written for trainlint's tests).
import os
import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
import transformers

from vlm.train.vlm_trainer import VLMTrainer
from .helpers import rank0_log
from ..arguments import *


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="org/base-7b")
    vision_tower: Optional[str] = field(default=None)
    select_layer: Optional[int] = field(default=-2)   # penultimate layer
    projector: str = 'mlp2x_gelu'
    freeze_backbone: bool = field(default=False)


@dataclasses.dataclass
class DataArguments:
    split_name: str
    manifest: str = field(metadata={"help": "no default at all"})
    data_path: str = field(default=None,
                           metadata={"help": "Where the training json lives."})
    image_folder: Optional[str] = field(default=None)
    lazy_preprocess: bool = False
    aspect: str = "pad"


@dataclass(frozen=False)
class TrainingArguments(transformers.TrainingArguments):
    cache_dir: Optional[str] = field(default=None)
    optim: str = field(default="adamw_torch")
    model_max_length: int = field(
        default=512,
        metadata={"help": "Longest sequence; longer ones are truncated."},
    )
    mm_max_tokens: int = 2048 * 2
    learning_floor: float = -1e-3
    bits: int = field(default=16, metadata={"help": "Quantisation bits."})
    lora_enable: bool = False
    lora_r: int = 64
    lora_targets: List[str] = field(default_factory=lambda: ["q_proj", "v_proj"])
    warmup_tokens: int = field(default_factory=lambda: 128)
    group_lengths: bool = field(default_factory=bool)


def make_supervised_data_module(tokenizer, data_args) -> Dict:
    """Dataset and collator; no evaluation split."""
    train_dataset = object()
    collator = object()
    return dict(train_dataset=train_dataset,
                eval_dataset=None,
                data_collator=collator)


def train(attn_implementation=None):
    parser = transformers.HfArgumentParser(
        (ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    model = transformers.AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        attn_implementation="flash_attention_2",
        torch_dtype=torch.bfloat16,
    )
    if training_args.gradient_checkpointing:
        model.enable_input_require_grads()

    if training_args.lora_enable:
        from peft import LoraConfig, get_peft_model
        config = LoraConfig(r=training_args.lora_r, lora_alpha=16)
        model = get_peft_model(model, config)

    training_args.per_device_eval_batch_size = training_args.per_device_train_batch_size
    data_module = make_supervised_data_module(tokenizer=None, data_args=data_args)
    trainer = VLMTrainer(model=model, args=training_args, **data_module)
    trainer.train()


if __name__ == "__main__":
    train()

"""Building blocks for the small jobs rules use as documented examples."""
from __future__ import annotations

from typing import Dict, Optional

TRAIN_PY = '''\
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-7b-v1.5")
    vision_tower: Optional[str] = field(default=None)


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)
    tune_vision: bool = field(default=False)
    max_slice_nums: Optional[int] = field(default=None)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None, eval_dataset={eval_dataset})
    trainer.train()


if __name__ == "__main__":
    train()
'''

# A job whose eval pass peaks above its training step: a 152k-token vocabulary's logits at four times the train
# batch, over model states ZeRO-3 shards across 8 GPUs and activations gradient checkpointing keeps small.
EVAL_HEAVY_FLAGS = """
--model_name_or_path Qwen/Qwen2.5-7B-Instruct
--deepspeed ds.json
--bf16 True
--gradient_checkpointing True
--per_device_train_batch_size 4
--per_device_eval_batch_size {eval_batch}
--eval_strategy {strategy}
--eval_steps 500
"""
ZERO3 = '{"zero_optimization": {"stage": 3}}\n'

ZERO2 = '''{
  "bf16": {"enabled": "auto"},
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "train_batch_size": "auto",
  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"}}
}
'''


def job(flags: str, launcher: str = "deepspeed --num_gpus 8", eval_dataset: str = "None",
        extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """A launcher `finetune.sh` running `train.py` with the given flags (one per line)."""
    lines = [f"{launcher} train.py \\"]
    flag_lines = [line.strip() for line in flags.strip().splitlines() if line.strip()]
    for index, line in enumerate(flag_lines):
        lines.append(f"    {line}" + (" \\" if index < len(flag_lines) - 1 else ""))
    files = {
        "finetune.sh": "#!/bin/bash\n" + "\n".join(lines) + "\n",
        "train.py": TRAIN_PY.replace("{eval_dataset}", eval_dataset),
    }
    files.update(extra or {})
    return files

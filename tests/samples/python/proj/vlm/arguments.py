"""Argument dataclasses kept apart from the training script."""
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="org/tiny-vlm-1b")
    vision_tower: Optional[str] = field(default=None)


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=3072, metadata={"help": "tokens per sample"})
    tune_vision_tower: bool = field(default=False)

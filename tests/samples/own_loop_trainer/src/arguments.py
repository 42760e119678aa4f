from dataclasses import dataclass, field
from typing import Optional

from transformers import Seq2SeqTrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="llama-7B")


@dataclass
class DataArguments:
    dataset_name: str = field(default="wic")
    data_max_length: int = field(default=1024)


@dataclass
class FusedTrainingArguments(Seq2SeqTrainingArguments):
    tag: str = field(default="fused")
    clip_grad_norm: Optional[float] = field(default=None)

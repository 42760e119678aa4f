import transformers
from dataclasses import dataclass, field
from typing import Optional

from share4v.train.llava_trainer import LLaVATrainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-7b-v1.5")
    vision_tower: Optional[str] = field(default=None)
    mm_vision_select_layer: Optional[int] = field(default=-2)


@dataclass
class DataArguments:
    data_path: str = field(default=None)
    image_aspect_ratio: str = "square"


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512, metadata={"help": "Sequences are right-padded and truncated."})
    group_by_modality_length: bool = field(default=False)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.LlamaForCausalLM.from_pretrained(model_args.model_name_or_path)
    module = dict(train_dataset=make_dataset(data_args), eval_dataset=None)
    trainer = LLaVATrainer(model=model, args=training_args, **module)
    trainer.train()

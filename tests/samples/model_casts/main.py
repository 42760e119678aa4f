"""P-tuning, LoRA or full fine-tuning of a ChatGLM-style model from one script: the weights are loaded in fp32 and
cast to the dtype each mode trains in."""
from dataclasses import dataclass, field
from typing import Optional

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModel, HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="THUDM/chatglm2-6b")
    pre_seq_len: Optional[int] = field(default=None)
    lora_r: Optional[int] = field(default=None)
    max_source_length: int = field(default=64)


def main():
    parser = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModel.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    if model_args.pre_seq_len is not None:
        model = model.half()
        model.transformer.prefix_encoder.float()
    elif model_args.lora_r is not None:
        model = model.to(torch.bfloat16)
        model = get_peft_model(model, LoraConfig(r=model_args.lora_r, target_modules=["query_key_value"]))
    else:
        model = model.float()
    trainer = Seq2SeqTrainer(model=model, args=training_args)
    trainer.train()


def collate(batch):
    return batch.to(torch.float16)


if __name__ == "__main__":
    main()

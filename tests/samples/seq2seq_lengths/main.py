"""A prompt/response fine-tune of a decoder-only chat model: every row is the prompt cut to
max_source_length, then the response cut to max_target_length, padded to their sum."""
from dataclasses import dataclass, field
from typing import Optional

from transformers import (AutoModel, AutoTokenizer, DataCollatorForSeq2Seq, HfArgumentParser,
                          Seq2SeqTrainer, Seq2SeqTrainingArguments)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "checkpoint to start from"})
    pre_seq_len: Optional[int] = field(default=None)


@dataclass
class DataTrainingArguments:
    train_file: Optional[str] = field(default=None)
    prompt_column: Optional[str] = field(default=None)
    response_column: Optional[str] = field(default=None)
    max_source_length: Optional[int] = field(default=1024, metadata={"help": "prompt tokens kept"})
    max_target_length: Optional[int] = field(default=128, metadata={"help": "response tokens kept"})


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    model = AutoModel.from_pretrained(model_args.model_name_or_path, trust_remote_code=True).half()
    max_seq_length = data_args.max_source_length + data_args.max_target_length

    def preprocess(examples):
        rows = []
        for prompt, answer in zip(examples[data_args.prompt_column], examples[data_args.response_column]):
            a_ids = tokenizer.encode(prompt)[: data_args.max_source_length]
            b_ids = tokenizer.encode(answer)[: data_args.max_target_length]
            ids = a_ids + b_ids
            rows.append(ids + [tokenizer.pad_token_id] * (max_seq_length - len(ids)))
        return {"input_ids": rows, "labels": rows}

    trainer = Seq2SeqTrainer(model=model, args=training_args, tokenizer=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer), train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()

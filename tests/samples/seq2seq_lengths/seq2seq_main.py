"""An encoder-decoder fine-tune: the encoder reads the prompt cut to max_source_length, the decoder
writes the response cut to max_target_length."""
from dataclasses import dataclass, field
from typing import Optional

from transformers import (AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, HfArgumentParser,
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
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_args.model_name_or_path)

    def preprocess(examples):
        inputs = tokenizer(examples[data_args.prompt_column], max_length=data_args.max_source_length, truncation=True)
        labels = tokenizer(text_target=examples[data_args.response_column], max_length=data_args.max_target_length,
                           truncation=True)
        inputs["labels"] = labels["input_ids"]
        return inputs

    trainer = Seq2SeqTrainer(model=model, args=training_args, tokenizer=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer), train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()

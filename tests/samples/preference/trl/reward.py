# Direct preference optimisation of an instruction model with TRL.
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import RewardConfig, RewardTrainer


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    dataset_name: str = field(default="trl-lib/ultrafeedback_binarized")
    use_peft: bool = field(default=False)
    lora_r: Optional[int] = field(default=16)


def main():
    parser = HfArgumentParser((ScriptArguments, RewardConfig))
    script_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path, torch_dtype="bfloat16")
    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path)
    dataset = load_dataset(script_args.dataset_name)
    trainer = RewardTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset["train"],
        eval_dataset=None,
        processing_class=tokenizer,
    )
    trainer.train()


if __name__ == "__main__":
    main()

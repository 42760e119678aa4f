# Direct preference optimisation of an instruction model with TRL.
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from peft import LoraConfig
from trl import DPOConfig, DPOTrainer


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    dataset_name: str = field(default="trl-lib/ultrafeedback_binarized")
    use_peft: bool = field(default=False)
    lora_r: Optional[int] = field(default=16)


def main():
    parser = HfArgumentParser((ScriptArguments, DPOConfig))
    script_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path, torch_dtype="bfloat16")
    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path)
    dataset = load_dataset(script_args.dataset_name)
    trainer = DPOTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset["train"],
        eval_dataset=None,
        processing_class=tokenizer,
        peft_config=LoraConfig(r=script_args.lora_r, task_type="CAUSAL_LM"),
    )
    trainer.train()


if __name__ == "__main__":
    main()

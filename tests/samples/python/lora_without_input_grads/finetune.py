# A LoRA fine-tune in the style many model repositories publish: the model is wrapped with get_peft_model and
# handed to HF's Trainer; the line that makes the inputs require grad is left commented out.
from dataclasses import dataclass, field
from typing import Optional

import torch
import transformers
from transformers import AutoModelForCausalLM, Trainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="meta-llama/Llama-2-7b-hf")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)
    use_lora: bool = field(default=False)


def load_model(path, use_lora):
    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16)
    for param in model.parameters():
        param.requires_grad_(False)
    if use_lora:
        from peft import LoraConfig, TaskType, get_peft_model

        config = LoraConfig(task_type=TaskType.CAUSAL_LM, target_modules=["q_proj", "v_proj"], r=64, lora_alpha=32)
        model = get_peft_model(model, config)
        model.print_trainable_parameters()
        # model.enable_input_require_grads()  # needed with an adapter
    return model


if __name__ == "__main__":
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = load_model(model_args.model_name_or_path, training_args.use_lora)
    trainer = Trainer(model=model, args=training_args, train_dataset=None)
    trainer.train()

"""Distillation with TRL's parser: `distill.py --config recipe.yaml [--flag value ...]`."""
from datasets import load_dataset
from transformers import AutoModelForCausalLM
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser

if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    dataset = load_dataset(script_args.dataset_name)
    trainer = SFTTrainer(model=model, args=training_args, train_dataset=dataset[script_args.dataset_train_split])
    trainer.train()

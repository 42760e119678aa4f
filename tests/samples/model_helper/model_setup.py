import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig


def build_model(args):
    quantization = None
    if args.use_4bit_quantization and args.use_8bit_quantization:
        raise ValueError("choose 4-bit or 8-bit loading, not both")
    elif args.use_4bit_quantization:
        quantization = BitsAndBytesConfig(
            load_in_4bit=args.use_4bit_quantization,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
    elif args.use_8bit_quantization:
        quantization = BitsAndBytesConfig(load_in_8bit=args.use_8bit_quantization)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, quantization_config=quantization,
                                                 torch_dtype=torch.bfloat16)
    if args.use_peft_lora:
        model = get_peft_model(model, LoraConfig(r=args.lora_r, lora_alpha=16, target_modules="all-linear"))
    return model, AutoTokenizer.from_pretrained(args.model_name_or_path)


def load_splits(tokenizer, args):
    data = load_dataset(args.dataset_name)
    return data["train"], data["test"]

"""Builds the DeepSpeed config in code, the way chat fine-tuning pipelines often do."""


def build_zero_config(offload, dtype, stage=2, log_dir=""):
    device = "cpu" if offload else "none"
    precision = {"bf16": "bf16", "fp16": "fp16"}[dtype]
    return {
        "train_batch_size": 32,
        "train_micro_batch_size_per_gpu": 4,
        "zero_optimization": {
            "stage": stage,
            "offload_param": {"device": device},
            "offload_optimizer": {"device": device},
        },
        precision: {"enabled": True},
        "tensorboard": {"output_path": log_dir},
    }


def build_frozen_config(offload, dtype, stage=0):
    return {"zero_optimization": {"stage": stage, "offload_param": {"device": "cpu" if offload else "none"}}}

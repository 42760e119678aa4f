from pkg.trainer.sft import SFTTrainer

__all__ = ["SFTTrainer"]

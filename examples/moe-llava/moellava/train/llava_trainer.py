from transformers import Trainer


class LLaVATrainer(Trainer):
    pass

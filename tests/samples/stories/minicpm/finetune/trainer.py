from transformers import Trainer


class CPMTrainer(Trainer):
    pass

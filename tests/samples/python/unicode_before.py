# Réglages d'entraînement — 日本語のコメント 🚀
from dataclasses import dataclass, field
import transformers


@dataclass
class Args(transformers.TrainingArguments):
    titre: str = "modèle ünïcode"; model_max_length: int = field(default=2048*2)
    emoji: str = "🚀🚀"; per_device_eval_batch_size: int = 8

"""The defaults TRL's trainer configs set over TrainingArguments', by release: `SFTConfig`, `DPOConfig`, `GRPOConfig`
and the other configs of TRL's stable trainers turn bf16 on from trl 0.19 (huggingface/trl#3515, unless fp16 is
set) and gradient checkpointing from trl 0.22 (huggingface/trl#3510). A job whose training arguments are such a
config takes them from the release the repository pins; with no pin, each is unknown, as either may hold. SFTConfig
limits rows to 1024 tokens when no length is given, in every release."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

from trainlint.core import Setting, SourceKind, Unknown, parsed_release
from trainlint.knobs import K, coerce
from trainlint.resolution.precedence import Candidates
from trainlint.resolution.workspace import Workspace

# The configs whose defaults changed (trl/trainer/*_config.py at those releases); GKDConfig derives from SFTConfig.
CHANGED_CONFIGS = frozenset({"SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "ORPOConfig", "CPOConfig",
                             "BCOConfig", "RewardConfig", "PRMConfig", "OnlineDPOConfig", "IterativeSFTConfig",
                             "GKDConfig"})
# (knob, the first release that turns it on by default, the change).
CHANGED_DEFAULTS: Tuple[Tuple[str, str, str], ...] = (
    (K.BF16, "0.19", "huggingface/trl#3515"),
    (K.GRADIENT_CHECKPOINTING, "0.22", "huggingface/trl#3510"),
)


# SFTConfig's length limit when none is given, in every release since mid-2023: `max_length=1024` from trl 0.16
# (huggingface/trl#2895), and before it `min(tokenizer.model_max_length, 1024)` for `max_seq_length=None`.
SFT_MAX_LENGTH = 1024


def apply_trl_defaults(config: Optional[str], workspace: Workspace, folder: Path, candidates: Candidates) -> None:
    """TRL's own defaults for the job whose training arguments are the TRL config `config` (None: no TRL config),
    over TrainingArguments' (which must be added first), from the trl release pinned above `folder`."""
    if config == "SFTConfig":
        candidates.add(K.MAX_SEQ_LENGTH, Setting(SFT_MAX_LENGTH, SourceKind.FRAMEWORK_DEFAULT, None,
                                                 note="TRL SFTConfig default (max_length 1024)"))
    if config not in CHANGED_CONFIGS:
        return
    pin = workspace.pin_above(folder, "trl")
    release = parsed_release(pin.value) if pin is not None and isinstance(pin.value, str) else None
    ceiling = workspace.ceiling_above(folder, "trl")
    for knob, since, change in CHANGED_DEFAULTS:
        if knob == K.BF16 and _fp16_on(candidates):
            continue  # TRL takes bf16 only when fp16 is not set
        if release is not None:
            if release < parsed_release(since):
                continue  # TrainingArguments' default stands
            value: object = True
            note = f"TRL {config} default from trl {since} ({change}); trl {pin.value} is pinned"
        elif ceiling is not None and ceiling.below(since):
            continue
        else:
            value = Unknown(f"TRL's {config} turns {knob} on by default from trl {since} ({change}), and the "
                            "repository pins no trl release")
            note = f"TRL {config} default"
        candidates.add(knob, Setting(value, SourceKind.FRAMEWORK_DEFAULT, None, via=(pin,) if pin else (), note=note))


def _fp16_on(candidates: Candidates) -> bool:
    chosen = candidates.winner(K.FP16)
    return chosen is not None and coerce(K.FP16, chosen.value).value is True

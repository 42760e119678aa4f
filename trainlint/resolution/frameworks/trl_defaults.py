"""The defaults TRL's trainer configs set over TrainingArguments', by release: `SFTConfig`, `DPOConfig`, `GRPOConfig`
and the other configs of TRL's stable trainers turn bf16 on from trl 0.19 (huggingface/trl#3515, unless fp16 is
set) and gradient checkpointing from trl 0.22 (huggingface/trl#3510). A job whose training arguments are such a
config takes them from the release the repository pins; with no pin, each is unknown, as either may hold. SFTConfig
limits rows to 1024 tokens when no length is given, in every release; DPOConfig, ORPOConfig, CPOConfig, KTOConfig and
RewardConfig to 1024 from trl 0.14 and to 512 before (their trainers' fallback for `max_length=None`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import FrozenSet, Optional, Tuple

from trainlint.core import Setting, SourceKind, Unknown, Value, parsed_release
from trainlint.knobs import K, coerce
from trainlint.resolution.precedence import Candidates
from trainlint.resolution.workspace import Workspace

# The configs whose defaults changed (trl/trainer/*_config.py at those releases); GKDConfig derives from SFTConfig.
CHANGED_CONFIGS = frozenset({"SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "ORPOConfig", "CPOConfig",
                             "BCOConfig", "RewardConfig", "PRMConfig", "OnlineDPOConfig", "IterativeSFTConfig",
                             "GKDConfig"})
@dataclass(frozen=True)
class DefaultChange:
    """A default of some TRL configs that changed at a release."""

    configs: FrozenSet[str]
    knob: str
    since: str  # the first release of the new default
    after: Value
    before: Optional[Value]  # None: TrainingArguments' default stands before `since`
    source: str  # where it changed


CHANGED_DEFAULTS: Tuple[DefaultChange, ...] = (
    DefaultChange(CHANGED_CONFIGS, K.BF16, "0.19", True, None, "huggingface/trl#3515"),
    DefaultChange(CHANGED_CONFIGS, K.GRADIENT_CHECKPOINTING, "0.22", True, None, "huggingface/trl#3510"),
    # The preference and reward configs' `max_length`: 1024 from trl 0.14; before, None, which their trainers
    # replaced by 512.
    DefaultChange(frozenset({"DPOConfig", "ORPOConfig", "CPOConfig", "KTOConfig", "RewardConfig"}), K.MAX_SEQ_LENGTH,
                  "0.14", 1024, 512, "trl/trainer/*_config.py"),
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
    for change in CHANGED_DEFAULTS:
        if config not in change.configs:
            continue
        if change.knob == K.BF16 and _fp16_on(candidates):
            continue  # TRL takes bf16 only when fp16 is not set
        value: Value
        if release is not None or ceiling is not None and ceiling.below(change.since):
            newer = release is not None and release >= parsed_release(change.since)
            if (change.after if newer else change.before) is None:
                continue  # TrainingArguments' default stands
            value = change.after if newer else change.before
            pinned = f"trl {pin.value} is pinned" if release is not None and pin else f"`{ceiling.setting.text}`"
            note = f"TRL {config} default ({change.source}); {pinned}"
        else:
            value = Unknown(f"TRL's {config} defaults {change.knob} to {change.after} from trl {change.since} "
                            f"({change.source}), and the repository pins no trl release")
            note = f"TRL {config} default"
        candidates.add(change.knob, Setting(value, SourceKind.FRAMEWORK_DEFAULT, None, via=(pin,) if pin else (),
                                            note=note))


def _fp16_on(candidates: Candidates) -> bool:
    chosen = candidates.winner(K.FP16)
    return chosen is not None and coerce(K.FP16, chosen.value).value is True

"""axolotl: recipes in its own spelling (`micro_batch_size`, `base_model`, `val_set_size`)."""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import AXOLOTL as AXOLOTL_SPELLING
from trainlint.knobs import coerce
from trainlint.resolution.frameworks.adapters import derive_adapter_method
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.precedence import Candidates


def writes_recipe(values: Mapping[str, Setting]) -> bool:
    """An axolotl recipe rather than a LLaMA-Factory one: it names keys only axolotl reads."""
    return "micro_batch_size" in values or "base_model" in values


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """axolotl evaluates whenever a validation split is set: every `eval_steps`, else per epoch.
    Unset, its eval batch is the micro-batch and it trains one epoch."""
    micro = written.get("micro_batch_size")
    if micro is not None and "eval_batch_size" not in written:
        candidates.add("per_device_eval_batch_size", Setting(micro.value, SourceKind.DERIVED, None, via=(micro,),
                                                             note="axolotl: eval_batch_size = micro_batch_size"))
    if "num_epochs" not in written:
        candidates.add("num_train_epochs", Setting(1, SourceKind.FRAMEWORK_DEFAULT, None, note="axolotl default"))
    split = written.get("val_set_size")
    if split is None or not isinstance(split.value, (int, float)) or split.value <= 0:
        return
    strategy = "steps" if "eval_steps" in written or "evals_per_epoch" in written else "epoch"
    candidates.add("eval_strategy", replace(split, value=strategy, via=(split,), note=f"val_set_size {split.value}"))
    per_epoch = written.get("evals_per_epoch")
    if per_epoch is not None and "eval_steps" not in written:
        candidates.add("eval_steps", _eval_ratio(per_epoch, written.get("num_epochs")))


def _eval_ratio(per_epoch: Setting, epochs: Optional[Setting]) -> Setting:
    """axolotl turns `evals_per_epoch` into `eval_steps = 1 / (evals_per_epoch × num_epochs)`, a
    fraction of the run's steps (num_epochs defaults to 1)."""
    count = coerce("max_steps", per_epoch.value).value
    epoch_count = coerce("num_train_epochs", epochs.value).value if epochs is not None else 1
    via = tuple(s for s in (per_epoch, epochs) if s is not None)
    if not isinstance(count, int) or isinstance(epoch_count, (Unknown, str)) or epoch_count is None \
            or count <= 0 or epoch_count <= 0:
        return Setting(Unknown("axolotl computes eval_steps from evals_per_epoch and num_epochs"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    ratio = 1.0 / (count * epoch_count)
    if ratio >= 1:
        return Setting(Unknown(f"evals_per_epoch {count} over {epoch_count} epochs gives no step interval"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    return Setting(ratio, SourceKind.DERIVED, None, via=via,
                   note=f"1 / (evals_per_epoch {count} × num_epochs {epoch_count})")


def _derive_adapter(candidates: Candidates, context: DeriveContext) -> None:
    derive_adapter_method(candidates, "adapter")


AXOLOTL = Framework(
    name="axolotl",
    namespace=AXOLOTL_SPELLING,
    defaults=_defaults,
    derivations=(Derivation(Stage.ADAPTER, _derive_adapter),),
    launcher="axolotl",
)

"""Run the memory estimator over published measurements and print the error distribution.

Usage: python benchmarks/memory_accuracy.py [path/to/memory_calibration.csv]
Default CSV: benchmarks/data/memory_calibration.csv (published measurements; docs/memory-model.md §15).
Each row becomes a TrainingRun built directly from the row's columns (no files involved). The `extra` column
holds settings no other column has, as `knob=value;knob=value` (`torch_dtype=bfloat16` for weights loaded in
16-bit, `fused_linear_cross_entropy=true` for Liger's loss).
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from trainlint.core import RunFacts, Setting, SourceKind, TrainingRun, Value  # noqa: E402
from trainlint.memory import estimate, find_gpu, gpu_from_memory  # noqa: E402

DEFAULT_CSV = REPO_ROOT / "benchmarks" / "data" / "memory_calibration.csv"


@dataclass(frozen=True)
class Result:
    label: str
    measured: float
    estimated: float
    low: float
    high: float

    @property
    def error(self) -> float:
        return (self.estimated - self.measured) / self.measured


def _model_name(text: str) -> str:
    # "Qwen-7B (base, LoRA+emb/lm_head)" -> "Qwen-7B"; "Qwen-1.8B(-Chat)" -> "Qwen-1.8B-Chat"
    return text.split(" (")[0].replace("(", "").replace(")", "").strip()


def _zero_stage(text: str) -> Optional[int]:
    match = re.match(r"\s*([0-3])\b", text)
    return int(match.group(1)) if match else None


def _optim(notes: str) -> str:
    lowered = notes.lower()
    if "adafactor" in lowered:
        return "adafactor"
    if "adam8bit" in lowered or "8-bit adam" in lowered or "8bit" in lowered:
        return "adamw_bnb_8bit"
    return "adamw_torch"


def _extra(text: str) -> Dict[str, Value]:
    """`knob=value;knob=value`, with `true`/`false` and whole numbers read as such."""
    found: Dict[str, Value] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        name, _, written = item.partition("=")
        value: Value = written.strip()
        if value in ("true", "false"):
            value = value == "true"
        elif value.isdigit():
            value = int(value)
        found[name.strip()] = value
    return found


def run_from_row(row: Dict[str, str], index: int) -> TrainingRun:
    """The knobs a launcher for this measurement would resolve to."""
    precision = row["precision"].lower()
    method = row["method"].lower()
    flash = row["flash_attn"].lower()
    knobs: Dict[str, Value] = {
        "model_name_or_path": _model_name(row["model"]),
        "max_seq_length": int(row["seq_len"]),
        "per_device_train_batch_size": int(row["per_device_batch"]),
        "gradient_accumulation_steps": int(row["grad_accum"]),
        "world_size": int(row["num_gpus"]),
        "bf16": precision.startswith("bf16"),
        "fp16": precision.startswith("fp16"),
        "gradient_checkpointing": row["grad_ckpt"].lower().startswith("yes"),
        "lora": method in ("lora", "qlora"),
        "optim": _optim(row["notes"]),
        "offload_optimizer": row["offload"] or "none",
    }
    stage = _zero_stage(row["zero_stage"])
    if stage is not None:
        knobs["zero_stage"] = stage
    if method == "qlora" or re.search(r"int4|4bit|gptq", row["model"], re.I):
        knobs["bits"] = 4
    rank = re.search(r"\br\s*=\s*(\d+)", row["notes"])
    if rank and knobs["lora"]:
        knobs["lora_r"] = int(rank.group(1))
    if "emb" in row["model"].lower() and "lm_head" in row["model"].lower() or "incl. e" in row["model"]:
        knobs["lora_modules_to_save"] = "wte,lm_head"
    if flash.startswith("yes"):
        knobs["attn_implementation"] = "flash_attention_2"
    elif flash.startswith("no"):
        knobs["attn_implementation"] = "eager"
    knobs.update(_extra(row.get("extra") or ""))
    settings = {k: Setting(value=v, kind=SourceKind.ASSUMED, note="calibration row") for k, v in knobs.items()}
    return TrainingRun(
        id=f"calibration:{index}", path="", launcher="calibration", origin=None, entry=None,
        settings=settings, facts=RunFacts(),
    )


def evaluate(rows: Sequence[Dict[str, str]]) -> List[Result]:
    results = []
    for index, row in enumerate(rows, start=2):
        gpu = find_gpu(row["gpu"]) or gpu_from_memory(80.0)
        est = estimate(run_from_row(row, index), gpu)
        label = (f"{_model_name(row['model'])[:22]:22} {row['method']:5} s={row['seq_len']:>5} "
                 f"b={row['per_device_batch']} z={_zero_stage(row['zero_stage'])} n={row['num_gpus']}")
        if "emb" in row["model"].lower():
            label += " +emb"
        results.append(Result(label, float(row["measured_gb_per_gpu"]), est.peak_gib, est.low_gib, est.high_gib))
    return results


def summary(results: Sequence[Result]) -> Dict[str, float]:
    errors = [abs(r.error) for r in results]
    return {
        "rows": float(len(results)),
        "median_abs_error": statistics.median(errors) if errors else float("nan"),
        "within_10": sum(e <= 0.10 for e in errors) / len(errors) if errors else 0.0,
        "within_25": sum(e <= 0.25 for e in errors) / len(errors) if errors else 0.0,
        "in_interval": sum(r.low <= r.measured <= r.high for r in results) / len(results) if results else 0.0,
    }


def load_rows(path: Path) -> List[Dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(argv: Sequence[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    if not path.is_file():
        print(f"calibration CSV not found: {path}", file=sys.stderr)
        return 2
    results = evaluate(load_rows(path))
    print(f"{'configuration':58} {'measured':>8} {'estimate':>8} {'interval':>15} {'error':>7}")
    for r in results:
        print(f"{r.label:58} {r.measured:8.1f} {r.estimated:8.1f} {r.low:7.1f}-{r.high:<7.1f} {r.error:+7.1%}")
    stats = summary(results)
    print()
    print(f"rows: {int(stats['rows'])}")
    print(f"median |error|: {stats['median_abs_error']:.1%}")
    print(f"within ±10%: {stats['within_10']:.0%}   within ±25%: {stats['within_25']:.0%}   "
          f"measured inside the interval: {stats['in_interval']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

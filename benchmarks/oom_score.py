"""Score trainlint against real fine-tuning outcomes reported in public issue threads.

Each row of oom_reports.csv is one launch someone described (model, GPUs, batch, sequence length,
ZeRO/FSDP, ...) and what happened: it ran out of GPU memory, or it trained. The row becomes a small
job on disk (launcher + DeepSpeed JSON + an entry script with an HF TrainingArguments dataclass),
trainlint checks it against the row's GPU and GPU count, and the verdict is:

- an `oom` row is *caught* when a memory rule reports at warning or error, else *missed*;
- a `fits` row is *quiet* when no memory rule reports at warning or error, else a *false alarm*.

Settings a thread does not state are not invented. When the thread says (or plainly implies) which recipe
the reporter ran (`recipe`: a launcher path, or a README command), the settings it leaves unstated are
that recipe's published values, listed in recipes.csv as read from the recipe's repository; a setting
the reporter changed overrides the recipe. Otherwise a setting the job cannot run without (the
sharding, the precision, checkpointing) is read from an environment variable the job does not set,
so trainlint sees it as unknown exactly as it would on a launcher that takes it from its caller, and
a pinned transformers version goes into requirements.txt. Settings the thread states that have no column
of their own (`extra`: `key=value;key=value`, e.g. LLaMA-Factory's `use_unsloth=true`) are written into the
recipe or launcher verbatim. A row is *grounded* when it states what a
verdict needs (model, micro-batch, sequence length, sharding, and the GPU count when it shards);
the score is printed for all rows and for the grounded ones.

Recipes change, so a recipe is read as it stood when the report was written. A row's `reported` column is
the date (YYYY-MM-DD, UTC) of the post the row records, and its recipe is named `path@commit`: the last
commit, at or before the end of that day, that changed the files the reading rests on (launcher or README
command, entry script, DeepSpeed config, dependency pins), so its content is the recipe of that date.
recipes.csv keys its rows by (repository, recipe, commit) and gives the commit's date (`committed`), which
must not be later than the row's `reported`; two eras of one recipe are two rows. A recipe named without
`@commit` is the reading at the repository's HEAD (commit `HEAD`). Beyond the settings, a recipe may give
`lora_modules_to_save` (modules peft trains as full copies next to the adapters, comma-separated; `NAMES
unless model contains WORD` when the recipe drops them for a model path holding WORD, e.g. chat checkpoints;
the job passes them as `--lora_modules_to_save`, a field of its entry script's dataclass, or as LLaMA-Factory's
`additional_target`), `transformers_pin`, the exact `transformers==X` its repository pinned at that commit, which fills
`transformers_version` only when the row leaves it empty (a `>=` floor or a git install is no pin and is
not used), and `vision_trained` (`true` when the recipe trains the vision encoder, fully or through adapters,
so its activations are kept for the backward pass; the job passes `--tune_vision True` unless the row's
`extra` says otherwise).

A row that gives no transformers version and no recipe pin still bounds it: the reporter ran a release
published by the day of the report, or a build of the main branch, which holds no feature of a release later than
the next one. The job's requirements.txt then says `transformers<R` for R the second minor release after the
`reported` date (data/transformers_releases.csv, the first upload of each release on PyPI), a bound trainlint reads
as any repository's; a feature that came with R or later (SDPA by default, 4.36) was not there.

A `freeze` row (only some layers train, chosen in code) gets an entry script that freezes every other
parameter in a loop over `named_parameters()`, as freeze scripts do. A row whose `extra` names a preference `stage`
(`dpo`, `orpo`, `kto`, `rm`) and is not LLaMA-Factory's runs TRL's trainer for it (no `ref_model` passed).

Run by hand: `python benchmarks/oom_score.py [path/to/oom_reports.csv] [--ids id1,id2] [--keep FOLDER]`;
`--keep` also writes each row's job under FOLDER/ID, to run `trainlint estimate` on it.
"""
from __future__ import annotations

import csv
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from trainlint.core import Finding, MemoryEstimate, Severity  # noqa: E402
from trainlint.linter import LintResult, TargetError, lint, make_target  # noqa: E402
from trainlint.memory import find_gpu  # noqa: E402

DEFAULT_CSV = Path(__file__).resolve().parent / "oom_reports.csv"
DEFAULT_RECIPES = Path(__file__).resolve().parent / "recipes.csv"
RELEASES = Path(__file__).resolve().parent / "data" / "transformers_releases.csv"

REQUIRED_COLUMNS = (
    "id", "url", "repository", "model", "model_params_b", "tuning", "vision_tower", "gpu", "gpu_memory_gib",
    "num_gpus", "per_device_batch", "grad_accum", "seq_len", "precision", "zero_stage", "offload",
    "gradient_checkpointing", "attention", "transformers_version", "outcome", "when", "reported", "recipe", "notes",
)
# What a recipe publishes and a row may leave unstated.
RECIPE_SETTINGS = (
    "tuning", "zero_stage", "offload", "gradient_checkpointing", "precision", "seq_len", "per_device_batch",
    "grad_accum", "attention", "image_tiles",
)
UNSTATED = ("", "unknown")
Recipes = Dict[Tuple[str, str, str], Dict[str, str]]
HEAD = "HEAD"
# The memory rules the brief names; any later TL1xx rule past TL110 is taken to be a memory rule too.
MEMORY_CODES = frozenset({"TL101", "TL102", "TL106", "TL108", "TL110"})
LAST_LEGACY_MEMORY_CODE = 110

ENTRY_SCRIPT = '''\
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    vision_tower: Optional[str] = field(default=None)
    attn_implementation: Optional[str] = field(default=None)


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: Optional[int] = field(default=None)
    lora_enable: bool = field(default=False)
    lora_modules_to_save: Optional[str] = field(default=None)
    bits: int = field(default=16)
    max_slice_nums: Optional[int] = field(default=None)
    tune_vision: Optional[bool] = field(default=None)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None, eval_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()
'''

# A `freeze` row trains only some layers, chosen in code as freeze scripts do (the last layers by name): the
# generated entry script freezes every other parameter before the Trainer is built.
FREEZE_LOOP = """\
    for name, param in model.named_parameters():
        if not any(layer in name for layer in TRAINABLE_LAYERS):
            param.requires_grad = False
"""
TRAINABLE_LAYERS = 'TRAINABLE_LAYERS = ["layers.27.", "layers.26."]\n\n\n'


# The TRL trainer a row's `stage` (in `extra`) names, for rows that are not LLaMA-Factory's (whose recipe takes
# the stage itself): preference training puts both answers of a pair in a batch, and DPO/KTO keep a reference copy.
TRL_TRAINERS = {"dpo": "DPOTrainer", "orpo": "ORPOTrainer", "kto": "KTOTrainer", "rm": "RewardTrainer"}


def entry_script(row: Dict[str, str]) -> str:
    """The generated entry script: the HF argument dataclasses and a Trainer (TRL's for a preference `stage`),
    with the freezing loop of a `freeze` row."""
    script = ENTRY_SCRIPT
    trainer = TRL_TRAINERS.get(dict(extra_settings(row)).get("stage", ""))
    if trainer is not None:
        script = script.replace("import transformers\n", f"import transformers\nfrom trl import {trainer}\n", 1)
        script = script.replace("transformers.Trainer(", f"{trainer}(", 1)
    if row["tuning"] == "freeze":
        anchor = f"    trainer = {trainer or 'transformers.Trainer'}("
        script = script.replace(anchor, FREEZE_LOOP + anchor)
        first_class = "@dataclass\nclass ModelArguments"
        script = script.replace(first_class, TRAINABLE_LAYERS + first_class, 1)
    return script


ATTENTION_FLAGS = {"flash": "flash_attention_2", "sdpa": "sdpa", "eager": "eager"}


def grounded_row(row: Dict[str, str]) -> bool:
    """The row states what a verdict needs: micro-batch, sequence length, sharding, and the GPU count
    when the job shards (the model is for trainlint to know)."""
    sharded = row["zero_stage"] in ("1", "2", "3", "fsdp")
    return bool(row["per_device_batch"] and row["seq_len"] and row["zero_stage"]
                and (row["num_gpus"] or not sharded))


@dataclass(frozen=True)
class RowResult:
    id: str
    outcome: str
    verdict: str  # caught | missed | quiet | false-alarm | error
    codes: Tuple[str, ...]
    peak_gib: Optional[float]
    capacity_gib: Optional[float]
    reason: str
    grounded: bool = True

    @property
    def passed(self) -> bool:
        return self.verdict in ("caught", "quiet")


def load_rows(path: Path = DEFAULT_CSV) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [{key: (value or "").strip() for key, value in row.items()} for row in csv.DictReader(handle)]


def load_recipes(path: Path = DEFAULT_RECIPES) -> Recipes:
    """Published settings of each recipe, keyed by (repository in lower case, recipe, commit)."""
    return {(row["repository"].lower(), row["recipe"], row["commit"]): row for row in load_rows(path)}


def recipe_key(row: Dict[str, str]) -> Optional[Tuple[str, str, str]]:
    """`owner/name:path` names a recipe from another repository than the thread's; a bare path is the
    thread's own repository's. `@commit` at the end names the commit it was read at; without it, HEAD."""
    recipe = row.get("recipe", "")
    if not recipe:
        return None
    recipe, _, commit = recipe.rpartition("@") if "@" in recipe else (recipe, "", HEAD)
    repository, separator, path = recipe.partition(":")
    if separator and "/" in repository and " " not in repository:
        return repository.lower(), path, commit
    return row["repository"].lower(), recipe, commit


def modules_to_save(recipe: Dict[str, str], model: str) -> str:
    """The recipe's `lora_modules_to_save` for this model path: `NAMES unless model contains WORD` drops
    NAMES when the model path holds WORD (case-insensitive), as the recipe's own code decides."""
    names, unless, word = recipe.get("lora_modules_to_save", "").partition(" unless model contains ")
    if unless and word.strip().lower() in model.lower():
        return ""
    return names.strip()


def with_recipe(row: Dict[str, str], recipes: Recipes) -> Dict[str, str]:
    """The row with what it leaves unstated taken from the recipe it ran; stated settings win. The
    recipe's offload goes with the recipe's sharding only: a reporter who chose the stage chose its offload."""
    key = recipe_key(row)
    if key is None:
        return row
    if key not in recipes:
        raise KeyError(f"row {row['id']} names recipe {key} that recipes.csv does not list")
    recipe = recipes[key]
    if recipe.get("committed") and row.get("reported") and recipe["committed"] > row["reported"]:
        raise ValueError(f"row {row['id']} reported {row['reported']} names a recipe committed {recipe['committed']}")
    merged = dict(row)
    for column in RECIPE_SETTINGS:
        if merged.get(column, "") in UNSTATED and recipe[column]:
            if column == "offload" and row["zero_stage"] not in UNSTATED:
                continue
            merged[column] = recipe[column]
    if not merged.get("lora_modules_to_save") and merged["tuning"] in ("lora", "qlora"):
        merged["lora_modules_to_save"] = modules_to_save(recipe, row["model"])
    if not merged["transformers_version"] and recipe.get("transformers_pin"):
        merged["transformers_version"] = recipe["transformers_pin"]
    stated = {key for key, _ in extra_settings(row)}
    if recipe.get("vision_trained") == "true" and "tune_vision" not in stated:
        merged["extra"] = ";".join(item for item in (row.get("extra", ""), "tune_vision=True") if item)
    return merged


def extra_settings(row: Dict[str, str]) -> List[Tuple[str, str]]:
    """The `extra` column's `key=value;key=value` settings, in the order written (the column is optional)."""
    pairs = []
    for item in row.get("extra", "").split(";"):
        key, separator, value = item.partition("=")
        if separator and key.strip():
            pairs.append((key.strip(), value.strip()))
    return pairs


def _int(text: str) -> Optional[int]:
    return int(float(text)) if text else None


# --- building a job from a row ------------------------------------------------------------------


def _deepspeed_config(row: Dict[str, str]) -> Dict[str, object]:
    offload = row["offload"]
    zero: Dict[str, object] = {"stage": int(row["zero_stage"])}
    if "optimizer" in offload:
        zero["offload_optimizer"] = {"device": "cpu"}
    if "param" in offload:
        zero["offload_param"] = {"device": "cpu"}
    return {
        "bf16": {"enabled": "auto"},
        "fp16": {"enabled": "auto"},
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "train_batch_size": "auto",
        "zero_optimization": zero,
    }


def _uses_deepspeed(row: Dict[str, str]) -> bool:
    return row["zero_stage"] in ("1", "2", "3")


def _launcher_line(row: Dict[str, str]) -> str:
    gpus = _int(row["num_gpus"])
    if _uses_deepspeed(row):
        return f"deepspeed --num_gpus {gpus} train.py" if gpus else "deepspeed train.py"
    return f"torchrun --nproc_per_node {gpus} train.py" if gpus else "torchrun train.py"


def _precision_flags(precision: str) -> List[str]:
    if precision == "bf16":
        return ["--bf16 True"]
    if precision == "fp16":
        return ["--fp16 True"]
    if precision == "fp32":
        return []
    return ["--bf16 $USE_BF16"]  # not stated: unknown to trainlint


def _tuning_flags(row: Dict[str, str]) -> List[str]:
    tuning = row["tuning"]
    if tuning not in ("lora", "qlora"):
        return []
    flags = ["--lora_enable True"] + (["--bits 4"] if tuning == "qlora" else [])
    if row.get("lora_modules_to_save"):
        flags.append(f"--lora_modules_to_save {row['lora_modules_to_save']}")
    return flags


def _sharding_unstated(row: Dict[str, str]) -> bool:
    return row["zero_stage"] == ""


def _sharding_flags(row: Dict[str, str]) -> List[str]:
    if _uses_deepspeed(row):
        return ["--deepspeed ds_config.json"]
    if _sharding_unstated(row):
        return ["--deepspeed $DS_CONFIG"]  # whether and how the job shards is not stated
    if row["zero_stage"] == "fsdp":
        offload = " offload" if row["offload"] not in ("", "none") else ""
        return [f'--fsdp "full_shard auto_wrap{offload}"']
    return []


def launcher_flags(row: Dict[str, str]) -> List[str]:
    """The flags a launcher for this row passes; a setting the row leaves empty is not passed."""
    flags = [f"--model_name_or_path {row['model']}", f"--per_device_train_batch_size {row['per_device_batch']}"]
    if row["grad_accum"]:
        flags.append(f"--gradient_accumulation_steps {row['grad_accum']}")
    if row["seq_len"]:
        flags.append(f"--model_max_length {row['seq_len']}")
    if row["vision_tower"]:
        flags.append(f"--vision_tower {row['vision_tower']}")
    if row.get("image_tiles"):
        flags.append(f"--max_slice_nums {row['image_tiles']}")
    if row["gradient_checkpointing"] in ("true", "false"):
        flags.append(f"--gradient_checkpointing {row['gradient_checkpointing'].capitalize()}")
    else:
        flags.append("--gradient_checkpointing $GRADIENT_CHECKPOINTING")  # not stated: unknown
    if row["attention"] in ATTENTION_FLAGS:
        flags.append(f"--attn_implementation {ATTENTION_FLAGS[row['attention']]}")
    flags += _precision_flags(row["precision"]) + _tuning_flags(row) + _sharding_flags(row)
    # A `stage` picks the entry script's trainer (entry_script); every other extra setting is a flag.
    flags += [f"--{key} {value}" for key, value in extra_settings(row) if key != "stage"]
    # TrainingArguments named it `evaluation_strategy` until transformers 4.41.
    flags += ["--output_dir out", f'--{_eval_strategy_flag(row["transformers_version"])} "no"']
    return flags


def _eval_strategy_flag(version: str) -> str:
    parts = version.split(".")
    old = len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) < (4, 41)
    return "evaluation_strategy" if old else "eval_strategy"


def llamafactory_recipe(row: Dict[str, str]) -> List[str]:
    """A LLaMA-Factory YAML recipe for the row, so trainlint applies that framework's own defaults
    (checkpointing on unless disabled) exactly as it would on the reporter's recipe."""
    lines = [f"model_name_or_path: {row['model']}", "stage: sft", "do_train: true",
             f"finetuning_type: {'full' if row['tuning'] in ('', 'full') else 'lora'}",
             f"per_device_train_batch_size: {row['per_device_batch']}", "output_dir: out"]
    if row["tuning"] == "qlora":
        lines.append("quantization_bit: 4")
    if row["tuning"] in ("lora", "qlora") and row.get("lora_modules_to_save"):
        lines.append(f"additional_target: {row['lora_modules_to_save']}")
    for column, key in (("grad_accum", "gradient_accumulation_steps"), ("seq_len", "cutoff_len")):
        if row[column]:
            lines.append(f"{key}: {row[column]}")
    if row["precision"] in ("bf16", "fp16"):
        lines.append(f"{row['precision']}: true")
    if row["attention"] == "flash":
        lines.append("flash_attn: fa2")
    if row["gradient_checkpointing"] == "false":
        lines.append("disable_gradient_checkpointing: true")
    if _uses_deepspeed(row):
        lines.append("deepspeed: ds_config.json")
    extra = extra_settings(row)
    stated = {key for key, _ in extra}
    # A setting the row states in `extra` (e.g. `stage=rm`) replaces the recipe's own line for that key.
    lines = [line for line in lines if line.split(": ", 1)[0] not in stated]
    return lines + [f"{key}: {value}" for key, value in extra]


def llamafactory_overrides(row: Dict[str, str]) -> List[Tuple[str, str]]:
    """Settings the row does not state, read from the caller's environment."""
    overrides = []
    if _sharding_unstated(row):
        overrides.append(("deepspeed", "$DS_CONFIG"))
    if row["precision"] not in ("bf16", "fp16", "fp32"):
        overrides.append(("bf16", "$USE_BF16"))
    return overrides


def _is_llamafactory(row: Dict[str, str]) -> bool:
    return row["repository"].lower() == "hiyouga/llama-factory"


def release_bound(reported: str, path: Path = RELEASES) -> Optional[str]:
    """The second transformers minor release after the day `reported` (YYYY-MM-DD): no installation of that day,
    a main-branch build included, has a feature of it or of a later one. None when it was not yet released."""
    with path.open(newline="") as handle:
        later = [row["version"] for row in csv.DictReader(handle) if row["released"] > reported]
    return later[1] if len(later) > 1 else None


def write_job(row: Dict[str, str], folder: Path) -> Path:
    """Write the row's launcher, entry script (or recipe) and DeepSpeed config; returns the launcher."""
    if _uses_deepspeed(row):
        (folder / "ds_config.json").write_text(json.dumps(_deepspeed_config(row), indent=2) + "\n")
    version = row["transformers_version"]
    if version and version[0].isdigit():
        (folder / "requirements.txt").write_text(f"transformers=={version}\n")
    elif not version and row.get("reported"):
        bound = release_bound(row["reported"])
        if bound is not None:
            (folder / "requirements.txt").write_text(f"transformers<{bound}\n")
    launcher = folder / "finetune.sh"
    if _is_llamafactory(row):
        gpus = _int(row["num_gpus"])
        prefix = f"FORCE_TORCHRUN=1 NPROC_PER_NODE={gpus} " if gpus else ""
        overrides = llamafactory_overrides(row)
        if not overrides:
            (folder / "sft.yaml").write_text("\n".join(llamafactory_recipe(row)) + "\n")
            launcher.write_text(f"#!/bin/bash\n{prefix}llamafactory-cli train sft.yaml\n")
            return launcher
        # A setting from the environment: the whole job as command-line flags, the form LLaMA-Factory also
        # accepts (`llamafactory-cli train --stage sft ...`), since `key=value` overrides after a YAML are
        # not read as settings.
        pairs = [tuple(line.split(": ", 1)) for line in llamafactory_recipe(row)] + overrides
        flags = " \\\n    ".join(f"--{key} {value}" for key, value in pairs)
        launcher.write_text(f"#!/bin/bash\n{prefix}llamafactory-cli train \\\n    {flags}\n")
        return launcher
    (folder / "train.py").write_text(entry_script(row))
    flags = launcher_flags(row)
    lines = [f"{_launcher_line(row)} \\"] + [f"    {flag} \\" for flag in flags[:-1]] + [f"    {flags[-1]}"]
    launcher.write_text("#!/bin/bash\n" + "\n".join(lines) + "\n")
    return launcher


# --- checking and scoring -----------------------------------------------------------------------


def is_memory_finding(finding: Finding) -> bool:
    code = finding.code
    if finding.severity.rank < Severity.WARNING.rank or not code.startswith("TL1"):
        return False
    return code in MEMORY_CODES or (code[2:].isdigit() and int(code[2:]) > LAST_LEGACY_MEMORY_CODE)


def target_for(row: Dict[str, str]):
    """The row's GPU by name when trainlint knows it, else by its memory size."""
    gpus = _int(row["num_gpus"])
    if row["gpu"] and find_gpu(row["gpu"]) is not None:
        return make_target(gpu=row["gpu"], num_gpus=gpus)
    return make_target(gpu_memory=f"{row['gpu_memory_gib']}GB", num_gpus=gpus)


def _miss_reason(estimate: Optional[MemoryEstimate], row: Dict[str, str]) -> str:
    if estimate is None:
        return "no memory estimate for the job"
    assumed = getattr(estimate, "assumed_inputs", frozenset())
    if not grounded_row(row):
        return "row leaves an essential setting unstated (not grounded)"
    for name, reason in (("model", "model unknown to trainlint"), ("sequence", "sequence length not stated"),
                         ("batch", "batch not resolved"), ("world_size", "world size unknown")):
        if name in assumed:
            return reason
    if estimate.peak_gib > estimate.capacity_gib:
        return "estimate exceeds the GPU but no rule reports it"
    return "estimate fits: " + _underestimate_hint(row)


def _underestimate_hint(row: Dict[str, str]) -> str:
    hints = []
    if row["zero_stage"] == "fsdp":
        hints.append("FSDP")
    if row["when"] == "later":
        hints.append("failed mid-run (memory creep, long samples)")
    if row["tuning"] in ("lora", "qlora") and _int(row["seq_len"] or "0") and int(row["seq_len"]) >= 8192:
        hints.append("long-context LoRA")
    if row["zero_stage"] in ("", "0") and not row["offload"]:
        hints.append("sharding not stated")
    return ", ".join(hints) or "the model under-estimates this job"


def _verdict(row: Dict[str, str], flagged: bool) -> str:
    if row["outcome"] == "oom":
        return "caught" if flagged else "missed"
    return "false-alarm" if flagged else "quiet"


def score_row(row: Dict[str, str], recipes: Optional[Recipes] = None) -> RowResult:
    row = with_recipe(row, load_recipes() if recipes is None else recipes)
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        write_job(row, folder)
        try:
            result: LintResult = lint([folder], target_for(row))
        except (TargetError, OSError, ValueError) as error:
            return RowResult(row["id"], row["outcome"], "error", (), None, None, f"{type(error).__name__}: {error}")
    codes = tuple(sorted({f.code for f in result.findings if is_memory_finding(f)}))
    estimate = next(iter(result.estimates.values()), None)
    verdict = _verdict(row, bool(codes))
    reason = ""
    if verdict == "missed":
        reason = _miss_reason(estimate, row)
    elif verdict == "false-alarm":
        reason = "estimate over capacity on a job that trained"
    peak = estimate.peak_gib if estimate else None
    capacity = estimate.capacity_gib if estimate else None
    return RowResult(row["id"], row["outcome"], verdict, codes, peak, capacity, reason, grounded_row(row))


def score(rows: Sequence[Dict[str, str]], recipes: Optional[Recipes] = None) -> List[RowResult]:
    recipes = load_recipes() if recipes is None else recipes
    return [score_row(row, recipes) for row in rows]


# --- printing -----------------------------------------------------------------------------------


def _gib(value: Optional[float]) -> str:
    return f"{value:.1f}" if value is not None else "-"


def print_results(results: Sequence[RowResult]) -> None:
    print(f"{'id':50} {'outcome':7} {'verdict':11} {'codes':18} {'est/cap GiB':>13}  reason")
    for r in results:
        estimate = f"{_gib(r.peak_gib)}/{_gib(r.capacity_gib)}"
        print(f"{r.id:50} {r.outcome:7} {r.verdict:11} {','.join(r.codes) or '-':18} {estimate:>13}  {r.reason}")
    print()
    for label, chosen in (("all rows", results), ("grounded rows", [r for r in results if r.grounded])):
        oom = [r for r in chosen if r.outcome == "oom"]
        fits = [r for r in chosen if r.outcome == "fits"]
        caught = sum(r.verdict == "caught" for r in oom)
        quiet = sum(r.verdict == "quiet" for r in fits)
        print(f"{label}: caught {caught}/{len(oom)} OOM rows; quiet {quiet}/{len(fits)} fits rows")
    reasons: Dict[str, int] = {}
    for r in results:
        if r.reason:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f"  {count:3}  {reason}")


def main(argv: Sequence[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Score trainlint against the outcomes of oom_reports.csv.")
    parser.add_argument("csv", nargs="?", type=Path, default=DEFAULT_CSV, help="the report rows (default: %(default)s)")
    parser.add_argument("--ids", help="score only these rows (comma-separated ids)")
    parser.add_argument("--keep", type=Path, metavar="FOLDER", help="also write each row's job into FOLDER/ID")
    args = parser.parse_args(argv)
    rows = load_rows(args.csv)
    if args.ids is not None:
        only = set(args.ids.split(","))
        rows = [row for row in rows if row["id"] in only]
    if args.keep is not None:
        recipes = load_recipes()
        for row in rows:
            (args.keep / row["id"]).mkdir(parents=True, exist_ok=True)
            write_job(with_recipe(row, recipes), args.keep / row["id"])
    print_results(score(rows))


if __name__ == "__main__":
    main(sys.argv[1:])

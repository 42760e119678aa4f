from __future__ import annotations

from typing import Iterable, Optional

from trainlint.checks._examples import TRAIN_PY
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import (
    Applicability,
    Edit,
    Finding,
    Fix,
    Related,
    Setting,
    Severity,
    TrainingRun,
    parsed_release,
)
from trainlint.knobs import HF_VERSIONED_FIELDS

_LAUNCHER = "deepspeed --num_gpus 2 train.py --per_device_train_batch_size 4 {flag}\n"
_PINNED = "transformers==4.51.2\ntorch==2.3.0\n"
_LENGTH_FIELD = "    model_max_length: int = field(default=2048)\n"
_OWN_OLD_FIELD = _LENGTH_FIELD + '    evaluation_strategy: str = field(default="no")\n'
_SWEEP_PY = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--config", type=str)
parser.add_argument("--per_device_train_batch_size", type=int, default=4)
args, overrides = parser.parse_known_args()
for index in range(0, len(overrides), 2):
    print("override", overrides[index], overrides[index + 1])
    setattr(args, overrides[index].lstrip("-"), overrides[index + 1])
"""

_NO_PREFIX_PY = """import argparse

import torch

parser = argparse.ArgumentParser(allow_abbrev=False)
parser.add_argument("--micro-batch-size", type=int, default=4)
parser.add_argument("--seq-length", type=int, default=2048)
args = parser.parse_args()
model = torch.nn.Linear(args.seq_length, 1)
model(torch.zeros(args.micro_batch_size, args.seq_length)).sum().backward()
"""

_FIRE_PY = """import fire
import transformers


def train(base_model: str = "", micro_batch_size: int = 4, group_by_length: bool = True, **kwargs):
    model = transformers.AutoModelForCausalLM.from_pretrained(base_model)
    args = transformers.TrainingArguments(output_dir="out", per_device_train_batch_size=micro_batch_size,
                                          group_by_length=group_by_length)
    transformers.Trainer(model=model, args=args).train()


if __name__ == "__main__":
    fire.Fire(train)
"""
_FIRE_LAUNCHER = "torchrun --nproc_per_node 2 finetune.py --base_model m --micro_batch_size 2 {flag}\n"


class UnknownTrainingArgument(Rule):
    """
    ## What it does
    Reports a flag the entry script's argument parser does not define: a misspelling, an argument
    that was removed from the script, or an HF `TrainingArguments` field that the transformers version
    the repository pins no longer has (`--evaluation_strategy` is gone since 4.51; `--eval_strategy`
    appeared in 4.41).

    ## Why is this bad
    `HfArgumentParser` stops the job at start with "Some specified arguments are not used". A script
    that parses with `parse_known_args()` (or `parse_args_into_dataclasses(return_remaining_strings=True)`)
    is worse: it drops the flag silently, so `--use-lora` or `--gradient_checkpointing` has no effect and
    the job trains, or runs out of memory, without it (a warning: the job starts).
    A python-fire function (`fire.Fire(train)`) runs with the flags it takes and leaves the others over: the
    job trains without the flag, and fire fails on it only once the function returns (a warning).
    A unique prefix of a long option (`--per_device_train 8`) is that option, as argparse takes it, unless
    the parser is built with `allow_abbrev=False` (Megatron's): then the job stops at start. argparse takes an
    option only as written: `--seq_length` for `--seq-length` stops the job (HfArgumentParser's dataclass
    fields and python-fire take either spelling).
    A script that reads the leftovers itself (`args, unknown = parser.parse_known_args()`, then applies
    `unknown` to a config or hands it to another command) is not reported: their effect is unknown. Nor
    are the words after a standalone `--`, which argparse hands on as positional arguments.

    ## Example
    ```sh
    torchrun train.py --evaluation_strategy steps    # with transformers==4.51.2 pinned
    ```
    Use instead:
    ```sh
    torchrun train.py --eval_strategy steps
    ```

    ## Fix safety
    A flag the pinned transformers knows under its other name (`--evaluation_strategy` from 4.51 on, `--eval_strategy`
    before 4.41) is respelled: the same field, the same values. Safe. Otherwise no fix: whether the flag is
    misspelled, obsolete or meant for another script needs a person.
    """

    code = "TL305"
    name = "unknown-training-argument"
    severity = Severity.ERROR
    summary = "A flag the entry point's parser does not accept"
    examples = (
        Example("a misspelled flag", {"finetune.sh": _LAUNCHER.format(flag="--gradient_checkpoint True"),
                                      "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, True,
                at="finetune.sh:1:65"),
        Example("a removed HF flag with a recent transformers pinned: respelled",
                {"finetune.sh": _LAUNCHER.format(flag="--evaluation_strategy no"), "requirements.txt": _PINNED,
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, True, at="finetune.sh:1:65",
                fixed={"finetune.sh": _LAUNCHER.format(flag="--eval_strategy no")}),
        Example("a removed HF flag when no version is pinned",
                {"finetune.sh": _LAUNCHER.format(flag="--evaluation_strategy no"),
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, False),
        Example("a removed HF flag that the parser hands back (return_remaining_strings) and the script drops: "
                "a warning, the job starts",
                {"finetune.sh": _LAUNCHER.format(flag="--evaluation_strategy no"), "requirements.txt": _PINNED,
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None").replace(
                     "parser.parse_args_into_dataclasses()",
                     "parser.parse_args_into_dataclasses(return_remaining_strings=True)[:2]")},
                True, at="finetune.sh:1:65"),
        Example("an old flag name the script defines itself",
                {"finetune.sh": _LAUNCHER.format(flag="--evaluation_strategy no"), "requirements.txt": _PINNED,
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None").replace(_LENGTH_FIELD, _OWN_OLD_FIELD)},
                False),
        Example("flags a script applies from parse_known_args' leftovers",
                {"finetune.sh": "python sweep.py --config sft.yaml --per_device_train_batch_size 8 "
                                "--learning_rate 2e-5\n",
                 "sweep.py": _SWEEP_PY}, False),
        Example("a flag no parameter of a python-fire function takes: a warning, the job trains without it",
                {"finetune.sh": _FIRE_LAUNCHER.format(flag="--gradient_checkpointing"),
                 "finetune.py": _FIRE_PY.replace(", **kwargs", "")}, True, at="finetune.sh:1:77"),
        Example("python-fire's `--noname` and a function that takes **kwargs",
                {"finetune.sh": _FIRE_LAUNCHER.format(flag="--nogroup_by_length"), "finetune.py": _FIRE_PY,
                 "finetune_any.sh": _FIRE_LAUNCHER.format(flag="--gradient_checkpointing").replace(
                     "finetune.py", "finetune_any.py"), "finetune_any.py": _FIRE_PY}, False),
        Example("a unique prefix of an option, which argparse takes",
                {"finetune.sh": _LAUNCHER.format(flag="--gradient_accumulation 4"),
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, False),
        Example("a prefix, where the parser is built with allow_abbrev=False",
                {"finetune.sh": "torchrun --nproc_per_node 2 pretrain.py --micro-batch 8 --seq-length 4096\n",
                 "pretrain.py": _NO_PREFIX_PY}, True, at="finetune.sh:1:41"),
        Example("underscores for an argparse option written with dashes",
                {"finetune.sh": "torchrun --nproc_per_node 2 pretrain.py --micro_batch_size 8\n",
                 "pretrain.py": _NO_PREFIX_PY.replace("(allow_abbrev=False)", "()")}, True, at="finetune.sh:1:41"),
        Example("a dataclass field written with dashes, which HfArgumentParser also takes",
                {"finetune.sh": _LAUNCHER.format(flag="--model-max-length 512"),
                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, False),
        Example("flags the dataclasses define", {"finetune.sh": _LAUNCHER.format(flag="--model_max_length 512"),
                                                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None")}, False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        accepted = run.facts.accepted_flags
        if accepted is None:
            return
        pin = run.facts.transformers_pin
        pinned_here = (Related(pin.origin, f"transformers {pin.value} is pinned here"),) \
            if pin is not None and pin.origin is not None else ()
        spelled = {written for written, _option in run.facts.flag_spellings}
        would_abbreviate = dict(run.facts.refused_prefixes)
        misspelled = dict(run.facts.misspelled_options)
        given = {flag.replace("-", "_") for flag, _word in run.facts.flags}
        for name, word in run.facts.flags:
            normalized = name.replace("-", "_")
            fire = run.facts.fire_command
            fix: Optional[Fix] = None
            if normalized in HF_VERSIONED_FIELDS and normalized not in run.facts.own_flags and not fire:
                problem = _version_problem(normalized, pin)
                if problem is None:
                    continue
                refused, related = f"`--{name}` {problem}", pinned_here
                fix = _respelled(name, word, given, pin)
            elif name in misspelled:
                refused, related = (f"`--{name}` is not an argument of the entry script's parser: argparse takes "
                                    f"`--{misspelled[name]}` only as written"), ()
            elif normalized in accepted or name in accepted or name in spelled:
                continue
            else:
                refused, related = f"`--{name}` is not an argument of the entry script's parser", ()
                if name in would_abbreviate:
                    refused += (f" (it would abbreviate `--{would_abbreviate[name]}`, but the parser is built with "
                                f"allow_abbrev=False)")
            if run.facts.parse_known_args and run.facts.known_args_rest_used:
                continue  # the script handles the flags the parser leaves over: no certain effect to report
            if run.facts.fire_command:
                yield self.finding(run, f"{refused}: python-fire gives it to no parameter, so the job trains without "
                                        f"it, and fails once training returns (\"Could not consume arg\")",
                                   origin=word.origin, severity=Severity.WARNING, related=related)
            elif run.facts.parse_known_args:
                yield self.finding(run, f"{refused}; the parser hands unknown flags back (parse_known_args) and the "
                                        f"script drops them, so it has no effect", origin=word.origin,
                                   severity=Severity.WARNING, related=related)
            else:
                yield self.finding(run, f"{refused}; the job stops at start-up", origin=word.origin, related=related,
                                   fix=fix)


def _respelled(name: str, word: Setting, given: set, pin: Optional[Setting]) -> Optional[Fix]:
    """The flag written under the field's other name, when the launch writes it as a plain word (not through a
    variable, not `--flag=value`) and does not give that name too."""
    other = HF_VERSIONED_FIELDS[name.replace("-", "_")][2]
    if other in given or word.origin is None or word.text != f"--{name}" or pin is None:
        return None
    spelled = other.replace("_", "-") if "-" in name else other
    return Fix(Applicability.SAFE, f"write `--{spelled}`, the name the pinned transformers {pin.value} gives the field",
               edits=(Edit(word.origin, f"--{spelled}"),))


def _version_problem(field: str, pin: Optional[Setting]) -> Optional[str]:
    installed = parsed_release(pin.value) if pin is not None else None
    if installed is None:
        return None
    added, removed, _other_name = HF_VERSIONED_FIELDS[field]
    if removed is not None and installed >= parsed_release(removed):
        return f"was removed from TrainingArguments in transformers {removed}, so the pinned {pin.value} lacks it"
    if added is not None and installed < parsed_release(added):
        return f"appeared in transformers {added}, later than the pinned {pin.value}"
    return None

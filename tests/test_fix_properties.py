"""Properties of `fix --preserve-effective-batch` over generated launchers: the effective batch is
kept, every file still parses, nothing outside the planned edits changes, and fixing twice equals
fixing once."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainlint.checks._examples import TRAIN_PY
from trainlint.fixers.edits import apply_edits
from trainlint.fixers.engine import FixSession
from trainlint.fixers.verify import syntax_errors
from trainlint.linter import Selection, lint, make_target

VALUE_STYLES = ("literal", "variable", "shared", "equals", "quoted", "quoted_variable")


@contextmanager
def inside(folder: Path):
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def _flag(name: str, value: int, style: str, assignments: list, extra_flags: list) -> str:
    variable = name.upper()
    if style == "literal":
        return f"--{name} {value}"
    if style == "quoted":
        return f"--{name} \"{value}\""
    if style == "equals":
        return f"--{name}={value}"
    assignments.append(f"{variable}={value}")
    if style == "shared":
        extra_flags.append(f"--save_total_limit ${variable}")
        return f"--{name} ${variable}"
    if style == "quoted_variable":
        return f"--{name} \"${{{variable}}}\""
    return f"--{name} ${variable}"


@st.composite
def launchers(draw):
    batch = draw(st.sampled_from([4, 8, 16, 32]))
    accum = draw(st.sampled_from([1, 2, 3, 4]))
    world = draw(st.sampled_from([None, 1, 2, 8]))
    deepspeed = draw(st.sampled_from(["none", "auto", "pinned"])) if world else "none"
    batch_style = draw(st.sampled_from(VALUE_STYLES))
    accum_style = draw(st.sampled_from(VALUE_STYLES))
    continued = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    assignments: list = []
    extra: list = []
    flags = ["--model_name_or_path Qwen/Qwen2-0.5B",
             _flag("per_device_train_batch_size", batch, batch_style, assignments, extra),
             _flag("gradient_accumulation_steps", accum, accum_style, assignments, extra),
             "--bf16 True", "--model_max_length 2048", "--gradient_checkpointing True"] + extra
    if deepspeed != "none":
        flags.insert(1, "--deepspeed ds.json")
    launcher = f"torchrun --nproc_per_node {world}" if world else "torchrun --nproc_per_node gpu"
    joiner = f" \\{newline}    " if continued else " "
    script = newline.join(["#!/bin/bash", *assignments, f"{launcher} train.py{joiner}" + joiner.join(flags)])
    files = {"finetune.sh": (script + newline).encode(),
             "train.py": TRAIN_PY.replace("{eval_dataset}", "None").encode()}
    if deepspeed != "none":
        pinned = deepspeed == "pinned"
        config = {"train_micro_batch_size_per_gpu": batch if pinned else "auto",
                  "gradient_accumulation_steps": accum if pinned else "auto",
                  "train_batch_size": batch * accum * world if pinned else "auto",
                  "zero_optimization": {"stage": 2}}
        files["ds.json"] = (json.dumps(config, indent=4) + "\n").encode()
    return files, batch * accum


def _session(folder: Path) -> FixSession:
    target = make_target("a100-40gb")

    def again():
        return lint([Path("finetune.sh")], target, Selection(("TL1", "TL2")), preserve_effective_batch=True)

    return FixSession(again, unsafe=False, preserve=True)


def _per_device_product(result) -> int:
    [run] = result.scan.runs
    return run.known("per_device_train_batch_size") * run.known("gradient_accumulation_steps")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(launchers())
def test_fix_keeps_the_batch_parses_touches_only_its_edits_and_is_idempotent(generated):
    files, product = generated
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for relative, data in files.items():
            (folder / relative).write_bytes(data)
        with inside(folder):
            outcome = _session(folder).run()
            assert outcome.error is None, outcome.error
            written = {relative: (folder / relative).read_bytes() for relative in files}

            # Only the planned edits changed bytes: replaying them round by round gives the files.
            replayed = dict(files)
            for round_plans in outcome.history:
                edits = [edit for plan in round_plans for edit in plan.edits]
                for relative in replayed:
                    mine = [edit for edit in edits if edit.origin.path == relative]
                    if mine:
                        replayed[relative] = apply_edits(replayed[relative], mine)
            assert replayed == written

            for relative, data in written.items():
                assert syntax_errors(relative, data) == 0
            assert _per_device_product(outcome.result) == product
            before = {key: batch for key, (_run, batch) in outcome.before.items()}
            after = {key: batch for key, (_run, batch) in outcome.after.items()}
            assert before == after
            if outcome.applied:
                assert "TL101" not in {f.code for f in outcome.result.findings}

            again = _session(folder).run()
            assert not again.applied
            assert {relative: (folder / relative).read_bytes() for relative in files} == written

"""A 4- or 8-bit base (QLoRA) is never ported to ZeRO-3: quantized loading places the weights with a `device_map`,
which transformers refuses under ZeRO-3, so a plan that shards it would stop the job at start-up. The same job on a
16-bit base may be sharded."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trainlint.linter import lint, make_target
from trainlint.memory import suggestions
from trainlint.memory.plans import ChangeKind, plan_port

SAMPLE = Path(__file__).parent / "samples" / "python" / "qlora_zero2"


def _run(tmp_path: Path, bits: int, gpu: str, count: int):
    folder = tmp_path / "job"
    shutil.copytree(SAMPLE, folder)
    launcher = folder / "finetune_qlora.sh"
    launcher.write_text(launcher.read_text().replace("--bits 4", f"--bits {bits}"))
    target = make_target(gpu, None, count)
    [run] = lint([launcher], target).scan.runs
    return run, target


def _plans(run, target):
    port = plan_port(run, target.gpu, target.num_gpus, unsafe=True)
    assert port is not None
    return [plan for plan in (port.chosen, port.best_effort, *port.runners_up) if plan is not None]


@pytest.mark.parametrize("bits", [4, 8])
def test_no_plan_shards_a_quantized_base(tmp_path, bits):
    run, target = _run(tmp_path, bits, "t4", 4)
    plans = _plans(run, target)
    assert plans, "the job does not fit four T4s as written: the port has plans"
    assert not any(step.kind in (ChangeKind.ZERO3, ChangeKind.OFFLOAD_PARAMETERS) for plan in plans
                   for step in plan.steps)
    assert not any(s.overrides.get("zero_stage") == 3 for s in suggestions(run, target.gpu))


def test_a_16_bit_base_may_be_sharded(tmp_path):
    run, target = _run(tmp_path, 16, "t4", 4)
    assert any(step.kind == ChangeKind.ZERO3 for plan in _plans(run, target) for step in plan.steps)


def test_fix_keeps_the_stage_of_a_quantized_job(tmp_path, cli):
    _run(tmp_path, 4, "t4", 4)
    folder = tmp_path / "job"
    cli.run(folder, "fix", ".", "--gpu", "t4", "--num-gpus", "4", "--unsafe-fixes")
    assert '"stage": 2' in (folder / "zero2.json").read_text()

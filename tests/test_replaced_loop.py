"""A Trainer subclass that defines HF Trainer's `_inner_training_loop` itself runs a loop of its own (zeroth-order
steps with no backward pass, MeZO-style): the memory model's steps are not its steps, so no memory rule judges the
job, and `estimate` says why. A subclass that only changes the loss keeps HF's loop and its verdicts."""
from __future__ import annotations

from pathlib import Path

from trainlint.linter import lint, make_target
from trainlint.readers.python.class_bases import read_class_outline

SAMPLES = Path(__file__).parent / "samples" / "replaced_loop"
MEMORY_RULES = {"TL101", "TL102", "TL106", "TL108", "TL111"}


def _scan(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    return result


def test_the_outline_names_the_class_that_defines_the_loop():
    outline = read_class_outline(SAMPLES / "trainer.py")
    assert outline.own_loops == frozenset({"ZerothOrderTrainer"})
    assert outline.bases["LoggingTrainer"] == ("Trainer",)


def test_a_replaced_loop_gets_no_memory_finding(monkeypatch):
    result = _scan(monkeypatch)
    codes = {f.code for f in result.findings if f.path == "mezo.sh" or f.run_id.startswith("mezo.sh")}
    assert not codes & MEMORY_RULES
    # the weights load in a dtype the script computes (`--load_float16`): no claim that it trains in fp32
    assert "TL105" not in codes


def test_the_estimate_names_the_class_whose_loop_runs(cli):
    code, out, err = cli.run(SAMPLES, "estimate", "mezo.sh", "--gpu", "a100-80gb")
    assert "runs `ZerothOrderTrainer`'s own training loop (`_inner_training_loop`)" in out
    assert "out of the memory model's scope" in out


def test_a_subclass_that_changes_only_the_loss_is_judged(monkeypatch):
    result = _scan(monkeypatch)
    assert [(f.code, f.path) for f in result.findings if f.code in MEMORY_RULES] == [("TL108", "backprop.sh")]


def test_a_loop_defined_next_to_the_trainer_call_counts_too(tmp_path, monkeypatch):
    # The class and its call in one module: the module's own reading gives the outline.
    entry = (SAMPLES / "run.py").read_text().replace("from trainer import ZerothOrderTrainer\n", "")
    trainer = (SAMPLES / "trainer.py").read_text()
    (tmp_path / "run.py").write_text(trainer + "\n\n" + entry.replace("import torch\n", "", 1))
    (tmp_path / "mezo.sh").write_text((SAMPLES / "mezo.sh").read_text())
    monkeypatch.chdir(tmp_path)
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    assert not {f.code for f in result.findings} & MEMORY_RULES
    assert [run.facts.own_loop_trainer for run in result.scan.runs] == [False]

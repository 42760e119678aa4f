"""A Trainer whose copied training loop takes a step of its own, with no backward pass, when an argument says so
(zeroth-order fine-tuning: `if args.trainer == "zo": self.zo_step(...)`). Launched that way the job trains by
forward passes alone, which the memory model does not judge; launched with HF's step it is judged as any job."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.readers.facts import StepGate
from trainlint.readers.python import read_python
from trainlint.readers.python.class_bases import read_class_headers

SAMPLES = Path(__file__).parent / "samples" / "forward_only_step"
ONE_CARD = ("--gpu", "a100-80gb", "--num-gpus", "1")
MEMORY_ERRORS = ("TL101", "TL106", "TL108", "TL111")


def _errors(cli, tmp_path, launcher):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    _, document = cli.check_json(tmp_path / "repo", launcher, *ONE_CARD, "--no-cache")
    return [f["code"] for f in document["findings"] if f["severity"] == "error"]


def test_the_trainer_module_names_the_argument_value_that_skips_the_backward_pass():
    gate = StepGate("ZerothOrderTrainer", "trainer", "zo", "zo_step", 14)
    assert read_class_headers(SAMPLES / "zo_trainer.py").step_gates == (gate,)
    assert read_python(SAMPLES / "zo_trainer.py").step_gates == (gate,)


def test_a_forward_only_launch_gets_no_memory_verdict(cli, tmp_path):
    assert not set(_errors(cli, tmp_path, "zo.sh")) & set(MEMORY_ERRORS)


def test_the_estimate_says_why_the_job_is_out_of_scope(cli, tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    code, out, err = cli.run(tmp_path / "repo", "estimate", "zo.sh", *ONE_CARD)
    assert ('`ZerothOrderTrainer` takes `zo_step`, a step with no backward pass, when trainer is "zo": the job trains '
            "by forward passes alone: out of the memory model's scope") in out


def test_the_same_trainer_with_hf_s_step_is_judged(cli, tmp_path):
    # 13B parameters with Adam and no sharding: the model states alone are over the card
    assert "TL108" in _errors(cli, tmp_path, "ft.sh")


def test_a_step_that_backpropagates_through_a_helper_is_no_gate(tmp_path):
    module = (SAMPLES / "zo_trainer.py").read_text().replace(
        "        return loss.detach()", "        loss.backward()\n        return loss.detach()")
    (tmp_path / "zo_trainer.py").write_text(module)
    assert read_class_headers(tmp_path / "zo_trainer.py").step_gates == ()
    assert read_python(tmp_path / "zo_trainer.py").step_gates == ()


def test_a_loop_that_runs_hf_s_step_under_both_branches_is_no_gate(tmp_path):
    module = (SAMPLES / "zo_trainer.py").read_text().replace(
        "tr_loss_step = self.zo_step(model, inputs)", "tr_loss_step = self.training_step(model, inputs)")
    (tmp_path / "zo_trainer.py").write_text(module)
    assert read_class_headers(tmp_path / "zo_trainer.py").step_gates == ()

"""A job trained by a class of the repository's own that is no HF Trainer (a fused-update optimizer that keeps no
optimizer state, set up with DeepSpeed by its own loop) holds what its code builds, and HF's DeepSpeed integration,
whose consistency checks TL201 and TL202 stand for, never runs. The same class built on HF's Trainer is judged as
before. Written in our own words after LOMO's training scripts."""
from __future__ import annotations

import shutil

from tests.conftest import SAMPLES

FOLDER = SAMPLES / "own_loop_trainer"
ERRORS_OF_HF_TRAINING = {"TL108", "TL201", "TL202"}


def _codes(cli, folder, *extra):
    _, document = cli.check_json(folder, ".", "--gpu", "a100-80gb", "--no-cache", *extra)
    return {(f["code"], f["severity"]) for f in document["findings"]}


def test_an_own_loop_trainer_gets_no_memory_or_integration_error(cli):
    assert not {code for code, severity in _codes(cli, FOLDER) if severity == "error"} & ERRORS_OF_HF_TRAINING


def test_the_estimate_says_why_no_memory_rule_judges_it(cli):
    _, out, _ = cli.run(FOLDER, "estimate", "run.sh", "--gpu", "a100-80gb")
    assert "`FusedTrainer`, a trainer of the repository's own that is no HF Trainer" in out
    assert "no memory rule judges this job" in out


def test_the_same_trainer_built_on_hf_trainer_is_held_to_hf_integration(cli, tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(FOLDER, folder)
    trainer = folder / "src" / "fused_trainer.py"
    text = trainer.read_text().replace("import torch\n", "import torch\nimport transformers\n")
    trainer.write_text(text.replace("class FusedTrainer:", "class FusedTrainer(transformers.Trainer):"))
    codes = _codes(cli, folder)
    # HF's integration refuses a config that pins micro-batch 2 and fp16 under a trainer at 16 and no fp16.
    assert {("TL201", "error"), ("TL202", "error")} <= codes


def test_a_file_of_arguments_checked_by_itself_gets_a_batch_mismatch_warning_not_an_error(cli, tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(FOLDER, folder)
    (folder / "run.sh").unlink()  # the command that reads the file is not in view
    codes = _codes(cli, folder)
    assert ("TL201", "warning") in codes and ("TL201", "error") not in codes
    # Which script reads the file is not told: the fix writes the trainer's micro-batch, which DeepSpeed accepts
    # under HF's Trainer and under a loop of its own alike, and only with --unsafe-fixes.
    cli.run(folder, "fix", ".", "--gpu", "a100-80gb", "--select", "TL201")
    assert '"train_micro_batch_size_per_gpu": 2' in (folder / "config" / "ds_config.json").read_text()
    cli.run(folder, "fix", ".", "--gpu", "a100-80gb", "--select", "TL201", "--unsafe-fixes")
    assert '"train_micro_batch_size_per_gpu": 16' in (folder / "config" / "ds_config.json").read_text()


def test_a_port_to_more_gpus_writes_no_auto_into_a_config_the_loop_reads_itself(cli, tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(FOLDER, folder)
    before = (folder / "config" / "ds_config.json").read_text()
    cli.run(folder, "fix", ".", "--unsafe-fixes", "--gpu", "a100-80gb", "--num-gpus", "8")
    # Ported to 8 GPUs with the global batch kept (16 = 2 × 8): DeepSpeed's pinned micro-batch 2 now agrees, and
    # no "auto", which DeepSpeed rejects outside HF's integration, is written.
    assert "per_device_train_batch_size: 2" in (folder / "config" / "args_fused.yaml").read_text()
    assert (folder / "config" / "ds_config.json").read_text() == before


def test_with_no_model_known_the_estimate_says_first_that_the_job_is_out_of_scope(cli, tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(FOLDER, folder)
    config = folder / "config" / "args_fused.yaml"
    config.write_text(config.read_text().replace("/remote-home/share/llama_hf/7B", "/data/checkpoints/step-2000"))
    _, out, _ = cli.run(folder, "estimate", "run.sh", "--gpu", "a100-80gb")
    # naming a model would not give an estimate: the reason that stands is the trainer
    assert "no estimate: the job trains with `FusedTrainer`" in out and "out of the memory model's scope" in out
    assert "the model is not recognised" not in out

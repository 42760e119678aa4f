"""Memory verdicts that hold whatever an unread setting turns out to be: judged at the least memory any
value of that setting leaves on each GPU, and reported as warnings that say so."""
from __future__ import annotations

from tests.conftest import SAMPLES
from trainlint.checks._examples import TRAIN_PY

VERDICTS = SAMPLES / "verdicts"


def _memory_findings(document):
    return [f for f in document["findings"] if f["code"].startswith("TL1") and f["severity"] != "info"]


def test_long_context_overflows_whatever_the_unread_deepspeed_config(cli):
    _, document = cli.check_json(VERDICTS / "unknown_sharding", "train_long.sh", "--gpu", "rtx4090",
                                 "--num-gpus", "8")
    [finding] = _memory_findings(document)
    assert finding["code"] == "TL111" and finding["severity"] == "warning"
    assert "sharded as far as any DeepSpeed or FSDP config can" in finding["message"]
    assert "logits" in finding["message"]


def test_unread_deepspeed_config_gives_no_verdict_where_the_least_sharding_fits(cli):
    _, short = cli.check_json(VERDICTS / "unknown_sharding", "train_short.sh", "--gpu", "rtx4090", "--num-gpus", "8")
    assert not _memory_findings(short)
    _, roomy = cli.check_json(VERDICTS / "unknown_sharding", "train_long.sh", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not _memory_findings(roomy)


def test_the_length_a_floor_verdict_names_is_searched_at_that_floor(tmp_path):
    # A LLaVA-style full fine-tune whose DeepSpeed config is relative to a folder not known statically: the
    # verdict judges what ZeRO-3 with offload leaves on each GPU, so the rows it says fit are those that fit there,
    # not on one GPU holding every state.
    from trainlint.checks._memory import data_dependent_length, training_estimate
    from trainlint.knobs import K
    from trainlint.linter import lint, make_target
    from trainlint.memory import find_gpu

    launcher = ("#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\ndeepspeed train.py --deepspeed ./scripts/zero3.json "
                "--model_name_or_path meta-llama/Meta-Llama-3-8B-Instruct --bf16 True "
                "--per_device_train_batch_size 32 --gradient_accumulation_steps 1 --model_max_length 2048 "
                "--gradient_checkpointing True --output_dir out\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "pretrain.sh").write_text(launcher)
    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    gpu = find_gpu("a100-80gb")
    [run] = lint([tmp_path], make_target(gpu="a100-80gb")).scan.runs
    current = training_estimate(run, gpu)
    assert not current.fits
    fits = data_dependent_length(run, gpu, 32, current)
    assert fits is not None
    assert training_estimate(run, gpu, **{K.MAX_SEQ_LENGTH: fits}).fits
    assert not training_estimate(run, gpu, **{K.MAX_SEQ_LENGTH: fits + 256}).fits
    # The changes the verdict names are judged from the same floor: each fitting one fits there.
    from trainlint.checks._memory import training_step
    from trainlint.memory.suggest import suggestions
    named = [s for s in suggestions(run, gpu, base=training_step(run)) if s.estimate.fits]
    assert named and all(training_estimate(run, gpu, **s.overrides).peak_gib == s.estimate.peak_gib for s in named)

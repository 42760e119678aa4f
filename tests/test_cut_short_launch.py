"""A launch command that a broken line continuation ends early (TL304): bash starts the command without the flags
after the break, a job nobody meant. Its memory is not judged (MiniCPM's `sft_finetune.sh`, whose comment lines
between the flags leave `deepspeed finetune.py` with TrainingArguments' defaults)."""
from __future__ import annotations

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY

_LAUNCHER = """#!/bin/bash
deepspeed --num_gpus 8 train.py \\
    # the base model
    --model_name_or_path lmsys/vicuna-13b-v1.5 \\
    --per_device_train_batch_size 32 \\
    --model_max_length 4096 \\
    --bf16 True
"""


def test_a_command_cut_short_gets_the_continuation_error_and_no_memory_verdict(cli, tmp_path):
    write_tree(tmp_path, {"train.py": TRAIN_PY.replace("{eval_dataset}", "None"), "finetune.sh": _LAUNCHER})
    _, document = cli.check_json(tmp_path, "finetune.sh", "--isolated", "--no-cache", "--gpu", "rtx4090")
    codes = sorted({finding["code"] for finding in document["findings"] if finding["severity"] != "info"})
    assert codes == ["TL304"]
    # Mended, the same command is judged.
    (tmp_path / "finetune.sh").write_text(_LAUNCHER.replace("    # the base model\n", ""))
    _, mended = cli.check_json(tmp_path, "finetune.sh", "--isolated", "--no-cache", "--gpu", "rtx4090")
    assert {"TL101", "TL108"} & {finding["code"] for finding in mended["findings"]}

"""argparse switches (`action="store_true"`) in fixes. The default a switch implies is no literal to rewrite:
`action="store_true"` made `action=True` stops the script at start. Turning such a setting on gives the launch the
switch, bare: `--gradient_checkpointing True` would stop it too."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trainlint.core import Origin, Setting, SourceKind
from trainlint.fixers.editors import Refused
from trainlint.fixers.editors.python import replace_value

DS_CHAT = Path(__file__).parent / "samples" / "python" / "ds_chat_style"
# A 13B full fine-tune at micro-batch 8 without checkpointing: on 40 GB cards the port turns checkpointing on.
LAUNCHER = """#!/bin/bash
deepspeed --num_gpus 8 sft.py \\
   --model_name_or_path meta-llama/Llama-2-13b-hf \\
   --per_device_train_batch_size 8 \\
   --gradient_accumulation_steps 8 \\
   --max_seq_len 1024 \\
   --zero_stage 3 \\
   --dtype bf16 \\
   --deepspeed \\
   --output_dir ./out
"""


def _job(tmp_path: Path) -> Path:
    shutil.copy(DS_CHAT / "sft.py", tmp_path / "sft.py")
    (tmp_path / "run.sh").write_text(LAUNCHER)
    return tmp_path


def test_a_literal_that_implies_the_value_is_not_rewritten():
    origin = Origin("sft.py", 18, 60, 18, 72, 500, 512)
    implied = Setting(False, SourceKind.ARGPARSE_DEFAULT, origin, '"store_true"')
    with pytest.raises(Refused, match="implies the value False but does not hold it"):
        replace_value(b"", implied, '"store_true"', True)
    written = Setting(1024, SourceKind.ARGPARSE_DEFAULT, origin, "1024")
    assert replace_value(b"", written, "1024", 512).content == "512"


def test_turning_a_switch_on_adds_it_to_the_launch_bare(cli, tmp_path):
    folder = _job(tmp_path)
    script = (folder / "sft.py").read_text()
    code, out, err = cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert (folder / "sft.py").read_text() == script  # the parser is left as it is
    launcher = (folder / "run.sh").read_text()
    assert launcher.endswith("   --output_dir ./out \\\n   --gradient_checkpointing\n"), out + err
    assert "--gradient_checkpointing True" not in launcher

"""Fixes of jobs whose entry script parses its own options with argparse (DeepSpeed-Chat's and OpenRLHF's style).
The default a switch (`action="store_true"`) implies is no literal to rewrite: `action="store_true"` made
`action=True` stops the script at start. Turning such a setting on gives the launch the switch, bare:
`--gradient_checkpointing True` would stop it too. A new flag is spelled as the script writes its option: argparse
takes `--gradient-accumulation-steps` as written, not as `--gradient_accumulation_steps`. And a script that builds
its DeepSpeed config from its own `--zero_stage` may be ported to ZeRO-3 by rewriting that number."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trainlint.core import Origin, Setting, SourceKind
from trainlint.fixers.editors import Refused
from trainlint.fixers.editors.python import replace_value
from trainlint.linter import lint, make_target
from trainlint.memory.plans import chosen_plan

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


# A 13B full fine-tune at micro-batch 1 with checkpointing under ZeRO-2: on 40 GB cards the port is ZeRO-3.
ZERO2_LAUNCHER = LAUNCHER.replace("batch_size 8", "batch_size 1").replace(
    "   --zero_stage 3", "   --gradient_checkpointing \\\n   --zero_stage 2")


def _job(tmp_path: Path, launcher: str = LAUNCHER) -> Path:
    shutil.copy(DS_CHAT / "sft.py", tmp_path / "sft.py")
    (tmp_path / "run.sh").write_text(launcher)
    return tmp_path


def test_the_plan_shards_at_zero_3_through_the_flag(tmp_path):
    target = make_target("a100-40gb", None, 8)
    [run] = lint([_job(tmp_path, ZERO2_LAUNCHER) / "run.sh"], target).scan.runs
    plan = chosen_plan(run, target.gpu, 8)
    assert plan is not None and plan.safe and plan.overrides == {"zero_stage": 3}


def test_fix_rewrites_the_number_the_launcher_passes(cli, tmp_path):
    folder = _job(tmp_path, ZERO2_LAUNCHER)
    code, out, err = cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert (folder / "run.sh").read_text() == ZERO2_LAUNCHER.replace("--zero_stage 2", "--zero_stage 3"), out + err


def test_a_stage_from_a_variable_is_rewritten_at_the_variable(cli, tmp_path):
    launcher = ZERO2_LAUNCHER.replace("--zero_stage 2", "--zero_stage $ZERO_STAGE").replace(
        "#!/bin/bash\n", "#!/bin/bash\nZERO_STAGE=2\n")
    folder = _job(tmp_path, launcher)
    cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert (folder / "run.sh").read_text() == launcher.replace("ZERO_STAGE=2\n", "ZERO_STAGE=3\n")


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


def test_a_new_flag_is_spelled_as_the_script_writes_its_option(cli, tmp_path):
    script = (DS_CHAT / "sft.py").read_text().replace('"--gradient_accumulation_steps"',
                                                      '"--gradient-accumulation-steps"')
    (tmp_path / "sft.py").write_text(script)
    # checkpointing on, micro-batch 16 and the script's default accumulation: the port lowers the micro-batch and
    # raises the accumulation
    launcher = LAUNCHER.replace("   --gradient_accumulation_steps 8 \\\n", "   --gradient_checkpointing \\\n")
    (tmp_path / "run.sh").write_text(launcher.replace("batch_size 8", "batch_size 16"))
    # a second launcher of the repository runs the same script: its default is shared, even when the fix is asked
    # for run.sh alone, so the flag goes on this launch
    (tmp_path / "run_small.sh").write_text(launcher.replace("batch_size 8", "batch_size 1"))
    (tmp_path / ".git").mkdir()
    cli.run(tmp_path, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "--preserve-effective-batch", "run.sh")
    written = (tmp_path / "run.sh").read_text()
    assert "   --gradient-accumulation-steps " in written and "--gradient_accumulation_steps" not in written
    assert (tmp_path / "sft.py").read_text() == script


def test_a_fix_that_would_stop_the_launch_is_undone(cli, tmp_path, monkeypatch):
    # Were a new flag spelled as no option of the script (TL305: argparse refuses it at start), the fix would break
    # the job it ports: the engine reads the job again after the round and undoes it.
    from trainlint.fixers.editors import shell

    monkeypatch.setattr(shell, "spelling", lambda *args, **kwargs: "no_such_option")
    folder = _job(tmp_path)
    launcher = LAUNCHER.replace("   --gradient_accumulation_steps 8 \\\n", "   --gradient_checkpointing \\\n")
    (folder / "run.sh").write_text(launcher.replace("batch_size 8", "batch_size 16"))
    (folder / "run_small.sh").write_text(launcher.replace("batch_size 8", "batch_size 1"))
    (folder / ".git").mkdir()
    before = (folder / "run.sh").read_text()
    code, out, err = cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "--preserve-effective-batch",
                             "run.sh")
    assert (folder / "run.sh").read_text() == before
    assert "the fixes were undone: a job would stop at start (TL305" in out + err


def test_a_fault_after_a_round_is_written_puts_the_files_back(cli, tmp_path, monkeypatch):
    from trainlint.fixers import engine

    def fault(*args, **kwargs):
        raise RuntimeError("checking the round failed")

    monkeypatch.setattr(engine, "_job_problem", fault)
    folder = _job(tmp_path)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    code, out, err = cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert code == 2 and "internal error" in err
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


# A 1.3B full fine-tune on one card, ZeRO off, the micro-batch left to the script's default (8): ported to two 24 GB
# cards it needs sharding and a smaller micro-batch.
DEFAULT_BATCH_LAUNCHER = """#!/bin/bash
deepspeed --num_gpus 1 sft.py \\
   --model_name_or_path facebook/opt-1.3b \\
   --gradient_accumulation_steps 8 \\
   --max_seq_len 512 \\
   --zero_stage 0 \\
   --deepspeed \\
   --output_dir ./out &> train.log
"""


def test_a_port_puts_the_machine_values_on_the_launch_not_in_the_script_default(cli, tmp_path):
    # The script's default is every launch's that leaves the option out (a README's command, a user's own): a port
    # to this machine changes this launch alone. ZeRO off by the script's own flag is sharded through that flag.
    folder = _job(tmp_path, DEFAULT_BATCH_LAUNCHER)
    script = (folder / "sft.py").read_text()
    code, out, err = cli.run(folder, "fix", "--gpu", "rtx4090", "--num-gpus", "2", "--preserve-effective-batch",
                             "run.sh")
    assert (folder / "sft.py").read_text() == script
    flag_added = "   --output_dir ./out \\\n   --per_device_train_batch_size 4 &> train.log"
    assert (folder / "run.sh").read_text() == DEFAULT_BATCH_LAUNCHER.replace(
        "--num_gpus 1", "--num_gpus 2").replace("--zero_stage 0", "--zero_stage 3").replace(
        "   --output_dir ./out &> train.log", flag_added), out + err

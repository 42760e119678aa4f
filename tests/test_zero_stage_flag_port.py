"""A job whose entry script builds its DeepSpeed config from its own `--zero_stage` flag (DeepSpeed-Chat's and
OpenRLHF's scripts): a port to smaller GPUs may shard at ZeRO-3 by rewriting the number the launcher passes, as it
would by editing a DeepSpeed JSON. Before, such a job was offered only LoRA, which changes what trains."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.linter import lint, make_target
from trainlint.memory.plans import chosen_plan

DS_CHAT = Path(__file__).parent / "samples" / "python" / "ds_chat_style"
LAUNCHER = """#!/bin/bash
deepspeed --num_gpus 8 sft.py \\
   --model_name_or_path meta-llama/Llama-2-13b-hf \\
   --per_device_train_batch_size 1 \\
   --gradient_accumulation_steps 8 \\
   --max_seq_len 1024 \\
   --gradient_checkpointing \\
   --zero_stage {stage} \\
   --dtype bf16 \\
   --deepspeed \\
   --output_dir ./out
"""


def _job(tmp_path: Path, stage: str = "2") -> Path:
    shutil.copy(DS_CHAT / "sft.py", tmp_path / "sft.py")
    (tmp_path / "run.sh").write_text(LAUNCHER.format(stage=stage))
    return tmp_path


def test_the_plan_shards_at_zero_3_through_the_flag(tmp_path):
    target = make_target("a100-40gb", None, 8)
    [run] = lint([_job(tmp_path) / "run.sh"], target).scan.runs
    plan = chosen_plan(run, target.gpu, 8)
    assert plan is not None and plan.safe and plan.overrides == {"zero_stage": 3}


def test_fix_rewrites_the_number_the_launcher_passes(cli, tmp_path):
    folder = _job(tmp_path)
    code, out, err = cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert (folder / "run.sh").read_text() == LAUNCHER.format(stage="3"), out + err


def test_a_stage_from_a_variable_is_rewritten_at_the_variable(cli, tmp_path):
    folder = _job(tmp_path, "$ZERO_STAGE")
    launcher = (folder / "run.sh").read_text().replace("#!/bin/bash\n", "#!/bin/bash\nZERO_STAGE=2\n")
    (folder / "run.sh").write_text(launcher)
    cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "8", "run.sh")
    assert (folder / "run.sh").read_text() == launcher.replace("ZERO_STAGE=2\n", "ZERO_STAGE=3\n")

"""`trainlint fix scripts/finetune.sh` reads one launcher; the DeepSpeed config it names may serve the repository's
other scripts too (LLaVA's `scripts/zero3.json`). A port that would edit that config does not, as it does not when the
whole repository is checked, instead of changing jobs the check did not read: the job gets a copy of its own."""
from __future__ import annotations

import json

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY

_ZERO3 = json.dumps({"bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto",
                     "gradient_accumulation_steps": "auto", "train_batch_size": "auto",
                     "zero_optimization": {"stage": 3, "overlap_comm": True}}, indent=2) + "\n"
_LAUNCHER = ("#!/bin/bash\ndeepspeed train.py --deepspeed ./scripts/zero3.json --model_name_or_path "
             "lmsys/vicuna-13b-v1.5 --bf16 True --per_device_train_batch_size 16 --gradient_accumulation_steps 1 "
             "--model_max_length 2048 --gradient_checkpointing True --output_dir out\n")


def _repository(tmp_path, other_launcher: str):
    return write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'recipes'\n",
                                 "train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                                 "scripts/zero3.json": _ZERO3, "scripts/finetune.sh": _LAUNCHER,
                                 "scripts/other.sh": other_launcher})


def _fix(cli, folder):
    return cli.run(folder, "fix", "scripts/finetune.sh", "--isolated", "--gpu", "rtx4090", "--num-gpus", "8",
                   "--preserve-effective-batch")


def test_a_config_other_launchers_name_is_not_edited_for_one_of_them(cli, tmp_path):
    other = _LAUNCHER.replace("--per_device_train_batch_size 16", "--per_device_train_batch_size 4")
    folder = _repository(tmp_path, other)
    _, out, _ = _fix(cli, folder)
    assert (folder / "scripts/zero3.json").read_text() == _ZERO3
    # The job gets a copy of the config of its own, with the offload the port needs (test_own_configs.py).
    launcher = (folder / "scripts/finetune.sh").read_text()
    assert "--deepspeed ./scripts/finetune_zero3_offload.json" in launcher
    assert "--per_device_train_batch_size 4 --gradient_accumulation_steps 4" in launcher
    own = json.loads((folder / "scripts/finetune_zero3_offload.json").read_text())
    assert own["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert {**own, "zero_optimization": None} == {**json.loads(_ZERO3), "zero_optimization": None}
    # Without a place for the copy, the port is one plan: none of it is applied.
    folder = _repository(tmp_path / "taken", other)
    (folder / "scripts/finetune_zero3_offload.json").write_text("{}\n")
    _, out, _ = _fix(cli, folder)
    assert (folder / "scripts/zero3.json").read_text() == _ZERO3
    assert (folder / "scripts/finetune.sh").read_text() == _LAUNCHER
    assert "scripts/zero3.json is also named by scripts/other.sh, which this check did not read" in out


def test_a_config_only_this_launcher_names_is_edited(cli, tmp_path):
    folder = _repository(tmp_path, "#!/bin/bash\necho 'evaluation happens elsewhere'\n")
    _fix(cli, folder)
    config = json.loads((folder / "scripts/zero3.json").read_text())
    assert config["zero_optimization"].get("offload_optimizer", {}).get("device") == "cpu"

"""TRL's trainer configs differ from TrainingArguments in their defaults, by release: bf16 on from trl 0.19 (unless
fp16 is set), gradient checkpointing on from trl 0.22. A job reads them from the trl release its repository pins,
and with no pin each is unknown: neither a checkpointing-off warning nor an fp32 one is certain."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import write_tree

DPO = Path(__file__).parent / "samples" / "preference" / "trl_model_config" / "dpo.py"
# A script building its SFTConfig in code, as TRL's own examples and many notebooks turned scripts do.
SFT_IN_CODE = '''from datasets import load_dataset
from transformers import AutoModelForCausalLM
from trl import SFTConfig, SFTTrainer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B")
args = SFTConfig(output_dir="out", per_device_train_batch_size=4, max_length=4096)
SFTTrainer(model=model, args=args, train_dataset=load_dataset("trl-lib/Capybara", split="train")).train()
'''
_LAUNCH = ("torchrun --nproc_per_node 8 dpo.py --model_name_or_path meta-llama/Llama-2-7b-hf --dataset_name x "
           "--per_device_train_batch_size 4 --max_length 2048 --output_dir out {flags}\n")


def _settings(cli, folder: Path, pin: str = "", flags: str = "") -> dict:
    shutil.copy(DPO, folder / "dpo.py")
    files = {"run.sh": _LAUNCH.format(flags=flags)}
    if pin:
        files["requirements.txt"] = f"torch\n{pin}\n"
    write_tree(folder, files)
    _, document = cli.check_json(folder, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return document["runs"][0]["settings"]


@pytest.mark.parametrize("pin,bf16,checkpointing", [
    ("trl==0.23.1", True, True),
    ("trl==0.20.0", True, False),
    ("trl==0.17.0", False, False),
    ("trl<0.19", False, False),  # every release the bound admits is older than both changes
])
def test_a_pinned_trl_release_gives_its_configs_defaults(cli, tmp_path, pin, bf16, checkpointing):
    settings = _settings(cli, tmp_path, pin)
    assert (settings["bf16"]["value"], settings["gradient_checkpointing"]["value"]) == (bf16, checkpointing)


def test_without_a_pin_the_changed_defaults_are_unknown(cli, tmp_path):
    settings = _settings(cli, tmp_path)
    assert settings["gradient_checkpointing"]["value"] is None
    assert "trl 0.22" in settings["gradient_checkpointing"]["reason"]
    assert settings["bf16"]["value"] is None and "trl 0.19" in settings["bf16"]["reason"]


def test_a_written_value_and_fp16_still_win(cli, tmp_path):
    settings = _settings(cli, tmp_path, "trl==0.23.1", "--gradient_checkpointing False --fp16 True")
    assert settings["gradient_checkpointing"]["value"] is False and settings["gradient_checkpointing"]["path"]
    assert settings["bf16"]["value"] is False  # TRL turns bf16 on only when fp16 is not set


def test_a_config_built_in_code_is_a_trl_config_too(cli, tmp_path):
    write_tree(tmp_path, {"train.py": SFT_IN_CODE, "run.sh": "torchrun --nproc_per_node 8 train.py\n",
                          "requirements.txt": "trl>=0.15,<0.25\n"})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    settings = document["runs"][0]["settings"]
    # A range is no pin: the release may be either side of a change it does not bound.
    assert settings["gradient_checkpointing"]["value"] is None
    assert "TL102" not in [finding["code"] for finding in document["findings"]]


def test_a_pin_at_the_top_of_a_tree_outside_any_repository_counts(cli, tmp_path):
    """A tree unpacked from an archive has no `.git`: the requirements file at the top of the scanned tree pins
    the release for the launchers below it (s1's `train/sft.sh` and its top-level `trl==0.12.0`)."""
    shutil.copy(DPO, tmp_path / "dpo.py")
    write_tree(tmp_path, {"requirements.txt": "trl==0.23.1\n",
                          "scripts/run.sh": "cd .. && " + _LAUNCH.format(flags="")})
    _, document = cli.check_json(tmp_path, ".", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert document["runs"][0]["settings"]["gradient_checkpointing"]["value"] is True


def test_an_sft_config_given_no_length_limits_rows_to_1024_tokens(cli, tmp_path):
    """SFTConfig's `max_length` is 1024 from trl 0.16, and `min(tokenizer.model_max_length, 1024)` before: a TRL SFT
    job that sets no limit is grounded at 1024 tokens whatever its release; a DPO job gets no such default."""
    sft = DPO.read_text().replace("DPOConfig", "SFTConfig").replace("DPOTrainer", "SFTTrainer")
    write_tree(tmp_path, {"sft.py": sft, "run.sh": _LAUNCH.replace("dpo.py", "sft.py").replace(
        " --max_length 2048", "").format(flags="")})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    length = document["runs"][0]["settings"]["max_seq_length"]
    assert length["value"] == 1024 and length["path"] is None


@pytest.mark.parametrize("config,pin,length", [("DPO", "trl==0.14.0", 1024), ("DPO", "trl==0.11.4", 512),
                                               ("DPO", "", None), ("ORPO", "trl==0.11.4", 512)])
def test_a_preference_config_given_no_length_takes_its_releases(cli, tmp_path, config, pin, length):
    # DPOConfig's (and ORPO's, CPO's, KTO's, RewardConfig's) `max_length` is 1024 from trl 0.14; before it was None,
    # which the trainer replaced by 512.
    (tmp_path / "dpo.py").write_text(DPO.read_text().replace("DPO", config))
    write_tree(tmp_path, {"run.sh": _LAUNCH.replace(" --max_length 2048", "").format(flags=""),
                          **({"requirements.txt": f"{pin}\n"} if pin else {})})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    setting = document["runs"][0]["settings"]["max_seq_length"]
    assert setting["value"] == length
    if length is None:
        assert "trl 0.14" in setting["reason"]

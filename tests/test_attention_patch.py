"""`replace_llama_attn_with_flash_attn()` (FastChat's monkey patch, in the `train_mem.py` of LLaVA-era repositories)
replaces the forward of LLaMA's eager attention class: on a transformers that runs eager attention by default
(before 4.36), the job keeps no s x s attention scores. The patch touches that family only."""
from __future__ import annotations

import shutil
from typing import Sequence, Tuple

from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "attention_patch"
_SCORES = "eager attention keeps the s x s attention scores of every head"
_PATCHED = ("`replace_llama_attn_with_flash_attn()` in the entry script replaces the eager attention with a kernel "
            "that keeps no s x s scores")


def _memory(cli, tmp_path, edits: Sequence[Tuple[str, str, str]]) -> dict:
    """The job's memory object, once each (file, old, new) edit is made."""
    shutil.copytree(SAMPLE, tmp_path / "repo")
    for relative, old, new in edits:
        path = tmp_path / "repo" / relative
        text = path.read_text()
        assert old in text, relative
        path.write_text(text.replace(old, new))
    _, document = cli.check_json(tmp_path / "repo", "finetune.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                 "--num-gpus", "8")
    return document["runs"][0]["memory"]


def test_the_patch_replaces_the_eager_scores_of_the_family_it_names(cli, tmp_path):
    memory = _memory(cli, tmp_path, [])
    assert _PATCHED in memory["assumptions"] and _SCORES not in memory["assumptions"]
    assert memory["peak_gib"] < 60


def test_without_the_patch_the_old_default_keeps_the_scores(cli, tmp_path):
    memory = _memory(cli, tmp_path, [("vlm/train/train_mem.py", "replace_llama_attn_with_flash_attn()\n", "\n")])
    assert _SCORES in memory["assumptions"] and _PATCHED not in memory["assumptions"]
    assert memory["peak_gib"] > 60


def test_the_patch_leaves_another_family_eager(cli, tmp_path):
    memory = _memory(cli, tmp_path, [("finetune.sh", "lmsys/vicuna-7b-v1.5", "microsoft/phi-2")])
    assert _SCORES in memory["assumptions"] and _PATCHED not in memory["assumptions"]



def test_an_attention_kernel_handed_in_by_a_caller_counts_as_keeping_no_scores(cli, tmp_path):
    # LLaVA's later entry point: `train(attn_implementation="flash_attention_2")`, passed on to from_pretrained.
    memory = _memory(cli, tmp_path, [
        ("vlm/train/train_mem.py", "replace_llama_attn_with_flash_attn()\n", "\n"),
        ("vlm/train/train_mem.py", "    train()", "    train(attn_implementation=\"flash_attention_2\")"),
        ("vlm/train/train.py", "def train():", "def train(attn_implementation=None):"),
        ("vlm/train/train.py", "from_pretrained(model_args.model_name_or_path)",
         "from_pretrained(model_args.model_name_or_path, attn_implementation=attn_implementation)"),
    ])
    assert _SCORES not in memory["assumptions"]
    # The entry's call gives the parameter: the kernel is known, not assumed.
    assert not any("attention implementation" in unknown for unknown in memory["unknowns"])


def test_an_attention_kernel_a_caller_does_not_pass_stays_unknown(cli, tmp_path):
    memory = _memory(cli, tmp_path, [
        ("vlm/train/train_mem.py", "replace_llama_attn_with_flash_attn()\n", "\n"),
        ("vlm/train/train.py", "def train():", "def train(attn_implementation=None):"),
        ("vlm/train/train.py", "from_pretrained(model_args.model_name_or_path)",
         "from_pretrained(model_args.model_name_or_path, attn_implementation=attn_implementation)"),
    ])
    assert _SCORES not in memory["assumptions"]
    assert ("the attention implementation is chosen in code: assumed a kernel that keeps no s x s scores"
            in memory["unknowns"])

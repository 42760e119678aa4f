"""Every rule's documented examples are tests: the firing ones fire, the others stay quiet."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree
from trainlint.checks import all_rules

CASES = [(rule, example) for rule in all_rules() for example in rule.examples]


@pytest.mark.parametrize("rule,example", CASES, ids=[f"{r.code}-{e.title}" for r, e in CASES])
def test_documented_example(tmp_path, cli, rule, example):
    write_tree(tmp_path, example.files)
    codes = cli.codes(tmp_path, ".", *example.options)
    assert (rule.code in codes) is example.fires, codes


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_documented_with_both_kinds_of_example(rule):
    docs = rule.docs()
    for part in ("## What it does", "## Why is this bad", "## Example", "## Fix safety"):
        assert part in docs
    assert any(e.fires for e in rule.examples) and any(not e.fires for e in rule.examples)
    assert rule.name == rule.name.lower() and " " not in rule.name


def test_memory_saving_optimizers_give_no_model_state_verdict(tmp_path, cli):
    recipe = ("model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\n"
              "finetuning_type: full\nuse_galore: true\ngalore_rank: 128\ncutoff_len: 1024\n"
              "per_device_train_batch_size: 1\ngradient_accumulation_steps: 1\npure_bf16: true\n")
    (tmp_path / "galore.yaml").write_text(recipe)
    assert "TL108" not in cli.codes(tmp_path, "galore.yaml", "--gpu", "a100-40gb")
    (tmp_path / "full.yaml").write_text(recipe.replace("use_galore: true\n", ""))
    assert "TL108" in cli.codes(tmp_path, "full.yaml", "--gpu", "a100-40gb")

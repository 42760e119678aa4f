"""Every rule's documented examples are tests: the firing ones fire at the location they state and
their fixes rewrite the files into what they state; the others stay quiet."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import write_tree
from trainlint.checks import all_rules

CASES = [(rule, example) for rule in all_rules() for example in rule.examples]
FIRING = [(rule, example) for rule, example in CASES if example.fires]
FIXED = [(rule, example) for rule, example in FIRING if example.fixed is not None]


def _ids(cases):
    return [f"{r.code}-{e.title}" for r, e in cases]


def _location(finding: dict) -> str:
    """A finding's place as an example states it: `path:line:column`, or the path alone."""
    if finding.get("line") is None:
        return finding["path"]
    return f"{finding['path']}:{finding['line']}:{finding['column']}"


def _rule_findings(tmp_path: Path, cli, rule, example) -> List[dict]:
    write_tree(tmp_path, example.files)
    _, document = cli.check_json(tmp_path, ".", *example.options)
    return [f for f in document["findings"] if f["code"] == rule.code]


def _fix(tmp_path: Path, cli, rule, example) -> Dict[str, str]:
    """The example's files that `trainlint fix` (this rule only) changed, as they read now."""
    code, _, err = cli.run(tmp_path, "fix", ".", *example.options, "--select", rule.code)
    assert code != 2, err
    now = {relative: (tmp_path / relative).read_text(encoding="utf-8") for relative in example.files}
    return {relative: text for relative, text in now.items() if text != example.files[relative]}


@pytest.mark.parametrize("rule,example", CASES, ids=_ids(CASES))
def test_documented_example(tmp_path, cli, rule, example):
    findings = _rule_findings(tmp_path, cli, rule, example)
    assert bool(findings) is example.fires, findings
    if example.at is not None:
        assert [_location(f) for f in findings] == [example.at]


@pytest.mark.parametrize("rule,example", FIXED, ids=_ids(FIXED))
def test_documented_fix_rewrites_the_files_as_stated(tmp_path, cli, rule, example):
    write_tree(tmp_path, example.files)
    assert _fix(tmp_path, cli, rule, example) == dict(example.fixed)
    fixed_once = {relative: (tmp_path / relative).read_text(encoding="utf-8") for relative in example.files}
    cli.run(tmp_path, "fix", ".", *example.options, "--select", rule.code)
    fixed_twice = {relative: (tmp_path / relative).read_text(encoding="utf-8") for relative in example.files}
    assert fixed_twice == fixed_once, "a second fix changed the files again"


@pytest.mark.parametrize("rule,example", FIRING, ids=_ids(FIRING))
def test_firing_example_pins_its_location_and_its_safe_fix(tmp_path, cli, rule, example):
    assert example.at is not None, f"state where {rule.code} fires: at=\"path:line:column\""
    safe = any((f.get("fix") or {}).get("applicability") == "safe"
               for f in _rule_findings(tmp_path, cli, rule, example))
    assert (example.fixed is not None) is safe, \
        "a safe fix must be pinned with fixed={...}" if safe else "only a safe fix is applied by `trainlint fix`"


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


def test_the_rule_command_shows_where_an_example_fires_and_what_its_fix_rewrites(tmp_path, cli):
    code, out, _ = cli.run(tmp_path, "rule", "TL201")
    assert code == 0
    assert "(`trainlint check .`) at `ds.json:1:36`" in out
    assert "`trainlint fix . --select TL201` rewrites `ds.json`:" in out
    assert '  -{"train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1,' in out
    assert '  +{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",' in out

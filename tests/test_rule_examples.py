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

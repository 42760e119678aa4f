"""docs/rules.md is generated from the rules' docstrings and must match them; each rule has its own
anchor, which the SARIF report and the index link to."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint.checks import all_rules
from trainlint.checks.docs import REFRESH_COMMAND, SECTION_TITLES, rule_markdown, rules_markdown, sections

RULES_MD = Path(__file__).parent.parent / "docs" / "rules.md"


def test_committed_rules_md_is_up_to_date() -> None:
    expected = rules_markdown(all_rules())
    committed = RULES_MD.read_text(encoding="utf-8") if RULES_MD.exists() else ""
    assert committed == expected, f"docs/rules.md is stale; refresh it with `{REFRESH_COMMAND}`"


def test_the_module_prints_the_document() -> None:
    completed = subprocess.run([sys.executable, "-m", "trainlint.checks.docs"], capture_output=True, check=True,
                               cwd=Path(__file__).parent.parent)
    assert completed.stdout.decode("utf-8") == rules_markdown(all_rules())


def test_one_anchored_section_per_rule_in_code_order() -> None:
    text = rules_markdown(all_rules())
    headings = re.findall(r"^## (\S+)$", text, flags=re.MULTILINE)
    assert headings == [rule.code for rule in all_rules()]
    for rule in all_rules():
        assert f"| [{rule.code}](#{rule.code.lower()}) | `{rule.name}` |" in text


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_each_rule_renders_its_four_sections_and_examples(rule) -> None:
    titles = [section.title for section in sections(rule.docs())]
    assert titles == list(SECTION_TITLES)
    rendered = rule_markdown(rule)
    assert [line[4:] for line in rendered.splitlines() if line.startswith("### ")] == [*SECTION_TITLES,
                                                                                        "Tested examples"]
    for example in rule.examples:
        verdict = "fires" if example.fires else "stays quiet"
        assert f"- {verdict}: {example.title} (`" in rendered


def test_headings_inside_code_blocks_are_left_alone() -> None:
    docs = "## What it does\nRuns.\n```sh\n## a shell comment\n```\n## Fix safety\nNone."
    assert [(s.title, s.body) for s in sections(docs)] == [
        ("What it does", "Runs.\n```sh\n## a shell comment\n```"), ("Fix safety", "None.")]

"""Every rule's documentation as Markdown: docs/rules.md is generated from it, and the SARIF report
takes each rule's help from it.

    python -m trainlint.checks.docs > docs/rules.md

A rule documents itself in its class docstring, in four `##` sections (What it does / Why is this
bad / Example / Fix safety); its tested examples (`Rule.examples`) are listed after them."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Iterable, List, Sequence, Tuple

from trainlint.checks import all_rules
from trainlint.checks.base import Example, Rule

SECTION_TITLES = ("What it does", "Why is this bad", "Example", "Fix safety")
REFRESH_COMMAND = "python -m trainlint.checks.docs > docs/rules.md"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


@dataclass(frozen=True)
class Section:
    title: str
    body: str


def _outside_fences(lines: Sequence[str]) -> Iterable[Tuple[str, bool]]:
    """Each line with whether it is Markdown text (not inside a fenced code block)."""
    fence = ""
    for line in lines:
        match = _FENCE.match(line)
        if fence:
            yield line, False
            if match and match.group(1) == fence:
                fence = ""
        elif match:
            fence = match.group(1)
            yield line, False
        else:
            yield line, True


def sections(docs: str) -> List[Section]:
    """The `##` sections of a rule's documentation, in order; text before the first is left out."""
    found: List[Section] = []
    title, body = None, []
    for line, is_text in _outside_fences(docs.splitlines()):
        heading = _HEADING.match(line) if is_text else None
        if heading and len(heading.group(1)) == 2:
            if title is not None:
                found.append(Section(title, "\n".join(body).strip("\n")))
            title, body = heading.group(2), []
        elif title is not None:
            body.append(line)
    if title is not None:
        found.append(Section(title, "\n".join(body).strip("\n")))
    return found


def what_it_does(rule: Rule) -> str:
    """The first paragraph of the rule's "What it does", on one line."""
    for section in sections(rule.docs()):
        if section.title == SECTION_TITLES[0]:
            return " ".join(section.body.split("\n\n")[0].split())
    return ""


def _demoted(markdown: str, levels: int) -> str:
    """The headings of `markdown` `levels` deeper (code blocks untouched), to nest it in a section."""
    out = []
    for line, is_text in _outside_fences(markdown.splitlines()):
        heading = _HEADING.match(line) if is_text else None
        if heading:
            line = "#" * min(6, len(heading.group(1)) + levels) + " " + heading.group(2)
        out.append(line)
    return "\n".join(out)


def anchor(code: str) -> str:
    """The fragment of the rule's section in docs/rules.md: `tl101` (the heading is the code alone)."""
    return code.lower()


def _fix_command(rule: Rule, example: Example) -> str:
    return " ".join(("trainlint fix .", *example.options, "--select", rule.code))


def _changed_lines(before: str, after: str) -> List[str]:
    """The removed and added lines of a file, without context or hunk headers: a fix changes a few."""
    import difflib  # only where the documentation renders an example's fix

    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "-+" and not line.startswith(("---", "+++"))]


def example_lines(rule: Rule, example: Example) -> List[str]:
    """One example as a list item: its verdict and command, where it fires, and what the fix rewrites."""
    verdict = "fires" if example.fires else "stays quiet"
    command = " ".join(("trainlint check .", *example.options))
    where = f" at `{example.at}`" if example.at else ""
    lines = [f"- {verdict}: {example.title} (`{command}`){where}"]
    for path, after in sorted((example.fixed or {}).items()):
        lines += ["", f"  `{_fix_command(rule, example)}` rewrites `{path}`:", "", "  ```diff"]
        lines += [f"  {line}" for line in _changed_lines(example.files.get(path, ""), after)]
        lines += ["  ```", ""]
    return lines


def examples_markdown(rule: Rule, heading_level: int = 3) -> str:
    """The rule's tested examples under a heading of `heading_level` (that of the documentation's sections),
    for docs/rules.md and `trainlint rule CODE`."""
    if not rule.examples:
        return ""
    module = type(rule).__module__.replace(".", "/") + ".py"
    lines = ["#" * heading_level + " Tested examples", "",
             f"Each is a small job in `{module}`; the test suite checks that the rule fires on it or not, "
             f"where it fires, and what its fix rewrites.", ""]
    for example in rule.examples:
        lines += example_lines(rule, example)
    kept = [line for index, line in enumerate(lines) if line or (index and lines[index - 1])]
    return "\n".join(kept).rstrip("\n") + "\n"


def rule_markdown(rule: Rule) -> str:
    """One rule: `## TL101`, its name, severity and summary, its documentation, its tested examples."""
    lines = [f"## {rule.code}", "", f"`{rule.name}` · {rule.severity.value} · {rule.summary}.", ""]
    lines.append(_demoted(rule.docs(), 1))
    if rule.examples:
        lines += ["", examples_markdown(rule)]
    return "\n".join(lines).rstrip("\n") + "\n"


def rules_markdown(rules: Sequence[Rule]) -> str:
    """docs/rules.md: an index table, then one section per rule in code order."""
    lines = [
        "# Rules",
        "",
        f"<!-- Generated from the rules' docstrings; do not edit. Refresh with `{REFRESH_COMMAND}`. -->",
        "",
        "`trainlint rule CODE` prints the same text in a terminal.",
        "",
        "| Code | Name | Severity | Summary |",
        "|---|---|---|---|",
    ]
    lines += [f"| [{r.code}](#{anchor(r.code)}) | `{r.name}` | {r.severity.value} | {r.summary} |" for r in rules]
    text = "\n".join(lines) + "\n"
    return text + "".join("\n" + rule_markdown(rule) for rule in rules)


def main() -> int:
    sys.stdout.buffer.write(rules_markdown(all_rules()).encode("utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Inline suppressions: `# trainlint: ignore[TL101]` on a line or the line above it,
`# trainlint: ignore-file[TL104]` anywhere in a file, a bare `ignore` for every code, and an
optional reason after `--`. Shell, Python and YAML files; in a JSON file the same directive is a
`//` comment (`// trainlint: ignore-file[TL001]` for a config read by a loader that accepts comments).

A directive covers a *logical* line: in shell the whole command a `\\` continues over several
lines (a comment cannot sit inside such a command without ending it), in Python the whole
statement across brackets. So `--bf16 True  # trainlint: ignore[TL101]` on the last line of a
launcher, or a comment line above the launcher, covers every flag of the command.

Directives that suppress nothing become TL901 findings."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from trainlint.checks import all_rules
from trainlint.core import Applicability, Edit, Finding, Fix, Origin, Severity
from trainlint.formats import Lines, LogicalLines, format_of
from trainlint.readers.source import SourceText, read_source

UNUSED_CODE = "TL901"
UNUSED_NAME = "unused-suppression"
# Anything that looks like it is addressed to trainlint; a part that does not parse is reported.
_MARKER = re.compile(r"#\s*trainlint\s*:", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"#\s*trainlint\s*:\s*(?P<kind>ignore-file|ignore)(?![\w-])"
    r"(?:\s*\[(?P<codes>[^\]]*)\])?"
    r"\s*(?:(?:--|:|—)\s*(?P<reason>.*?))?\s*$",
    re.IGNORECASE,
)
_CODE = re.compile(r"^TL\d{3}$")


@dataclass(frozen=True)
class Suppression:
    """One directive: `codes` None means every code. Lines `first_line`..`last_line` are covered
    (ignored for file-wide directives)."""

    path: str
    origin: Origin
    codes: Optional[FrozenSet[str]]
    reason: str
    file_wide: bool
    first_line: int
    last_line: int
    # The exact `[...]` text and the whole-comment span, for the fix that removes unused codes.
    codes_origin: Optional[Origin] = None
    removal: Optional[Origin] = None

    def covers(self, finding: Finding) -> bool:
        if self.codes is not None and finding.code not in self.codes:
            return False
        if self.file_wide:
            return True
        origin = finding.origin
        return origin is not None and self.first_line <= origin.line <= self.last_line


@dataclass(frozen=True)
class FileSuppressions:
    path: str
    suppressions: Tuple[Suppression, ...] = ()
    # Comments addressed to trainlint that do not parse: (where, what is wrong).
    problems: Tuple[Tuple[Origin, str], ...] = ()


@dataclass
class Applied:
    """Findings left after suppressions, those suppressed (with the directive), and TL901 findings."""

    findings: List[Finding] = field(default_factory=list)
    suppressed: List[Tuple[Finding, Suppression]] = field(default_factory=list)
    unused: List[Finding] = field(default_factory=list)


# --- reading directives -------------------------------------------------------------------------

def read_suppressions(path: str) -> FileSuppressions:
    """The directives of one file; files of other kinds and unreadable files have none. Where the
    comments are and which lines form one logical line is the file format's to say."""
    file_format = format_of(path)
    if file_format is None:
        return FileSuppressions(path)
    source = read_source(path)
    if not isinstance(source, SourceText) or b"trainlint" not in source.data.lower():
        return FileSuppressions(path)
    lines = Lines(source.data)
    comments = file_format.comments(source.data)
    logical = file_format.logical_lines(source.data) if comments else {}
    suppressions: List[Suppression] = []
    problems: List[Tuple[Origin, str]] = []
    for comment in comments:
        parsed = _parse(source, lines, comment.start, comment.end, logical)
        if isinstance(parsed, Suppression):
            suppressions.append(parsed)
        elif parsed is not None:
            problems.append(parsed)
    return FileSuppressions(source.path, tuple(suppressions), tuple(problems))


def _parse(source: SourceText, lines: Lines, start: int, end: int,
           logical: LogicalLines) -> Union[Suppression, Tuple[Origin, str], None]:
    """The directive in the comment at `start`..`end`, (where, what is wrong) when it does not parse,
    or None when the comment is not addressed to trainlint."""
    text = source.data[start:end].decode("utf-8", "replace")
    if text.startswith("//"):
        text = "# " + text[2:]  # a JSON comment reads as a `#` one; same length, so offsets hold
    marker = _MARKER.search(text)
    if marker is None:
        return None
    # Only the first marker counts (`# note # trainlint: ignore` works too).
    offset = start + len(text[:marker.start()].encode("utf-8"))
    directive_text = text[marker.start():]
    origin = source.origin(offset, end)
    match = _DIRECTIVE.match(directive_text)
    if match is None:
        return (origin, "cannot read this suppression; write `# trainlint: ignore[TL101]` or "
                        "`# trainlint: ignore-file[TL104]`, optionally followed by `-- reason`")
    codes: Optional[FrozenSet[str]] = None
    codes_origin = None
    if match.group("codes") is not None:
        parsed = _codes(match.group("codes"))
        if isinstance(parsed, str):
            return (origin, parsed)
        codes = parsed
        bracket = directive_text.index("[", match.start("kind"))
        codes_start = offset + len(directive_text[:bracket].encode("utf-8"))
        codes_end = offset + len(directive_text[:match.end("codes") + 1].encode("utf-8"))
        codes_origin = source.origin(codes_start, codes_end)
    line = lines.line_of(start)
    file_wide = match.group("kind").lower() == "ignore-file"
    own_line = not lines.data[lines.span(line)[0]:start].strip()
    first, last = _covered(lines, line, own_line, logical)
    return Suppression(
        path=source.path, origin=origin, codes=codes, reason=(match.group("reason") or "").strip(),
        file_wide=file_wide, first_line=first, last_line=last, codes_origin=codes_origin,
        removal=_removal(source, lines, line, start, own_line),
    )


def _codes(text: str) -> Union[FrozenSet[str], str]:
    """The codes (or rule names) in `[...]`, or what is wrong with them."""
    by_name = {rule.name: rule.code for rule in all_rules()}
    known = {rule.code for rule in all_rules()}
    codes = set()
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        code = by_name.get(part.lower(), part.upper())
        if not _CODE.match(code) or code not in known:
            return f"`{part}` is not a trainlint rule code (`trainlint rule --all` lists them)"
        codes.add(code)
    if not codes:
        return "empty code list; write `# trainlint: ignore` to ignore every code on the line"
    return frozenset(codes)


def _covered(lines: Lines, line: int, own_line: bool, logical: LogicalLines) -> Tuple[int, int]:
    """A trailing directive covers its logical line; one on a line of its own covers the logical
    line below it (other comment lines in between are skipped, a blank line ends the search)."""
    target = line
    if own_line:
        target = line + 1
        while target <= lines.count() and lines.text(target).lstrip().startswith((b"#", b"//")):
            target += 1
        if target > lines.count() or not lines.text(target).strip():
            return (line, line)
    return logical.get(target, (target, target))


def _removal(source: SourceText, lines: Lines, line: int, start: int, own_line: bool) -> Origin:
    """The bytes to delete to remove the directive: the whole line when it stands alone, else the
    comment and the whitespace before it."""
    line_start, line_end = lines.span(line)
    if own_line:
        next_start = lines.starts[line] if line < lines.count() else line_end
        return source.origin(line_start, next_start)
    before = lines.data[line_start:start]
    return source.origin(line_start + len(before.rstrip()), line_end)


# --- applying them ------------------------------------------------------------------------------

def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.abspath(path)))


def collect(paths: Iterable[str]) -> Dict[str, FileSuppressions]:
    """Directives of every file, keyed by real path (a file named two ways is read once)."""
    found: Dict[str, FileSuppressions] = {}
    for path in dict.fromkeys(paths):  # a file named by many findings is looked up once
        if not path:
            continue
        key = _key(path)
        if key not in found:
            found[key] = read_suppressions(path)
    return found


def apply_suppressions(findings: Sequence[Finding], files: Iterable[str] = ()) -> Applied:
    """Drop the findings a directive covers and report the directives that cover nothing.
    `files` are the other files to look for directives in (every file of the scan), so an unused
    directive in a file without findings is reported too."""
    by_file = collect([f.path for f in findings] + list(files))
    applied = Applied()
    used: Dict[int, Set[str]] = {}
    for finding in findings:
        directive = _matching(finding, by_file.get(_key(finding.path)))
        if directive is None:
            applied.findings.append(finding)
            continue
        applied.suppressed.append((finding, directive))
        used.setdefault(id(directive), set()).add(finding.code)
    unused = [finding for entry in by_file.values() for finding in _unused(entry, used)]
    for finding in unused:
        # `ignore[TL901]` silences TL901 itself on the lines it covers.
        directive = _matching(finding, by_file.get(_key(finding.path)), explicit_only=True)
        if directive is None:
            applied.unused.append(finding)
        else:
            applied.suppressed.append((finding, directive))
    return applied


def _matching(finding: Finding, entry: Optional[FileSuppressions],
              explicit_only: bool = False) -> Optional[Suppression]:
    if entry is None:
        return None
    for directive in entry.suppressions:
        if explicit_only and (directive.codes is None or finding.code not in directive.codes):
            continue
        if directive.covers(finding):
            return directive
    return None


def _unused(entry: FileSuppressions, used: Dict[int, Set[str]]) -> List[Finding]:
    out = [_finding(entry.path, origin, message, None) for origin, message in entry.problems]
    for directive in entry.suppressions:
        hits = used.get(id(directive), set())
        if directive.codes is None:
            if not hits:
                out.append(_finding(entry.path, directive.origin, f"unused suppression: no finding "
                                    f"{_scope(directive)}", _remove_fix(directive, ())))
            continue
        idle = sorted(directive.codes - hits - {UNUSED_CODE})
        if idle:
            keep = tuple(sorted(directive.codes - set(idle)))
            out.append(_finding(entry.path, directive.origin,
                                f"unused suppression: no {', '.join(idle)} finding {_scope(directive)}",
                                _remove_fix(directive, keep)))
    return out


def _scope(directive: Suppression) -> str:
    if directive.file_wide:
        return "in this file"
    if directive.first_line == directive.last_line:
        return f"on line {directive.first_line}"
    return f"on lines {directive.first_line}–{directive.last_line}"


def _remove_fix(directive: Suppression, keep: Tuple[str, ...]) -> Optional[Fix]:
    if keep and directive.codes_origin is not None:
        return Fix(Applicability.SAFE, f"keep only {', '.join(keep)}",
                   edits=(Edit(directive.codes_origin, "[" + ", ".join(keep) + "]"),))
    if directive.removal is None:
        return None
    return Fix(Applicability.SAFE, "remove the suppression comment", edits=(Edit(directive.removal, ""),))


def _finding(path: str, origin: Origin, message: str, fix: Optional[Fix]) -> Finding:
    return Finding(code=UNUSED_CODE, name=UNUSED_NAME, severity=Severity.WARNING, message=message,
                   path=path, origin=origin, fix=fix)

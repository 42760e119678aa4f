"""`--output-format full` (the default): each finding with its code frame, where the value came from
and the fix, then the summary line. Built from rich Text objects so that brackets in messages are
never read as markup and `color=False` yields plain text."""
from __future__ import annotations

import io
from typing import List, Optional, Sequence, Tuple

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from trainlint.core import Finding, Origin, Report, Severity
from trainlint.report.common import (
    DEFAULT_FIX_COMMAND,
    NO_JOB_FOUND,
    TAB_WIDTH,
    SourceLines,
    by_location,
    fix_line,
    printable,
    relative_path,
    relative_run_id,
    severity_of,
    summary_line,
)
from trainlint.report.unknowns import unread_lines

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 1
WIDTH = 100
# A frame line longer than this (minified JSON, a generated one-line script) is shown as a window of this
# many characters that starts a little before the span, cut ends marked with an ellipsis.
FRAME_WINDOW = 160
FRAME_LEAD = 40
ELLIPSIS = "…"


def render_full(report: Report, *, root: str = ".", color: bool = False, notes: Sequence[str] = (),
                fix_command: str = DEFAULT_FIX_COMMAND, width: Optional[int] = None) -> str:
    """Every finding with its frame, then the unread places, the folded `notes` and the summary line.
    `width` is the terminal's (None: not a terminal, 100 columns; long lines are never cut)."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=width or WIDTH,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
    )
    sources = SourceLines(root)
    for finding in by_location(report.findings, root):
        for text in finding_block(finding, sources, root):
            console.print(text, soft_wrap=True)
        console.print()
    for line in unread_lines(report.unread, root):
        console.print(Text(printable(line), style="cyan" if line.startswith(" ") else "bold cyan"), soft_wrap=True)
    for line in notes:
        console.print(Text(line, style="cyan"), soft_wrap=True)
    summary = summary_line(report, fix_command)
    console.print(Text(summary, style="bold yellow" if summary == NO_JOB_FOUND else "bold"), soft_wrap=True)
    return buffer.getvalue()


def finding_block(finding: Finding, sources: SourceLines, root: str) -> List[Text]:
    severity = severity_of(finding)
    header = Text()
    header.append(f"{severity.value}[{finding.code}]", style=SEVERITY_STYLE[severity])
    header.append(f" {finding.name}: ", style="bold")
    message_lines = printable(finding.message).splitlines() or [""]
    header.append(message_lines[0])
    block = [header] + [Text("  " + line) for line in message_lines[1:]]

    shown = _frame_lines(finding.origin, sources)
    frame = code_frame(finding.origin, shown) if finding.origin is not None else []
    pad = " " * max((len(str(number)) for number, _ in shown), default=1)
    block.append(_dim(f"{pad}--> ").append(_location(finding.path, finding.origin, root), style="bold"))
    block.extend(frame)
    block.extend(_notes(finding, root, pad))
    return block


def _dim(text: str) -> Text:
    """Gutter text; a span, not the base style, so what is appended after it keeps its own style."""
    return Text().append(text, style="blue")


def _location(path: str, origin: Optional[Origin], root: str) -> str:
    shown = printable(relative_path(path, root))
    return f"{shown}:{origin.line}:{origin.column}" if origin else shown


def _notes(finding: Finding, root: str, pad: str) -> List[Text]:
    notes: List[Text] = []
    if finding.run_id:
        notes.append(_dim(f"{pad} = ").append(f"job: {printable(relative_run_id(finding.run_id, root) or '')}"))
    if finding.related:
        notes.append(_dim(f"{pad} = ").append("where the value came from:"))
        for related in finding.related:
            line = Text(f"{pad}     ")
            if related.origin is not None:
                line.append(_location(related.origin.path, related.origin, root), style="bold").append(" ")
            line.append(printable(related.message))
            notes.append(line)
    fix = fix_line(finding)
    if fix:
        style = "green" if fix.startswith("fix") else "cyan"
        notes.append(_dim(f"{pad} = ").append(printable(fix), style=style))
    return notes


# --- the code frame ----------------------------------------------------------------------------

def _frame_lines(origin: Optional[Origin], sources: SourceLines) -> List[Tuple[int, str]]:
    if origin is None:
        return []
    lines = sources.lines(origin.path)
    if lines is None or not 0 < origin.line <= len(lines):
        return []
    first = max(1, origin.line - CONTEXT_BEFORE)
    last = min(len(lines), max(origin.line, origin.end_line) + CONTEXT_AFTER)
    if last > origin.line + CONTEXT_AFTER + 3:
        # A long multi-line span: show its first line and leave the rest to the location.
        last = min(len(lines), origin.line + CONTEXT_AFTER)
    return [(number, lines[number - 1]) for number in range(first, last + 1)]


def display_width(text: str) -> int:
    """Terminal cells taken by `text` once tabs are expanded as the frame shows them."""
    return cell_len(text.expandtabs(TAB_WIDTH))


def caret_span(line: str, origin: Origin, window: Optional[Tuple[int, int]] = None) -> Tuple[int, int]:
    """(cells before the span, cells under it) on the origin's first line as the frame shows it (`window`: the
    characters shown, from `frame_window`; the whole line when None); at least one caret."""
    low, high = window if window is not None else (0, len(line))
    start = max(0, min(origin.column - 1, len(line)))
    end = origin.end_column - 1 if origin.end_line == origin.line else len(line)
    end = max(start, min(end, len(line)))
    start, end = max(low, min(start, high)), max(low, min(end, high))
    lead = len(ELLIPSIS) if low > 0 else 0
    before = lead + display_width(line[low:start])
    under = display_width(line[low:end]) - display_width(line[low:start])
    return before, max(1, under)


def frame_window(origin: Origin, lines: List[Tuple[int, str]]) -> Tuple[int, int]:
    """The characters [first, last) of each frame line shown: all of them, or a window around the span's start
    when a line is too long to read in a terminal."""
    longest = max(len(line) for _, line in lines)
    if longest <= FRAME_WINDOW:
        return 0, longest
    first = max(0, origin.column - 1 - FRAME_LEAD)
    return first, first + FRAME_WINDOW


def _shown(line: str, window: Tuple[int, int]) -> str:
    low, high = window
    return (ELLIPSIS if low > 0 and line[:low] else "") + line[low:high] + (ELLIPSIS if len(line) > high else "")


def code_frame(origin: Origin, lines: List[Tuple[int, str]]) -> List[Text]:
    """The quoted `lines` (number, text) with carets under the origin's span on its first line."""
    if not lines:
        return []
    gutter = max(len(str(number)) for number, _ in lines)
    window = frame_window(origin, lines)
    empty = _dim(f"{' ' * gutter} |")
    frame = [empty]
    for number, line in lines:
        row = _dim(f"{number:>{gutter}} | ")
        row.append(printable(_shown(line, window).expandtabs(TAB_WIDTH)))
        frame.append(row)
        if number == origin.line:
            before, under = caret_span(line, origin, window)
            caret = _dim(f"{' ' * gutter} | ")
            caret.append(" " * before + "^" * under, style="bold red")
            frame.append(caret)
    frame.append(empty)
    return frame

"""Byte edits: where they are, whether two of them collide, and what a file looks like after them."""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from trainlint.core import Edit, Origin
from trainlint.readers.source import SourceText


def span(edit: Edit) -> Tuple[int, int]:
    return edit.origin.start_byte, edit.origin.end_byte


def collide(first: Edit, second: Edit) -> bool:
    """Two different edits of one file that cannot both be applied in a well-defined way: their
    replaced ranges intersect, an insertion falls strictly inside the other's range, or both insert
    at the same point (the order of the two insertions would be a guess)."""
    if first.origin.path != second.origin.path or first == second:
        return False
    (a_start, a_end), (b_start, b_end) = span(first), span(second)
    if a_start == a_end and b_start == b_end:
        return a_start == b_start
    if a_start == a_end:
        return b_start < a_start < b_end
    if b_start == b_end:
        return a_start < b_start < a_end
    return a_start < b_end and b_start < a_end


def collides_with_any(edits: Iterable[Edit], accepted: Sequence[Edit]) -> bool:
    return any(collide(edit, other) for edit in edits for other in accepted)


def by_path(edits: Iterable[Edit]) -> Dict[str, List[Edit]]:
    grouped: Dict[str, List[Edit]] = {}
    for edit in edits:
        if edit not in grouped.get(edit.origin.path, []):
            grouped.setdefault(edit.origin.path, []).append(edit)
    return grouped


def merged_insertions(edits: Iterable[Edit]) -> List[Edit]:
    """Several new settings added at one place (flags after the same last argument, offloads at the top of one
    `zero_optimization` block) become one edit, in the plan's order: two insertions at one point would collide."""
    out: List[Edit] = []
    for edit in edits:
        if edit.origin.start_byte == edit.origin.end_byte:
            index = next((i for i, e in enumerate(out) if e.origin == edit.origin), None)
            if index is not None:
                out[index] = Edit(edit.origin, out[index].content + edit.content)
                continue
        out.append(edit)
    return out


def apply_edits(data: bytes, edits: Iterable[Edit]) -> bytes:
    """`data` with every edit applied; edits must not collide. Applied from the end of the file so
    that each edit's offsets still name the bytes it was planned against."""
    ordered = sorted(set(edits), key=lambda e: (e.origin.start_byte, e.origin.end_byte), reverse=True)
    out = data
    for edit in ordered:
        start, end = span(edit)
        if not 0 <= start <= end <= len(data):
            raise ValueError(f"edit {start}..{end} is outside {edit.origin.path} ({len(data)} bytes)")
        out = out[:start] + edit.content.encode("utf-8") + out[end:]
    return out


def line_ending(data: bytes) -> str:
    """The file's line ending: CRLF when most of its lines end that way."""
    crlf = data.count(b"\r\n")
    return "\r\n" if crlf and crlf * 2 >= data.count(b"\n") else "\n"


def origin_of(path: str, data: bytes, start: int, end: int) -> Origin:
    return SourceText(path, data, data.decode("utf-8", errors="replace")).origin(start, end)


def narrowed(path: str, data: bytes, start: int, end: int, new_text: str) -> Edit:
    """The smallest edit that turns data[start:end] into `new_text` (the common head and tail kept),
    so that a rewritten call collides only with edits of the bytes that really change."""
    old = data[start:end]
    new = new_text.encode("utf-8")
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    # Never split a UTF-8 character: move the cut back to a character boundary.
    while 0 < head < len(old) and old[head] & 0xC0 == 0x80:
        head -= 1
    while tail > 0 and old[len(old) - tail] & 0xC0 == 0x80:
        tail -= 1
    content = new[head:len(new) - tail].decode("utf-8")
    return Edit(origin_of(path, data, start + head, end - tail), content)


def new_file(path: str, content: str) -> Edit:
    """The edit that creates `path` holding `content`."""
    return Edit(Origin(path, 1, 1, 1, 1, 0, 0), content, creates=True)


def unified_diff(path: str, before: Optional[bytes], after: Optional[bytes]) -> str:
    """The diff from `before` to `after` (None: no file, as git and patch write a creation or a removal)."""
    old = (before or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    new = (after or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    import difflib  # only for a diff that is shown (`fix --diff`, the fix preview)

    lines = []
    fromfile = f"a/{path}" if before is not None else "/dev/null"
    tofile = f"b/{path}" if after is not None else "/dev/null"
    for line in difflib.unified_diff(old, new, fromfile=fromfile, tofile=tofile):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)

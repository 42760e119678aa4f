"""Does a file still parse after its edits? Counted with the parser of its format, in memory, so a
broken result is caught before anything is written."""
from __future__ import annotations

from typing import Optional

from trainlint.fixers.editors import file_kind
from trainlint.formats import FORMATS


def syntax_errors(path: str, data: bytes) -> int:
    """How many syntax errors the file's parser reports (0 for a clean file)."""
    return FORMATS[file_kind(path)].syntax_errors(data)


def broken_by_edits(path: str, before: bytes, after: bytes) -> Optional[str]:
    """Why the edited file no longer parses, or None when it parses at least as well as before."""
    try:
        old, new = syntax_errors(path, before), syntax_errors(path, after)
    except Exception as error:  # a parser crash must not become a silent write
        return f"{path} could not be re-parsed ({type(error).__name__}: {error})"
    if new > old:
        return f"{path} would no longer parse ({kind_name(path)}: {new} syntax error(s), {old} before)"
    return None


def kind_name(path: str) -> str:
    return FORMATS[file_kind(path)].name

"""What a YAML file's text alone rules out, before anyone parses it.

A scan reads the YAML files of a tree only to learn which ones are recipes (a recipe key at the top); most
YAML files of a repository (workflows, lock files, compose files) are not, and parsing them would be the
scan's largest YAML cost. The answer here is sound: "no" means a full read (`trainlint.readers.yaml`) cannot
find the key; "maybe" only means the file has to be read. A file ruled out is not read at all, so a part of
it a full read would leave unread (nesting or value bounds) is not reported either: it cannot hold a setting.
No YAML library is imported here.
"""
from __future__ import annotations

from typing import Iterable


def may_hold_key(data: bytes, keys: Iterable[str]) -> bool:
    """Whether a key spelt exactly like one of `keys` may be in the YAML text `data`. Only a
    double-quoted scalar can spell a key other than as written (escapes such as `\\x5f`); an alias
    repeats a node whose text is in the file."""
    if b"\\" in data and b'"' in data:
        return True
    return any(key.encode("utf-8") in data for key in keys)

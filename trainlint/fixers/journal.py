"""The journal of a multi-file fix, `.trainlint-journal` at the tree root, and recovery from it.

A fix stages every new file beside its target (`.NAME.XXXX.trainlint-new`) and keeps the old one as
a hard link (`.NAME.XXXX.trainlint-old`), then renames the new ones over the targets. The journal
names every one of those files and says how far the fix got:

- `staged`: nothing was renamed yet; recovery deletes the staged files (every target is old).
- `commit`: renaming had begun; recovery renames the staged files that are left (every target is
  new) and deletes the old copies.
- `rollback`: the fix was being undone; recovery puts the old copies back (every target is old).

A file the fix creates has no old copy (its entry's `old` is empty), and is put in place with a hard
link, which never writes over a file that appeared meanwhile; undoing it removes it. A file the fix
removes (undoing a creation) has no staged file (`new` is empty).

The journal is written to a temp file, fsynced and renamed into place, and its folder fsynced, so
it is always one whole state. Every trainlint command recovers a journal it finds before doing
anything else (`recover`), unless a live fix holds the tree's lock."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from trainlint.fixers.lock import TreeBusy, TreeLock

JOURNAL_NAME = ".trainlint-journal"
NEW_SUFFIX = ".trainlint-new"
OLD_SUFFIX = ".trainlint-old"


class JournalState(str, Enum):
    STAGED = "staged"
    COMMIT = "commit"
    ROLLBACK = "rollback"


@dataclass(frozen=True)
class JournalEntry:
    target: str
    new: str  # "": the fix removes the target
    old: str  # "": the fix creates the target


@dataclass(frozen=True)
class Journal:
    state: JournalState
    entries: Tuple[JournalEntry, ...]

    def to_json(self) -> str:
        return json.dumps({"version": 1, "state": self.state.value, "entries": [asdict(e) for e in self.entries]},
                          indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Journal":
        data = json.loads(text)
        return cls(JournalState(data["state"]), tuple(JournalEntry(**entry) for entry in data["entries"]))


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_journal(root: Path, journal: Journal) -> None:
    path = Path(root) / JOURNAL_NAME
    temp = path.with_name(JOURNAL_NAME + ".tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(descriptor, journal.to_json().encode("utf-8"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(temp, path)
    fsync_dir(path.parent)


def remove_journal(root: Path) -> None:
    for name in (JOURNAL_NAME, JOURNAL_NAME + ".tmp"):
        try:
            os.unlink(Path(root) / name)
        except FileNotFoundError:
            pass
    fsync_dir(Path(root))


def read_journal(root: Path) -> Optional[Journal]:
    path = Path(root) / JOURNAL_NAME
    try:
        return Journal.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def _unlink(path: str) -> None:
    if not path:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def commit_entry(entry: JournalEntry) -> None:
    """One target takes its new state: the staged file renamed over it, linked in place of nothing (a file that
    appeared meanwhile raises FileExistsError), or the target removed."""
    if not entry.new:
        _unlink(entry.target)
    elif entry.old:
        os.replace(entry.new, entry.target)
    else:
        _create(entry)


def _create(entry: JournalEntry) -> None:
    try:
        os.link(entry.new, entry.target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: a rename, once more sure nothing is there
        if os.path.lexists(entry.target):
            raise FileExistsError(entry.target) from None
        os.replace(entry.new, entry.target)
        return
    _unlink(entry.new)


def _put_back(entry: JournalEntry) -> None:
    """The target is the old file again (renaming a hard link onto the same file does nothing,
    so the old name is removed afterwards); a created one is removed."""
    if not entry.old:
        _remove_created(entry)
        return
    if os.path.lexists(entry.old):
        os.replace(entry.old, entry.target)
        _unlink(entry.old)
    _unlink(entry.new)


def _remove_created(entry: JournalEntry) -> None:
    """Undo a creation. While the staged file is there, the target is ours only when it is that same file (a
    link not made yet leaves whatever is at the target alone); once it is gone, the link was made."""
    if os.path.lexists(entry.new):
        if os.path.lexists(entry.target) and os.path.samefile(entry.new, entry.target):
            _unlink(entry.target)
        _unlink(entry.new)
    else:
        _unlink(entry.target)


def _finish(entry: JournalEntry) -> None:
    if not entry.new:
        _unlink(entry.target)
    elif os.path.lexists(entry.new):
        if entry.old:
            os.replace(entry.new, entry.target)
        elif not os.path.lexists(entry.target):
            _create(entry)
        else:  # linked before the crash (the same file), or a file appeared there: never written over
            _unlink(entry.new)
    _unlink(entry.old)


def settle(root: Path, journal: Journal) -> str:
    """Complete or undo the journal's fix; returns what was done. The caller holds the lock."""
    entries = journal.entries
    if journal.state == JournalState.COMMIT:
        for entry in entries:
            _finish(entry)
        done = "completed"
    else:
        if journal.state == JournalState.ROLLBACK:
            for entry in entries:
                _put_back(entry)
        else:
            for entry in entries:
                _unlink(entry.new)
                _unlink(entry.old)
        done = "rolled back"
    for folder in {Path(entry.target).parent for entry in entries}:
        fsync_dir(folder)
    remove_journal(root)
    return done


def recover(roots: Sequence[Path]) -> List[str]:
    """Settle the journal an interrupted fix left at any of `roots`; a message per journal settled.
    A journal whose fix is still running (its lock is held) is left to it."""
    messages = []
    for root in roots:
        if not (Path(root) / JOURNAL_NAME).exists():
            continue
        try:
            with TreeLock(root, wait_seconds=0):
                messages.extend(recover_locked(root))
        except TreeBusy:
            continue
    return messages


def recover_locked(root: Path) -> List[str]:
    """`recover` for a caller that already holds the tree's lock."""
    try:
        journal = read_journal(root)
    except (ValueError, KeyError, TypeError):
        remove_journal(root)  # a journal is replaced whole, so a damaged one was never ours
        return [f"removed an unreadable {JOURNAL_NAME} at {root}"]
    if journal is None:
        return []
    done = settle(root, journal)
    files = ", ".join(entry.target for entry in journal.entries)
    return [f"an interrupted trainlint fix was {done} ({files})"]


def recover_paths(paths: Sequence["os.PathLike[str] | str"]) -> List[str]:
    """`recover` for the trees of the paths a command is given (and the working directory); each
    settled journal is also logged as a warning on the `trainlint` logger."""
    from trainlint.inputs import tree_roots  # not the resolution package: a stored check's result needs none of it

    cwd = Path.cwd().resolve()
    roots = list(dict.fromkeys([*tree_roots([Path(p) for p in paths] or [cwd], cwd), cwd]))
    messages = recover(roots)
    if messages:
        import logging  # ~5 ms, and almost every command has no interrupted fix to tell of

        for message in messages:
            logging.getLogger("trainlint").warning("trainlint: %s", message)
    return messages

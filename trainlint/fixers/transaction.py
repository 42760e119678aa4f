"""Writing the files of one fix round all or nothing, across crashes and signals.

    with TreeLock(root):
        Transaction(root, roots).apply([FileChange(path, expected, new), ...])

Before anything is written every target is checked: a regular file inside the tree (a symbolic
link is followed only to a file inside it), writable, owned by the user (or trainlint runs as root
and gives the new file the old owner), and still holding exactly the bytes the fix was planned
against. A file the round creates (`expected` None) must not exist, in a folder of the tree the user
may write; it is never written over one that appears meanwhile. A file the round removes (`new` None,
the undoing of a creation) must still hold what was planned. Then the journal protocol of
`trainlint.fixers.journal` stages and commits. An exception or a signal (see `interruptible`) before
the journal says `commit` rolls everything back.

Fault injection for the crash tests, and for running them by hand: `TRAINLINT_FAULT_AT=rename:N`
ends the process with `os._exit(137)` (no cleanup, as SIGKILL would) just before the N-th rename of a
commit (1-based); `TRAINLINT_FAULT_AT=stage:N` just before staging the N-th file."""
from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from trainlint.fixers.journal import (
    NEW_SUFFIX,
    OLD_SUFFIX,
    Journal,
    JournalEntry,
    JournalState,
    commit_entry,
    fsync_dir,
    remove_journal,
    settle,
    write_journal,
)

FAULT_VARIABLE = "TRAINLINT_FAULT_AT"


class FixRefused(Exception):
    """A target may not be written (read-only, outside the tree, changed since it was read...)."""


class FixInterrupted(BaseException):
    """SIGINT or SIGTERM arrived while a fix was running."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


@dataclass(frozen=True)
class FileChange:
    path: Path  # as the lint named it (may be a symbolic link inside the tree)
    expected: Optional[bytes]  # what the fix was planned against; None: the file does not exist yet
    new: Optional[bytes]  # None: the file is removed


def _fault(step: str, index: int) -> None:
    """The crash-test hook: see the module docstring."""
    if os.environ.get(FAULT_VARIABLE) == f"{step}:{index}":
        os._exit(137)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise FixInterrupted while the block runs (main thread only; elsewhere
    the signals keep their handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise FixInterrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (a rollback must not be interrupted)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    blocked = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _read_target(real: Path, shown: str) -> Tuple[os.stat_result, bytes]:
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(real, flags)
    except OSError as err:
        raise FixRefused(f"{shown} cannot be read: {err.strerror or err}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise FixRefused(f"{shown} is not a regular file; trainlint only rewrites regular files")
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return info, b"".join(chunks)
    finally:
        os.close(descriptor)


@dataclass(frozen=True)
class _Target:
    change: FileChange
    real: Path
    info: Optional[os.stat_result]  # None: a file the change creates


def check_target(change: FileChange, roots: Sequence[Path]) -> _Target:
    """Why `change` may not be written (FixRefused), or the file to write."""
    shown = str(change.path)
    if change.expected is None:
        return _check_new_file(change, roots)
    try:
        real = Path(os.path.realpath(change.path, strict=True))
    except (OSError, RuntimeError):
        raise FixRefused(f"{shown} does not resolve to a file (missing, or a link loop)") from None
    if not _within(real, roots):
        raise FixRefused(f"{shown} leads outside the scanned tree (to {real}); trainlint does not write there")
    info, current = _read_target(real, shown)
    if current != change.expected:
        raise FixRefused(f"{shown} changed since trainlint read it")
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222 or not os.access(real, os.W_OK):
        raise FixRefused(f"{shown} is read-only; trainlint leaves read-only files alone (make it writable to fix it)")
    euid = os.geteuid()
    if euid != 0 and info.st_uid != euid:
        raise FixRefused(f"{shown} belongs to another user (uid {info.st_uid}); rewriting it would make it yours")
    return _Target(change, real, info)


def _check_new_file(change: FileChange, roots: Sequence[Path]) -> _Target:
    """The file a change creates: absent, in a folder of the tree (links followed) the user may write."""
    shown = str(change.path)
    if change.new is None:
        raise FixRefused(f"{shown}: nothing to create")
    try:
        folder = Path(os.path.realpath(change.path.parent, strict=True))
    except (OSError, RuntimeError):
        raise FixRefused(f"the folder of {shown} does not exist") from None
    real = folder / change.path.name
    if not _within(real, roots):
        raise FixRefused(f"{shown} leads outside the scanned tree (to {real}); trainlint does not write there")
    if os.path.lexists(real):
        raise FixRefused(f"{shown} already exists; trainlint does not write over a file it did not plan against")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FixRefused(f"{shown} cannot be created: its folder is read-only")
    return _Target(change, real, None)


def _unchanged(target: _Target) -> bool:
    """The target is as the change was planned against: the same bytes, or still nothing."""
    if target.info is None:
        return not os.path.lexists(target.real)
    return _read_target(target.real, str(target.change.path))[1] == target.change.expected


def _stage_file(target: _Target, new_name: str) -> None:
    info = target.info
    # A new file gets the user's owner and group and the mode the umask leaves; a rewritten one the old file's.
    mode = 0o666 if info is None else 0o600
    descriptor = os.open(new_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.write(descriptor, target.change.new) if target.change.new else None
        if info is None:
            os.fsync(descriptor)
            return
        if os.geteuid() == 0:
            os.fchown(descriptor, info.st_uid, info.st_gid)
        elif info.st_gid != os.getegid():
            with contextlib.suppress(PermissionError):  # not a member: the new file keeps the user's group
                os.fchown(descriptor, -1, info.st_gid)
        os.fchmod(descriptor, stat.S_IMODE(info.st_mode))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _keep_old(target: _Target, old_name: str) -> None:
    """The old file under a second name, for a rollback: a hard link (the same file, owner and mode
    included), or a copy where links are not allowed."""
    assert target.info is not None and target.change.expected is not None  # a created file has no old one
    try:
        os.link(target.real, old_name, follow_symlinks=False)
    except OSError:
        descriptor = os.open(old_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(descriptor, target.change.expected)
            os.fchmod(descriptor, stat.S_IMODE(target.info.st_mode))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _names(real: Path) -> Tuple[str, str]:
    handle, base = tempfile.mkstemp(prefix=f".{real.name}.", suffix="", dir=str(real.parent))
    os.close(handle)
    os.unlink(base)  # only the unique stem is wanted; the staged files are created exclusively
    return base + NEW_SUFFIX, base + OLD_SUFFIX


class Transaction:
    """One round of a fix: the journal and lock live at `root`; only files inside `roots` are
    written. The caller holds the tree's lock."""

    def __init__(self, root: Path, roots: Sequence[Path]) -> None:
        self.root = Path(root)
        self.roots = [Path(os.path.realpath(r)) for r in roots]

    def apply(self, changes: Sequence[FileChange]) -> None:
        targets = [check_target(change, self.roots) for change in changes]
        entries = [_entry(target) for target in targets]
        journal = Journal(JournalState.STAGED, tuple(entries))
        write_journal(self.root, journal)
        committing = False
        try:
            for index, (target, entry) in enumerate(zip(targets, entries), start=1):
                _fault("stage", index)
                if entry.new:
                    _stage_file(target, entry.new)
                if entry.old:
                    _keep_old(target, entry.old)
            for folder in {t.real.parent for t in targets}:
                fsync_dir(folder)
            for target in targets:  # the last look before the point of no return
                if not _unchanged(target):
                    raise FixRefused(f"{target.change.path} changed while the fix was being written")
            with signals_held():
                write_journal(self.root, Journal(JournalState.COMMIT, tuple(entries)))
                committing = True
            for index, entry in enumerate(entries, start=1):
                _fault("rename", index)
                commit_entry(entry)
            with signals_held():
                settle(self.root, Journal(JournalState.COMMIT, tuple(entries)))
        except BaseException:
            with signals_held():
                if committing:
                    write_journal(self.root, Journal(JournalState.ROLLBACK, tuple(entries)))
                    settle(self.root, Journal(JournalState.ROLLBACK, tuple(entries)))
                else:
                    settle(self.root, journal)
            raise


def _entry(target: _Target) -> JournalEntry:
    """The journal's names for one target: no staged file for a removal, no kept one for a creation."""
    new, old = _names(target.real)
    return JournalEntry(str(target.real), new if target.change.new is not None else "",
                        old if target.change.expected is not None else "")


def drop_journal(root: Path) -> None:
    remove_journal(root)


def staged_leftovers(folders: Sequence[Path]) -> List[Path]:
    """Staged or kept files left in `folders` (none should ever be, once a command has run)."""
    return sorted(p for folder in folders for p in Path(folder).rglob("*")
                  if p.name.endswith((NEW_SUFFIX, OLD_SUFFIX)))

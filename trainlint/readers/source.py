"""Reading a file's bytes safely and naming positions inside it."""

from __future__ import annotations

import bisect
import contextlib
import errno
import functools
import os
import stat
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Hashable, Iterator, List, Mapping, Optional, Tuple, TypeVar, Union

from trainlint.core import Diagnostic, DiagnosticKind, Origin
from trainlint.inputs import safe_resolve as resolve_once_uncached
from trainlint.readers.facts import ConfigFile

MAX_BYTES = 8 * 1024 * 1024
T = TypeVar("T")

# Contents that stand in for files on disk while a block runs (`fix --diff` lints its rounds in
# memory). Keyed by resolved path; a context variable, so it is scoped to the block that sets it.
_OVERLAY: ContextVar[Optional[Mapping[Path, bytes]]] = ContextVar("trainlint_reading_overlay", default=None)


@contextlib.contextmanager
def reading_overlay(contents: Mapping[Path, bytes]) -> Iterator[None]:
    """While the block runs, `read_source` of a path in `contents` returns those bytes."""
    token = _OVERLAY.set({safe_resolve(path): data for path, data in contents.items()})
    try:
        yield
    finally:
        _OVERLAY.reset(token)


def overlay_active() -> bool:
    """Whether a `reading_overlay` block with contents is running (files may read otherwise than on disk)."""
    return bool(_OVERLAY.get())


def overlaid_bytes(path: Union[str, Path]) -> Optional[bytes]:
    """The bytes `reading_overlay` gives `path`, or None when it gives none."""
    overlay = _OVERLAY.get()
    return overlay.get(safe_resolve(path)) if overlay else None


@dataclass(frozen=True)
class SourceText:
    path: str  # as it should appear in messages (relative to the working directory when possible)
    data: bytes  # raw bytes: every byte offset indexes this
    text: str  # decoded with utf-8 (errors replaced)

    def origin(self, start_byte: int, end_byte: int) -> Origin:
        """The Origin of a byte span, with 1-based line and column (columns count characters)."""
        start_line, start_col = self._line_col(start_byte)
        end_line, end_col = self._line_col(end_byte)
        return Origin(self.path, start_line, start_col, end_line, end_col, start_byte, end_byte)

    @functools.cached_property
    def _line_starts(self) -> List[int]:
        # Built once per file: a reader asks for an origin per value, and counting the lines before each
        # offset again made that quadratic in the file's size.
        starts = [0]
        position = self.data.find(b"\n")
        while position >= 0:
            starts.append(position + 1)
            position = self.data.find(b"\n", position + 1)
        return starts

    @functools.cached_property
    def _ascii(self) -> bool:
        return self.data.isascii()

    def _line_col(self, offset: int) -> Tuple[int, int]:
        offset = max(0, min(offset, len(self.data)))
        index = bisect.bisect_right(self._line_starts, offset) - 1
        line_start = self._line_starts[index]
        if self._ascii:
            return index + 1, offset - line_start + 1
        return index + 1, len(self.data[line_start:offset].decode("utf-8", errors="replace")) + 1

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


# Where each path leads and how it is shown, while a block that reads the tree runs (one scan asks
# about the same few hundred paths thousands of times). A context variable: scoped to the block that
# sets it, so a later scan sees the links as they are then.
_RESOLVED: ContextVar[Optional[Dict[Tuple[str, str, Hashable], object]]] = ContextVar("trainlint_resolved_paths",
                                                                                  default=None)


@contextlib.contextmanager
def resolving_once() -> Iterator[None]:
    """While the block runs, `safe_resolve`, `display_path` and `named_path` work each path out once
    (per working directory). Nested blocks share the outer one's answers."""
    if _RESOLVED.get() is not None:
        yield
        return
    token = _RESOLVED.set({})
    try:
        yield
    finally:
        _RESOLVED.reset(token)


def _remembered(kind: str, path: Union[str, Path], work: Callable[[Path], T]) -> T:
    memo = _RESOLVED.get()
    try:
        key = (kind, os.getcwd(), os.fspath(path))
    except OSError:  # the working directory is gone: nothing to remember it by
        memo = None
    if memo is None:
        return work(Path(path))
    if key not in memo:
        memo[key] = work(Path(path))
    return memo[key]


def remembered(kind: str, key: Hashable, work: Callable[[], T]) -> T:
    """`work()`, worked out once per `key` (and working directory) while a `resolving_once` block runs, as
    paths are: for answers that depend only on the files of the scan, asked again by every job."""
    memo = _RESOLVED.get()
    try:
        full_key = (kind, os.getcwd(), key)
    except OSError:
        memo = None
    if memo is None:
        return work()
    if full_key not in memo:
        memo[full_key] = work()
    return memo[full_key]  # type: ignore[return-value]


def safe_resolve(path: Union[str, Path]) -> Path:
    """`path` made absolute with its symbolic links followed; a link loop (which makes
    `Path.resolve` raise on some Python versions) or an unreadable folder gives the absolute path
    as written instead of an exception."""
    return _remembered("resolve", path, _resolve_in_folder)


def _resolve_in_folder(path: Path) -> Path:
    """`path` resolved through its folder's remembered resolution. Following links looks at every component of a
    path, and a scan resolves thousands of paths in a few hundred folders: the folder is resolved once, and only the
    last name is looked at here. A last name that is a link (or `.`, `..`, nothing) goes to the full resolution."""
    text = os.fspath(path)
    try:
        absolute = text if os.path.isabs(text) else os.path.join(os.getcwd(), text)
    except OSError:  # the working directory is gone: the full resolution says what can be said
        return resolve_once_uncached(path)
    folder, name = os.path.split(absolute)
    if name in ("", ".", ".."):
        return resolve_once_uncached(path)
    candidate = os.path.join(os.fspath(safe_resolve(folder)), name)
    try:
        is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
    except OSError:  # missing or unreadable: named as written below the resolved folder, as resolve() does
        is_link = False
    return resolve_once_uncached(candidate) if is_link else Path(candidate)


def display_path(path: Union[str, Path]) -> str:
    """Relative to the working directory when below it, else as given."""
    return _remembered("display", path, _display_path)


def _display_path(p: Path) -> str:
    try:
        # The working directory exists and is no loop: safe_resolve gives what resolve() would.
        return str(p.resolve().relative_to(safe_resolve(Path.cwd())))
    except (ValueError, OSError, RuntimeError):
        return str(p)


def named_path(path: Union[str, Path]) -> str:
    """Like `display_path`, but a symbolic link is named as written, not by where it leads (a
    link to /dev/zero is reported as the link in the tree)."""
    return _remembered("named", path, _named_path)


def _named_path(p: Path) -> str:
    if not p.name:
        return display_path(p)
    named = safe_resolve(p.parent) / p.name
    try:
        return str(named.relative_to(safe_resolve(Path.cwd())))
    except ValueError:
        return str(named)


_FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_type_name(mode: int) -> Optional[str]:
    """What a non-regular file is ("a named pipe (FIFO)", ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def not_regular(path: Union[str, Path], shown: str) -> Optional[Diagnostic]:
    """Why `path` is not a regular file trainlint may open (a FIFO would block the scan forever, a
    device such as /dev/zero never ends, a link loop never resolves), or None when it is one.
    A path that does not exist is MISSING_FILE; one `reading_overlay` gives bytes is a regular file
    (`fix --diff` may have created it in memory)."""
    if overlaid_bytes(path) is not None:
        return None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} is a symbolic link to nothing; not read", shown)
        return Diagnostic(DiagnosticKind.MISSING_FILE, f"{shown} does not exist", shown)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} is a symbolic link loop; not read", shown)
        return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"cannot read {shown}: {err.strerror or err}", shown)
    kind = file_type_name(mode)
    if kind is None:
        return None
    return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} is {kind}, not a regular file; not read", shown)


def _read_regular(path: Union[str, Path], shown: str, limit: int) -> Union[bytes, Diagnostic]:
    """At most `limit` bytes of a regular file. Opened without blocking and checked again on the
    open descriptor, so a file swapped for a FIFO or a device after the first check is not read
    either; a file that grows past `limit` while being read is refused, not cut."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        kind = file_type_name(info.st_mode)
        if kind is not None:
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} is {kind}, not a regular file; not read",
                              shown)
        if info.st_size > limit:
            return _too_large(shown, info.st_size, limit)
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(descriptor)
    if len(data) > limit:
        return _too_large(shown, len(data), limit)
    return data


def _too_large(shown: str, size: int, limit: int) -> Diagnostic:
    return Diagnostic(DiagnosticKind.UNREADABLE_FILE,
                      f"{shown} is {size} bytes; files over {limit} bytes are skipped", shown)


def read_source(path: Union[str, Path]) -> Union[SourceText, Diagnostic]:
    """The file's text, or a diagnostic saying why it cannot be read. Never raises, never blocks:
    only regular files up to MAX_BYTES are read."""
    shown = display_path(path)
    refusal = not_regular(path, shown)
    if refusal is not None:
        return refusal
    try:
        data = overlaid_bytes(path)
        if data is None:
            data = _read_regular(path, shown, MAX_BYTES)
    except FileNotFoundError:
        return Diagnostic(DiagnosticKind.MISSING_FILE, f"{shown} does not exist", shown)
    except IsADirectoryError:
        return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} is a directory", shown)
    except OSError as err:
        return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"cannot read {shown}: {err.strerror or err}", shown)
    if isinstance(data, Diagnostic):
        return data
    if b"\x00" in data[:8192]:
        return Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{shown} looks binary (it contains NUL bytes); skipped",
                          shown)
    return SourceText(shown, data, data.decode("utf-8", errors="replace"))


def read_config_file(path: Union[str, Path], format_name: str, parse) -> ConfigFile:
    """Read a config with `parse(SourceText) -> ConfigFile`, never raising: an unreadable file or
    a parser failure becomes a diagnostic on an empty ConfigFile."""
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return ConfigFile(path=source.path, format=format_name, values={}, diagnostics=(source,))
    try:
        return parse(source)
    except Exception as err:  # noqa: BLE001 - the reader contract is "never raise"
        message = f"internal error while reading {source.path} as {format_name.upper()}: {type(err).__name__}: {err}"
        return ConfigFile(
            path=source.path,
            format=format_name,
            values={},
            diagnostics=(Diagnostic("internal-error", message, source.path),),
        )


def node_origin(source: SourceText, node) -> Origin:
    """Origin of a tree-sitter node."""
    return source.origin(node.start_byte, node.end_byte)

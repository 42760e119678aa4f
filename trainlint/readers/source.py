"""Reading a file's bytes safely and naming positions inside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

from trainlint.core import Diagnostic, Origin
from trainlint.readers.facts import ConfigFile

MAX_BYTES = 8 * 1024 * 1024


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

    def _line_col(self, offset: int):
        offset = max(0, min(offset, len(self.data)))
        line_start = self.data.rfind(b"\n", 0, offset) + 1
        line = self.data.count(b"\n", 0, offset) + 1
        column = len(self.data[line_start:offset].decode("utf-8", errors="replace")) + 1
        return line, column

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


def display_path(path: Union[str, Path]) -> str:
    """Relative to the working directory when below it, else as given."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(p)


def read_source(path: Union[str, Path]) -> Union[SourceText, Diagnostic]:
    """The file's text, or a diagnostic saying why it cannot be read. Never raises."""
    shown = display_path(path)
    try:
        size = Path(path).stat().st_size
        if size > MAX_BYTES:
            return Diagnostic(
                "unreadable-file", f"{shown} is {size} bytes; files over {MAX_BYTES} bytes are skipped", shown
            )
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return Diagnostic("missing-file", f"{shown} does not exist", shown)
    except IsADirectoryError:
        return Diagnostic("unreadable-file", f"{shown} is a directory", shown)
    except OSError as err:
        return Diagnostic("unreadable-file", f"cannot read {shown}: {err.strerror or err}", shown)
    if b"\x00" in data[:8192]:
        return Diagnostic("unreadable-file", f"{shown} looks binary (it contains NUL bytes); skipped", shown)
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

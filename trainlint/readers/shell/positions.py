"""Line and column of byte offsets in one file, in logarithmic time.

`SourceText.origin` counts the newlines before an offset each time; a launcher with tens of thousands of
continued flags asks for an origin per flag, which made reading it quadratic. The same Origins, from an index
of line starts built once."""

from __future__ import annotations

import bisect
from typing import Dict, List, Tuple

from trainlint.core import Origin


class LineIndex:
    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.line_starts: List[int] = [0]
        position = data.find(b"\n")
        while position >= 0:
            self.line_starts.append(position + 1)
            position = data.find(b"\n", position + 1)
        self._ascii_lines: Dict[int, bool] = {}

    def origin(self, start_byte: int, end_byte: int) -> Origin:
        """As `SourceText.origin`: 1-based line and column (columns count characters)."""
        start_line, start_column = self.line_column(start_byte)
        end_line, end_column = self.line_column(end_byte)
        return Origin(self.path, start_line, start_column, end_line, end_column, start_byte, end_byte)

    def line_column(self, offset: int) -> Tuple[int, int]:
        offset = max(0, min(offset, len(self.data)))
        index = bisect.bisect_right(self.line_starts, offset) - 1
        line_start = self.line_starts[index]
        if self._is_ascii(index):
            return index + 1, offset - line_start + 1
        return index + 1, len(self.data[line_start:offset].decode("utf-8", errors="replace")) + 1

    def _is_ascii(self, index: int) -> bool:
        if index not in self._ascii_lines:
            end = self.line_starts[index + 1] if index + 1 < len(self.line_starts) else len(self.data)
            self._ascii_lines[index] = self.data[self.line_starts[index] : end].isascii()
        return self._ascii_lines[index]

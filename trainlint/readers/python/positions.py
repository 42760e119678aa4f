"""libcst positions (line, character column) turned into byte offsets of the raw file."""

from __future__ import annotations

import codecs
import re
from typing import Dict, List

from trainlint.readers.source import SourceText


class ByteLocator:
    """Turns libcst (line, character column) positions into byte offsets of the raw file.

    Lines are split like libcst splits them (`\\r\\n`, `\\r`, `\\n`). A line's characters are the
    UTF-8 decoding of its bytes with invalid bytes replaced, as in SourceText, so offsets stay
    exact for non-UTF-8 files too."""

    def __init__(self, source: SourceText, has_bom: bool):
        self._data = source.data
        self._bom_bytes = 3 if has_bom else 0
        self._line_starts = [0] + [match.end() for match in re.finditer(rb"\r\n|\r|\n", source.data)]
        self._char_starts: Dict[int, List[int]] = {}

    def offset(self, line: int, column: int) -> int:
        if line < 1:
            return 0
        if line > len(self._line_starts):
            return len(self._data)
        start = self._line_starts[line - 1] + (self._bom_bytes if line == 1 else 0)
        end = self._line_end(line)
        line_bytes = self._data[start:end]
        if line_bytes.isascii():
            return start + column
        starts = self._char_starts.get(line)
        if starts is None:
            starts = _char_byte_starts(line_bytes)
            self._char_starts[line] = starts
        if column < len(starts):
            return start + starts[column]
        return end + (column - len(starts))  # past the line's text: newline characters are one byte

    def _line_end(self, line: int) -> int:
        if line < len(self._line_starts):
            next_start = self._line_starts[line]
            newline = 2 if self._data[next_start - 2 : next_start] == b"\r\n" else 1
            return next_start - newline
        return len(self._data)


def _char_byte_starts(line_bytes: bytes) -> List[int]:
    """Byte offset where each decoded character of a line starts (replacement characters included)."""
    try:
        text = line_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return _char_byte_starts_lossy(line_bytes)
    starts, offset = [], 0
    for char in text:
        starts.append(offset)
        offset += len(char.encode("utf-8", errors="surrogatepass"))
    return starts


def _char_byte_starts_lossy(line_bytes: bytes) -> List[int]:
    # Feed the bytes one by one to the same decoder SourceText uses: each output character starts
    # where the decoder's pending bytes began (or at the current byte for the second of two).
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    starts: List[int] = []
    for index in range(len(line_bytes)):
        pending = len(decoder.getstate()[0])
        produced = decoder.decode(line_bytes[index : index + 1])
        if produced:
            starts.append(index - pending)
            starts.extend([index] * (len(produced) - 1))
    pending = len(decoder.getstate()[0])
    produced = decoder.decode(b"", final=True)
    if produced:
        starts.append(len(line_bytes) - pending)
        starts.extend([len(line_bytes)] * (len(produced) - 1))
    return starts

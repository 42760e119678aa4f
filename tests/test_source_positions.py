"""Line and column of any byte offset, from the line index a file builds once: the same answer as counting
the lines and decoding the characters before the offset, on any bytes (multi-byte and invalid UTF-8 too)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trainlint.readers.source import SourceText

PIECES = st.sampled_from([b"\n", b"a", b" ", b"\xc3\xa9", b"\xe2\x80\xa8", b"\xff", b"\r\n", b"--bf16 True \\\n"])


def _counted(data: bytes, offset: int):
    offset = max(0, min(offset, len(data)))
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=40).map(b"".join), st.data())
def test_origins_match_counting_every_time(data, draw):
    source = SourceText("f.sh", data, data.decode("utf-8", errors="replace"))
    offsets = draw.draw(st.lists(st.integers(-2, len(data) + 2), min_size=1, max_size=10))
    for offset in offsets:
        origin = source.origin(offset, offset)
        assert (origin.line, origin.column) == _counted(data, offset)

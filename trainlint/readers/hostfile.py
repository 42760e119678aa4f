"""A DeepSpeed hostfile (`deepspeed --hostfile FILE`): one `hostname slots=N` line per machine, `#` starting a
comment, as deepspeed/launcher/runner.py parses it. A line it would reject (no `slots=`, a count that is not a
number, a host named twice) makes the whole file unreadable: DeepSpeed stops before it starts anything."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple, Union

from trainlint.core import Diagnostic, DiagnosticKind, Setting, SourceKind
from trainlint.readers.source import read_source

_HOST_LINE = re.compile(rb"^\s*(?P<host>\S+)\s+slots\s*=\s*(?P<slots>\d+)\s*$")


@dataclass(frozen=True)
class HostFile:
    path: str
    # Each machine's name and its slot count (a Setting at the count's bytes), in the file's order.
    hosts: Tuple[Tuple[str, Setting], ...] = ()
    # Why the file cannot be used (unreadable, or a line DeepSpeed rejects); `hosts` is then empty.
    problem: Optional[Diagnostic] = None


def read_hostfile(path: Union[str, Path]) -> HostFile:
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return HostFile(str(path), problem=source)
    hosts: List[Tuple[str, Setting]] = []
    offset = 0
    for number, line in enumerate(source.data.split(b"\n"), start=1):
        content = line.split(b"#", 1)[0].rstrip(b"\r")
        if content.strip():
            found = _HOST_LINE.match(content)
            host = found.group("host").decode("utf-8", errors="replace") if found else ""
            if found is None or any(host == seen for seen, _ in hosts):
                why = "names a host twice" if found else "is not `hostname slots=N`"
                return HostFile(source.path, problem=Diagnostic(
                    DiagnosticKind.UNMODELLED_CONSTRUCT,
                    f"{source.path}:{number}: the hostfile line {why}; DeepSpeed rejects it",
                    source.path, source.origin(offset, offset + len(line))))
            start, end = offset + found.start("slots"), offset + found.end("slots")
            slots = Setting(int(found.group("slots")), SourceKind.CONFIG_FILE, source.origin(start, end),
                            text=found.group("slots").decode(), note=f"slots of {host}")
            hosts.append((host, slots))
        offset += len(line) + 1
    return HostFile(source.path, tuple(hosts))

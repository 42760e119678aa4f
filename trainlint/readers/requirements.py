"""The version of a package a repository pins: requirements files, `pyproject.toml`, `setup.py`, `setup.cfg`,
a conda `environment.yml` (its `pip:` list or a `pip install` line) and `pip install` lines of a Dockerfile or
shell script."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Union

from trainlint.core import Setting, SourceKind
from trainlint.readers.source import SourceText, read_source

# A quoted or bare requirement string on one line: `transformers==4.51.2`, `"transformers>=4.37,<5"`.
_CANDIDATE = re.compile(r"""(?P<quote>["']?)(?P<req>[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*[=<>!~][^"'#;\n]*)""")
# `pip install a==1 b==2` (a Dockerfile's RUN, a setup script): one requirement per word, each maybe quoted.
_PIP_INSTALL = re.compile(r"\bpip3?\s+install\b")
_WORD = re.compile(r"""(?P<quote>["']?)(?P<req>[^\s"'\\;&|]+)""")


def read_pin(path: Union[str, Path], package: str) -> Optional[Setting]:
    """The exact version (`==X`) pinned for `package`, as a Setting at the version token; None when
    the file does not pin it exactly (a range says nothing certain about what is installed)."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: ~50 ms, only once a pin is looked up

    source = read_source(path)
    if not isinstance(source, SourceText):
        return None
    wanted = package.lower().replace("_", "-")
    offset = 0
    for line in source.data.split(b"\n"):
        text = line.decode("utf-8", errors="replace")
        stripped = text.split("#", 1)[0]
        candidates = _WORD if _PIP_INSTALL.search(stripped) else _CANDIDATE
        for match in candidates.finditer(stripped):
            try:
                requirement = Requirement(match.group("req").strip())
            except InvalidRequirement:
                continue
            if requirement.name.lower().replace("_", "-") != wanted:
                continue
            exact = [spec for spec in requirement.specifier if spec.operator in ("==", "===")]
            if len(exact) != 1 or "*" in exact[0].version:
                return None
            version = exact[0].version
            column = text.find(version, match.start("req"))
            start = offset + len(text[:column].encode("utf-8"))
            return Setting(version, SourceKind.CONFIG_FILE, source.origin(start, start + len(version.encode())),
                           version, note=f"{package} pin", written_as=package)
        offset += len(line) + 1
    return None

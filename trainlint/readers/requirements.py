"""The version of a package a repository pins: requirements files, `pyproject.toml`, `setup.py`, `setup.cfg`,
a conda `environment.yml` (its `pip:` list or a `pip install` line) and `pip install` lines of a Dockerfile or
shell script."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional, Tuple, Union

from trainlint.core import Setting, SourceKind, VersionCeiling
from trainlint.readers.source import SourceText, read_source

if TYPE_CHECKING:  # pragma: no cover
    from packaging.requirements import Requirement
    from packaging.specifiers import Specifier

# A quoted or bare requirement string on one line: `transformers==4.51.2`, `"transformers>=4.37,<5"`.
_CANDIDATE = re.compile(r"""(?P<quote>["']?)(?P<req>[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*[=<>!~][^"'#;\n]*)""")
# `pip install a==1 b==2` (a Dockerfile's RUN, a setup script): one requirement per word, each maybe quoted.
_PIP_INSTALL = re.compile(r"\bpip3?\s+install\b")
_WORD = re.compile(r"""(?P<quote>["']?)(?P<req>[^\s"'\\;&|]+)""")

# (the requirement, as written, the line's text, where the requirement starts in it, the line's byte offset)
_Found = Tuple["Requirement", str, str, int, int]


def _first_requirement(source: SourceText, package: str) -> Optional[_Found]:
    """The first requirement in the file that names `package`."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: ~50 ms, only once a pin is looked up

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
            if requirement.name.lower().replace("_", "-") == wanted:
                return requirement, match.group("req").strip(), text, match.start("req"), offset
        offset += len(line) + 1
    return None


def _requirement_in(path: Union[str, Path], package: str) -> Optional[Tuple[SourceText, _Found]]:
    """The file's text and its first requirement that names `package`, when it has one."""
    source = read_source(path)
    if not isinstance(source, SourceText):
        return None
    found = _first_requirement(source, package)
    return (source, found) if found is not None else None


def _token(source: SourceText, found: _Found, version: str, package: str, note: str) -> Setting:
    """`version` as written in the requirement, as a Setting at that token."""
    _, written, text, start, offset = found
    column = text.find(version, start)
    begin = offset + len(text[:column].encode("utf-8"))
    return Setting(version, SourceKind.CONFIG_FILE, source.origin(begin, begin + len(version.encode())),
                   written, note=note, written_as=package)


def read_pin(path: Union[str, Path], package: str) -> Optional[Setting]:
    """The exact version (`==X`) pinned for `package`, as a Setting at the version token; None when
    the file does not pin it exactly (a range says nothing certain about what is installed)."""
    located = _requirement_in(path, package)
    if located is None:
        return None
    source, found = located
    exact = [spec for spec in found[0].specifier if spec.operator in ("==", "===")]
    if len(exact) != 1 or "*" in exact[0].version:
        return None
    return _token(source, found, exact[0].version, package, f"{package} pin")


def _bump(release: Tuple[int, ...], keep: int) -> str:
    """The first release past every version that starts with `release[:keep]` (4.31 with keep 2 -> 4.32)."""
    kept = list(release[:keep])
    kept[-1] += 1
    return ".".join(str(part) for part in kept)


def _ceilings(spec: "Specifier") -> Iterator[Tuple[str, bool]]:
    """(version, inclusive) bounds one specifier puts above every version it admits (PEP 440)."""
    from packaging.version import InvalidVersion, Version

    operator, written = spec.operator, spec.version
    if operator == "<":
        yield written, False
    elif operator in ("<=", "==", "===") and "*" not in written:
        yield written, True
    elif operator == "==":  # `==4.31.*`: every 4.31 release, none of 4.32
        prefix = written[:-2] if written.endswith(".*") else written
        try:
            release = Version(prefix).release
        except InvalidVersion:
            return
        yield _bump(release, len(release)), False
    elif operator == "~=":  # `~=4.31.0` is `>=4.31.0, ==4.31.*`; `~=4.31` is `>=4.31, ==4.*`
        try:
            release = Version(written).release
        except InvalidVersion:
            return
        if len(release) >= 2:
            yield _bump(release, len(release) - 1), False


def read_ceiling(path: Union[str, Path], package: str) -> Optional[VersionCeiling]:
    """The lowest bound the file's first requirement for `package` puts above every version it admits
    (`<4.36`, `<=4.35.2`, `~=4.31.0`, `==4.31.*`, an exact pin), at the version token that sets it; None
    when the requirement has no upper bound."""
    from packaging.version import InvalidVersion, Version

    located = _requirement_in(path, package)
    if located is None:
        return None
    source, found = located
    best: Optional[Tuple[Version, bool, str, str]] = None
    for spec in found[0].specifier:
        for version, inclusive in _ceilings(spec):
            try:
                parsed = Version(version)
            except InvalidVersion:
                continue
            # Of two equal bounds the exclusive one is the tighter.
            if best is None or (parsed, inclusive) < (best[0], best[1]):
                best = (parsed, inclusive, version, spec.version)
    if best is None:
        return None
    _, inclusive, version, token = best
    return VersionCeiling(version, inclusive, _token(source, found, token, package, f"{package} requirement"))

"""What the readers extract from each file, kept between runs in `.trainlint_cache` (like `.ruff_cache`).

An entry is keyed by the file's bytes, the path it is shown as, the reader and trainlint itself (its
version and the source of its readers), so an edit never meets a stale entry: it looks up another key.
Entries are JSON written by a codec that only builds the reader fact classes listed below: nothing in
the cache is ever executed or unpickled, so a cache folder planted in a checkout (a hostile pull request)
cannot run code. It can at most claim other facts for a file, which whoever controls the checkout can do
anyway (with an inline suppression or the project's configuration). Several processes may share a
folder: every entry is written atomically under a unique temporary name, and an unreadable or corrupt
entry is ignored and written again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Tuple, TypeVar

from trainlint import __version__
from trainlint.atomic_write import write_atomically

DEFAULT_DIR_NAME = ".trainlint_cache"
ENTRY_FORMAT = 1
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by trainlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
T = TypeVar("T")


@lru_cache(maxsize=1)
def _classes() -> Tuple[Mapping[str, type], Mapping[str, type]]:
    """The classes and enums an entry may name (imported when an entry is first read or written: a check
    answered by the result cache reads none, and the readers' modules are slow to import)."""
    from trainlint.core import (
        Diagnostic,
        DiagnosticKind,
        Fallback,
        FileKind,
        Launcher,
        Origin,
        ReplacedBy,
        Setting,
        ShardingEngine,
        SourceKind,
        Unknown,
    )
    from trainlint.knobs import K
    from trainlint.readers import facts

    classes = (Origin, Unknown, Setting, Fallback, Diagnostic, facts.Launch, facts.Flow, facts.ShellScript,
               facts.FieldDefault, facts.DataclassInfo, facts.Keyword, facts.ConfigCall, facts.TrainerCall,
               facts.Override, facts.ImportInfo, facts.PythonModule, facts.ConfigFile)
    enums = (SourceKind, DiagnosticKind, ReplacedBy, FileKind, Launcher, ShardingEngine, K)
    return {cls.__name__: cls for cls in classes}, {cls.__name__: cls for cls in enums}


class CorruptEntry(ValueError):
    """An entry that is not what trainlint writes."""


def encode(value: Any) -> Any:
    """Reader facts as JSON-ready data, every type tagged so `decode` rebuilds them exactly."""
    if isinstance(value, Enum):
        return {"e": type(value).__name__, "v": value.value}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"t": [encode(item) for item in value]}
    if isinstance(value, list):
        return {"l": [encode(item) for item in value]}
    if dataclasses.is_dataclass(value) and type(value).__name__ in _classes()[0]:
        return {"c": type(value).__name__,
                "f": {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, dict) or hasattr(value, "items"):
        return {"d": [[encode(key), encode(item)] for key, item in value.items()]}
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(data: Any) -> Any:
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CorruptEntry("not a tagged value")
    if "t" in data:
        return tuple(decode(item) for item in _list(data["t"]))
    if "l" in data:
        return [decode(item) for item in _list(data["l"])]
    if "d" in data:
        return {decode(pair[0]): decode(pair[1]) for pair in _list(data["d"]) if _is_pair(pair)}
    classes, enums = _classes()
    if "e" in data and data.get("e") in enums:
        return enums[data["e"]](data.get("v"))
    if "c" in data and data.get("c") in classes and isinstance(data.get("f"), dict):
        cls = classes[data["c"]]
        return cls(**{name: decode(item) for name, item in data["f"].items()})
    raise CorruptEntry("unknown tag")


def _list(value: Any) -> list:
    if not isinstance(value, list):
        raise CorruptEntry("not a list")
    return value


def _is_pair(pair: Any) -> bool:
    if not isinstance(pair, list) or len(pair) != 2:
        raise CorruptEntry("not a key/value pair")
    return True


def code_fingerprint() -> str:
    """trainlint's version and the source of the modules whose output is cached: a development
    checkout whose readers change does not read the entries of its former self."""
    package = Path(__file__).parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted([package / "core.py", *(package / "readers").rglob("*.py")]):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class FactCache:
    """Reader facts by content, in `folder` (created on first write, with a `.gitignore` and a CACHEDIR.TAG)."""

    def __init__(self, folder: Path):
        self.folder = Path(os.path.realpath(folder))
        self._fingerprint = code_fingerprint()
        self._entries = self.folder / f"facts-{self._fingerprint}"
        self._prepared = False

    def read(self, kind: str, path: Path, reader: Callable[[Path], T]) -> T:
        """`reader(path)`, or what it returned before for the same bytes at the same shown path."""
        key = self._key(kind, path)
        if key is None:
            return reader(path)
        entry = self._entries / key[:2] / f"{key}.json"
        found = self._load(entry, key)
        if found is not None:
            return found
        value = reader(path)
        self._store(entry, key, value)
        return value

    def lookup(self, kind: str, path: Path) -> Any:
        """The cached facts of `path`, or None."""
        key = self._key(kind, path)
        return None if key is None else self._load(self._entries / key[:2] / f"{key}.json", key)

    def _key(self, kind: str, path: Path) -> Optional[str]:
        from trainlint.readers.source import MAX_BYTES, display_path

        try:
            if path.stat().st_size > MAX_BYTES:
                return None
            data = path.read_bytes()
        except OSError:
            return None  # the reader reports it, uncached
        digest = hashlib.sha256()
        for part in (kind.encode(), display_path(path).encode("utf-8", "surrogateescape"), data):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def _load(self, entry: Path, key: str) -> Any:
        if not self._inside(entry):
            return None
        try:
            document = json.loads(entry.read_bytes())
            if document.get("format") != ENTRY_FORMAT or document.get("key") != key:
                return None
            return decode(document["facts"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None  # missing or corrupt: read the file and write the entry again

    def _store(self, entry: Path, key: str, value: Any) -> None:
        try:
            document = json.dumps({"format": ENTRY_FORMAT, "key": key, "facts": encode(value)},
                                  separators=(",", ":"))
            self._prepare()
            entry.parent.mkdir(parents=True, exist_ok=True)
            if self._inside(entry):
                write_atomically(entry, document.encode())
        except (OSError, TypeError, ValueError, RecursionError):
            pass  # a cache that cannot be written only costs time

    def _inside(self, entry: Path) -> bool:
        """No symbolic link inside the cache folder redirects an entry elsewhere (a planted link)."""
        return os.path.realpath(entry) == str(entry)

    def _prepare(self) -> None:
        if not self._prepared:
            prepare_folder(self.folder)
            self._prepared = True


def prepare_folder(folder: Path) -> None:
    """Create the cache folder, marked as one: a `.gitignore` and a CACHEDIR.TAG (never through a link)."""
    folder.mkdir(parents=True, exist_ok=True)
    markers = ((".gitignore", "# Created by trainlint automatically.\n*\n"), ("CACHEDIR.TAG", CACHEDIR_TAG))
    for name, text in markers:
        marker = folder / name
        if not marker.exists() and os.path.realpath(marker) == str(marker):
            write_atomically(marker, text.encode())


def default_cache_dir(config_path: Optional[str]) -> Path:
    """`.trainlint_cache` beside the project's configuration file, else in the working directory."""
    root = Path(config_path).resolve().parent if config_path else Path.cwd()
    return root / DEFAULT_DIR_NAME


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
from typing import Any, Callable, FrozenSet, Iterable, Mapping, Optional, Tuple, TypeVar

from trainlint import __version__
from trainlint.atomic_write import write_atomically

DEFAULT_DIR_NAME = ".trainlint_cache"
ENTRY_FORMAT = 2
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

    classes = (Origin, Unknown, Setting, Fallback, Diagnostic, facts.Launch, facts.Flow, facts.ScriptCall,
               facts.ShellScript, facts.FieldDefault, facts.DataclassInfo, facts.Keyword, facts.ConfigCall,
               facts.TrainerCall, facts.Override, facts.Gate, facts.Freeze, facts.ImportInfo, facts.StepGate,
               facts.PythonModule,
               facts.ConfigFile)
    enums = (SourceKind, DiagnosticKind, ReplacedBy, FileKind, Launcher, ShardingEngine, K)
    return {cls.__name__: cls for cls in classes}, {cls.__name__: cls for cls in enums}


class CorruptEntry(ValueError):
    """An entry that is not what trainlint writes."""


# Facts a file repeats (every Setting along a chain of shell variables carries its Origins, and the
# same `via` chain comes back for every use of a variable) are written once and named by position.
# Only immutable values are shared: a decoded list or dict, or anything holding one, is never the
# same object twice, and neither is a Diagnostic (the resolution tells them apart by identity).
_SHARED_CLASSES = frozenset({"Origin", "Unknown", "Setting", "Fallback", "Flow", "Keyword", "FieldDefault"})


class _Encoder:
    """Builds the node table of one entry: every list, tuple, dict, enum member and fact is a node
    `[tag, item, ...]`; an item is a scalar or `[index]` of an earlier node."""

    def __init__(self):
        self.nodes: list = []
        self._shareable: list = []
        self._by_content: dict = {}
        self._by_identity: dict = {}  # id -> (node reference, the object kept alive)
        self._fields: dict = {}  # fact class -> its field names, or None for a class the cache does not know

    def value(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)) and not isinstance(value, Enum):
            return value
        known = self._by_identity.get(id(value))
        if known is not None:
            return known[0]
        reference = self._node(value)
        if self._shareable[reference[0]]:
            self._by_identity[id(value)] = (reference, value)
        return reference

    def _node(self, value: Any) -> list:
        if isinstance(value, Enum):
            tag, items = type(value).__name__, [value.value]
        elif isinstance(value, tuple):
            tag, items = "t", self._items(value)
        elif isinstance(value, list):
            tag, items = "l", self._items(value)
        elif self._field_names(type(value)) is not None:
            tag = type(value).__name__
            items = self._items([getattr(value, name) for name in self._fields[type(value)]])
        elif isinstance(value, dict) or hasattr(value, "items"):
            tag, items = "d", self._items([part for pair in value.items() for part in pair])
        else:
            raise TypeError(f"cannot cache a {type(value).__name__}")
        node = [tag, *items]
        shareable = (isinstance(value, Enum) or tag == "t" or tag in _SHARED_CLASSES) and all(
            self._shareable[item[0]] for item in items if type(item) is list)
        if shareable:
            content = (tag, *[item if type(item) is str else _content_key(item) for item in items])
            known = self._by_content.get(content)
            if known is not None:
                return known
        reference = [len(self.nodes)]
        self.nodes.append(node)
        self._shareable.append(shareable)
        if shareable:
            self._by_content[content] = reference
        return reference

    def _items(self, values: Iterable[Any]) -> list:
        # Most items are plain scalars (exact types: an enum member derived from str or int is a node).
        return [item if type(item) in _SCALARS else self.value(item) for item in values]

    def _field_names(self, cls: type) -> Optional[Tuple[str, ...]]:
        if cls not in self._fields:
            known = dataclasses.is_dataclass(cls) and cls.__name__ in _classes()[0]
            self._fields[cls] = tuple(f.name for f in dataclasses.fields(cls)) if known else None
        return self._fields[cls]


_SCALARS = frozenset({type(None), bool, int, float, str})


def _content_key(item: Any) -> Any:
    """A non-string item as its JSON text would tell it apart: by type (True is not 1, nor 1.0 1), a float by its
    repr (-0.0 is not 0.0), a reference by its index. Strings, most items, are their own key."""
    kind = type(item)
    if kind is list:
        return (list, item[0])
    return (kind, repr(item) if kind is float else item)


def encode(value: Any) -> Any:
    """Reader facts as JSON-ready data, every type tagged so `decode` rebuilds them exactly."""
    encoder = _Encoder()
    root = encoder.value(value)
    return {"nodes": encoder.nodes, "root": root}


def decode(data: Any) -> Any:
    """The facts `encode` wrote. Only the fact classes and enums listed above are ever built, each
    node once, from nodes before it (so a planted entry cannot loop)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise CorruptEntry("not an entry")
    builders = _builders()
    built: list = []
    for node in data["nodes"]:
        if type(node) is not list or not node:
            raise CorruptEntry("not a node")
        builder = builders.get(node[0]) if type(node[0]) is str else None
        if builder is None:
            raise CorruptEntry("unknown tag")
        # An item is a JSON scalar or [index] of an earlier node (a later index raises IndexError).
        built.append(builder([built[item[0]] if type(item) is list else item if type(item) is not dict
                              else _not_a_value() for item in node[1:]]))
    root = data.get("root")
    return built[root[0]] if type(root) is list else _scalar(root)


def _scalar(item: Any) -> Any:
    return _not_a_value() if type(item) is dict else item


def _not_a_value() -> Any:
    raise CorruptEntry("an object where a value or a reference belongs")


def _pairs(items: list) -> dict:
    if len(items) % 2:
        raise CorruptEntry("not key/value pairs")
    return dict(zip(items[::2], items[1::2]))


def _fact_builder(cls: type) -> Callable[[list], Any]:
    """Builds a fact from its fields in order. The fact classes are frozen dataclasses without
    __post_init__, so the fields are set directly, as their __init__ would set them."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    new = object.__new__

    def build(items: list) -> Any:
        if len(items) != len(names):
            raise CorruptEntry(f"{cls.__name__} has {len(names)} fields")
        fact = new(cls)
        fact.__dict__.update(zip(names, items))
        return fact

    return build


@lru_cache(maxsize=1)
def _builders() -> Mapping[str, Callable[[list], Any]]:
    classes, enums = _classes()
    builders: dict = {"t": tuple, "l": list, "d": _pairs}
    builders.update({name: _fact_builder(cls) for name, cls in classes.items()})
    builders.update({name: (lambda items, cls=cls: cls(*items)) for name, cls in enums.items()})
    return builders


def fingerprint(files: Iterable[Path], package: Path) -> str:
    """trainlint's version and the name and bytes of each of `files` (inside `package`), in order."""
    digest = hashlib.sha256(__version__.encode())
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def code_stamp(package: Path, suffixes: Tuple[str, ...]) -> str:
    """trainlint's version and the name, size and modification time of every file below `package` with one of
    `suffixes`: what identifies the code a cached result came from, without reading it (a check answered from
    the cache pays for this on every run). Installing another version, or editing a module of a checkout,
    changes it."""
    digest = hashlib.sha256(__version__.encode())
    found = []
    for folder, dirnames, filenames in os.walk(package):
        dirnames[:] = [name for name in dirnames if name != "__pycache__"]
        for name in filenames:
            if name.endswith(suffixes):
                path = os.path.join(folder, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                found.append(f"{os.path.relpath(path, package)}\0{info.st_size}\0{info.st_mtime_ns}")
    for entry in sorted(found):
        digest.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The source of the modules whose output is cached: a development checkout whose readers change
    does not read the entries of its former self. Taken once per process (a worker builds a FactCache
    per file): the code running is the code imported then."""
    package = Path(__file__).parent
    return fingerprint(sorted([package / "core.py", *(package / "readers").rglob("*.py")]), package)[:16]


# The reader kinds whose facts cost far less to load than to read again: a Python file takes 20-40 ms to read and
# under a millisecond to load. A launcher's facts (every setting with the origins it passed through) cost about
# what reading its text costs to write, and save a few milliseconds at each later scan: worth it only for a cache
# that is kept.
SLOW_TO_READ = frozenset({"python"})


class FactCache:
    """Reader facts by content, in `folder` (created on first write, with a `.gitignore` and a CACHEDIR.TAG).
    `stored_kinds`: the reader kinds whose facts are written (None: every kind)."""

    def __init__(self, folder: Path, stored_kinds: Optional[FrozenSet[str]] = None):
        self.folder = Path(os.path.realpath(folder))
        self.stored_kinds = stored_kinds
        self._fingerprint = code_fingerprint()
        self._entries = self.folder / f"facts-{self._fingerprint}"
        self._prepared = False
        # Shard folders seen to be real folders where they are named (no link redirects them).
        self._real_folders: set = set()

    @classmethod
    def for_scan(cls, folder: Path) -> "FactCache":
        """The cache of one scan. A scan that finds no entries of this trainlint's (a first run, a fresh CI
        checkout, another version) writes only those of the files slow to read again: if the cache is not kept,
        writing the rest was wasted; if it is, the next scan writes them."""
        cache = cls(folder)
        try:
            kept = cache._entries.is_dir()
        except OSError:  # a folder that cannot be looked into (permissions): nothing is kept there
            kept = False
        if not kept:
            cache.stored_kinds = SLOW_TO_READ
            cache._mark_kept()
        return cache

    def _mark_kept(self) -> None:
        """Create this trainlint's entries folder, even if the scan writes no entry into it (a tree without a
        Python file): the next scan finds it and stores every kind."""
        try:
            self._prepare()
            self._entries.mkdir(exist_ok=True)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _stores(self, kind: str) -> bool:
        return self.stored_kinds is None or kind in self.stored_kinds

    def read(self, kind: str, path: Path, reader: Callable[[Path], T]) -> T:
        """`reader(path)`, or what it returned before for the same bytes at the same shown path."""
        if not self._stores(kind):
            return reader(path)  # the entries of a kind this scan does not store are the next scan's to write
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
        if not self._stores(kind):
            return None  # the scan began without entries: none of this kind was written since
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
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
            return None  # missing or corrupt: read the file and write the entry again

    def _store(self, entry: Path, key: str, value: Any) -> None:
        try:
            document = json.dumps({"format": ENTRY_FORMAT, "key": key, "facts": encode(value)},
                                  separators=(",", ":"))
            self._prepare()
            entry.parent.mkdir(parents=True, exist_ok=True)
            if self._inside(entry):
                write_atomically(entry, document.encode(), durable=False)
        except (OSError, TypeError, ValueError, RecursionError):
            pass  # a cache that cannot be written only costs time

    def _inside(self, entry: Path) -> bool:
        """No symbolic link inside the cache folder redirects an entry elsewhere (a planted link):
        its shard folder leads where it is named (checked once per FactCache) and the entry itself
        is no link."""
        folder = entry.parent
        if folder not in self._real_folders:
            if os.path.realpath(folder) != str(folder):
                return False
            self._real_folders.add(folder)
        return not os.path.islink(entry)

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
            write_atomically(marker, text.encode(), durable=False)


def default_cache_dir(config_path: Optional[str]) -> Path:
    """`.trainlint_cache` beside the project's configuration file, else in the working directory."""
    root = Path(config_path).resolve().parent if config_path else Path.cwd()
    return root / DEFAULT_DIR_NAME


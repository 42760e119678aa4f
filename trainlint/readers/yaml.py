"""YAML configs (LLaMA-Factory recipes, axolotl, accelerate) flattened to dotted key paths.

Read as the frameworks read them: LLaMA-Factory, axolotl and accelerate load their YAML with PyYAML's
safe loader, so scalars are typed as PyYAML types them (YAML 1.1: `yes` is true, `1e-5` without a dot is
text). PyYAML's libyaml parser (C) composes the document into nodes whose start/end marks are the exact
character span of each token (quotes, block indicators and all), so values get origins without re-scanning
YAML by hand; it is several times faster than a pure-Python parser, and recipes are most of a scan's YAML.
Fixes edit the bytes of a recipe, never re-dump it, so comments and layout stay.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import yaml
from yaml.constructor import SafeConstructor
from yaml.error import MarkedYAMLError, YAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from trainlint.core import Diagnostic, DiagnosticKind, Origin, Setting, SourceKind, Value
from trainlint.formats import yaml as yaml_format
from trainlint.readers.facts import ConfigFile
from trainlint.readers.source import SourceText, read_config_file

FORMAT = "yaml"
# Bounds of a read: deeper nesting, or more values, is reported as not read.
MAX_DEPTH = 100
# Anchors reused inside anchors expand exponentially ("billion laughs"); stop well before that hurts.
MAX_VALUES = 20_000
# A broken file is re-read up to this many times, each time cut before the reported error.
MAX_RECOVERY_ATTEMPTS = 8
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NULL_TAG = "tag:yaml.org,2002:null"
# str.translate table: each undecodable byte (a lone surrogate after surrogateescape) -> U+FFFD.
_SURROGATE_BYTES = {0xDC00 + byte: "\ufffd" for byte in range(0x80, 0x100)}


def read_yaml_config(path: Union[str, Path]) -> ConfigFile:
    """Every scalar of the first YAML document by dotted key path. Never raises: problems with
    the file or its syntax become diagnostics and whatever parsed is kept."""
    return read_config_file(path, FORMAT, _read_yaml_source)


# ---------------------------------------------------------------- positions
class _Positions:
    """Maps the parser's character indices to byte offsets of the raw file.

    The parser is given one character per undecodable byte (U+FFFD), so indices stay aligned with
    bytes even in a file that is not valid UTF-8."""

    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.text = source.data.decode("utf-8", errors="surrogateescape")
        yaml_text = self.text.translate(_SURROGATE_BYTES) if not self.text.isascii() else self.text
        # The text the parser reads, and where it starts in the file: a byte order mark is left out, as
        # libyaml counts no character for it (the Python loader would count one).
        self._shift = 1 if yaml_text.startswith("\ufeff") else 0
        self.yaml_text = yaml_text[self._shift:]
        self._ascii = len(self.text) == len(source.data)
        self._line_chars: List[int] = [0]
        self._line_bytes: List[int] = [0]
        if not self._ascii:
            self._index_lines()

    def _index_lines(self) -> None:
        char_at, byte_at = 0, 0
        for line in self.text.split("\n")[:-1]:
            char_at += len(line) + 1
            byte_at += len(line.encode("utf-8", errors="surrogateescape")) + 1
            self._line_chars.append(char_at)
            self._line_bytes.append(byte_at)

    def byte_offset(self, parser_index: int) -> int:
        """The byte offset in the file of a character index in the parser's text."""
        char_index = max(0, min(parser_index + self._shift, len(self.text)))
        if self._ascii:
            return char_index
        line = bisect.bisect_right(self._line_chars, char_index) - 1
        start = self._line_chars[line]
        within = self.text[start:char_index].encode("utf-8", errors="surrogateescape")
        return self._line_bytes[line] + len(within)

    def origin(self, start_char: int, end_char: int) -> Origin:
        return self.source.origin(self.byte_offset(start_char), self.byte_offset(end_char))

    def node_origin(self, node: Node) -> Origin:
        end = node.end_mark.index
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            # A block scalar's token runs through its final line breaks; the value ends before them.
            end = node.start_mark.index + len(self.yaml_text[node.start_mark.index:end].rstrip())
        return self.origin(node.start_mark.index, end)

    def node_text(self, node: Node) -> str:
        origin = self.node_origin(node)
        return self.source.data[origin.start_byte:origin.end_byte].decode("utf-8", errors="replace")


# ---------------------------------------------------------------- parsing
@dataclass(frozen=True)
class _Parsed:
    document: Optional[Node]
    more_documents: Optional[Node]  # the start of a second document, when there is one
    error: Optional[YAMLError]


def _parse_first_document(text: str) -> _Parsed:
    # One document at a time, so that a broken second document does not hide the first.
    documents = yaml.compose_all(text, Loader=yaml_format.loader())
    first: Optional[Node] = None
    try:
        first = next(documents, None)
        second = next(documents, None) if first is not None else None
    except YAMLError as err:
        return _Parsed(first, None, err)
    return _Parsed(first, second, None)


def _error_index(error: YAMLError) -> Optional[int]:
    """Character index where the error is reported: the problem, else its context."""
    if isinstance(error, ReaderError):
        return error.position
    if isinstance(error, MarkedYAMLError):
        for mark in (error.problem_mark, error.context_mark):
            if mark is not None and getattr(mark, "index", None) is not None:
                return mark.index
    return None


def _error_message(error: YAMLError) -> str:
    if isinstance(error, MarkedYAMLError):
        parts = [error.context, error.problem]
        return "; ".join(part for part in parts if part) or type(error).__name__
    if isinstance(error, ReaderError):
        return f"unacceptable character #x{error.character:04x}" if isinstance(error.character, int) \
            else f"unacceptable character {error.character!r}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _syntax_diagnostic(positions: _Positions, error: YAMLError) -> Diagnostic:
    index = _error_index(error)
    origin = positions.origin(index, index) if index is not None else None
    where = f" at line {origin.line}, column {origin.column}" if origin else ""
    return Diagnostic("syntax-error", f"YAML syntax error{where}: {_error_message(error)}",
                      positions.source.path, origin)


def _recover(text: str, error: YAMLError) -> Tuple[Optional[_Parsed], int]:
    """Re-read the text cut at the start of the line holding the error, so that a broken line
    near the end does not lose every setting above it. Returns the parse and where it was cut."""
    cut = len(text)
    for _ in range(MAX_RECOVERY_ATTEMPTS):
        index = _error_index(error)
        if index is None:
            return None, cut
        # The start of the line holding the error, and never the whole remaining text again.
        new_cut = text.rfind("\n", 0, min(index, cut - 1)) + 1
        if new_cut <= 0 or new_cut >= cut:
            return None, cut
        cut = new_cut
        parsed = _parse_first_document(text[:cut])
        if parsed.error is None:
            return parsed, cut
        error = parsed.error
    return None, cut


def _read_yaml_source(source: SourceText) -> ConfigFile:
    positions = _Positions(source)
    text = positions.yaml_text
    try:
        parsed = _parse_first_document(text)
    except RecursionError:
        # the Python loader composes recursively; only absurd nesting gets here.
        diagnostic = Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{source.path} is nested too deeply to be read",
                                source.path)
        return ConfigFile(path=source.path, format=FORMAT, values={}, diagnostics=(diagnostic,))
    diagnostics: List[Diagnostic] = []
    cut: Optional[int] = None
    if parsed.error is not None:
        diagnostics.append(_syntax_diagnostic(positions, parsed.error))
        if parsed.document is None:
            recovered, cut = _recover(text, parsed.error)
            parsed = recovered if recovered is not None else parsed
    if parsed.more_documents is not None:
        diagnostics.append(Diagnostic(
            "unmodelled-construct", "the file holds more than one YAML document; only the first is read",
            source.path, positions.origin(parsed.more_documents.start_mark.index,
                                          parsed.more_documents.start_mark.index)))
    collector = _Collector(positions, SafeConstructor(), diagnostics, text_end=cut)
    if parsed.document is not None:
        collector.flatten_top(parsed.document)
    return ConfigFile(path=source.path, format=FORMAT, values=dict(collector.values),
                      key_origins=dict(collector.key_origins), diagnostics=tuple(collector.diagnostics))


# ---------------------------------------------------------------- flattening
@dataclass
class _Collector:
    """Mutable only while one file is read; the result is frozen into a ConfigFile."""

    positions: _Positions
    constructor: SafeConstructor
    diagnostics: List[Diagnostic]
    # Set when the text was cut to recover from an error: empty values right at the cut are artefacts.
    text_end: Optional[int] = None
    values: Dict[str, Setting] = field(default_factory=dict)
    key_origins: Dict[str, Origin] = field(default_factory=dict)
    _active: List[int] = field(default_factory=list)
    _stopped: bool = False

    def flatten_top(self, node: Node) -> None:
        if isinstance(node, ScalarNode):
            if node.tag != _NULL_TAG:
                self._note(node, "the top level of the document is a single value, not a mapping")
            return
        if isinstance(node, SequenceNode):
            self._note(node, "the top level of the document is a list; its items are read by index")
        self.flatten(node, "", depth=0)

    def flatten(self, node: Node, path: str, depth: int) -> None:
        if self._stopped or self._refuse(node, depth):
            return
        self._active.append(id(node))
        try:
            if isinstance(node, MappingNode):
                self._flatten_mapping(node, path, depth)
            elif isinstance(node, SequenceNode):
                for index, item in enumerate(node.value):
                    self.flatten(item, _join(path, str(index)), depth + 1)
            elif isinstance(node, ScalarNode):
                self._add_scalar(node, path)
        finally:
            self._active.pop()

    def _flatten_mapping(self, node: MappingNode, prefix: str, depth: int) -> None:
        for key, (key_node, value_node) in self._entries(node, prefix).items():
            path = _join(prefix, key)
            self.key_origins[path] = self.positions.node_origin(key_node)
            self.flatten(value_node, path, depth + 1)

    def _entries(self, node: MappingNode, prefix: str) -> Dict[str, Tuple[Node, Node]]:
        """Own keys (the last of duplicates wins, as the key order of the file says), with keys
        from `<<: *anchor` merges underneath them."""
        own: Dict[str, Tuple[Node, Node]] = {}
        merged: Dict[str, Tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag == _MERGE_TAG:
                for source in _merge_sources(value_node):
                    for key, entry in self._plain_entries(source).items():
                        merged.setdefault(key, entry)
                continue
            key = self._key_text(key_node)
            if key is None:
                continue
            if key in own:
                self._duplicate(key_node, _join(prefix, key))
                del own[key]
            own[key] = (key_node, value_node)
        merged.update(own)
        return merged

    def _plain_entries(self, node: MappingNode) -> Dict[str, Tuple[Node, Node]]:
        if id(node) in self._active:
            return {}
        self._active.append(id(node))
        try:
            return self._entries(node, "")
        finally:
            self._active.pop()

    def _key_text(self, key_node: Node) -> Optional[str]:
        if isinstance(key_node, ScalarNode):
            return str(key_node.value)
        self._note(key_node, "a mapping key that is itself a list or mapping is not read")
        return None

    def _add_scalar(self, node: ScalarNode, path: str) -> None:
        if self._is_recovery_artefact(node):
            return
        if len(self.values) >= MAX_VALUES:
            self._stopped = True
            self._unread(node, f"more than {MAX_VALUES} values (anchors expanding?); the rest are not read")
            return
        self.values[path] = Setting(self._scalar_value(node), SourceKind.CONFIG_FILE,
                                    self.positions.node_origin(node), self.positions.node_text(node), note=path,
                                    written_as=path)

    def _scalar_value(self, node: ScalarNode) -> Value:
        try:
            constructed = self.constructor.construct_object(node, deep=True)
        except Exception:  # noqa: BLE001 - a value PyYAML cannot type is still its text
            self._note(node, f"cannot read {node.value!r} as {node.tag}; kept as text")
            return str(node.value)
        return _plain(constructed, node)

    def _is_recovery_artefact(self, node: ScalarNode) -> bool:
        if self.text_end is None or node.tag != _NULL_TAG or node.start_mark.index != node.end_mark.index:
            return False
        return not self.positions.yaml_text[node.end_mark.index:self.text_end].strip()

    def _refuse(self, node: Node, depth: int) -> bool:
        if id(node) in self._active:
            self._note(node, "a recursive alias is not followed")
            return True
        if depth > MAX_DEPTH:
            self._unread(node, f"nesting deeper than {MAX_DEPTH} levels is not read")
            return True
        return False

    def _duplicate(self, key_node: Node, path: str) -> None:
        origin = self.positions.node_origin(key_node)
        self.diagnostics.append(Diagnostic(
            "duplicate-key", f"key {path!r} is written more than once; the last one, at line {origin.line}, wins",
            self.positions.source.path, origin))

    def _unread(self, node: Node, message: str) -> None:
        """A bound stopped the reading: the settings past it are unknown, which a rule reports."""
        path = self.positions.source.path
        self.diagnostics.append(Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"{path} was not read to the end: {message}",
                                           path, self.positions.node_origin(node)))

    def _note(self, node: Node, message: str) -> None:
        self.diagnostics.append(Diagnostic("unmodelled-construct", message, self.positions.source.path,
                                           self.positions.node_origin(node)))


def _merge_sources(node: Node) -> Iterator[MappingNode]:
    if isinstance(node, MappingNode):
        yield node
    elif isinstance(node, SequenceNode):
        for item in node.value:
            if isinstance(item, MappingNode):
                yield item


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _plain(constructed: object, node: ScalarNode) -> Value:
    """A constructed scalar as a plain value; anything that is not a bool/int/float/str/None (dates,
    binary, tagged scalars) keeps the scalar's text as written."""
    if constructed is None:
        return None
    if isinstance(constructed, bool):
        return constructed
    if isinstance(constructed, int):
        return int(constructed)
    if isinstance(constructed, float):
        return float(constructed)
    if isinstance(constructed, str):
        return str(constructed)
    return str(node.value)

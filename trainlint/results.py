"""What `trainlint check` wrote, kept in `.trainlint_cache` so that a check of an unchanged tree is
answered without reading, resolving or checking anything (as ruff keeps its diagnostics).

An entry is found by everything about the request: trainlint's version and the name, size and
modification time of each file of its code (a changed rule changes results), the effective settings,
the command's options that shape the output, the working directory, the tree's roots and the
environment variables a scan consults. It holds what the scan depended on, checked before the entry
is used: every name in the tree (a new launcher, a `.gitignore` edit), and the state of every path
the scan read or looked for, found or not, inside the tree or not (the entry script a launcher names,
a local checkpoint's config.json, the Hugging Face cache's copy of one). Each file's state is a hash
of its bytes: an edit can never meet a stale result. What is kept is the text the command wrote, for
the format it was asked in: given back, it is byte for byte what the scan would write.

Entries are plain JSON (nothing executed, nothing unpickled: see trainlint.cache). A planted entry can
at most claim another report for a tree, which whoever controls the tree can do anyway. Several
processes may share the folder: entries are written atomically, and an unreadable, truncated or
corrupt entry is ignored and written again.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from trainlint.atomic_write import write_atomically
from trainlint.cache import code_stamp, prepare_folder
from trainlint.inputs import InputLog, folder_state, path_state, tree_digest

RESULT_FORMAT = 1
# What a scan reads from the environment: where the Hugging Face cache is (HOME for `~/.cache`).
CONSULTED_ENVIRONMENT = ("HF_HUB_CACHE", "HF_HOME", "HOME")
_PACKAGE = Path(__file__).parent


@dataclass(frozen=True)
class CheckOutput:
    """What one check wrote: the report (stdout or --output-file), the Markdown summary when one was
    asked for, the internal errors said on stderr, and the exit code before --exit-zero."""

    text: str
    summary: Optional[str]
    errors: Tuple[str, ...]
    exit_code: int


@dataclass(frozen=True)
class ScanInputs:
    """What a scan depended on: the digest of the tree's names and the state of each path it read or
    probed ("path:..." and "folder:..." keys)."""

    tree: str
    states: Mapping[str, str]

    def unchanged(self, tree: str, cache_folder: Path) -> bool:
        return tree == self.tree and all(_state_of(key, cache_folder) == state for key, state in self.states.items())


def _state_of(key: str, cache_folder: Path) -> Optional[str]:
    kind, _, path = key.partition(":")
    if kind == "path":
        return path_state(path)
    if kind == "folder":
        return folder_state(path, leave_out=str(cache_folder))
    return None  # a key this version does not write: never equal


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """trainlint's version and the stamp of every file of its code and packaged data: any change of a rule, a
    reader or a reporter is another key."""
    return code_stamp(_PACKAGE, (".py", ".csv", ".json", ".toml"))


def environment() -> Dict[str, Optional[str]]:
    return {name: os.environ.get(name) for name in CONSULTED_ENVIRONMENT}


class ResultCache:
    """Stored check outputs in `folder` (the fact cache's folder), one entry per request."""

    def __init__(self, folder: Path, request: Mapping[str, Any]):
        self.folder = Path(os.path.realpath(folder))
        described = json.dumps({"code": code_fingerprint(), "cwd": os.getcwd(), "environment": environment(),
                                "request": request}, sort_keys=True, default=str)
        self.key = hashlib.sha256(described.encode("utf-8", "surrogateescape")).hexdigest()
        self.entry = self.folder / f"results-{RESULT_FORMAT}" / self.key[:2] / f"{self.key}.json"

    def inputs(self, tree: str, log: InputLog, extra_paths: Iterable[str] = ()) -> ScanInputs:
        """The state now of what the scan noted (and of `extra_paths`), with the tree's digest from before it."""
        states: Dict[str, str] = {}
        for path in sorted({*log.paths, *(os.path.abspath(p) for p in extra_paths)}):
            states[f"path:{path}"] = path_state(path)
        for folder in sorted(log.folders):
            states[f"folder:{folder}"] = folder_state(folder, leave_out=str(self.folder))
        return ScanInputs(tree, states)

    def tree(self, roots: Iterable[Path]) -> str:
        """The tree's digest now (the cache folder itself left out: the scan writes it)."""
        return tree_digest(roots, leave_out=self.folder)

    def load(self, tree: str) -> Optional[CheckOutput]:
        """The stored output, if every input it was computed from is as it was."""
        if os.path.realpath(self.entry) != str(self.entry):
            return None  # a planted link: not read through
        try:
            document = json.loads(self.entry.read_bytes())
            if document.get("format") != RESULT_FORMAT or document.get("key") != self.key:
                return None
            inputs = ScanInputs(str(document["tree"]), _strings(document["states"]))
            output = _output(document["output"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None  # missing, truncated or corrupt: the scan runs and the entry is written again
        return output if inputs.unchanged(tree, self.folder) else None

    def store(self, inputs: ScanInputs, output: CheckOutput) -> None:
        document = {"format": RESULT_FORMAT, "key": self.key, "tree": inputs.tree, "states": dict(inputs.states),
                    "output": {"text": output.text, "summary": output.summary, "errors": list(output.errors),
                               "exit_code": int(output.exit_code)}}
        try:
            data = json.dumps(document, separators=(",", ":")).encode("utf-8", "surrogateescape")
            prepare_folder(self.folder)
            self.entry.parent.mkdir(parents=True, exist_ok=True)
            if os.path.realpath(self.entry) == str(self.entry):
                write_atomically(self.entry, data, durable=False)
        except (OSError, TypeError, ValueError, UnicodeError):
            pass  # a cache that cannot be written only costs time


def _strings(value: Any) -> Dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError("not a map of states")
    return value


def _output(value: Any) -> CheckOutput:
    text, summary, errors, code = value["text"], value["summary"], value["errors"], value["exit_code"]
    if not isinstance(text, str) or not (summary is None or isinstance(summary, str)):
        raise ValueError("not an output")
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors) or code not in (0, 1, 2):
        raise ValueError("not an output")
    return CheckOutput(text, summary, tuple(errors), code)

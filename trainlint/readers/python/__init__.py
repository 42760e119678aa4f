"""Python entry scripts, read without importing or running them.

libcst parses the text; its position metadata (lines, character columns) is turned into exact byte
offsets of the raw file, so every value keeps the origin of the token it is written in. The reader
collects what decides a training job's settings: argument dataclasses and their defaults, argparse
defaults, the signature of a python-fire function, `HfArgumentParser` wiring, `TrainingArguments(...)`-style
calls, `Trainer(...)` calls (is there an eval dataset?), settings changed in code after parsing, imports and
what runs under `if __name__ == "__main__":`.

Modules, in the order a file goes through them: `loading` (screening, parsing, syntax errors),
`prefilter` (the stdlib parser's view: which statements hold something, at any depth; the functions and
classes that hold nothing reach libcst as `pass`), `lazy_positions`, `positions` and `context` (positions
rendered per statement, byte offsets, scopes, branches), `walk` and `collector` (the one walk, over the
statements that hold something), and the extractors it feeds: `argument_classes`, `argparse_args`, `fire_cli`,
`config_calls`, `eval_data`, `overrides`, `imports` (with `resolve_import`, which the cross-module
resolution uses); `leftover_args` tells whether a script reads what `parse_known_args()` leaves over.
"""

from typing import Any

__all__ = ["read_python", "resolve_import"]


def __getattr__(name: str) -> Any:
    # Lazy re-exports: both modules import libcst (~300 ms), which a scan served from the cache never needs,
    # and importing any submodule (say, for a constant) runs this package first.
    if name == "read_python":
        from trainlint.readers.python.loading import read_python

        return read_python
    if name == "resolve_import":
        from trainlint.readers.python.imports import resolve_import

        return resolve_import
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

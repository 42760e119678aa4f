"""YAML recipes: PyYAML's loader (the one the frameworks read recipes with), `#` comments and syntax
errors. There are no logical lines beyond the physical ones."""
from __future__ import annotations

import io
from typing import List

from trainlint.formats.lines import Comment, LogicalLines, hash_comments

KIND = "yaml"
NAME = "YAML"


def loader() -> type:
    """The loader recipes are read with: PyYAML's safe loader, as axolotl and accelerate use it (and
    LLaMA-Factory through OmegaConf), on libyaml (C) when PyYAML was built with a libyaml that bounds
    nesting (0.2.5 and later: deeper than 1000 levels is a syntax error there); else PyYAML's Python
    loader, whose recursion stops a read that deep."""
    import yaml  # lazy: most scans read no YAML

    try:
        from yaml import _yaml  # type: ignore[attr-defined]
    except ImportError:
        return yaml.SafeLoader
    return yaml.CSafeLoader if tuple(_yaml.get_version()) >= (0, 2, 5) else yaml.SafeLoader


def comments(data: bytes) -> List[Comment]:
    """`#` comments addressed to trainlint, read line by line (YAML's rule: at the start of a line or after
    whitespace)."""
    return hash_comments(data)


def logical_lines(data: bytes) -> LogicalLines:
    return {}


def syntax_errors(data: bytes) -> int:
    """1 when the loader rejects the text (any document of it), else 0."""
    import yaml

    try:
        for _ in yaml.compose_all(io.StringIO(data.decode("utf-8")), Loader=loader()):
            pass
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError):
        return 1
    return 0

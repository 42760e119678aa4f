"""Rules: one module each in this package. Every `Rule` subclass defined here is registered."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Dict, Optional, Tuple

from trainlint.checks.base import CheckContext, Example, Rule

__all__ = ["CheckContext", "Example", "Rule", "all_rules", "rule_by_code"]


@lru_cache(maxsize=1)
def all_rules() -> Tuple[Rule, ...]:
    """One instance of every rule, ordered by code."""
    found: Dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in ("base", "docs") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__:
                found[value.code] = value()
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str) -> Optional[Rule]:
    """The rule with this code (any case), or None."""
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)

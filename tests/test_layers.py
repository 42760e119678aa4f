"""Data flows one way: readers → settings graph → checks and memory → fixers → reporters → CLI.
No module imports from a layer to its right."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "trainlint"

# Layer of each module or package, left to right.
LAYERS = {
    "core": 0, "knobs": 0,
    "readers": 1,
    "graph": 2, "resolution": 2,
    "checks": 3, "memory": 3, "linter": 3, "suppressions": 3, "config": 3,
    "fixers": 4,
    "report": 5, "baseline": 5, "changed": 5,
    "commands": 6, "cli": 6, "__main__": 6, "__init__": 0,
}


def _layer(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "trainlint" or len(parts) == 1:
        return -1
    return LAYERS[parts[1]]


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_to_the_right(path):
    relative = path.relative_to(PACKAGE).with_suffix("")
    own = _layer("trainlint." + ".".join(relative.parts))
    for module, line in _imports(path):
        target = _layer(module)
        assert target <= own, f"{relative}:{line} imports {module} (layer {target} > {own})"

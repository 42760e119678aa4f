"""The prefilter decides which statements libcst reads; every call the collector acts on must pass it,
or a setting written at that call is silently lost (as `deepspeed.add_config_arguments` once was)."""
from __future__ import annotations

import ast
from pathlib import Path

from trainlint.readers.python.prefilter import _dispatched

COLLECTOR = Path(__file__).resolve().parent.parent / "trainlint" / "readers" / "python" / "collector.py"


def _names_the_collector_compares_callee_with():
    tree = ast.parse(COLLECTOR.read_text(encoding="utf-8"))
    visit = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "visit_Call")
    names = set()
    for node in ast.walk(visit):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "callee":
            for comparator in node.comparators:
                for constant in ast.walk(comparator):
                    if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                        names.add(constant.value)
    return names


def test_every_call_name_the_collector_handles_passes_the_prefilter():
    names = _names_the_collector_compares_callee_with()
    assert {"add_argument", "parse_known_args", "get_peft_model"} <= names  # the scan itself works
    assert sorted(name for name in names if not _dispatched(name)) == []


def test_calls_the_collector_recognises_by_pattern_or_owner_pass_the_prefilter():
    for callee in ("convert_linear_layer_to_lora", "add_config_arguments", "initialize", "TrainingArguments",
                   "SFTTrainer", "HfArgumentParser"):
        assert _dispatched(callee), callee

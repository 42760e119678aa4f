"""Inside the functions and blocks libcst reads, the statements that hold nothing reach it as `pass`: the facts must
be those of reading the whole module, and what the extractors look up must stay."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.conftest import read_python_whole
from trainlint.readers.python import read_python
from trainlint.readers.python.narrowing import LOOKED_UP_KEYWORDS
from trainlint.readers.python.prefilter import plan_module

PACKAGE = Path(__file__).resolve().parent.parent / "trainlint" / "readers" / "python"

ENTRY = '''\
"""Fine-tunes a model."""
import argparse
import logging

import deepspeed
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

logger = logging.getLogger(__name__)
TABLE = [
    ("a", 1),
    ("b", 2),
]
metrics = None  # a trainer's keyword value is looked up in the module's scope
if torch.cuda.is_available():
    DEVICE = "cuda"


def make_module(tokenizer, split):
    train = load(split)
    if split:
        return None
    evaluation = None
    return dict(train_dataset=train, eval_dataset=evaluation)


def train():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zero_stage", type=int, default=2)
    cfg = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    for handler in logger.handlers:
        handler.setLevel(logging.INFO)
        logger.info("handler %s", handler)
    model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    if cfg.eval:
        held_out = load("test")
    else:
        held_out = None
    data = {"train_dataset": load("train"), "eval_dataset": held_out}
    print("data"); count = len(data)
    if cfg.zero_stage: model.gradient_checkpointing_enable()
    if cfg.offload:
        model.gradient_checkpointing_disable()
    elif cfg.zero_stage == 3:
        logger.info("zero 3")
    ds_config = get_train_ds_config(stage=cfg.zero_stage, offload=cfg.offload)
    engine, *_ = deepspeed.initialize(model=model, optimizer=None, config=ds_config)
    args = TrainingArguments(output_dir="out", per_device_train_batch_size=4)
    trainer = Trainer(model=model, args=args, compute_metrics=metrics, **data)
    trainer.train()
    logger.info("done")


if __name__ == "__main__":
    logger.info("starting")
    banner = "train"
    train()
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_narrowed_functions_give_the_facts_of_the_whole_module(tmp_path, newline):
    path = tmp_path / "train.py"
    path.write_bytes(ENTRY.replace("\n", newline).encode("utf-8"))
    narrowed = read_python(path)
    assert narrowed == read_python_whole(path)
    (trainer,) = narrowed.trainer_calls
    assert "depending on the branch taken" in trainer.eval_dataset.value.reason  # both bindings of held_out stay
    assert trainer.compute_metrics.value is None
    assert ("deepspeed.initialize", "zero_stage") in {(owner, k.name) for owner, k in narrowed.other_keywords}
    assert narrowed.main_calls == ("logger.info", "train")
    assert narrowed.returned_eval_datasets == ()  # make_module returns twice: which dict it returns is unknown


def test_statements_that_hold_nothing_reach_libcst_as_pass_on_the_same_lines():
    reduced = plan_module(ENTRY).text.split("\n")
    original = ENTRY.split("\n")
    assert len(reduced) == len(original)
    changed = {before.strip(): after for before, after in zip(original, reduced) if before != after}
    for idle in ('"""Fine-tunes a model."""', "TABLE = [", "if torch.cuda.is_available():", "train = load(split)",
                 "logging.basicConfig(level=logging.INFO)", "for handler in logger.handlers:",
                 "with torch.no_grad():", 'logger.info("done")', 'logger.info("zero 3")', 'banner = "train"',
                 "trainer.train()"):
        assert changed[idle].strip() == "pass", idle
    assert changed['("a", 1),'] == changed["handler.setLevel(logging.INFO)"] == ""
    kept = {line for line in original if line not in changed.values()} & set(reduced)
    for needed in (
        "    cfg = parser.parse_args()",  # a parse call: the namespace's names
        "        held_out = load(\"test\")",  # a looked-up binding, in its branch
        "        held_out = None",
        "metrics = None  # a trainer's keyword value is looked up in the module's scope",
        "    data = {\"train_dataset\": load(\"train\"), \"eval_dataset\": held_out}",
        "    ds_config = get_train_ds_config(stage=cfg.zero_stage, offload=cfg.offload)",
        "    if split:",  # returns stay, with the branches around them
        "        return None",
        "    evaluation = None",  # looked up from the returned dict
        "    print(\"data\"); count = len(data)",  # shares its line
        "    if cfg.zero_stage: model.gradient_checkpointing_enable()",
        "    elif cfg.zero_stage == 3:",  # an elif stays with its if
        "    logger.info(\"starting\")",  # a call under the main guard
        "logger = logging.getLogger(__name__)",  # a call at the top level
    ):
        assert needed in kept, needed


def test_lines_shared_with_other_code_stay_as_written():
    text = textwrap.dedent('''\
        from transformers import Trainer

        def main():
            x = 1; y = 2
            if x: y = 3; Trainer(model=y)
            z = [
                1, 2]; w = 4
            Trainer(model=None)
        ''')
    assert plan_module(text).text == text


def _functions_calling(attribute: str):
    """(module, function) pairs of the package that call `.attribute(...)`."""
    found = set()
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr == attribute:
                        found.add((path.stem, function.name))
    return found


def test_the_scope_lookups_are_those_the_narrowing_keeps_bindings_for():
    # A new caller of a scope lookup may look up a name the narrowing hands libcst as `pass`: review narrowing.py.
    assert _functions_calling("assignments") == {
        ("values", "resolve_in_scope"), ("eval_data", "splat_eval_dataset"), ("deepspeed_calls", "_builder_call"),
        # LoraConfig's `modules_to_save=name` (kept through LOOKED_UP_KEYWORDS), the names its `if` tests (kept as
        # the test of a branch that binds a kept name) and the methods called on it (kept as bindings)
        ("adapters", "_local"), ("adapters", "_term"),
        # a knob keyword's bare name (`per_device_train_batch_size=MICRO_BATCH_SIZE`, kept through names_a_knob), and
        # the name a kept `A = B` binds from (kept as that binding's lookup)
        ("values", "bound_value"),
        # whether a function (python-fire's, or one the entry calls with constants) rebinds the parameter a kept
        # knob keyword reads (`micro_batch_size`, `attn_implementation`): the rebinding binds a name that statement
        # looks up, and is kept
        ("values", "_parameter_owner"),
        # whether a cast's receiver is bound to a loaded model: `from_pretrained` calls are kept as dispatched calls
        ("overrides", "dtype_cast"),
    }
    assert "modules_to_save" in LOOKED_UP_KEYWORDS
    assert _functions_calling("resolve_in_scope") == {("values", "optional_value"), ("eval_data", "dict_eval_dataset")}
    assert _functions_calling("optional_value") == {("eval_data", "trainer_call")}
    eval_data = ast.parse((PACKAGE / "eval_data.py").read_text(encoding="utf-8"))
    trainer_call = next(n for n in ast.walk(eval_data) if isinstance(n, ast.FunctionDef) and n.name == "trainer_call")
    optional = {
        test.left.value
        for test in ast.walk(trainer_call)
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Constant) and isinstance(test.ops[0], ast.In)
    }
    from trainlint.readers.python.deepspeed_calls import _CONFIG_KEYWORDS

    assert optional == {"eval_dataset", "compute_metrics", "preprocess_logits_for_metrics"}
    assert optional | set(_CONFIG_KEYWORDS) <= LOOKED_UP_KEYWORDS


def test_statements_nested_too_deep_for_a_walk_stay_for_it_to_say_so():
    chain = "x = " + "+".join(["1"] * 300)
    pieces = "y = (" + " ".join(['"a"'] * 300) + ")"
    table = "NAMES = [\n" + "".join(f'    "{n}",\n' for n in range(300)) + "]"
    text = "\n".join([chain, pieces, table, ""])
    reduced = plan_module(text).text.split("\n")
    assert reduced[:2] == [chain, pieces]
    assert reduced[2] == "pass"  # long, but shallow

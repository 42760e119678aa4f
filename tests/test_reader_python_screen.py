"""The prefilter narrows what libcst reads (idle functions and classes reduced to `pass`, idle statements not
walked, positions rendered one statement at a time): the facts must be those of reading the whole module."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tests.conftest import read_python_whole
from trainlint.readers.python import read_python
from trainlint.readers.python.lazy_positions import CountingCodegenState
from trainlint.readers.python.prefilter import plan_module

ENTRY = '''\
import argparse
from dataclasses import dataclass, field

import torch
from transformers import Trainer, TrainingArguments


class Helper:  # holds nothing: reduced
    def scale(self, x):
        return x * 2


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="facebook/opt-125m")
    lora_r: int = 8


def make_data(tokenizer):  # builds the eval dict the trainer splats
    eval_dataset = None
    return dict(train_dataset=[1], eval_dataset=eval_dataset)


def idle(x):
    if x:
        return [y for y in range(x)]
    return None


def train():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()

    def nested_idle():
        return 3

    if args.lr > 0:
        x = 1; y = idle(2)
    elif args.lr < -1:
        args.gradient_checkpointing = True
    else:
        print("nothing")
    for step in range(3):
        if step == 2:
            args.per_device_train_batch_size = 4
    try:
        model = torch.nn.Linear(2, 2)
    except ValueError:
        model.gradient_checkpointing_enable()
    training_args = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=args.batch,
        learning_rate=(3e-4),
        bf16=True,
    )
    data = make_data(None)
    trainer = Trainer(model=model, args=training_args, **data)
    if True: trainer.train()


if __name__ == "__main__":
    train()
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_narrowed_reading_gives_the_facts_of_the_whole_module(tmp_path, newline):
    path = tmp_path / "train.py"
    path.write_bytes(ENTRY.replace("\n", newline).encode("utf-8"))
    narrowed = read_python(path)
    assert narrowed == read_python_whole(path)
    assert [field.name for field in narrowed.argparse_args] == ["lr"]
    overridden = {override.name for override in narrowed.overrides}
    assert overridden >= {"gradient_checkpointing", "per_device_train_batch_size"}
    assert narrowed.main_calls == ("train",)


def test_idle_functions_and_classes_reach_libcst_as_pass_on_the_same_lines():
    plan = plan_module(ENTRY)
    reduced = plan.text.split("\n")
    original = ENTRY.split("\n")
    assert len(reduced) == len(original)
    assert reduced[original.index("class Helper:  # holds nothing: reduced")] == "pass"
    assert reduced[original.index("def idle(x):")] == "pass"
    assert reduced[original.index("    def nested_idle():")] == "    pass"
    kept = [line for line in original if line.startswith(("@dataclass", "def make_data", "def train"))]
    assert all(line in reduced for line in kept)  # settings, the eval builder and the entry point stay
    assert "    parser.add_argument(\"--lr\", type=float, default=1e-4)" in reduced


def test_tab_indentation_is_handed_to_libcst_whole():
    # libcst's tokenizer rejects some tab and space mixes Python accepts: it must judge the whole text
    text = "import os\n\ndef f():\n\tif True:\n\t    return 1\n"
    assert plan_module(text).text == text


def test_non_ascii_and_decorated_functions_keep_exact_origins(tmp_path):
    text = textwrap.dedent('''\
        # -*- coding: utf-8 -*-
        import functools
        from transformers import TrainingArguments

        @functools.lru_cache(
            maxsize=None)
        def idle():  # «reduced»
            return "é"

        def main():
            note = "données"
            args = TrainingArguments(output_dir="sortie/é", gradient_accumulation_steps=4)
        ''')
    path = tmp_path / "train.py"
    path.write_text(text, encoding="utf-8")
    narrowed = read_python(path)
    assert narrowed == read_python_whole(path)
    (call,) = narrowed.config_calls
    accumulation = next(k for k in call.keywords if k.name == "gradient_accumulation_steps")
    assert path.read_bytes()[accumulation.setting.origin.start_byte : accumulation.setting.origin.end_byte] == b"4"


def test_statement_rendering_counts_the_positions_libcst_computes_for_the_whole_module():
    text = textwrap.dedent('''\
        @dataclass(
            frozen=True)  # a decorator over lines
        class Arguments:
            """Text with (brackets)
            over lines."""
            lr: float = field(default=(1e-4), metadata={"help": "the rate " "of learning"})

        def main(  # comment
                a, *, b=lambda x: (x + 1) * 2):
            if a and not b:
                x = [i for i in range(3) if i]; y = f"{a!r:>{b}}"
            elif (a):
                pass
            else:
                with open("é") as f, ctx() as g:
                    return a.b[c:d, ...](**e) \\
                        if a else None
        ''')
    module = cst.parse_module(text)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    counted = {}
    line = 1
    for statement in module.body:
        state = CountingCodegenState(module.default_indent, module.default_newline, [], line)
        statement._codegen(state)
        counted.update(state.spans)
        line = state.line
    nodes = [node for node in whole if node is not module]
    assert len(nodes) > 150
    assert {id(node): (r.start.line, r.start.column, r.end.line, r.end.column) for node, r in
            ((node, whole[node]) for node in nodes)} == {id(node): counted[id(node)] for node in nodes}

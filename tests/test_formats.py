"""The format seam: each format says where its comments are, which lines form one logical line, and
whether a text parses."""
from __future__ import annotations

import pytest

from trainlint.formats import FORMATS, FileKind, kind_of

LAUNCHER = b"""#!/bin/bash
# set up
echo "# not a comment" # a comment
deepspeed train.py \\
    --bf16 True \\
    --per_device_train_batch_size 8  # trailing
"""


@pytest.mark.parametrize("path, kind", [
    ("scripts/finetune.sh", FileKind.SHELL), ("run", FileKind.SHELL), ("job.SLURM", FileKind.SHELL),
    ("train.py", FileKind.PYTHON), ("zero3.json", FileKind.JSON), ("recipe.yml", FileKind.YAML),
    ("README.md", None),
])
def test_a_file_name_names_its_format(path, kind):
    assert kind_of(path) == kind


def test_shell_comments_come_from_the_tree_not_from_a_hash_in_quotes():
    texts = [comment.text for comment in FORMATS[FileKind.SHELL].comments(LAUNCHER)]
    assert texts == ["#!/bin/bash", "# set up", "# a comment", "# trailing"]


def test_a_continued_shell_command_is_one_logical_line():
    logical = FORMATS[FileKind.SHELL].logical_lines(LAUNCHER)
    assert logical[4] == logical[6] == (4, 6)
    assert logical[3] == (3, 3)


def test_a_python_statement_across_brackets_is_one_logical_line():
    data = b"args = TrainingArguments(\n    bf16=True,  # note\n)\nx = 1\n"
    python = FORMATS[FileKind.PYTHON]
    assert python.logical_lines(data)[2] == (1, 3)
    assert [(c.text, data[c.start:c.end]) for c in python.comments(data)] == [("# note", b"# note")]


def test_json_comments_skip_slashes_inside_strings():
    data = b'{"url": "http://x", // trainlint: ignore\r\n "a": 1}\n'
    [comment] = FORMATS[FileKind.JSON].comments(data)
    assert comment.text == "// trainlint: ignore"


@pytest.mark.parametrize("kind, clean, broken", [
    (FileKind.SHELL, b"echo hi\n", b"if then fi (\n"),
    (FileKind.PYTHON, b"x = (1,\n 2)\n", b"x = (1,\n"),
    (FileKind.JSON, b'{"a": 1}\n', b'{"a": }\n'),
    (FileKind.YAML, b"a: 1\nb: [2]\n", b"a: [1\nb: 2\n"),
])
def test_each_format_counts_syntax_errors(kind, clean, broken):
    errors = FORMATS[kind].syntax_errors
    assert errors(clean) == 0
    assert errors(broken) >= 1

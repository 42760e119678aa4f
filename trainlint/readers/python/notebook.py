"""Notebook sources saved as `.py` (Databricks' export format: `# Databricks notebook source` on the first line,
cells between `# COMMAND ----------` lines). Their IPython lines run in the notebook, not in Python, which rejects
them: a shell command (`!deepspeed ... \\` and its continuation lines), a line magic (`%pip install ...`) and a
cell magic's whole cell (`%%bash`). They are blanked, every character but the line breaks made a space so every
other position keeps its value, and reported as unmodelled: the rest of the notebook is read as Python."""

from __future__ import annotations

from typing import List, Tuple

NOTEBOOK_HEADER = "# Databricks notebook source"
CELL_SEPARATOR = "# COMMAND ----------"
_SHELL_OR_MAGIC = ("!", "%")


def is_notebook_source(text: str) -> bool:
    return text.startswith(NOTEBOOK_HEADER)


def ipython_lines(text: str) -> List[Tuple[int, int]]:
    """The (first, last) line numbers, from 1, of each IPython command or magic cell of a notebook source."""
    lines = text.split("\n")
    found: List[Tuple[int, int]] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].lstrip()
        if not stripped.startswith(_SHELL_OR_MAGIC):
            index += 1
            continue
        last = index
        if stripped.startswith("%%"):  # a cell magic: the rest of its cell is not Python
            while last + 1 < len(lines) and lines[last + 1].strip() != CELL_SEPARATOR:
                last += 1
        else:
            while lines[last].rstrip("\r").endswith("\\") and last + 1 < len(lines):
                last += 1
        found.append((index + 1, last + 1))
        index = last + 1
    return found


def blank_lines(text: str, spans: List[Tuple[int, int]]) -> str:
    """`text` with the lines of `spans` blanked: each character a space, the line breaks kept."""
    lines = text.split("\n")
    for first, last in spans:
        for number in range(first, last + 1):
            line = lines[number - 1]
            lines[number - 1] = " " * len(line.rstrip("\r")) + ("\r" if line.endswith("\r") else "")
    return "\n".join(lines)

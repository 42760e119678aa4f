"""The shell commands a Markdown document shows (a README's `accelerate launch ... recipe.yaml`), read as a
script: the lines of its shell code blocks keep their place and every other line is blanked with spaces, so each
value's origin is its line, column and byte offset in the document itself.

A repository whose recipes are files of arguments (alignment-handbook, open-r1, SimPO) documents how to start
them in a README, and nowhere else: that command is where the accelerate config (the sharding, the process count)
and the entry script are named."""
from __future__ import annotations

from pathlib import Path
from typing import List, Union

from trainlint.core import Diagnostic
from trainlint.readers.facts import ShellScript
from trainlint.readers.source import SourceText, read_source

# The suffix of the documents read for commands.
DOCUMENT_SUFFIX = ".md"
# The info strings of fenced blocks that hold commands for a shell; a block with none is read too, as READMEs
# often leave it out.
SHELL_INFO = frozenset({"", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession"})
# A prompt a block may put before each command (`$ accelerate launch ...`): blanked, so columns stay the document's.
_PROMPT = b"$ "


def shell_lines(data: bytes) -> bytes:
    """`data` with only the content lines of its shell code blocks kept, each in place; every other line is spaces
    (its line ending kept), so the result is as long as `data`. Nothing at all for a document without a fenced
    block."""
    if b"```" not in data and b"~~~" not in data:
        return b""  # no fenced block at all: no parse needed
    from markdown_it import MarkdownIt  # lazy: only when a document is read

    lines = data.splitlines(keepends=True)
    kept = [False] * len(lines)
    tokens = MarkdownIt("commonmark").parse(data.decode("utf-8", errors="replace"))
    for token in tokens:
        if token.type != "fence" or token.map is None:
            continue
        info = token.info.strip().split(maxsplit=1)
        if (info[0].lower() if info else "") not in SHELL_INFO:
            continue
        first, end = token.map  # the opening fence's line, and one past the closing fence's (or the document's end)
        end = min(end, len(lines))
        closed = end - 1 > first and lines[end - 1].strip().startswith(token.markup[:1].encode() * 3)
        for index in range(first + 1, end - 1 if closed else end):
            kept[index] = True
    masked: List[bytes] = []
    for line, keep in zip(lines, kept):
        ending = line[len(line.rstrip(b"\r\n")):]
        body = line[:len(line) - len(ending)]
        if not keep:
            # Spaces, not nothing: every byte keeps its offset, which a fix's edit of the document is made at.
            masked.append(b" " * len(body) + ending)
            continue
        stripped = body.lstrip(b" \t")
        if stripped.startswith(_PROMPT):
            indent = len(body) - len(stripped)
            body = body[:indent] + b" " * len(_PROMPT) + stripped[len(_PROMPT):]
        masked.append(body + ending)
    return b"".join(masked)


def read_documented_commands(path: Union[str, Path]) -> ShellScript:
    """The launches the shell code blocks of the Markdown document at `path` show. A block is an example, not a
    script bash runs: what bash would reject in it (a placeholder, a shown output) is no finding, so the reader's
    own problems are dropped."""
    from trainlint.readers.shell.reader import ShellReader  # lazy, as the shell reader is

    source = read_source(path)
    if isinstance(source, Diagnostic):
        return ShellScript(path=source.path, launches=())
    data = shell_lines(source.data)
    if not data.strip():
        return ShellScript(path=source.path, launches=())
    try:
        script = ShellReader(SourceText(source.path, data, data.decode("utf-8", errors="replace"))).read()
    except RecursionError:
        return ShellScript(path=source.path, launches=())
    return ShellScript(path=script.path, launches=script.launches, sbatch=script.sbatch)

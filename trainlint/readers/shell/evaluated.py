"""`eval WORDS...`: bash joins the words with spaces and runs the result as commands of the current shell.

DeepSpeedExamples, VisualGLM and FlagEmbedding build a launch in a string and run it with `eval ${run_cmd}`; LESS
with `eval "$header" "$training_args"`. The text is parsed and read in place, each byte mapped back to where it
was written (most often the assignment's string, so findings and fixes point there), with the current state:
what it assigns stays assigned. A part of the text trainlint cannot tell stands in it as an unquoted variable of
that unknown value, the way a value that is not known reads anywhere else."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Sequence

from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.inner_shells import MAX_SHELL_DEPTH
from trainlint.readers.shell.recovery import parse_script
from trainlint.readers.shell.values import Binding, Ctx, Doc, Node, Span, State, Word

# The name a part of unknown value gets in the evaluated text: no script's variable is named so.
_STAND_IN = "__trainlint_eval_unknown_{}"
# Evals read in one script, in all: a string that evals itself several times over would otherwise take exponential
# time within the nesting limit (a launcher evals once or twice).
MAX_EVALS = 500


class EvalMixin(ReaderBase):
    """Reads the commands `eval` runs."""

    def _eval(self, node: Node, words: Sequence[Word], ctx: Ctx, state: State) -> None:
        if not words:
            return
        if self.evals >= MAX_EVALS:
            if self.evals == MAX_EVALS:  # said once: every later eval is skipped the same way
                self.evals += 1
                self._unmodelled(f"the script runs `eval` more than {MAX_EVALS} times; from here on what it runs is "
                                 "not read", self._node_span(ctx.doc, node))
            return
        self.evals += 1
        if ctx.shell_depth >= MAX_SHELL_DEPTH:
            self._unmodelled(f"`eval` runs inside more than {MAX_SHELL_DEPTH} nested shells or evals; what it "
                             "runs is not read", self._node_span(ctx.doc, node))
            return
        data = bytearray()
        starts: List[int] = []
        ends: List[int] = []
        stand_ins: Dict[str, Binding] = {}

        def add(text: str, span: Span) -> None:
            encoded = text.encode("utf-8")
            data.extend(encoded)
            starts.extend([span[0]] * len(encoded))
            ends.extend([span[1]] * len(encoded))

        quoting = _Quoting()
        for index, word in enumerate(words):
            if index:
                add(" ", (ends[-1], ends[-1]) if ends else (0, 0))  # the space eval joins its words with
                quoting.feed(" ")
            for piece in word.pieces:
                if piece.unknown is None and not piece.positional:
                    for char, span in zip(piece.text, piece.spans):
                        add(char, span)
                    quoting.feed(piece.text)
                    continue
                if quoting.single:
                    # Inside single quotes the stand-in would read as its own name: a known value, and a wrong one.
                    self._unmodelled("the command string of `eval` puts a value trainlint cannot tell inside single "
                                     "quotes; what it runs is not read", self._node_span(ctx.doc, node))
                    return
                name = _STAND_IN.format(len(stand_ins))
                stand_ins[name] = Binding((piece,), piece.via)
                where = piece.unknown_span if piece.unknown_span != (0, 0) else piece.region
                add("${" + name + "}", where or self._node_span(ctx.doc, node))
        if not data.strip():
            return
        parsed = parse_script(bytes(data))
        doc = Doc(parsed.data, parsed.tree.root_node, tuple(starts), tuple(ends))
        self.masked_expansions.update(doc.span(*mask.span) for mask in parsed.masks if mask.what == "expansion")
        self._report_parse_problems(parsed, doc)
        hidden: Dict[str, Optional[Binding]] = {name: state.env.get(name) for name in stand_ins}
        state.env.update(stand_ins)
        try:
            self._exec(doc.root, replace(ctx, doc=doc, shell_depth=ctx.shell_depth + 1), state)
        finally:
            for name, previous in hidden.items():
                if previous is None:
                    state.env.pop(name, None)
                else:
                    state.env[name] = previous


class _Quoting:
    """Where the text built so far leaves bash's quoting: inside single quotes or not (double quotes and
    backslashes decide what a quote character means)."""

    def __init__(self) -> None:
        self.single = False
        self.double = False
        self.escaped = False

    def feed(self, text: str) -> None:
        for char in text:
            if self.escaped:
                self.escaped = False
            elif self.single:
                self.single = char != "'"
            elif char == "\\":
                self.escaped = True
            elif char == '"':
                self.double = not self.double
            elif char == "'" and not self.double:
                self.single = True

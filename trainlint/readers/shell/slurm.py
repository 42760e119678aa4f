"""`#SBATCH` directives at the top of a SLURM batch script."""

from __future__ import annotations

from types import MappingProxyType
from typing import Dict, Mapping

from trainlint.core import Setting, SourceKind, Value
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import parse
from trainlint.readers.shell.values import Ctx, Doc, Span, State, value_of

# A short option and the long option it stands for.
SBATCH_SHORT: Mapping[str, str] = MappingProxyType(
    {
        "-N": "nodes",
        "-n": "ntasks",
        "-c": "cpus-per-task",
        "-G": "gpus",
        "-p": "partition",
        "-t": "time",
        "-J": "job-name",
        "-o": "output",
        "-e": "error",
        "-A": "account",
        "-w": "nodelist",
        "-q": "qos",
        "-x": "exclude",
        "-C": "constraint",
        "-D": "chdir",
        "-a": "array",
        "-d": "dependency",
        "-i": "input",
        "-L": "licenses",
        "-M": "clusters",
        "-S": "core-spec",
    }
)
# Long options that take no value.
SBATCH_FLAGS = frozenset(
    {
        "exclusive",
        "requeue",
        "no-requeue",
        "overcommit",
        "contiguous",
        "hold",
        "parsable",
        "test-only",
        "wait",
        "spread-job",
        "use-min-nodes",
        "oversubscribe",
        "ignore-pbs",
        "verbose",
        "quiet",
        "help",
        "usage",
        "no-kill",
    }
)


class SlurmMixin(ReaderBase):
    """Reads the `#SBATCH` comments before the first command, as sbatch does."""

    def _read_sbatch(self, doc: Doc) -> Dict[str, Setting]:
        found: Dict[str, Setting] = {}
        for child in doc.root.children:
            if child.type != "comment":
                break  # sbatch stops reading directives at the first command
            text = doc.data[child.start_byte : child.end_byte]
            if text.startswith(b"#SBATCH"):
                self._sbatch_line(child.start_byte + len(b"#SBATCH"), child.end_byte, found)
        return found

    def _sbatch_line(self, start: int, end: int, found: Dict[str, Setting]) -> None:
        # A leading `: ` keeps tree-sitter from reading `--nodes=2` as a variable assignment.
        data = b": " + self.source.data[start:end]
        tree = parse(data)
        doc = Doc(
            data,
            tree.root_node,
            (start, start) + tuple(range(start, end)),
            (start, start) + tuple(range(start + 1, end + 1)),
        )
        command = next((c for c in tree.root_node.named_children if c.type == "command"), None)
        if command is None:
            return
        ctx = Ctx(doc)
        nodes = [child for child in command.named_children if child.type not in ("command_name", "comment")]
        tokens = [
            (value_of(self._pieces(n, ctx, State(), False)), doc.span(n.start_byte, n.end_byte)) for n in nodes
        ]
        index = 0
        while index < len(tokens):
            value, span = tokens[index]
            index += 1
            if not isinstance(value, str) or not value.startswith("-"):
                continue
            raw = self._outer_text(span)
            if value.startswith("--"):
                key, equals, _ = value[2:].partition("=")
                if equals:
                    cut = raw.find("=") + 1
                    value_span = (span[0] + len(raw[:cut].encode("utf-8")), span[1])
                    self._sbatch_setting(found, key, value.partition("=")[2], value_span)
                elif key in SBATCH_FLAGS or index >= len(tokens):
                    self._sbatch_setting(found, key, True, span)
                else:
                    self._sbatch_setting(found, key, tokens[index][0], tokens[index][1])
                    index += 1
            elif value[:2] in SBATCH_SHORT:
                key = SBATCH_SHORT[value[:2]]
                if len(value) > 2:
                    self._sbatch_setting(found, key, value[2:].lstrip("="), (span[0] + 2, span[1]))
                elif index < len(tokens):
                    self._sbatch_setting(found, key, tokens[index][0], tokens[index][1])
                    index += 1

    def _sbatch_setting(self, found: Dict[str, Setting], key: str, value: Value, span: Span) -> None:
        found[key] = Setting(value, SourceKind.SBATCH, self._origin(span), self._outer_text(span))

"""Reads a bash launcher: its launches, variables, `#SBATCH` lines and value flows, with exact origins.

The script is parsed with tree-sitter-bash and then interpreted statically, statement by statement,
over an environment of variable bindings. Nothing is executed: a value that needs running something
(`$(nvidia-smi ...)`, `$RANDOM`, a variable from the caller's environment) becomes `Unknown` with a
reason. Every value keeps the byte span it was written at, character by character, so that an unquoted
`$DISTRIBUTED_ARGS` can be split into words that each point inside the assignment's string.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import tree_sitter
import tree_sitter_bash

from trainlint.core import Diagnostic, Origin, Setting, SourceKind, Unknown, Value
from trainlint.readers.facts import Flow, Launch, ShellScript
from trainlint.readers.source import SourceText, read_source

Node = tree_sitter.Node
Span = Tuple[int, int]

IFS_WHITESPACE = " \t\n\r"
MAX_FUNCTION_DEPTH = 8
MAX_SHELL_DEPTH = 4
EXPANSION_TYPES = (
    "simple_expansion",
    "expansion",
    "command_substitution",
    "arithmetic_expansion",
    "process_substitution",
)

# ----------------------------------------------------------------------------- launcher option tables
# Options are looked up after normalising `-` to `_` past the leading dashes (`--nproc-per-node`).
TORCHRUN_VALUE_OPTIONS = frozenset(
    {
        "--nnodes",
        "--nproc_per_node",
        "--node_rank",
        "--master_addr",
        "--master_port",
        "--rdzv_backend",
        "--rdzv_endpoint",
        "--rdzv_id",
        "--rdzv_conf",
        "--max_restarts",
        "--monitor_interval",
        "--start_method",
        "--role",
        "--log_dir",
        "-r",
        "--redirects",
        "-t",
        "--tee",
        "--local_addr",
        "--logs_specs",
        "--local_ranks_filter",
        "--omp_num_threads",
        "--event_log_handler",
        "--numa_binding",
        "--nproc",
    }
)
TORCHRUN_FLAGS = frozenset({"--standalone", "--no_python", "--run_path", "--use_env", "--virtual_local_rank"})
DEEPSPEED_VALUE_OPTIONS = frozenset(
    {
        "-H",
        "--hostfile",
        "-i",
        "--include",
        "-e",
        "--exclude",
        "--num_nodes",
        "--min_elastic_nodes",
        "--max_elastic_nodes",
        "--num_gpus",
        "--num_accelerators",
        "--master_port",
        "--master_addr",
        "--node_rank",
        "--launcher",
        "--launcher_args",
        "--enable_each_rank_log",
        "--autotuning",
        "--ssh_port",
        "--venv_script",
        "--comment",
        "--bind_core_list",
    }
)
DEEPSPEED_FLAGS = frozenset(
    {
        "--no_python",
        "--no_local_rank",
        "--no_ssh_check",
        "--force_multi",
        "--save_pid",
        "--elastic_training",
        "--bind_cores_to_rank",
        "--no_ssh",
    }
)
ACCELERATE_VALUE_OPTIONS = frozenset(
    {
        "--config_file",
        "--num_processes",
        "--num_machines",
        "--machine_rank",
        "--main_process_ip",
        "--main_process_port",
        "--mixed_precision",
        "--gpu_ids",
        "--num_cpu_threads_per_process",
        "--zero_stage",
        "--offload_optimizer_device",
        "--offload_param_device",
        "--offload_optimizer_nvme_path",
        "--offload_param_nvme_path",
        "--gradient_accumulation_steps",
        "--gradient_clipping",
        "--zero3_init_flag",
        "--zero3_save_16bit_model",
        "--rdzv_backend",
        "--rdzv_conf",
        "--max_restarts",
        "--monitor_interval",
        "--main_training_function",
        "--tpu_cluster",
        "--tpu_vm",
        "--env",
        "--mpirun_hostfile",
        "--mpirun_ccl",
    }
)
ACCELERATE_VALUE_PREFIXES = ("--fsdp_", "--deepspeed_", "--megatron_lm_", "--dynamo_", "--tpu_", "--fp8_")
ACCELERATE_FLAGS = frozenset(
    {
        "--cpu",
        "--multi_gpu",
        "--tpu",
        "--use_deepspeed",
        "--use_fsdp",
        "--use_megatron_lm",
        "--use_xpu",
        "--debug",
        "--no_python",
        "--quiet",
        "-q",
        "--same_network",
        "--enable_cpu_affinity",
        "--downcast_bf16",
        "--ipex",
        "--use_cpu",
        "--dynamo_use_fullgraph",
        "--dynamo_use_dynamic",
        "--dynamo_use_regional_compilation",
        "--fsdp_use_orig_params",
        "--tpu_use_cluster",
        "--tpu_use_sudo",
        "--mpirun_ccl",
    }
)
MODULE_FLAGS = {"torchrun": ("-m", "--module"), "deepspeed": ("--module",), "accelerate": ("-m", "--module")}
PYTHON_VALUE_OPTIONS = ("-W", "-X")
# Words that run the rest of the line as a command and do not change what the launch is.
TRANSPARENT_WRAPPERS = frozenset({"nohup", "time", "exec", "command", "builtin", "env"})
# Words whose own options we do not know: the launch is the first launcher word after them.
SEARCHING_WRAPPERS = frozenset(
    {"srun", "mpirun", "mpiexec", "timeout", "numactl", "taskset", "stdbuf", "xargs", "nice", "ionice", "sudo", "chrt"}
)
ISOLATING_WRAPPERS = frozenset({"srun", "mpirun", "mpiexec"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
LAUNCHER_NAMES = frozenset({"deepspeed", "torchrun", "accelerate", "llamafactory-cli"})
PYTHON_MODULE_LAUNCHERS = {
    "torch.distributed.launch": "torch.distributed.launch",
    "torch.distributed.run": "torch.distributed.run",
    "deepspeed.launcher.runner": "deepspeed",
    "accelerate.commands.launch": "accelerate",
}
SBATCH_SHORT = {
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


# ----------------------------------------------------------------------------- internal value model
@dataclass(frozen=True)
class _Piece:
    """A run of characters of an expanded value, each with the outer byte span it was written at.

    `via` names the assignments expanded at this use; `inner_via` the assignments the stored value was
    itself built from (used when a split word points inside the assignment). `region` is the use-site
    span of the expansion the piece came from (None for text written at the use site)."""

    text: str = ""
    spans: Tuple[Span, ...] = ()
    via: Tuple[Setting, ...] = ()
    inner_via: Tuple[Setting, ...] = ()
    unknown: Optional[Unknown] = None
    unknown_span: Span = (0, 0)
    splittable: bool = False
    region: Optional[Span] = None
    unmodelled: bool = False
    positional: bool = False
    field_break: bool = False
    # `$1`, `$2`, `$OPTARG`: a value the script's own command line gives, only when it is given one.
    script_argument: bool = False

    def slice(self, start: int, end: int) -> "_Piece":
        return replace(self, text=self.text[start:end], spans=self.spans[start:end], field_break=False)


@dataclass(frozen=True)
class _Element:
    pieces: Tuple[_Piece, ...]
    setting: Setting


@dataclass(frozen=True)
class _Binding:
    pieces: Tuple[_Piece, ...]
    settings: Tuple[Setting, ...]
    exported: bool = False
    summary: Optional[Setting] = None  # stands for several settings (assigned differently in branches)
    elements: Optional[Tuple[_Element, ...]] = None  # arrays
    hidden: Optional[str] = None  # why the variable is invisible here (not exported into an inner shell)
    is_unset: bool = False

    @property
    def setting(self) -> Optional[Setting]:
        if self.summary is not None:
            return self.summary
        return self.settings[0] if self.settings else None


@dataclass
class _State:
    env: Dict[str, _Binding] = field(default_factory=dict)
    cwd: Optional[str] = None
    cwd_lost: bool = False
    dir_stack: List[Optional[str]] = field(default_factory=list)
    functions: Dict[str, Tuple[Node, "_Doc"]] = field(default_factory=dict)
    sourced: Tuple[str, ...] = ()
    local_frames: List[Dict[str, Optional[_Binding]]] = field(default_factory=list)

    def copy(self) -> "_State":
        return _State(
            dict(self.env),
            self.cwd,
            self.cwd_lost,
            list(self.dir_stack),
            dict(self.functions),
            self.sourced,
            [dict(frame) for frame in self.local_frames],
        )


@dataclass(frozen=True)
class _Doc:
    """Bytes tree-sitter parsed; for an inner shell (`bash -c '...'`) each byte maps to outer bytes."""

    data: bytes
    root: Node
    starts: Optional[Tuple[int, ...]] = None
    ends: Optional[Tuple[int, ...]] = None

    def span(self, start: int, end: int) -> Span:
        if self.starts is None or self.ends is None:
            return start, end
        size = len(self.starts)
        if size == 0:
            return 0, 0
        if start >= end:
            position = self.starts[start] if start < size else self.ends[size - 1]
            return position, position
        return self.starts[min(start, size - 1)], self.ends[min(end, size) - 1]


@dataclass(frozen=True)
class _Ctx:
    doc: _Doc
    wrapper: Optional[str] = None
    function_depth: int = 0
    shell_depth: int = 0
    shell_label: str = ""
    # The options of that wrapper (`srun --ntasks=8 ...`): they say how many processes it starts.
    wrapper_args: Tuple[Setting, ...] = ()


@dataclass(frozen=True)
class _Word:
    setting: Setting
    pieces: Tuple[_Piece, ...]
    nodes: Tuple[Node, ...]
    passthrough: bool = False
    unmodelled: Tuple[str, ...] = ()

    @property
    def value(self) -> Value:
        return self.setting.value

    @property
    def known(self) -> Optional[str]:
        value = self.setting.value
        return value if isinstance(value, str) else None

    @property
    def prefix(self) -> str:
        """The known text before the first unknown part (`--node_rank=` of `--node_rank=$RANK`)."""
        text = ""
        for piece in self.pieces:
            if piece.unknown is not None or piece.positional:
                break
            text += piece.text
        return text


@dataclass(frozen=True)
class _LaunchShape:
    launcher: str
    launcher_args: Tuple[_Word, ...]
    entry: Optional[_Word]  # None: `llamafactory-cli train --flag ...` names no recipe
    entry_is_module: bool
    script_args: Tuple[_Word, ...]


# ----------------------------------------------------------------------------- public API
@functools.lru_cache(maxsize=1)
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_bash.language())


def _parse(data: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(_language()).parse(data)


def read_shell(path: Union[str, Path]) -> ShellScript:
    """Everything trainlint needs from a shell launcher. Never raises."""
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return ShellScript(path=source.path, launches=(), diagnostics=(source,))
    try:
        return _ShellReader(source).read()
    except RecursionError:  # pathological nesting: report it instead of crashing
        diagnostic = Diagnostic("unmodelled-construct", f"{source.path} nests too deeply to be read", source.path)
        return ShellScript(path=source.path, launches=(), diagnostics=(diagnostic,))


# ----------------------------------------------------------------------------- small helpers
def _iter_chars(data: bytes, start: int, end: int) -> Iterator[Tuple[str, int, int]]:
    """Characters of data[start:end] with their byte offsets; invalid UTF-8 bytes become U+FFFD."""
    index = start
    while index < end:
        lead = data[index]
        width = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 1
        chunk = data[index : min(index + width, end)]
        try:
            char = chunk.decode("utf-8")
        except UnicodeDecodeError:
            char, width = "\ufffd", 1
        yield char, index, index + width
        index += width


def _from_script_arguments(binding: _Binding) -> bool:
    """The variable holds exactly a value from the script's command line (`MODEL=$2`, `=$OPTARG`)."""
    return bool(binding.pieces) and all(piece.script_argument or (piece.unknown is None and not piece.text)
                                        for piece in binding.pieces) and any(p.script_argument for p in binding.pieces)


def _is_argument_default(binding: _Binding) -> bool:
    return bool(binding.settings) and all(
        setting.note.startswith("default of $") and "an option of the script" in setting.note
        for setting in binding.settings)


def _binding_key(binding: _Binding) -> Tuple:
    """What a binding was assigned, whatever notes its settings carry."""
    return tuple((setting.origin, setting.text) for setting in binding.settings)


def _unique(settings: Sequence[Setting]) -> Tuple[Setting, ...]:
    out: List[Setting] = []
    for setting in settings:
        if not any(setting is seen for seen in out):
            out.append(setting)
    return tuple(out)


def _basename(word: _Word) -> Optional[str]:
    value = word.known
    return posixpath.basename(value) if value else None


def _is_python(name: Optional[str]) -> bool:
    if not name or not name.startswith("python"):
        return False
    rest = name[len("python") :]
    return all(char.isdigit() or char == "." for char in rest)


def _normalise_option(option: str) -> str:
    stripped = option.lstrip("-")
    return option[: len(option) - len(stripped)] + stripped.replace("-", "_")


def _node_text(doc: _Doc, node: Node) -> str:
    return doc.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _to_int(text: str) -> Optional[int]:
    text = text.strip()
    try:
        if text.startswith(("0x", "0X")):
            return int(text, 16)
        if len(text) > 1 and text.startswith("0") and text.isdigit():
            return int(text, 8)
        return int(text, 10)
    except ValueError:
        return None


def _truncating_divmod(left: int, right: int) -> Tuple[int, int]:
    quotient = abs(left) // abs(right)
    if (left < 0) != (right < 0):
        quotient = -quotient
    return quotient, left - right * quotient


# ----------------------------------------------------------------------------- the reader
class _ShellReader:
    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.diagnostics: List[Diagnostic] = []
        self.flows: List[Flow] = []
        self.launches: List[Launch] = []
        self.called_functions: set = set()
        self.reported_continuations: set = set()

    # ------------------------------------------------------------------ entry
    def read(self) -> ShellScript:
        tree = _parse(self.source.data)
        doc = _Doc(self.source.data, tree.root_node)
        self._report_syntax_errors(doc)
        sbatch = self._read_sbatch(doc)
        state = _State()
        ctx = _Ctx(doc)
        self._exec(doc.root, ctx, state)
        self._run_uncalled_functions(state, ctx)
        return ShellScript(
            path=self.source.path,
            launches=self._ordered_launches(),
            sbatch=sbatch,
            flows=tuple(dict.fromkeys(self.flows)),
            diagnostics=tuple(self.diagnostics),
        )

    def _ordered_launches(self) -> Tuple[Launch, ...]:
        seen: Dict[Origin, Launch] = {}
        for launch in self.launches:
            seen.setdefault(launch.origin, launch)
        return tuple(sorted(seen.values(), key=lambda launch: launch.origin.start_byte))

    def _run_uncalled_functions(self, state: _State, ctx: _Ctx) -> None:
        # A function that is defined but never called (dispatch through "$1") may still hold the launch.
        for name, (body, doc) in list(state.functions.items()):
            if name not in self.called_functions:
                self.called_functions.add(name)
                self._call_body(body, replace(ctx, doc=doc, function_depth=1), state.copy())

    # ------------------------------------------------------------------ origins
    def _origin(self, span: Span) -> Origin:
        return self.source.origin(span[0], span[1])

    def _node_span(self, doc: _Doc, node: Node) -> Span:
        return doc.span(node.start_byte, node.end_byte)

    def _outer_text(self, span: Span) -> str:
        return self.source.data[span[0] : span[1]].decode("utf-8", errors="replace")

    def _literal(self, doc: _Doc, start: int, end: int, mode: str) -> List[_Piece]:
        """Literal text with quote removal. mode: 'word' (unquoted), 'dquote', 'raw'."""
        chars: List[str] = []
        spans: List[Span] = []
        items = list(_iter_chars(doc.data, start, end))
        index = 0
        while index < len(items):
            char, char_start, char_end = items[index]
            if char == "\\" and mode != "raw" and index + 1 < len(items):
                following, _, following_end = items[index + 1]
                if following == "\n":
                    index += 2
                    continue
                if following == "\r" and index + 2 < len(items) and items[index + 2][0] == "\n":
                    index += 3  # CRLF files: treat `\`+CRLF as a continuation, like the parser does
                    continue
                if mode == "word" or following in '$`"\\':
                    chars.append(following)
                    spans.append(doc.span(char_start, following_end))
                    index += 2
                    continue
            chars.append(char)
            spans.append(doc.span(char_start, char_end))
            index += 1
        if not chars:
            return []
        return [_Piece(text="".join(chars), spans=tuple(spans))]

    # ------------------------------------------------------------------ diagnostics
    def _report_syntax_errors(self, doc: _Doc) -> None:
        found: List[Tuple[int, Diagnostic]] = []
        stack = [doc.root]
        while stack:
            node = stack.pop()
            if node.is_missing:
                origin = self._origin(self._node_span(doc, node))
                message = (
                    f"bash syntax error at line {origin.line}, column {origin.column}: missing "
                    f"`{node.type}`; the rest was read as far as it parsed"
                )
                found.append((origin.start_byte, Diagnostic("syntax-error", message, self.source.path, origin)))
            elif node.type == "ERROR":
                origin = self._origin(self._node_span(doc, node))
                message = (
                    f"bash syntax error at line {origin.line}, column {origin.column}: cannot parse "
                    f"`{_shorten(_node_text(doc, node), 40)}`; the rest was read as far as it parsed"
                )
                found.append((origin.start_byte, Diagnostic("syntax-error", message, self.source.path, origin)))
            elif node.has_error:
                stack.extend(node.children)
        self.diagnostics.extend(diagnostic for _, diagnostic in sorted(found, key=lambda item: item[0]))

    def _unmodelled(self, message: str, span: Span) -> None:
        origin = self._origin(span)
        diagnostic = Diagnostic("unmodelled-construct", message, self.source.path, origin)
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)

    # ------------------------------------------------------------------ statements
    def _exec(self, node: Node, ctx: _Ctx, state: _State) -> None:
        kind = node.type
        if kind in ("program", "compound_statement", "do_group", "ERROR"):
            for child in node.named_children:
                self._exec(child, ctx, state)
        elif kind == "comment":
            return
        elif kind == "variable_assignment":
            self._assign(node, ctx, state)
        elif kind == "variable_assignments":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self._assign(child, ctx, state)
        elif kind == "declaration_command":
            self._declare(node, ctx, state)
        elif kind == "unset_command":
            self._unset(node, ctx, state)
        elif kind == "command":
            self._command(node, ctx, state)
        elif kind == "redirected_statement":
            self._redirected(node, ctx, state)
        elif kind == "pipeline":
            for child in node.named_children:
                self._exec(child, ctx, state.copy())
        elif kind == "list":
            self._list(node, ctx, state)
        elif kind == "subshell":
            inner = state.copy()
            for child in node.named_children:
                self._exec(child, ctx, inner)
        elif kind == "negated_command":
            for child in node.named_children:
                self._exec(child, ctx, state)
        elif kind == "if_statement":
            self._if(node, ctx, state)
        elif kind == "case_statement":
            self._case(node, ctx, state)
        elif kind in ("for_statement", "select_statement"):
            self._for(node, ctx, state)
        elif kind in ("while_statement", "c_style_for_statement"):
            self._loop(node, ctx, state)
        elif kind == "function_definition":
            self._define_function(node, ctx, state)
        else:
            self._scan(node, ctx, state)

    def _scan(self, node: Node, ctx: _Ctx, state: _State) -> None:
        """Evaluate every expansion under `node` only to record its flows."""
        if node.type in EXPANSION_TYPES:
            self._pieces(node, ctx, state, in_dquote=True)
            return
        for child in node.children:
            self._scan(child, ctx, state)

    def _exec_branch(self, nodes: Sequence[Node], ctx: _Ctx, state: _State) -> _State:
        branch = state.copy()
        for child in nodes:
            self._exec(child, ctx, branch)
        return branch

    def _redirected(self, node: Node, ctx: _Ctx, state: _State) -> None:
        body = node.child_by_field_name("body")
        for child in node.named_children:
            if body is not None and child.id == body.id:
                self._exec(child, ctx, state)
            else:
                self._scan(child, ctx, state)

    def _list(self, node: Node, ctx: _Ctx, state: _State) -> None:
        operator = None
        for child in node.children:
            if not child.is_named:
                operator = child.type
                continue
            if operator == "||":  # a fallback that may or may not run
                branch = self._exec_branch([child], ctx, state)
                self._adopt(state, self._merge([state, branch], node, ctx))
            else:
                self._exec(child, ctx, state)

    def _if(self, node: Node, ctx: _Ctx, state: _State) -> None:
        conditions, body, clauses = self._split_clause(node)
        for condition in conditions:
            self._exec(condition, ctx, state)
        branches = [self._exec_branch(body, ctx, state)]
        has_else = False
        for clause in clauses:
            if clause.type == "else_clause":
                has_else = True
                branches.append(self._exec_branch(clause.named_children, ctx, state))
            else:
                clause_conditions, clause_body, _ = self._split_clause(clause)
                branch = state.copy()
                for child in list(clause_conditions) + list(clause_body):
                    self._exec(child, ctx, branch)
                branches.append(branch)
        if not has_else:
            branches.append(state)
        self._adopt(state, self._merge(branches, node, ctx))

    @staticmethod
    def _split_clause(node: Node) -> Tuple[List[Node], List[Node], List[Node]]:
        conditions: List[Node] = []
        body: List[Node] = []
        clauses: List[Node] = []
        seen_then = False
        for child in node.children:
            if child.type == "then":
                seen_then = True
            elif child.type in ("elif_clause", "else_clause"):
                clauses.append(child)
            elif child.is_named:
                (body if seen_then else conditions).append(child)
        return conditions, body, clauses

    def _case(self, node: Node, ctx: _Ctx, state: _State) -> None:
        branches: List[_State] = []
        has_default = False
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "value":
                self._scan(child, ctx, state)
            if child.type != "case_item":
                continue
            body = []
            for item_index, part in enumerate(child.children):
                if child.field_name_for_child(item_index) == "value":
                    if _node_text(ctx.doc, part).strip() == "*":
                        has_default = True
                elif part.is_named:
                    body.append(part)
            branches.append(self._exec_branch(body, ctx, state))
        if not has_default:
            branches.append(state)
        self._adopt(state, self._merge(branches, node, ctx))

    def _for(self, node: Node, ctx: _Ctx, state: _State) -> None:
        variable = node.child_by_field_name("variable")
        values = [child for index, child in enumerate(node.children) if node.field_name_for_child(index) == "value"]
        body = node.child_by_field_name("body")
        branch = state.copy()
        if variable is not None:
            words: List[_Word] = []
            for group in self._adjacent_groups(values):
                words.extend(self._words(group, ctx, state, SourceKind.SHELL_VARIABLE))
            name = _node_text(ctx.doc, variable)
            if values:
                span = ctx.doc.span(values[0].start_byte, values[-1].end_byte)
            else:
                span = self._node_span(ctx.doc, variable)
            line = self._origin(span).line
            if len(words) == 1 and isinstance(words[0].value, str):
                pieces = words[0].pieces
                value: Value = words[0].value
            else:
                value = Unknown(f"${name} takes each value of the `for` loop at line {line}")
                pieces = (_Piece(unknown=value, unknown_span=span, region=span),)
            setting = Setting(value, SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span))
            branch.env[name] = _Binding(self._store(pieces, span), (setting,))
        if body is not None:
            self._exec(body, ctx, branch)
        self._adopt(state, self._merge([state, branch], node, ctx))

    def _loop(self, node: Node, ctx: _Ctx, state: _State) -> None:
        body = node.child_by_field_name("body")
        branch = state.copy()
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if field_name == "condition" and child.is_named:
                self._exec(child, ctx, branch)
            elif field_name in ("initializer", "update") and child.is_named:
                self._loop_counter(child, ctx, branch)
        if body is not None:
            self._exec(body, ctx, branch)
        self._adopt(state, self._merge([state, branch], node, ctx))

    def _loop_counter(self, node: Node, ctx: _Ctx, state: _State) -> None:
        target = node.child_by_field_name("name") or (node.named_children[0] if node.named_children else None)
        if target is None or target.type not in ("variable_name", "word"):
            return
        name = _node_text(ctx.doc, target)
        span = self._node_span(ctx.doc, node)
        reason = Unknown(f"${name} is the counter of the loop at line {self._origin(span).line}")
        setting = Setting(reason, SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span))
        state.env[name] = _Binding((_Piece(unknown=reason, unknown_span=span, region=span),), (setting,))

    @staticmethod
    def _adopt(state: _State, merged: _State) -> None:
        state.env, state.cwd, state.cwd_lost = merged.env, merged.cwd, merged.cwd_lost
        state.functions, state.sourced = merged.functions, merged.sourced

    def _merge(self, branches: Sequence[_State], node: Node, ctx: _Ctx) -> _State:
        """The state after one of `branches` ran: a variable they disagree on becomes Unknown."""
        first = branches[0]
        merged = first.copy()
        line = self._origin(self._node_span(ctx.doc, node)).line
        names = dict.fromkeys(name for branch in branches for name in branch.env)
        for name in names:
            bindings = [branch.env.get(name) for branch in branches]
            if all(binding is bindings[0] for binding in bindings):
                continue
            merged.env[name] = self._merged_binding(name, bindings, line)
        cwds = {(branch.cwd, branch.cwd_lost) for branch in branches}
        if len(cwds) > 1:
            merged.cwd, merged.cwd_lost = None, True
        for branch in branches[1:]:
            merged.functions.update(branch.functions)
            merged.sourced = tuple(dict.fromkeys(merged.sourced + branch.sourced))
        return merged

    def _merged_binding(self, name: str, bindings: Sequence[Optional[_Binding]], line: int) -> _Binding:
        kept = self._argument_default(name, bindings, line)
        if kept is not None:
            return kept
        settings = _unique([s for binding in bindings if binding is not None for s in binding.settings])
        described = []
        for setting in settings:
            if setting.origin is not None:
                described.append(f"`{_shorten(setting.text, 30)}` at line {setting.origin.line}")
        if any(binding is None for binding in bindings):
            described.append("the caller's environment")
        if any(binding is not None and binding.is_unset for binding in bindings):
            described.append("unset")
        reason = Unknown(
            f"${name} depends on which branch of the statement at line {line} runs: "
            + " or ".join(dict.fromkeys(described))
        )
        summary = Setting(reason, SourceKind.SHELL_VARIABLE, None, "", via=settings)
        exported = any(binding is not None and binding.exported for binding in bindings)
        return _Binding((_Piece(unknown=reason),), settings, exported, summary)

    def _argument_default(self, name: str, bindings: Sequence[Optional[_Binding]], line: int) -> Optional[_Binding]:
        """An option-parsing loop (`case $1 in -m) MODEL=$2`, `getopts`) replaces a value only when the
        script is given that option; run as written, the value assigned before the loop is the one used,
        like `${MODEL:-default}`. None when the branches disagree on anything else."""
        if any(binding is None or binding.is_unset or binding.elements is not None for binding in bindings):
            return None
        from_arguments = [_from_script_arguments(binding) for binding in bindings]
        written = [binding for binding, argument in zip(bindings, from_arguments) if not argument]
        if not written or len({_binding_key(binding) for binding in written}) != 1:
            return None
        # A default noted by an inner option loop meets the unchanged binding again in the outer merge.
        noted = [binding for binding in written if _is_argument_default(binding)]
        if noted:
            return noted[0]
        base = written[0]
        if not any(from_arguments) or isinstance(self._value_of(base.pieces), Unknown):
            return None
        note = f"default of ${name} (an option of the script, handled at line {line}, may replace it)"
        settings = tuple(replace(setting, note=note) for setting in base.settings)
        exported = any(binding.exported for binding in bindings if binding is not None)
        return _Binding(base.pieces, settings, exported)

    # ------------------------------------------------------------------ assignments
    def _assign(
        self,
        node: Node,
        ctx: _Ctx,
        state: _State,
        exported: Optional[bool] = None,
        local: bool = False,
        extra: Sequence[Node] = (),
    ) -> Optional[Tuple[str, _Binding]]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return None
        is_element = name_node.type == "subscript"
        if is_element:
            base = name_node.child_by_field_name("name")
            name = _node_text(ctx.doc, base) if base is not None else _node_text(ctx.doc, name_node)
        else:
            name = _node_text(ctx.doc, name_node)
        appending = any(child.type == "+=" for child in node.children)
        if value_node is None:
            equals_end = max(
                (child.end_byte for child in node.children if child.type in ("=", "+=")), default=node.end_byte
            )
            span = ctx.doc.span(equals_end, equals_end)
        else:
            last = extra[-1] if extra else value_node
            span = ctx.doc.span(value_node.start_byte, last.end_byte)
        previous = state.env.get(name)
        if local and state.local_frames and name not in state.local_frames[-1]:
            state.local_frames[-1][name] = previous
        keep_exported = previous.exported if previous is not None and not previous.hidden else False
        is_exported = keep_exported if exported is None else exported
        if value_node is not None and value_node.type == "array":
            binding = self._array_binding(value_node, span, ctx, state, is_exported)
        else:
            pieces = self._group_pieces([value_node, *extra], ctx, state, True) if value_node is not None else []
            stored = self._store(pieces, span)
            via: Tuple[Setting, ...] = _unique([s for piece in stored for s in piece.via])
            if appending and previous is not None and previous.elements is None and not previous.hidden:
                stored = tuple(previous.pieces) + stored
                via = _unique(list(previous.settings) + list(via))
            if is_element:
                reason = Unknown(f"${name} has an array element assigned at line {self._origin(span).line}")
                stored = (_Piece(unknown=reason, unknown_span=span, unmodelled=True),)
            setting = Setting(
                self._value_of(stored), SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span), via
            )
            binding = _Binding(stored, (setting,), is_exported)
        state.env[name] = binding
        return name, binding

    def _array_binding(self, node: Node, span: Span, ctx: _Ctx, state: _State, exported: bool) -> _Binding:
        elements: List[_Element] = []
        children = [child for child in node.named_children if child.type != "comment"]
        for group in self._adjacent_groups(children):
            for word in self._words(group, ctx, state, SourceKind.SHELL_VARIABLE):
                word_span = (
                    (word.setting.origin.start_byte, word.setting.origin.end_byte)
                    if word.setting.origin is not None
                    else span
                )
                elements.append(_Element(self._store(list(word.pieces), word_span), word.setting))
        joined: Value = " ".join(e.setting.value for e in elements if isinstance(e.setting.value, str))
        if any(not isinstance(e.setting.value, str) for e in elements):
            joined = Unknown("an array with unknown elements")
        setting = Setting(
            joined,
            SourceKind.SHELL_VARIABLE,
            self._origin(span),
            self._outer_text(span),
            _unique([e.setting for e in elements]),
        )
        first = elements[0].pieces if elements else ()
        return _Binding(first, (setting,), exported, elements=tuple(elements))

    @staticmethod
    def _store(pieces: Sequence[_Piece], span: Span) -> Tuple[_Piece, ...]:
        """Pieces as a variable keeps them: expansion results point at the expansion token."""
        stored: List[_Piece] = []
        for piece in pieces:
            if piece.region is None:
                stored.append(replace(piece, splittable=False, field_break=False, inner_via=()))
            else:
                region = piece.region
                stored.append(
                    _Piece(
                        piece.text,
                        (region,) * len(piece.text),
                        piece.via,
                        (),
                        piece.unknown,
                        region,
                        False,
                        None,
                        piece.unmodelled,
                        piece.positional,
                        script_argument=piece.script_argument,
                    )
                )
        return tuple(stored)

    @staticmethod
    def _value_of(pieces: Sequence[_Piece]) -> Value:
        reasons = [p.unknown.reason for p in pieces if p.unknown is not None]
        if any(p.positional for p in pieces):
            reasons.append("the script's arguments ($@) are passed through")
        if not reasons:
            return "".join(p.text for p in pieces)
        if len(reasons) == 1 and len(pieces) == 1 and pieces[0].unknown is not None:
            return pieces[0].unknown
        return Unknown("; ".join(dict.fromkeys(reasons)))

    def _declare(self, node: Node, ctx: _Ctx, state: _State) -> None:
        keyword = node.children[0].type if node.children else ""
        options = ""
        for child in node.named_children:
            text = _node_text(ctx.doc, child)
            if child.type == "word" and text[:1] in "-+":
                options += text
        if "f" in options.lstrip("-+"):
            return
        exported: Optional[bool] = None
        if keyword == "export":
            exported = "n" not in options
        elif "x" in options:
            exported = True
        local = keyword == "local" or (
            keyword in ("declare", "typeset") and bool(state.local_frames) and "g" not in options
        )
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assign(child, ctx, state, exported=exported, local=local)
            elif child.type == "variable_name":
                name = _node_text(ctx.doc, child)
                previous = state.env.get(name)
                if local and state.local_frames and name not in state.local_frames[-1]:
                    state.local_frames[-1][name] = previous
                if previous is not None and not previous.hidden and exported is not None:
                    state.env[name] = replace(previous, exported=exported)
                elif local or (keyword in ("declare", "typeset") and previous is None):
                    state.env[name] = _Binding((), (), bool(exported), is_unset=True)
            else:
                self._scan(child, ctx, state)

    def _unset(self, node: Node, ctx: _Ctx, state: _State) -> None:
        texts = [_node_text(ctx.doc, child) for child in node.named_children]
        if any(text.startswith("-") and "f" in text for text in texts):
            for text in texts:
                state.functions.pop(text, None)
            return
        for child, text in zip(node.named_children, texts):
            if child.type in ("variable_name", "word") and not text.startswith("-"):
                state.env[text] = _Binding((), (), False, is_unset=True)

    # ------------------------------------------------------------------ words
    def _words(self, nodes: Union[Node, Sequence[Node]], ctx: _Ctx, state: _State, kind: SourceKind) -> List[_Word]:
        """The words an argument (one node, or adjacent nodes) becomes after expansion and splitting."""
        group = (nodes,) if isinstance(nodes, Node) else tuple(nodes)
        pieces = self._group_pieces(group, ctx, state, False)
        fields = self._split(pieces)
        node_span = ctx.doc.span(group[0].start_byte, group[-1].end_byte)
        node_origin = self._origin(node_span)
        node_text = self._outer_text(node_span)
        kept = [f for f in fields if not all(p.positional for p in f)]
        passthrough_only = len(kept) < len(fields)
        words: List[_Word] = []
        for field_pieces in kept:
            origin, text, via = node_origin, node_text, _unique([s for p in field_pieces for s in p.via])
            if len(kept) > 1 or any(p.field_break for p in field_pieces[1:]):
                regions = {p.region for p in field_pieces}
                if len(regions) == 1 and None not in regions:
                    starts = [span[0] for p in field_pieces for span in p.spans] + [
                        p.unknown_span[0] for p in field_pieces if p.unknown is not None
                    ]
                    ends = [span[1] for p in field_pieces for span in p.spans] + [
                        p.unknown_span[1] for p in field_pieces if p.unknown is not None
                    ]
                    if starts:
                        span = (min(starts), max(ends))
                        origin, text = self._origin(span), self._outer_text(span)
                        via = _unique([s for p in field_pieces for s in p.inner_via])
            setting = Setting(self._value_of(field_pieces), kind, origin, text, via)
            unmodelled = tuple(p.unknown.reason for p in field_pieces if p.unmodelled and p.unknown is not None)
            words.append(
                _Word(setting, tuple(field_pieces), group, any(p.positional for p in field_pieces), unmodelled)
            )
        if passthrough_only:
            marker = Setting(Unknown("the script's arguments ($@) are passed through"), kind, node_origin, node_text)
            words.append(_Word(marker, (), group, True))
        return words

    @staticmethod
    def _split(pieces: Sequence[_Piece]) -> List[List[_Piece]]:
        fields: List[List[_Piece]] = []
        current: List[_Piece] = []
        started = False
        for piece in pieces:
            if piece.field_break and started:
                fields.append(current)
                current, started = [], False
            if piece.unknown is not None or piece.positional or not piece.splittable:
                current.append(piece)
                started = True
                continue
            run_start: Optional[int] = None
            for index, char in enumerate(piece.text):
                if char in IFS_WHITESPACE:
                    if run_start is not None:
                        current.append(piece.slice(run_start, index))
                        run_start = None
                    if started:
                        fields.append(current)
                        current, started = [], False
                elif run_start is None:
                    run_start, started = index, True
            if run_start is not None:
                current.append(piece.slice(run_start, len(piece.text)))
        if started:
            fields.append(current)
        return fields

    def _pieces(self, node: Node, ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        kind = node.type
        doc = ctx.doc
        if kind == "raw_string":
            return self._quoted_empty(self._literal(doc, node.start_byte + 1, node.end_byte - 1, "raw"), doc, node)
        if kind == "string":
            return self._quoted_empty(self._string(node, ctx, state), doc, node)
        if kind == "translated_string":
            inner = [child for child in node.named_children if child.type == "string"]
            return self._pieces(inner[0], ctx, state, in_dquote) if inner else []
        if kind == "ansi_c_string":
            return self._quoted_empty(self._ansi_c(node, doc), doc, node)
        if kind == "concatenation":
            return self._group_pieces([node], ctx, state, in_dquote)
        if kind == "simple_expansion":
            return self._simple_expansion(node, ctx, state, in_dquote)
        if kind == "expansion":
            return self._expansion(node, ctx, state, in_dquote)
        if kind in ("command_substitution", "process_substitution"):
            return self._command_substitution(node, ctx, state, in_dquote)
        if kind == "arithmetic_expansion":
            return self._arithmetic_expansion(node, ctx, state, in_dquote)
        if kind == "brace_expression":
            span = self._node_span(doc, node)
            reason = Unknown(f"brace expansion `{_node_text(doc, node)}`")
            return [_Piece(unknown=reason, unknown_span=span, region=span, unmodelled=True)]
        return self._literal(doc, node.start_byte, node.end_byte, "dquote" if in_dquote else "word")

    def _group_pieces(self, nodes: Sequence[Node], ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        """Pieces of adjacent nodes, repairing a tree-sitter-bash quirk: in `a/$X/$Y/b` it ends one
        node with a bare `$` token and starts the next with `Y/b`; that `$` still expands `$Y`."""
        items: List[Node] = []
        for node in nodes:
            items.extend(node.children if node.type == "concatenation" else [node])
        doc = ctx.doc
        out: List[_Piece] = []
        index = 0
        while index < len(items):
            item = items[index]
            following = items[index + 1] if index + 1 < len(items) else None
            if (
                item.type == "$"
                and not item.is_named
                and following is not None
                and following.start_byte == item.end_byte
                and following.type in ("word", "number")
            ):
                text = doc.data[following.start_byte : following.end_byte]
                length = 0
                while length < len(text) and (chr(text[length]).isalnum() or text[length : length + 1] == b"_"):
                    length += 1
                if length:
                    name = text[:length].decode("ascii", errors="replace")
                    span = doc.span(item.start_byte, following.start_byte + length)
                    binding, explained = self._lookup(name, span, state, in_dquote, name)
                    if binding is not None and not binding.is_unset:
                        out.extend(self._use_pieces(binding, span, in_dquote))
                    else:
                        out.extend(explained)
                    out.extend(
                        self._literal(
                            doc, following.start_byte + length, following.end_byte, "dquote" if in_dquote else "word"
                        )
                    )
                    index += 2
                    continue
            out.extend(self._pieces(item, ctx, state, in_dquote))
            index += 1
        return out

    def _quoted_empty(self, pieces: List[_Piece], doc: _Doc, node: Node) -> List[_Piece]:
        # A quoted empty string is still a word: keep a zero-length piece so splitting sees it.
        if pieces:
            return pieces
        return [_Piece(text="", spans=())]

    def _string(self, node: Node, ctx: _Ctx, state: _State) -> List[_Piece]:
        doc = ctx.doc
        out: List[_Piece] = []
        cursor = node.start_byte + 1
        end = node.end_byte - 1 if node.end_byte - node.start_byte >= 2 else node.end_byte
        for child in node.children:
            if child.type not in EXPANSION_TYPES:
                continue
            start = self._effective_start(doc, child)
            if start > cursor:
                out.extend(self._literal(doc, cursor, start, "dquote"))
            out.extend(self._pieces(child, ctx, state, in_dquote=True))
            cursor = max(cursor, child.end_byte)
        if end > cursor:
            out.extend(self._literal(doc, cursor, end, "dquote"))
        return out

    @staticmethod
    def _effective_start(doc: _Doc, node: Node) -> int:
        # tree-sitter-bash lets an expansion inside "..." start at the whitespace before its `$`.
        position = node.start_byte
        while position < node.end_byte and doc.data[position : position + 1] in (b" ", b"\t", b"\n", b"\r"):
            position += 1
        return position

    def _ansi_c(self, node: Node, doc: _Doc) -> List[_Piece]:
        escapes = {
            "n": "\n",
            "t": "\t",
            "r": "\r",
            "\\": "\\",
            "'": "'",
            '"': '"',
            "a": "\a",
            "b": "\b",
            "e": "\x1b",
            "f": "\f",
            "v": "\v",
        }
        chars: List[str] = []
        spans: List[Span] = []
        items = list(_iter_chars(doc.data, node.start_byte + 2, node.end_byte - 1))
        index = 0
        while index < len(items):
            char, start, end = items[index]
            if char == "\\" and index + 1 < len(items) and items[index + 1][0] in escapes:
                chars.append(escapes[items[index + 1][0]])
                spans.append(doc.span(start, items[index + 1][2]))
                index += 2
                continue
            chars.append(char)
            spans.append(doc.span(start, end))
            index += 1
        return [_Piece("".join(chars), tuple(spans))] if chars else []

    # ------------------------------------------------------------------ expansions
    def _use_pieces(
        self,
        binding: _Binding,
        span: Span,
        in_dquote: bool,
        pieces: Optional[Sequence[_Piece]] = None,
        via: Optional[Tuple[Setting, ...]] = None,
    ) -> List[_Piece]:
        """The stored pieces of a binding as they appear at a use site."""
        use_via = binding.settings if via is None else via
        out = [
            replace(
                piece,
                via=use_via,
                inner_via=piece.via,
                region=span,
                splittable=not in_dquote,
                unknown_span=piece.unknown_span if piece.unknown_span != (0, 0) else span,
            )
            for piece in (binding.pieces if pieces is None else pieces)
        ]
        if in_dquote and not out:
            out = [_Piece(via=use_via, region=span)]
        return out

    def _record_flows(self, binding: _Binding, span: Span) -> None:
        target = self._origin(span)
        for setting in binding.settings:
            if setting.origin is not None:
                self.flows.append(Flow(setting.origin, target))

    def _lookup(
        self, name: str, span: Span, state: _State, in_dquote: bool, token: str
    ) -> Tuple[Optional[_Binding], List[_Piece]]:
        """The binding of `name` (recording a flow) or the pieces explaining why it has none."""

        def unknown(reason: str, unmodelled: bool = False, argument: bool = False) -> List[_Piece]:
            return [_Piece(unknown=Unknown(reason), unknown_span=span, region=span, unmodelled=unmodelled,
                           script_argument=argument)]

        if name in ("@", "*"):
            return None, [_Piece(positional=True, region=span, unknown_span=span, splittable=not in_dquote)]
        if name.isdigit():
            if name == "0":
                return None, unknown("$0 is the path the script is run as")
            return None, unknown(f"${name} is a positional argument of the script", argument=True)
        if name in ("#", "?", "$", "!", "-", "_"):
            return None, unknown(f"${name} is a special parameter known only at run time")
        if name == "RANDOM":
            return None, unknown("$RANDOM is a random number")
        binding = state.env.get(name)
        if binding is None and name == "OPTARG":
            return None, unknown("$OPTARG is an option argument of the script (getopts)", argument=True)
        if binding is None:
            sourced = f", or set by sourced {', '.join(state.sourced)}" if state.sourced else ""
            return None, unknown(f"${name} is not set in this script (environment{sourced})")
        if binding.hidden is not None:
            return None, unknown(binding.hidden)
        self._record_flows(binding, span)
        return binding, []

    def _simple_expansion(self, node: Node, ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        span = ctx.doc.span(self._effective_start(ctx.doc, node), node.end_byte)
        name_node = node.named_children[0] if node.named_children else None
        name = _node_text(ctx.doc, name_node) if name_node is not None else ""
        binding, explained = self._lookup(name, span, state, in_dquote, _node_text(ctx.doc, node))
        if binding is None:
            return explained
        if binding.is_unset:
            return [_Piece(region=span)] if in_dquote else []
        return self._use_pieces(binding, span, in_dquote)

    def _expansion(self, node: Node, ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        doc = ctx.doc
        span = doc.span(self._effective_start(doc, node), node.end_byte)
        token = _node_text(doc, node).strip()
        children = [child for child in node.children if child.type not in ("${", "}")]
        prefix = ""
        if children and not children[0].is_named and children[0].type in ("#", "!"):
            prefix = children[0].type
            children = children[1:]
        if not children or children[0].type not in ("variable_name", "special_variable_name", "subscript"):
            return self._unmodelled_piece(f"`{token}` is not modelled", span)
        target = children[0]
        operator_nodes = children[1:]
        subscript = None
        if target.type == "subscript":
            subscript = target.child_by_field_name("index")
            base = target.child_by_field_name("name")
            name = _node_text(doc, base) if base is not None else ""
        else:
            name = _node_text(doc, target)
        if prefix == "!":
            self._lookup(name, span, state, in_dquote, token)
            return self._unmodelled_piece(f"indirect expansion `{token}` is not modelled", span)
        binding, explained = self._lookup(name, span, state, in_dquote, token)
        if subscript is not None:
            return self._subscript(name, binding, explained, subscript, prefix, span, token, ctx, state, in_dquote)
        if prefix == "#":
            if binding is None:
                return explained
            value = self._value_of(binding.pieces)
            if isinstance(value, Unknown):
                return [_Piece(unknown=value, unknown_span=span, region=span, via=binding.settings)]
            return [self._computed(str(len(value)), span, binding.settings, in_dquote)]
        if not operator_nodes:
            if binding is None:
                return explained
            if binding.is_unset:
                return [_Piece(region=span)] if in_dquote else []
            return self._use_pieces(binding, span, in_dquote)
        operator = operator_nodes[0].type
        operands = operator_nodes[1:]
        if operator in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return self._default_operator(
                name, binding, explained, operator, operands, node, span, ctx, state, in_dquote
            )
        if operator in ("#", "##", "%", "%%"):
            return self._trim_operator(binding, explained, operator, operands, span, token, ctx, state, in_dquote)
        if operator == ":":
            return self._substring(binding, explained, operator_nodes, span, token, ctx, state, in_dquote)
        return self._unmodelled_piece(f"`{token}` is not modelled", span, binding)

    def _unmodelled_piece(self, reason: str, span: Span, binding: Optional[_Binding] = None) -> List[_Piece]:
        via = binding.settings if binding is not None else ()
        return [_Piece(unknown=Unknown(reason), unknown_span=span, region=span, unmodelled=True, via=via)]

    @staticmethod
    def _computed(text: str, span: Span, via: Tuple[Setting, ...], in_dquote: bool) -> _Piece:
        return _Piece(text, (span,) * len(text), via, via, None, span, not in_dquote, span)

    def _operand_pieces(
        self, operands: Sequence[Node], close: Node, ctx: _Ctx, state: _State, in_dquote: bool
    ) -> Tuple[List[_Piece], Span]:
        """The word after an operator (`8` in `${GPUS:-8}`), literal gaps included."""
        doc = ctx.doc
        named = [child for child in operands if child.is_named or child.type not in (":", "}")]
        if not named:
            position = close.start_byte
            return [], doc.span(position, position)
        start, end = named[0].start_byte, close.start_byte
        out: List[_Piece] = []
        cursor = start
        for child in named:
            if child.type in EXPANSION_TYPES or child.type in (
                "string",
                "raw_string",
                "concatenation",
                "ansi_c_string",
            ):
                if child.start_byte > cursor:
                    out.extend(self._literal(doc, cursor, child.start_byte, "dquote" if in_dquote else "word"))
                out.extend(self._pieces(child, ctx, state, in_dquote))
                cursor = child.end_byte
        if end > cursor:
            out.extend(self._literal(doc, cursor, end, "dquote" if in_dquote else "word"))
        return out, doc.span(start, end)

    def _default_operator(
        self,
        name: str,
        binding: Optional[_Binding],
        explained: List[_Piece],
        operator: str,
        operands: Sequence[Node],
        node: Node,
        span: Span,
        ctx: _Ctx,
        state: _State,
        in_dquote: bool,
    ) -> List[_Piece]:
        close = node.children[-1]
        null_counts = operator.startswith(":")
        if (
            binding is None
            and explained
            and explained[0].unknown is not None
            and "not set in this script" not in explained[0].unknown.reason
            and not explained[0].script_argument
        ):
            # `$@` or a special parameter: cannot tell whether it is set. A script argument with a
            # fallback (`${1:-8}`) is read like an environment variable's: the fallback, as a default.
            return explained
        if binding is None:
            state_of_value = "unset"
        elif binding.is_unset:
            state_of_value = "unset"
        else:
            value = self._value_of(binding.pieces)
            if isinstance(value, Unknown):
                return self._use_pieces(binding, span, in_dquote)
            state_of_value = "empty" if value == "" else "set"
        use_word = state_of_value == "unset" or (null_counts and state_of_value == "empty")
        if operator.lstrip(":") == "+":
            use_word = not use_word
            if not use_word:
                return [_Piece(region=span)] if in_dquote else []
        if not use_word:
            assert binding is not None
            return self._use_pieces(binding, span, in_dquote)
        if operator.lstrip(":") == "?":
            return [
                _Piece(
                    unknown=Unknown(f"${name} is required (`{_node_text(ctx.doc, node).strip()}`)"),
                    unknown_span=span,
                    region=span,
                )
            ]
        word_pieces, word_span = self._operand_pieces(operands, close, ctx, state, in_dquote)
        stored = self._store(word_pieces, word_span)
        default = Setting(
            self._value_of(stored),
            SourceKind.SHELL_VARIABLE,
            self._origin(word_span),
            self._outer_text(word_span),
            _unique([s for p in stored for s in p.via]),
            note=f"default of ${name}",
        )
        default_binding = _Binding(stored, (default,))
        self.flows.append(Flow(default.origin, self._origin(span)))  # type: ignore[arg-type]
        if operator.lstrip(":") == "=":
            exported = binding.exported if binding is not None else False
            state.env[name] = replace(default_binding, exported=exported)
        pieces = [
            replace(piece, via=(default,), inner_via=piece.via, region=span, splittable=not in_dquote)
            for piece in word_pieces
        ]
        if in_dquote and not pieces:
            pieces = [_Piece(via=(default,), region=span)]
        return pieces

    def _trim_operator(
        self,
        binding: Optional[_Binding],
        explained: List[_Piece],
        operator: str,
        operands: Sequence[Node],
        span: Span,
        token: str,
        ctx: _Ctx,
        state: _State,
        in_dquote: bool,
    ) -> List[_Piece]:
        if binding is None:
            return explained
        value = self._value_of(binding.pieces)
        pattern_pieces: List[_Piece] = []
        for operand in operands:
            pattern_pieces.extend(self._pieces(operand, ctx, state, in_dquote=True))
        pattern = self._value_of(pattern_pieces)
        if isinstance(value, Unknown) or isinstance(pattern, Unknown):
            return self._use_pieces(
                binding, span, in_dquote, [_Piece(unknown=Unknown(f"`{token}` trims a value that is not known"))]
            )
        if operator in ("%", "%%"):
            cuts = range(len(value), -1, -1) if operator == "%" else range(0, len(value) + 1)
            result = next((value[:cut] for cut in cuts if fnmatch.fnmatchcase(value[cut:], pattern)), value)
        else:
            cuts = range(0, len(value) + 1) if operator == "#" else range(len(value), -1, -1)
            result = next((value[cut:] for cut in cuts if fnmatch.fnmatchcase(value[:cut], pattern)), value)
        return [self._computed(result, span, binding.settings, in_dquote)]

    def _substring(
        self,
        binding: Optional[_Binding],
        explained: List[_Piece],
        operator_nodes: Sequence[Node],
        span: Span,
        token: str,
        ctx: _Ctx,
        state: _State,
        in_dquote: bool,
    ) -> List[_Piece]:
        if binding is None:
            return explained
        value = self._value_of(binding.pieces)
        numbers = []
        for operand in operator_nodes:
            if operand.is_named:
                number, _, _ = self._arith(operand, ctx, state)
                numbers.append(number)
        if isinstance(value, Unknown) or not numbers or any(number is None for number in numbers):
            return self._unmodelled_piece(f"`{token}` takes part of a value that is not known", span, binding)
        offset = numbers[0]
        text = value[offset:] if offset >= 0 else value[len(value) + offset :]
        if len(numbers) > 1:
            length = numbers[1]
            text = text[:length] if length >= 0 else text[: length or None]
        return [self._computed(text, span, binding.settings, in_dquote)]

    def _subscript(
        self,
        name: str,
        binding: Optional[_Binding],
        explained: List[_Piece],
        index: Optional[Node],
        prefix: str,
        span: Span,
        token: str,
        ctx: _Ctx,
        state: _State,
        in_dquote: bool,
    ) -> List[_Piece]:
        if binding is None:
            return explained
        elements = binding.elements
        if elements is None:
            if binding.is_unset:
                elements = ()
            elif isinstance(self._value_of(binding.pieces), Unknown) or binding.setting is None:
                return self._use_pieces(binding, span, in_dquote)
            else:
                elements = (_Element(binding.pieces, binding.setting),)
        index_text = _node_text(ctx.doc, index).strip() if index is not None else ""
        if prefix == "#":
            if index_text in ("@", "*"):
                return [self._computed(str(len(elements)), span, binding.settings, in_dquote)]
            return self._unmodelled_piece(f"`{token}` is not modelled", span, binding)
        if index_text in ("@", "*"):
            out: List[_Piece] = []
            for position, element in enumerate(elements):
                pieces = self._use_pieces(binding, span, in_dquote, element.pieces, (element.setting,))
                if not pieces:
                    pieces = [_Piece(via=(element.setting,), region=span)]
                if position and in_dquote and index_text == "@":
                    pieces[0] = replace(pieces[0], field_break=True)
                elif position:
                    out.append(_Piece(" ", (span,), region=span, splittable=not in_dquote))
                out.extend(pieces)
            return out
        number = None
        if index is not None:
            number, _, _ = self._arith(index, ctx, state)
        if number is None or not 0 <= number < len(elements):
            return self._unmodelled_piece(f"array element `{token}` is not known statically", span, binding)
        element = elements[number]
        return self._use_pieces(binding, span, in_dquote, element.pieces, (element.setting,))

    def _command_substitution(self, node: Node, ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        span = ctx.doc.span(self._effective_start(ctx.doc, node), node.end_byte)
        for child in node.named_children:  # its expansions still read variables
            self._scan(child, ctx, state)
        reason = Unknown(f"command substitution `{_shorten(self._outer_text(span))}`")
        return [_Piece(unknown=reason, unknown_span=span, region=span, splittable=not in_dquote)]

    def _arithmetic_expansion(self, node: Node, ctx: _Ctx, state: _State, in_dquote: bool) -> List[_Piece]:
        span = ctx.doc.span(self._effective_start(ctx.doc, node), node.end_byte)
        expressions = [child for child in node.named_children if child.type != "comment"]
        value, reason, via = (None, "an empty expression", ())  # type: ignore[assignment]
        for expression in expressions:
            value, reason, via = self._arith(expression, ctx, state)
        if value is None:
            unknown = Unknown(f"`{_shorten(self._outer_text(span))}` uses {reason}")
            return [_Piece(unknown=unknown, unknown_span=span, region=span, via=tuple(via))]
        return [self._computed(str(value), span, tuple(via), in_dquote)]

    def _arith(self, node: Node, ctx: _Ctx, state: _State) -> Tuple[Optional[int], str, Tuple[Setting, ...]]:
        """Integer value of an arithmetic expression, or None with the reason; plus the settings it read."""
        kind = node.type
        doc = ctx.doc
        if kind == "number":
            number = _to_int(_node_text(doc, node))
            return number, f"`{_node_text(doc, node)}`", ()
        if kind in ("variable_name", "word"):
            name = _node_text(doc, node)
            if name.isdigit():
                return int(name), "", ()
            span = self._node_span(doc, node)
            binding, explained = self._lookup(name, span, state, True, name)
            if binding is None:
                return None, explained[0].unknown.reason if explained and explained[0].unknown else name, ()
            value = self._value_of(binding.pieces) if not binding.is_unset else "0"
            number = _to_int(value) if isinstance(value, str) else None
            reason = value.reason if isinstance(value, Unknown) else f"${name} = {value!r}, not an integer"
            return number, reason, binding.settings
        if kind in EXPANSION_TYPES or kind in ("string", "concatenation"):
            pieces = self._pieces(node, ctx, state, in_dquote=True)
            value = self._value_of(pieces)
            via = _unique([s for p in pieces for s in p.via])
            if isinstance(value, Unknown):
                return None, value.reason, via
            number = _to_int(value)
            return number, f"`{value}`, not an integer", via
        if kind == "parenthesized_expression":
            inner = node.named_children
            return self._arith(inner[0], ctx, state) if inner else (None, "an empty expression", ())
        if kind == "unary_expression":
            operator = node.children[0].type if node.children else ""
            operand = node.named_children[-1] if node.named_children else None
            if operand is None:
                return None, "an empty expression", ()
            value, reason, via = self._arith(operand, ctx, state)
            if value is None:
                return None, reason, via
            results = {"-": -value, "+": value, "!": int(not value), "~": ~value}
            return (results[operator], "", via) if operator in results else (None, f"`{operator}`", via)
        if kind == "binary_expression":
            return self._arith_binary(node, ctx, state)
        if kind == "ternary_expression":
            parts = node.named_children
            if len(parts) == 3:
                condition, reason, via = self._arith(parts[0], ctx, state)
                if condition is None:
                    return None, reason, via
                value, reason, more = self._arith(parts[1] if condition else parts[2], ctx, state)
                return value, reason, _unique(list(via) + list(more))
        self._scan(node, ctx, state)
        return None, f"`{_shorten(_node_text(doc, node))}`, which is not modelled", ()

    def _arith_binary(self, node: Node, ctx: _Ctx, state: _State) -> Tuple[Optional[int], str, Tuple[Setting, ...]]:
        left_node = node.child_by_field_name("left")
        right_node = node.child_by_field_name("right")
        operator_node = node.child_by_field_name("operator")
        if left_node is None or right_node is None or operator_node is None:
            return None, "an incomplete expression", ()
        left, left_reason, left_via = self._arith(left_node, ctx, state)
        right, right_reason, right_via = self._arith(right_node, ctx, state)
        via = _unique(list(left_via) + list(right_via))
        if left is None:
            return None, left_reason, via
        if right is None:
            return None, right_reason, via
        operator = operator_node.type
        if operator in ("/", "%"):
            if right == 0:
                return None, "a division by zero", via
            quotient, remainder = _truncating_divmod(left, right)
            return (quotient if operator == "/" else remainder), "", via
        table = {
            "+": lambda: left + right,
            "-": lambda: left - right,
            "*": lambda: left * right,
            "**": lambda: left**right if 0 <= right < 64 else None,
            "<<": lambda: left << right if 0 <= right < 64 else None,
            ">>": lambda: left >> right if right >= 0 else None,
            "&": lambda: left & right,
            "|": lambda: left | right,
            "^": lambda: left ^ right,
            "<": lambda: int(left < right),
            ">": lambda: int(left > right),
            "<=": lambda: int(left <= right),
            ">=": lambda: int(left >= right),
            "==": lambda: int(left == right),
            "!=": lambda: int(left != right),
            "&&": lambda: int(bool(left) and bool(right)),
            "||": lambda: int(bool(left) or bool(right)),
        }
        if operator not in table:
            return None, f"the operator `{operator}`", via
        result = table[operator]()
        return (result, "", via) if result is not None else (None, f"`{operator}` out of range", via)

    # ------------------------------------------------------------------ commands
    def _command(self, node: Node, ctx: _Ctx, state: _State) -> None:
        parts: List[Node] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if child.type == "command_name":
                parts.extend(child.named_children)
            elif field_name == "argument" or (
                child.is_named
                and child.type not in ("comment", "file_redirect", "herestring_redirect", "heredoc_redirect")
            ):
                parts.append(child)
            elif child.is_named:
                self._scan(child, ctx, state)
        prefixes: List[List[Node]] = []
        words: List[_Word] = []
        for group in self._adjacent_groups(parts):
            if not words and group[0].type == "variable_assignment":
                prefixes.append(group)
            else:
                words.extend(self._words(group, ctx, state, SourceKind.LAUNCHER_FLAG))
        if not words:
            # Only assignments: tree-sitter splits `X=a/$B/$C` into an assignment and a "command".
            for group in prefixes:
                self._assign(group[0], ctx, state, extra=group[1:])
            return
        prefix_env = self._prefix_env(prefixes, ctx, state)
        name = words[0].known
        if name in state.functions and ctx.function_depth < MAX_FUNCTION_DEPTH:
            body, doc = state.functions[name]
            self.called_functions.add(name)
            self._call_body(body, replace(ctx, doc=doc, function_depth=ctx.function_depth + 1), state)
            return
        if name in ("cd", "pushd", "popd"):
            self._change_directory(name, words[1:], state)
            return
        if name == "read":
            self._read_builtin(words[1:], ctx, state)
            return
        if name in ("source", "."):
            if len(words) > 1:
                label = words[1].known or words[1].setting.text
                state.sourced = tuple(dict.fromkeys(state.sourced + (f"`{label}`",)))
            return
        self._maybe_launch(node, words, prefix_env, ctx, state)

    @staticmethod
    def _adjacent_groups(nodes: Sequence[Node]) -> List[List[Node]]:
        """Nodes with no whitespace between them form one shell word."""
        groups: List[List[Node]] = []
        for node in nodes:
            if groups and groups[-1][-1].end_byte == node.start_byte:
                groups[-1].append(node)
            else:
                groups.append([node])
        return groups

    def _prefix_env(self, prefixes: Sequence[List[Node]], ctx: _Ctx, state: _State) -> Dict[str, Setting]:
        env: Dict[str, Setting] = {}
        scratch = state.copy()
        for prefix in prefixes:
            assigned = self._assign(prefix[0], ctx, scratch, exported=True, extra=prefix[1:])
            if assigned is not None and assigned[1].setting is not None:
                env[assigned[0]] = assigned[1].setting
        return env

    def _call_body(self, body: Node, ctx: _Ctx, state: _State) -> None:
        state.local_frames.append({})
        try:
            self._exec(body, ctx, state)
        finally:
            frame = state.local_frames.pop()
            for name, previous in frame.items():
                if previous is None:
                    state.env.pop(name, None)
                else:
                    state.env[name] = previous

    def _define_function(self, node: Node, ctx: _Ctx, state: _State) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and body is not None:
            state.functions[_node_text(ctx.doc, name_node)] = (body, ctx.doc)

    def _change_directory(self, builtin: str, args: Sequence[_Word], state: _State) -> None:
        operands = [word for word in args if not (word.known or "").startswith("-") or word.known == "-"]
        if builtin == "popd":
            if state.dir_stack:
                previous = state.dir_stack.pop()
                state.cwd, state.cwd_lost = previous, previous is None and state.cwd_lost
            else:
                state.cwd, state.cwd_lost = None, True
            return
        if builtin == "pushd":
            state.dir_stack.append(None if state.cwd_lost else state.cwd)
        target = operands[0].known if operands else "~"
        if target is None or target == "-":
            state.cwd, state.cwd_lost = None, True
        elif target.startswith(("/", "~")):
            state.cwd, state.cwd_lost = target, False
        elif not state.cwd_lost:
            joined = posixpath.normpath(posixpath.join(state.cwd or "", target))
            state.cwd = joined
        # a relative cd after an unknown one stays unknown

    def _read_builtin(self, args: Sequence[_Word], ctx: _Ctx, state: _State) -> None:
        takes_value = set("adpntuNi")
        index = 0
        names: List[_Word] = []
        while index < len(args):
            text = args[index].known or ""
            if text.startswith("-") and len(text) > 1:
                if text[-1] in takes_value:
                    if text[-1] == "a" and index + 1 < len(args):
                        names.append(args[index + 1])
                    index += 2
                    continue
                index += 1
                continue
            names.append(args[index])
            index += 1
        for word in names:
            name = word.known
            if not name or word.setting.origin is None:
                continue
            origin = word.setting.origin
            reason = Unknown(f"${name} is read from input by `read` at line {origin.line}")
            setting = Setting(reason, SourceKind.SHELL_VARIABLE, origin, word.setting.text)
            span = (origin.start_byte, origin.end_byte)
            state.env[name] = _Binding((_Piece(unknown=reason, unknown_span=span),), (setting,))

    # ------------------------------------------------------------------ launches
    def _maybe_launch(
        self, node: Node, words: List[_Word], prefix_env: Dict[str, Setting], ctx: _Ctx, state: _State
    ) -> None:
        env = dict(prefix_env)
        wrapper = ctx.wrapper
        wrapper_args = ctx.wrapper_args
        index = 0
        launchish = False
        while index < len(words):
            name = _basename(words[index])
            if name in TRANSPARENT_WRAPPERS:
                index += 1
                if name == "env":
                    index = self._env_wrapper_args(words, index, env)
                continue
            if name in SEARCHING_WRAPPERS:
                launchish = True
                found = next(
                    (position for position in range(index + 1, len(words)) if self._is_launcher_word(words[position])),
                    None,
                )
                if name in ISOLATING_WRAPPERS and wrapper is None:
                    wrapper = name
                    wrapper_args = tuple(
                        w.setting
                        for w in words[index + 1 : found if found is not None else len(words)]
                        if not self._is_passthrough_marker(w)
                    )
                if found is None:
                    break
                index = found
                continue
            break
        if index >= len(words):
            if launchish:
                self._check_continuation(node, ctx, _basename(words[0]) or "")
            return
        name = _basename(words[index])
        if name in SHELLS:
            self._check_continuation(node, ctx, name or "")
            self._inner_shell(words, index, env, wrapper or name, replace(ctx, wrapper_args=wrapper_args), state)
            return
        shape = self._launch_shape(words, index)
        if launchish or name in LAUNCHER_NAMES or _is_python(name):
            self._check_continuation(node, ctx, name or "")
        if shape is None:
            return
        self._record_launch(node, shape, words, env, wrapper, replace(ctx, wrapper_args=wrapper_args), state)

    @staticmethod
    def _is_launcher_word(word: _Word) -> bool:
        name = _basename(word)
        return bool(name) and (name in LAUNCHER_NAMES or name in SHELLS or _is_python(name))

    @staticmethod
    def _env_wrapper_args(words: Sequence[_Word], index: int, env: Dict[str, Setting]) -> int:
        while index < len(words):
            text = words[index].known or ""
            if text.startswith("-"):
                index += 2 if text in ("-u", "--unset", "-C", "--chdir", "-S") else 1
                continue
            name, equals, value = text.partition("=")
            if equals and name.replace("_", "a").isalnum():
                env[name] = replace(words[index].setting, value=value, kind=SourceKind.SHELL_VARIABLE)
                index += 1
                continue
            break
        return index

    def _record_launch(
        self,
        node: Node,
        shape: _LaunchShape,
        words: Sequence[_Word],
        env: Dict[str, Setting],
        wrapper: Optional[str],
        ctx: _Ctx,
        state: _State,
    ) -> None:
        full_env: Dict[str, Setting] = {}
        for name, binding in state.env.items():
            if binding.exported and binding.hidden is None and not binding.is_unset and binding.setting is not None:
                full_env[name] = binding.setting
        full_env.update(env)
        used = (shape.launcher_args, (shape.entry,) if shape.entry is not None else (), shape.script_args)
        for group in used:
            for word in group:
                for reason in word.unmodelled:
                    origin = word.setting.origin
                    if origin is not None:
                        self._unmodelled(
                            f"{reason}; this {shape.launcher} argument stays unknown",
                            (origin.start_byte, origin.end_byte),
                        )
        launch = Launch(
            launcher=shape.launcher,
            origin=self._origin(self._node_span(ctx.doc, node)),
            launcher_args=tuple(w.setting for w in shape.launcher_args if not self._is_passthrough_marker(w)),
            entry=shape.entry.setting if shape.entry is not None else None,
            entry_is_module=shape.entry_is_module,
            script_args=tuple(w.setting for w in shape.script_args if not self._is_passthrough_marker(w)),
            env=full_env,
            cwd=None if state.cwd_lost else state.cwd,
            passthrough=any(word.passthrough for word in words),
            wrapper=wrapper,
            wrapper_args=ctx.wrapper_args if wrapper is not None else (),
        )
        self.launches.append(launch)

    @staticmethod
    def _is_passthrough_marker(word: _Word) -> bool:
        return word.passthrough and not word.pieces

    def _launch_shape(self, words: Sequence[_Word], index: int) -> Optional[_LaunchShape]:
        name = _basename(words[index])
        rest = list(words[index + 1 :])
        if name == "deepspeed":
            return self._split_launcher("deepspeed", rest, DEEPSPEED_VALUE_OPTIONS, DEEPSPEED_FLAGS)
        if name == "torchrun":
            return self._split_launcher("torchrun", rest, TORCHRUN_VALUE_OPTIONS, TORCHRUN_FLAGS)
        if name == "accelerate":
            if not rest or rest[0].known != "launch":
                return None
            return self._split_launcher(
                "accelerate", rest[1:], ACCELERATE_VALUE_OPTIONS, ACCELERATE_FLAGS, ACCELERATE_VALUE_PREFIXES
            )
        if name == "llamafactory-cli":
            if len(rest) < 2 or rest[0].known != "train":
                return None
            if (rest[1].known or "").startswith("-"):
                # Every argument on the command line, parsed like HfArgumentParser flags.
                return _LaunchShape("llamafactory-cli", (), None, False, tuple(rest[1:]))
            return _LaunchShape("llamafactory-cli", (), rest[1], False, tuple(rest[2:]))
        if _is_python(name):
            return self._python_shape(rest)
        return None

    def _python_shape(self, rest: List[_Word]) -> Optional[_LaunchShape]:
        index = 0
        while index < len(rest):
            text = rest[index].known
            if text is None or not text.startswith("-") or text == "-":
                break
            if text == "-c" or (
                text.startswith("-")
                and not text.startswith("--")
                and "c" in text[1:]
                and not text.startswith(PYTHON_VALUE_OPTIONS)
                and not text.startswith("-m")
            ):
                return None
            if text.startswith("-m"):
                module_word = rest[index + 1] if text == "-m" and index + 1 < len(rest) else None
                if text != "-m":
                    module_word = replace(rest[index], setting=replace(rest[index].setting, value=text[2:]))
                if module_word is None:
                    return None
                after = rest[index + 2 :] if text == "-m" else rest[index + 1 :]
                module = module_word.known
                if module in PYTHON_MODULE_LAUNCHERS:
                    launcher = PYTHON_MODULE_LAUNCHERS[module]
                    if launcher == "deepspeed":
                        return self._split_launcher(launcher, after, DEEPSPEED_VALUE_OPTIONS, DEEPSPEED_FLAGS)
                    if launcher == "accelerate":
                        return self._split_launcher(
                            launcher, after, ACCELERATE_VALUE_OPTIONS, ACCELERATE_FLAGS, ACCELERATE_VALUE_PREFIXES
                        )
                    return self._split_launcher(launcher, after, TORCHRUN_VALUE_OPTIONS, TORCHRUN_FLAGS)
                return _LaunchShape("python", tuple(rest[:index]), module_word, True, tuple(after))
            if text in PYTHON_VALUE_OPTIONS:
                index += 2
                continue
            index += 1
        if index >= len(rest):
            return None
        return _LaunchShape("python", tuple(rest[:index]), rest[index], False, tuple(rest[index + 1 :]))

    def _split_launcher(
        self,
        launcher: str,
        rest: Sequence[_Word],
        value_options: frozenset,
        flags: frozenset,
        value_prefixes: Tuple[str, ...] = (),
    ) -> Optional[_LaunchShape]:
        """Separate launcher options from the entry script and its arguments."""
        module_flags = MODULE_FLAGS.get(launcher, ("-m", "--module"))
        is_module = False
        index = 0
        while index < len(rest):
            word = rest[index]
            if self._is_passthrough_marker(word):
                index += 1
                continue
            text = word.known
            if text is None and word.prefix.startswith("-"):
                index += 1  # `--node_rank=$RANK`: an option whose value is not known
                continue
            if text is None:
                following = rest[index + 1].known if index + 1 < len(rest) else None
                if following is not None and following.endswith(".py"):
                    index += 1  # an unknown launcher option (like an unresolved $DISTRIBUTED_ARGS)
                    continue
                break
            if text == "--":
                index += 1
                break
            if not text.startswith("-") or text == "-":
                break
            option, equals, _ = text.partition("=")
            normalised = _normalise_option(option)
            if option in module_flags or normalised in module_flags:
                is_module = True
                index += 1
            elif equals or normalised in flags:
                index += 1
            elif normalised in value_options or normalised.startswith(value_prefixes):
                index += 2
            else:
                following = rest[index + 1].known if index + 1 < len(rest) else None
                takes_value = following is not None and not following.startswith("-") and not following.endswith(".py")
                index += 2 if takes_value or (index + 1 < len(rest) and following is None) else 1
        if index >= len(rest):
            return None
        return _LaunchShape(launcher, tuple(rest[:index]), rest[index], is_module, tuple(rest[index + 1 :]))

    # ------------------------------------------------------------------ inner shells
    def _inner_shell(
        self, words: Sequence[_Word], index: int, env: Dict[str, Setting], wrapper: str, ctx: _Ctx, state: _State
    ) -> None:
        shell = _basename(words[index]) or "bash"
        position = index + 1
        command_word: Optional[_Word] = None
        while position < len(words):
            text = words[position].known or ""
            if text.startswith("-") and len(text) > 1 and not text.startswith("--"):
                if "c" in text[1:]:
                    command_word = words[position + 1] if position + 1 < len(words) else None
                    break
                position += 1
                continue
            if text.startswith("--"):
                position += 1
                continue
            break
        if command_word is None or not command_word.nodes or ctx.shell_depth >= MAX_SHELL_DEPTH:
            return
        label = f"{wrapper} ... {shell} -c" if wrapper != shell else f"{shell} -c"
        built = self._inner_doc(command_word, ctx, state)
        if built is None:
            span = ctx.doc.span(command_word.nodes[0].start_byte, command_word.nodes[-1].end_byte)
            self._unmodelled(f"the command string of `{label}` is built from values trainlint cannot resolve", span)
            return
        doc, sees_everything = built
        inner_state = self._inner_state(state, env, sees_everything, label)
        self._report_syntax_errors(doc)
        inner_ctx = _Ctx(doc, wrapper, ctx.function_depth, ctx.shell_depth + 1, label, ctx.wrapper_args)
        self._exec(doc.root, inner_ctx, inner_state)

    def _inner_doc(self, word: _Word, ctx: _Ctx, state: _State) -> Optional[Tuple[_Doc, bool]]:
        """The command string as the inner shell reads it, each byte mapped to the outer file.

        Returns the document and whether the inner shell sees every outer variable (True when the outer
        shell expands them itself, inside double quotes)."""
        node = word.nodes[0]
        doc = ctx.doc
        data = bytearray()
        starts: List[int] = []
        ends: List[int] = []

        def add_raw(start: int, end: int) -> None:
            for position in range(start, end):
                outer = doc.span(position, position + 1)
                data.append(doc.data[position])
                starts.append(outer[0])
                ends.append(outer[1])

        def add_pieces(pieces: Sequence[_Piece]) -> None:
            for piece in pieces:
                for char, span in zip(piece.text, piece.spans):
                    encoded = char.encode("utf-8")
                    data.extend(encoded)
                    starts.extend([span[0]] * len(encoded))
                    ends.extend([span[1]] * len(encoded))

        if len(word.nodes) == 1 and node.type == "raw_string":
            add_raw(node.start_byte + 1, node.end_byte - 1)
            sees_everything = False
        elif len(word.nodes) == 1 and node.type == "string":
            cursor = node.start_byte + 1
            for child in node.children:
                if child.type in EXPANSION_TYPES:
                    start = self._effective_start(doc, child)
                    add_pieces(self._literal(doc, cursor, start, "dquote"))
                    add_raw(start, child.end_byte)
                    cursor = child.end_byte
            add_pieces(self._literal(doc, cursor, node.end_byte - 1, "dquote"))
            sees_everything = True
        else:
            if any(piece.unknown is not None or piece.positional for piece in word.pieces):
                return None
            add_pieces(word.pieces)
            sees_everything = False
        tree = _parse(bytes(data))
        return _Doc(bytes(data), tree.root_node, tuple(starts), tuple(ends)), sees_everything

    @staticmethod
    def _inner_state(state: _State, env: Dict[str, Setting], sees_everything: bool, label: str) -> _State:
        inner = state.copy()
        inner.functions = {}
        inner.local_frames = []
        if not sees_everything:
            for name, binding in state.env.items():
                if not binding.exported and binding.hidden is None:
                    inner.env[name] = _Binding(
                        (),
                        (),
                        hidden=(
                            f"${name} is set in the script but not exported, so the inner shell of `{label}` "
                            "does not see it"
                        ),
                    )
        for name, setting in env.items():
            text = setting.value if isinstance(setting.value, str) else ""
            pieces: Tuple[_Piece, ...]
            if isinstance(setting.value, Unknown):
                pieces = (_Piece(unknown=setting.value),)
            else:
                span = (setting.origin.start_byte, setting.origin.end_byte) if setting.origin else (0, 0)
                pieces = (_Piece(text, (span,) * len(text)),)
            inner.env[name] = _Binding(pieces, (setting,), exported=True)
        return inner

    # ------------------------------------------------------------------ broken continuations
    def _check_continuation(self, node: Node, ctx: _Ctx, launcher: str) -> None:
        ends = [node.end_byte]
        parent = node.parent
        while parent is not None and parent.type in ("redirected_statement", "pipeline"):
            ends.append(parent.end_byte)
            parent = parent.parent
        for end in ends:
            found = self._broken_backslash(ctx.doc, node, end)
            if found is not None:
                self._report_continuation(ctx.doc, found, launcher)
                return

    @staticmethod
    def _broken_backslash(doc: _Doc, node: Node, end: int) -> Optional[Tuple[int, int, int, bool]]:
        """(backslash, content end, line end, has comment) when the line ends in `\\ ` or `\\ # ...`."""
        data = doc.data
        line_end = data.find(b"\n", end)
        line_end = len(data) if line_end < 0 else line_end
        content_end = line_end - 1 if line_end > end and data[line_end - 1 : line_end] == b"\r" else line_end
        tail = data[end:content_end]
        stripped = tail.lstrip(b" \t")
        offset = end + len(tail) - len(stripped)
        if stripped[:1] == b"\\" and stripped[1:2] in (b" ", b"\t"):
            rest = stripped[2:].lstrip(b" \t")
            if rest == b"" or rest.startswith(b"#"):
                return offset, content_end, line_end, rest.startswith(b"#")
            return None
        if stripped and not stripped.startswith(b"#"):
            return None
        if end - node.start_byte >= 2 and data[end - 2 : end - 1] == b"\\" and data[end - 1 : end] in (b" ", b"\t"):
            backslashes = 0
            position = end - 2
            while position >= node.start_byte and data[position : position + 1] == b"\\":
                backslashes += 1
                position -= 1
            if backslashes % 2 == 1:
                return end - 2, content_end, line_end, stripped.startswith(b"#")
        return None

    def _report_continuation(self, doc: _Doc, found: Tuple[int, int, int, bool], launcher: str) -> None:
        backslash, content_end, line_end, has_comment = found
        span = doc.span(backslash, content_end)
        if span in self.reported_continuations:
            return
        self.reported_continuations.add(span)
        origin = self._origin(span)
        orphan = self._orphan_word(doc, line_end)
        what = "a comment" if has_comment else "trailing whitespace"
        message = (
            f"the `\\` at line {origin.line} is followed by {what}, so it escapes a space instead of "
            f"continuing the line: the {launcher} command ends here"
        )
        if orphan:
            message += (
                f", and the following lines (starting with `{orphan}`) never reach it; they run as a separate command"
            )
        else:
            message += " and receives a stray ' ' argument; any flag added below it would be silently dropped"
        self.diagnostics.append(Diagnostic("broken-line-continuation", message, self.source.path, origin))

    @staticmethod
    def _orphan_word(doc: _Doc, line_end: int) -> Optional[str]:
        """The first word of the next line when that line holds a command the break cut off."""
        if line_end >= len(doc.data):
            return None
        start = line_end + 1
        next_end = doc.data.find(b"\n", start)
        next_end = len(doc.data) if next_end < 0 else next_end
        first_char = start
        while first_char < next_end and doc.data[first_char : first_char + 1] in (b" ", b"\t", b"\r"):
            first_char += 1
        if first_char >= next_end:
            return None
        node = doc.root.named_descendant_for_byte_range(first_char, first_char + 1)
        while node is not None and node.type not in ("command", "program"):
            node = node.parent
        if node is None or node.type != "command" or node.start_byte != first_char:
            return None
        first = node.named_children[0] if node.named_children else None
        if first is not None and first.type == "variable_assignment":
            first = next((c for c in node.named_children if c.type == "command_name"), first)
        return _shorten(_node_text(doc, first), 40) if first is not None else None

    # ------------------------------------------------------------------ SBATCH
    def _read_sbatch(self, doc: _Doc) -> Dict[str, Setting]:
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
        tree = _parse(data)
        doc = _Doc(
            data,
            tree.root_node,
            (start, start) + tuple(range(start, end)),
            (start, start) + tuple(range(start + 1, end + 1)),
        )
        command = next((c for c in tree.root_node.named_children if c.type == "command"), None)
        if command is None:
            return
        ctx = _Ctx(doc)
        nodes = [child for child in command.named_children if child.type not in ("command_name", "comment")]
        tokens = [
            (self._value_of(self._pieces(n, ctx, _State(), False)), doc.span(n.start_byte, n.end_byte)) for n in nodes
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

"""Types that cross layers: where a value is written, what it is, and how it got there."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath
from typing import Mapping, Optional, Sequence, Tuple, Union

from trainlint.severity import Severity  # noqa: F401 - re-exported: its own module keeps a cached check light


@dataclass(frozen=True, order=True)
class Origin:
    """The exact token a value is written in. Lines and columns are 1-based, end exclusive;
    byte offsets index the file's raw bytes (end exclusive)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    start_byte: int
    end_byte: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be resolved without running something; `reason` says why."""

    reason: str

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


Scalar = Union[bool, int, float, str]
# None stands for an explicit Python `None` / JSON `null` in the source.
Value = Union[bool, int, float, str, None, Unknown]


class SourceKind(str, Enum):
    """Where a setting is written; the order of precedence lives in graph resolution."""

    LAUNCHER_FLAG = "launcher flag"
    SHELL_VARIABLE = "shell variable"
    ENVIRONMENT = "environment"
    SBATCH = "#SBATCH directive"
    CONFIG_FILE = "config file"
    CODE_KEYWORD = "keyword in code"
    DATACLASS_DEFAULT = "dataclass default"
    ARGPARSE_DEFAULT = "argparse default"
    PARAMETER_DEFAULT = "parameter default"  # a python-fire function's signature
    CODE_OVERRIDE = "set in code after parsing"
    FRAMEWORK_DEFAULT = "framework default"
    DERIVED = "derived"
    ASSUMED = "assumed"


class ReplacedBy(str, Enum):
    """Who may replace a value a script only falls back to."""

    ENVIRONMENT = "environment"  # `${GPUS:-8}`: the job's environment usually sets GPUS
    CALLER_ARGUMENT = "caller argument"  # `${1:-8}`: the script's caller passes its own
    SCRIPT_OPTION = "script option"  # set before an option loop (`case $1 in -m) MODEL=$2`) that may replace it


@dataclass(frozen=True)
class Fallback:
    """A value the script uses only when `$variable` is not given otherwise."""

    variable: str
    replaced_by: ReplacedBy


class ShardingEngine(str, Enum):
    """What shards a job's model states, for a `zero_stage` value resolution derives."""

    NONE = "none"  # no DeepSpeed config and no FSDP: plain data parallelism, whatever the stage reads
    FSDP = "fsdp"
    FSDP_NO_SHARD = "fsdp no_shard"  # FSDP that shards nothing: like plain data parallelism


@dataclass(frozen=True)
class SwitchPair:
    """A boolean option spelt as a pair of flags (click's `--x/--no-x`): the other value is written as the
    other flag, never as a value word."""

    on: str
    off: str


@dataclass(frozen=True)
class Setting:
    """A value at its origin. `via` lists the settings it was computed from (nearest first),
    e.g. the `$BATCH` token of a flag comes via the `16` of `BATCH=16`.

    `note` is prose for people and is never parsed; what code needs to know travels in typed fields:
    `written_as` is the spelling that wrote the value (`--bf16`, `zero_optimization.stage`, a keyword
    or field name), `fallback` says the value is a script's fallback and who may replace it, `engine`
    (on a derived `zero_stage`) says what shards the model states, `switch` names both flags of a
    `--x/--no-x` pair."""

    value: Value
    kind: SourceKind
    origin: Optional[Origin] = None
    text: str = ""
    via: Tuple["Setting", ...] = ()
    note: str = ""
    written_as: Optional[str] = None
    fallback: Optional[Fallback] = None
    engine: Optional[ShardingEngine] = None
    # Set when the value was written by one flag of a `--x/--no-x` pair (the spelling is in `written_as`).
    switch: Optional[SwitchPair] = None

    @property
    def written_as_flag(self) -> bool:
        """Written as a command-line option (`--bf16`), not read from one by code (`bf16=args.bf16`)."""
        return self.written_as is not None and self.written_as.startswith("--")

    def head(self) -> "Setting":
        """The first place the value was written (the end of the provenance chain)."""
        current = self
        while len(current.via) == 1:
            current = current.via[0]
        return current

    def chain(self) -> Tuple["Setting", ...]:
        """This setting and every upstream one, nearest first (depth first)."""
        out = [self]
        for upstream in self.via:
            out.extend(upstream.chain())
        return tuple(out)


class FileKind(str, Enum):
    """How a file's text is read, as its name says (`file_kind`)."""

    SHELL = "shell"
    PYTHON = "python"
    JSON = "json"  # DeepSpeed configs, accelerate configs written in JSON
    YAML = "yaml"  # recipes (LLaMA-Factory, axolotl), accelerate configs
    TOML = "toml"  # pyproject.toml pins


# The one suffix table. Shell: bash scripts and the batch-system files that are bash scripts too
# (`.slurm`, `.sbatch`), and `.zsh` for the files that are named (suppressions, fixes): the shell reader
# parses bash, and zsh expands words differently (no splitting of unquoted `$ARGS`), so a folder is not
# searched for `.zsh` files. A file without a suffix is a shell script (`scripts/train`),
# but folders are not searched for such files either: most of them (LICENSE, Makefile) are not scripts.
_SUFFIX_KINDS = {
    ".sh": FileKind.SHELL, ".bash": FileKind.SHELL, ".slurm": FileKind.SHELL, ".sbatch": FileKind.SHELL,
    ".zsh": FileKind.SHELL, "": FileKind.SHELL,
    ".py": FileKind.PYTHON, ".pyi": FileKind.PYTHON,
    ".json": FileKind.JSON,
    ".yaml": FileKind.YAML, ".yml": FileKind.YAML,
    ".toml": FileKind.TOML,
}


def file_kind(path: Union[str, PurePath]) -> Optional[FileKind]:
    """The kind of file a path names by its suffix (any case), None for a suffix trainlint has no reader for."""
    return _SUFFIX_KINDS.get(PurePath(path).suffix.lower())


def suffixes_of(*kinds: FileKind) -> frozenset:
    """The suffixes (with their dot) that name files of `kinds`, without the empty one."""
    return frozenset(suffix for suffix, kind in _SUFFIX_KINDS.items() if suffix and kind in kinds)


# What a folder is searched for: launchers and recipes (Python and JSON files are read when one refers to them).
DISCOVERED_SUFFIXES = suffixes_of(FileKind.SHELL, FileKind.YAML) - {".zsh"}

# The words quantized exports of a model are published under (`TheBloke/Llama-2-7B-AWQ`, `Qwen-7B-Chat-Int4`,
# `llama-3-8b-bnb-4bit`), by the bits their weights load in: the same architecture, stored quantized.
QUANTIZED_EXPORT_BITS = {"int8": 8, "8bit": 8, "int4": 4, "4bit": 4, "awq": 4, "gptq": 4, "nf4": 4}


class Launcher(str, Enum):
    """What starts the training processes (a recipe's framework command included). String-valued so the
    JSON output and comparisons with plain strings keep working."""

    DEEPSPEED = "deepspeed"
    TORCHRUN = "torchrun"
    TORCH_DISTRIBUTED_LAUNCH = "torch.distributed.launch"
    TORCH_DISTRIBUTED_RUN = "torch.distributed.run"
    ACCELERATE = "accelerate"
    LLAMAFACTORY_CLI = "llamafactory-cli"
    AXOLOTL = "axolotl"
    SWIFT = "swift"  # ms-swift's `swift sft|pt|rlhf --flag value ...`
    PYTHON = "python"
    # A YAML/JSON file of HF arguments checked by itself (HfArgumentParser.parse_yaml_file, TRL's `--config`):
    # the command that starts it is not in view.
    ARGUMENTS_FILE = "arguments-file"

    def __str__(self) -> str:  # f-strings print the name as written (Python 3.11 would print Launcher.X)
        return self.value


# Launchers that start one process per GPU themselves, each on the machine it runs on (the process sees its own GPU
# through LOCAL_RANK): DeepSpeed's, torchrun and its module forms, accelerate.
DISTRIBUTED_LAUNCHERS = frozenset({Launcher.DEEPSPEED, Launcher.TORCHRUN, Launcher.TORCH_DISTRIBUTED_RUN,
                                   Launcher.TORCH_DISTRIBUTED_LAUNCH, Launcher.ACCELERATE})
# Launchers whose job a recipe file holds, read by the framework the launcher names (its keys mean that framework's
# settings, whatever script starts it).
RECIPE_LAUNCHERS = frozenset({Launcher.LLAMAFACTORY_CLI, Launcher.AXOLOTL, Launcher.ARGUMENTS_FILE})


class ModelSource(str, Enum):
    """Where a model's dimensions come from (`ModelSpec.resolved_by` in trainlint.memory.catalog, which
    still carries these values as plain strings)."""

    CATALOG = "catalog"
    CONFIG_JSON = "config.json"
    NAME_SIZE = "name size"  # read from a size in the name (`-7b`): a typical shape, not the model's own


class DiagnosticKind(str, Enum):
    """What a reader (or resolution) noticed about the text itself. Every kind has an owner: a rule
    that turns it into a finding (`Rule.diagnostic_kinds`) or a channel every reporter prints
    (`trainlint.linter.DiagnosticChannel`); a test keeps the two lists complete. String-valued so the JSON output and
    older comparisons with plain strings keep working."""

    SYNTAX_ERROR = "syntax-error"
    NON_STANDARD_JSON = "non-standard-json"
    DUPLICATE_KEY = "duplicate-key"
    UNREADABLE_FILE = "unreadable-file"
    MISSING_FILE = "missing-file"
    OUTSIDE_TREE = "outside-tree"
    BROKEN_LINE_CONTINUATION = "broken-line-continuation"
    INVALID_VALUE = "invalid-value"
    UNMODELLED_CONSTRUCT = "unmodelled-construct"
    CONFIG_CALL_SPLAT = "config-call-splat"
    UNANALYSABLE_PYTHON = "unanalysable-python"
    INTERNAL_ERROR = "internal-error"


@dataclass(frozen=True)
class Diagnostic:
    """Something a reader noticed about the text itself (a parse error, a broken continuation,
    a construct it does not model). Checks turn the relevant ones into findings."""

    kind: DiagnosticKind
    message: str
    path: str
    origin: Optional[Origin] = None
    # Further places of the same defect, which one repair covers with `origin` (the later breaks of a command that
    # a broken continuation cuts into pieces).
    also_at: Tuple[Origin, ...] = ()


class Applicability(str, Enum):
    """How far a fix may be trusted, ordered display-only < unsafe < safe by `rank` (never by the string
    values): `trainlint fix` applies what is at least safe, `--unsafe-fixes` lowers the bar to unsafe,
    and a display-only fix is advice for a human. String-valued for the JSON output."""

    DISPLAY_ONLY = "display-only"
    UNSAFE = "unsafe"
    SAFE = "safe"

    @property
    def rank(self) -> int:
        return _APPLICABILITY_RANK[self.value]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank >= other.rank


_APPLICABILITY_RANK = {"display-only": 0, "unsafe": 1, "safe": 2}


class Isolation(str, Enum):
    """Which other fixes a fix may be applied with in one round of `trainlint fix` (every round is then
    written in one transaction under the lock of the scanned tree).

    EDITS: any fix whose edits do not collide with its own (a text repair, a suppression removed).
    JOB: no other fix that is also JOB for the same job: the rule chose its values from the job as it was
    (TL101's micro-batch assumes checkpointing stays off), so the next one is planned again against the job
    as the first left it."""

    EDITS = "edits"
    JOB = "job"


@dataclass(frozen=True)
class KnobChange:
    """One knob of one run changes from `old` to `new` (`remove` deletes a line-level flag)."""

    knob: str
    old: Value
    new: Value


@dataclass(frozen=True)
class Edit:
    """Replace the bytes at `origin` with `content`. Rules use it for text repairs that involve no
    knob (a broken `\\`); fixers produce them for knob changes. An edit that `creates` writes a new
    file at `origin.path`, which must not exist yet (its origin is the empty span at the start)."""

    origin: Origin
    content: str
    creates: bool = False


@dataclass(frozen=True)
class Fix:
    """A finding's remedy, in one place: how far it may be trusted, the knob changes a rule chose, the
    byte edits that apply it, and which fixes it may share a round with.

    `edits` are a rule's own text repairs until the fixers plan the fix; the planned fix carries every
    edit (the knob changes written out first, then the text repairs). `isolation` defaults to JOB for a
    fix that changes knobs and to EDITS for one that only edits text."""

    applicability: Applicability
    message: str
    changes: Tuple[KnobChange, ...] = ()
    edits: Tuple[Edit, ...] = ()
    isolation: Optional[Isolation] = None

    def __post_init__(self) -> None:
        if self.isolation is None:
            object.__setattr__(self, "isolation", Isolation.JOB if self.changes else Isolation.EDITS)


@dataclass(frozen=True)
class Related:
    origin: Origin
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    origin: Optional[Origin]
    run_id: Optional[str] = None
    related: Tuple[Related, ...] = ()
    fix: Optional[Fix] = None


@dataclass(frozen=True)
class VersionCeiling:
    """A requirement that bounds a package's version from above (`transformers<4.36`, `~=4.31.0`,
    `==4.31.*`, `<=4.35.2`): every release it admits is below `version` (or at most it, `inclusive`).
    `setting` is the version token as written, its `text` the whole requirement."""

    version: str
    inclusive: bool
    setting: Setting

    def below(self, release: str) -> bool:
        """Whether every version the requirement admits is older than `release`."""
        ceiling, wanted = parsed_release(self.version), parsed_release(release)
        if ceiling is None or wanted is None:
            return False
        return ceiling < wanted if self.inclusive else ceiling <= wanted


def parsed_release(text: object):
    """`text` as a `packaging` Version to compare releases by, or None when it names none (a pin read from a file may
    hold anything). packaging is imported here, once a job pins a package."""
    if not isinstance(text, str):
        return None
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None


def written_option(options: Sequence[Tuple[str, Optional[bool]]], name: str) -> Optional[Tuple[str, Optional[bool]]]:
    """Of an entry script's argparse options as it writes them (`RunFacts.argparse_options`), the one `name` names:
    the exact one, else the one written with other dashes and underscores (`seq-length` for `seq_length`)."""
    exact = next((option for option in options if option[0] == name), None)
    if exact is not None:
        return exact
    wanted = name.replace("-", "_")
    return next((option for option in options if option[0].replace("-", "_") == wanted), None)


@dataclass(frozen=True)
class RunFacts:
    """What the entry script does beyond plain settings; None means it could not be told."""

    entry_exists: Optional[bool] = None
    # True: a Trainer gets an eval dataset (or one is built automatically); False: none; None: unclear.
    eval_dataset: Optional[bool] = None
    eval_dataset_origin: Optional[Origin] = None
    compute_metrics: Optional[bool] = None
    # The trainer reduces logits before gathering them (`preprocess_logits_for_metrics`).
    reduces_logits: bool = False
    # The trainer is a class the repository imports from its own modules (alpaca_farm's reward `Trainer`): its
    # `compute_loss` or `prediction_step` may return something other than the model's logits for the metrics.
    own_trainer: bool = False
    # That class is no HF Trainer at all (LOMO's `LOMOTrainer`): HF's DeepSpeed integration and its consistency
    # checks never run; the loop uses the DeepSpeed config as its own code says.
    own_loop_trainer: bool = False
    # Option names the entry point's parser accepts (None when the parser is not known).
    accepted_flags: Optional[frozenset] = None
    # The subset the entry script defines itself (the rest comes from HF's TrainingArguments).
    own_flags: frozenset = frozenset()
    parse_known_args: bool = False
    # The entry point's command line is a python-fire function: a flag none of its parameters takes is left over
    # while the function runs, and fire fails on it only once the function returns.
    fire_command: bool = False
    # The flags parse_known_args leaves over may take effect (the script reads them itself, or runs code trainlint
    # has not read that may parse them): their effect is unknown.
    known_args_rest_used: bool = False
    # A data-level factor: samples per item the entry script packs beyond the per-device batch.
    batch_multiplier: Optional[Setting] = None
    # The eval dataloader is built with the train batch size (code overrides the eval batch).
    eval_uses_train_batch: bool = False
    python_files: Tuple[str, ...] = ()
    # The entry script's own flags as the launcher passes them: (name as written, the flag word), in order.
    flags: Tuple[Tuple[str, Setting], ...] = ()
    # The `transformers` version the repository pins (requirements/pyproject), when it pins one.
    transformers_pin: Optional[Setting] = None
    # Without an exact pin: the first requirement that bounds the `transformers` version from above.
    transformers_ceiling: Optional[VersionCeiling] = None
    # The `CUDA_VISIBLE_DEVICES` the launch runs with, when its environment sets it: a process count changed
    # elsewhere must stay within the devices it lists.
    visible_devices: Optional[Setting] = None
    # Flags the entry point's parser takes under another spelling: (name as written, the option it names), as
    # argparse takes a unique prefix (`--per_device_train`) and python-fire `--noname`.
    flag_spellings: Tuple[Tuple[str, str], ...] = ()
    # Flags a parser built with `allow_abbrev=False` refuses: (name as written, the option it would abbreviate).
    refused_prefixes: Tuple[Tuple[str, str], ...] = ()
    # Flags argparse refuses for their dashes and underscores: (name as written, the option as the script writes it).
    misspelled_options: Tuple[Tuple[str, str], ...] = ()
    # The entry script's argparse long options as it writes them, without the dashes (`seq-length`), each with the
    # value it sets when given bare for a switch (`store_true`: True), else None (it takes a value).
    argparse_options: Tuple[Tuple[str, Optional[bool]], ...] = ()
    # The module that wraps the model in peft adapters when turning HF gradient checkpointing on would make the first
    # backward fail: no code read makes the frozen layers' inputs require grad (trainlint.resolution.adapter_inputs).
    adapters_without_input_grads: Optional[str] = None
    # The job's code imports diffusers: what it trains may be a diffusion model (a UNet, a DiT, a video pipeline), which
    # a size in its name does not describe as the language-model shapes do.
    imports_diffusers: bool = False


@dataclass(frozen=True)
class TrainingRun:
    """One training job as the trainer will see it."""

    id: str
    path: str
    launcher: str
    origin: Optional[Origin]
    entry: Optional[str]
    settings: Mapping[str, Setting]
    pins: Mapping[str, Tuple[Setting, ...]] = field(default_factory=dict)
    recipe: Optional[str] = None  # the recipe file a command runs (a LLaMA-Factory or axolotl YAML)
    files: Tuple[str, ...] = ()
    configs: Tuple[str, ...] = ()
    diagnostics: Tuple[Diagnostic, ...] = ()
    facts: RunFacts = field(default_factory=RunFacts)
    # The command of another script that runs this launch's script with its arguments (`bash finetune.sh "$MODEL"`
    # in a wrapper): the job is the launch as that call runs it.
    called_by: Optional[Origin] = None

    def setting(self, knob: str) -> Optional[Setting]:
        return self.settings.get(knob)

    def value(self, knob: str, default: Value = None) -> Value:
        found = self.settings.get(knob)
        return default if found is None else found.value

    def known(self, knob: str):
        """The value if it is known and set, else None."""
        value = self.value(knob)
        return None if isinstance(value, Unknown) else value


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-GPU peak memory of one run, in GiB, with an interval and the terms behind it."""

    gpu: str
    capacity_gib: float
    peak_gib: float
    low_gib: float
    high_gib: float
    # Term name -> GiB: weights, gradients, optimizer, activations, logits, vision, eval, overhead.
    breakdown: Mapping[str, float]
    assumptions: Tuple[str, ...] = ()
    # Inputs that were unknown and what value was assumed instead.
    unknowns: Tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return self.peak_gib <= self.capacity_gib

    @property
    def largest_term(self) -> str:
        return max(self.breakdown, key=lambda k: self.breakdown[k]) if self.breakdown else ""


@dataclass(frozen=True)
class Report:
    """Everything a reporter formats: findings, the resolved runs and their memory estimates."""

    findings: Tuple[Finding, ...]
    runs: Tuple[TrainingRun, ...] = ()
    estimates: Mapping[str, MemoryEstimate] = field(default_factory=dict)
    # Run id -> (effective batch before, after) when fixes were applied.
    effective_batches: Mapping[str, Tuple[Value, Value]] = field(default_factory=dict)
    # Run id -> its effective batch, as the linter computed it (reporters only format it).
    run_batches: Mapping[str, Value] = field(default_factory=dict)
    # What the readers could not read statically (no rule owns it; every reporter lists it).
    unread: Tuple[Diagnostic, ...] = ()

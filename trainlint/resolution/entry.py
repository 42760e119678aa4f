"""What an entry script and the local modules it imports tell about its settings."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from trainlint.core import Diagnostic, Setting, written_option
from trainlint.knobs import HF_BOOL_FIELDS, HF_TRAINING_ARGUMENTS_FIELDS
from trainlint.readers.facts import (
    DEEPSPEED_ARGUMENTS_OWNER,
    FIRE_OWNER,
    LEGACY_PPO_CONFIG,
    TRL_CONFIGS,
    ClassHeaders,
    DataclassInfo,
    FieldDefault,
    Keyword,
    Override,
    PythonModule,
    StepGate,
    TrainerCall,
)
from trainlint.readers.source import display_path, remembered, safe_resolve
from trainlint.resolution.workspace import Workspace, held_elsewhere

MAX_DEPTH = 3
MAX_MODULES = 40
_LIGHTNING = ("pl", "L", "lightning", "pytorch_lightning")
_HF_ARGUMENT_BASES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                      "ORPOConfig", "KTOConfig", "RewardConfig", "PPOConfig")
# The argument classes whose every field trainlint knows (HF_TRAINING_ARGUMENTS_FIELDS); the others
# (TRL configs, Seq2SeqTrainingArguments) add fields of their own (`--beta`, `--loss_type`).
_FULLY_KNOWN_BASES = ("TrainingArguments",)
# Bases that add no dataclass field.
_FIELDLESS_BASES = ("object", "ABC", "Generic")


def _unique_prefix_of(name: str, options: frozenset) -> Optional[str]:
    """The one option `name` is a prefix of, as argparse matches an abbreviation; None when none or several."""
    matches = [option for option in options if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def _last(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


@dataclass
class EntryFacts:
    path: Path
    modules: List[PythonModule] = field(default_factory=list)
    # Fields of the argument dataclasses the parser is given, by attribute name.
    fields: Dict[str, FieldDefault] = field(default_factory=dict)
    # argparse arguments by dest, and option string -> dest.
    argparse: Dict[str, FieldDefault] = field(default_factory=dict)
    option_dest: Dict[str, str] = field(default_factory=dict)
    config_keywords: List[Keyword] = field(default_factory=list)
    overrides: List[Override] = field(default_factory=list)
    trainer_calls: List[TrainerCall] = field(default_factory=list)
    other_keywords: List[Tuple[str, Keyword]] = field(default_factory=list)
    parse_known_args: bool = False
    # The script's python-fire function takes `**kwargs`: fire hands it any flag.
    takes_any_flag: bool = False
    # The flags parse_known_args leaves over may still take effect: a module reads them itself, or the script
    # runs code trainlint has not read, which may parse the command line again.
    known_args_rest_used: bool = False
    inherits_hf: bool = False  # a parser dataclass derives from TrainingArguments (all HF flags accepted)
    # Trainer classes the scripts import from the repository's own modules (OpenRLHF's `SFTTrainer(ABC)`,
    # LLaVA's `LLaVATrainer(Trainer)`): whether they are HF's Trainer is not known from the call.
    local_trainers: Set[str] = field(default_factory=set)
    # When the job's Trainer takes a step with no backward pass (trainlint.readers.python.step_gates).
    step_gates: Tuple[StepGate, ...] = ()
    has_parser: bool = False
    # A function the script runs, imported from the repository, whose definition trainlint has not read.
    unread_call: Optional[str] = None
    # A function the script hands its argument parser to, whose definition none of the modules read holds: it
    # may add options, so the set of accepted flags is incomplete.
    unread_parser_helper: Optional[str] = None
    # `transformers` is a package of the repository itself (a fork it installs, as microsoft/LoRA's NLU examples
    # do): its TrainingArguments may have fields HF's has not.
    own_transformers: bool = False
    # Options are added to an argparse parser that none of the modules read builds (an `extra_args_provider(parser)`
    # handed to a framework's own argument code): that parser has options of its own.
    parser_built_elsewhere: bool = False
    # A class given to HfArgumentParser that is neither found in the scanned modules nor HF's own:
    # the set of accepted flags is then incomplete.
    unresolved_parser_class: bool = False
    # A parser class of the project's own built on HfArgumentParser (`H4ArgumentParser((ModelArguments, ...))`):
    # its dataclasses' fields are the script's arguments, but its own methods may parse flags HF's would refuse.
    derived_parser: Optional[str] = None
    # The script's TRL parser takes a file of arguments from `--config` (`parse_args_and_config`).
    reads_config_flag: bool = False
    # The TRL config the training arguments are (`SFTConfig`: a parser class, the base of one, or a config call),
    # whose defaults differ from TrainingArguments' by release.
    trl_config: Optional[str] = None
    # Fields of parser classes that are not TrainingArguments (model and data arguments).
    plain_fields: Dict[str, FieldDefault] = field(default_factory=dict)
    # The repository's own Trainer the job trains with, when it is no HF Trainer at all (LOMO's `LOMOTrainer`, a
    # class on no base): its optimizer and its sharding are whatever its code builds.
    own_loop_trainer: Optional[TrainerCall] = None
    diagnostics: List[Diagnostic] = field(default_factory=list)

    @property
    def is_training(self) -> bool:
        return bool(self.has_parser and (self.inherits_hf or self.config_keywords) or self.config_keywords
                    or self.hf_trainer_calls())

    @property
    def uses_hf_trainer(self) -> bool:
        """Whether the job takes TrainingArguments' defaults: its parser or a config call says so, or it calls a
        Trainer that is not a class of the repository's own (which may be anything)."""
        return self.inherits_hf or bool(self.config_keywords) or any(
            _last(call.callee) not in self.local_trainers for call in self.hf_trainer_calls())

    @property
    def calls_own_trainer(self) -> bool:
        """Whether a Trainer the job builds is a class the repository imports from its own modules."""
        return any(_last(call.callee) in self.local_trainers for call in self.trainer_calls)

    def hf_trainer_calls(self) -> List[TrainerCall]:
        """Trainer calls that are HF's (or a subclass's): a Lightning `Trainer` has none of HF's
        arguments or defaults, so it must not bring them in."""
        lightning = {name for module in self.modules for info in module.imports
                     if info.module.split(".")[0] in _LIGHTNING for _name, name in info.bindings()}
        # TRL's PPOTrainer before 0.12, built on the old PPOConfig, is no subclass of HF's Trainer.
        legacy_ppo = any(callee == LEGACY_PPO_CONFIG for callee, _keyword in self.other_keywords)
        return [call for call in self.trainer_calls
                if call.callee.split(".")[0] not in _LIGHTNING and call.callee not in lightning
                and not (legacy_ppo and _last(call.callee) == "PPOTrainer")]

    def accepted_flags(self) -> Optional[frozenset]:
        if not self.has_parser or self.takes_any_flag or self.unresolved_parser_class \
                or self.unread_parser_helper is not None or self.derived_parser is not None \
                or self.parser_built_elsewhere or (self.inherits_hf and self.own_transformers):
            return None
        names = set(self.fields) | set(self.option_dest)
        if self.inherits_hf:
            names |= HF_TRAINING_ARGUMENTS_FIELDS
        return frozenset(names)

    def full_option(self, name: str) -> Optional[str]:
        """The option a flag written `--name` names under another spelling, or None (an exact name, or none):
        argparse's unique prefix of a long option, unless the parser is built with `allow_abbrev=False`;
        python-fire's `--noname` (the parameter turned off) and single letter (the one parameter it starts)."""
        if self.fire_command:
            accepted = self.accepted_flags() or frozenset()
            normalized = name.replace("-", "_")
            if normalized.startswith("no") and normalized[2:] in accepted and normalized not in accepted:
                return normalized[2:]
            return self._prefix_of(name) if len(normalized) == 1 else None
        return None if self.refuses_abbreviations else self._prefix_of(name)

    def refused_prefix(self, name: str) -> Optional[str]:
        """The option a flag would abbreviate, had the parser not been built with `allow_abbrev=False`."""
        return self._prefix_of(name) if self.refuses_abbreviations and not self.fire_command else None

    def misspelled_option(self, name: str) -> Optional[str]:
        """The argparse option a flag names only with its dashes and underscores swapped (`--seq_length` for
        `--seq-length`), which argparse refuses: it takes an option as written. None when the flag is written as an
        option, names a dataclass field (HfArgumentParser takes both spellings of those) or a python-fire parameter."""
        normalized = name.replace("-", "_")
        dataclass_field = normalized in self.fields or (self.inherits_hf and normalized in HF_TRAINING_ARGUMENTS_FIELDS)
        if self.fire_command or dataclass_field:
            return None
        found = written_option(self.argparse_options(), name)
        return found[0] if found is not None and found[0] != name else None

    @property
    def refuses_abbreviations(self) -> bool:
        """The script's parser is built with `allow_abbrev=False`."""
        return any(module.refuses_abbreviations for module in self.modules)

    def _prefix_of(self, name: str) -> Optional[str]:
        """The one accepted option a flag that names none exactly is a prefix of (as the script spells it, when it
        does: `--micro-batch-size`), or None."""
        accepted = self.accepted_flags()
        normalized = name.replace("-", "_")
        if accepted is None or normalized in accepted or name in accepted:
            return None
        return _unique_prefix_of(name, accepted) or _unique_prefix_of(normalized, accepted)

    @property
    def fire_command(self) -> bool:
        """The script's command line is a python-fire function's signature."""
        return any(arg.owner == FIRE_OWNER for arg in self.argparse.values())

    def argparse_options(self) -> Tuple[Tuple[str, Optional[bool]], ...]:
        """The script's argparse long options as written, without the dashes, each with the value it sets when given
        bare for a switch (`store_true`, `store_false`), else None."""
        return tuple(sorted((option[2:], arg.switch_sets) for arg in self.argparse.values()
                            for option in arg.option_strings if option.startswith("--")))

    def own_flags(self) -> frozenset:
        """Flags the script defines itself (its dataclass fields and argparse options)."""
        return frozenset(set(self.fields) | set(self.option_dest))

    def is_bool(self, name: str) -> bool:
        name = name.replace("-", "_")
        if not self.fire_command:
            name = self.full_option(name) or name  # `--gradient_check` takes no value when the option takes none
        found = self.fields.get(name)
        if found is not None:
            return "bool" in found.type_name
        dest = self.option_dest.get(name)
        if dest is not None:
            arg = self.argparse.get(dest)
            if arg is not None and arg.owner == FIRE_OWNER:
                return False  # fire gives a flag the word after it, whatever its type, unless that word is a flag
            return arg is not None and ("bool" in arg.type_name or arg.type_name.startswith("store_"))
        return name in HF_BOOL_FIELDS


@dataclass(frozen=True)
class ModuleEntry:
    """Where `python -m NAME` (or `accelerate launch -m NAME`) finds its code."""

    path: Optional[Path]  # the file that runs, when it is in the repository
    exists: Optional[bool]  # False: its package is in the repository but the module is not; None: not told
    shown: str  # how reports name the entry
    # Not found from the launcher's folders but held by another folder of the tree, where the launch may be meant
    # to run: the other files it names relatively may be there too.
    held_elsewhere: bool = False


def locate_module(workspace: Workspace, dotted: str, importer: Path, dirs: Sequence[Path],
                  cwd_unknown: bool = False) -> ModuleEntry:
    """The file a module entry runs. A package runs its `__main__.py`. A module whose top-level
    package is not in the repository comes from an installed package (`-m lmms_eval`): not missing,
    just unknown; one whose package is here but which is not, is missing."""
    found = workspace.module(dotted, importer, dirs)
    if found is not None:
        main = found.parent / "__main__.py"
        if found.name == "__init__.py" and main.is_file():
            found = main
        return ModuleEntry(found, True, display_path(found))
    top = dotted.split(".")[0]
    if cwd_unknown:
        # `python -m` looks in the directory it runs in, which a `cd` trainlint cannot follow chose.
        return ModuleEntry(None, None, f"{dotted} (run from a directory not known statically: its arguments "
                                       "are unknown)")
    if workspace.module(top, importer, dirs) is not None or any(_holds_python(Path(d) / top) for d in dirs):
        return ModuleEntry(None, False, dotted)
    return ModuleEntry(None, None, f"{dotted} (a module from outside the repository: its arguments are unknown)")


def _holds_python(folder: Path) -> bool:
    """Whether `folder` can be the package a module entry names: a folder of shell scripts that shares the
    package's name (`scripts/safe_rlhf_v/` beside an installed `safe_rlhf_v`) is not it."""
    try:
        return folder.is_dir() and any(child.suffix == ".py" or (child / "__init__.py").is_file()
                                       for child in folder.iterdir())
    except OSError:
        return False


def locate_script(workspace: Workspace, written: str, dirs: Sequence[Path], cwd_unknown: bool = False) -> ModuleEntry:
    """The file a launcher runs. One in a home folder (`~/projects/transformers/run_glue.py`) is another
    checkout on the user's machine: unknown here, not missing."""
    found = workspace.find(written, dirs)
    if found is not None:
        return ModuleEntry(found, None, display_path(found))  # exists=True once it is read as Python
    if written.startswith("~"):
        return ModuleEntry(None, None, f"{written} (outside the repository: its arguments are unknown)")
    if cwd_unknown and not written.startswith("/"):
        # Relative to a directory a `cd` trainlint cannot follow chose: it may be there.
        return ModuleEntry(None, None, f"{written} (relative to a directory not known statically: its arguments "
                                       "are unknown)")
    holder = held_elsewhere(workspace, written)
    if holder is not None:
        # R1-V's `src/scripts/*.sh` run `src/open_r1/grpo.py`, which `src/r1-v/` holds: its README has them
        # started from there.
        return ModuleEntry(None, None, f"{written} (not found from the launcher's folders; {display_path(holder)} "
                                       "holds it, where the launch may be meant to run: its arguments are unknown)",
                           held_elsewhere=True)
    return ModuleEntry(None, False, written)


def _needed_names(module: PythonModule) -> set:
    """Names whose definitions can carry settings: the functions the module runs or hands the parsed arguments to,
    the argument classes its parsers are given and the bases of its dataclasses."""
    needed = set(module.main_calls) | set(module.parser_helpers) | set(module.namespace_helpers)
    needed.update(call.splat_builder for call in module.trainer_calls if call.splat_builder)
    for name in (*(name for parser in module.hf_parsers for name in parser),
                 *(base for info in module.dataclasses for base in info.bases)):
        # `dpo_utils.DPOExperimentConfig`: the class, and the module name it is reached through (`from open_instruct
        # import dpo_utils`).
        needed.update((_last(name), name.split(".", 1)[0]))
    defined = {info.name for info in module.dataclasses}
    return {name for name in needed if name not in defined}


def import_roots(path: Path, roots: Sequence[Path]) -> List[Path]:
    """Where the imports of the module at `path` are looked for: its own folder first (a script run directly imports
    its folder's modules by absolute name, `from trainer import X`), then `roots`."""
    return [safe_resolve(path).parent, *roots]


def local_imports(module: PythonModule, path: Path, workspace: Workspace, roots: Sequence[Path]) -> List[Path]:
    """The local modules that define what `module` needs. Following every import would read a
    model's whole code base (slowly) for nothing."""
    needed = _needed_names(module)
    roots = import_roots(path, roots)
    found = []
    for info in module.imports:
        wanted = [name for name, bound in info.bindings() if name in needed or bound in needed or name == "*"]
        if not info.names and info.module.split(".", 1)[0] in needed:
            # `import configs` ... `(configs.FinetuneArguments,)`: the module is what the name reaches.
            target = workspace.module(info.module, path, roots)
            if target is not None:
                found.append(target)
            continue
        if not wanted:
            continue
        target = workspace.module(info.module, path, roots)
        if target is not None:
            found.append(target)
        # `from pkg import submodule` imports a module too.
        for name in wanted:
            sub = workspace.module(f"{info.module}.{name}", path, roots) if name != "*" else None
            if sub is not None:
                found.append(sub)
    return found


def collect(entry: Path, workspace: Workspace, roots: Sequence[Path]) -> EntryFacts:
    """Read the entry script and, breadth first, the local modules it imports (within the repository)
    that define what it needs. Worked out once per scan for each entry and folders: InternVL's 291 launches run
    a few dozen scripts. The facts are shared, so no caller changes them."""
    key = (workspace, str(entry), tuple(str(root) for root in roots))  # the workspace itself: no id is reused
    return remembered("entry-facts", key, lambda: _collect(entry, workspace, roots))


def _collect(entry: Path, workspace: Workspace, roots: Sequence[Path]) -> EntryFacts:
    facts = EntryFacts(entry)
    seen = {safe_resolve(entry)}
    frontier = [entry]
    read: List[Tuple[PythonModule, Path]] = []
    for _depth in range(MAX_DEPTH + 1):
        next_frontier = []
        for path in frontier:
            module = workspace.python(path)
            facts.modules.append(module)
            read.append((module, path))
            if len(seen) >= MAX_MODULES:
                continue
            facts.local_trainers.update(_local_trainer_names(module, path, workspace, roots))
            facts.own_transformers = facts.own_transformers or _imports_own_transformers(module, path, workspace, roots)
            for target in local_imports(module, path, workspace, roots):
                if safe_resolve(target) not in seen and "site-packages" not in target.parts:
                    seen.add(safe_resolve(target))
                    next_frontier.append(target)
        frontier = next_frontier
    _merge(facts)
    facts.own_loop_trainer = _own_loop_trainer(facts, read, workspace, roots)
    facts.step_gates = _step_gates(facts, read, workspace, roots) if facts.trainer_calls else ()
    facts.unread_call = _unread_call(facts, workspace, roots)
    defined = {name for module in facts.modules for name in module.defines}
    facts.unread_parser_helper = next((name for module in facts.modules for name in module.parser_helpers
                                       if name not in defined), None)
    if facts.parse_known_args and facts.unread_call is not None:
        facts.known_args_rest_used = True  # that code may parse what parse_known_args leaves over
    return facts


def _unread_call(facts: EntryFacts, workspace: Workspace, roots: Sequence[Path]) -> Optional[str]:
    """A function the entry script calls when it runs, imported from the repository's own modules, whose definition
    none of the modules read holds: it may parse the command line itself (ms-swift's `sft.py` parses one flag with
    parse_known_args, then calls `sft_main()`, which its package exports lazily and which parses them all)."""
    if not facts.modules:
        return None
    entry = facts.modules[0]
    defined = {name for module in facts.modules for name in module.defines}
    roots = import_roots(facts.path, roots)
    for call in entry.main_calls:
        head = call.partition(".")[0]
        if _last(call) in defined:
            continue
        for info in entry.imports:
            if any(bound == head for _name, bound in info.bindings()) \
                    and workspace.module(info.module, facts.path, roots) is not None:
                return call
    return None


def _imports_own_transformers(module: PythonModule, path: Path, workspace: Workspace, roots: Sequence[Path]) -> bool:
    """Whether `module` imports `transformers` and the repository holds that package itself."""
    if not any(info.module.split(".")[0] == "transformers" for info in module.imports):
        return False
    return workspace.module("transformers", path, import_roots(path, roots)) is not None


def _local_trainer_names(module: PythonModule, path: Path, workspace: Workspace, roots: Sequence[Path]) -> Set[str]:
    """The Trainer classes `module` calls that are the repository's own: imported from a module of the
    repository, or defined in `module` on such classes (or on none) rather than on a Trainer from outside
    (`class SupervisedTrainer(SupervisedTrainerBase)`, its base imported from the repository, is no HF Trainer
    that is known; `class MyTrainer(transformers.Trainer)` is one)."""
    called = {_last(call.callee) for call in module.trainer_calls}
    defined = dict(module.trainer_classes)
    roots = import_roots(path, roots)
    local = set()
    repository_names = set()
    for info in module.imports:
        bound = {name for _name, name in info.bindings()}
        if bound & (called | {_last(base) for bases in defined.values() for base in bases}) \
                and workspace.module(info.module, path, roots) is not None:
            repository_names |= bound
    local |= called & repository_names
    local |= {name for name in called if name in defined and not _reaches_outside(name, defined, repository_names)}
    return local


def _reaches_outside(name: str, defined: Dict[str, Tuple[str, ...]], repository_names: Set[str] = frozenset()) -> bool:
    """Whether the bases of class `name` (a class of `defined`, its bases as written) reach a class from outside:
    HF's Trainer, TRL's, or one trainlint cannot follow. Bases `repository_names` binds are the repository's own."""
    seen = {name}
    pending = [name]
    while pending:
        for base in defined[pending.pop()]:
            last = _last(base)
            if last in seen or last in _FIELDLESS_BASES or last in repository_names:
                continue
            if last not in defined:
                return True
            seen.add(last)
            pending.append(last)
    return False


def _own_loop_trainer(facts: EntryFacts, read: Sequence[Tuple[PythonModule, Path]], workspace: Workspace,
                      roots: Sequence[Path]) -> Optional[TrainerCall]:
    """The Trainer call of the job when every Trainer it builds is a class of the repository's own whose bases, as
    far as the repository defines them, never reach a class from outside (HF's Trainer, TRL's, or one trainlint
    cannot follow). A class whose definition is not found is taken for an HF Trainer: nothing changes then."""
    calls = [call for call in facts.trainer_calls if _last(call.callee) in facts.local_trainers]
    if not calls or len(calls) != len(facts.trainer_calls):
        return None
    defined: Dict[str, Tuple[str, ...]] = {}
    for module, _path in read:
        for name, bases in module.trainer_classes:
            defined.setdefault(name, bases)
    missing = {_last(call.callee) for call in calls} - set(defined)
    for headers in _imported_class_headers(missing, read, workspace, roots):
        for name, bases in headers.bases.items():
            defined.setdefault(name, bases)

    if any(_last(call.callee) not in defined or _reaches_outside(_last(call.callee), defined) for call in calls):
        return None
    return calls[0]


def _imported_class_headers(names: Set[str], read: Sequence[Tuple[PythonModule, Path]], workspace: Workspace,
                            roots: Sequence[Path]) -> Iterator[ClassHeaders]:
    """The class statements of the modules `names` are imported from, when the reading did not follow them (a
    module that holds no setting, as a Trainer's often does not)."""
    for module, path in read:
        for info in module.imports:
            if names & {bound for _name, bound in info.bindings()}:
                target = workspace.module(info.module, path, import_roots(path, roots))
                if target is not None:
                    yield workspace.class_headers(target)


def _step_gates(facts: EntryFacts, read: Sequence[Tuple[PythonModule, Path]], workspace: Workspace,
                roots: Sequence[Path]) -> Tuple[StepGate, ...]:
    """The forward-only step gates of the Trainer classes the job builds, from the modules read or from the class
    statements of the modules those classes are imported from."""
    called = {_last(call.callee) for call in facts.trainer_calls}
    gates = [gate for module, _path in read for gate in module.step_gates]
    defined = {name for module, _path in read for name in module.defines}
    gates += [gate for headers in _imported_class_headers(called - defined, read, workspace, roots)
              for gate in headers.step_gates]
    return tuple(gate for gate in gates if gate.trainer_class in called)


def _merge(facts: EntryFacts) -> None:
    classes: Dict[str, DataclassInfo] = {}
    for module in facts.modules:
        for info in module.dataclasses:
            classes.setdefault(info.name, info)
    parser_classes: List[str] = []
    for module in facts.modules:
        for parser in module.hf_parsers:
            parser_classes.extend(_last(name) for name in parser)
        facts.derived_parser = facts.derived_parser or next(iter(module.derived_parsers), None)
        facts.reads_config_flag = facts.reads_config_flag or module.reads_config_flag
    # The arguments deepspeed.add_config_arguments adds do not make the parser known: the script's
    # own may come from a helper outside the scanned modules (`parser = get_argument_parser()`).
    own_options = any(arg.owner != DEEPSPEED_ARGUMENTS_OWNER for m in facts.modules for arg in m.argparse_args)
    facts.has_parser = bool(parser_classes) or own_options
    facts.parser_built_elsewhere = own_options and not parser_classes \
        and not any(module.builds_parser for module in facts.modules)
    for name in parser_classes:
        info = classes.get(name)
        facts.trl_config = facts.trl_config or next(
            (base for base in [name, *(_last(b) for b in (_ancestors(info, classes) if info else ()))]
             if base in TRL_CONFIGS), None)
        if info is None:
            # Not defined in the scanned modules: HF's own argument class, or one we cannot see.
            facts.inherits_hf = facts.inherits_hf or name in _HF_ARGUMENT_BASES
            facts.unresolved_parser_class = facts.unresolved_parser_class or name not in _FULLY_KNOWN_BASES
            continue
        ancestors = [_last(base) for base in _ancestors(info, classes)]
        hf_bases = [base for base in ancestors if base in _HF_ARGUMENT_BASES]
        derives_hf = bool(hf_bases)
        facts.inherits_hf = facts.inherits_hf or derives_hf
        if any(base not in _FULLY_KNOWN_BASES for base in hf_bases):
            facts.unresolved_parser_class = True
        # A base that is neither a dataclass of the scanned modules nor HF's own (one from a package outside
        # the repository, or a name trainlint cannot follow) may bring fields of its own.
        if any(base not in classes and base not in _HF_ARGUMENT_BASES and base not in _FIELDLESS_BASES
               for base in ancestors):
            facts.unresolved_parser_class = True
        for owner in [*(classes[b] for b in _local_bases(info, classes)), info]:
            for item in owner.fields:
                facts.fields[item.name] = item
                if not derives_hf:
                    facts.plain_fields[item.name] = item
    for module in facts.modules:
        for arg in module.argparse_args:
            facts.argparse.setdefault(arg.name, arg)
            for option in arg.option_strings:
                facts.option_dest.setdefault(option.lstrip("-"), arg.name)
                facts.option_dest.setdefault(option.lstrip("-").replace("-", "_"), arg.name)
        for call in module.config_calls:
            facts.config_keywords.extend(call.keywords)
            facts.trl_config = facts.trl_config or (_last(call.callee) if _last(call.callee) in TRL_CONFIGS else None)
        facts.overrides.extend(module.overrides)
        facts.trainer_calls.extend(module.trainer_calls)
        facts.other_keywords.extend(module.other_keywords)
        facts.parse_known_args = facts.parse_known_args or module.parse_known_args
        facts.takes_any_flag = facts.takes_any_flag or module.takes_any_flag
        facts.known_args_rest_used = facts.known_args_rest_used or module.known_args_rest_used
        facts.diagnostics.extend(module.diagnostics)
    _bind_call_arguments(facts)


def _bind_call_arguments(facts: EntryFacts) -> None:
    """Keywords that read a function's parameter take the constant the entry script passes it when it runs (LLaVA's
    `train_mem.py` calls `train(attn_implementation="flash_attention_2")`, and `train()` hands that parameter to
    `from_pretrained`); the entry is the only caller whose arguments are known to run."""
    if not facts.modules:
        return
    passed = {(function, name): setting for function, name, setting in facts.modules[0].main_call_arguments}
    # A branch on a parameter (`if qlora:`) the call fills from a parsed argument (`qlora=training_args.qlora`)
    # tests that argument.
    referenced = {(function, name): read for function, name, read in facts.modules[0].main_call_references}
    if not passed and not referenced:
        return

    def bound_test(test: Keyword) -> Keyword:
        read = referenced.get(test.parameter) if test.parameter is not None else None
        return replace(test, name=read, reference=read, parameter=None) if read is not None else test

    def bound(keyword: Keyword) -> Keyword:
        gates = tuple(replace(gate, tests=tuple(bound_test(test) for test in gate.tests)) for gate in keyword.gates)
        keyword = replace(keyword, gates=gates) if gates != keyword.gates else keyword
        argument = passed.get(keyword.parameter) if keyword.parameter is not None else None
        if argument is None:
            return keyword
        # The value's place is the call's argument: where to edit it.
        return replace(keyword, setting=replace(argument, kind=keyword.setting.kind, note=keyword.setting.note,
                                                written_as=keyword.setting.written_as), parameter=None)

    facts.config_keywords[:] = [bound(keyword) for keyword in facts.config_keywords]
    facts.other_keywords[:] = [(callee, bound(keyword)) for callee, keyword in facts.other_keywords]


def _local_bases(info: DataclassInfo, classes: Dict[str, DataclassInfo]) -> List[str]:
    """Base dataclasses defined in the scanned modules, farthest first (their fields are overridden)."""
    out: List[str] = []
    for base in info.bases:
        name = _last(base)
        if name in classes and name != info.name:
            out = _local_bases(classes[name], classes) + [name] + out
    return out


def _ancestors(info: DataclassInfo, classes: Dict[str, DataclassInfo]) -> List[str]:
    out = list(info.bases)
    for base in info.bases:
        name = _last(base)
        if name in classes and name != info.name:
            out.extend(_ancestors(classes[name], classes))
    return out


def eval_dataset_fact(facts: EntryFacts) -> Tuple[Optional[bool], Optional[Setting]]:
    """Whether the trainer is given an eval dataset: False when every trainer call passes None
    (or nothing), True when one passes something, None when it cannot be told."""
    if not facts.trainer_calls:
        return None, None
    verdicts = []
    where = None
    built: Dict[str, Setting] = {}
    for module in facts.modules:  # the entry script first, then the modules it imports
        for name, setting in module.returned_eval_datasets:
            built.setdefault(name, setting)
    for call in facts.trainer_calls:
        setting = call.eval_dataset
        if setting is None and call.splat_builder is not None:
            # `**make_data_module(...)` imported from another module of the repository.
            setting = built.get(call.splat_builder)
        if setting is None:
            verdicts.append(None if call.has_splat else False)
        elif setting.value is None:
            verdicts.append(False)
            where = setting
        else:
            verdicts.append(None)
            where = setting
    if all(v is False for v in verdicts):
        return False, where
    return None, where

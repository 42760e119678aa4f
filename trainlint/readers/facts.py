"""What each reader hands to the settings graph. Readers know formats, never rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

from trainlint.core import Diagnostic, Launcher, Origin, Setting, Value
from trainlint.knobs import K

# The callee of peft's adapter config, recorded with its keywords (the Python reader keeps them; resolution reads them).
LORA_CONFIG = "LoraConfig"
# LoraConfig's keywords the memory model reads, and the knob each one writes.
ADAPTER_KEYWORDS = {"r": K.LORA_R, "modules_to_save": K.LORA_MODULES_TO_SAVE}
# The TrainingArguments field scripts test before they train (`if training_args.do_train: trainer.train()`).
DO_TRAIN = "do_train"
# FieldDefault.owner of the arguments DeepSpeed adds: they are DeepSpeed's, not the script's settings.
DEEPSPEED_ARGUMENTS_OWNER = "deepspeed.add_config_arguments"
# FieldDefault.owner of the parameters of a function python-fire makes the command line of (`fire.Fire(train)`):
# each is a flag, `--micro_batch_size 8` or `--micro-batch-size=8`, defaulting to the signature's value.
FIRE_OWNER = "fire.Fire"
# The callee recorded with the keywords of a config builder whose result reaches deepspeed.initialize.
DEEPSPEED_ENGINE_CALLEE = "deepspeed.initialize"


# ---------------------------------------------------------------- shell
@dataclass(frozen=True)
class Launch:
    """A command that starts training: `deepspeed train.py --flags`, `torchrun ... -m pkg.train`.

    Every argument is a Setting whose value is the word after expansion (a str, or Unknown),
    whose origin is the token as written, and whose `via` names the variable assignments it came
    from. An unquoted `$DISTRIBUTED_ARGS` is split into one Setting per word, each with the origin
    of that word inside the assignment's string.
    """

    launcher: Launcher
    origin: Origin  # the whole command
    launcher_args: Tuple[Setting, ...]  # words between the launcher and the entry point
    entry: Optional[Setting]  # the script path (or module name when entry_is_module)
    entry_is_module: bool
    script_args: Tuple[Setting, ...]
    # Environment visible to the launched process: exported variables and command prefixes.
    env: Mapping[str, Setting] = field(default_factory=dict)
    # Directory the command runs in, relative to the script's directory, when a `cd` is known.
    cwd: Optional[str] = None
    # A `cd` into a directory not known statically came before (`cd "$(dirname "$0")/../sft"`): a relative
    # path the command names may be anywhere, so one not found is unknown rather than missing.
    cwd_unknown: bool = False
    # `"$@"`/`$*` among the arguments: the caller may add flags trainlint cannot see.
    passthrough: bool = False
    # Wrapped as `srun ... bash -c '...'` or similar: only exported variables reach it.
    wrapper: Optional[str] = None
    # The wrapper's own options as written (`srun --ntasks=${GPUS} ...`, `mpirun -np 8 ...`).
    wrapper_args: Tuple[Setting, ...] = ()
    # Files the script writes before this command (output redirections: `cat <<EOF > ds_config.json`), each
    # relative to the script's folder like `cwd` (as written after a `cd` trainlint cannot follow): such a file
    # exists when the command runs, whether or not the tree holds it, and trainlint does not read what it holds.
    written: Tuple[str, ...] = ()
    # The calls of the functions around the command that gave them arguments (`train 7b 2048`), outermost first,
    # when the function runs it with other values from another call: each call is a launch of its own.
    called_at: Tuple[Origin, ...] = ()


@dataclass(frozen=True)
class Flow:
    """The value written at `source` is used at `target` (a `$VAR` expansion, anywhere)."""

    source: Origin
    target: Origin


@dataclass(frozen=True)
class ScriptCall:
    """`bash scripts/train/finetune.sh "$DATA" 2048`: another script run with arguments, which it reads as `$1`,
    `$2`, .... `arguments` are the words in order, as far as their positions are certain: `complete` is False when a
    word may split into several (an unquoted value trainlint cannot tell), so those after it are left out."""

    script: Setting
    arguments: Tuple[Setting, ...]
    complete: bool
    origin: Origin  # the whole command
    cwd: Optional[str] = None  # as Launch.cwd
    cwd_unknown: bool = False


@dataclass(frozen=True)
class ShellScript:
    path: str
    launches: Tuple[Launch, ...]
    # `#SBATCH --nodes=2`, `--gres=gpu:8`, `--ntasks-per-node=8` keyed by option name without dashes.
    sbatch: Mapping[str, Setting] = field(default_factory=dict)
    flows: Tuple[Flow, ...] = ()
    diagnostics: Tuple[Diagnostic, ...] = ()
    # Other scripts it runs with arguments (`bash finetune.sh "$MODEL" 2048`), in the order of the file.
    calls: Tuple[ScriptCall, ...] = ()


# ---------------------------------------------------------------- python
# TRL's trainer config classes: calls whose keywords are TrainingArguments fields, and argument classes built on it.
TRL_CONFIGS = frozenset(
    {
        "SFTConfig",
        "DPOConfig",
        "GRPOConfig",
        "PPOConfig",
        "RewardConfig",
        "ORPOConfig",
        "KTOConfig",
        "CPOConfig",
        "RLOOConfig",
        "OnlineDPOConfig",
        "GKDConfig",
        "PRMConfig",
        "XPOConfig",
        "NashMDConfig",
        "BCOConfig",
        "IterativeSFTConfig",
    }
)

@dataclass(frozen=True)
class FieldDefault:
    """A dataclass field or an argparse argument, with its default."""

    name: str  # the attribute name (argparse: dest; fire: the parameter)
    default: Optional[Setting]  # None when the field has no default (required)
    owner: str  # class name, "argparse", DEEPSPEED_ARGUMENTS_OWNER or FIRE_OWNER
    option_strings: Tuple[str, ...] = ()  # argparse: ("--eval_iters",); dataclass: ()
    type_name: str = ""  # annotation or argparse type= as written: "int", "bool", "Optional[str]"
    origin: Optional[Origin] = None  # the field / add_argument call
    # argparse's `store_true` / `store_false`: the value the option sets when it is given, bare; None for an option
    # that takes a value (a bare switch cannot carry one: `--use-lora True` is refused at start).
    switch_sets: Optional[bool] = None


@dataclass(frozen=True)
class DataclassInfo:
    name: str
    bases: Tuple[str, ...]  # as written: "transformers.TrainingArguments", "TrainingArguments"
    fields: Tuple[FieldDefault, ...]
    origin: Origin


@dataclass(frozen=True)
class Keyword:
    """A keyword argument of a call in code. When the value is read from a parsed namespace
    (`eval_steps=args.eval_iters`, `fp16=not args.bf16`), `reference` names the attribute and the
    graph resolves it; `negated` says a `not` was applied."""

    name: str
    setting: Setting
    reference: Optional[str] = None
    negated: bool = False
    # The branches around the call that gives it (`if args.use_qlora: BitsAndBytesConfig(load_in_4bit=True)`),
    # innermost first: the keyword is given when every one holds. Read for the calls outside the trainer config
    # (`other_keywords`); the branches of a trainer config call are read as overrides.
    gates: Tuple["Gate", ...] = ()
    # As a branch's argument test: it compares the argument with the setting's value for equality
    # (`args.adapter_name == "lora"`), where a text value is otherwise looked for inside the argument's text.
    exact: bool = False
    # With `exact`, as a keyword's value: the keyword is the comparison of the argument with this constant
    # (`load_in_4bit=args.bits == 4`), negated for `!=`.
    compared_with: Optional[Value] = None
    # (function, parameter) when the value is a bare name reading a parameter of a module-level function that never
    # rebinds it (`attn_implementation=attn_implementation` in LLaVA's `def train(attn_implementation=None)`): the
    # caller's argument decides it.
    parameter: Optional[Tuple[str, str]] = None


@dataclass(frozen=True)
class ConfigCall:
    """`TrainingArguments(...)`, `Seq2SeqTrainingArguments(...)`, TRL `SFTConfig(...)`, ..."""

    callee: str
    keywords: Tuple[Keyword, ...]
    origin: Origin


@dataclass(frozen=True)
class TrainerCall:
    """`Trainer(...)` or a subclass: whether it is given an eval dataset and metrics."""

    callee: str
    origin: Origin
    # Setting of the `eval_dataset=` keyword (value None for a literal None, Unknown for an expression),
    # or None when the keyword is absent.
    eval_dataset: Optional[Setting] = None
    compute_metrics: Optional[Setting] = None
    # `**data_module`-style splats: the keywords cannot be seen.
    has_splat: bool = False
    # `preprocess_logits_for_metrics=`: logits are reduced (e.g. to argmax ids) before they are gathered.
    preprocess_logits: Optional[Setting] = None
    # `**make_data_module(...)` where the function is imported: its name, for the resolution to look
    # up what the function's returned dict holds as eval_dataset in the module that defines it.
    splat_builder: Optional[str] = None
    # `ref_model=` and `peft_config=` of a preference trainer (TRL's DPOTrainer): value None for a literal None.
    ref_model: Optional[Setting] = None
    peft_config: Optional[Setting] = None
    # The function whose call gives `peft_config=` (`get_peft_config` of `get_peft_config(model_args)`), if any.
    peft_config_builder: Optional[str] = None
    # The branch that gives `compute_metrics` (`ComputeMetrics(tokenizer) if training_args.predict_with_generate else
    # None`): the trainer gets metrics when it holds, and none otherwise.
    compute_metrics_gates: Tuple["Gate", ...] = ()


@dataclass(frozen=True)
class Override:
    """A setting assigned in code after parsing (`training_args.gradient_checkpointing = True`),
    or implied by a call (`model.gradient_checkpointing_enable()` → gradient_checkpointing True)."""

    name: str
    setting: Setting
    target: str = ""  # the object written to, e.g. "training_args"
    # Code under `if model_args.grad_checkpoint:` runs only when that argument is on (off, when
    # negated): the argument's name, and the value the override gives when it runs. `setting`
    # then holds Unknown (the branch cannot be told without the launcher).
    when: Optional[str] = None
    when_negated: bool = False
    when_value: Value = None
    # A value chosen by a branch over several parsed arguments (`if lora_args.q_lora or "chat" in
    # model_args.model_name_or_path.lower():`): each test is a Keyword naming the argument it reads
    # (`reference`) and whether it is negated; its setting's value is True for a truth test, None for a test of
    # whether the argument is set (`is not None`; negated for `is None`), or the word a case-insensitive substring
    # test looks for. The override applies when any test holds (`tests_any`) or
    # when all do; `setting` holds the value it then gives.
    tests: Tuple[Keyword, ...] = ()
    tests_any: bool = False
    # An assignment to a parsed argument itself (`args.use_qlora = True`): a branch on that argument cannot be told
    # from the launch alone.
    assigns_argument: bool = False
    # An unconditional copy of another parsed argument (`args.max_seq_length = config.block_size`): that argument's
    # name; the value is the one the launch gives it.
    reference: Optional[str] = None


# The `other_keywords` callee that marks a call of TRL's PPOConfig from before 0.12 (not TrainingArguments):
# the PPOTrainer built on it is no HF Trainer either.
LEGACY_PPO_CONFIG = "PPOConfig (TRL before 0.12)"
# `replace_llama_attn_with_flash_attn()` (FastChat's monkey patch, copied by LLaVA-era repositories): the forward of
# the family's eager attention class replaced by a FlashAttention or xformers kernel, neither of which keeps the s x s
# scores. Its setting's value is the family (`llama`).
ATTENTION_PATCH_CALLEE = "an attention patch (replace_<family>_attn_with_<kernel>_attn())"
ATTENTION_PATCH = re.compile(r"^replace_(?P<family>[a-z0-9]+)_attn_with_(?P<kernel>flash|xformers)\w*$")
# `XForSequenceClassification.from_pretrained(...)` (or token classification): the model's head scores labels, not
# the vocabulary.
CLASSIFICATION_HEAD = "a classification model (from_pretrained of a ...ForSequenceClassification class)"


@dataclass(frozen=True)
class Gate:
    """One branch around a statement, read as argument tests the way `Override.tests` are: it holds when any test
    holds (`tests_any`) or when all do. No tests: a test that is not read as argument tests (it cannot be told)."""

    tests: Tuple[Keyword, ...]
    tests_any: bool
    text: str  # the condition as written (`not (...)` for an `else`)


@dataclass(frozen=True)
class Freeze:
    """A statement that freezes parameters in code (`param.requires_grad = False`, `X.requires_grad_(False)`)."""

    origin: Optional[Origin]
    text: str
    target: str  # what it freezes, as written: the receiver, or the iterable of the loop that binds it
    gates: Tuple[Gate, ...] = ()  # the branches around it, innermost first: it runs when every one holds
    # The function whose parameter it freezes (`def _freeze_params(module): for p in module.parameters(): ...`, or a
    # method's `self.part`): what it freezes, and whether it runs, its callers decide.
    helper: str = ""


@dataclass(frozen=True)
class ImportInfo:
    module: str  # dotted, as written ("llava.train.train"; relative imports keep their dots: ".arguments")
    names: Tuple[str, ...]
    origin: Origin
    # The name each of `names` is bound to in the importer (`from m import A as B` binds `B`), in order.
    bound: Tuple[str, ...] = ()

    def bindings(self) -> Tuple[Tuple[str, str], ...]:
        """(imported name, the name it is bound to) pairs."""
        return tuple(zip(self.names, self.bound or self.names))


@dataclass(frozen=True)
class StepGate:
    """`trainer_class`'s `_inner_training_loop` calls its own `step` method, which takes no backward pass, instead
    of HF's training_step when the argument `argument` is `value` (`if args.argument == "value":`, at `line`)."""

    trainer_class: str
    argument: str
    value: str
    step: str
    line: int


ClassBases = Dict[str, Tuple[str, ...]]


@dataclass(frozen=True)
class ClassHeaders:
    """What a module's class statements tell without a full read: each class with its bases as written (the first
    of a name wins), and the forward-only step gates of its copied training loops."""

    bases: ClassBases = field(default_factory=dict)
    step_gates: Tuple[StepGate, ...] = ()


@dataclass(frozen=True)
class PythonModule:
    path: str
    dataclasses: Tuple[DataclassInfo, ...] = ()
    # The script's command-line options: argparse's, DeepSpeed's and the parameters of a python-fire function.
    argparse_args: Tuple[FieldDefault, ...] = ()
    # The python-fire function of the command line takes `**kwargs`: any flag is accepted.
    takes_any_flag: bool = False
    # Each HfArgumentParser((A, B, C)) call: the class names it is given, as written.
    hf_parsers: Tuple[Tuple[str, ...], ...] = ()
    # The callees of those calls that name a parser class of the project's own (`H4ArgumentParser`), whose
    # methods may parse differently from HF's.
    derived_parsers: Tuple[str, ...] = ()
    config_calls: Tuple[ConfigCall, ...] = ()
    trainer_calls: Tuple[TrainerCall, ...] = ()
    overrides: Tuple[Override, ...] = ()
    imports: Tuple[ImportInfo, ...] = ()
    # Names of functions called at module level or under `if __name__ == "__main__":`.
    main_calls: Tuple[str, ...] = ()
    # The constant keyword arguments of those calls: (the function's last name, keyword, value as written), as
    # LLaVA's `train_mem.py` calls `train(attn_implementation="flash_attention_2")`.
    main_call_arguments: Tuple[Tuple[str, str, Setting], ...] = ()
    # The keyword arguments of those calls that read a parsed argument (`load_model(qlora=training_args.qlora)`):
    # (the function's last name, keyword, the argument read).
    main_call_references: Tuple[Tuple[str, str, str], ...] = ()
    # Names of the functions and classes the module defines at its top level.
    defines: Tuple[str, ...] = ()
    # Functions the module hands an argument parser to (`add_encoder_params(parser)`): they may add options.
    parser_helpers: Tuple[str, ...] = ()
    # Functions called by a bare name with the parsed arguments (`create_and_prepare_model(model_args, ...)`): they
    # may read settings from them where the model is built.
    namespace_helpers: Tuple[str, ...] = ()
    # The module builds an argument parser (`argparse.ArgumentParser(...)`, or a class of its own derived from
    # one). Options added in a module that builds none go to a parser built elsewhere (Megatron's
    # `extra_args_provider(parser)` functions), which has options of its own.
    builds_parser: bool = False
    # The parser it builds is told `allow_abbrev=False`: no prefix of an option names it.
    refuses_abbreviations: bool = False
    # The module calls `.backward(...)` (`loss.backward()`, `accelerator.backward(loss)`): it trains in a loop of
    # its own, whatever its flags are called.
    calls_backward: bool = False
    # The text names a `train` method anywhere (`trainer.train()`, `fn = trainer.train`, `getattr(t, "train")`, even
    # `model.train()` or a comment): False only for a module that certainly never starts a Trainer's training.
    mentions_train: bool = False
    # The text calls a `predict(...)` or `evaluate(...)` method: what a script that builds a Trainer and never trains
    # uses it for.
    calls_predict: bool = False
    parse_known_args: bool = False
    # TRL's `parser.parse_args_and_config()`: a `--config recipe.yaml` flag gives the parser its values, the other
    # flags of the command line overriding them.
    reads_config_flag: bool = False
    # The arguments parse_known_args leaves over are bound to a name the module reads again: the script
    # handles unknown flags itself (applies them to a config, hands them on), so they are not simply dropped.
    known_args_rest_used: bool = False
    # Keyword settings in other calls that pin a knob: Accelerator(gradient_accumulation_steps=...),
    # DataLoader(batch_size=...), from_pretrained(attn_implementation=..., torch_dtype=...).
    other_keywords: Tuple[Tuple[str, Keyword], ...] = ()
    diagnostics: Tuple[Diagnostic, ...] = ()
    # Module-level functions returning a dict with an `eval_dataset` entry (`return dict(train_dataset=...,
    # eval_dataset=None)`): function name -> that entry (value None for a literal None).
    returned_eval_datasets: Tuple[Tuple[str, Setting], ...] = ()
    # Statements that freeze parameters, in the order of the file.
    freezes: Tuple[Freeze, ...] = ()
    # The classes the module defines that its Trainer calls name, each with its bases as written
    # (`class SupervisedTrainer(SupervisedTrainerBase)` -> ("SupervisedTrainer", ("SupervisedTrainerBase",))).
    trainer_classes: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # The argument a script must be given before it trains (`do_train`), when every `trainer.train()` call of
    # the module is under `if <args>.do_train:`; None when it trains unconditionally or has no such call.
    train_gate: Optional[str] = None
    # Classes whose copied training loop takes a step with no backward pass when an argument has a value
    # (MeZO's `if args.trainer == "zo": self.zo_step(...)`).
    step_gates: Tuple[StepGate, ...] = ()
    # The module calls peft's `get_peft_model`, and whether it holds a remedy that lets a LoRA job checkpoint with
    # HF's reentrant default: `enable_input_require_grads()`, `prepare_model_for_kbit_training`, ...
    # (trainlint.readers.python.adapter_inputs).
    wraps_in_adapters: bool = False
    inputs_require_grad: bool = False


# ---------------------------------------------------------------- json / yaml
@dataclass(frozen=True)
class ConfigFile:
    """A DeepSpeed JSON, a LLaMA-Factory/axolotl/accelerate YAML: each scalar by dotted key path
    ("zero_optimization.offload_optimizer.device"), with the origin of the value token."""

    path: str
    format: str  # "json" | "yaml"
    values: Mapping[str, Setting]
    # Origins of the keys themselves, by the same dotted path (for messages about structure).
    key_origins: Mapping[str, Origin] = field(default_factory=dict)
    diagnostics: Tuple[Diagnostic, ...] = ()

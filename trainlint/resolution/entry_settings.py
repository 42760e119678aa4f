"""The knobs a launch's entry script pins: the launcher flags it accepts, its argparse and dataclass
defaults, the keywords it hands TrainingArguments and the values it assigns after parsing."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.knobs import K, coerce, coerce_as, knob_for
from trainlint.readers.facts import (
    ADAPTER_KEYWORDS,
    ATTENTION_PATCH_CALLEE,
    CLASSIFICATION_HEAD,
    DEEPSPEED_ARGUMENTS_OWNER,
    DEEPSPEED_ENGINE_CALLEE,
    FIRE_OWNER,
    LORA_CONFIG,
    Gate,
    Keyword,
    Override,
    TrainerCall,
)
from trainlint.resolution.entry import EntryFacts
from trainlint.resolution.flags import ParsedFlag, as_flag
from trainlint.resolution.frameworks.memory_features import (
    CLASSIFIER,
    ENCODER_DECODER,
    ENCODER_DECODER_CLASSES,
    PAIRED_SEQUENCES,
    REFERENCE_MODEL,
    add_switch,
)
from trainlint.resolution.freezing import frozen_in_code
from trainlint.resolution.gates import TestHolds, gate_holds, skipped, untold
from trainlint.resolution.precedence import Candidates

Flags = Mapping[str, ParsedFlag]

# A data-arguments field of this name packs several samples into each item the trainer batches
# (InternLM-XComposer's data mix): the trainer's batch counts items, not samples.
_DATA_BATCH_FIELDS = ("batch_size",)
# Keywords of other calls (from_pretrained, LoraConfig) that pin a knob.
_MODEL_KEYWORD_KNOBS = (K.ATTN_IMPLEMENTATION, K.LOAD_IN_4BIT, K.LOAD_IN_8BIT, K.LORA_R, K.TORCH_DTYPE)


def launcher_settings(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """Launcher flags the script hands to TrainingArguments as they are."""
    accepted = facts.accepted_flags() if facts else None
    for name, flag in flags.items():
        normalized = name.replace("-", "_")
        if facts is not None and normalized in facts.option_dest:
            continue  # an argparse flag: it reaches knobs through keywords (code_settings)
        target = knob_for(name)
        if accepted is not None and normalized not in accepted and name not in accepted and facts.parse_known_args:
            if facts.known_args_rest_used and target is not None:
                # Left over by parse_known_args, then read by the script's own code (or by code trainlint has not
                # read): it may take effect.
                candidates.add(target, as_flag(flag.value, f"--{name}", value=Unknown(
                    f"`--{name}` reaches the script only among the arguments parse_known_args leaves over, "
                    f"which its own code, or code trainlint has not read, may handle")))
            continue  # otherwise parse_known_args drops it silently
        if target == "deepspeed" and flag.bare:
            continue  # a bare `--deepspeed` is DeepSpeed's switch (add_config_arguments): it names no config
        if target is not None:
            candidates.add(target, as_flag(flag.value, f"--{name}"))


def data_batch(facts: Optional[EntryFacts], flags: Flags) -> Optional[Setting]:
    """The samples packed into each item the trainer batches, when the script's data arguments say."""
    if facts is None:
        return None
    for name in _DATA_BATCH_FIELDS:
        item = facts.plain_fields.get(name)
        if item is None:
            continue
        flag = flags.get(name)
        if flag is not None:
            coerced = coerce(K.PER_DEVICE_TRAIN_BATCH_SIZE, flag.value.value)
            return as_flag(flag.value, f"--{name}", value=coerced.value)
        return item.default
    return None


def flag_spellings(facts: Optional[EntryFacts], flags: Flags) -> Tuple[Tuple[str, str], ...]:
    """(name as written, the option it names) of each flag the parser takes under another spelling: argparse's
    unique prefix (`--per_device_train`), python-fire's `--noname`."""
    return _options_named(flags, facts.full_option if facts is not None else None)


def refused_prefixes(facts: Optional[EntryFacts], flags: Flags) -> Tuple[Tuple[str, str], ...]:
    """(name as written, the option it would abbreviate) of each flag a parser built with `allow_abbrev=False`
    refuses for being a prefix."""
    return _options_named(flags, facts.refused_prefix if facts is not None else None)


def misspelled_options(facts: Optional[EntryFacts], flags: Flags) -> Tuple[Tuple[str, str], ...]:
    """(name as written, the argparse option it names with dashes and underscores swapped) of each flag argparse
    refuses for that (`--seq_length` for `--seq-length`)."""
    return _options_named(flags, facts.misspelled_option if facts is not None else None)


def _options_named(flags: Flags, option_of: Optional[Callable[[str], Optional[str]]]) -> Tuple[Tuple[str, str], ...]:
    if option_of is None:
        return ()
    return tuple((name, option) for name in flags if (option := option_of(name)) is not None)


def command_flags(facts: Optional[EntryFacts], flags: Flags, positionals: Sequence[Setting],
                  spellings: Sequence[Tuple[str, str]] = ()) -> Dict[str, ParsedFlag]:
    """The flags as the entry point's parser takes them, by the option each names: a flag written under another
    spelling (`spellings`, from `flag_spellings`) by the option it names (of it and the option written in
    full, the later one); the others as written. For a python-fire function, `--noname` turns `name` off, and
    the words with no flag go by position, in the order of the signature, each to the next parameter no flag
    names."""
    if facts is None:
        return dict(flags)
    found: Dict[str, ParsedFlag] = {}
    for name, option in spellings:
        flag = flags[name]
        if option in flags and not _after(flag, flags[option]):
            continue  # argparse keeps the last of the two
        if facts.fire_command and flag.bare and name.replace("-", "_") == f"no{option}":
            flag = replace(flag, value=replace(flag.value, value=False))
        found[option] = flag
    spelled = {name for name, _option in spellings}
    found.update((name, flag) for name, flag in flags.items() if name not in spelled and name not in found)
    parameters = [name for name, arg in facts.argparse.items() if arg.owner == FIRE_OWNER]
    if parameters:
        given = {name.replace("-", "_") for name in found}
        open_parameters = [name for name in parameters if name not in given]
        found.update((name, ParsedFlag(name, word, word)) for name, word in zip(open_parameters, positionals))
    return found


def _after(flag: ParsedFlag, other: ParsedFlag) -> bool:
    """Whether `flag` comes after `other` on one command line (not told: no)."""
    first, second = other.flag.origin, flag.flag.origin
    return first is not None and second is not None and first.path == second.path \
        and second.start_byte > first.start_byte


def _encoder_decoder(facts: EntryFacts, candidates: Candidates) -> None:
    """An encoder-decoder model class the scripts import from transformers (`AutoModelForSeq2SeqLM`)."""
    for module in facts.modules:
        for info in module.imports:
            if info.module.split(".")[0] != "transformers":
                continue
            for name, _bound in info.bindings():
                if name in ENCODER_DECODER_CLASSES:
                    candidates.add(ENCODER_DECODER, Setting(True, SourceKind.CODE_KEYWORD, info.origin, name,
                                                            note=f"imports {name}"))
                    return


def argument_values(facts: EntryFacts, flags: Flags) -> Dict[str, Setting]:
    """Each argparse dest the script declares: the flag the launch passes, else its default."""
    values: Dict[str, Setting] = {}
    for dest, arg in facts.argparse.items():
        if arg.default is not None:
            values[dest] = arg.default
    for name, flag in flags.items():
        dest = facts.option_dest.get(name) or facts.option_dest.get(name.replace("-", "_"))
        if dest is not None:
            values[dest] = as_flag(flag.value, f"--{name}")
    return values


def _keyword_setting(keyword: Keyword, argparse_values: Dict[str, Setting],
                     source: Optional[Setting] = None) -> Setting:
    """A keyword's value: the parsed argument it reads (`source`, else the argparse value of that name), else
    what is written."""
    if keyword.reference is None:
        return keyword.setting
    source = source or argparse_values.get(keyword.reference)
    if source is None:
        return keyword.setting
    value = source.value
    if keyword.exact:  # `load_in_4bit=args.bits == 4`
        equal = _equals(value, keyword.compared_with)
        value = (equal != keyword.negated) if equal is not None else Unknown(
            f"`{keyword.setting.text}` of a value that cannot be compared")
    elif keyword.negated:
        truth = coerce_as(bool, value).value
        value = (not truth) if isinstance(truth, bool) else Unknown(f"`not {keyword.reference}` of an unknown value")
    # The keyword's value comes from the parsed argument: the argument's origin is where to edit.
    return Setting(value, source.kind, source.origin, source.text, via=source.via, note=keyword.name,
                   written_as=keyword.name)


def code_settings(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """What the script's code gives each knob: keywords, parsed arguments, dataclass defaults,
    assignments after parsing, and model/adapter keywords of other calls."""
    if facts is None:
        return
    argparse_values = argument_values(facts, flags)
    for keyword in facts.config_keywords:
        target = knob_for(keyword.name)
        if target is not None:
            candidates.add(target, _keyword_setting(keyword, argparse_values))
    # Arguments the script reads directly (`--seq-length`, Megatron-style names) for knobs no
    # TrainingArguments keyword sets; a flag given on the command line was added above.
    keyword_knobs = {knob_for(k.name) for k in facts.config_keywords}
    for dest, setting in argparse_values.items():
        target = _argument_knob(facts, dest)
        if target is not None and target not in keyword_knobs:
            candidates.add(target, setting)
    for name, item in facts.fields.items():
        target = knob_for(name)
        if target is not None and item.default is not None:
            candidates.add(target, item.default)
    for override in facts.overrides:
        target = knob_for(override.name)
        if target is None or _copies_argument(override):
            continue
        setting = replace(override.setting, kind=SourceKind.CODE_OVERRIDE)
        copied = _copied_argument(facts, flags, argparse_values, override)
        if copied is not None:
            candidates.add(target, copied)
            continue
        if override.tests:
            tested = _tested_override(facts, flags, argparse_values, override, setting)
            if tested is not None:
                candidates.add(target, tested)
            continue
        if override.when is not None:
            gated = _gated_override(facts, flags, argparse_values, override, setting)
            if gated is None:
                continue  # the branch does not run: the override never happens
            setting = gated
        candidates.add(target, setting)
    _preference_trainers(facts, flags, candidates)
    _encoder_decoder(facts, candidates)
    holds = argument_tests(facts, flags, argparse_values)
    frozen_in_code(facts, holds, candidates)
    taken: List[Keyword] = []  # get_peft_model calls the launch certainly reaches
    for callee, keyword in facts.other_keywords:
        if skipped(keyword.gates, holds):
            continue  # given under a branch the launch skips (`if args.use_qlora:` with use_qlora off)
        if callee == CLASSIFICATION_HEAD:
            # The loss is over the labels: no vocabulary logits in training, none to gather in evaluation.
            add_switch(candidates, CLASSIFIER, keyword.setting, "a classification head")
            continue
        if callee == ATTENTION_PATCH_CALLEE:
            candidates.add(K.ATTENTION_PATCH, keyword.setting)
            continue
        if callee == DEEPSPEED_ENGINE_CALLEE:
            _engine_setting(keyword, argparse_values, candidates)
            continue
        if callee == LORA_CONFIG:
            if keyword.name in ADAPTER_KEYWORDS:
                setting = _adapter_setting(facts, flags, argparse_values, keyword)
                branch = untold(keyword.gates, holds, _lora_switch)
                if branch is not None:  # which of several configurations runs cannot be told
                    setting = replace(setting, value=Unknown(f"given under `{branch.text}`, which cannot be told"))
                candidates.add(ADAPTER_KEYWORDS[keyword.name], setting)
            # Built, the adapters may wrap the model wherever the config goes (a framework's own config object,
            # CoLLiE's `config.peft_config`); as for get_peft_model, an explicit switch says when.
            candidates.add(K.LORA, Setting(Unknown("a LoraConfig is built in code"), SourceKind.DERIVED,
                                           keyword.setting.origin, note=LORA_CONFIG))
            continue
        target = knob_for(keyword.name)
        accumulation = callee.endswith("Accelerator") and target == "gradient_accumulation_steps"
        if target in _MODEL_KEYWORD_KNOBS or accumulation:
            # A model keyword may read a field of an argument dataclass (`load_in_4bit=args.use_4bit_quantization`
            # in a helper handed the parsed arguments): its flag, else its default.
            source = None if keyword.reference is None else _argument_value(facts, flags, argparse_values,
                                                                            keyword.reference)
            candidates.add(target, replace(_keyword_setting(keyword, argparse_values, source),
                                           kind=SourceKind.CODE_KEYWORD))
        if callee == "get_peft_model":
            # A call says adapters may be used; an explicit switch (a flag, a default) says when.
            candidates.add(K.LORA, Setting(Unknown("get_peft_model is called in code"), SourceKind.DERIVED,
                                           keyword.setting.origin, note="get_peft_model"))
            if keyword.gates and untold(keyword.gates, holds, _counts_every_gate) is None:
                taken.append(keyword)
    for keyword in taken:
        # Under branches on the script's arguments that the launch takes (`if args.use_peft_lora:`), the wrap runs.
        candidates.add(K.LORA, Setting(True, SourceKind.DERIVED, keyword.setting.origin, keyword.setting.text,
                                       note=f"get_peft_model under `{keyword.gates[0].text}`, which the launch takes"))


def _counts_every_gate(gate: Gate) -> bool:
    """For `untold`: no branch is set aside."""
    return False


def _lora_switch(gate: Gate) -> bool:
    """A branch taken only with LoRA on (`if training_args.use_lora:`): a LoraConfig's value under it counts
    whenever LoRA is used, the only case in which it matters."""
    return len(gate.tests) == 1 and not gate.tests[0].negated \
        and knob_for(gate.tests[0].reference or gate.tests[0].name) == K.LORA


def _argument_knob(facts: EntryFacts, dest: str) -> Optional[str]:
    """The knob a parsed argument writes. A `--deepspeed` switch (DeepSpeed's own from add_config_arguments,
    or a script's store_true) says the script runs under DeepSpeed: it is not the config path HF's
    `--deepspeed` is; `--deepspeed_config` is."""
    arg = facts.argparse.get(dest)
    if arg is not None and arg.owner == DEEPSPEED_ARGUMENTS_OWNER:
        return "deepspeed" if dest.endswith("_config") else None  # deepscale_config: the legacy spelling
    target = knob_for(dest)
    if target == "deepspeed" and arg is not None and arg.type_name == "bool":
        return None
    return target


# What a precision word handed to a DeepSpeed config builder turns on: (bf16, fp16).
_ENGINE_DTYPES = {"bf16": (True, False), "bfloat16": (True, False), "fp16": (False, True),
                  "float16": (False, True), "half": (False, True), "fp32": (False, False), "float32": (False, False)}


def _engine_setting(keyword: Keyword, argparse_values: Dict[str, Setting], candidates: Candidates) -> None:
    """A keyword of the config builder a trained `deepspeed.initialize(config=...)` gets: the ZeRO
    stage, the offload switch (optimizer and parameters on the CPU) or the precision."""
    # The value's origin is the parsed argument's (the flag to edit); the note names the code path.
    setting = replace(_keyword_setting(keyword, argparse_values), note=keyword.setting.note,
                      written_as=keyword.setting.written_as)
    if keyword.name != "dtype":
        candidates.add(keyword.name, setting)
        return
    value = setting.value
    if isinstance(value, Unknown):
        flags = (value, value)
    else:
        known = _ENGINE_DTYPES.get(str(value).strip().lower())
        unknown = Unknown(f"`{value}` is not a precision a DeepSpeed config builder is known to take")
        flags = known if known is not None else (unknown, unknown)
    for name, on in zip((K.BF16, K.FP16), flags):
        candidates.add(name, replace(setting, value=on))


def _copied_argument(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting],
                     override: Override) -> Optional[Setting]:
    """`args.max_seq_length = config.block_size`: the value the launch gives the copied argument, set in code (it
    beats a flag of the knob's own name); its origin is the copied argument's, the place to edit."""
    if override.reference is None:
        return None
    source = _argument_value(facts, flags, argparse_values, override.reference)
    if source is None:
        return None
    return Setting(source.value, SourceKind.CODE_OVERRIDE, source.origin, source.text, via=(source,),
                   note=f"{override.target}.{override.name} = {override.setting.text} in code",
                   written_as=source.written_as)


def _copies_argument(override) -> bool:
    """`training_args.x = model_args.x`: the same argument copied between namespaces, which the
    knob (one name across every argument class) already holds."""
    text = override.setting.text.strip()
    head, dot, attribute = text.rpartition(".")
    return bool(dot) and head.isidentifier() and attribute == override.name


def _argument_value(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting],
                    name: str) -> Optional[Setting]:
    """The value the entry script's parsed argument `name` gets: a launcher flag, else its default."""
    flag = flags.get(name) or flags.get(name.replace("_", "-"))
    if flag is not None:
        return as_flag(flag.value, f"--{flag.name}")
    if name in argparse_values:
        return argparse_values[name]
    item = facts.fields.get(name)
    return item.default if item is not None else None


def _gated_override(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting], override,
                    setting: Setting) -> Optional[Setting]:
    """An override under `if args.flag:`: it applies when the flag is on (off when negated), never
    when the flag says the branch is skipped, and stays Unknown when the flag cannot be told."""
    gate = _argument_value(facts, flags, argparse_values, override.when)
    truth = coerce_as(bool, gate.value).value if gate is not None else None
    if gate is not None and not isinstance(truth, bool):
        count = coerce_as(int, gate.value).value  # `if args.lora_dim > 0:` gated on a number
        truth = count != 0 if isinstance(count, int) else truth
    if not isinstance(truth, bool):
        return setting
    if truth == override.when_negated:
        return None
    return replace(setting, value=override.when_value, via=(gate,),
                   note=f"{setting.note} (runs because {override.when} is {gate.text or gate.value})")


def argument_tests(facts: EntryFacts, flags: Flags, argparse_values: Optional[Dict[str, Setting]] = None) -> TestHolds:
    """Whether one argument test of a branch holds, from the launch's flags and the arguments' defaults."""
    values = argument_values(facts, flags) if argparse_values is None else argparse_values

    def holds(test: Keyword) -> Optional[Tuple[bool, Setting]]:
        return _test_holds(facts, flags, values, test)

    return holds


def compute_metrics(facts: Optional[EntryFacts], flags: Optional[Flags]) -> Optional[bool]:
    """Whether a trainer the script builds gets `compute_metrics`: True when one certainly does, None when one may
    (its branch cannot be told), False when none does. `flags` None: the launch's values are not known (a recipe
    file gives them), so no branch can be told."""
    if facts is None or not facts.trainer_calls:
        return None
    holds = argument_tests(facts, flags) if flags is not None else None
    found: Optional[bool] = False
    for call in facts.trainer_calls:
        if call.compute_metrics is None or call.compute_metrics.value is None:
            continue
        decided = [gate_holds(gate, holds) if holds is not None else None for gate in call.compute_metrics_gates]
        if all(decided):
            return True
        if False not in decided:
            found = None
    return found


def _adapter_setting(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting],
                     keyword: Keyword) -> Setting:
    """A `LoraConfig(...)` keyword: what peft gets. A literal there is what trains, whatever flag the script
    also accepts, and so is a value it cannot tell (a code override either way); a parsed argument is that
    argument's value (its flag, else its default)."""
    source = None if keyword.reference is None else _argument_value(facts, flags, argparse_values, keyword.reference)
    if source is None:
        return replace(keyword.setting, kind=SourceKind.CODE_OVERRIDE)
    return Setting(source.value, SourceKind.CODE_KEYWORD, source.origin, source.text, via=source.via,
                   note=keyword.setting.note, written_as=source.written_as)


def _test_holds(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting],
                test: Keyword) -> Optional[Tuple[bool, Setting]]:
    """Whether one argument test of a branch holds, and the argument's value it was told from; None when the
    value cannot be told: it is assigned in code after parsing (`args.use_qlora = True`; a copy between namespaces,
    `training_args.moe_enable = model_args.moe_enable`, changes nothing), or the launch does not give it. A test of a
    helper's parameter that no call of the entry binds to an argument cannot be told either."""
    if test.parameter is not None:
        return None
    reference = test.reference or test.name
    if any(override.assigns_argument and override.name == reference and not _copies_argument(override)
           for override in facts.overrides):
        return None
    source = _argument_value(facts, flags, argparse_values, reference)
    if source is None or isinstance(source.value, Unknown):
        return None
    word = test.setting.value
    if test.exact:
        equal = _equals(source.value, word)
        return (None if equal is None else (equal != test.negated, source))
    if source.value is None and not isinstance(word, str):
        return test.negated, source  # a truth test of an argument left None (`if args.parts is None:`, negated)
    if word is None:
        return not test.negated, source  # `if args.lora_r is not None:` of an argument that is set
    if isinstance(word, str):  # a case-insensitive substring test of a text argument
        if not isinstance(source.value, str):
            return None
        holds = word in source.value.lower()
    else:
        truth = coerce_as(bool, source.value).value
        if not isinstance(truth, bool):
            return None
        holds = truth
    return holds != test.negated, source


def _equals(value: Value, constant: Value) -> Optional[bool]:
    """`value == constant` for an argument's value as the launch gives it (a flag's text) or as code writes it;
    None when a text cannot be read as the constant's kind."""
    if isinstance(constant, bool) or isinstance(value, bool):
        truth = coerce_as(bool, value).value
        return truth == constant if isinstance(truth, bool) else None
    if isinstance(constant, (int, float)):
        number = coerce_as(float, value).value
        readable = isinstance(number, (int, float)) and not isinstance(number, bool)
        return float(number) == float(constant) if readable else None
    return isinstance(value, str) and value == constant


def _tested_override(facts: EntryFacts, flags: Flags, argparse_values: Dict[str, Setting], override: Override,
                     setting: Setting) -> Optional[Setting]:
    """A value one arm of an `if` over several parsed arguments gives: itself when the test selects that arm,
    None when it selects the other, Unknown when an argument it needs cannot be told."""
    results = [_test_holds(facts, flags, argparse_values, test) for test in override.tests]
    told = [result for result in results if result is not None]
    if override.tests_any and any(holds for holds, _ in told):
        decided: Optional[bool] = True
    elif not override.tests_any and any(not holds for holds, _ in told):
        decided = False
    elif len(told) == len(results):
        decided = override.tests_any is False
    else:
        decided = None
    if decided is None:
        missing = [test.reference or test.name for test, result in zip(override.tests, results) if result is None]
        return replace(setting, value=Unknown(f"chosen by a branch on {', '.join(missing)}, which cannot be told"))
    if not decided:
        return None
    sources = tuple(source for _, source in told)
    return replace(setting, via=sources, note=f"{setting.note or 'assigned in code'} (the branch taken, by "
                                              f"{', '.join(source.text or str(source.value) for source in sources)})")


# TRL trainers whose collator or forward puts each pair's chosen and rejected answers in one batch (DPOTrainer's
# collator returns them as the two halves of a batch, trl/trainer/dpo_trainer.py; RewardTrainer's likewise; ORPO's
# and CPO's `concatenated_forward`), and those that keep a reference model.
_PAIRED_TRAINERS = ("DPOTrainer", "RewardTrainer", "ORPOTrainer", "CPOTrainer")
_REFERENCE_TRAINERS = ("DPOTrainer", "KTOTrainer")


def _absent(setting: Optional[Setting]) -> bool:
    return setting is None or setting.value is None


def _preference_trainers(facts: EntryFacts, flags: Flags, candidates: Candidates) -> None:
    """A TRL preference trainer in the entry script. DPOTrainer and KTOTrainer load a copy of the model as the
    reference when `ref_model` is absent, unless the model is a PEFT model (`peft_config`, or LoRA, which the
    memory model checks) or the reference log-probabilities are precomputed; a `ref_model` the script passes is
    a model whose size is not read, and is not counted."""
    precomputed = [k.setting for k in facts.config_keywords if k.name == "precompute_ref_log_probs"]
    flag = flags.get("precompute_ref_log_probs")
    if flag is not None:
        precomputed.append(flag.value)
    no_precompute = all(coerce_as(bool, setting.value).value is False for setting in precomputed)
    for call in facts.trainer_calls:
        name = call.callee.rsplit(".", 1)[-1]
        note = f"{name}: chosen and rejected answers in one batch"
        follows = _trl_peft_config(flags, call)
        if follows is not None:
            candidates.add(K.TRL_PEFT_CONFIG, follows)
            # Adapters only where `use_peft` says so; where it does, the memory model drops the reference copy.
            call = replace(call, peft_config=None)
        elif not _absent(call.peft_config):
            # TRL wraps the model with the adapters `peft_config` describes; an explicit switch says when.
            candidates.add(K.LORA, Setting(Unknown(f"{name} is given a peft_config"), SourceKind.DERIVED,
                                           call.peft_config.origin, note="peft_config"))
        # A script that builds another trainer too (an SFT trainer, with the preference one under a switch) runs
        # one of them: which, the code decides, so neither the pairs nor the reference copy are certain.
        others = sorted({_last(other.callee) for other in facts.trainer_calls if not _last(other.callee).endswith(
            _PAIRED_TRAINERS + _REFERENCE_TRAINERS)})
        chosen = f"the script builds {name} or {', '.join(others)}; which one trains is decided in code" \
            if others else None
        if name.endswith(_PAIRED_TRAINERS):
            candidates.add(PAIRED_SEQUENCES, Setting(Unknown(chosen) if chosen else 2, SourceKind.DERIVED,
                                                     call.origin, name, note=chosen or note))
        if name.endswith(_REFERENCE_TRAINERS) and _absent(call.ref_model) and _absent(call.peft_config) \
                and no_precompute:
            candidates.add(REFERENCE_MODEL, Setting(Unknown(chosen) if chosen else True, SourceKind.DERIVED,
                                                    call.origin, name,
                                                    note=chosen or f"{name}: a reference copy of the model"))


# TRL's `get_peft_config(model_args)`: the trainer gets adapters when `use_peft` says so (resolved with the recipe's
# and the flags' values by hf_trainer's derivation).
_TRL_PEFT_CONFIG = "get_peft_config"
# TRL's `--config recipe.yaml`: a file of arguments that may set `use_peft`.
_TRL_CONFIG_FLAG = "config"


def _trl_peft_config(flags: Flags, call: TrainerCall) -> Optional[Setting]:
    """That the trainer's adapters follow `use_peft` (`peft_config=get_peft_config(model_args)`); unknown when a
    `--config` file trainlint does not read may set it. None for any other peft_config."""
    peft_config = call.peft_config
    if peft_config is None or call.peft_config_builder != _TRL_PEFT_CONFIG:
        return None
    follows: Value = True
    if _TRL_CONFIG_FLAG in flags:
        follows = Unknown("use_peft may be set by the --config file")
    return Setting(follows, SourceKind.DERIVED, peft_config.origin, peft_config.text, note="get_peft_config")


def _last(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]

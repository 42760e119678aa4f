"""Whether a launch trains, and what: a script that shows training (a Trainer, a DeepSpeed training engine, a
`.backward()` of its own) or a launch that passes training flags; a script that trains only when asked
(`if training_args.do_train:`) or never (it only predicts); P-Tuning v2, which trains a prefix over a frozen base
model; LoRA adapters built in code trainlint has not read; sequences split over GPUs by the script's own argument."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import ARGS, K, coerce_as, knob, knob_for
from trainlint.readers.facts import DEEPSPEED_ARGUMENTS_OWNER, DEEPSPEED_ENGINE_CALLEE, DO_TRAIN, LORA_CONFIG
from trainlint.readers.source import display_path
from trainlint.resolution.adapter_inputs import only_hf_trainers
from trainlint.resolution.entry import EntryFacts
from trainlint.resolution.entry_settings import Flags
from trainlint.resolution.frameworks.memory_features import (
    SEQUENCE_PARALLEL,
    add_degree,
    add_no_training_step,
    add_out_of_scope,
)
from trainlint.resolution.freezing import FROZEN_IN_CODE
from trainlint.resolution.precedence import Candidates

_TRAINING_FLAG_KNOBS = {K.PER_DEVICE_TRAIN_BATCH_SIZE, K.GRADIENT_ACCUMULATION_STEPS, K.DEEPSPEED,
                        K.GRADIENT_CHECKPOINTING, K.MAX_SEQ_LENGTH, K.GLOBAL_BATCH_SIZE}
_TRAINING_ONLY_FLAG_KNOBS = _TRAINING_FLAG_KNOBS - {K.DEEPSPEED, K.MAX_SEQ_LENGTH}
# The prefix length of P-Tuning v2, as ChatGLM's and the P-tuning-v2 scripts name it.
PRE_SEQ_LEN = "pre_seq_len"
# True when the job trains a P-Tuning v2 prefix encoder: what trains over a frozen (and maybe quantized) base is
# the prefix, not LoRA adapters.
PREFIX_TUNING = "prefix_tuning"


def looks_like_training(flags: Flags, facts: Optional[EntryFacts]) -> bool:
    if facts is not None and facts.is_training:
        return True
    # A DeepSpeed config and a length limit serve inference too (a chatbot under `deepspeed`): when the script's
    # own parser was read and shows no training (no Trainer, no DeepSpeed training engine: neither the arguments
    # `deepspeed.add_config_arguments` adds nor a config built for `deepspeed.initialize`, no `.backward()` of its
    # own), only a training flag makes the launch a training job.
    shows_no_training = facts is not None and facts.has_parser and not any(
        callee == DEEPSPEED_ENGINE_CALLEE for callee, _keyword in facts.other_keywords) and not any(
        arg.owner == DEEPSPEED_ARGUMENTS_OWNER for arg in facts.argparse.values()) and not any(
        module.calls_backward for module in facts.modules)
    wanted = _TRAINING_ONLY_FLAG_KNOBS if shows_no_training else _TRAINING_FLAG_KNOBS
    return any(knob_for(name) in wanted for name in flags)


def training_switch(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """A script that trains only `if args.do_train:`, launched with `do_train` off (`--do_predict` alone, or
    HF's default False), takes no training step: the memory rules, which judge one, do not apply."""
    gates = {module.train_gate for module in facts.modules if module.trainer_calls} if facts else set()
    if facts is None or gates != {DO_TRAIN}:
        return
    flag = flags.get(DO_TRAIN)
    field = facts.fields.get(DO_TRAIN)
    if flag is not None:
        switch = replace(flag.value, kind=SourceKind.LAUNCHER_FLAG)
    elif field is not None and field.default is not None:
        switch = field.default
    elif facts.inherits_hf:
        switch = Setting(False, SourceKind.FRAMEWORK_DEFAULT, None, note="TrainingArguments.do_train")
    else:
        return
    if coerce_as(bool, switch.value).value is False:
        shown = display_path(facts.path)
        reason = (f"{shown} trains only `if ...{DO_TRAIN}:` and this launch leaves {DO_TRAIN} off: it evaluates or "
                  "predicts, and takes no training step")
        add_no_training_step(candidates, switch, reason)


def never_trains(facts: Optional[EntryFacts], candidates: Candidates) -> None:
    """A script that builds HF's Trainer and never starts its training (BELLE's `zero_inference.py` calls only
    `trainer.predict`) takes no training step: the memory rules, which judge one, do not apply. Claimed only when
    every module the job reaches was read, every trainer is HF's (TRL's PPOTrainer before 0.12 trains through
    `step()`), a module calls `predict(...)` or `evaluate(...)`, and no module names a `train` method at all, nor has
    a loop of its own."""
    if facts is None or facts.unread_call is not None or facts.own_loop_trainer is not None:
        return
    if not only_hf_trainers(facts) or any(module.mentions_train or module.calls_backward for module in facts.modules):
        return
    if not any(module.calls_predict for module in facts.modules):
        return  # no sign of what the Trainer is for: it may be handed to code that trains it
    calls = [call for module in facts.modules for call in module.trainer_calls]
    if len(calls) != len(facts.hf_trainer_calls()):
        return  # a trainer of another kind beside HF's (a Lightning one, TRL's legacy PPOTrainer) trains its own way
    if any(callee == DEEPSPEED_ENGINE_CALLEE for callee, _keyword in facts.other_keywords):
        return
    call = calls[0]
    setting = Setting(True, SourceKind.DERIVED, call.origin, note=f"`{call.callee}(...)` with no train() call")
    reason = (f"{display_path(call.origin.path)} builds `{call.callee}` and never calls its train(): it predicts or "
              "evaluates, and takes no training step")
    add_no_training_step(candidates, setting, reason)


def forward_only_step(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """A Trainer of the script's whose copied training loop takes a step of its own with no backward pass when an
    argument has a value (MeZO's `if args.trainer == "zo": self.zo_step(...)`), launched with that value, trains by
    forward passes alone: the memory rules, which judge a step that backpropagates, do not apply."""
    for gate in facts.step_gates if facts is not None else ():
        setting = _argument(facts, flags, gate.argument)
        if setting is not None and coerce_as(str, setting.value).value == gate.value:
            reason = (f"`{gate.trainer_class}` takes `{gate.step}`, a step with no backward pass, when "
                      f"{gate.argument} is \"{gate.value}\": the job trains by forward passes alone")
            add_out_of_scope(candidates, setting, reason)
            return


def prefix_tuning(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """P-Tuning v2 (`--pre_seq_len N`, ChatGLM's and the P-tuning-v2 scripts): the model's code freezes every
    parameter of the base model and trains a prefix encoder, so the base counts as frozen, as for freezing in code."""
    if facts is None:
        return
    # The launch passes it to a parser whose class trainlint cannot resolve (llm-action's copy of ChatGLM's
    # `main.py`, whose `arguments.py` is elsewhere): HfArgumentParser refuses a flag no field takes, so a field does.
    passed = facts.unresolved_parser_class and flags.get(PRE_SEQ_LEN) is not None
    if not _defines(facts, PRE_SEQ_LEN) and not passed:
        return
    setting = _argument(facts, flags, PRE_SEQ_LEN)
    length = coerce_as(int, setting.value).value if setting is not None else None
    if isinstance(length, int) and not isinstance(length, bool) and length > 0:
        note = f"P-Tuning v2 ({PRE_SEQ_LEN} {length}): the model's code freezes the base model and trains a prefix " \
               "encoder"
        derived = replace(setting, value=True, kind=SourceKind.DERIVED, via=(setting,), note=note)
        candidates.add(FROZEN_IN_CODE, derived)
        candidates.add(PREFIX_TUNING, derived)


# A script's own arguments for splitting each sequence over GPUs (Eagle 2.5's `sequence_parallel_degree`,
# open-instruct's `sequence_parallel_size`): Ulysses or ring attention, each GPU holding 1/n of every sequence.
OWN_SEQUENCE_PARALLEL_ARGUMENTS = ("sequence_parallel_degree", "sequence_parallel_size", "context_parallel_size")


def own_sequence_parallel(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """A degree above 1 of the script's own sequence-parallel argument splits each sequence's activations and logits
    over that many GPUs. How the script splits them is its own code; counting the split is the lower side, which
    cannot raise a false alarm (frameworks that name the same argument read it themselves)."""
    if facts is None or candidates.winner(SEQUENCE_PARALLEL) is not None:
        return
    for name in OWN_SEQUENCE_PARALLEL_ARGUMENTS:
        if _defines(facts, name):
            setting = _argument(facts, flags, name)
            if setting is not None:
                add_degree(candidates, SEQUENCE_PARALLEL, {name: setting}, (name,))
            return


def adapters_in_unread_code(facts: Optional[EntryFacts], flags: Flags, candidates: Candidates) -> None:
    """A script whose own arguments define a LoRA rank (`lora_r: int = 64`) and no switch for it builds adapters
    whenever the rank is above zero; when none of the modules read builds a LoraConfig or calls get_peft_model, it
    does so in code trainlint has not read (LLaVA-RLHF's reward model wraps its backbone in adapters inside the
    repository's model class). Whether only adapters train is then unknown, as for a get_peft_model call."""
    if facts is None or any(_defines(facts, name) for name in knob(K.LORA).spellings[ARGS]) or _adapter_switch(facts):
        return  # a switch says when (`lora_enable`, read as K.LORA; TRL's `use_peft`, off unless given)
    if any(callee in (LORA_CONFIG, "get_peft_model") for callee, _keyword in facts.other_keywords):
        return  # the adapters are built in code that was read
    name = next((name for name in knob(K.LORA_R).spellings[ARGS] if _defines(facts, name)), None)
    if name is None:
        return
    setting = _argument(facts, flags, name)
    rank = coerce_as(int, setting.value).value if setting is not None else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank <= 0:
        return  # no adapters (OpenRLHF's `--lora_rank 0`)
    candidates.add(K.LORA, Setting(Unknown(f"the script defines `{name}` and builds its adapters in code trainlint "
                                           "has not read"), SourceKind.DERIVED,
                                   setting.origin if setting is not None else None, note=f"{name} with no LoRA switch",
                                   via=(setting,) if setting is not None else ()))


def _argument(facts: EntryFacts, flags: Flags, name: str) -> Optional[Setting]:
    """The value the launch gives the script's argument `name`: its flag, else the default the script writes."""
    flag = flags.get(name)
    if flag is not None:
        return replace(flag.value, kind=SourceKind.LAUNCHER_FLAG)
    written = facts.fields.get(name) or facts.argparse.get(name)
    return written.default if written is not None else None


def _defines(facts: EntryFacts, name: str) -> bool:
    return name in facts.fields or name in facts.argparse


def _adapter_switch(facts: EntryFacts) -> bool:
    """Whether the script's arguments hold a boolean named for adapters (`use_peft`, `enable_lora`): a switch."""
    arguments = [*facts.fields.values(), *facts.argparse.values()]
    return any("bool" in argument.type_name and ("lora" in argument.name.lower() or "peft" in argument.name.lower())
               for argument in arguments)

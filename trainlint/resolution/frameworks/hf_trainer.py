"""transformers: TrainingArguments defaults, and the from_pretrained choices (quantisation, the
attention kernel) that other frameworks' switches select."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Mapping, Optional

from trainlint.core import QUANTIZED_EXPORT_BITS, Launcher, Setting, SourceKind, Unknown
from trainlint.knobs import ARGS, DEEPSPEED, KNOBS, K
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.frameworks.memory_features import ENCODER_DECODER, FUSED_LOSS, PAIRED_SEQUENCES, add_switch
from trainlint.resolution.precedence import Candidates


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    for spec in KNOBS:
        if spec.default is not None and DEEPSPEED not in spec.spellings:
            candidates.add(spec.name, Setting(spec.default, SourceKind.FRAMEWORK_DEFAULT, None,
                                              note="HF TrainingArguments default"))


def unread_entry_defaults(reason: str, candidates: Candidates) -> None:
    """What a TrainingArguments default would give, when nothing shows the entry script uses
    TrainingArguments (it was not read): unknown, for `reason`. A flag the launch passes still wins."""
    for spec in KNOBS:
        if spec.default is not None and DEEPSPEED not in spec.spellings:
            candidates.add(spec.name, Setting(Unknown(reason), SourceKind.FRAMEWORK_DEFAULT, None, note=reason))


def _derive_bits(candidates: Candidates, context: DeriveContext) -> None:
    """`load_in_4bit`/`load_in_8bit` quantise the base model, unless the bits are set already; a switch whose value
    cannot be read leaves them unknown. A checkpoint published quantized (`...-AWQ`, `...-GPTQ-Int4`,
    `...-bnb-4bit`) loads its quantized weights whatever the flags say."""
    for switch, bits in (("load_in_4bit", 4), ("load_in_8bit", 8)):
        source = candidates.winner(switch)
        if source is None or candidates.winner(K.BITS) is not None:
            continue
        if source.value is True:
            candidates.add(K.BITS, replace(source, value=bits, via=(source,), note=switch))
        elif isinstance(source.value, Unknown):
            candidates.add(K.BITS, replace(source, value=Unknown(f"{switch} is {source.value.reason}"),
                                           kind=SourceKind.DERIVED, via=(source,), note=switch))
    name = candidates.winner(K.MODEL_NAME_OR_PATH)
    if candidates.winner(K.BITS) is None and name is not None and isinstance(name.value, str):
        bits = prequantized_bits(name.value)
        if bits is not None:
            candidates.add(K.BITS, Setting(bits, SourceKind.DERIVED, None, via=(name,),
                                           note=f"{name.value} is a checkpoint published in {bits}-bit"))


# A word of QUANTIZED_EXPORT_BITS, whole, by its bits (8-bit first: Qwen names its GPTQ exports `-GPTQ-Int8` and
# `-GPTQ-Int4`).
_QUANTIZED_EXPORTS = tuple(
    (bits, re.compile(r"(?<![a-z0-9])(?:" + "|".join(word for word, of in QUANTIZED_EXPORT_BITS.items() if of == bits)
                      + r")(?![a-z0-9])"))
    for bits in (8, 4))


def prequantized_bits(name: str) -> Optional[int]:
    """The bits a checkpoint's name says its weights are stored in (`TheBloke/Llama-2-7B-AWQ`: 4), or None."""
    last = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-")
    for bits, pattern in _QUANTIZED_EXPORTS:
        if pattern.search(last):
            return bits
    return None


def _derive_trl_peft(candidates: Candidates, context: DeriveContext) -> None:
    """`peft_config=get_peft_config(model_args)`: TRL returns adapters only when `use_peft` (a flag, the recipe, the
    script's default) says so, and its ModelConfig's default is off (trl/trainer/utils.py, model_config.py)."""
    follows = candidates.winner(K.TRL_PEFT_CONFIG)
    if follows is None:
        _peft_switch_of_a_lone_file(candidates, context)
        return
    if isinstance(follows.value, Unknown):
        candidates.add(K.LORA, replace(follows, note="get_peft_config"))
        return
    switch = candidates.winner(K.USE_PEFT)
    if switch is not None:
        candidates.add(K.LORA, Setting(switch.value, SourceKind.DERIVED, switch.origin, switch.text, via=(switch,),
                                       note="get_peft_config: adapters when use_peft"))
    else:
        candidates.add(K.LORA, Setting(False, SourceKind.FRAMEWORK_DEFAULT, follows.origin, follows.text,
                                       note="get_peft_config: no adapters unless use_peft (TRL's default: off)"))


def _peft_switch_of_a_lone_file(candidates: Candidates, context: DeriveContext) -> None:
    """A file of arguments checked by itself that says `use_peft: true`: the script that reads it is not in view, and
    `use_peft` is TRL's ModelConfig switch, whose scripts (TRL's, and the ones built on its parser) wrap the model in
    the adapters `get_peft_config` builds. An explicit LoRA switch, if any, still wins."""
    switch = candidates.winner(K.USE_PEFT)
    if context.launcher != Launcher.ARGUMENTS_FILE or switch is None or switch.value is not True:
        return
    candidates.add(K.LORA, Setting(True, SourceKind.DERIVED, switch.origin, switch.text, via=(switch,),
                                   note="use_peft: TRL's switch for adapters (the script that reads this file is "
                                        "not in view)"))


def _derive_liger(candidates: Candidates, context: DeriveContext) -> None:
    """`use_liger_kernel` applies Liger's kernels to the model (Trainer -> liger_kernel's
    `_apply_liger_kernel_to_instance`), fused linear cross-entropy on by default: the loss never builds the
    full vocabulary logits. Preference trainers compute their own loss over the pair: not this one."""
    switch = candidates.winner(K.USE_LIGER_KERNEL)
    if switch is None or switch.value is not True:
        return
    paired = candidates.winner(PAIRED_SEQUENCES)
    if paired is not None and paired.value != 1:
        return
    add_switch(candidates, FUSED_LOSS, switch, "use_liger_kernel (Liger's fused linear cross-entropy)")


# `flash_attn`/`flash_attention` as written -> the attn_implementation it selects.
_FLASH_WORDS = {"true": "flash_attention_2", "1": "flash_attention_2", "yes": "flash_attention_2",
                "fa2": "flash_attention_2", "fa3": "flash_attention_3", "flash_attention_2": "flash_attention_2",
                "flash_attention_3": "flash_attention_3", "sdpa": "sdpa", "disabled": "eager", "eager": "eager"}


def _derive_attention(candidates: Candidates, context: DeriveContext) -> None:
    """A flash-attention switch or LLaMA-Factory's `flash_attn: fa2` picks the attention kernel,
    unless attn_implementation is written itself."""
    if candidates.winner(K.ATTN_IMPLEMENTATION) is not None:
        return
    chosen = candidates.winner(K.FLASH_ATTENTION)
    if chosen is None or not isinstance(chosen.value, str):
        return
    implementation = _FLASH_WORDS.get(chosen.value.strip().lower())
    if implementation is not None:
        candidates.add(K.ATTN_IMPLEMENTATION, Setting(implementation, SourceKind.DERIVED, None, via=(chosen,),
                                                      note=f"flash_attn {chosen.value}"))


def _derive_concatenated_length(candidates: Candidates, context: DeriveContext) -> None:
    """A script that bounds the prompt (`max_source_length`) and the response (`max_target_length`) apart, and no
    length of its own: a decoder-only model trains on the two concatenated, so a row holds up to their sum
    (ChatGLM's P-tuning pads every row to it; MedicalGPT's preference scripts pass it as `max_length`)."""
    if candidates.winner(K.MAX_SEQ_LENGTH) is not None:
        return
    source, target = candidates.winner(K.MAX_SOURCE_LENGTH), candidates.winner(K.MAX_TARGET_LENGTH)
    if source is None or target is None:
        return
    lengths = (source.value, target.value)
    encoder_decoder = candidates.winner(ENCODER_DECODER)
    if encoder_decoder is not None and encoder_decoder.value is True:
        value: object = Unknown(f"the script loads an encoder-decoder model ({encoder_decoder.text}): the prompt "
                                f"and the response limits bound two stacks, not one row")
    elif all(type(length) is int and length > 0 for length in lengths):
        value = lengths[0] + lengths[1]
    else:
        value = Unknown("the prompt or response length limit is not known")
    candidates.add(K.MAX_SEQ_LENGTH, Setting(value, SourceKind.DERIVED, None, via=(source, target),
                                             note="max_source_length + max_target_length (prompt and response "
                                                  "concatenated)"))


HF_TRAINER = Framework(
    name="hf_trainer",
    namespace=ARGS,
    defaults=_defaults,
    derivations=(Derivation(Stage.SEQUENCE, _derive_concatenated_length),
                 Derivation(Stage.ADAPTER, _derive_trl_peft), Derivation(Stage.QUANTISATION, _derive_bits),
                 Derivation(Stage.ATTENTION, _derive_attention),
                 Derivation(Stage.ATTENTION, _derive_liger)),
)

# A file of HF arguments read by the entry script's HfArgumentParser (`parse_yaml_file`, TRL's `--config`):
# TrainingArguments' defaults and the script's own, no framework's.
HF_ARGUMENTS = Framework(name="hf_arguments", namespace=ARGS, launcher=Launcher.ARGUMENTS_FILE)

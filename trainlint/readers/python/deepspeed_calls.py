"""DeepSpeed's own calls in an entry script: the arguments `deepspeed.add_config_arguments(parser)` adds,
and the ZeRO settings a config built in code hands `deepspeed.initialize(config=...)`.

`add_config_arguments` adds a switch `--deepspeed` (store_true) and `--deepspeed_config PATH`, the JSON
config (with the legacy spellings `--deepscale` and `--deepscale_config`), and a switch `--deepspeed_mpi`
(initialise torch.distributed from an MPI environment). Scripts that build the config
in code (`ds_config = get_train_ds_config(offload=args.offload, dtype=args.dtype, stage=args.zero_stage)`)
pass it to `deepspeed.initialize(model=..., optimizer=..., config=ds_config)`: the keywords of that
builder tell which parsed arguments decide the ZeRO stage, the offload and the precision.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind
from trainlint.readers.facts import (  # the DeepSpeed names live with the facts: resolution reads them without libcst
    DEEPSPEED_ARGUMENTS_OWNER,
    DEEPSPEED_ENGINE_CALLEE,  # noqa: F401 (re-exported: the collector imports it from here)
    FieldDefault,
    Keyword,
)
from trainlint.readers.python.expressions import CstExpr, keyword_args, last_name
from trainlint.readers.python.values import ValueReader

# (option, type): the switch and the config path, current and legacy spellings, and the MPI switch.
_CONFIG_ARGUMENTS = (("--deepspeed", "bool"), ("--deepspeed_config", "str"),
                     ("--deepscale", "bool"), ("--deepscale_config", "str"), ("--deepspeed_mpi", "bool"))
# Builder keywords by what they decide (the name recorded on the Keyword).
ENGINE_KEYWORDS = {"stage": "zero_stage", "zero_stage": "zero_stage", "offload": "offload", "dtype": "dtype"}
# Keywords of deepspeed.initialize that carry the config.
_CONFIG_KEYWORDS = ("config", "config_params")
# Keywords that make an engine a trained one: an engine without an optimizer (a frozen reference
# model) does not decide the training's memory.
_TRAINED_ENGINE_KEYWORDS = ("optimizer", "model_parameters")


def is_add_config_arguments(node: cst.Call) -> bool:
    """`deepspeed.add_config_arguments(parser)` (the module's own function, called through the module)."""
    func = node.func
    return isinstance(func, cst.Attribute) and func.attr.value == "add_config_arguments" \
        and isinstance(func.value, cst.Name) and func.value.value == "deepspeed"


def config_arguments(values: ValueReader, node: cst.Call) -> List[FieldDefault]:
    """The arguments `deepspeed.add_config_arguments(parser)` adds, located at the call."""
    ctx = values.ctx
    origin = ctx.origin(node)
    found = []
    for option, type_name in _CONFIG_ARGUMENTS:
        default = False if type_name == "bool" else None
        note = f"argparse {option} (added by deepspeed.add_config_arguments)"
        setting = Setting(default, SourceKind.ARGPARSE_DEFAULT, origin, ctx.text(node), note=note)
        found.append(FieldDefault(option.lstrip("-"), setting, DEEPSPEED_ARGUMENTS_OWNER, (option,), type_name,
                                  origin))
    return found


def is_engine_call(node: cst.Call) -> bool:
    return last_name(node.func) == "initialize" and isinstance(node.func, cst.Attribute) \
        and isinstance(node.func.value, cst.Name) and node.func.value.value == "deepspeed"


def engine_keywords(values: ValueReader, node: cst.Call) -> List[Keyword]:
    """What the config handed to a trained `deepspeed.initialize(...)` takes from its builder's keywords."""
    keywords = keyword_args(node)
    if not any(name in keywords for name in _TRAINED_ENGINE_KEYWORDS):
        return []
    config = next((keywords[name].value for name in _CONFIG_KEYWORDS if name in keywords), None)
    built = _builder_call(values, config, node) if config is not None else None
    if built is None:
        return []
    builder, via = built
    ctx = values.ctx
    found = []
    for name, arg in keyword_args(builder).items():
        decides = ENGINE_KEYWORDS.get(name)
        if decides is None:
            continue
        note = f"{ctx.text(builder.func)}({name}=...){via} -> deepspeed.initialize"
        keyword = values.keyword(decides, arg.value, SourceKind.CODE_KEYWORD, note)
        found.append(keyword)
    return found


def _builder_call(values: ValueReader, config: CstExpr, engine: cst.Call) -> Optional[Tuple[cst.Call, str]]:
    """The call that builds the config: written in place, or the one call a local name is bound to."""
    if isinstance(config, cst.Call):
        return config, ""
    if not isinstance(config, cst.Name):
        return None
    ctx = values.ctx
    # The walk has not reached the call's children yet: the scope is the call's own.
    bindings = ctx.assignments(ctx.scope_of(engine), config.value)
    calls = [binding.value for binding in bindings if isinstance(binding.value, cst.Call)]
    if len(bindings) != 1 or len(calls) != 1:
        return None  # rebound, or bound by unpacking: which builder runs is not certain
    return calls[0], f" as `{config.value}`"

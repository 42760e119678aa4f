"""Whether a module wraps its model in peft adapters, and whether it makes the inputs of the frozen layers require
grad: the pair decides whether HF's gradient checkpointing can be turned on for a LoRA job without breaking it.

HF's `gradient_checkpointing_enable()` checkpoints with `use_reentrant=True` unless told otherwise. A reentrant
checkpoint gives its output a gradient only when one of its inputs has one, and under LoRA the embeddings are
frozen: no decoder layer's output requires grad, the loss has no `grad_fn`, and the first backward fails ("element 0
of tensors does not require grad", huggingface/peft#137, huggingface/transformers#42489). `get_peft_model` makes the
inputs require grad only when checkpointing is already on as it wraps the model; a Trainer turns it on later. The
remedies a script may hold: `model.enable_input_require_grads()`, peft's `prepare_model_for_kbit_training` (or the
older `prepare_model_for_int8_training`), a forward hook that calls `requires_grad_()` on the embeddings' output,
checkpointing turned on in code (`gradient_checkpointing_enable`), or `use_reentrant` set by the script."""
from __future__ import annotations

import ast
from typing import Optional

from trainlint.readers.python.tree_nodes import TreeNodes, last_name

_REMEDIES = frozenset({"enable_input_require_grads", "prepare_model_for_kbit_training",
                       "prepare_model_for_int8_training", "requires_grad_", "gradient_checkpointing_enable"})
# The call that wraps a model in adapters; with the remedies' texts, what a module must hold for either question to
# have a yes: most modules a job reaches hold neither.
WRAPPER = "get_peft_model"
REMEDY_TEXTS = ("enable_input_require_grads", "prepare_model_for_", "requires_grad_()", "requires_grad_(True)",
                "gradient_checkpointing_enable", "use_reentrant")


def wraps_in_adapters(nodes: Optional[TreeNodes]) -> bool:
    """The module calls `get_peft_model(...)` (as a name or an attribute: `peft.get_peft_model`)."""
    return nodes is not None and any(last_name(call.func) == WRAPPER for call in nodes.calls)


def makes_inputs_require_grad(text: str, nodes: Optional[TreeNodes]) -> bool:
    """The module holds one of the remedies above. `use_reentrant` counts wherever it is written (a keyword, a dict
    key of `gradient_checkpointing_kwargs`): whatever value it gets, the script decides the checkpoint's kind itself."""
    if "use_reentrant" in text:
        return True
    return nodes is not None and any(_is_remedy(call) for call in nodes.calls)


def _is_remedy(call: ast.Call) -> bool:
    name = last_name(call.func)
    if name == "requires_grad_":
        # `p.requires_grad_(False)` freezes; only `requires_grad_()` or `requires_grad_(True)` gives a gradient.
        return not call.keywords and (not call.args or (isinstance(call.args[0], ast.Constant)
                                                        and call.args[0].value is True))
    return name in _REMEDIES


def asks_about_adapters(text: str) -> bool:
    """Whether the module's text may answer yes to either question (the tree is walked only then)."""
    return WRAPPER in text or any(remedy in text for remedy in REMEDY_TEXTS)

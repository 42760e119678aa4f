"""Megatron-LM's model parallelism, as a launch passes it to a Megatron-style entry script
(`--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4`, Megatron-LM's `arguments.py` and the forks
that keep its names). Tensor, pipeline, context and expert parallelism each split what one GPU holds (layers,
the sequence, the experts) in a way the memory model does not describe: a degree above 1, or one that cannot be
read, takes the job out of its scope. Degree 1 is plain data parallelism and changes nothing."""
from __future__ import annotations

from typing import Mapping

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import coerce_as
from trainlint.resolution.flags import ParsedFlag
from trainlint.resolution.frameworks.memory_features import MODEL_PARALLEL
from trainlint.resolution.precedence import Candidates

# Megatron-LM's spelling (argparse turns the dashes into underscores, and launchers write either).
DEGREES = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
           "expert_model_parallel_size")


def apply(flags: Mapping[str, ParsedFlag], candidates: Candidates) -> None:
    """The model-parallel degree the launch's Megatron flags give: the product of those above 1, or unknown when
    one of them cannot be read (`--tensor-model-parallel-size $TP` with `TP` from the caller)."""
    written = {flag.name.replace("-", "_"): flag.value for flag in flags.values()}
    given = [(name, written[name]) for name in DEGREES if name in written]
    if not given:
        return
    product = 1
    for name, setting in given:
        degree = coerce_as(int, setting.value).value
        if not isinstance(degree, int) or isinstance(degree, bool):
            candidates.add(MODEL_PARALLEL, Setting(Unknown(f"the Megatron `--{name}` is not known"), SourceKind.DERIVED,
                                                   None, via=(setting,), note=name))
            return
        product *= max(degree, 1)
    if product > 1:
        candidates.add(MODEL_PARALLEL, Setting(product, SourceKind.DERIVED, None, via=tuple(s for _, s in given),
                                               note="Megatron tensor/pipeline/context/expert parallelism"))

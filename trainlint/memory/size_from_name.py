"""The parameter count a checkpoint's name states (`my-llama-13b`, `/data/models/7B`, `opt-350m`,
`mixtral-8x7b`), and the least a model of that stated size can plausibly hold.

A name says nothing about the architecture, so dimensions guessed from it support no verdict that
depends on them (activations, logits). The parameter count is another matter: a model sold as `13b`
has close to 13 billion parameters whatever its family, and memory that grows with the parameter count
alone (weights, gradients, optimizer states) has a lower bound no plausible shape can go under."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# Published sizes are rounded: LLaMA-7B has 6.7B parameters, "13b" models 12.9-13.9B. No model sold
# under a size has fewer than 90% of it.
LOWEST_PLAUSIBLE_SHARE = 0.9
# A mixture of experts named `8x7b` shares its attention and embeddings between experts: Mixtral 8x7B
# holds 46.7B, 8x22B 141B (0.80 of the product); 0.75 of the product is a floor for the family.
LOWEST_PLAUSIBLE_EXPERT_SHARE = 0.75

_UNITS = {"b": 1.0, "m": 1e-3}
_SIZE = re.compile(
    r"(?<![a-z0-9.])(?:(?P<experts>\d+)x)?(?P<number>\d+(?:\.\d+)?)(?P<unit>[bm])(?![a-z0-9])"
)


@dataclass(frozen=True)
class StatedSize:
    """The size a name states, in billions of parameters."""

    params_b: float
    text: str  # as written in the name: `13b`, `8x7b`
    experts: int = 1

    @property
    def lowest_plausible_params_b(self) -> float:
        if self.experts > 1:
            return self.params_b * LOWEST_PLAUSIBLE_EXPERT_SHARE
        return self.params_b * LOWEST_PLAUSIBLE_SHARE


def stated_size(name: str) -> Optional[StatedSize]:
    """The last size token in the name (`13b`, `1.3b`, `1_8b`, `350m`, `8x7b`), or None. The last one
    wins so that a folder such as `/runs/2b-experiments/llama-7b` names the checkpoint's own size."""
    text = re.sub(r"(?<=\d)_(?=\d)", ".", name.strip().lower())  # `1_8b` is 1.8B
    text = re.sub(r"[-_/\\\s]+", " ", text)
    found = None
    for match in _SIZE.finditer(text):
        number = float(match.group("number"))
        size = number * _UNITS[match.group("unit")]
        experts = int(match.group("experts") or 1)
        if 0.01 <= size * experts <= 2000 and experts >= 1:
            found = StatedSize(params_b=size * experts, text=match.group(0), experts=experts)
    return found

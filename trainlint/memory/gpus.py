"""GPU catalog: usable memory per device (what is left for tensors, in GiB), bf16 and TF32 support."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Gpu:
    """One accelerator model. `total_gib` is the realistic capacity left for tensors (an "80GB" card
    reports 81920 MiB in nvidia-smi and leaves about 79.2 GiB once the CUDA context is up)."""

    name: str
    total_gib: float
    bf16: bool
    # FlashAttention-3's kernels are built for Hopper (H100, H800, H200, H20): a card before it cannot run them.
    # Blackwell and ROCm cards are listed with it: whether a build of theirs runs is not certain either way.
    fa3: bool = True
    # fp8 matmuls (torchao's float8 training) need compute capability 8.9 and up: a card before Ada has none.
    fp8: bool = True
    aliases: Tuple[str, ...] = ()
    key: str = ""
    source: str = ""

    @property
    def tf32(self) -> bool:
        """transformers refuses `tf32=True` on a CUDA device below compute capability 8.0 (its is_torch_tf32_available),
        the generation that first brought bf16: a card without bf16 (V100, T4) has no TF32. ROCm cards count as
        having it: what that check answers there depends on the build, and no refusal is certain."""
        return self.bf16

    @property
    def runs_flash_attention(self) -> bool:
        """FlashAttention-2 runs on Ampere, Ada and Hopper GPUs only (compute capability 8.0 and up, its
        README), the same generations that first brought bf16: a card without bf16 (V100, T4) cannot run it."""
        return self.bf16


def _normalize(text: str) -> str:
    text = text.strip().lower()
    # Vendor and product-line words come in any combination ("NVIDIA Tesla V100", "AMD Instinct MI300X").
    text = re.sub(r"^((nvidia|tesla|geforce|amd|instinct)[\s_-]+)+", "", text)
    text = re.sub(r"[\s_]+", "-", text)
    # "40G" and "40GB" mean the same card.
    return re.sub(r"(\d+)g\b", r"\1gb", text)


def _extends(longer: str, shorter: str) -> bool:
    """`a100-sxm4` extends `a100`; `a1000` does not (a different name, not a variant of it)."""
    return bool(shorter) and (longer == shorter or longer.startswith(shorter + "-"))


@lru_cache(maxsize=1)
def _load() -> Dict[str, Gpu]:
    text = resources.files("trainlint").joinpath("data").joinpath("gpus.csv").read_text(encoding="utf-8")
    catalog: Dict[str, Gpu] = {}
    for row in csv.DictReader(io.StringIO(text)):
        aliases = tuple(a for a in row["aliases"].split("|") if a)
        catalog[row["key"]] = Gpu(
            name=row["name"],
            total_gib=float(row["total_gib"]),
            bf16=row["bf16"].strip().lower() == "true",
            fa3=row["fa3"].strip().lower() == "true",
            fp8=row["fp8"].strip().lower() == "true",
            aliases=aliases,
            key=row["key"],
            source=row["source"],
        )
    return catalog


def gpu_catalog() -> Dict[str, Gpu]:
    """Every known GPU by its key (e.g. "a100-40gb")."""
    return dict(_load())


def find_gpu(name: str) -> Optional[Gpu]:
    """Look a GPU up by key, alias or marketing name ("A100-SXM4-80GB", "a100 40GB", "h100", "3090")."""
    if not name or not name.strip():
        return None
    wanted = _normalize(name)
    catalog = _load()
    for gpu in catalog.values():
        names = {_normalize(gpu.key), _normalize(gpu.name)} | {_normalize(a) for a in gpu.aliases}
        if wanted in names:
            return gpu
    # A longer name of a known card ("h100-80gb-hbm3", "a100-sxm4-80gb-hbm2e"): the memory size in it
    # decides between variants, and without one the smallest variant is the cautious choice.
    size = re.search(r"(\d+)gb", wanted)
    family = re.sub(r"-?\d+gb.*$", "", wanted)
    best: Optional[Gpu] = None
    for gpu in catalog.values():
        names = [_normalize(a) for a in gpu.aliases] + [_normalize(gpu.key)]
        # Cutting the size off may leave a prefix of a known name ("a100-sxm4" of "a100-sxm4-80gb").
        if not any(_extends(family, n) or (size and _extends(n, family)) for n in names):
            continue
        if size and not any(size.group(0) in n for n in names):
            continue
        if best is None or (not size and gpu.total_gib < best.total_gib):
            best = gpu
    return best


def gpu_from_memory(gib: float) -> Gpu:
    """A generic device for `--gpu-memory`: the given size is taken as usable memory, bf16 assumed. Its key
    keeps the exact size (the JSON output names it); its name, for people, a tenth of a GiB (`80GB` is
    74.5058 GiB: "74.5 GiB GPU")."""
    value = float(gib)
    return Gpu(name=f"{round(value, 1):g} GiB GPU", total_gib=value, bf16=True, aliases=(), key=f"{value:g}gib")


def gpu_by_key(key: str) -> Optional[Gpu]:
    """The catalog GPU with this key, or the generic device a `--gpu-memory` key (`74.5058gib`) stands for."""
    found = find_gpu(key)
    if found is not None or not key.endswith("gib"):
        return found
    try:
        return gpu_from_memory(float(key[:-len("gib")]))
    except ValueError:
        return None

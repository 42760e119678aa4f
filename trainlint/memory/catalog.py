"""Model catalog: architecture dimensions from published config.json files, a local config.json when
the model path exists, and the size in the name as a last resort."""
from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from trainlint.core import QUANTIZED_EXPORT_BITS, TrainingRun
from trainlint.inputs import note_folder, note_path
from trainlint.knobs import K
from trainlint.memory.size_from_name import stated_size
from trainlint.readers.source import remembered


@dataclass(frozen=True)
class ModelSpec:
    """Dimensions of one model (an LLM, a vision tower, or a VLM's LLM with its tower's key)."""

    key: str
    hf_repo: str
    kind: str  # llm | vlm | vision | encoder
    arch: str  # llama | qwen | phi | bert | vit
    params_b: float
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int  # width of one MLP branch
    vocab: int  # output classes of the head (vocab for causal LMs)
    tied: bool = False
    mlp: str = "swiglu"  # swiglu (3 matrices) | gelu (2 matrices)
    logits_fp32: bool = True  # the modeling code upcasts logits to fp32 before the loss
    default_attn: str = "sdpa"
    half_by_default: bool = False  # the modeling code converts itself to bf16/fp16 when loaded
    vision: str = ""  # key of the built-in vision tower (VLMs)
    image_tokens: int = 0  # tokens per image (tile) into the LLM
    default_tiles: int = 1
    image_size: int = 0
    patch_size: int = 0
    source: str = ""
    aliases: Tuple[str, ...] = ()
    # How the spec was found: "catalog", "config.json", "name size".
    resolved_by: str = "catalog"

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def params(self) -> float:
        return self.params_b * 1e9

    @property
    def embedding_params(self) -> float:
        """Input embedding plus an untied output head (they stay 16-bit under quantization)."""
        heads = 1 if self.tied else 2
        return float(self.vocab) * self.hidden * heads if self.kind in ("llm", "vlm") else 0.0

    @property
    def layer_params(self) -> float:
        attn = self.hidden * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.hidden
        mlp = (3 if self.mlp == "swiglu" else 2) * self.hidden * self.intermediate
        return float(attn + mlp)

    @property
    def vision_tokens_per_tile(self) -> int:
        """Tokens through a vision tower per image tile (patches plus a class token)."""
        if not self.image_size or not self.patch_size:
            return self.image_tokens or 0
        return (self.image_size // self.patch_size) ** 2 + 1


def _as_bool(text: str) -> bool:
    return text.strip().lower() in ("true", "1", "yes")


def _as_int(text: str, default: int = 0) -> int:
    text = (text or "").strip()
    return int(float(text)) if text else default


@lru_cache(maxsize=1)
def _catalog() -> Tuple[ModelSpec, ...]:
    text = resources.files("trainlint").joinpath("data").joinpath("models.csv").read_text(encoding="utf-8")
    specs = []
    for row in csv.DictReader(io.StringIO(text)):
        specs.append(
            ModelSpec(
                key=row["key"],
                hf_repo=row["hf_repo"],
                kind=row["kind"],
                arch=row["arch"],
                params_b=float(row["params_b"]),
                hidden=_as_int(row["hidden"]),
                layers=_as_int(row["layers"]),
                heads=_as_int(row["heads"]),
                kv_heads=_as_int(row["kv_heads"]),
                head_dim=_as_int(row["head_dim"]),
                intermediate=_as_int(row["intermediate"]),
                vocab=_as_int(row["vocab"]),
                tied=_as_bool(row["tied"]),
                mlp=row["mlp"],
                logits_fp32=_as_bool(row["logits_fp32"]),
                default_attn=row["default_attn"],
                half_by_default=_as_bool(row["half_by_default"]),
                vision=row["vision"],
                image_tokens=_as_int(row["image_tokens"]),
                default_tiles=_as_int(row["default_tiles"], 1),
                image_size=_as_int(row["image_size"]),
                patch_size=_as_int(row["patch_size"]),
                source=row["source"],
                aliases=tuple(a for a in row["aliases"].split("|") if a),
            )
        )
    return tuple(specs)


def model_catalog() -> Dict[str, ModelSpec]:
    return {spec.key: spec for spec in _catalog()}


def _norm(name: str) -> str:
    name = name.strip().lower().replace("_", "-").replace(" ", "-")
    name = re.sub(r"[()\[\]]", "", name)
    return re.sub(r"-+", "-", name).strip("-")


# Suffixes that do not change the architecture (quantized exports, chat/instruct tunes, formats).
_NEUTRAL_SUFFIXES = (
    "-hf", "-chat", "-instruct", "-it", "-base", *(f"-{word}" for word in QUANTIZED_EXPORT_BITS),
    "-bf16", "-fp16", "-sft", "-v1.5", "-v1", "-pretrain", "-finetune", "-lora", "-merged",
)


def _candidates(name: str) -> Iterable[str]:
    """The name, its last path components, and versions without neutral suffixes."""
    parts = [p for p in re.split(r"[\\/]", name.strip()) if p and p not in (".", "..")]
    seen = []
    for piece in ([name] + parts[-2:][::-1] if parts else [name]):
        current = _norm(piece)
        while current and current not in seen:
            seen.append(current)
            for suffix in _NEUTRAL_SUFFIXES:
                if current.endswith(suffix):
                    current = current[: -len(suffix)]
                    break
            else:
                break
    return seen


# The catalog is read-only packaged data, so the indexes and answers below are memoised once per process:
# immutable values derived from immutable data, not mutable global state. A scan asks about the same few
# names thousands of times (every job, every entry script), and each uncached ask normalised every alias.


@lru_cache(maxsize=None)
def _aliases_by_name(kinds: Tuple[str, ...]) -> Mapping[str, ModelSpec]:
    """Normalised key, repo id and aliases of every catalog model of these kinds (first spelling wins)."""
    by_name: Dict[str, ModelSpec] = {}
    for spec in _catalog():
        if spec.kind in kinds:
            for alias in (spec.key, spec.hf_repo, *spec.aliases):
                by_name.setdefault(_norm(alias), spec)
    return by_name


@lru_cache(maxsize=None)
def _fuzzy_aliases(kinds: Tuple[str, ...]) -> Tuple[Tuple[str, ModelSpec], ...]:
    """For the fuzzy match: each alias long enough to mean something."""
    return tuple((alias, spec) for alias, spec in _aliases_by_name(kinds).items()
                 if "/" not in alias and len(alias) >= 4)


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.")


def _contains_token(text: str, alias: str) -> bool:
    """`alias` occurs in `text` as a whole token: not touching a letter, digit or dot on either side.
    (A plain scan: compiling a pattern per alias cost more than every lookup of a scan together.)"""
    start = text.find(alias)
    while start >= 0:
        end = start + len(alias)
        if (start == 0 or text[start - 1] not in _TOKEN_CHARS) and (end == len(text) or text[end] not in _TOKEN_CHARS):
            return True
        start = text.find(alias, start + 1)
    return False


def find_model(name: str, kinds: Tuple[str, ...] = ("llm", "vlm", "encoder")) -> Optional[ModelSpec]:
    """Catalog lookup by HF repo id, alias, or the longest alias contained in the name."""
    if not name or not name.strip():
        return None
    return _find_model(name, tuple(kinds))


@lru_cache(maxsize=4096)
def _find_model(name: str, kinds: Tuple[str, ...]) -> Optional[ModelSpec]:
    by_name = _aliases_by_name(kinds)
    candidates = list(_candidates(name))
    for candidate in candidates:
        if candidate in by_name:
            return by_name[candidate]
    # Fuzzy: the longest alias that appears as a whole token run inside a candidate.
    best: Optional[Tuple[int, ModelSpec]] = None
    for candidate in candidates:
        for alias, spec in _fuzzy_aliases(kinds):
            if _contains_token(candidate, alias) and (best is None or len(alias) > best[0]) \
                    and not _names_another_variant(candidate, alias):
                best = (len(alias), spec)
    return best[1] if best else None


# A size, or a word for one, written right after an alias that names none: `phi-4` then `-mini` is Phi-4-mini
# (3.8B), not Phi-4 (14.7B). Such a name is another model of the family, which the catalog may not hold.
_SIZE_IN_ALIAS = re.compile(r"(?<![a-z])\d+(?:\.\d+)?[bm](?![a-z])|\dx\d")
_VARIANT_AFTER = re.compile(
    r"-(?:mini|small|medium|large|xl|xxl|tiny|nano|micro|multimodal|moe|\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b)"
    r"(?![a-z0-9.])")


def _names_another_variant(text: str, alias: str) -> bool:
    if _SIZE_IN_ALIAS.search(alias):
        return False
    start = text.find(alias)
    while start >= 0:
        if _VARIANT_AFTER.match(text, start + len(alias)):
            return True
        start = text.find(alias, start + 1)
    return False


def find_vision_tower(name: str) -> Optional[ModelSpec]:
    spec = find_model(name, kinds=("vision",))
    if spec is not None:
        return spec
    lowered = _norm(name)
    if "clip" in lowered and "336" in lowered:
        return model_catalog().get("clip-vit-large-patch14-336")
    if "clip" in lowered:
        return model_catalog().get("clip-vit-large-patch14")
    if "siglip" in lowered:
        return model_catalog().get("siglip-so400m-patch14-384")
    if "eva" in lowered:
        return model_catalog().get("eva-vit-g")
    return None


def vision_by_key(key: str) -> Optional[ModelSpec]:
    return model_catalog().get(key) if key else None


# ---------------------------------------------------------------------------------------------
# Local config.json


def _config_value(config: Mapping, *names: str, default: Any = None) -> Any:
    for name in names:
        if name in config and config[name] is not None:
            return config[name]
    return default


def _whole(value: Any) -> Optional[int]:
    """A positive whole number as config.json writes one, else None (a hand-edited file may hold anything)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def spec_from_config(config: Mapping, name: str) -> Optional[ModelSpec]:
    """Dimensions from an HF config.json (LLM or a VLM's `text_config`/`llm_config`); the catalog's
    entry for the name when the file does not give them."""
    base = find_model(str(_config_value(config, "_name_or_path", default="") or name))
    text = config
    for nested in ("text_config", "llm_config"):
        if isinstance(config.get(nested), Mapping) and config[nested].get("hidden_size"):
            text = config[nested]
    hidden = _whole(_config_value(text, "hidden_size", "n_embd", "d_model"))
    layers = _whole(_config_value(text, "num_hidden_layers", "n_layer", "num_layers"))
    heads = _whole(_config_value(text, "num_attention_heads", "n_head"))
    if hidden is None or layers is None or heads is None:
        return base
    kv_heads = _whole(_config_value(text, "num_key_value_heads", "multi_query_group_num", default=heads))
    head_dim = _whole(_config_value(text, "head_dim", default=hidden // heads))
    intermediate = _whole(_config_value(text, "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden))
    vocab = _whole(_config_value(text, "vocab_size", "padded_vocab_size", default=32000))
    if kv_heads is None or head_dim is None or intermediate is None or vocab is None:
        return base
    model_type = str(_config_value(config, "model_type", default="")).lower()
    mlp = "gelu" if model_type in ("phi", "gpt2", "gpt_neox", "bert", "opt") else "swiglu"
    if model_type == "qwen":  # Qwen v1 writes the sum of both MLP branches
        intermediate //= 2
    tied = bool(_config_value(text, "tie_word_embeddings", default=False))
    template = base or ModelSpec(
        key=_norm(name), hf_repo=name, kind="llm", arch="llama", params_b=0.0, hidden=0, layers=0,
        heads=0, kv_heads=0, head_dim=0, intermediate=0, vocab=0,
    )
    spec = replace(
        template, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        intermediate=intermediate, vocab=vocab, tied=tied, mlp=mlp,
        source=f"local config.json ({name})", resolved_by="config.json",
    )
    if base is not None and base.hidden == hidden:
        return spec  # the catalog's published parameter count for the same architecture
    params = spec.layers * spec.layer_params + float(vocab) * hidden * (1 if tied else 2)
    return replace(spec, params_b=params / 1e9)


def _read_local_config(path: str, roots: Iterable[str]) -> Optional[Mapping]:
    for root in roots:
        candidate = os.path.join(root, path) if root and not os.path.isabs(path) else path
        config_path = os.path.join(candidate, "config.json")
        note_path(config_path)  # found or not: a stored result depends on it
        try:
            if os.path.isfile(config_path):
                with open(config_path, encoding="utf-8") as handle:
                    loaded = json.load(handle)
                return loaded if isinstance(loaded, Mapping) else None
        except (OSError, ValueError, RecursionError):  # unreadable, not JSON, or nested past Python's limit
            continue
    return None


def hub_cache_dirs() -> Tuple[str, ...]:
    """Where a Hugging Face cache keeps downloaded repositories (huggingface_hub's own lookup order)."""
    found = []
    if os.environ.get("HF_HUB_CACHE"):
        found.append(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        found.append(os.path.join(os.environ["HF_HOME"], "hub"))
    found.append(os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub"))
    return tuple(dict.fromkeys(found))


def _read_cached_config(repo_id: str, cache_dirs: Iterable[str]) -> Optional[Mapping]:
    """config.json of `ORG/NAME` from a local Hugging Face cache (never the network)."""
    parts = repo_id.strip().split("/")
    if len(parts) != 2 or not all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", part) for part in parts):
        return None
    folder_name = "models--" + "--".join(parts)
    for cache in cache_dirs:
        snapshots = os.path.join(cache, folder_name, "snapshots")
        note_folder(snapshots)
        try:
            revisions = sorted(os.listdir(snapshots))
        except OSError:
            continue
        for revision in revisions:
            config = _read_local_config(os.path.join(snapshots, revision), ("",))
            if config is not None:
                return config
    return None


# ---------------------------------------------------------------------------------------------
# Size from the name

# Representative LLaMA-style shapes by size; used only when nothing else identifies the model.
_SHAPES_BY_SIZE = (
    (0.5, 896, 24, 14, 2, 4864, 151936),
    (1.5, 2048, 24, 16, 16, 5504, 32000),
    (3.0, 2560, 32, 32, 32, 6912, 32000),
    (7.0, 4096, 32, 32, 32, 11008, 32000),
    (13.0, 5120, 40, 40, 40, 13824, 32000),
    (34.0, 7168, 60, 56, 8, 20480, 32000),
    (70.0, 8192, 80, 64, 8, 28672, 32000),
)


def spec_from_name_size(name: str) -> Optional[ModelSpec]:
    stated = stated_size(name)
    if stated is None or not 0.1 <= stated.params_b <= 500:
        return None
    size = stated.params_b
    shape = min(_SHAPES_BY_SIZE, key=lambda s: abs(s[0] - size) / s[0])
    _, hidden, layers, heads, kv, inter, vocab = shape
    return ModelSpec(
        key=f"~{size:g}b", hf_repo=name, kind="llm", arch="llama", params_b=size, hidden=hidden,
        layers=layers, heads=heads, kv_heads=kv, head_dim=hidden // heads, intermediate=inter,
        vocab=vocab, source=f"size {size:g}B read from the name '{name}' (shape of a typical {shape[0]:g}B model)",
        resolved_by="name size",
    )


# ---------------------------------------------------------------------------------------------
# Run-level resolution


def _roots(run: TrainingRun) -> Tuple[str, ...]:
    launcher_dir = os.path.dirname(run.path) if run.path else ""
    return tuple(dict.fromkeys([launcher_dir, os.getcwd()]))


def resolve_name(name: str, roots: Iterable[str] = ("",),
                 cache_dirs: Optional[Iterable[str]] = None) -> Optional[ModelSpec]:
    """A local checkpoint's config.json, the Hugging Face cache's copy of a repo's config.json, the
    catalog, and the size in the name, in that order. Once per scan for the same question: every estimate
    of every job asks it, and each answer probes the disk."""
    caches = hub_cache_dirs() if cache_dirs is None else tuple(cache_dirs)
    roots = tuple(roots)
    return remembered("model", (name, roots, caches), lambda: _resolve_name(name, roots, caches))


def _resolve_name(name: str, roots: Tuple[str, ...], cache_dirs: Tuple[str, ...]) -> Optional[ModelSpec]:
    config = _read_local_config(name, roots)
    if config is None:
        config = _read_cached_config(name, cache_dirs)
    if config is not None:
        spec = spec_from_config(config, name)
        if spec is not None:
            return spec
    return find_model(name) or spec_from_name_size(name)


def resolve_model(run: TrainingRun) -> Optional[ModelSpec]:
    """The base model of a run: exact repo id, local config.json, alias/fuzzy name, size in the name;
    when the path names nothing (`/path/to/base_llm_model`), a catalog model the `model_type`
    argument names exactly (`--model_type phi-2`)."""
    name = run.known(K.MODEL_NAME_OR_PATH)
    found = resolve_name(name, _roots(run)) if isinstance(name, str) and name.strip() else None
    if found is not None and found.resolved_by == "name size" and run.facts.imports_diffusers:
        return None  # a diffusers job's "2B" may be a DiT or a whole pipeline, not a language model of that size
    if found is None:
        family = run.known(K.MODEL_TYPE)
        if isinstance(family, str) and family.strip():
            found = find_model(family)
    return found


def resolve_vision(run: TrainingRun, model: Optional[ModelSpec] = None) -> Optional[ModelSpec]:
    """The vision tower: the `vision_tower` knob, else the one built into the VLM."""
    name = run.known(K.VISION_TOWER)
    if isinstance(name, str) and name.strip():
        config = _read_local_config(name, _roots(run))
        found = find_vision_tower(name)
        if found is None and config is not None:
            found = find_vision_tower(str(config.get("_name_or_path", "")))
        if found is not None:
            return found
    if model is not None and model.vision:
        return vision_by_key(model.vision)
    return None

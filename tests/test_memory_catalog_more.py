"""Catalog rows for models public fine-tuning launchers name: TinyLlama, CodeLlama, LLaVA-1.5 in its
transformers conversion, Mixtral 8x22B, StarCoder, OLMo 7B, OpenLLaMA, phi-1/phi-1.5, SmolLM2, gpt-oss-20b
Qwen1.5-MoE-A2.7B, Chinese-LLaMA-2/Alpaca-2 and Llama 4 Scout and Maverick.

Each is found by the names launchers write, and its dimensions give the published parameter count. A
mixture of experts' row keeps the active experts' width in `intermediate` (what activations need); its
total count (every expert resident) is rebuilt here from the expert sizes its source cites.
"""
from __future__ import annotations

import pytest

from trainlint.memory import find_model
from trainlint.memory.catalog import ModelSpec, model_catalog, resolve_name

TOLERANCE = 0.03  # as tests/test_memory_catalog_counts.py

NAMES = [
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout-17b-16e"),
    ("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", "llama-4-scout-17b-16e"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama-4-maverick-17b-128e"),
    ("TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", "tinyllama-1.1b"),
    ("PY007/TinyLlama-1.1B-intermediate-step-240k-503b", "tinyllama-1.1b"),
    ("codellama/CodeLlama-7b-hf", "codellama-7b"),
    ("codellama/CodeLlama-7b-Instruct-hf", "codellama-7b"),
    ("codellama/CodeLlama-7b-Python-hf", "codellama-7b"),
    ("meta-llama/CodeLlama-7b-hf", "codellama-7b"),
    ("codellama/CodeLlama-13b-hf", "codellama-13b"),
    ("codellama/CodeLlama-13b-Instruct-hf", "codellama-13b"),
    ("codellama/CodeLlama-34b-hf", "codellama-34b"),
    ("codellama/CodeLlama-34b-Python-hf", "codellama-34b"),
    ("llava-hf/llava-1.5-7b-hf", "llama-2-7b"),
    ("llava-hf/llava-1.5-13b-hf", "llama-2-13b"),
    ("liuhaotian/llava-v1.5-7b", "llama-2-7b"),
    ("mistral-community/Mixtral-8x22B-v0.1", "mixtral-8x22b"),
    ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b"),
    ("bigcode/starcoder", "starcoder-15b"),
    ("bigcode/starcoderbase", "starcoder-15b"),
    ("allenai/OLMo-7B", "olmo-7b"),
    ("allenai/OLMo-7B-hf", "olmo-7b"),
    ("allenai/OLMo-1.7-7B-hf", "olmo-7b"),
    ("openlm-research/open_llama_3b_v2", "open-llama-3b"),
    ("openlm-research/open_llama_7b_v2", "open-llama-7b"),
    ("openlm-research/open_llama_3b", "open-llama-3b"),
    ("microsoft/phi-1_5", "phi-1.5"),
    ("microsoft/phi-1", "phi-1.5"),
    ("HuggingFaceTB/SmolLM2-135M", "smollm2-135m"),
    ("HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2-135m"),
    ("HuggingFaceTB/SmolLM2-360M", "smollm2-360m"),
    ("HuggingFaceTB/SmolLM2-360M-Instruct", "smollm2-360m"),
    ("HuggingFaceTB/SmolLM2-1.7B", "smollm2-1.7b"),
    ("HuggingFaceTB/SmolLM2-1.7B-Instruct", "smollm2-1.7b"),
    ("openai/gpt-oss-20b", "gpt-oss-20b"),
    ("Qwen/Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"),
    ("Qwen/Qwen1.5-MoE-A2.7B-Chat", "qwen1.5-moe-a2.7b"),
    ("hfl/chinese-alpaca-2-7b", "chinese-llama-2-7b"),
    ("hfl/chinese-llama-2-7b-64k", "chinese-llama-2-7b"),
    ("ziqingyang/chinese-alpaca-2-13b", "chinese-llama-2-13b"),
    ("hfl/chinese-alpaca-2-13b-16k", "chinese-llama-2-13b"),
]


@pytest.mark.parametrize("name, key", NAMES)
def test_the_names_launchers_write_find_the_row(name, key):
    found = find_model(name)
    assert found is not None and found.key == key, (name, found and found.key)
    resolved = resolve_name(name, cache_dirs=())
    assert resolved is not None and resolved.key == key and resolved.resolved_by == "catalog"


@pytest.mark.parametrize("name", [
    "bigcode/starcoderbase-1b",  # smaller StarCoderBase networks are not the 15.5B one
    "bigcode/starcoderbase-7b",
    "bigcode/tiny_starcoder_py",
    "bigcode/starcoder2-15b",
    "codellama/CodeLlama-70b-hf",  # no 70B row: its 70B shape is not the 34B one
    "openai/gpt-oss-120b",
    "allenai/OLMo-2-1124-7B",
])
def test_neighbouring_models_do_not_take_the_new_rows(name):
    found = find_model(name)
    assert found is None or found.key not in {
        "starcoder-15b", "codellama-34b", "gpt-oss-20b", "olmo-7b",
    }, (name, found.key)


@pytest.mark.parametrize("name, not_key", [
    ("microsoft/Phi-4-mini-instruct", "phi-4"),  # 3.8B, not the 14.7B Phi-4
    ("microsoft/Phi-4-multimodal-instruct", "phi-4"),
    ("microsoft/phi-4-mini-reasoning", "phi-4"),
])
def test_a_variant_named_after_a_family_alias_is_not_that_family_model(name, not_key):
    """A size word or a size right after an alias that names no size (`phi-4` then `-mini`) names another model."""
    found = find_model(name)
    assert found is None or found.key != not_key, (name, found.key)


@pytest.mark.parametrize("name, key", [
    ("microsoft/phi-4", "phi-4"),
    ("unsloth/phi-4-bnb-4bit", "phi-4"),
    ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
    ("google/flan-t5-large", "t5-large"),
    ("lmms-lab/llava-onevision-qwen2-7b-ov", "qwen2-7b"),
    ("Qwen/Qwen-VL-Chat", "qwen-vl-chat"),
])
def test_a_family_alias_still_names_its_model_when_no_other_size_follows(name, key):
    found = find_model(name)
    assert found is not None and found.key == key, (name, found and found.key)


def _dense_b(spec: ModelSpec) -> float:
    return (spec.layers * spec.layer_params + spec.embedding_params) / 1e9


# Published sizes the sources give (the size in a model's name where it is the published figure).
PUBLISHED_DENSE_B = {
    "tinyllama-1.1b": 1.1,
    "codellama-13b": 13.0,
    "codellama-34b": 34.0,
    "starcoder-15b": 15.5,
    "olmo-7b": 7.0,
    "smollm2-135m": 0.135,
    "smollm2-360m": 0.36,
    "smollm2-1.7b": 1.7,
}
# Rows whose nominal size is a rounding the 3% tolerance does not cover: their count is the one their
# dimensions give (6.74B for a "7B", 3.43B for a "3B", 1.42B for phi-1.5's "1.3B").
COMPUTED_ONLY = ("codellama-7b", "open-llama-3b", "open-llama-7b", "phi-1.5", "chinese-llama-2-7b",
                 "chinese-llama-2-13b")


@pytest.mark.parametrize("key", sorted(PUBLISHED_DENSE_B) + list(COMPUTED_ONLY))
def test_dense_rows_dimensions_give_the_published_count(key):
    spec = model_catalog()[key]
    assert spec.params_b == pytest.approx(_dense_b(spec), rel=TOLERANCE)
    if key in PUBLISHED_DENSE_B:
        assert _dense_b(spec) == pytest.approx(PUBLISHED_DENSE_B[key], rel=TOLERANCE)


def test_codellama_7b_and_13b_have_the_infilling_vocabulary():
    catalog = model_catalog()
    assert catalog["codellama-7b"].vocab == catalog["codellama-13b"].vocab == 32016
    assert catalog["llama-2-7b"].vocab == catalog["codellama-34b"].vocab == 32000


def test_chinese_llama_2_keeps_llama_2_layers_with_its_larger_vocabulary():
    catalog = model_catalog()
    for size in ("7b", "13b"):
        chinese, base = catalog[f"chinese-llama-2-{size}"], catalog[f"llama-2-{size}"]
        assert (chinese.hidden, chinese.layers, chinese.intermediate) == (base.hidden, base.layers, base.intermediate)
        assert (chinese.vocab, base.vocab) == (55296, 32000)
    assert find_model("meta-llama/Llama-2-7b-hf").key == "llama-2-7b"
    assert find_model("hfl/chinese-alpaca-2-1.3b") is None  # a smaller network of its own


def test_starcoder_is_multi_query_with_tied_embeddings():
    spec = model_catalog()["starcoder-15b"]
    assert (spec.kv_heads, spec.tied, spec.mlp) == (1, True, "gelu")


# (experts, width of one expert, active experts, shared expert width, published total B, published active B):
# Mixtral 8x22B 141B total / 39B active, gpt-oss-20b 20.9B total, Qwen1.5-MoE 2.7B active (its name).
MIXTURES = {
    "mixtral-8x22b": (8, 16384, 2, 0, 141.0, 39.0),
    "gpt-oss-20b": (32, 2880, 4, 0, 20.9, None),
    "qwen1.5-moe-a2.7b": (60, 1408, 4, 5632, None, 2.7),
    # Llama 4 Scout: 109B published with its vision encoder (the row counts the language model), 17B active.
    "llama-4-scout-17b-16e": (16, 8192, 1, 8192, None, 17.0),
}


@pytest.mark.parametrize("key", sorted(MIXTURES))
def test_mixture_of_experts_rows_hold_every_expert(key):
    experts, width, active, shared, total_b, active_b = MIXTURES[key]
    spec = model_catalog()[key]
    assert "experts" in spec.source  # how the counts test knows the row is a mixture
    assert spec.intermediate == active * width + shared  # the active path, for activations
    attention = spec.layer_params - 3 * spec.hidden * spec.intermediate
    every_expert = 3 * spec.hidden * (experts * width + shared)
    total = (spec.layers * (attention + every_expert) + spec.embedding_params) / 1e9
    assert spec.params_b == pytest.approx(total, rel=TOLERANCE)
    if total_b is not None:
        assert total == pytest.approx(total_b, rel=TOLERANCE)
    if active_b is not None:
        assert _dense_b(spec) == pytest.approx(active_b, rel=TOLERANCE)


def test_gpt_oss_20b_active_count_leaves_out_the_input_embedding():
    spec = model_catalog()["gpt-oss-20b"]
    # OpenAI's 3.6B active parameters count the output head but not the embedding lookup.
    assert _dense_b(spec) - spec.vocab * spec.hidden / 1e9 == pytest.approx(3.6, rel=TOLERANCE)
    assert spec.default_attn == "eager"  # attention sinks: no SDPA path in transformers

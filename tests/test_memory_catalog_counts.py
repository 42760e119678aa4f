"""Every catalog row's parameter count against the count its own dimensions give.

A row's dimensions come from a published config.json and its `params_b` is either the published count
or one computed from those dimensions; a typo in either shows up as a disagreement. Rows whose count
includes parts the per-layer formula does not describe say which part, and are held to a looser bound
in the direction that part goes.
"""
from __future__ import annotations

import pytest

from trainlint.memory import find_model
from trainlint.memory.catalog import ModelSpec, model_catalog, vision_by_key

TOLERANCE = 0.03

# Rows whose published count holds parameters outside `layers × layer_params + embeddings`, so the
# published count exceeds the computed one by at most `extra` (a share of the published count).
EXTRA_PARTS = {
    "bert-large-uncased": (0.25, "the 30522-word embedding; the vocab column holds the classifier's labels"),
    "bert-base-uncased": (0.25, "the 30522-word embedding; the vocab column holds the classifier's labels"),
    "qwen-vl-vit": (0.06, "the resampler that pools the patches to 256 queries"),
    "qwen2-vl-vit": (0.10, "the patch merger (5120x5120 + 5120x3584)"),
    "qwen2.5-vl-vit": (0.10, "the patch merger (5120x5120 + 5120x3584)"),
}
# opt-350m projects its 1024-wide layers to a 512-wide embedding (word_embed_proj_dim 512), so the
# dimensions over-count its embedding.
SMALLER_EMBEDDING = {"opt-350m": 0.10}

# Totals published on the model cards of vision-language models: the language model, the vision tower
# and the projector between them. The catalog keeps the language model's count on the VLM row and the
# tower's on its own row; together they must come to the published total.
PUBLISHED_VLM_TOTALS_B = {
    "OpenGVLab/InternVL2-1B": 0.94,
    "OpenGVLab/InternVL2-2B": 2.21,
    "OpenGVLab/InternVL2-4B": 4.15,
    "OpenGVLab/InternVL2-8B": 8.08,
    "OpenGVLab/InternVL2-26B": 25.51,
    "OpenGVLab/InternVL2-40B": 40.07,
    "OpenGVLab/InternVL2-Llama3-76B": 76.26,
    "OpenGVLab/InternVL2_5-1B": 0.94,
    "OpenGVLab/InternVL2_5-2B": 2.21,
    "OpenGVLab/InternVL2_5-4B": 3.71,
    "OpenGVLab/InternVL2_5-8B": 8.08,
    "OpenGVLab/InternVL2_5-26B": 25.51,
    "OpenGVLab/InternVL2_5-38B": 38.39,
    "OpenGVLab/InternVL2_5-78B": 78.41,
    "OpenGVLab/InternVL-Chat-V1-2": 40.07,
    "Qwen/Qwen2-VL-2B-Instruct": 2.21,
    "Qwen/Qwen2-VL-7B-Instruct": 8.29,
    "Qwen/Qwen2.5-VL-3B-Instruct": 3.75,
    "Qwen/Qwen2.5-VL-7B-Instruct": 8.29,
    "Qwen/Qwen2.5-VL-72B-Instruct": 73.4,
    "google/gemma-3-4b-pt": 4.3,
    "google/gemma-3-12b-pt": 12.2,
    "google/gemma-3-27b-pt": 27.4,
    "rhymes-ai/Aria": 25.3,
}


def _computed_b(spec: ModelSpec) -> float:
    return (spec.layers * spec.layer_params + spec.embedding_params) / 1e9


def _is_mixture_of_experts(spec: ModelSpec) -> bool:
    # The intermediate column of a mixture of experts holds the active experts' width (what activations
    # need); the count holds every expert, which the dimensions alone cannot give.
    return "experts" in spec.source


SPECS = sorted(model_catalog().values(), key=lambda spec: spec.key)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.key)
def test_parameter_count_matches_the_dimensions(spec):
    computed = _computed_b(spec)
    if _is_mixture_of_experts(spec):
        assert spec.params_b > 2 * computed, "all experts are resident: the count exceeds one expert path"
    elif spec.key in EXTRA_PARTS:
        share, _why = EXTRA_PARTS[spec.key]
        assert computed < spec.params_b <= computed / (1 - share)
    elif spec.key in SMALLER_EMBEDDING:
        assert spec.params_b < computed <= spec.params_b * (1 + SMALLER_EMBEDDING[spec.key])
    else:
        assert spec.params_b == pytest.approx(computed, rel=TOLERANCE), (spec.params_b, computed)


@pytest.mark.parametrize("repo", sorted(PUBLISHED_VLM_TOTALS_B))
def test_language_model_and_tower_add_up_to_the_published_total(repo):
    spec = find_model(repo)
    assert spec is not None and spec.kind == "vlm", repo
    tower = vision_by_key(spec.vision)
    assert tower is not None, spec.vision
    assert spec.params_b + tower.params_b == pytest.approx(PUBLISHED_VLM_TOTALS_B[repo], rel=TOLERANCE)


def test_a_mistyped_dimension_is_caught():
    spec = model_catalog()["llama-2-7b"]
    mistyped = ModelSpec(**{**spec.__dict__, "intermediate": 13824})  # the 13B's width on the 7B
    assert mistyped.params_b != pytest.approx(_computed_b(mistyped), rel=TOLERANCE)


@pytest.mark.parametrize("name, key", [
    ("OpenGVLab/InternVL2-8B", "internvl2-8b"),
    ("InternVL2_5-26B", "internvl2.5-26b"),
    ("InternVL-Chat-Chinese-V1-2-Plus", "internvl-chat-v1-2"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b"),
    ("Qwen/Qwen2-VL-7B-Instruct", "qwen2-vl-7b"),
    ("google/gemma-3-12b-it", "gemma-3-12b"),
    ("microsoft/Phi-3-medium-4k-instruct", "phi-3-medium"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2-lite"),
    ("google-t5/t5-3b", "t5-3b"),
    ("t5-large", "t5-large"),
    ("MAGAer13/mplug-owl-llama-7b", "mplug-owl-llama-7b"),
    ("rhymes-ai/Aria", "aria"),
])
def test_new_families_are_found_by_their_names(name, key):
    spec = find_model(name)
    assert spec is not None and spec.key == key

"""Rows composed from other rows. InternVL 3.0: the repository's table pairs each size with its vision tower and
language model, and each row has that language model's dimensions and tower. Checkpoints of a known architecture
under another name (Mini-InternVL 1.5, InternLM2.5, Tulu 2) find its row; neighbouring names do not."""
from __future__ import annotations

import pytest

from trainlint.memory import find_model
from trainlint.memory.catalog import model_catalog, resolve_name

# Size -> (tower row, the catalog row of the language model the table names, its layers).
COMPOSITION = {
    "1b": ("intern-vit-300m", "qwen2-0.5b", 24),
    "2b": ("intern-vit-300m", "qwen2-1.5b", 28),
    "8b": ("intern-vit-300m", "qwen2-7b", 28),
    "14b": ("intern-vit-300m", "qwen2.5-14b", 48),
    "38b": ("intern-vit-6b", "qwen2.5-32b", 64),
    "78b": ("intern-vit-6b", "qwen2-72b", 80),
}


@pytest.mark.parametrize("size", sorted(COMPOSITION))
def test_each_size_has_its_language_model_dimensions_and_tower(size):
    tower, language_model, layers = COMPOSITION[size]
    row, llm = model_catalog()[f"internvl3-{size}"], model_catalog()[language_model]
    assert row.kind == "vlm" and row.vision == tower
    assert (row.hidden, row.layers, row.heads, row.kv_heads, row.intermediate) == (
        llm.hidden, layers, llm.heads, llm.kv_heads, llm.intermediate)
    # InternVL's checkpoints resize the vocabulary and untie the head: a little under the language model's count
    # for the large ones, above it for the small ones whose head the base model ties.
    assert row.vocab == 151674 and not row.tied
    if llm.tied:
        assert row.params_b > llm.params_b
    else:
        assert row.params_b == pytest.approx(llm.params_b, rel=1e-3) and row.params_b < llm.params_b


@pytest.mark.parametrize("name, key", [
    ("OpenGVLab/InternVL3-8B", "internvl3-8b"),
    ("OpenGVLab/InternVL3-8B-Instruct", "internvl3-8b"),
    ("OpenGVLab/InternVL3-1B", "internvl3-1b"),
    ("OpenGVLab/InternVL3-38B-Instruct", "internvl3-38b"),
    ("/models/InternVL3-78B", "internvl3-78b"),
    # Checkpoints of a row's architecture under another name.
    ("./pretrained/Mini-InternVL-Chat-2B-V1-5", "internvl2-2b"),  # InternViT-300M + internlm2-chat-1_8b
    ("./pretrained/Mini-InternVL-Chat-4B-V1-5", "internvl2-4b"),  # InternViT-300M + Phi-3-mini-128k
    ("./pretrained/internlm2_5-20b-chat", "internlm2-20b"),  # InternVL2_5-26B's llm_config: InternLM2-20B's dims
    ("./pretrained/internlm2_5-1_8b-chat", "internlm2-1.8b"),
    ("allenai/tulu-2-7b", "llama-2-7b"),
    ("allenai/tulu-2-dpo-13b", "llama-2-13b"),
    ("allenai/tulu-2-dpo-70b", "llama-2-70b"),
])
def test_the_names_launchers_write_find_the_row(name, key):
    found = resolve_name(name, cache_dirs=())
    assert found is not None and found.key == key and found.resolved_by == "catalog"


@pytest.mark.parametrize("name, not_prefix", [
    ("OpenGVLab/InternVL3_5-8B", "internvl3-"),  # InternVL 3.5: another language model (Qwen3)
    ("OpenGVLab/InternVL3-9B", "internvl3-"),  # InternLM3-8B inside: no row
    ("OpenGVLab/InternVL2_5-8B", "internvl3-"),
    ("OpenGVLab/InternVL2-8B", "internvl3-"),
    # InternVL's own pretrain outputs name the chat version and then their language model: never a whole pair.
    ("./work_dirs/internvl_chat_v1_5_internlm2_1_8b_dynamic_res_pretrain", "internvl2-"),
    ("./work_dirs/internvl_chat_v1_5_phi3_3_8b_dynamic_res_finetune", "internvl2-"),
    ("./work_dirs/internvl_chat_v1_5_hermes2_yi34b_dynamic_res_pretrain", "internvl2-"),
])
def test_neighbouring_names_do_not_take_the_rows(name, not_prefix):
    found = find_model(name)
    assert found is None or not found.key.startswith(not_prefix), (name, found.key)

"""The model catalog against the architecture dimensions published for the calibration
(benchmarks/data/model_dims.csv, each row read from a config.json the row names)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from trainlint.memory import find_model, find_vision_tower

DIMS = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "model_dims.csv"
ROWS = list(csv.DictReader(DIMS.open(encoding="utf-8")))
COLUMNS = {"hidden": "hidden_size", "layers": "num_hidden_layers", "heads": "num_attention_heads",
           "kv_heads": "num_key_value_heads", "intermediate": "intermediate_size", "vocab": "vocab_size"}


def _published(row: dict, column: str):
    text = row[column].strip()
    return int(text) if text.isdigit() else None  # vision towers publish no vocabulary


def test_the_dimension_table_covers_llms_and_vision_towers():
    assert len(ROWS) >= 15
    assert any("vision" in row["model"].lower() for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["model"])
def test_catalog_dimensions_match_the_published_config(row):
    spec = find_model(row["hf_repo"]) or find_vision_tower(row["hf_repo"])
    assert spec is not None, row["hf_repo"]
    for field, column in COLUMNS.items():
        published = _published(row, column)
        if published is None:
            continue
        if field == "intermediate" and spec.key == "qwen-7b":
            published //= 2  # Qwen v1's config writes the sum of both MLP branches; the catalog one branch
        assert getattr(spec, field) == published, (field, spec.key)
    assert spec.params_b == pytest.approx(float(row["params_b_computed"]), rel=1e-3)

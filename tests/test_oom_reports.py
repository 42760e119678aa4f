"""The real-world outcome set (benchmarks/oom_reports.csv) stays well-formed, and its scorer runs."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load_scorer():
    spec = importlib.util.spec_from_file_location("oom_score", BENCHMARKS / "oom_score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["oom_score"] = module
    spec.loader.exec_module(module)
    return module


oom_score = _load_scorer()
ROWS = oom_score.load_rows(BENCHMARKS / "oom_reports.csv")
RECIPES = oom_score.load_recipes(BENCHMARKS / "recipes.csv")
THREAD_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues|discussions|pull)/\d+$")


def test_every_required_column_is_present():
    assert set(oom_score.REQUIRED_COLUMNS) <= set(ROWS[0])


def test_the_set_is_large_and_holds_both_outcomes():
    outcomes = [row["outcome"] for row in ROWS]
    assert len(ROWS) >= 45
    assert set(outcomes) == {"oom", "fits"}


def test_ids_are_unique():
    ids = [row["id"] for row in ROWS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["id"])
def test_row_is_well_formed(row):
    row = oom_score.with_recipe(row, RECIPES)
    assert THREAD_URL.match(row["url"]), row["url"]
    assert row["url"].split("/")[3].lower() == row["repository"].split("/")[0].lower()
    assert row["outcome"] in {"oom", "fits"}
    assert row["when"] in {"", "load", "step1", "eval", "later", "n/a"}
    assert row["tuning"] in {"", "full", "lora", "qlora", "freeze"}
    assert row["precision"] in {"", "bf16", "fp16", "fp32"}
    assert row["zero_stage"] in {"", "0", "1", "2", "3", "fsdp"}
    assert row["offload"] in {"", "none", "optimizer", "optimizer+param"}
    assert row["gradient_checkpointing"] in {"true", "false", "unknown"}
    assert row["attention"] in {"flash", "sdpa", "eager", "unknown"}
    assert row["model"]
    assert int(row["per_device_batch"]) >= 1
    assert float(row["gpu_memory_gib"]) > 0
    for column in ("num_gpus", "grad_accum", "seq_len", "image_tiles"):
        assert row[column] == "" or int(row[column]) >= 1, column
    assert row["model_params_b"] == "" or float(row["model_params_b"]) > 0


def test_a_fits_row_says_it_did_not_fail():
    assert all(row["when"] == "n/a" for row in ROWS if row["outcome"] == "fits")


def test_the_job_passes_only_what_the_row_states():
    row = next(r for r in ROWS if r["id"] == "llava-1499-7b-4xa6000")
    flags = oom_score.launcher_flags(row)
    assert "--per_device_train_batch_size 1" in flags
    assert not any(flag.startswith(("--model_max_length", "--fsdp")) for flag in flags)
    # Unstated sharding, precision and checkpointing come from variables the job does not set: unknown.
    unstated = [flag for flag in flags if flag.startswith(("--deepspeed", "--bf16", "--gradient_checkpointing"))]
    assert len(unstated) == 3 and all(" $" in flag for flag in unstated)
    assert not oom_score.grounded_row(row)


def test_a_zero3_offload_row_writes_both_offloads(tmp_path):
    row = next(r for r in ROWS if r["id"] == "minicpm-828-o-full-llm-zero3-offload-2x3090")
    oom_score.write_job(row, tmp_path)
    config = (tmp_path / "ds_config.json").read_text()
    assert '"stage": 3' in config and config.count('"device": "cpu"') == 2
    assert "--max_slice_nums 1" in (tmp_path / "finetune.sh").read_text()


@pytest.mark.parametrize("reported, bound", [
    ("2023-07-21", "4.33.0"),  # 4.31 out, 4.32 next: a main-branch build of that day holds 4.32's features at most
    ("2023-12-01", "4.37.0"),  # the SDPA default (4.36) may already be on main
    ("2023-12-11", "4.38.0"),  # the day 4.36 is released counts as before it
    ("2099-01-01", None),
])
def test_a_report_date_bounds_the_transformers_release(reported, bound):
    assert oom_score.release_bound(reported) == bound


def test_a_dated_row_without_a_version_writes_its_bound(tmp_path):
    row = next(r for r in ROWS if r["id"] == "openinstruct-25-llama7b-4xa100-80-b2")
    oom_score.write_job(oom_score.with_recipe(row, RECIPES), tmp_path)
    assert (tmp_path / "requirements.txt").read_text() == "transformers<4.33.0\n"


def test_scorer_returns_one_verdict_per_row():
    chosen = [ROWS[0], next(r for r in ROWS if r["outcome"] == "fits"),
              next(r for r in ROWS if r["repository"] == "hiyouga/LLaMA-Factory")]
    results = oom_score.score(chosen)
    assert [r.id for r in results] == [row["id"] for row in chosen]
    for row, result in zip(chosen, results):
        expected = {"caught", "missed"} if row["outcome"] == "oom" else {"quiet", "false-alarm"}
        assert result.verdict in expected
        assert result.capacity_gib is not None and result.capacity_gib > 0


def test_every_named_recipe_is_listed_with_its_source():
    for row in ROWS:
        key = oom_score.recipe_key(row)
        assert key is None or key in RECIPES, row["id"]
    assert all(recipe["source"] and recipe["notes"] for recipe in RECIPES.values())


def test_a_recipe_fills_only_what_the_reporter_left_unstated():
    row = next(r for r in ROWS if r["id"] == "llava-655-7b-zero2-8xa100-40")
    merged = oom_score.with_recipe(dict(row, seq_len="", gradient_checkpointing="unknown"), RECIPES)
    # The reporter chose ZeRO-2 and batch 1; the v1.5 script's ZeRO-3 and batch 16 do not apply.
    assert (merged["zero_stage"], merged["per_device_batch"], merged["offload"]) == ("2", "1", "none")
    assert (merged["seq_len"], merged["gradient_checkpointing"]) == ("2048", "true")


def test_a_recipe_from_another_repository_is_named_with_its_owner():
    row = next(r for r in ROWS if r["id"] == "seeclick-24-qwenvl-lora-4x48-b1")
    row = dict(row, recipe="QwenLM/Qwen-VL:finetune/finetune_lora_ds.sh@ed5195eea")
    assert oom_score.recipe_key(row) == ("qwenlm/qwen-vl", "finetune/finetune_lora_ds.sh", "ed5195eea")
    assert oom_score.with_recipe(row, RECIPES)["zero_stage"] == "2"


def test_a_recipe_without_a_commit_is_the_head_reading():
    row = next(r for r in ROWS if r["id"] == "qwenvl-92-lora-ds-1xa6000")
    assert oom_score.recipe_key(dict(row, recipe="finetune/finetune_lora_ds.sh"))[2] == "HEAD"
    assert oom_score.recipe_key(row) == ("qwenlm/qwen-vl", "finetune/finetune_lora_ds.sh", "ed5195eea")


def test_every_recipe_a_row_names_was_read_at_a_commit_no_later_than_the_report():
    for row in ROWS:
        key = oom_score.recipe_key(row)
        if key is None:
            continue
        assert key[2] != "HEAD" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["reported"]), row["id"]
        assert RECIPES[key]["committed"] <= row["reported"], row["id"]


def test_a_recipe_committed_after_the_report_is_refused():
    row = next(r for r in ROWS if r["id"] == "qwenvl-92-lora-ds-1xa6000")
    with pytest.raises(ValueError):
        oom_score.with_recipe(dict(row, reported="2023-09-01"), RECIPES)


def test_the_recipes_modules_to_save_reach_the_job(tmp_path):
    row = oom_score.with_recipe(next(r for r in ROWS if r["id"] == "qwenvl-92-lora-ds-1xa6000"), RECIPES)
    assert row["lora_modules_to_save"] == "wte,lm_head"
    oom_score.write_job(row, tmp_path)
    assert "--lora_modules_to_save wte,lm_head" in (tmp_path / "finetune.sh").read_text()
    assert "lora_modules_to_save: Optional[str]" in (tmp_path / "train.py").read_text()


def test_modules_to_save_follow_the_recipes_own_condition_on_the_model_path():
    recipe = {"lora_modules_to_save": "wte,lm_head unless model contains chat"}
    assert oom_score.modules_to_save(recipe, "Qwen/Qwen-14B-Chat") == ""
    assert oom_score.modules_to_save(recipe, "Qwen/Qwen-14B") == "wte,lm_head"


def test_the_recipes_transformers_pin_fills_only_an_unstated_version():
    row = next(r for r in ROWS if r["id"] == "qwenvl-92-lora-ds-1xa6000")
    assert oom_score.with_recipe(row, RECIPES)["transformers_version"] == "4.32.0"
    assert oom_score.with_recipe(dict(row, transformers_version="4.36.0"), RECIPES)["transformers_version"] == "4.36.0"


def test_a_recipe_that_trains_the_vision_encoder_says_so_in_the_job_unless_the_row_does(tmp_path):
    row = next(r for r in ROWS if r["id"] == "minicpm-145-v2-full-zero2-8xa800-b8")
    merged = oom_score.with_recipe(row, RECIPES)
    assert ("tune_vision", "True") in oom_score.extra_settings(merged)
    oom_score.write_job(merged, tmp_path)
    assert "--tune_vision True" in (tmp_path / "finetune.sh").read_text()
    frozen = oom_score.with_recipe(dict(row, extra="tune_vision=False"), RECIPES)
    assert oom_score.extra_settings(frozen) == [("tune_vision", "False")]


def test_a_row_without_a_recipe_stays_as_stated():
    row = next(r for r in ROWS if r["id"] == "llava-1499-7b-4xa6000")
    assert oom_score.with_recipe(row, RECIPES) == row
    assert not oom_score.grounded_row(oom_score.with_recipe(row, RECIPES))


def test_extra_settings_reach_the_llamafactory_recipe(tmp_path):
    row = next(r for r in ROWS if r["id"] == "lf-3638-llama3-8b-qlora-unsloth-a100-64k")
    oom_score.write_job(row, tmp_path)
    recipe = (tmp_path / "sft.yaml").read_text()
    assert "use_unsloth: true\n" in recipe and "lora_target: q_proj,v_proj\n" in recipe
    assert "deepspeed" not in recipe + (tmp_path / "finetune.sh").read_text()  # one card, no DeepSpeed config named


def test_an_extra_setting_replaces_the_recipes_own_line():
    row = next(r for r in ROWS if r["id"] == "lf-5051-qwen2-7b-rm-full-zero3-a800-8k")
    lines = oom_score.llamafactory_recipe(row)
    assert "stage: rm" in lines and "stage: sft" not in lines


def test_an_unstated_llamafactory_setting_is_written_as_a_flag_read_from_the_environment(tmp_path):
    # `llamafactory-cli train sft.yaml deepspeed=$X` overrides are not read as settings, and would leave the job
    # looking unsharded; the flag form leaves the sharding unknown.
    row = next(r for r in ROWS if r["id"] == "lf-5553-qwen2vl-72b-full-4xa100-80")
    oom_score.write_job(row, tmp_path)
    launcher = (tmp_path / "finetune.sh").read_text()
    assert "--deepspeed $DS_CONFIG" in launcher and not (tmp_path / "sft.yaml").exists()
    assert oom_score.score_row(row, RECIPES).verdict == "missed"  # no verdict rests on an unknown stage


def test_a_freeze_row_freezes_all_but_its_last_layers_in_code(tmp_path):
    row = next(r for r in ROWS if r["tuning"] == "freeze")
    oom_score.write_job(oom_score.with_recipe(row, RECIPES), tmp_path)
    script = (tmp_path / "train.py").read_text()
    assert "param.requires_grad = False" in script and "TRAINABLE_LAYERS = [" in script
    full = next(r for r in ROWS if r["tuning"] == "full" and not r["recipe"])
    (tmp_path / "full").mkdir()
    oom_score.write_job(full, tmp_path / "full")
    assert "requires_grad" not in (tmp_path / "full" / "train.py").read_text()


def test_a_preference_stage_runs_trl_s_trainer_and_is_no_flag(tmp_path):
    row = next(r for r in ROWS if r["id"] == "s26-alignhb-22-zephyr7b-dpo-full-zero3-8xa40-b1")
    oom_score.write_job(oom_score.with_recipe(row, RECIPES), tmp_path)
    assert "trainer = DPOTrainer(" in (tmp_path / "train.py").read_text()
    assert "--stage" not in (tmp_path / "finetune.sh").read_text()

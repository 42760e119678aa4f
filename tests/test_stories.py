"""The five out-of-memory stories behind the product, on samples that reproduce their launchers."""
from __future__ import annotations

import shutil

from tests.conftest import MOE_LLAVA, SAMPLES

STORIES = SAMPLES / "stories"


def _findings(document, code):
    return [f for f in document["findings"] if f["code"] == code]


def test_moe_llava_batch_8_is_flagged_on_40gb_and_not_on_80gb(cli):
    folder = MOE_LLAVA
    _, on_40 = cli.check_json(folder, "scripts/finetune_phi2.sh", "--gpu", "a100-40gb", "--num-gpus", "8",
                              "--preserve-effective-batch")
    [finding] = _findings(on_40, "TL101")
    assert finding["path"] == "scripts/finetune_phi2.sh" and finding["line"] == 18
    changes = finding["fix"]["message"]
    assert "micro-batch 4, accumulation 4" in changes and "128" in changes
    _, on_80 = cli.check_json(folder, "scripts/finetune_phi2.sh", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not _findings(on_80, "TL101")


def test_moe_llava_eval_batch_is_harmless_because_evaluation_is_off(cli):
    _, document = cli.check_json(MOE_LLAVA, "scripts", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not _findings(document, "TL103") and not _findings(document, "TL104")
    [run] = document["runs"]
    assert run["settings"]["eval_strategy"]["value"] == "no"
    assert run["effective_batch"] == 128


def test_sharegpt4v_micro_batch_16_fits_80gb_not_40gb(cli):
    folder = STORIES / "sharegpt4v"
    _, on_40 = cli.check_json(folder, "scripts/slurm_pretrain_7b.sh", "--gpu", "a100-40gb")
    [finding] = _findings(on_40, "TL101")
    assert "per_device_train_batch_size 16" in finding["message"]
    [run] = on_40["runs"]
    assert run["world_size"] == 16 and run["settings"]["zero_stage"]["value"] == 3
    _, on_80 = cli.check_json(folder, "scripts/slurm_pretrain_7b.sh", "--gpu", "a100-80gb")
    assert not _findings(on_80, "TL101")


def test_minicpm_lora_evaluating_every_50_steps_at_the_train_batch_is_not_flagged(cli):
    # Evaluation every 50 steps with the train batch (1) peaks below a training step: no gradients, one
    # sample's activations. Frequent, but no memory risk.
    _, document = cli.check_json(STORIES / "minicpm", "finetune/finetune_lora.sh", "--gpu", "a100-80gb")
    assert not _findings(document, "TL104")


def test_minicpm_lora_evaluating_every_50_steps_at_a_large_eval_batch_is_flagged(cli, tmp_path):
    shutil.copytree(STORIES / "minicpm", tmp_path / "minicpm")
    launcher = tmp_path / "minicpm" / "finetune" / "finetune_lora.sh"
    text = launcher.read_text()
    launcher.write_text(text.replace("--per_device_eval_batch_size 1 ", "--per_device_eval_batch_size 32 "))
    _, document = cli.check_json(tmp_path / "minicpm", "finetune/finetune_lora.sh", "--gpu", "a100-80gb")
    [finding] = _findings(document, "TL104")
    assert finding["line"] == 27 and "every 50 steps" in finding["message"]
    assert "GiB above a training step" in finding["message"]
    assert finding["fix"]["applicability"] == "unsafe"


def test_minicpm_full_fine_tune_batch_8_does_not_fit_an_a800(cli):
    _, document = cli.check_json(STORIES / "minicpm", "finetune/finetune_ds.sh", "--gpu", "a800-80gb")
    [finding] = _findings(document, "TL101")
    assert "per_device_train_batch_size 8" in finding["message"]
    [run] = document["runs"]
    assert run["settings"]["image_tiles"]["value"] == 9


def test_docowl_a100_launcher_on_a_v100_needs_fp16(cli):
    folder = STORIES / "docowl"
    _, on_v100 = cli.check_json(folder, "scripts", "--gpu", "v100-32gb")
    flagged = {f["path"] for f in _findings(on_v100, "TL203")}
    assert flagged == {"scripts/train_it.sh"}
    runs = {r["id"].split(":")[0]: r for r in on_v100["runs"]}
    assert runs["scripts/train_it_v100.sh"]["settings"]["fp16"]["value"] is True
    assert runs["scripts/train_it.sh"]["settings"]["per_device_train_batch_size"]["value"] == 4
    assert runs["scripts/train_it_v100.sh"]["settings"]["per_device_train_batch_size"]["value"] == 1
    _, on_a100 = cli.check_json(folder, "scripts/train_it.sh", "--gpu", "a100-80gb")
    assert not _findings(on_a100, "TL203")


def test_docowl_parse_known_args_drops_flags_the_parser_does_not_define(cli):
    _, document = cli.check_json(STORIES / "docowl", "scripts/train_it.sh", "--gpu", "a100-80gb")
    [run] = document["runs"]
    # `--use-lora` is not an argument of the entry script: parse_known_args drops it. LoRA comes
    # from the script's own `--language-training-method` default instead.
    assert run["settings"]["lora"]["value"] is True
    assert run["settings"]["lora"]["path"] == "pipeline/train.py"
    assert "--use-lora" in {f["message"].split("`")[1] for f in _findings(document, "TL305")}
    # accumulation is recomputed in code from the global batch after parsing.
    assert run["settings"]["gradient_accumulation_steps"]["value"] is None

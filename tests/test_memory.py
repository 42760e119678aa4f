"""Memory model: formulas pinned to their published form, catalogs, the user stories, calibration."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from trainlint.core import RunFacts, Setting, SourceKind, TrainingRun, Unknown
from trainlint.memory import (
    JobMemoryEstimate,
    estimate,
    find_gpu,
    find_model,
    gpu_catalog,
    gpu_from_memory,
    korthikanti_activation_bytes,
    largest_fitting_batch,
    lora_adapter_params,
    resolve_model,
    resolve_vision,
    suggestions,
    zero2_model_states_bytes,
    zero3_model_states_bytes,
)

GIB = 2**30
REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "benchmarks" / "data" / "memory_calibration.csv"


def make_run(path: str = "", facts: RunFacts = RunFacts(), **knobs) -> TrainingRun:
    settings = {k: Setting(value=v, kind=SourceKind.ASSUMED) for k, v in knobs.items()}
    return TrainingRun(id="test", path=path, launcher="deepspeed", origin=None, entry=None,
                       settings=settings, facts=facts)


A100_40 = find_gpu("a100-40gb")
A100_80 = find_gpu("A100-SXM4-80GB")


# --- A1: DeepSpeed model-state estimators ---------------------------------------------------------

def test_zero2_matches_deepspeed_doc_example_for_t5_3b():
    params = 2851e6  # t5-3b in DeepSpeed's memory.rst example, 1 node x 8 GPUs
    assert zero2_model_states_bytes(params, 8, cpu_offload=True) / GIB == pytest.approx(5.31, abs=0.01)
    # Current code (PR #5099): 2*P + 18*P/N -> 11.28 GiB for the no-offload row.
    assert zero2_model_states_bytes(params, 8) == 2 * params + int(18 * params / 8)
    assert zero2_model_states_bytes(params, 8) / GIB == pytest.approx(11.28, abs=0.01)


def test_zero3_matches_deepspeed_formula():
    params, largest = 6.738e9, 32000 * 4096
    assert zero3_model_states_bytes(params, largest, 16) == 4 * largest + int(18 * params / 16)
    assert zero3_model_states_bytes(params, largest, 16, cpu_offload=True) == 4 * largest + int(2 * params / 16)
    assert zero3_model_states_bytes(params, largest, 16, cpu_offload=True, cpu_offload_params=True) == 4 * largest


# --- A5: Korthikanti et al. -----------------------------------------------------------------------

def test_korthikanti_per_layer_and_full_recompute():
    s, b, h, a, layers = 2048, 1, 12288, 96, 96  # GPT-3 175B shape from the paper
    per_layer = s * b * h * (34 + 5 * a * s / h)
    assert korthikanti_activation_bytes(s, b, h, a, layers) == pytest.approx(per_layer * layers)
    assert korthikanti_activation_bytes(s, b, h, a, layers, "full") == 2 * s * b * h * layers
    assert korthikanti_activation_bytes(s, b, h, a, layers, "selective") == 34 * s * b * h * layers


def test_lora_adapter_params_llama_7b_all_linear():
    llama = find_model("meta-llama/Llama-2-7b-hf")
    per_layer = 16 * ((4096 + 4096) * 4 + 2 * (4096 + 11008) + (11008 + 4096))
    assert lora_adapter_params(llama, 16) == per_layer * 32


# --- catalogs --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,key", [
    ("lmsys/vicuna-7b-v1.5", "llama-2-7b"),
    ("lmsys/vicuna-13b-v1.5", "llama-2-13b"),
    ("./checkpoints/llava-v1.5-7b", "llama-2-7b"),
    ("microsoft/phi-2", "phi-2"),
    ("openbmb/MiniCPM-Llama3-V-2_5", "minicpm-llama3-v-2_5"),
    ("Qwen/Qwen-7B-Chat-Int4", "qwen-7b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2-7b"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3-8b"),
])
def test_find_model_by_repo_alias_and_path(name, key):
    assert find_model(name).key == key


def test_resolve_model_reads_local_config_relative_to_launcher(tmp_path):
    model_dir = tmp_path / "ckpt" / "my-model"
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
        "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 32000,
    }))
    launcher = tmp_path / "scripts" / "train.sh"
    launcher.parent.mkdir()
    run = make_run(path=str(tmp_path / "train.sh"), model_name_or_path="ckpt/my-model")
    spec = resolve_model(run)
    assert (spec.hidden, spec.layers, spec.kv_heads, spec.resolved_by) == (2048, 16, 4, "config.json")


def test_a_local_config_json_with_odd_values_falls_back_to_the_name(tmp_path):
    model_dir = tmp_path / "ckpt" / "vicuna-7b-v1.5"
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text(json.dumps({
        "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": "eight",
        "intermediate_size": [11008], "vocab_size": True,
    }))
    spec = resolve_model(make_run(path=str(tmp_path / "train.sh"), model_name_or_path="ckpt/vicuna-7b-v1.5"))
    assert spec.resolved_by == "catalog" and spec.hidden == 4096


def test_size_in_name_is_the_last_resort():
    spec = resolve_model(make_run(model_name_or_path="/data/ckpts/acme-chat-13b"))
    assert spec.resolved_by == "name size" and spec.params_b == 13


def test_vision_tower_from_knob_or_built_in():
    run = make_run(model_name_or_path="lmsys/vicuna-7b-v1.5", vision_tower="openai/clip-vit-large-patch14-336")
    assert resolve_vision(run).image_tokens == 576
    minicpm = make_run(model_name_or_path="openbmb/MiniCPM-Llama3-V-2_5")
    assert resolve_vision(minicpm, resolve_model(minicpm)).key == "minicpm-siglip-448"


@pytest.mark.parametrize("name,key", [
    ("a100-40gb", "a100-40gb"), ("A100-40G", "a100-40gb"), ("a100 40GB", "a100-40gb"),
    ("A100-SXM4-80GB", "a100-80gb"), ("h100", "h100-80gb"), ("v100-32gb", "v100-32gb"), ("t4", "t4"),
    ("rtx4090", "rtx4090"), ("a6000", "a6000"), ("l40s", "l40s"), ("a10g", "a10g"), ("l4", "l4"),
    ("a800", "a800-80gb"), ("h800", "h800-80gb"), ("h200", "h200"), ("3090", "rtx3090"),
])
def test_find_gpu_accepts_common_spellings(name, key):
    assert find_gpu(name).key == key


@pytest.mark.parametrize("name,key", [
    ("NVIDIA H100 80GB HBM3", "h100-80gb"), ("NVIDIA A100-SXM4-80GB-HBM2e", "a100-80gb"),
    ("NVIDIA Tesla V100-SXM2-32GB", "v100-32gb"), ("AMD Instinct MI300X", "mi300x"),
    ("NVIDIA RTX 6000 Ada Generation", "6000-ada"),
])
def test_find_gpu_reads_the_names_nvidia_smi_and_rocm_print(name, key):
    assert find_gpu(name).key == key


@pytest.mark.parametrize("name", ["a", "h", "rtx", "a1000", "40", "80gb"])
def test_find_gpu_does_not_guess_a_card_from_a_fragment_or_a_typo(name):
    assert find_gpu(name) is None


def test_gpu_capacities_are_usable_memory():
    catalog = gpu_catalog()
    assert catalog["a100-40gb"].total_gib == 39.4 and catalog["a100-80gb"].total_gib == 79.2
    assert not catalog["v100-32gb"].bf16 and catalog["h100-80gb"].bf16
    assert find_gpu("not-a-gpu") is None
    assert gpu_from_memory(24).total_gib == 24.0


# --- the stories -----------------------------------------------------------------------------------

MOE_LLAVA_PHI2 = dict(
    model_name_or_path="microsoft/phi-2", vision_tower="openai/clip-vit-large-patch14-336",
    per_device_train_batch_size=8, per_device_eval_batch_size=4, gradient_accumulation_steps=2,
    world_size=8, zero_stage=2, offload_optimizer="none", bf16=True, gradient_checkpointing=True,
    max_seq_length=2048, eval_strategy="no",
)


def test_moe_llava_phi2_8_by_2_does_not_fit_40gb_but_4_by_4_does():
    big = estimate(make_run(**MOE_LLAVA_PHI2), A100_40)
    small = estimate(make_run(**{**MOE_LLAVA_PHI2, "per_device_train_batch_size": 4,
                                 "gradient_accumulation_steps": 4}), A100_40)
    assert not big.fits and small.fits
    assert big.image_tokens == 576 and "eval" not in big.breakdown


def test_suggestions_lead_with_a_fitting_batch_that_keeps_the_effective_batch():
    run = make_run(**MOE_LLAVA_PHI2)
    first = suggestions(run, A100_40)[0]
    batch = first.overrides["per_device_train_batch_size"]
    assert first.estimate.fits and first.preserves_training
    assert batch * first.overrides["gradient_accumulation_steps"] == 16
    assert largest_fitting_batch(run, A100_40) >= batch


SHAREGPT4V_7B = dict(
    model_name_or_path="lmsys/vicuna-7b-v1.5", vision_tower="openai/clip-vit-large-patch14-336",
    per_device_train_batch_size=16, world_size=16, zero_stage=3, bf16=True, gradient_checkpointing=True,
    max_seq_length=2048,
)


def test_sharegpt4v_7b_16_by_2048_zero3_needs_80gb():
    run = make_run(**SHAREGPT4V_7B)
    assert not estimate(run, A100_40).fits
    fits_80 = estimate(run, A100_80)
    assert fits_80.fits
    # The fp32 logits of one micro-batch are 16 x 2048 x 32000 x 4 bytes = 3.9 GiB per copy.
    assert fits_80.breakdown["logits"] >= 3.9


def test_minicpm_llama3_v25_full_finetune_near_published_51gib():
    run = dict(model_name_or_path="openbmb/MiniCPM-Llama3-V-2_5", per_device_train_batch_size=1,
               world_size=8, zero_stage=2, bf16=True, gradient_checkpointing=True, max_seq_length=2048,
               tune_vision=True)
    eight = estimate(make_run(**run), A100_80)
    assert abs(eight.peak_gib - 51.2) / 51.2 <= 0.25
    assert eight.low_gib <= 51.2 <= eight.high_gib
    assert not estimate(make_run(**{**run, "world_size": 2}), A100_80).fits  # published: out of memory


# --- behaviour -------------------------------------------------------------------------------------

def test_unknown_inputs_are_assumed_and_flagged():
    run = make_run(model_name_or_path="lmsys/vicuna-7b-v1.5", per_device_train_batch_size=Unknown("$BS"),
                   bf16=True, world_size=8, zero_stage=3)
    est = estimate(run, A100_80)
    assert isinstance(est, JobMemoryEstimate) and est.rests_on_assumptions
    assert any("batch size unknown: assumed 1" in u for u in est.unknowns)
    assert any("sequence length unknown" in u for u in est.unknowns)


def test_unknown_model_still_returns_an_estimate():
    run = make_run(model_name_or_path="$MODEL_PATH", per_device_train_batch_size=4)
    est = estimate(run, A100_80)
    assert est.unknowns and "model" in est.assumed_inputs
    assert largest_fitting_batch(run, A100_80) is None


def test_overrides_and_techniques_move_the_estimate_the_right_way():
    run = make_run(model_name_or_path="meta-llama/Meta-Llama-3-8B", per_device_train_batch_size=8,
                   world_size=8, zero_stage=2, bf16=True, gradient_checkpointing=False, max_seq_length=4096,
                   attn_implementation="flash_attention_2")
    base = estimate(run, A100_80).peak_gib
    assert estimate(run, A100_80, {"per_device_train_batch_size": 2}).peak_gib < base
    assert estimate(run, A100_80, {"gradient_checkpointing": True}).peak_gib < base
    assert estimate(run, A100_80, {"zero_stage": 3}).peak_gib < base
    assert estimate(run, A100_80, {"offload_optimizer": "cpu"}).peak_gib < base
    assert estimate(run, A100_80, {"lora": True}).peak_gib < base
    assert estimate(run, A100_80, {"attn_implementation": "eager"}).peak_gib > base
    # "none" is not an offload
    assert estimate(run, A100_80, {"offload_optimizer": "none"}).peak_gib == base


def test_zero2_counts_deepspeeds_gradient_buckets_at_their_configured_size():
    run = dict(model_name_or_path="Qwen/Qwen-7B", per_device_train_batch_size=1, world_size=4, zero_stage=2,
               bf16=True, gradient_checkpointing=True, max_seq_length=512, lora=True)
    default = estimate(make_run(**run), A100_80).breakdown["gradients"]
    # DeepSpeed's default bucket is 5e8 16-bit elements; Qwen's ds_config_zero2.json asks for two of 2e8.
    explicit = estimate(make_run(**run, reduce_bucket_size=2e8, overlap_comm=True), A100_80).breakdown["gradients"]
    auto = estimate(make_run(**run, reduce_bucket_size="auto"), A100_80).breakdown["gradients"]
    unbucketed = estimate(make_run(**run, contiguous_gradients=False), A100_80).breakdown["gradients"]
    assert default - unbucketed == pytest.approx(5e8 * 2 / GIB, abs=0.002)
    assert explicit - unbucketed == pytest.approx(2 * 2e8 * 2 / GIB, abs=0.002)
    assert auto - unbucketed == pytest.approx(4096 * 4096 * 2 / GIB, abs=0.002)  # HF fills "auto" with hidden²
    zero3 = estimate(make_run(**dict(run, zero_stage=3)), A100_80).breakdown["gradients"]
    assert zero3 == estimate(make_run(**dict(run, zero_stage=3), contiguous_gradients=False), A100_80).breakdown[
        "gradients"]


def test_a_model_that_defaults_to_flash_attention_falls_back_to_eager_before_ampere():
    run = make_run(model_name_or_path="OpenGVLab/InternVL-Chat-V1-2", per_device_train_batch_size=1, world_size=32,
                   zero_stage=3, fp16=True, gradient_checkpointing=True, max_seq_length=2048)
    v100 = find_gpu("v100-32gb")
    on_v100 = estimate(run, v100)
    assert any("predates Ampere" in note for note in on_v100.assumptions)
    assert on_v100.breakdown["activations"] > estimate(run, A100_80).breakdown["activations"]
    # A kernel the job names is what it runs: the fallback is the model's, not the user's.
    named = make_run(**{**{k: s.value for k, s in run.settings.items()}, "attn_implementation": "sdpa"})
    assert estimate(named, v100).breakdown["activations"] == estimate(named, A100_80).breakdown["activations"]


def test_eval_with_gathered_logits_raises_the_peak_only_when_eval_runs():
    knobs = dict(model_name_or_path="lmsys/vicuna-7b-v1.5", per_device_train_batch_size=1,
                 per_device_eval_batch_size=16, world_size=8, zero_stage=3, bf16=True,
                 gradient_checkpointing=True, max_seq_length=2048)
    quiet = estimate(make_run(**knobs, eval_strategy="no"), A100_80)
    noisy = estimate(make_run(facts=RunFacts(eval_dataset=True, compute_metrics=True),
                              **knobs, eval_strategy="steps"), A100_80)
    assert "eval" not in quiet.breakdown and noisy.breakdown["eval"] > 0
    assert "eval_set_size" in noisy.assumed_inputs


def test_breakdown_adds_up_to_the_peak():
    est = estimate(make_run(**SHAREGPT4V_7B), A100_80)
    assert sum(est.breakdown.values()) == pytest.approx(est.peak_gib, abs=0.05)
    assert est.low_gib <= est.peak_gib <= est.high_gib


def test_batch_multiplier_scales_activations():
    multiplier = Setting(value=2, kind=SourceKind.ASSUMED)
    plain = estimate(make_run(**SHAREGPT4V_7B), A100_80)
    packed = estimate(make_run(facts=RunFacts(batch_multiplier=multiplier), **SHAREGPT4V_7B), A100_80)
    assert packed.breakdown["activations"] == pytest.approx(2 * plain.breakdown["activations"], rel=0.01)


# --- calibration -----------------------------------------------------------------------------------

def test_calibration_accuracy():
    spec = importlib.util.spec_from_file_location("memory_accuracy", REPO / "benchmarks" / "memory_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("memory_accuracy", module)
    spec.loader.exec_module(module)
    assert module.DEFAULT_CSV == CALIBRATION
    stats = module.summary(module.evaluate(module.load_rows(CALIBRATION)))
    # The figures docs/memory-model.md §15 and the README publish (114 rows, 4.7%, 82%, 97%, 96%).
    assert stats["rows"] == 114
    assert stats["median_abs_error"] <= 0.05
    assert stats["within_10"] >= 0.81
    assert stats["within_25"] >= 0.96
    assert stats["in_interval"] >= 0.94


def test_a_placeholder_model_path_falls_back_to_an_exact_model_type():
    run = make_run(model_name_or_path="/path/to/base_llm_model", model_type="phi-2")
    assert resolve_model(run).key == "phi-2"
    # a family name alone ("llama") says nothing about the size: no model
    assert resolve_model(make_run(model_name_or_path="/path/to/base_llm_model", model_type="llama")) is None
    # a path that names a model wins over model_type
    assert resolve_model(make_run(model_name_or_path="lmsys/vicuna-7b-v1.5", model_type="phi-2")).key != "phi-2"

"""Memory features jobs use (docs/memory-model.md §17), on small real-looking recipes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import ZERO2, job
from trainlint.core import Severity
from trainlint.linter import lint, make_target
from trainlint.memory import find_model
from trainlint.memory.catalog import resolve_name

SAMPLES = Path(__file__).parent / "samples" / "memory_features"


def _check(folder: Path, *names: str, gpu: str = "a100-80gb", num_gpus: int = 8):
    for name in names:
        shutil.copy(SAMPLES / name, folder / name)
    result = lint([folder], make_target(gpu=gpu, num_gpus=num_gpus))
    memory = [f for f in result.findings if f.code.startswith("TL1")]
    return memory, next(iter(result.estimates.values()))


def test_axolotl_full_fine_tune_with_a_paged_8bit_optimizer_fits_80gb(tmp_path):
    findings, estimate = _check(tmp_path, "axolotl_fft_8bit.yaml")
    assert not [f for f in findings if f.code in ("TL101", "TL106", "TL108", "TL111")]
    # bf16 weights (axolotl loads in bf16) and no fp32 master copy; the paged optimizer's states page out to CPU memory.
    assert estimate.breakdown.get("optimizer", 0.0) == 0.0
    assert any("a paged optimizer's states move to CPU memory" in note for note in estimate.assumptions)
    assert any("16-bit mixed precision" in note for note in estimate.assumptions)


def test_context_parallel_cut_cross_entropy_and_offload_shrink_the_dynamic_terms(tmp_path):
    findings, estimate = _check(tmp_path, "axolotl_long_context.yaml", "zero3.json")
    notes = " ".join(estimate.assumptions)
    assert "sequence parallelism over 8 GPUs" in notes
    assert "fused linear cross-entropy" in notes and "activation offloading" in notes and "tiled MLP" in notes
    # 65536 tokens x 128256 vocab of fp32 logits would be ~100 GiB; the fused loss holds a chunk.
    assert estimate.breakdown.get("logits", 0.0) < 1.0
    assert not [f for f in findings if f.severity.name == "ERROR"]


def test_without_context_parallelism_the_same_length_overflows(tmp_path):
    text = (SAMPLES / "axolotl_long_context.yaml").read_text()
    for line in ("context_parallel_size: 8\n", "tiled_mlp: true\n", "gradient_checkpointing: offload\n"):
        text = text.replace(line, "")
    (tmp_path / "recipe.yaml").write_text(text.replace("flash_attention: true\n", "flash_attention: true\n"
                                                        "gradient_checkpointing: false\n"))
    shutil.copy(SAMPLES / "zero3.json", tmp_path / "zero3.json")
    result = lint([tmp_path], make_target(gpu="a100-80gb", num_gpus=8))
    assert {f.code for f in result.findings} & {"TL102", "TL106", "TL111"}


@pytest.mark.parametrize("packing, severity", [("", Severity.WARNING), ("sample_packing: true\n", Severity.ERROR)])
def test_axolotl_sample_packing_makes_a_long_sequence_overflow_certain(tmp_path, packing, severity):
    text = (SAMPLES / "axolotl_long_context.yaml").read_text()
    for line in ("context_parallel_size: 8\n", "tiled_mlp: true\n", "gradient_checkpointing: offload\n",
                 "  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n", "plugins:\n"):
        text = text.replace(line, "")
    (tmp_path / "recipe.yaml").write_text(text + "gradient_checkpointing: true\n" + packing)
    shutil.copy(SAMPLES / "zero3.json", tmp_path / "zero3.json")
    result = lint([tmp_path], make_target(gpu="a100-80gb", num_gpus=8))
    (finding,) = [f for f in result.findings if f.code == "TL106"]
    assert finding.severity == severity


def test_megatron_parallelism_is_out_of_scope_and_says_so(tmp_path):
    findings, estimate = _check(tmp_path, "llamafactory_megatron.yaml")
    assert not [f for f in findings if f.code in ("TL101", "TL106", "TL108", "TL111")]
    assert any("tensor/pipeline parallelism over 8 GPUs is not modelled" in n for n in estimate.assumptions)


def _hf_job(folder: Path, flags: str, requirements: str = "") -> None:
    head = "--model_name_or_path meta-llama/Llama-2-7b-hf\n--model_max_length 2048\n"
    files = job(head + flags.replace(" --", "\n--"), launcher="torchrun --nproc_per_node 4")
    for name, text in files.items():
        (folder / name).write_text(text)
    if requirements:
        (folder / "requirements.txt").write_text(requirements)


def test_fsdp_full_shard_is_modelled_as_fsdp(tmp_path):
    _hf_job(tmp_path, '--fsdp "full_shard auto_wrap" --bf16 True --per_device_train_batch_size 1 --output_dir o')
    result = lint([tmp_path], make_target(gpu="a100-80gb"))
    estimate = next(iter(result.estimates.values()))
    assert any(note.startswith("FSDP full sharding over 4 GPUs") for note in estimate.assumptions)
    # fp32 sharded parameters, gradients and Adam states: 16 B/param over 4 GPUs, plus gathered units.
    states = sum(estimate.breakdown[t] for t in ("weights", "gradients", "optimizer"))
    assert 6.738e9 * 16 / 4 / 2**30 < states < 6.738e9 * 16 / 4 / 2**30 + 3


def test_no_deepspeed_config_means_plain_data_parallel(tmp_path):
    _hf_job(tmp_path, "--bf16 True --per_device_train_batch_size 1 --output_dir o")
    estimate = next(iter(lint([tmp_path], make_target(gpu="a100-80gb")).estimates.values()))
    assert not any("ZeRO" in note for note in estimate.assumptions)
    assert any("AMP: fp32 weights" in note for note in estimate.assumptions)


def test_a_transformers_pin_before_4_36_means_eager_attention(tmp_path):
    _hf_job(tmp_path, "--bf16 True --per_device_train_batch_size 1 --output_dir o", "transformers==4.31.0\n")
    estimate = next(iter(lint([tmp_path], make_target(gpu="a100-80gb")).estimates.values()))
    assert any("eager, the default of the pinned transformers 4.31.0" in n for n in estimate.assumptions)


def test_an_unpinned_transformers_keeps_the_lower_memory_default(tmp_path):
    _hf_job(tmp_path, "--bf16 True --per_device_train_batch_size 1 --output_dir o")
    estimate = next(iter(lint([tmp_path], make_target(gpu="a100-80gb")).estimates.values()))
    assert any("assumed sdpa" in n for n in estimate.assumptions)


def test_config_json_from_a_local_hugging_face_cache(tmp_path):
    snapshot = tmp_path / "models--acme--tiny-llm" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 16,
        "num_key_value_heads": 4, "intermediate_size": 2816, "vocab_size": 32000}))
    spec = resolve_name("acme/tiny-llm", cache_dirs=(str(tmp_path),))
    assert spec is not None and spec.resolved_by == "config.json"
    assert (spec.hidden, spec.layers, spec.kv_heads) == (1024, 8, 4)
    assert resolve_name("acme/tiny-llm", cache_dirs=(str(tmp_path / "elsewhere"),)) is None


def test_catalog_families_resolve_with_published_dimensions():
    for name, key, hidden in (("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", 4096),
                              ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", 2048), ("facebook/opt-6.7b", "opt-6.7b", 4096),
                              ("01-ai/Yi-34B-Chat", "yi-34b", 7168), ("tiiuae/falcon-40b", "falcon-40b", 8192),
                              ("lmsys/vicuna-33b-v1.3", "llama-30b", 6656)):
        spec = find_model(name)
        assert spec is not None and spec.key == key and spec.hidden == hidden, name
        computed = spec.layers * spec.layer_params + spec.vocab * spec.hidden * (1 if spec.tied else 2)
        if "moe" not in spec.source and "experts" not in spec.source:
            assert abs(computed / spec.params - 1) < 0.03, name


def test_every_expert_of_a_multimodal_mixture_of_experts_is_resident(tmp_path):
    # Aria activates 3.9B of its 25.3B parameters per token, but ZeRO-2 keeps every expert's 16-bit weights
    # on each GPU: 47 GiB of weights and 41 GiB of sharded optimizer states and gradients exceed an 80 GB card
    # at any batch.
    files = job("--model_name_or_path rhymes-ai/Aria\n--deepspeed zero2.json\n--bf16 True\n"
                "--per_device_train_batch_size 1\n--gradient_checkpointing True\n--model_max_length 2048",
                extra={"zero2.json": ZERO2})
    write_tree(tmp_path, files)
    result = lint([tmp_path], make_target(gpu="a100-80gb"))
    states = [f for f in result.findings if f.code == "TL108"]
    assert [f.severity for f in states] == [Severity.ERROR]
    estimate = next(iter(result.estimates.values()))
    assert 25.3e9 * 2 / 2**30 == pytest.approx(estimate.breakdown["weights"], rel=0.02)


def test_an_unsharded_verdict_on_a_recipe_read_on_its_own_is_a_warning(tmp_path):
    # A LLaMA-Factory recipe started with `accelerate launch --config_file fsdp.yaml ... recipe.yaml`: the
    # recipe alone names no sharding, so "no sharding" is an assumption, and the verdict only a warning.
    from trainlint.linter import lint, make_target

    (tmp_path / "qwen3_full_sft.yaml").write_text(
        "model_name_or_path: Qwen/Qwen3-8B\nstage: sft\ndo_train: true\nfinetuning_type: full\n"
        "cutoff_len: 2048\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 1\nbf16: true\n")
    found = [f for f in lint([tmp_path], make_target("a100-80gb", None, 8)).findings if f.code == "TL108"]
    assert [f.severity.value for f in found] == ["warning"]
    assert "the command that starts it may add an accelerate FSDP or DeepSpeed config" in found[0].message


def test_fsdp_activation_checkpointing_in_an_axolotl_recipe_counts_as_checkpointing(tmp_path):
    # axolotl FSDP recipes turn checkpointing on inside `fsdp_config`; a second switch
    # (`gradient_checkpointing: true`) would be refused by the Trainer, so none may be proposed.
    from trainlint.linter import lint, make_target

    (tmp_path / "fsdp.yaml").write_text(
        "base_model: meta-llama/Llama-3.2-3B\nsequence_len: 8192\nmicro_batch_size: 2\n"
        "gradient_accumulation_steps: 1\nbf16: true\nfsdp:\n  - full_shard\n  - auto_wrap\n"
        "fsdp_config:\n  fsdp_version: 2\n  fsdp_activation_checkpointing: true\n")
    result = lint([tmp_path], make_target("a100-80gb", None, 8))
    [run] = result.scan.runs
    assert run.value("gradient_checkpointing") is True
    assert not [f for f in result.findings if f.code == "TL102"]


def test_an_axolotl_fp8_recipe_is_not_an_fp32_job(tmp_path):
    from trainlint.linter import lint, make_target

    (tmp_path / "fp8.yaml").write_text("base_model: meta-llama/Llama-3.2-3B\nsequence_len: 512\n"
                                       "micro_batch_size: 1\ngradient_accumulation_steps: 1\nfp8: true\n")
    result = lint([tmp_path], make_target("a100-80gb", None, 8))
    assert [f for f in result.findings if f.code == "TL105"] == []


def test_checkpointing_is_not_called_off_when_the_entry_script_was_not_read(tmp_path):
    # The launcher names an entry script that is not in the tree: whatever it does with checkpointing
    # (InternVL's turn it on per sub-module) is unknown, so TL102 has nothing certain to say.
    from trainlint.linter import lint, make_target

    (tmp_path / "run.sh").write_text(
        "torchrun --nproc_per_node 8 internvl/train/gone.py --model_name_or_path lmsys/vicuna-7b-v1.5 "
        "--per_device_train_batch_size 16 --model_max_length 4096 --bf16 True\n")
    result = lint([tmp_path], make_target("a100-40gb", None, 8))
    codes = {f.code for f in result.findings}
    assert "TL302" in codes and "TL102" not in codes


def _long_sequence_findings(folder: Path, length: int):
    flags = (f"--deepspeed zero2.json\n--model_name_or_path lmsys/vicuna-7b-v1.5\n--bf16 True\n"
             f"--per_device_train_batch_size 1\n--gradient_checkpointing False\n--model_max_length {length}\n"
             f"--attn_implementation flash_attention_2\n")
    for name, text in job(flags, extra={"zero2.json": ZERO2}).items():
        (folder / name).write_text(text)
    result = lint([folder], make_target(gpu="a100-80gb", num_gpus=8))
    return [f for f in result.findings if f.code == "TL106"]


def test_an_overflow_only_long_rows_cause_is_a_warning_whatever_the_limit(tmp_path):
    # Without checkpointing about 6k tokens fit. Rows are padded to the longest sample of their batch, so an
    # 8k or a 32k limit overflows only when the data holds samples that long: a risk, not a certainty.
    for length in (8192, 32768):
        folder = tmp_path / str(length)
        folder.mkdir()
        (finding,) = _long_sequence_findings(folder, length)
        assert finding.severity == Severity.WARNING, length
        assert f"a sample at the {length}-token limit" in finding.message
        assert "only batches holding a longer sample overflow" in finding.message


def test_packing_flag_of_the_entry_script_makes_a_sequence_overflow_certain(tmp_path):
    flags = ("--deepspeed zero2.json\n--model_name_or_path lmsys/vicuna-7b-v1.5\n--bf16 True\n"
             "--per_device_train_batch_size 1\n--gradient_checkpointing False\n--model_max_length 32768\n"
             "--packing True\n")
    for name, text in job(flags, extra={"zero2.json": ZERO2}).items():
        if name == "train.py":  # an SFT script whose arguments include TRL's `packing`
            text = text.replace("    model_max_length: int", "    packing: bool = field(default=False)\n"
                                "    model_max_length: int")
        (tmp_path / name).write_text(text)
    result = lint([tmp_path], make_target(gpu="a100-80gb", num_gpus=8))
    (finding,) = [f for f in result.findings if f.code == "TL106"]
    assert finding.severity == Severity.ERROR
    assert not [f for f in result.findings if f.code == "TL305"]


def _packing_findings(folder: Path, stage: str, extra: str):
    (folder / "sft.yaml").write_text(LONG_QLORA_RECIPE.format(stage=stage, extra=extra).replace("65536", "131072"))
    (folder / "train.sh").write_text("#!/bin/bash\nllamafactory-cli train sft.yaml\n")
    result = lint([folder], make_target(gpu="a100-80gb", num_gpus=1))
    return [f for f in result.findings if f.code == "TL106"]


@pytest.mark.parametrize("stage, extra, severity", [
    ("sft", "", Severity.WARNING),
    ("sft", "packing: true\n", Severity.ERROR),
    ("sft", "neat_packing: true\n", Severity.ERROR),
    ("pt", "", Severity.ERROR),  # LLaMA-Factory packs pre-training data unless told otherwise
    ("pt", "packing: false\n", Severity.WARNING),
])
def test_packed_rows_make_a_sequence_overflow_certain(tmp_path, stage, extra, severity):
    (finding,) = _packing_findings(tmp_path, stage, extra)
    assert finding.severity == severity
    assert ("only batches holding a longer sample overflow" in finding.message) == (severity == Severity.WARNING)


LONG_QLORA_RECIPE = """\
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: {stage}
do_train: true
finetuning_type: lora
quantization_bit: 4
per_device_train_batch_size: 1
cutoff_len: 65536
fp16: true
flash_attn: fa2
output_dir: out
{extra}"""


def _llamafactory_estimate(folder: Path, stage: str = "sft", extra: str = ""):
    (folder / "sft.yaml").write_text(LONG_QLORA_RECIPE.format(stage=stage, extra=extra))
    (folder / "train.sh").write_text("#!/bin/bash\nllamafactory-cli train sft.yaml\n")
    result = lint([folder], make_target(gpu="a100-80gb", num_gpus=1))
    memory = [f for f in result.findings if f.code.startswith("TL1") and f.severity.rank >= Severity.WARNING.rank]
    return memory, next(iter(result.estimates.values()))


def test_llamafactory_use_unsloth_offloads_checkpoints_and_keeps_only_16bit_logits(tmp_path):
    plain_findings, plain = _llamafactory_estimate(tmp_path)
    findings, unsloth = _llamafactory_estimate(tmp_path, extra="use_unsloth: true\n")
    # 65536 tokens x 128256 vocab: 12 B per entry on the fp32 path, 2 B when unsloth's kernel reuses the logits.
    assert plain.breakdown["logits"] > 90
    assert 15 < unsloth.breakdown["logits"] < 16.5
    # 32 layers x 4096 x 65536 x 2 B = 16 GiB of checkpointed inputs leave the GPU.
    assert plain.breakdown["activations"] - unsloth.breakdown["activations"] > 15.5
    assert {f.code for f in plain_findings} and not findings
    notes = " ".join(unsloth.assumptions)
    assert "activation offloading" in notes and "gradient written in place" in notes


def test_llamafactory_unsloth_gc_offloads_without_touching_the_loss(tmp_path):
    _, plain = _llamafactory_estimate(tmp_path)
    _, offloaded = _llamafactory_estimate(tmp_path, extra="use_unsloth_gc: true\n")
    assert offloaded.breakdown["logits"] == plain.breakdown["logits"]
    assert offloaded.breakdown["activations"] < plain.breakdown["activations"] - 15


def test_unsloth_loss_kernel_is_not_assumed_where_the_trainer_computes_the_loss(tmp_path):
    # DPO computes log-probabilities from the logits itself; unsloth's causal-LM loss does not run.
    _, dpo = _llamafactory_estimate(tmp_path, stage="dpo", extra="use_unsloth: true\n")
    assert "gradient written in place" not in " ".join(dpo.assumptions)


def test_llamafactory_lora_rank_defaults_to_8(tmp_path):
    _, estimate = _llamafactory_estimate(tmp_path)
    assert any("LoRA r=8" in note for note in estimate.assumptions)
    assert not any("LoRA rank unknown" in text for text in estimate.unknowns)


def _write(folder: Path, files) -> None:
    for name, text in files.items():
        (folder / name).write_text(text)


_ZERO3 = '{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3}}'


def test_sharded_job_of_unstated_gpu_count_is_judged_on_what_every_gpu_keeps(tmp_path):
    # `deepspeed train.py` starts one process per visible GPU: the count is not in the files. Under ZeRO-2
    # every GPU still holds all 16-bit weights of a 13B model, more than a 24 GB card whatever the count.
    _write(tmp_path, job("--deepspeed zero2.json\n--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n"
                         "--per_device_train_batch_size 1\n--model_max_length 2048", launcher="deepspeed",
                         extra={"zero2.json": ZERO2}))
    result = lint([tmp_path], make_target(gpu="rtx4090"))
    states = [f for f in result.findings if f.code == "TL108"]
    assert len(states) == 1 and states[0].severity == Severity.WARNING
    assert "any number of GPUs" in states[0].message


def test_sharded_job_of_unstated_gpu_count_that_some_count_fits_is_left_alone(tmp_path):
    # The same 13B model under ZeRO-3 fits 80 GB cards once spread over enough of them: no verdict.
    _write(tmp_path, job("--deepspeed zero3.json\n--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n"
                         "--per_device_train_batch_size 1\n--model_max_length 2048\n--gradient_checkpointing True",
                         launcher="deepspeed", extra={"zero3.json": _ZERO3}))
    result = lint([tmp_path], make_target(gpu="a100-80gb"))
    assert not [f for f in result.findings if f.code in ("TL101", "TL106", "TL108", "TL111")]


def _dtype_job(folder: Path, torch_dtype: str) -> None:
    _hf_job(folder, "--bf16 True --per_device_train_batch_size 1 --gradient_checkpointing True --output_dir o")
    train = folder / "train.py"
    train.write_text(train.read_text().replace(
        "from_pretrained(model_args.model_name_or_path)",
        f"from_pretrained(model_args.model_name_or_path, torch_dtype={torch_dtype})"))


@pytest.mark.parametrize("torch_dtype, note", [
    ("torch.bfloat16", "weights loaded in 16-bit"),
    ("torch.bfloat16 if training_args.bf16 else torch.half", "computed in code: assumed 16-bit"),
])
def test_weights_loaded_in_16_bit_train_without_an_fp32_copy(tmp_path, torch_dtype, note):
    """A model loaded with `torch_dtype=torch.bfloat16` and trained without DeepSpeed keeps its parameters,
    gradients and Adam states in bf16 (the Trainer does not upcast it): 8 bytes a parameter, not AMP's 16+."""
    _dtype_job(tmp_path, torch_dtype)
    estimate = next(iter(lint([tmp_path], make_target(gpu="a100-80gb")).estimates.values()))
    weights = estimate.breakdown["weights"]
    assert 6.738e9 * 2 / 2**30 * 0.95 < weights < 6.738e9 * 2 / 2**30 * 1.1
    assert any(note in text for text in (*estimate.assumptions, *estimate.unknowns))


def test_amp_keeps_fp32_weights_when_the_model_is_loaded_as_it_is(tmp_path):
    _dtype_job(tmp_path, "None")
    estimate = next(iter(lint([tmp_path], make_target(gpu="a100-80gb")).estimates.values()))
    assert estimate.breakdown["weights"] > 6.738e9 * 4 / 2**30


def _qwen2_vl_vision_gib(tmp_path: Path, attention: str) -> float:
    """The vision term of a full Qwen2-VL-7B fine-tune that trains its vision tower, one image per sample."""
    recipe = tmp_path / attention / "sft.yaml"
    recipe.parent.mkdir()
    recipe.write_text("model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\ndo_train: true\n"
                      "finetuning_type: full\nfreeze_vision_tower: false\nper_device_train_batch_size: 1\n"
                      f"cutoff_len: 4096\nbf16: true\nflash_attn: {attention}\noutput_dir: out\n")
    [estimate] = lint([recipe], make_target("a100-80gb", None, 1)).estimates.values()
    return estimate.breakdown["vision"]


def test_a_vision_tower_with_sdpa_keeps_no_attention_scores(tmp_path):
    # Qwen2-VL's ViT runs the attention the model runs: SDPA keeps no s x s scores for its ~5,200 patches of a
    # 1280-token image (72 x 72), eager keeps them for every head (about 10x the rest of a layer's activations).
    sdpa, eager = _qwen2_vl_vision_gib(tmp_path, "sdpa"), _qwen2_vl_vision_gib(tmp_path, "disabled")
    assert sdpa < 1.5
    assert eager > 4 * sdpa


@pytest.mark.parametrize("flag", ["--use_liger_kernel True", "--use_liger_kernel"])
def test_hf_use_liger_kernel_builds_no_full_logits(tmp_path, flag):
    # TrainingArguments' use_liger_kernel patches the model with Liger's fused linear cross-entropy.
    flags = ("--model_name_or_path Qwen/Qwen2-7B --per_device_train_batch_size 4 --model_max_length 4096 "
             "--bf16 True --gradient_checkpointing True")
    without = tmp_path / "without"
    with_liger = tmp_path / "with"
    write_tree(without, job(flags, launcher="torchrun --nproc_per_node 1"))
    write_tree(with_liger, job(f"{flags} {flag}", launcher="torchrun --nproc_per_node 1"))
    [plain] = lint([without], make_target("a100-80gb", None, 1)).estimates.values()
    result = lint([with_liger], make_target("a100-80gb", None, 1))
    [fused] = result.estimates.values()
    assert plain.breakdown["logits"] > 20 and fused.breakdown["logits"] < 1
    assert "TL305" not in {finding.code for finding in result.findings}


def test_a_model_id_argument_names_the_model(tmp_path):
    # Scripts of their own spell the Hub id `model_id` (`--model_id Qwen/Qwen2.5-VL-3B-Instruct`).
    files = job("--model_id Qwen/Qwen2-7B --per_device_train_batch_size 1 --bf16 True",
                launcher="torchrun --nproc_per_node 1")
    files["train.py"] = files["train.py"].replace("model_name_or_path", "model_id")
    write_tree(tmp_path, files)
    [estimate] = lint([tmp_path], make_target("a100-80gb", None, 1)).estimates.values()
    assert estimate.breakdown["weights"] > 10  # a 7.6B model's 16-bit weights, not an unknown model's


CLASSIFIER_TRAIN_PY = '''\
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)


def compute_metrics(prediction):
    return {}


def train():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.{model_class}.from_pretrained(model_args.model_name_or_path, num_labels=2)
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None, eval_dataset=eval_set,
                                   compute_metrics=compute_metrics)
    trainer.train()
'''


@pytest.mark.parametrize("model_class, classifier", [("AutoModelForSequenceClassification", True),
                                                     ("AutoModelForCausalLM", False)])
def test_a_classification_head_builds_no_vocabulary_logits(tmp_path, model_class, classifier):
    # A model whose head scores labels has a few logits per sequence: none over the vocabulary in training, and
    # none worth gathering in evaluation (TL107 stays quiet).
    write_tree(tmp_path, {
        "train.py": CLASSIFIER_TRAIN_PY.replace("{model_class}", model_class),
        "finetune.sh": ("#!/bin/bash\ntorchrun --nproc_per_node 1 train.py --model_name_or_path Qwen/Qwen2-7B \\\n"
                        "    --per_device_train_batch_size 2 --per_device_eval_batch_size 2 --max_seq_length 4096 \\\n"
                        "    --bf16 True --gradient_checkpointing True --eval_strategy steps --eval_steps 500 \\\n"
                        "    --output_dir out\n")})
    result = lint([tmp_path], make_target("a100-80gb", None, 1))
    [estimate] = result.estimates.values()
    assert (estimate.breakdown["logits"] < 1) is classifier
    assert ("TL107" in {finding.code for finding in result.findings}) is not classifier


@pytest.mark.parametrize("dtype, fp32", [("bfloat16", False), ("float32", True)])
def test_the_dtype_flag_that_replaced_torch_dtype_says_how_the_weights_load(tmp_path, dtype, fp32):
    """transformers 4.56 and TRL's ModelConfig spell `torch_dtype` as `dtype`: `--dtype bfloat16` without `--bf16`
    trains a 16-bit model, not an fp32 one (TL105 stays quiet); `--dtype float32` is fp32."""
    _hf_job(tmp_path, f"--bf16 False --dtype {dtype} --per_device_train_batch_size 1 --output_dir o")
    result = lint([tmp_path], make_target(gpu="a100-80gb"))
    assert [f.code for f in result.findings if f.code == "TL105"] == (["TL105"] if fp32 else [])
    weights = next(iter(result.estimates.values())).breakdown["weights"]
    assert (weights > 6.738e9 * 4 / 2**30 * 0.95) is fp32


def test_flex_attention_keeps_no_score_matrix(tmp_path):
    # axolotl's `attn_implementation: flex_attention` (its Llama 4 recipes): PyTorch's FlexAttention, like
    # FlashAttention, never holds the s x s scores; eager attention at 8,192 tokens would
    recipe = ("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nsequence_len: 8192\n"
              "micro_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\ngradient_checkpointing: true\n"
              "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n")
    peaks = {}
    for kernel in ("flex_attention", "eager"):
        folder = tmp_path / kernel
        write_tree(folder, {"lora.yaml": recipe + f"attn_implementation: {kernel}\n"})
        estimate = next(iter(lint([folder], make_target(gpu="a100-80gb", num_gpus=1)).estimates.values()))
        peaks[kernel] = estimate.peak_gib
        assert any("s x s" in note for note in estimate.assumptions) is (kernel == "eager")
    assert peaks["flex_attention"] < peaks["eager"]


def _without_unfrozen_parameters(folder: Path, name: str) -> None:
    text = (SAMPLES / name).read_text()
    kept = [line for line in text.splitlines(keepends=True)
            if not line.startswith(("unfrozen_parameters:", "  - ^")) and ".block_sparse" not in line]
    (folder / name).write_text("".join(kept))
    shutil.copy(SAMPLES / "zero3.json", folder / "zero3.json")


def test_axolotl_unfrozen_parameters_leave_the_trainable_set_unknown_and_end_the_states_error(tmp_path):
    # Mixtral 8x22B at ZeRO-3 over 8 × 80 GB: every expert trained needs more than the GPU for its states alone.
    (tmp_path / "whole").mkdir()
    _without_unfrozen_parameters(tmp_path / "whole", "axolotl_moe_late_experts.yaml")
    whole, _ = _check(tmp_path / "whole")
    assert [f.severity for f in whole if f.code == "TL108"] == [Severity.ERROR]
    (tmp_path / "partial").mkdir()
    findings, estimate = _check(tmp_path / "partial", "axolotl_moe_late_experts.yaml", "zero3.json")
    assert not [f for f in findings if f.code in ("TL101", "TL108", "TL111")]
    [note] = [note for note in estimate.unknowns if "unfrozen_parameters" in note]
    assert "`model.layers.5[0-5]+.block_sparse_moe.gate`" in note and "axolotl_moe_late_experts.yaml:6" in note


def test_axolotl_unfrozen_parameters_naming_the_whole_language_model_keep_it_trained(tmp_path):
    (tmp_path / "without").mkdir()
    _without_unfrozen_parameters(tmp_path / "without", "axolotl_vlm_language_model_unfrozen.yaml")
    without, plain = _check(tmp_path / "without", gpu="a100-40gb")
    (tmp_path / "with").mkdir()
    findings, estimate = _check(tmp_path / "with", "axolotl_vlm_language_model_unfrozen.yaml", "zero3.json",
                                gpu="a100-40gb")
    assert [f.code for f in findings] == [f.code for f in without] and "TL108" in [f.code for f in findings]
    assert estimate.breakdown == plain.breakdown
    assert not any("unfrozen_parameters" in note for note in estimate.unknowns)


def test_the_axolotl_spectrum_plugin_leaves_the_trainable_set_unknown(tmp_path):
    (tmp_path / "recipe.yaml").write_text(
        "base_model: mistral-community/Mixtral-8x22B-v0.1\nplugins:\n  - axolotl.integrations.spectrum.SpectrumPlugin\n"
        "spectrum_top_fraction: 0.5\nsequence_len: 2048\nmicro_batch_size: 1\noptimizer: adamw_torch\nbf16: true\n"
        "gradient_checkpointing: true\ndeepspeed: zero3.json\n")
    shutil.copy(SAMPLES / "zero3.json", tmp_path / "zero3.json")
    findings, estimate = _check(tmp_path)
    assert not [f for f in findings if f.code == "TL108"]
    assert any("Spectrum plugin" in note for note in estimate.unknowns)


def _side_tower_vision_gib(folder: Path, requirements: str) -> tuple:
    """The vision term of a LLaVA-style 7B fine-tune that trains the CLIP tower it attaches beside the LLM, with
    gradient checkpointing on, in a repository pinning `requirements`."""
    folder.mkdir()
    _hf_job(folder, "--vision_tower openai/clip-vit-large-patch14-336 --tune_vision_tower True --bf16 True "
                    "--gradient_checkpointing True --per_device_train_batch_size 16 --deepspeed zero3.json "
                    "--output_dir o", requirements)
    (folder / "zero3.json").write_text('{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}')
    [estimate] = lint([folder], make_target("a100-80gb")).estimates.values()
    return estimate.breakdown["vision"], estimate.assumptions


def test_checkpointing_reaches_a_tower_beside_the_llm_from_transformers_4_35(tmp_path):
    # transformers 4.35 turns checkpointing on in every submodule that supports it, LLaVA's CLIP tower included;
    # 4.31 (LLaVA's pin) set it on the LLM's own classes only. Unpinned, the lower side.
    old, old_notes = _side_tower_vision_gib(tmp_path / "old", "transformers==4.31.0\n")
    new, new_notes = _side_tower_vision_gib(tmp_path / "new", "transformers==4.40.0\n")
    unpinned, _ = _side_tower_vision_gib(tmp_path / "unpinned", "")
    assert old > 3 * new and unpinned == new
    assert any("not checkpointed with the LLM: the pinned transformers 4.31.0" in note for note in old_notes)
    assert not any("not checkpointed" in note for note in new_notes)


def test_a_tower_named_in_place_of_the_models_own_brings_its_own_image_tokens(tmp_path):
    # VILA's checkpoints carry a Qwen2-VL name but run the SigLIP tower the launch names: 27 x 27 patches per image,
    # not Qwen2-VL's 1280 merged tokens.
    def image_note(folder: Path, tower: str) -> str:
        folder.mkdir()
        write_tree(folder, job("--model_name_or_path Qwen/Qwen2-VL-7B-Instruct --per_device_train_batch_size 1 "
                               f"--model_max_length 4096 --bf16 True {tower}", launcher="torchrun --nproc_per_node 1"))
        [estimate] = lint([folder], make_target("a100-80gb", None, 1)).estimates.values()
        return next(note for note in estimate.assumptions if "bounds text plus image tokens" in note)

    assert "(1280 per sample)" in image_note(tmp_path / "own", "")
    assert "(729 per sample)" in image_note(tmp_path / "named", "--vision_tower google/siglip-so400m-patch14-384")


def test_an_axolotl_recipe_without_a_processor_trains_a_vision_checkpoint_on_text_alone(tmp_path):
    (tmp_path / "text").mkdir()
    _, text_only = _check(tmp_path / "text", "axolotl_vlm_checkpoint_text_rows.yaml", "zero3.json")
    (tmp_path / "images").mkdir()
    recipe = (SAMPLES / "axolotl_vlm_checkpoint_text_rows.yaml").read_text()
    (tmp_path / "images" / "recipe.yaml").write_text(recipe.replace("datasets:", "processor_type: AutoProcessor\n"
                                                                               "datasets:", 1))
    _, with_images = _check(tmp_path / "images", "zero3.json")
    assert text_only.breakdown.get("vision", 0.0) < with_images.breakdown["vision"]
    assert any("text-only batches" in note for note in text_only.assumptions)
    assert not any("image tokens" in note for note in text_only.assumptions)
    assert any("image tokens" in note for note in with_images.assumptions)


def test_an_axolotl_processor_type_written_empty_is_no_processor(tmp_path):
    recipe = (SAMPLES / "axolotl_vlm_checkpoint_text_rows.yaml").read_text()
    (tmp_path / "recipe.yaml").write_text(recipe.replace("datasets:", "processor_type:\ndatasets:", 1))
    _, estimate = _check(tmp_path, "zero3.json")
    assert any("text-only batches" in note for note in estimate.assumptions)

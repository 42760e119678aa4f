"""Preference training: reward modelling and DPO put each pair's chosen and rejected answers in one batch
(twice the sequences through activations and logits), and DPO and KTO keep a frozen reference copy of the
model unless the framework serves it from the adapter-free base."""
from __future__ import annotations

from pathlib import Path

from trainlint.linter import lint, make_target

SAMPLES = Path(__file__).parent / "samples" / "preference"
PAIRS = "preference pairs: 2 sequences per sample"
REFERENCE = "a frozen reference copy of the model's weights"


def _estimates(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu="a100-80gb", num_gpus=8))
    return {Path(run_id.split(":")[0]).name: estimate for run_id, estimate in result.estimates.items()}


def _has(estimate, text: str) -> bool:
    return any(text in note for note in estimate.assumptions)


def test_llamafactory_stages(monkeypatch):
    found = _estimates(monkeypatch)
    sft, dpo, orpo = found["llama3_full_sft.yaml"], found["llama3_full_dpo.yaml"], found["llama3_full_orpo.yaml"]
    reward, lora_dpo = found["llama3_full_reward.yaml"], found["llama3_lora_dpo.yaml"]
    assert not _has(sft, PAIRS) and not _has(sft, REFERENCE)
    for paired in (dpo, orpo, reward, lora_dpo):
        assert _has(paired, PAIRS)
    # The reference copy: full DPO only (ORPO needs none; with LoRA the adapter-free base serves).
    assert _has(dpo, REFERENCE)
    for without in (orpo, reward, lora_dpo):
        assert not _has(without, REFERENCE)
    # The same job as SFT, with twice the activations and logits; DPO adds the reference model's 16-bit weights,
    # sharded by ZeRO-3 over 8 GPUs (8.0B parameters: about 1.9 GiB per GPU).
    assert abs(reward.breakdown["activations"] - 2 * sft.breakdown["activations"]) < 0.01  # rounded to MiB
    assert 1.7 < dpo.breakdown["weights"] - reward.breakdown["weights"] < 2.1


def test_axolotl_rl(monkeypatch):
    found = _estimates(monkeypatch)
    full, lora = found["qwen2-dpo.yaml"], found["qwen2-dpo-lora.yaml"]
    assert _has(full, PAIRS) and _has(full, REFERENCE)
    assert _has(lora, PAIRS) and not _has(lora, REFERENCE)
    # A YAML list of modules to save: each entry is its own module.
    assert _has(lora, "modules_to_save trains embed_tokens, lm_head in full")


def test_trl_trainers_in_an_entry_script(monkeypatch):
    monkeypatch.chdir(SAMPLES / "trl")
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    found = {Path(run_id.split(":")[0]).name: estimate for run_id, estimate in result.estimates.items()}
    dpo, peft, reward = found["run_dpo.sh"], found["run_dpo_peft.sh"], found["run_reward.sh"]
    for estimate in (dpo, peft, reward):
        assert _has(estimate, PAIRS)
    # DPOTrainer without ref_model loads a copy of the model, unless a peft_config makes the base serve.
    assert _has(dpo, REFERENCE) and not _has(peft, REFERENCE) and not _has(reward, REFERENCE)
    assert any("whether LoRA adapters are used is unknown" in note for note in peft.unknowns)


def test_precomputed_reference_log_probs_need_no_reference_model(monkeypatch, tmp_path):
    for path in (SAMPLES / "trl").iterdir():
        (tmp_path / path.name).write_text(path.read_text())
    launcher = tmp_path / "run_dpo.sh"
    launcher.write_text(launcher.read_text().replace("--bf16 True", "--bf16 True --precompute_ref_log_probs True"))
    monkeypatch.chdir(tmp_path)
    result = lint([Path("run_dpo.sh")], make_target(gpu="a100-80gb"))
    [estimate] = result.estimates.values()
    assert _has(estimate, PAIRS) and not _has(estimate, REFERENCE)


def test_a_long_pair_says_both_answers_share_the_batch(monkeypatch, tmp_path):
    text = (SAMPLES / "axolotl" / "qwen2-dpo-lora.yaml").read_text()
    (tmp_path / "dpo.yaml").write_text(text.replace("sequence_len: 2048", "sequence_len: 32768")
                                       .replace("micro_batch_size: 2", "micro_batch_size: 1"))
    monkeypatch.chdir(tmp_path)
    result = lint([Path("dpo.yaml")], make_target(gpu="a100-80gb", num_gpus=1))
    [finding] = [f for f in result.findings if f.code == "TL106"]
    assert "a sample's chosen and rejected answers (in one batch), each at the 32768-token limit" in finding.message

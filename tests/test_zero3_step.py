"""ZeRO-3's optimizer step (docs/memory-model.md §5, §13): the fp32 gradients of one `sub_group_size` group and
AdamW's temporary, held only while the step runs, after the backward pass has freed the activations."""
from __future__ import annotations

from tests.test_memory import A100_80, make_run
from trainlint.memory import estimate

GIB = 1024 ** 3
QWEN25_32B, QWEN25_7B = 32.764e9, 7.616e9  # the catalog's parameter counts
GROUP = 1e9  # DeepSpeed's default sub_group_size


def _full(model: str, gpus: int, sequence: int, **knobs):
    return make_run(model_name_or_path=model, zero_stage=3, world_size=gpus, bf16=True, lora=False,
                    per_device_train_batch_size=1, max_seq_length=sequence, gradient_checkpointing=True,
                    attn_implementation="flash_attention_2", **knobs)


def _optimizer_and_dynamic(result):
    dynamic = sum(result.breakdown.get(term, 0.0) for term in ("activations", "logits", "vision")) * GIB
    return result.breakdown["optimizer"] * GIB, dynamic


def test_a_large_partition_steps_one_group_at_a_time():
    # 4.1e9 elements per GPU: the fp32 master and AdamW's moments (12 bytes each) stay; the step's fp32 gradients
    # and AdamW's temporary (8 bytes) are for one group of 1e9 elements, not for the whole partition.
    optimizer, dynamic = _optimizer_and_dynamic(estimate(_full("Qwen/Qwen2.5-32B", 8, 512), A100_80))
    partition = QWEN25_32B / 8
    assert abs(optimizer - (12 * partition + 8 * GROUP - dynamic)) < 0.01 * GIB
    # The whole partition's fp32 gradients beside the states, as counted before, would be 4.4 GiB more.
    assert 12 * partition + 4 * partition - optimizer > 4 * GIB


def test_the_step_counts_only_beyond_the_activations_it_follows():
    result = estimate(_full("Qwen/Qwen2.5-32B", 8, 8192), A100_80)
    optimizer, dynamic = _optimizer_and_dynamic(result)
    assert dynamic > 8 * GROUP  # 8,192 tokens' activations and logits outweigh the step
    assert abs(optimizer - 12 * QWEN25_32B / 8) < 0.01 * GIB  # the resident states alone


def test_an_offloaded_optimizer_steps_on_the_cpu():
    result = estimate(_full("Qwen/Qwen2.5-32B", 8, 512, offload_optimizer="cpu"), A100_80)
    assert result.breakdown.get("optimizer", 0.0) == 0.0


def test_a_partition_smaller_than_a_group_steps_whole():
    optimizer, dynamic = _optimizer_and_dynamic(estimate(_full("Qwen/Qwen2.5-7B", 8, 256), A100_80))
    partition = QWEN25_7B / 8
    assert abs(optimizer - (20 * partition - dynamic)) < 0.01 * GIB

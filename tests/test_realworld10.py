"""Constructs met in a tenth round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import json

import pytest

from tests.conftest import write_tree

# ChatGLM's P-Tuning v2 entry script, cut to what the estimate reads: the prefix length and the quantization level
# are arguments of its own, and the model's code freezes the base once `pre_seq_len` is set.
_PTUNING_MAIN = """from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoConfig, AutoModel, HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="THUDM/chatglm2-6b")
    pre_seq_len: Optional[int] = field(default=None)
    quantization_bit: Optional[int] = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    config.pre_seq_len = model_args.pre_seq_len
    model = AutoModel.from_pretrained(model_args.model_name_or_path, config=config, trust_remote_code=True)
    if model_args.quantization_bit is not None:
        model = model.quantize(model_args.quantization_bit)
    if model_args.pre_seq_len is not None:
        model = model.half()
        model.transformer.prefix_encoder.float()
    model.gradient_checkpointing_enable()
    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=[])
    trainer.train()


if __name__ == "__main__":
    main()
"""

_PTUNING_LAUNCHER = """PRE_SEQ_LEN=128
torchrun --standalone --nnodes=1 --nproc-per-node=1 main.py \\
    --do_train \\
    --model_name_or_path THUDM/chatglm2-6b \\
    --output_dir output/adgen-pt \\
    --max_source_length 64 \\
    --max_target_length 128 \\
    --per_device_train_batch_size 1 \\
    --gradient_accumulation_steps 16 \\
    --pre_seq_len $PRE_SEQ_LEN{quantization}
"""


def _estimate(cli, folder, *options):
    code, out, err = cli.run(folder, "estimate", "train.sh", "--output-format", "json", *options)
    assert code == 0, err
    [job] = json.loads(out)["runs"]
    return job["memory"]


@pytest.mark.parametrize("quantization", [" \\\n    --quantization_bit 4", ""])
def test_p_tuning_over_a_quantized_base_trains_the_prefix_not_lora_adapters(cli, tmp_path, quantization):
    write_tree(tmp_path, {"main.py": _PTUNING_MAIN,
                          "train.sh": _PTUNING_LAUNCHER.format(quantization=quantization)})
    memory = _estimate(cli, tmp_path, "--gpu", "t4")
    notes = " ".join(memory["assumptions"] + memory["unknowns"])
    # A 4-bit base used to imply LoRA adapters (r=64 assumed: 141M trainable parameters with fp32 Adam states).
    assert "LoRA" not in notes
    assert "P-Tuning v2 (pre_seq_len 128)" in notes
    assert memory["breakdown"].get("optimizer", 0) < 0.5
    if quantization:
        assert "4-bit base: linear weights at 0.53 B/param, embeddings 16-bit" in notes
        assert memory["breakdown"]["weights"] < 4.5


def test_chatglm_6b_is_its_own_model_and_not_chatglm2s(cli, tmp_path):
    # The first ChatGLM-6B has a 130,528-token vocabulary, full multi-head attention and a GELU MLP; its successors
    # have 65,024 tokens and two key/value groups. Read as ChatGLM2, its logits were half their size.
    from trainlint.memory.catalog import find_model

    first, second = find_model("THUDM/chatglm-6b"), find_model("THUDM/chatglm2-6b")
    assert first.key == "chatglm-6b" and second.key == "chatglm3-6b"
    assert (first.vocab, first.kv_heads, first.intermediate, first.mlp) == (130528, 32, 16384, "gelu")
    assert (second.vocab, second.kv_heads) == (65024, 2)
    assert abs(first.layer_params * first.layers + first.embedding_params - 6.2e9) < 0.1e9

"""Constructs met in a tenth round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import json
from pathlib import Path

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


# zero_nlp's Baichuan2 DPO script: the base loaded with `torch_dtype="auto"`, LoRA adapters over it, and no --bf16
# or --fp16 on the command line.
_AUTO_DTYPE_DPO = """from dataclasses import dataclass, field

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments
from trl import DPOTrainer


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="baichuan-inc/Baichuan2-7B-Chat")
    max_length: int = field(default=1024)


if __name__ == "__main__":
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path, trust_remote_code=True,
                                                 torch_dtype={dtype})
    model = get_peft_model(model, LoraConfig(r=32, target_modules=["W_pack", "o_proj"]))
    trainer = DPOTrainer(model, None, args=training_args, beta=0.1, train_dataset=None)
    trainer.train()
"""

_AUTO_DTYPE_LAUNCHER = """deepspeed --include localhost:0,1,2,3 train_dpo.py \\
    --model_name_or_path baichuan-inc/Baichuan2-7B-Chat \\
    --per_device_train_batch_size 2 \\
    --max_length 1024 \\
    --output_dir ./out
"""


@pytest.mark.parametrize("dtype", ['"auto"', "torch.bfloat16"])
def test_weights_loaded_in_16_bits_compute_in_16_bits_without_a_precision_flag(cli, tmp_path, dtype):
    write_tree(tmp_path, {"train_dpo.py": _AUTO_DTYPE_DPO.format(dtype=dtype), "train.sh": _AUTO_DTYPE_LAUNCHER})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    # "trains in fp32" was reported: the weights are the checkpoint's 16-bit ones (or bf16 as written).
    assert [f["code"] for f in document["findings"] if f["code"].startswith("TL1")] == []
    memory = _estimate(cli, tmp_path, "--gpu", "a100-80gb")
    # 7.5B in 16 bits; the activations of its 16-bit layers were counted at fp32 width, with SDPA's math kernel:
    # 103 GiB at micro-batch 2 (a pair each) and 1024 tokens without checkpointing.
    assert memory["breakdown"]["weights"] < 15 and memory["breakdown"]["activations"] < 40
    if dtype == '"auto"':
        assert "torch_dtype=\"auto\" loads the dtype the checkpoint's config.json names: assumed 16-bit" \
            in memory["unknowns"]


# llm-action's copy of ChatGLM's P-Tuning `main.py`, without the `arguments.py` its parser's classes come from.
_PTUNING_MAIN_ELSEWHERE = """from transformers import (AutoConfig, AutoModel, HfArgumentParser, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments)

from arguments import DataTrainingArguments, ModelArguments


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    config.pre_seq_len = model_args.pre_seq_len
    model = AutoModel.from_pretrained(model_args.model_name_or_path, config=config, trust_remote_code=True)
    model.gradient_checkpointing_enable()
    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=[])
    trainer.train()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("prefix, judged", [(" --pre_seq_len 128", False), ("", True)])
def test_p_tuning_is_read_when_the_parsers_classes_are_elsewhere(cli, tmp_path, prefix, judged):
    # ChatGLM-6B at micro-batch 64 on one 80 GB card: as a full fine-tune its Adam states alone take 35 GiB.
    launcher = ("CUDA_VISIBLE_DEVICES=0 python3 main.py --do_train --model_name_or_path THUDM/chatglm-6b "
                "--output_dir out --max_source_length 64 --max_target_length 64 "
                f"--per_device_train_batch_size 64{prefix}\n")
    write_tree(tmp_path, {"main.py": _PTUNING_MAIN_ELSEWHERE, "train.sh": launcher})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert any(f["code"] in ("TL101", "TL108") for f in document["findings"]) is judged


def test_model_states_over_the_card_name_the_gpu_count_they_are_sharded_over(cli, tmp_path):
    # ChatGLM-6B's full fine-tune launcher states four GPUs; checked for a machine of eight V100s, its states at
    # ZeRO-2 over those four do not fit, and would over eight (TL112's port): the count belongs in the verdict.
    samples = Path(__file__).parent / "samples" / "sibling_configs"
    write_tree(tmp_path, {
        "train.py": (samples / "train.py").read_text(),
        "zero2.json": (samples / "scripts" / "zero2.json").read_text(),
        "finetune.sh": ("deepspeed --num_gpus=4 train.py --deepspeed zero2.json --model_name_or_path THUDM/chatglm-6b "
                        "--fp16 True --per_device_train_batch_size 4 --model_max_length 128 --output_dir out\n"),
    })
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "v100-32gb", "--num-gpus", "8")
    [states] = [f for f in document["findings"] if f["code"] == "TL108"]
    assert " at ZeRO stage 2 over 4 GPUs on NVIDIA V100 32GB " in states["message"]

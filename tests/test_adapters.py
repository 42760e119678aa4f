"""`LoraConfig(...)` in an entry script: its rank and the modules peft trains in full next to the adapters
(`modules_to_save`), as literals, parsed arguments, or a local variable the arms of one `if` set; a value a
branch decides that cannot be told is Unknown, never guessed."""
from __future__ import annotations

from pathlib import Path

from trainlint.core import Unknown
from trainlint.linter import lint, make_target
from trainlint.readers.python import read_python

QWEN_LIKE = Path(__file__).parent / "samples" / "adapters" / "qwen_like"


def _estimate(folder: Path, launcher: str):
    result = lint([folder], make_target(gpu="a100-80gb"))
    [estimate] = [estimate for run_id, estimate in result.estimates.items() if launcher in run_id]
    return estimate


def test_the_arms_of_one_if_are_read_with_the_arguments_their_test_reads():
    module = read_python(QWEN_LIKE / "finetune.py")
    chosen = {o.setting.value: o for o in module.overrides if o.name == "lora_modules_to_save"}
    assert set(chosen) == {None, "wte,lm_head"}
    full = chosen["wte,lm_head"]
    # `else` of `q_lora or is_chat_model`: neither holds; the name is read through its one assignment.
    assert not full.tests_any
    assert [(t.reference, t.setting.value, t.negated) for t in full.tests] == [
        ("q_lora", True, True), ("model_name_or_path", "chat", True)]


def test_a_base_model_trains_its_embeddings_in_full_a_chat_model_and_a_4_bit_base_do_not():
    base = _estimate(QWEN_LIKE, "finetune/finetune_lora_base.sh")
    chat = _estimate(QWEN_LIKE, "finetune/finetune_lora_chat.sh")
    quantized = _estimate(QWEN_LIKE, "finetune/finetune_lora_qlora.sh")
    assert any("modules_to_save trains wte, lm_head in full" in note for note in base.assumptions)
    for estimate in (chat, quantized):
        assert not any("modules_to_save" in note for note in estimate.assumptions)
    # Two 151936 x 4096 copies trained with AdamW under ZeRO-2 over 8 GPUs: about 5 GiB more per GPU.
    assert 4.0 < base.peak_gib - chat.peak_gib < 6.5


def test_an_argument_the_test_reads_that_cannot_be_told_leaves_the_copies_unknown(tmp_path):
    for path in QWEN_LIKE.rglob("*"):
        if path.is_file():
            target = tmp_path / path.relative_to(QWEN_LIKE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text().replace("--use_lora True", "--use_lora True --q_lora $QLORA"))
    estimate = _estimate(tmp_path, "finetune/finetune_lora_base.sh")
    assert any("modules_to_save) unknown: assumed none" in note for note in estimate.assumptions)


SCRIPT = '''from dataclasses import dataclass, field
import transformers
from peft import LoraConfig, get_peft_model


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)
    lora_enable: bool = False
    lora_r: int = 64
    tune_vision: bool = False
    variant: str = "small"


def train():
    parser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
    if training_args.lora_enable:
{body}
        model = get_peft_model(model, config)
    trainer = transformers.Trainer(model=model, args=training_args, eval_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()
'''
LAUNCHER = """#!/bin/bash
torchrun --nproc_per_node 8 train.py --bf16 True --per_device_train_batch_size 1 --model_max_length 2048 \\
    --lora_enable True --lora_r 64 --output_dir out
"""


def _write(folder: Path, body: str) -> None:
    (folder / "train.py").write_text(SCRIPT.replace("{body}", body))
    (folder / "run.sh").write_text(LAUNCHER)


def _setting(folder: Path, knob: str):
    [run] = lint([folder / "run.sh"], make_target(gpu="a100-80gb")).scan.runs
    return run.setting(knob)


def test_a_literal_in_loraconfig_is_what_trains_whatever_flag_the_script_also_takes(tmp_path):
    body = ('        saved = ["embed_tokens", "resampler"]\n'
            '        if training_args.tune_vision:\n'
            '            saved.append("vpm")\n'
            '        config = LoraConfig(r=8, lora_alpha=16, modules_to_save=saved)')
    _write(tmp_path, body)
    assert _setting(tmp_path, "lora_r").value == 8
    # Entries appended later only add: the ones written are certain.
    assert _setting(tmp_path, "lora_modules_to_save").value == "embed_tokens,resampler"


def test_a_loraconfig_a_branch_chooses_is_the_branch_the_launch_takes(tmp_path):
    body = ('        if training_args.variant == "small":\n'
            '            config = LoraConfig(r=8)\n'
            '        else:\n'
            '            config = LoraConfig(r=128)')
    _write(tmp_path, body)
    assert _setting(tmp_path, "lora_r").value == 8  # `variant` is "small" by its default
    launcher = tmp_path / "run.sh"
    launcher.write_text(LAUNCHER.replace("--output_dir out", "--output_dir out --variant large"))
    assert _setting(tmp_path, "lora_r").value == 128
    # a value the launch does not tell leaves the choice unknown, never guessed
    launcher.write_text(LAUNCHER.replace("--output_dir out", "--output_dir out --variant $VARIANT"))
    assert isinstance(_setting(tmp_path, "lora_r").value, Unknown)


def test_a_list_changed_by_other_methods_is_unknown(tmp_path):
    body = ('        saved = ["wte", "lm_head"]\n'
            '        saved.remove("wte")\n'
            '        config = LoraConfig(r=training_args.lora_r, modules_to_save=saved)')
    _write(tmp_path, body)
    assert isinstance(_setting(tmp_path, "lora_modules_to_save").value, Unknown)
    assert _setting(tmp_path, "lora_r").value == 64

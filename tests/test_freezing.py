"""Parameters frozen in code (`param.requires_grad = False`, `module.requires_grad_(False)`): a freeze that runs, or
whose branch cannot be told, leaves the trainable set unknown, and the memory model then counts the LLM frozen for
gradients and optimizer states (the side that cannot raise a false alarm). A freeze a modelled knob explains (LoRA,
tune_mm_mlp_adapter, a vision tower) or whose branch is told to be skipped changes nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.core import Unknown
from trainlint.linter import lint, make_target
from trainlint.readers.python import read_python
from trainlint.resolution.freezing import FROZEN_IN_CODE

UNCONDITIONAL = Path(__file__).parent / "samples" / "freezing" / "unconditional"

SCRIPT = '''from dataclasses import dataclass, field
import transformers
from peft import LoraConfig, get_peft_model


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    model_max_length: int = field(default=2048)
    lora_enable: bool = False
    tune_mm_mlp_adapter: bool = False
    freeze_layers: bool = False


def train():
    parser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.model_name_or_path)
    if training_args.lora_enable:
        model = get_peft_model(model, LoraConfig(r=64))
{body}
    trainer = transformers.Trainer(model=model, args=training_args, eval_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()
'''
LAUNCHER = """#!/bin/bash
torchrun --nproc_per_node 8 train.py --bf16 True --per_device_train_batch_size 4 --model_max_length 2048 \\
    --output_dir out {flags}
"""


def _write(folder: Path, body: str, flags: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.py").write_text(SCRIPT.replace("{body}", body))
    (folder / "run.sh").write_text(LAUNCHER.replace("{flags}", flags))
    return folder


def _estimate(folder: Path, gpu: str = "a100-80gb", num_gpus: int = 8):
    result = lint([folder], make_target(gpu=gpu, num_gpus=num_gpus))
    [estimate] = result.estimates.values()
    return result, estimate


def _same(tmp_path: Path, body: str, flags: str = "") -> None:
    """The estimate with the freeze is the estimate without it."""
    _, without = _estimate(_write(tmp_path / "without", "    pass", flags))
    _, frozen = _estimate(_write(tmp_path / "with", body, flags))
    assert without.model and frozen.breakdown == without.breakdown
    assert not any("frozen in code" in note for note in frozen.unknowns + frozen.assumptions)


def test_the_reader_records_each_freeze_with_what_it_freezes_and_the_branches_around_it(tmp_path):
    body = ('    for name, param in model.named_parameters():\n'
            '        if "layers.31" not in name:\n'
            '            param.requires_grad = False\n'
            '    if training_args.tune_mm_mlp_adapter:\n'
            '        model.requires_grad_(requires_grad=False)\n'
            '    model.lm_head.requires_grad_(not training_args.freeze_layers)\n'
            '    model.model.norm.requires_grad_(True)\n'
            '    model.model.embed_tokens.weight.requires_grad = True')
    module = read_python(_write(tmp_path, body) / "train.py")
    loop, gated, switched = module.freezes
    assert (loop.target, loop.text, loop.origin.line) == ("model.named_parameters()", "param.requires_grad = False", 23)
    [unread] = loop.gates
    assert unread.tests == () and unread.text == '"layers.31" not in name'
    [gate] = gated.gates
    assert [(t.reference, t.negated) for t in gate.tests] == [("tune_mm_mlp_adapter", False)]
    # `requires_grad_(not x)` freezes when `not x` is false, i.e. when x holds.
    [gate] = switched.gates
    assert switched.target == "model.lm_head"
    assert [(t.reference, t.negated) for t in gate.tests] == [("freeze_layers", False)]


def test_an_unconditional_freeze_loop_counts_the_llm_frozen_and_ends_a_false_alarm():
    result, estimate = _estimate(UNCONDITIONAL, gpu="v100-32gb", num_gpus=1)
    # A 7B full fine-tune without ZeRO on a 32 GB card was TL108 (113 GiB of model states); the script trains
    # only its last layer, norm and head.
    assert not [f.code for f in result.findings if f.code.startswith("TL1")]
    assert estimate.breakdown["gradients"] < 1 and estimate.breakdown["optimizer"] < 1
    assert "freezing/unconditional/finetune.py:20 when `not any(layer in name for layer in trainable)`: " \
           "trainable set unknown, assumed frozen" in " ".join(estimate.unknowns)
    [run] = result.scan.runs
    setting = run.setting(FROZEN_IN_CODE)
    assert isinstance(setting.value, Unknown) and setting.origin.line == 20


def test_a_freeze_that_certainly_runs_is_true_the_weights_stay_and_the_last_layer_keeps_activations(tmp_path):
    _, full = _estimate(_write(tmp_path / "full", "    pass"))
    result, frozen = _estimate(_write(tmp_path / "frozen", "    model.model.requires_grad_(False)"))
    [run] = result.scan.runs
    assert run.setting(FROZEN_IN_CODE).value is True
    assert any(note.startswith("parameters frozen in code at ") and note.endswith(
        "train.py:21: trainable set unknown, assumed frozen, with the activations of the last layer alone")
        for note in frozen.unknowns)
    assert frozen.breakdown["optimizer"] < full.breakdown["optimizer"] / 100
    # The weights are all held (fp32, as loaded); only the 16-bit copies autocast keeps of trained weights go.
    assert abs(frozen.breakdown["weights"] - full.breakdown["weights"] * 4 / 6) < 0.2
    # No layer ahead of the first trainable one keeps activations for the backward pass, and the first trainable
    # one may be the last (here only the head trains): one layer's stored activations of 32, and the working memory
    # of its backward, are left (55 GiB in full without checkpointing, about 3 frozen).
    assert 0 < frozen.breakdown["activations"] < full.breakdown["activations"] / 10


def test_a_freeze_under_tune_mm_mlp_adapter_off_or_absent_changes_nothing(tmp_path):
    body = ('    if training_args.tune_mm_mlp_adapter:\n'
            '        model.requires_grad_(False)\n'
            '        for p in model.get_model().mm_projector.parameters():\n'
            '            p.requires_grad = True')
    _same(tmp_path / "absent", body)
    _same(tmp_path / "off", body, "--tune_mm_mlp_adapter False")


def test_a_freeze_whose_branch_is_told_to_be_skipped_changes_nothing_and_runs_when_told_on(tmp_path):
    body = ('    if training_args.freeze_layers:\n'
            '        model.model.layers[:24].requires_grad_(False)')
    _same(tmp_path / "skipped", body)
    result, _ = _estimate(_write(tmp_path / "on", body, "--freeze_layers True"))
    [run] = result.scan.runs
    assert run.setting(FROZEN_IN_CODE).value is True


def test_a_lora_script_that_freezes_its_base_is_unchanged(tmp_path):
    body = ('    model.requires_grad_(False)\n'
            '    for name, param in model.named_parameters():\n'
            '        if "lora_" in name:\n'
            '            param.requires_grad = True')
    _same(tmp_path / "lora", body, "--lora_enable True")


def test_a_frozen_vision_tower_or_reference_model_is_what_the_model_already_counts(tmp_path):
    body = ('    model.get_vision_tower().requires_grad_(False)\n'
            '    ref_model = transformers.AutoModelForCausalLM.from_pretrained("x")\n'
            '    for p in ref_model.parameters():\n'
            '        p.requires_grad = False')
    _same(tmp_path / "parts", body)


def test_a_helper_that_freezes_what_it_is_given_is_left_to_its_callers(tmp_path):
    # InternVL's `_freeze_params(module)`, called under `if model_args.freeze_llm:` and kin: the reader does not
    # follow the calls, so the helper's freezing counts for nothing.
    body = ('    def _freeze_params(module):\n'
            '        for param in module.parameters():\n'
            '            param.requires_grad = False\n'
            '    if training_args.freeze_layers:\n'
            '        _freeze_params(model.model)')
    module = read_python(_write(tmp_path / "read", body) / "train.py")
    [freeze] = module.freezes
    assert (freeze.target, freeze.helper) == ("module.parameters()", "_freeze_params")
    _same(tmp_path / "helper", body)


def test_a_freeze_under_an_argument_left_none_is_skipped(tmp_path):
    # LLaVA-NeXT: `if model_args.mm_tunable_parts is None: ... else: model.requires_grad_(False)`.
    body = ('    if getattr(training_args, "x", None) is None and training_args.tunable_parts is None:\n'
            '        pass\n'
            '    if training_args.tunable_parts is None:\n'
            '        pass\n'
            '    else:\n'
            '        model.requires_grad_(False)')
    script = SCRIPT.replace("    freeze_layers: bool = False\n",
                            "    freeze_layers: bool = False\n    tunable_parts: str = None\n")
    folder = tmp_path / "none"
    _write(folder, body)
    (folder / "train.py").write_text(script.replace("{body}", body))
    [freeze] = read_python(folder / "train.py").freezes
    [gate] = freeze.gates
    assert [(t.reference, t.negated) for t in gate.tests] == [("tunable_parts", False)]
    result, _ = _estimate(folder)
    [run] = result.scan.runs
    assert run.setting(FROZEN_IN_CODE) is None


def test_a_models_own_method_freezing_its_parts_is_left_to_its_users(tmp_path):
    body = ('    class Wrapper:\n'
            '        def load(self):\n'
            '            self.language_model.requires_grad_(False)')
    [freeze] = read_python(_write(tmp_path / "read", body) / "train.py").freezes
    assert freeze.helper == "load"
    _same(tmp_path / "method", body)


# LLaVA-NeXT's train.py: with `--mm_tunable_parts`, the whole model is frozen, then each named part trains again.
TUNABLE_PARTS_TRAIN_PY = '''\
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    vision_tower: Optional[str] = field(default=None)
    mm_tunable_parts: Optional[str] = field(default=None)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    if model_args.mm_tunable_parts is None:
        pass
    else:
        model.requires_grad_(False)
        tunable_parts = model_args.mm_tunable_parts.split(",")
        if "mm_language_model" in tunable_parts:
            for name, param in model.named_parameters():
                param.requires_grad_(True)
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None, eval_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()
'''


@pytest.mark.parametrize("parts, llm_trains", [
    ("mm_vision_tower,mm_mlp_adapter,mm_language_model", True),
    ("mm_mlp_adapter", False),
])
def test_llava_next_tunable_parts_say_whether_the_language_model_trains(tmp_path, parts, llm_trains):
    (tmp_path / "train.py").write_text(TUNABLE_PARTS_TRAIN_PY)
    (tmp_path / "zero3.json").write_text('{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}\n')
    (tmp_path / "finetune.sh").write_text(
        "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed zero3.json --bf16 True \\\n"
        "    --model_name_or_path lmsys/vicuna-7b-v1.5 --vision_tower openai/clip-vit-large-patch14-336 \\\n"
        f"    --mm_tunable_parts {parts} --per_device_train_batch_size 1 --gradient_checkpointing True \\\n"
        "    --output_dir out\n")
    [estimate] = lint([tmp_path], make_target("a100-80gb", None, 8)).estimates.values()
    # A 7B LLM's fp32 Adam states under ZeRO-3 over 8 GPUs are about 9.4 GiB; a frozen one has none.
    assert (estimate.breakdown["optimizer"] > 5) is llm_trains
    assert not any("frozen in code" in note for note in estimate.assumptions)


@pytest.mark.parametrize("kept, every_layer", [
    # Mantis's pre-training: everything but the projector frozen; the projector feeds every layer of the LLM.
    ('["multi_modal_projector"]', True),
    # ChatGLM-Finetuning's freeze script: everything but the last layers frozen.
    ('["layers.31.", "layers.30."]', False),
])
def test_a_freeze_that_keeps_a_part_ahead_of_the_llm_keeps_every_layers_activations(tmp_path, kept, every_layer):
    _, full = _estimate(_write(tmp_path / "full", "    pass"))
    body = ("    for name, param in model.named_parameters():\n"
            f"        if not any(part in name for part in {kept}):\n"
            "            param.requires_grad = False")
    _, frozen = _estimate(_write(tmp_path / "frozen", body))
    assert frozen.breakdown["optimizer"] < full.breakdown["optimizer"] / 100
    assert (frozen.breakdown["activations"] == full.breakdown["activations"]) is every_layer
    assert any(note.endswith("with the activations of the last layer alone") for note in frozen.unknowns) \
        is not every_layer

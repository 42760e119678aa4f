"""TL201 compares DeepSpeed's accumulation with the trainer's only when the HF integration hands the
trainer's value to DeepSpeed. A script that calls deepspeed.initialize itself lets DeepSpeed derive
accumulation from `train_batch_size` and the micro-batch; its own argparse default never reaches it."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.core import Applicability
from trainlint.knobs import K
from trainlint.linter import lint, make_target

OWN_LOOP = '''\
import argparse

import deepspeed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", type=str)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = build(args.model_name_or_path)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    for step, batch in enumerate(loader(args.per_device_train_batch_size)):
        engine.backward(engine(batch).loss)
        engine.step()


if __name__ == "__main__":
    main()
'''

HF_TRAINER = '''\
from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
    Trainer(model=None, args=args).train()


if __name__ == "__main__":
    main()
'''

# train_batch_size 64 = micro 4 x 8 GPUs x 2: DeepSpeed derives accumulation 2 on its own.
PINNED_TOTAL = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 1}}\n'
PINNED_ACCUMULATION = ('{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, '
                       '"gradient_accumulation_steps": 2, "zero_optimization": {"stage": 1}}\n')


def _tl201(folder: Path):
    result = lint([folder], make_target(gpu="a100-80gb", num_gpus=8))
    return [finding for finding in result.findings if finding.code == "TL201"]


def test_a_script_running_its_own_deepspeed_loop_is_not_held_to_its_accumulation_default(tmp_path):
    folder = write_tree(tmp_path, {
        "train.py": OWN_LOOP,
        "ds_config.json": PINNED_TOTAL,
        "run.sh": "deepspeed --num_gpus 8 train.py --model_name_or_path gpt2-large "
                  "--per_device_train_batch_size 4 --deepspeed --deepspeed_config ds_config.json\n",
    })
    assert _tl201(folder) == []


def test_its_micro_batch_is_still_compared(tmp_path):
    folder = write_tree(tmp_path, {
        "train.py": OWN_LOOP,
        "ds_config.json": PINNED_TOTAL,
        "run.sh": "deepspeed --num_gpus 8 train.py --model_name_or_path gpt2-large "
                  "--per_device_train_batch_size 2 --deepspeed --deepspeed_config ds_config.json\n",
    })
    findings = _tl201(folder)
    assert len(findings) == 1
    assert "train_micro_batch_size_per_gpu is 4 but per_device_train_batch_size is 2" in findings[0].message
    assert "gradient_accumulation_steps" not in findings[0].message


def test_under_the_hf_trainer_the_accumulation_is_compared(tmp_path):
    folder = write_tree(tmp_path, {
        "train.py": HF_TRAINER,
        "ds_config.json": PINNED_ACCUMULATION,
        "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds_config.json --per_device_train_batch_size 4 "
                  "--gradient_accumulation_steps 1 --output_dir out\n",
    })
    findings = _tl201(folder)
    assert len(findings) == 1
    assert "gradient_accumulation_steps is 2 but gradient_accumulation_steps is 1" in findings[0].message


def test_under_the_hf_trainer_a_total_that_disagrees_with_the_trainers_accumulation_is_reported(tmp_path):
    folder = write_tree(tmp_path, {
        "train.py": HF_TRAINER,
        "ds_config.json": PINNED_TOTAL,
        "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds_config.json --per_device_train_batch_size 4 "
                  "--gradient_accumulation_steps 4 --output_dir out\n",
    })
    findings = _tl201(folder)
    assert len(findings) == 1 and "train_batch_size is 64" in findings[0].message


def test_outside_the_hf_integration_the_fix_writes_numbers_deepspeed_accepts(tmp_path):
    # DeepSpeed called by the script itself rejects "auto": the fix writes the trainer's micro-batch, and is unsafe.
    folder = write_tree(tmp_path, {
        "train.py": OWN_LOOP,
        "ds_config.json": PINNED_TOTAL,
        "run.sh": "deepspeed --num_gpus 8 train.py --model_name_or_path gpt2-large "
                  "--per_device_train_batch_size 2 --deepspeed --deepspeed_config ds_config.json\n",
    })
    [finding] = _tl201(folder)
    assert finding.fix.applicability == Applicability.UNSAFE
    assert [(change.knob, change.new) for change in finding.fix.changes] == [(K.DS_MICRO_BATCH, 2)]


def test_under_the_hf_trainer_the_fix_defers_to_the_trainer(tmp_path):
    folder = write_tree(tmp_path, {
        "train.py": HF_TRAINER,
        "ds_config.json": PINNED_ACCUMULATION,
        "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds_config.json --per_device_train_batch_size 4 "
                  "--gradient_accumulation_steps 1 --output_dir out\n",
    })
    [finding] = _tl201(folder)
    assert finding.fix.applicability == Applicability.SAFE
    assert {change.new for change in finding.fix.changes} == {"auto"}

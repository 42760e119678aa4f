"""How a launcher, its entry script and its configs resolve into one job."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.core import SourceKind, Unknown
from trainlint.linter import lint, make_target
from trainlint.readers.source import display_path
from trainlint.resolution import scan
from trainlint.resolution.batch import effective_batch
from trainlint.resolution.workspace import Workspace


def _runs(folder: Path, *names: str):
    return scan([folder / n for n in names] or [folder], workspace=Workspace(folder)).runs


def _one(folder, launcher, files=None, *names):
    write_tree(folder, {"finetune.sh": launcher, "train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                        **(files or {})})
    [run] = _runs(folder, *(names or ("finetune.sh",)))
    return run


def test_a_variable_feeding_a_flag_keeps_its_origin(tmp_path):
    run = _one(tmp_path, "BATCH=16\ndeepspeed --num_gpus 4 train.py --per_device_train_batch_size $BATCH\n")
    setting = run.settings["per_device_train_batch_size"]
    assert setting.value == 16 and setting.kind == SourceKind.LAUNCHER_FLAG
    head = setting.head()
    assert head.origin.line == 1 and head.origin.column == 7 and head.text == "16"


def test_launcher_flag_beats_dataclass_default_and_framework_default(tmp_path):
    run = _one(tmp_path, "torchrun --nproc_per_node 2 train.py --model_max_length 4096\n")
    assert run.settings["max_seq_length"].value == 4096
    assert run.pins["max_seq_length"][1].kind == SourceKind.DATACLASS_DEFAULT
    assert run.settings["per_device_train_batch_size"].kind == SourceKind.FRAMEWORK_DEFAULT
    assert run.settings["per_device_train_batch_size"].value == 8


def test_code_that_turns_checkpointing_on_wins_over_the_flag(tmp_path):
    code = TRAIN_PY.replace("{eval_dataset}", "None").replace(
        "    trainer.train()", "    model.gradient_checkpointing_enable()\n    trainer.train()")
    run = _one(tmp_path, "torchrun train.py --gradient_checkpointing False\n", {"train.py": code})
    setting = run.settings["gradient_checkpointing"]
    assert setting.value is True and setting.kind == SourceKind.CODE_OVERRIDE


def test_world_size_from_each_launcher_form(tmp_path):
    forms = {
        "deepspeed --include localhost:0,1,2 train.py": 3,
        "deepspeed --num_gpus 4 --num_nodes 2 train.py": 8,
        "torchrun --nproc_per_node=8 --nnodes 2 train.py": 16,
        "python -m torch.distributed.launch --nproc_per_node 4 train.py": 4,
        "CUDA_VISIBLE_DEVICES=0,1 deepspeed train.py": 2,
        "python train.py": 1,
    }
    for index, (command, expected) in enumerate(forms.items()):
        folder = tmp_path / str(index)
        run = _one(folder, command + " --per_device_train_batch_size 2\n")
        assert run.settings["world_size"].value == expected, command


def test_unknown_world_size_says_why(tmp_path):
    run = _one(tmp_path, "GPUS=$(nvidia-smi -L | wc -l)\ntorchrun --nproc_per_node $GPUS train.py "
                         "--per_device_train_batch_size 2\n")
    value = run.settings["world_size"].value
    assert isinstance(value, Unknown) and "nproc_per_node" in value.reason


def test_deepspeed_config_values_join_the_run(tmp_path):
    config = '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3, ' \
             '"offload_optimizer": {"device": "none"}}}\n'
    run = _one(tmp_path, "deepspeed --num_gpus 2 train.py --deepspeed ds.json\n", {"ds.json": config})
    assert run.settings["zero_stage"].value == 3
    assert run.settings["offload_optimizer"].value == "none"
    assert run.settings["ds_micro_batch"].origin.path.endswith("ds.json")
    assert run.configs == ("ds.json",) or run.configs[0].endswith("ds.json")


def test_missing_entry_script_is_a_diagnostic_not_a_crash(tmp_path):
    write_tree(tmp_path, {"finetune.sh": "deepspeed --num_gpus 2 gone/train_mem.py --per_device_train_batch_size 4\n"})
    [run] = _runs(tmp_path, "finetune.sh")
    assert run.facts.entry_exists is False
    assert [d.kind for d in run.diagnostics] == ["missing-file"]
    assert run.settings["per_device_train_batch_size"].value == 4


def test_an_eval_loop_is_not_a_training_job(tmp_path):
    write_tree(tmp_path, {
        "eval.sh": "for IDX in 0 1; do\n  CUDA_VISIBLE_DEVICES=$IDX python -m pkg.model_vqa --answers a.jsonl &\n"
                   "done\nwait\n",
        "pkg/__init__.py": "", "pkg/model_vqa.py": "import argparse\np = argparse.ArgumentParser()\n"})
    assert _runs(tmp_path, "eval.sh") == []


def test_argparse_values_reach_training_arguments_keywords(tmp_path):
    code = '''import argparse
from transformers import Trainer, TrainingArguments
parser = argparse.ArgumentParser()
parser.add_argument("--micro-batch-size", type=int, default=2)
parser.add_argument("--bf16", action="store_true")
args, _ = parser.parse_known_args()
Trainer(model=None, args=TrainingArguments(output_dir="o", per_device_train_batch_size=args.micro_batch_size,
        bf16=args.bf16, fp16=not args.bf16), eval_dataset=None)
'''
    run = _one(tmp_path, "torchrun --nproc_per_node 2 train.py --micro-batch-size 6 --bf16 --use-lora\n",
               {"train.py": code})
    assert run.settings["per_device_train_batch_size"].value == 6
    assert run.settings["bf16"].value is True and run.settings["fp16"].value is False
    assert run.facts.parse_known_args and "lora" not in run.settings


@pytest.mark.parametrize("launcher,line,text", [
    # `BATCH=8` feeds only this flag: edit the assignment.
    ("BATCH=8\ntorchrun train.py --per_device_train_batch_size $BATCH\n", 1, "8"),
    # quoted, and next to a `--flag=$X` word: still the only use.
    ('BATCH=8\ntorchrun train.py --per_device_train_batch_size "$BATCH" --gradient_accumulation_steps=$ACC\n',
     1, "8"),
    # shared with the eval batch: edit the flag's own token, not `BATCH=8`.
    ("BATCH=8\ntorchrun train.py --per_device_train_batch_size $BATCH --per_device_eval_batch_size $BATCH\n",
     2, "$BATCH"),
])
def test_fix_target_is_the_nearest_place_only_this_knob_reads(tmp_path, launcher, line, text):
    write_tree(tmp_path, {"finetune.sh": launcher, "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    result = scan([tmp_path / "finetune.sh"], workspace=Workspace(tmp_path))
    [run] = result.runs
    target = result.graph.fix_target(run.id, "per_device_train_batch_size",
                                     run.settings["per_device_train_batch_size"])
    assert (target.origin.line, target.text) == (line, text)


def test_changed_config_reaches_every_launcher_that_uses_it(tmp_path):
    ds = '{"zero_optimization": {"stage": 3}}\n'
    write_tree(tmp_path, {"a.sh": "deepspeed --num_gpus 2 train.py --deepspeed zero3.json\n",
                          "b.sh": "deepspeed --num_gpus 4 train.py --deepspeed zero3.json\n",
                          "c.sh": "deepspeed --num_gpus 4 train.py\n",
                          "zero3.json": ds, "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    result = scan([tmp_path], workspace=Workspace(tmp_path))
    touching = result.graph.runs_touching(display_path(tmp_path / "zero3.json"))
    assert [Path(t.split(":")[0]).name for t in touching] == ["a.sh", "b.sh"]


def test_a_data_level_batch_packs_samples_into_each_item(tmp_path):
    code = TRAIN_PY.replace("{eval_dataset}", "None").replace(
        "class TrainingArguments(transformers.TrainingArguments):",
        "class DataArguments:\n    batch_size: int = 4\n\n\n@dataclass\n"
        "class TrainingArguments(transformers.TrainingArguments):").replace(
        "(ModelArguments, TrainingArguments)", "(ModelArguments, DataArguments, TrainingArguments)")
    run = _one(tmp_path, "torchrun --nproc_per_node 8 train.py --batch_size 2 --per_device_train_batch_size 1 "
                         "--gradient_accumulation_steps 8\n", {"train.py": code})
    assert run.facts.batch_multiplier.value == 2
    assert effective_batch(run) == 128


def test_argparse_arguments_read_directly_reach_their_knobs(tmp_path):
    code = '''import argparse
from transformers import Trainer, TrainingArguments
parser = argparse.ArgumentParser()
parser.add_argument("--seq-length", type=int, default=1024)
parser.add_argument("--micro-batch-size", type=int, default=2)
parser.add_argument("--deepspeed", type=str, default=None)
args, _ = parser.parse_known_args()
Trainer(model=None, args=TrainingArguments(output_dir="o", per_device_train_batch_size=args.micro_batch_size,
        deepspeed=args.deepspeed), eval_dataset=None)
'''
    run = _one(tmp_path, "torchrun --nproc_per_node 2 train.py --seq-length 2048\n", {"train.py": code})
    assert run.settings["max_seq_length"].value == 2048
    assert run.settings["per_device_train_batch_size"].value == 2
    assert run.settings["zero_stage"].value == 0  # `--deepspeed` defaults to None: no DeepSpeed


CONFIGS = Path(__file__).parent / "samples" / "configs"


def test_a_llamafactory_recipe_is_a_job_with_its_own_defaults():
    [run] = scan([CONFIGS / "llamafactory_sft.yaml"], workspace=Workspace(CONFIGS)).runs
    assert run.launcher == "llamafactory-cli"
    assert run.settings["max_seq_length"].value == 2048  # cutoff_len
    assert run.settings["lora"].value is True  # finetuning_type: lora
    checkpointing = run.settings["gradient_checkpointing"]
    assert checkpointing.value is True and checkpointing.note == "LLaMA-Factory default"
    assert run.facts.eval_dataset is True  # val_size


def test_an_axolotl_config_evaluates_when_it_has_a_validation_split():
    [run] = scan([CONFIGS / "axolotl_lora.yml"], workspace=Workspace(CONFIGS)).runs
    assert run.settings["per_device_train_batch_size"].value == 2  # micro_batch_size
    assert run.settings["eval_strategy"].value == "steps"
    assert run.settings["bits"].value == 8 and run.settings["lora"].value is True


def test_accelerate_config_gives_world_size_zero_stage_and_precision(tmp_path):
    config = (CONFIGS / "accelerate_deepspeed.yaml").read_text()
    run = _one(tmp_path, "accelerate launch --config_file acc.yaml train.py --per_device_train_batch_size 2\n",
               {"acc.yaml": config})
    assert run.settings["world_size"].value == 8
    assert run.settings["zero_stage"].value == 2
    assert run.settings["bf16"].value is True and run.settings["bf16"].kind == SourceKind.DERIVED


def test_a_distributed_launch_of_a_missing_script_is_a_job_whatever_its_flags(tmp_path):
    write_tree(tmp_path, {"run.sh": "deepspeed --num_gpus 2 train.py --bf16 True\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert [d.kind for d in run.diagnostics] == ["missing-file"]
    write_tree(tmp_path, {"eval.sh": "python eval.py --bf16 True\n"})
    assert _runs(tmp_path, "eval.sh") == []  # a plain python helper that is missing is not a training job


def test_an_argument_copied_between_namespaces_keeps_its_value(tmp_path):
    code = TRAIN_PY.replace("{eval_dataset}", "None").replace(
        "    model_max_length: int = field(default=2048)\n",
        "    model_max_length: int = field(default=2048)\n    tune_mm_mlp_adapter: bool = field(default=False)\n",
    ).replace(
        "    trainer = transformers.Trainer(",
        "    if model_args.vision_tower is not None:\n"
        "        model.config.tune_mm_mlp_adapter = training_args.tune_mm_mlp_adapter = "
        "model_args.tune_mm_mlp_adapter\n    trainer = transformers.Trainer(")
    run = _one(tmp_path, "torchrun train.py --tune_mm_mlp_adapter True --per_device_train_batch_size 2\n",
               {"train.py": code})
    setting = run.settings["tune_mm_mlp_adapter"]
    assert setting.value is True and setting.kind == SourceKind.LAUNCHER_FLAG


def test_a_lightning_trainer_brings_no_hf_defaults(tmp_path):
    code = ("import lightning as L\nfrom lightning.pytorch import Trainer\n\n"
            "trainer = L.Trainer(max_epochs=3, precision='bf16-mixed')\nother = Trainer(devices=2)\n"
            "trainer.fit(model)\n")
    write_tree(tmp_path, {"run.sh": "torchrun --nproc_per_node 2 train.py --max_epochs 3\n", "train.py": code})
    assert _runs(tmp_path, "run.sh") == []  # not an HF job: no batch of 8 by default, no verdicts


SUBMODULE_LAUNCH = ("#!/bin/bash\ndeepspeed llava/train/train_mem.py --deepspeed ./scripts/zero3.json \\\n"
                    "    --model_name_or_path lmsys/vicuna-7b-v1.5 --per_device_train_batch_size 4 --bf16 True \\\n"
                    "    --output_dir out\n")


@pytest.mark.parametrize("checked_out, missing", [(False, False), (True, True)])
def test_files_a_launcher_names_may_be_in_a_submodule_that_is_not_checked_out(tmp_path, checked_out, missing):
    # The repository ships its scripts to be run from inside the upstream project it declares as a submodule:
    # while that submodule is not checked out, what the scripts name there is unknown, not missing.
    (tmp_path / ".gitmodules").write_text('[submodule "LLaVA"]\n\tpath = LLaVA\n\turl = https://example.com/llava\n')
    (tmp_path / "LLaVA").mkdir()
    if checked_out:
        (tmp_path / "LLaVA" / "README.md").write_text("upstream\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "finetune.sh").write_text(SUBMODULE_LAUNCH)
    codes = {f.code for f in lint([tmp_path], make_target("a100-80gb", None, 8)).findings}
    assert ("TL302" in codes) is missing

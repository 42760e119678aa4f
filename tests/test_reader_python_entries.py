"""Entry scripts named by module (`python -m pkg.train`, `accelerate launch -m tool`): a module of the
repository is read, one whose package is here but which is not is missing, and one from an installed
package is unknown rather than missing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.core import DiagnosticKind
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

_FLAGS = "--per_device_train_batch_size 2 --gradient_accumulation_steps 4"


def _runs(folder: Path, name: str):
    return scan([folder / name], workspace=Workspace(folder)).runs


def test_a_module_of_the_repository_is_read_as_the_entry_script(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                          "run.sh": f"torchrun --nproc_per_node 2 -m pkg.train {_FLAGS}\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.facts.entry_exists is True and run.entry.endswith("pkg/train.py")
    assert run.settings["per_device_train_batch_size"].value == 2 and not run.diagnostics


def test_a_package_run_as_a_module_runs_its_main(tmp_path):
    write_tree(tmp_path, {"tool/__init__.py": "", "tool/__main__.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                          "run.sh": f"accelerate launch --num_processes 2 -m tool {_FLAGS}\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.entry.endswith("tool/__main__.py") and run.facts.accepted_flags is not None


def test_a_missing_module_of_a_package_in_the_repository_is_missing(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "run.sh": f"torchrun --nproc_per_node 2 -m pkg.train_mem {_FLAGS}\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.facts.entry_exists is False
    assert [d.kind for d in run.diagnostics] == ["missing-file"]


def test_a_module_from_an_installed_package_is_unknown_not_missing(tmp_path):
    write_tree(tmp_path, {"scripts/eval.sh": "accelerate launch --num_processes 8 -m lmms_eval --model llava "
                                             "--batch_size 1 --output_path ./logs/\n",
                          "scripts/train.sh": f"torchrun --nproc_per_node 2 -m other_pkg.train {_FLAGS}\n"})
    assert _runs(tmp_path, "scripts/eval.sh") == []  # an evaluation tool with unknown arguments: no job
    [run] = _runs(tmp_path, "scripts/train.sh")
    assert run.facts.entry_exists is None
    # Not read: the refusal is the only thing said about it (information, not a missing file).
    assert {d.kind for d in run.diagnostics} <= {DiagnosticKind.OUTSIDE_TREE}
    assert "outside the repository" in run.entry
    assert run.settings["per_device_train_batch_size"].value == 2


def test_a_missing_script_path_is_still_missing(tmp_path):
    write_tree(tmp_path, {"run.sh": f"deepspeed --num_gpus 2 llava/train/train_mem.py {_FLAGS}\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.facts.entry_exists is False and [d.kind for d in run.diagnostics] == ["missing-file"]


def test_a_script_in_a_home_folder_is_another_checkout_not_a_missing_file(tmp_path):
    write_tree(tmp_path, {"run.sh": f"deepspeed --num_gpus 2 ~/projects/transformers/run_clm.py {_FLAGS} "
                                    "--deepspeed ds.json\n",
                          "ds.json": '{"zero_optimization": {"stage": 2}}\n'})
    [run] = _runs(tmp_path, "run.sh")
    assert run.facts.entry_exists is None
    # Not read: the refusal is the only thing said about it (information, not a missing file).
    assert {d.kind for d in run.diagnostics} <= {DiagnosticKind.OUTSIDE_TREE}
    assert run.settings["zero_stage"].value == 2


def test_a_module_told_to_checkpoint_in_code_counts_as_checkpointing_on(tmp_path):
    # InternVL-style entry scripts switch checkpointing on per sub-module; a fix must not add a second
    # switch (`--gradient_checkpointing True`), and the memory model must count checkpointing as on.
    write_tree(tmp_path, {
        "run.sh": "torchrun --nproc_per_node 4 train.py --model_name_or_path lmsys/vicuna-7b-v1.5 "
                  "--per_device_train_batch_size 4 --bf16 True\n",
        "train.py": (
            "from dataclasses import dataclass, field\n"
            "import transformers\n\n"
            "@dataclass\nclass ModelArguments:\n    model_name_or_path: str = field(default='x')\n\n"
            "def main():\n"
            "    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
            "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
            "    model = build(model_args)\n"
            "    model.vision_model.encoder.gradient_checkpointing = True\n"
            "    model.language_model.gradient_checkpointing = True\n\n"
            "if __name__ == '__main__':\n    main()\n"),
    })
    [run] = _runs(tmp_path, "run.sh")
    setting = run.settings["gradient_checkpointing"]
    assert setting.value is True and setting.kind.value == "set in code after parsing"

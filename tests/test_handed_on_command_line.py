"""An entry script that hands its command line to a function trainlint has not read (a framework's CLI module:
`from toolkit.pipelines import sft_main; sft_main()`, the function defined behind a lazy package) decides
nothing about its flags itself: what they mean is that code's business. Written in our own words after the
ms-swift CLI modules."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.core import Unknown
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

# The package exports its entry points lazily: the function is defined in a module the import does not name.
_LAZY_PACKAGE = """import importlib


def __getattr__(name):
    return getattr(importlib.import_module("toolkit.pipelines.train"), name)
"""

_SFT_CLI = """def try_init_backend():
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuner_backend", type=str, default="peft")
    args, _ = parser.parse_known_args()
    if args.tuner_backend == "fast":
        import fastkernels


if __name__ == "__main__":
    try_init_backend()
    from toolkit.pipelines import sft_main
    sft_main()
"""

_RLHF_CLI = """if __name__ == "__main__":
    from toolkit.pipelines import rlhf_main
    rlhf_main()
"""

_FLAGS = """    --model Qwen/Qwen2.5-7B-Instruct \\
    --tuner_type lora \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps 4 \\
    --max_length 4096 \\
    --deepspeed zero3_offload"""


def _tree(folder: Path, entry: str, text: str) -> Path:
    return write_tree(folder, {
        "toolkit/__init__.py": "",
        "toolkit/pipelines/__init__.py": _LAZY_PACKAGE,
        "toolkit/pipelines/train.py": "def sft_main():\n    pass\n\n\ndef rlhf_main():\n    pass\n",
        f"toolkit/cli/{entry}": text,
        "examples/train.sh": f"NPROC_PER_NODE=8 torchrun --nproc_per_node 8 toolkit/cli/{entry} \\\n{_FLAGS}\n",
    })


def _codes(cli, folder: Path):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    return sorted({f["code"] for f in document["findings"] if f["severity"] in ("error", "warning")})


def test_flags_left_over_by_a_helper_parser_reach_the_function_the_script_hands_on_to(cli, tmp_path):
    # The helper's parse_known_args reads one flag; sft_main() parses the command line again, whole.
    _tree(tmp_path, "sft.py", _SFT_CLI)
    assert "TL305" not in _codes(cli, tmp_path)


def test_flags_left_over_when_nothing_else_runs_are_still_dropped(cli, tmp_path):
    # The same helper, but the script's own main() trains without parsing anything more: the flags are lost.
    own_main = _SFT_CLI.replace("    from toolkit.pipelines import sft_main\n    sft_main()\n", "    main()\n")
    own_main = own_main.replace('if __name__ == "__main__":', 'def main():\n    pass\n\n\nif __name__ == "__main__":')
    _tree(tmp_path, "sft.py", own_main)
    assert "TL305" in _codes(cli, tmp_path)


def test_a_config_name_read_by_unread_code_is_unknown_not_missing(cli, tmp_path):
    # `--deepspeed zero3_offload` names a preset the framework's own argument code resolves.
    _tree(tmp_path, "rlhf.py", _RLHF_CLI)
    assert "TL302" not in _codes(cli, tmp_path)
    [run] = scan([tmp_path / "examples/train.sh"], workspace=Workspace(tmp_path)).runs
    stage = run.settings["zero_stage"].value
    assert isinstance(stage, Unknown) and "hands its command line to `rlhf_main()`" in stage.reason


def test_a_trainer_script_that_parses_its_flags_itself_still_misses_the_config(cli, tmp_path):
    hf_script = """from dataclasses import dataclass, field

from transformers import HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model: str = field(default="gpt2")
    tuner_type: str = field(default="lora")
    max_length: int = field(default=2048)


if __name__ == "__main__":
    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
    Trainer(model=None, args=training_args).train()
"""
    _tree(tmp_path, "rlhf.py", hf_script)
    assert "TL302" in _codes(cli, tmp_path)

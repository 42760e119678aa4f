"""A launcher that writes its DeepSpeed config itself, right before the launch (`cat <<EOT > $config_json`,
`echo '{...}' > zero2.json`), names a file the tree need not hold: it exists when the launch runs. Written in our
own words after Megatron-DeepSpeed's evaluation and pre-training scripts."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.readers.shell import read_shell

_HEREDOC = """#!/bin/bash
ZERO_STAGE=0
config_json="./ds_config.json"
cat <<EOT > $config_json
{
  "train_micro_batch_size_per_gpu": 1,
  "zero_optimization": { "stage": $ZERO_STAGE },
  "fp16": { "enabled": true }
}
EOT
deepspeed --num_gpus 8 train.py --deepspeed $config_json --model_name_or_path lmsys/vicuna-7b-v1.5 \\
    --per_device_train_batch_size 1 --fp16 True
"""


def _missing_files(cli, folder: Path, files: dict) -> list:
    write_tree(folder, {"train.py": TRAIN_PY.replace("{eval_dataset}", "None"), **files})
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return [f["message"] for f in document["findings"] if f["code"] == "TL302"]


def test_a_config_the_launcher_writes_before_the_launch_is_not_missing(cli, tmp_path):
    assert _missing_files(cli, tmp_path, {"run.sh": _HEREDOC}) == []


@pytest.mark.parametrize("writer", [
    "mkdir -p configs && cd configs\necho '{\"zero_optimization\": {\"stage\": 2}}' > zero2.json\ncd ..\n",
    "if [ -n \"$FAST\" ]; then\n  printf '{}' >| configs/zero2.json\nfi\n",  # written on one branch: may exist
    "{ echo '{'; echo '}'; } > configs/zero2.json 2>/dev/null\n",
])
def test_the_written_path_is_matched_in_the_directory_it_was_written_from(cli, tmp_path, writer):
    launch = "deepspeed train.py --deepspeed configs/zero2.json --model_name_or_path gpt2\n"
    assert _missing_files(cli, tmp_path, {"run.sh": writer + launch}) == []


@pytest.mark.parametrize("writer, launch", [
    ("echo '{}' > zero2.json\n", "deepspeed train.py --deepspeed configs/zero2.json --model_name_or_path gpt2\n"),
    ("", "deepspeed train.py --deepspeed zero2.json --model_name_or_path gpt2\necho '{}' > zero2.json\n"),
])
def test_a_config_written_elsewhere_or_only_after_the_launch_is_still_missing(cli, tmp_path, writer, launch):
    assert len(_missing_files(cli, tmp_path, {"run.sh": writer + launch})) == 1


def test_the_reader_records_what_the_script_wrote_before_each_launch(tmp_path):
    path = write_tree(tmp_path, {"run.sh": "cd out\ncat > a.json <<EOF\n{}\nEOF\nexec > log.txt 2>&1\n"
                                           "torchrun train.py\necho done >> ../b.txt\ntorchrun train.py\n"}) / "run.sh"
    script = read_shell(path)
    assert [launch.written for launch in script.launches] == [("out/a.json", "out/log.txt"),
                                                              ("out/a.json", "out/log.txt", "b.txt")]

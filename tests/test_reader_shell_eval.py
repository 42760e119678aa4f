"""`eval`: the words joined with spaces and run as commands of the same shell, read with their origins."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.core import Unknown
from trainlint.readers.shell import read_shell

# DeepSpeedExamples' and VisualGLM's pattern: a launch built in a string with environment prefixes and a
# redirection, echoed, then run by `eval`.
_RUN_CMD = """#!/bin/bash
JOB_NAME=bert_large
run_cmd="NCCL_IB_DISABLE=1 deepspeed --num_gpus 8 train.py \\
    --model_name_or_path bert-large-uncased \\
    --per_device_train_batch_size 64 \\
    --output_dir out/$JOB_NAME &> ${JOB_NAME}.log"
echo ${run_cmd}
eval ${run_cmd}
"""

# LESS's pattern: two variables, one with the launcher and one with the flags, a quoted value that holds a space,
# a pipe to `tee`, and a part of unknown value.
_HEADER = """#!/bin/bash
ID=$RANDOM
header="torchrun --nproc_per_node 4 --rdzv-id=$ID -m less.train.train"
training_args="--fsdp 'full_shard auto_wrap' --per_device_train_batch_size 1 2>&1 | tee train.log"
eval "$header" "$training_args"
"""


def _read(tmp_path: Path, text: str):
    write_tree(tmp_path, {"run.sh": text})
    return read_shell(tmp_path / "run.sh")


def _flags(launch):
    return [setting.value for setting in launch.script_args]


def test_a_command_in_a_string_runs_by_eval_with_its_prefix_its_flags_where_they_were_written(tmp_path):
    script = _read(tmp_path, _RUN_CMD)
    [launch] = script.launches
    assert launch.launcher.value == "deepspeed" and launch.entry.value == "train.py"
    # The environment prefix is an assignment, and the redirection is no argument: a plain `${run_cmd}` would
    # have made `NCCL_IB_DISABLE=1` the command and `&>` a flag value.
    assert launch.env["NCCL_IB_DISABLE"].value == "1"
    assert _flags(launch) == ["--model_name_or_path", "bert-large-uncased", "--per_device_train_batch_size", "64",
                              "--output_dir", "out/bert_large"]
    batch = launch.script_args[3]
    assert (batch.origin.line, batch.origin.column) == (5, 35)  # inside the assignment's string


def test_eval_joins_its_words_and_reads_quotes_and_pipes_in_them(tmp_path):
    [launch] = _read(tmp_path, _HEADER).launches
    assert launch.launcher.value == "torchrun" and launch.entry_is_module and launch.entry.value == "less.train.train"
    assert _flags(launch) == ["--fsdp", "full_shard auto_wrap", "--per_device_train_batch_size", "1"]
    rdzv = next(setting for setting in launch.launcher_args if str(setting.value).startswith("--rdzv-id")
                or isinstance(setting.value, Unknown))
    assert isinstance(rdzv.value, Unknown) and "RANDOM" in rdzv.value.reason


def test_what_eval_assigns_stays_assigned(tmp_path):
    script = _read(tmp_path, 'eval "BATCH=8"\ndeepspeed train.py --per_device_train_batch_size $BATCH\n')
    [launch] = script.launches
    assert _flags(launch) == ["--per_device_train_batch_size", "8"]


def test_an_eval_of_a_value_that_is_not_known_runs_nothing_and_says_nothing(tmp_path):
    script = _read(tmp_path, 'eval "$(conda shell.bash hook)"\nconda activate train\n')
    assert script.launches == () and script.diagnostics == ()


def test_an_eval_that_evaluates_itself_stops(tmp_path):
    script = _read(tmp_path, "cmd='eval $cmd'\neval $cmd\n")
    assert script.launches == ()
    assert any("nested shells or evals" in diagnostic.message for diagnostic in script.diagnostics)


def test_a_fix_edits_the_string_eval_runs(cli, tmp_path):
    # Qwen2.5-1.5B at micro-batch 64 and 2048 tokens on 80 GB cards: the fix moves the batch into accumulation
    # inside the string, and its new flag goes before the redirection, where the command's words end.
    text = _RUN_CMD.replace("bert-large-uncased", "Qwen/Qwen2.5-1.5B").replace(
        "--output_dir", "--gradient_checkpointing True \\\n    --bf16 True \\\n    --output_dir")
    write_tree(tmp_path, {"run.sh": text, "train.py": (Path(__file__).parent / "samples" / "sibling_configs" /
                                                        "train.py").read_text()})
    code, out, err = cli.run(tmp_path, "fix", "--diff", "--isolated", "--gpu", "a100-80gb", "run.sh")
    assert code in (0, 1), err
    assert "+    --per_device_train_batch_size 8 \\" in out
    assert "+    --output_dir out/$JOB_NAME \\" in out
    assert '+    --gradient_accumulation_steps 8 &> ${JOB_NAME}.log"' in out


def test_a_value_that_is_not_known_inside_single_quotes_of_the_string_stops_the_reading(tmp_path):
    # eval reads `'$NAME'` as the text of $1, quoted: its value is not known and must not become a known word.
    script = _read(tmp_path, "NAME=$1\n"
                             "cmd=\"deepspeed train.py --output_dir '$NAME' --per_device_train_batch_size 4\"\n"
                             "eval $cmd\n")
    assert script.launches == ()
    assert any("inside single quotes" in diagnostic.message for diagnostic in script.diagnostics)


def test_a_value_that_is_not_known_inside_double_quotes_of_the_string_is_one_unknown_word(tmp_path):
    script = _read(tmp_path, "NAME=$1\n"
                             'cmd="deepspeed train.py --output_dir \\"$NAME\\" --per_device_train_batch_size 4"\n'
                             "eval $cmd\n")
    [launch] = script.launches
    flags = _flags(launch)
    assert flags[0] == "--output_dir" and isinstance(flags[1], Unknown) and flags[2:] == [
        "--per_device_train_batch_size", "4"]

"""Scripts run by other scripts with arguments (`bash scripts/finetune.sh "$MODEL" "$MAX_LENGTH" "$MICRO_BATCH"`):
the called script's launch is a job as each call runs it, with `$1`, `$2`, ... the caller's words, and its fixes
edit the caller's values, never the script every caller shares."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.core import SourceKind, Unknown
from trainlint.linter import lint, make_target
from trainlint.readers.facts import ScriptCall
from trainlint.readers.shell import read_shell

SAMPLES = Path(__file__).parent / "samples" / "script_calls"
CALLED = "scripts/finetune.sh:12"


def _runs(monkeypatch, *paths: str, num_gpus=None):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(p) for p in paths or (".",)], make_target(gpu="a100-80gb", num_gpus=num_gpus))
    return {run.id: run for run in result.scan.runs}, result


def test_the_called_launch_takes_the_callers_words(monkeypatch):
    runs, _ = _runs(monkeypatch)
    run = runs[f"{CALLED} (run by train_qwen_7b.sh:6)"]
    assert (run.called_by.path, run.called_by.line) == ("train_qwen_7b.sh", 6)
    assert run.value("model_name_or_path") == "Qwen/Qwen2-7B"
    assert run.value("max_seq_length") == 8192
    batch = run.setting("per_device_train_batch_size")
    assert batch.value == 16
    # where it was written: the caller's assignment, at the end of the chain
    assert [(s.origin.path, s.origin.line) for s in batch.chain()][-1] == ("train_qwen_7b.sh", 4)


def test_a_default_the_caller_does_not_replace_holds(monkeypatch):
    runs, _ = _runs(monkeypatch)
    run = runs[f"{CALLED} (run by train_qwen_05b.sh:3)"]
    assert (run.value("model_name_or_path"), run.value("max_seq_length")) == ("Qwen/Qwen2-0.5B", 2048)
    assert run.value("per_device_train_batch_size") == 4  # `${3:-4}`


def test_the_script_by_itself_is_still_a_job_with_its_arguments_unknown(monkeypatch):
    runs, _ = _runs(monkeypatch)
    alone = runs[CALLED]
    assert alone.called_by is None
    assert isinstance(alone.value("model_name_or_path"), Unknown)


def test_a_word_that_may_split_leaves_the_positions_unknown(monkeypatch):
    runs, _ = _runs(monkeypatch)
    # `bash scripts/finetune.sh $EXTRA Qwen/Qwen2-7B 8192 16`: $EXTRA may be no word or several
    assert not any("train_sweep.sh" in run_id for run_id in runs)
    assert read_shell(SAMPLES / "train_sweep.sh").calls == ()


def test_naming_the_caller_alone_reaches_the_called_script(monkeypatch):
    runs, result = _runs(monkeypatch, "train_qwen_7b.sh")
    assert list(runs) == [f"{CALLED} (run by train_qwen_7b.sh:6)"]
    assert [f.code for f in result.findings] == ["TL101"]


def test_fixes_edit_the_caller_and_never_the_shared_script(cli, tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    repo = tmp_path / "repo"
    called = repo / "scripts" / "finetune.sh"
    shared = called.read_text()
    # The accumulation given by the caller too: the whole port is the caller's to write.
    (repo / "train_acc.sh").write_text("#!/bin/bash\nMICRO_BATCH=16\nACC=2\n"
                                       "bash scripts/finetune.sh Qwen/Qwen2-7B 8192 \"$MICRO_BATCH\" \"$ACC\"\n")
    called.write_text(shared.replace('MICRO_BATCH="${3:-4}"', 'MICRO_BATCH="${3:-4}"\nACC="${4:-2}"')
                      .replace("--gradient_accumulation_steps 2", "--gradient_accumulation_steps $ACC"))
    before = called.read_text()
    code, out, err = cli.run(repo, "fix", "train_acc.sh", "--gpu", "a100-80gb", "--num-gpus", "8", "--unsafe-fixes")
    assert code in (0, 1), err
    assert called.read_text() == before
    assert (repo / "train_acc.sh").read_text().splitlines()[1:3] == ["MICRO_BATCH=2", "ACC=16"]
    # A value written in the shared script is left to a person.
    code, out, err = cli.run(repo, "fix", "train_qwen_7b.sh", "--gpu", "a100-80gb", "--num-gpus", "4",
                             "--unsafe-fixes")
    assert called.read_text() == before
    assert "is run by train_qwen_7b.sh:6 with its arguments" in out + err


def test_a_launch_several_callers_run_reports_a_shared_problem_once(monkeypatch):
    _, result = _runs(monkeypatch, num_gpus=4)
    # `--num_gpus 8` is written in the shared script: one finding, whoever runs it
    shared = [f.origin.line for f in result.findings if f.code == "TL112" and f.path == "scripts/finetune.sh"]
    assert shared == [12]
    # and a command a function runs with other arguments per call: once too
    assert [f.origin.line for f in result.findings if f.code == "TL112" and f.path == "train_functions.sh"] == [7]


def test_positional_parameters_inside_functions_are_the_functions_own(tmp_path):
    script = tmp_path / "called.sh"
    script.write_text('#!/bin/bash\nrun() {\n  torchrun train.py --model_name_or_path "$1"\n}\n'
                      'echo "$# arguments"\nrun "$2"\ntorchrun train.py --per_device_train_batch_size "$1"\n')
    word = SourceKind.LAUNCHER_FLAG
    from trainlint.core import Setting

    call = ScriptCall(Setting("called.sh", word), (Setting("8", word), Setting("m", word)), True,
                      read_shell(script).launches[0].origin)
    launches = [[arg.value for arg in launch.script_args] for launch in read_shell(script, call).launches]
    # the function's `$1` is the word its call gives (the script's `$2`), not the script's `$1`
    assert launches == [["--model_name_or_path", "m"], ["--per_device_train_batch_size", "8"]]


def _read_called(tmp_path, text: str, *arguments: str):
    from trainlint.core import Setting

    script = tmp_path / "called.sh"
    script.write_text(text)
    word = SourceKind.LAUNCHER_FLAG
    call = ScriptCall(Setting("called.sh", word), tuple(Setting(a, word) for a in arguments), True,
                      read_shell(script).launches[0].origin)
    return [[arg.value if not isinstance(arg.value, Unknown) else "?" for arg in launch.script_args]
            for launch in read_shell(script, call).launches]


def test_shift_and_the_passed_through_arguments(tmp_path):
    launches = _read_called(tmp_path, '#!/bin/bash\nMODEL=$1\nshift\n'
                                      'torchrun train.py --model_name_or_path $MODEL "$@"\n',
                            "m7b", "--per_device_train_batch_size", "8")
    assert launches == [["--model_name_or_path", "m7b", "--per_device_train_batch_size", "8"]]


def test_arguments_a_loop_shifts_are_unknown_after_it(tmp_path):
    launches = _read_called(tmp_path, '#!/bin/bash\nwhile [[ $# -gt 0 ]]; do\n  shift\ndone\n'
                                      'torchrun train.py --model_name_or_path "$1"\n', "m7b", "extra")
    assert launches == [["--model_name_or_path", "?"]]


def test_a_change_to_the_caller_impacts_the_job_it_runs(monkeypatch):
    from trainlint.changed import impacted_runs

    runs, result = _runs(monkeypatch)
    assert impacted_runs(result.scan, [SAMPLES / "train_qwen_7b.sh"]) == {f"{CALLED} (run by train_qwen_7b.sh:6)"}
    # the caller is one of the files the job reads (the result cache and suppressions look there too)
    assert "train_qwen_7b.sh" in runs[f"{CALLED} (run by train_qwen_7b.sh:6)"].files
    assert "train_qwen_7b.sh" not in runs[CALLED].files


def test_the_launch_by_itself_still_ports_its_own_values(cli, tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    repo = tmp_path / "repo"
    code, out, err = cli.run(repo, "fix", ".", "--gpu", "a100-80gb", "--num-gpus", "4")
    text = (repo / "scripts" / "finetune.sh").read_text()
    # written in the launch itself, the count and the accumulation are every caller's: the launch's own job ports them
    assert "deepspeed --num_gpus 4 train/train.py" in text and "--gradient_accumulation_steps 4" in text
    assert (repo / "train_qwen_7b.sh").read_text() == (SAMPLES / "train_qwen_7b.sh").read_text()


def test_shell_options_keep_the_arguments_and_set_dash_dash_replaces_them(tmp_path):
    launches = _read_called(tmp_path, '#!/bin/bash\nset -euo pipefail\nset -x\n'
                                      'torchrun train.py --model_name_or_path "$1"\nset -- other\n'
                                      'torchrun train.py --per_device_train_batch_size "$1"\n', "m7b")
    assert launches == [["--model_name_or_path", "m7b"], ["--per_device_train_batch_size", "?"]]


def test_a_function_called_with_other_arguments_is_a_job_per_call(monkeypatch):
    runs, _ = _runs(monkeypatch, "train_functions.sh")
    assert sorted(runs) == ["train_functions.sh:7 (called at line 12)", "train_functions.sh:7 (called at line 13)"]
    big = runs["train_functions.sh:7 (called at line 12)"]
    assert (big.value("model_name_or_path"), big.value("max_seq_length")) == ("Qwen/Qwen2-7B", 8192)
    length = big.setting("max_seq_length")
    assert [(s.origin.path, s.origin.line) for s in length.chain()][-1] == ("train_functions.sh", 12)
    # the third call repeats the second's values: the same job, once
    small = runs["train_functions.sh:7 (called at line 13)"]
    assert (small.value("model_name_or_path"), small.value("max_seq_length")) == ("Qwen/Qwen2-0.5B", 2048)


def test_a_function_called_once_keeps_the_plain_job_name(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text('#!/bin/bash\ntrain() {\n  torchrun train.py --model_name_or_path "$1"\n}\ntrain m7b\n')
    [launch] = read_shell(script).launches
    assert launch.called_at == () and launch.script_args[1].value == "m7b"


def test_a_double_quoted_inner_shell_gets_the_functions_words_and_a_single_quoted_one_its_own(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text('#!/bin/bash\nrun() {\n  srun --ntasks=8 bash -c "torchrun train.py --model_name_or_path $1"\n'
                      "  srun --ntasks=8 bash -c 'torchrun train.py --per_device_train_batch_size $1'\n}\n"
                      "run m7b 4\nrun m13b 4\n")
    launches = [([a.value if not isinstance(a.value, Unknown) else "?" for a in launch.script_args],
                 [call.line for call in launch.called_at]) for launch in read_shell(script).launches]
    # the outer shell expands `$1` inside double quotes, once per call; inside single quotes it is the inner shell's
    assert launches == [(["--model_name_or_path", "m7b"], [6]), (["--model_name_or_path", "m13b"], [7]),
                        (["--per_device_train_batch_size", "?"], [])]

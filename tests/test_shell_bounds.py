"""The shell reader stays fast and says what it skipped, whatever the script: functions that call each other
many times, one command continued over megabytes, statements nested thousands deep."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from trainlint.core import DiagnosticKind, Unknown
from trainlint.readers.facts import ShellScript
from trainlint.readers.shell import read_shell

BUDGET_SECONDS = 2.0


def read_timed(tmp_path: Path, text: str) -> ShellScript:
    path = tmp_path / "run.sh"
    path.write_text(text)
    started = time.perf_counter()
    script = read_shell(path)
    elapsed = time.perf_counter() - started
    assert elapsed < BUDGET_SECONDS, f"reading took {elapsed:.1f} s"
    return script


def value_after(launch, flag: str):
    words = [setting.value for setting in launch.script_args]
    return words[words.index(flag) + 1]


def unmodelled(script: ShellScript) -> list:
    return [d for d in script.diagnostics if d.kind == DiagnosticKind.UNMODELLED_CONSTRUCT]


def nested_functions(levels: int, calls: int) -> str:
    """`step_k` calls `step_{k-1}` `calls` times: calls**levels launches if every call were followed."""
    lines = ["#!/bin/bash", "step_0() { deepspeed finetune.py --per_device_train_batch_size $BATCH; }"]
    for level in range(1, levels + 1):
        lines.append(f"step_{level}() {{ " + f"step_{level - 1}; " * calls + "}")
    lines += ["BATCH=4", f"step_{levels}"]
    return "\n".join(lines) + "\n"


def test_function_calls_that_multiply_are_bounded_and_reported(tmp_path):
    text = nested_functions(levels=7, calls=6)
    assert len(text) < 600
    script = read_timed(tmp_path, text)
    (launch,) = script.launches
    assert launch.launcher == "deepspeed"
    (skipped,) = unmodelled(script)
    assert "function calls" in skipped.message and skipped.origin is not None


def test_calls_nested_deeper_than_followed_are_reported(tmp_path):
    script = read_timed(tmp_path, nested_functions(levels=10, calls=1))
    assert any("nest more than" in d.message for d in unmodelled(script))


def continued_command(flags: int) -> str:
    lines = "".join(f"    --option_{index} value_{index} \\\n" for index in range(flags))
    return "#!/bin/bash\ntorchrun --nproc_per_node 8 finetune.py \\\n" + lines + "    --output_dir out\n"


def test_a_two_megabyte_continued_command_is_read_in_bounded_time(tmp_path):
    text = continued_command(70_000)
    assert len(text) > 2_000_000
    script = read_timed(tmp_path, text)
    (launch,) = script.launches
    assert launch.script_args[0].value == "--option_0" and launch.script_args[1].value == "value_0"
    (cut,) = unmodelled(script)
    assert "more than" in cut.message and cut.origin.line > 1000


def test_reading_a_continued_command_grows_linearly(tmp_path):
    def seconds(flags: int) -> float:
        (tmp_path / "run.sh").write_text(continued_command(flags))
        runs = []
        for _ in range(3):  # the fastest of three: the machine may be busy with something else
            started = time.perf_counter()
            read_shell(tmp_path / "run.sh")
            runs.append(time.perf_counter() - started)
        return min(runs)

    seconds(200)  # warm up the parser
    small, large = seconds(1_000), seconds(2_400)
    assert large < 2 * 2.4 * small + 0.05, (small, large)  # quadratic work would take about 2.4**2 times


@pytest.mark.parametrize("opening, middle, closing, launch_read", [
    ("{ ", "echo hi; ", "} ", True),
    ("if true; then ", "echo hi; ", "fi; ", True),
    ("while true; do ", "echo hi; ", "done; ", True),
    # tree-sitter-bash itself gives up on these; what it could not parse is reported
    ("(", "echo hi", ")", False),
    ("$(", "echo hi", ")", False),
])
def test_deep_nesting_is_reported_not_dropped(tmp_path, opening, middle, closing, launch_read):
    launch_line = "deepspeed finetune.py --per_device_train_batch_size $BATCH\n"
    text = "BATCH=4\n" + opening * 5000 + middle + closing * 5000 + "\n" + launch_line
    script = read_timed(tmp_path, text)
    assert unmodelled(script), script.diagnostics
    assert all(d.path.endswith("run.sh") for d in script.diagnostics)
    assert not any(d.kind == DiagnosticKind.SYNTAX_ERROR for d in script.diagnostics)
    if launch_read:
        (launch,) = script.launches
        assert launch.script_args[-1].value == "4"


@pytest.mark.parametrize("growth", [
    "".join(f"V{index}=$V{index - 1}$V{index - 1}\n" for index in range(1, 80)) + "OUT=$V79\n",
    "V0=ab\n" + "V0+=$V0\n" * 100 + "OUT=$V0\n",
    "V0=ab\ndouble() { V0=$V0$V0; }\n" + "double\n" * 400 + "OUT=$V0\n",
], ids=["assignments", "appending", "function-calls"])
def test_a_value_that_doubles_at_each_line_stays_bounded_and_unknown(tmp_path, growth):
    # Bash would build a value of 2**79 characters; the reader stops following it and says so.
    text = "#!/bin/bash\nV0=ab\n" + growth + "torchrun train.py --per_device_train_batch_size 4 --output_dir $OUT\n"
    script = read_timed(tmp_path, text)
    (launch,) = script.launches
    output_dir = value_after(launch, "--output_dir")
    assert isinstance(output_dir, Unknown) and "grows past" in output_dir.reason
    assert value_after(launch, "--per_device_train_batch_size") == "4"


def test_an_array_that_doubles_at_each_line_stays_bounded(tmp_path):
    text = "#!/bin/bash\nA=(x y)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 60 + "torchrun train.py --run_name \"${A[1]}\"\n"
    script = read_timed(tmp_path, text)
    (launch,) = script.launches
    assert isinstance(value_after(launch, "--run_name"), Unknown)


def test_a_string_that_evals_itself_many_times_over_is_bounded_and_reported(tmp_path):
    # 30 evals of itself per level, four levels deep: 30**4 reads if every eval were followed.
    text = ("x='" + "; ".join(['eval "$x"'] * 30) + "'\neval \"$x\"\n"
            "deepspeed finetune.py --per_device_train_batch_size 4\n")
    script = read_timed(tmp_path, text)
    (launch,) = script.launches
    assert value_after(launch, "--per_device_train_batch_size") == "4"
    assert any("runs `eval` more than" in d.message for d in unmodelled(script))

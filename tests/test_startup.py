"""Start-up cost: a scan imports the parts of trainlint it uses, and the reading workers inherit the parsers
instead of importing them each. Probed in fresh interpreters, since this process has imported everything."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trainlint.checks._examples import TRAIN_PY, ZERO2
from trainlint.core import Report
from trainlint.report import render
from trainlint.report.full import render_full

# Imported only once a scan finds something to read, check, fix or share among workers.
NOT_NEEDED_WITHOUT_A_JOB = (
    "trainlint.memory.assembly", "trainlint.memory.catalog", "trainlint.memory.plans", "trainlint.fixers.planner",
    "trainlint.resolution.runs", "trainlint.readers.shell.reader", "trainlint.readers.deepspeed",
    "trainlint.checks.tl101_per_device_batch_too_large", "trainlint.baseline", "concurrent.futures.process",
    "pathspec", "difflib", "packaging.version", "tomllib", "libcst", "networkx", "rich",
)


def _probe(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)


def _loaded_after(call: str, names, cwd: Path) -> subprocess.CompletedProcess:
    code = (
        "import sys\n"
        "from trainlint.cli import main\n"
        "try:\n"
        f"    code = {call}\n"
        "finally:\n"
        f"    print('LOADED ' + ','.join(name for name in {tuple(names)!r} if name in sys.modules), file=sys.stderr)\n"
    )
    return _probe(code, cwd)


def _loaded(done: subprocess.CompletedProcess) -> list:
    line = next(line for line in done.stderr.splitlines() if line.startswith("LOADED"))
    return [name for name in line.split(" ", 1)[1].split(",") if name]


def test_a_folder_with_no_job_loads_neither_rules_nor_memory_model_nor_fixers(tmp_path):
    (tmp_path / "notes.txt").write_text("no launcher here\n")
    done = _loaded_after("main(['check', '.', '--no-cache'])", NOT_NEEDED_WITHOUT_A_JOB, tmp_path)

    assert "no training job found" in done.stdout + done.stderr
    assert _loaded(done) == []


def test_a_job_loads_what_checking_and_planning_its_fix_need(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (tmp_path / "zero2.json").write_text(ZERO2)
    (tmp_path / "launch.sh").write_text(
        "deepspeed train.py --deepspeed zero2.json --model_name_or_path lmsys/vicuna-7b-v1.5 --bf16 True \\\n"
        "    --per_device_train_batch_size 64 --gradient_accumulation_steps 1 --model_max_length 2048\n")
    wanted = ("trainlint.memory.assembly", "trainlint.fixers.planner", "trainlint.readers.shell.reader",
              "trainlint.checks.tl101_per_device_batch_too_large")
    check = "main(['check', '.', '--no-cache', '--num-gpus', '8', '--output-format', 'json'])"
    done = _loaded_after(check, wanted, tmp_path)

    assert '"TL101"' in done.stdout
    assert _loaded(done) == list(wanted)


def test_the_reading_workers_inherit_the_python_parser_and_only_it(tmp_path):
    """A wave of entry scripts read in parallel: the parent imports the Python reader (and libcst) before the
    workers fork, rather than each worker importing its own. A wave of launchers alone is read without libcst."""
    for number in range(10):
        (tmp_path / f"run{number}.sh").write_text(f"deepspeed train.py --per_device_train_batch_size {number + 1}\n")
        (tmp_path / f"train{number}.py").write_text(f"import transformers\nBATCH = {number}\n")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from trainlint.readers.pool import read_many\n"
        "scripts = sorted(Path('.').glob('*.sh'))\n"
        "read = read_many([('shell', path) for path in scripts], processes=2)\n"
        "print(len(read), [len(script.launches) for script in read].count(1))\n"
        "print(*(name in sys.modules for name in ('trainlint.readers.python.loading', 'libcst')))\n"
        "entries = sorted(Path('.').glob('*.py'))\n"
        "read = read_many([('python', path) for path in entries], processes=2)\n"
        "print(len(read), sum(not module.diagnostics for module in read))\n"
        "print(*(name in sys.modules for name in ('trainlint.readers.python.loading', 'libcst')))\n"
    )
    done = _probe(code, tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["10 10", "False False", "10 10", "True True"]


def test_the_memory_package_exports_the_estimate_function_however_its_modules_are_imported(tmp_path):
    code = (
        "import sys\n"
        "from trainlint.memory import find_gpu\n"
        "print('trainlint.memory.assembly' in sys.modules)\n"
        "from trainlint.memory.estimate import suggestions\n"
        "from trainlint.memory import estimate, Gpu\n"
        "print(callable(estimate) and estimate.__module__, Gpu is type(find_gpu('a100-80gb')))\n"
    )
    done = _probe(code, tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["False", "trainlint.memory.assembly True"]


@pytest.mark.parametrize("runs", [0, 3])
@pytest.mark.parametrize("width", [None, 40])
def test_the_full_format_of_a_report_with_nothing_to_show_is_the_one_rich_draws(runs, width):
    """Without findings, unread places or colour, the full format is written without rich: the same text."""
    report = Report(findings=(), runs=tuple(object() for _ in range(runs)))
    shown = render(report, "full", width=width)

    assert shown == render_full(report, width=width)
    assert shown in ("No problems found in 3 jobs.\n", "warning: no training job found, so nothing was checked "
                                                        "(give the launcher, recipe or folder).\n")

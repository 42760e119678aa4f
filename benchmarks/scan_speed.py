"""How long `trainlint check` takes next to `ruff check --select ALL --no-cache`, on the same trees.

    python benchmarks/scan_speed.py /work/real/*          # one row per folder, then the sums
    python benchmarks/scan_speed.py                        # 200 generated launchers

Each folder is checked from inside it, as a user would (`trainlint check .`): trainlint cold (its cache
folder emptied first), trainlint warm (the cache of the cold run), trainlint after an edit (a request whose
stored result does not apply, every file's facts cached: what a pre-commit hook meets once a file has changed;
another output format stands for the edit, so no tree is written), ruff without a cache. A last run checks
every folder at once, cold, for the peak memory of one scan. Peak memory is the largest resident set of
the child processes (resource.getrusage); ruff must be on PATH (or next to this Python). Prints Markdown.
"""
from __future__ import annotations

import argparse
import compileall
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Sequence, Tuple

LAUNCHER = """#!/bin/bash
GPUS={gpus}
torchrun --nproc_per_node $GPUS train.py --deepspeed zero2.json --model_name_or_path lmsys/vicuna-7b-v1.5 \\
    --bf16 True --per_device_train_batch_size {batch} --gradient_accumulation_steps {accum} \\
    --model_max_length 2048 --gradient_checkpointing True
"""


def generate(folder: Path, count: int) -> None:
    from trainlint.checks._examples import TRAIN_PY, ZERO2

    (folder / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (folder / "zero2.json").write_text(ZERO2)
    for index in range(count):
        text = LAUNCHER.format(gpus=1 + index % 8, batch=1 + index % 16, accum=1 + index % 4)
        (folder / f"launch_{index:04d}.sh").write_text(text)


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def timed(argv: Sequence[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env={**os.environ, "CI": "true"})
    return time.perf_counter() - started


def peak_rss_mib(argv: Sequence[str], cwd: Path) -> float:
    """Peak resident memory of one child run (a fresh interpreter, so nothing earlier counts)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], cwd=cwd, capture_output=True, text=True, check=False)
    return int(out.stdout.strip() or 0) / 1024


def measure(folders: Sequence[Path], cache_root: Path) -> List[Tuple[str, float, float, float, float]]:
    trainlint, ruff = _tool("trainlint"), _tool("ruff")
    rows = []
    for folder in folders:
        cache = cache_root / folder.name
        shutil.rmtree(cache, ignore_errors=True)
        check = [trainlint, "check", ".", "--exit-zero", "--cache-dir", str(cache), "--output-format"]
        cold = timed([*check, "json"], folder)
        warm = timed([*check, "json"], folder)
        # Another format's stored result does not apply: a scan with the facts cached. A first scan stores only the
        # Python files' facts and the next the rest, so one scan primes the cache and the one after is timed.
        timed([*check, "concise"], folder)
        edited = timed([*check, "github"], folder)
        ruff_time = timed([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", "."], folder)
        rows.append((folder.name, cold, warm, edited, ruff_time))
    return rows


def table(rows, folders: Sequence[Path], cache_root: Path) -> str:
    lines = [f"Machine: {os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}, "
             f"{platform.system()}", "",
             "| tree | trainlint cold (s) | trainlint warm (s) | trainlint after an edit (s) "
             "| ruff --select ALL --no-cache (s) |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, cold, warm, edited, ruff_time in rows:
        lines.append(f"| {name} | {cold:.2f} | {warm:.2f} | {edited:.2f} | {ruff_time:.2f} |")
    sums = [sum(row[i] for row in rows) for i in (1, 2, 3, 4)]
    lines.append(f"| **sum of {len(rows)}** | " + " | ".join(f"**{total:.1f}**" for total in sums) + " |")
    everything = cache_root / "all"
    shutil.rmtree(everything, ignore_errors=True)
    argv = [_tool("trainlint"), "check", *map(str, folders), "--exit-zero", "--cache-dir", str(everything),
            "--output-format", "json"]
    peak = peak_rss_mib(argv, Path.cwd())
    ruff_peak = peak_rss_mib([_tool("ruff"), "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet",
                              *map(str, folders)], Path.cwd())
    lines += ["", f"Peak memory of one cold scan over all {len(folders)} trees: trainlint {peak:.0f} MiB "
              f"(workers included: the largest one process), ruff {ruff_peak:.0f} MiB."]
    return "\n".join(lines)


def compile_bytecode() -> None:
    """Write trainlint's bytecode first, as `pip install` does: an editable install under
    PYTHONDONTWRITEBYTECODE would otherwise compile every module again on each timed run."""
    import trainlint

    compileall.compile_dir(str(Path(trainlint.__file__).parent), quiet=1)


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", metavar="FOLDER|COUNT",
                        help="folders to check from inside, or a number of launchers to generate (default 200)")
    args = parser.parse_args(argv)
    counts = [arg for arg in args.trees if arg.isdigit()]
    missing = [arg for arg in args.trees if not arg.isdigit() and not Path(arg).is_dir()]
    if missing or len(counts) > 1 or (counts and len(counts) < len(args.trees)):
        parser.error(f"expected folders or one count, got: {' '.join(missing or args.trees)}")
    compile_bytecode()
    with tempfile.TemporaryDirectory() as temp:
        folders = [Path(arg).resolve() for arg in args.trees if not arg.isdigit()]
        if not folders:
            generated = Path(temp) / "generated"
            generated.mkdir()
            generate(generated, int(counts[0]) if counts else 200)
            folders = [generated]
        cache_root = Path(temp) / "caches"
        print(table(measure(folders, cache_root), folders, cache_root))


if __name__ == "__main__":
    main(sys.argv[1:])

"""How long a scan takes: N generated launchers sharing one entry script and DeepSpeed config, or
any folder given on the command line. Run by hand: `python benchmarks/scan_speed.py [N | FOLDER]`."""
from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from trainlint.checks._examples import TRAIN_PY, ZERO2
from trainlint.linter import lint, make_target

LAUNCHER = """#!/bin/bash
GPUS={gpus}
BATCH={batch}
DISTRIBUTED_ARGS="--nproc_per_node $GPUS --nnodes 1"
torchrun $DISTRIBUTED_ARGS train.py \\
    --deepspeed zero2.json \\
    --model_name_or_path lmsys/vicuna-7b-v1.5 \\
    --bf16 True \\
    --per_device_train_batch_size $BATCH \\
    --gradient_accumulation_steps {accum} \\
    --model_max_length 2048 \\
    --gradient_checkpointing True 2>&1 | tee log.txt
"""


def generate(folder: Path, count: int) -> None:
    (folder / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (folder / "zero2.json").write_text(ZERO2)
    for index in range(count):
        text = LAUNCHER.format(gpus=1 + index % 8, batch=1 + index % 16, accum=1 + index % 4)
        (folder / f"launch_{index:04d}.sh").write_text(text)


def measure(folder: Path) -> None:
    started = time.perf_counter()
    result = lint([folder], make_target("a100-40gb"))
    elapsed = time.perf_counter() - started
    # A second scan under tracemalloc, which slows Python down, for the memory figure only.
    tracemalloc.start()
    lint([folder], make_target("a100-40gb"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    runs = len(result.scan.runs)
    print(f"{runs} jobs, {len(result.findings)} findings in {elapsed:.2f} s "
          f"({1000 * elapsed / max(runs, 1):.1f} ms per job), peak Python memory {peak / 2**20:.0f} MiB")


def main(argv) -> None:
    if argv and Path(argv[0]).is_dir():
        measure(Path(argv[0]))
        return
    count = int(argv[0]) if argv else 200
    with tempfile.TemporaryDirectory() as temp:
        generate(Path(temp), count)
        measure(Path(temp))


if __name__ == "__main__":
    main(sys.argv[1:])

"""The pieces of the shell reader on their own: launcher option tables, branch merges and word splitting."""
from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.core import Origin, Setting, SourceKind, Unknown
from trainlint.readers.shell import read_shell
from trainlint.readers.shell.merging import merge
from trainlint.readers.shell.options import LAUNCHER_SYNTAX, PYTHON_MODULE_LAUNCHERS, Launcher
from trainlint.readers.shell.values import Binding, Piece, State
from trainlint.readers.shell.words import split_fields


def launch_of(tmp_path: Path, command: str):
    path = tmp_path / "run.sh"
    path.write_text(command + "\n", encoding="utf-8")
    launches = read_shell(path).launches
    assert len(launches) == 1, launches
    return launches[0]


def test_every_launcher_with_options_has_their_syntax():
    # Recipe commands (`llamafactory-cli train`, axolotl's, ms-swift's) take no launcher options trainlint reads; a
    # file of arguments checked by itself has no command at all.
    assert set(LAUNCHER_SYNTAX) == set(Launcher) - {Launcher.PYTHON, Launcher.LLAMAFACTORY_CLI, Launcher.AXOLOTL,
                                                    Launcher.SWIFT, Launcher.ARGUMENTS_FILE}
    assert set(PYTHON_MODULE_LAUNCHERS.values()) <= set(LAUNCHER_SYNTAX)
    # torch.distributed.launch and .run are torchrun under another name.
    assert LAUNCHER_SYNTAX[Launcher.TORCH_DISTRIBUTED_LAUNCH] is LAUNCHER_SYNTAX[Launcher.TORCHRUN]


@pytest.mark.parametrize("command, launcher, launcher_args, entry, is_module", [
    # `python -m deepspeed.launcher.runner` reads deepspeed's options: --num_gpus takes a value.
    ("python -m deepspeed.launcher.runner --num_gpus 2 train.py --lr 1", "deepspeed", ["--num_gpus", "2"],
     "train.py", False),
    ("python -m accelerate.commands.launch --fsdp_sharding_strategy 1 train.py", "accelerate",
     ["--fsdp_sharding_strategy", "1"], "train.py", False),
    # deepspeed names a module with --module only; torchrun also takes -m.
    ("deepspeed --module pkg.train --lr 1", "deepspeed", ["--module"], "pkg.train", True),
    ("torchrun --nproc-per-node=8 -m pkg.train", "torchrun", ["--nproc-per-node=8", "-m"], "pkg.train", True),
])
def test_launcher_options_come_from_the_launchers_syntax(tmp_path, command, launcher, launcher_args, entry, is_module):
    launch = launch_of(tmp_path, command)
    assert launch.launcher is Launcher(launcher)
    assert [setting.value for setting in launch.launcher_args] == launcher_args
    assert launch.entry.value == entry and launch.entry_is_module is is_module


def assigned(value: str, line: int) -> Binding:
    origin = Origin("run.sh", line, 1, line, 1 + len(value), 0, len(value))
    setting = Setting(value, SourceKind.SHELL_VARIABLE, origin, value)
    return Binding((Piece(value, ((0, 1),) * len(value)),), (setting,))


def test_merge_keeps_what_branches_agree_on_and_names_each_value_they_disagree_on():
    shared = assigned("8", 1)
    then, otherwise = State(env={"GPUS": shared, "BS": assigned("4", 3)}), State(env={"GPUS": shared})
    otherwise.cwd = "/data"
    merged = merge([then, otherwise], line=2)
    assert merged.env["GPUS"] is shared
    reason = merged.env["BS"].setting.value
    assert isinstance(reason, Unknown)
    assert reason.reason == (
        "$BS depends on which branch of the statement at line 2 runs: `4` at line 3 or the caller's environment"
    )
    assert (merged.cwd, merged.cwd_lost) == (None, True)


def test_only_unquoted_expansion_results_split():
    expanded = Piece("--a 1  --b", tuple((index, index + 1) for index in range(10)), splittable=True)
    quoted = Piece("x y", ((20, 21),) * 3)
    fields = split_fields([expanded, quoted])
    assert ["".join(piece.text for piece in field) for field in fields] == ["--a", "1", "--bx y"]
    assert fields[1][0].spans == ((4, 5),)

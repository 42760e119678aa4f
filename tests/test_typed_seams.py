"""Code reads typed fields, never prose: rewording a note must not change a severity or an edit."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainlint.core import DISCOVERED_SUFFIXES, Fallback, FileKind, Launcher, ReplacedBy, Setting, SourceKind, file_kind
from trainlint.readers.shell import read_shell

PACKAGE = Path(__file__).resolve().parent.parent / "trainlint"

# Files that still read `Setting.note` as data, each to be migrated to the typed fields (`written_as`,
# `fallback`, `engine`) and then removed from this list. None today.
NOTE_PARSED_TODAY: dict = {}


def _is_note(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "note"


def _note_parsing(tree: ast.AST) -> list:
    """Lines where a `.note` is taken apart or compared: a method called on it (`.startswith`, `.split`),
    an index into it, a comparison (`in`, `==`) or a choice of it as a value (`x.note if ... else knob`)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and _is_note(node.value):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(_is_note(part) for part in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.IfExp) and (_is_note(node.body) or _is_note(node.orelse)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and any(_is_note(arg) for arg in node.args) \
                and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "re":
            lines.append(node.lineno)
    return sorted(lines)


def _files_parsing_notes() -> dict:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = _note_parsing(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def test_no_code_parses_a_setting_note_beyond_the_files_still_to_migrate():
    found = _files_parsing_notes()
    new = {path: lines for path, lines in found.items() if path not in NOTE_PARSED_TODAY}
    assert new == {}, "read the typed fields of Setting (written_as, fallback) instead of parsing its note"


def test_the_list_of_files_still_to_migrate_names_only_files_that_still_parse_notes():
    assert sorted(set(NOTE_PARSED_TODAY) - set(_files_parsing_notes())) == []


def test_the_detector_sees_the_ways_a_note_is_parsed():
    source = """
if setting.note.startswith("default of "): pass
names = {setting.note.lstrip("-")}
ok = "option of the script" in upstream.note
key = setting.note if setting.note else knob
first = setting.note[0]
matched = re.match(r"default of \\$\\d", setting.note)
shown = f"{setting.kind.value}: {setting.note}" if setting.note else setting.kind.value
notes.note("a method named note is not a Setting's note")
"""
    assert _note_parsing(ast.parse(source)) == [2, 3, 4, 5, 6, 7]


def _world_fallback(folder: Path, script: str) -> Setting:
    path = folder / "train.sh"
    path.write_text(script, encoding="utf-8")
    launch = read_shell(path).launches[0]
    word = launch.launcher_args[-1]
    return next(step for step in word.chain() if step.fallback is not None)


@pytest.mark.parametrize("script, fallback, note", [
    ("deepspeed --num_gpus ${GPUS:-8} train.py\n", Fallback("GPUS", ReplacedBy.ENVIRONMENT), "default of $GPUS"),
    ("deepspeed --num_gpus ${1:-8} train.py\n", Fallback("1", ReplacedBy.CALLER_ARGUMENT), "default of $1"),
    ("GPUS=8\nwhile [ $# -gt 0 ]; do case $1 in -g) GPUS=$2; shift 2;; *) shift;; esac; done\n"
     "deepspeed --num_gpus $GPUS train.py\n", Fallback("GPUS", ReplacedBy.SCRIPT_OPTION),
     "default of $GPUS (an option of the script, handled at line 2, may replace it)"),
])
def test_a_fallback_says_who_may_replace_it_whatever_its_note_says(tmp_path, script, fallback, note):
    setting = _world_fallback(tmp_path, script)
    assert (setting.fallback, setting.note, setting.value) == (fallback, note, "8")


def test_a_setting_says_whether_a_flag_wrote_it():
    assert Setting(True, SourceKind.LAUNCHER_FLAG, written_as="--bf16").written_as_flag
    assert not Setting(True, SourceKind.LAUNCHER_FLAG, written_as="bf16").written_as_flag
    assert not Setting(True, SourceKind.LAUNCHER_FLAG, note="--bf16").written_as_flag


@pytest.mark.parametrize("path, kind", [
    ("scripts/finetune.sh", FileKind.SHELL), ("run.SLURM", FileKind.SHELL), ("scripts/train", FileKind.SHELL),
    ("train.py", FileKind.PYTHON), ("ds_config/zero3.json", FileKind.JSON), ("examples/lora.YML", FileKind.YAML),
    ("pyproject.toml", FileKind.TOML), ("README.md", None), ("launch.zsh", FileKind.SHELL),
])
def test_one_suffix_table_tells_a_file_kind(path, kind):
    assert file_kind(path) == kind


def test_folders_are_searched_for_launchers_and_recipes_with_a_suffix():
    assert DISCOVERED_SUFFIXES == {".sh", ".bash", ".slurm", ".sbatch", ".yaml", ".yml"}


def test_a_launcher_prints_and_serialises_as_its_command_name():
    import json
    assert (f"{Launcher.TORCH_DISTRIBUTED_RUN}", json.dumps(Launcher.LLAMAFACTORY_CLI)) == \
        ("torch.distributed.run", '"llamafactory-cli"')
    assert Launcher.DEEPSPEED == "deepspeed"


def test_every_knob_has_a_symbol_and_every_symbol_a_knob():
    from trainlint.knobs import KNOBS, K
    assert sorted(member.value for member in K) == sorted(knob.name for knob in KNOBS)
    assert all(member.name == member.value.upper() for member in K)
    assert (f"{K.ZERO_STAGE}", {"zero_stage": 3}[K.ZERO_STAGE]) == ("zero_stage", 3)


def test_a_folder_is_not_searched_for_zsh_scripts_though_a_named_one_reads_as_shell():
    from trainlint.core import DISCOVERED_SUFFIXES

    assert ".zsh" not in DISCOVERED_SUFFIXES and ".sh" in DISCOVERED_SUFFIXES and ".slurm" in DISCOVERED_SUFFIXES

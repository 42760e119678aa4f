"""A launcher value computed from others (`GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`)
is never overwritten with a constant: it is meant to follow its inputs. When a fix changes those inputs
anyway (the GPU count, the micro-batch), the computed value may come out as wanted on its own. This reads
the launcher again, in memory, with the fix's edits applied, and says what the word at the same place
holds then: bash's own arithmetic, as the shell reader models it, decides, not a second evaluator."""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from trainlint.core import Edit, Origin, Setting, Value
from trainlint.fixers.edits import apply_edits
from trainlint.readers.facts import Launch
from trainlint.readers.source import SourceText


def value_after_edits(data: bytes, edits: Sequence[Edit], word: Origin) -> Optional[Value]:
    """The value the launcher word at `word` expands to once `edits` (of any files) are applied to the
    launcher's bytes `data`; None when the word itself is edited or is no longer found."""
    same_file = [edit for edit in edits if edit.origin.path == word.path]
    if any(_overlaps(edit.origin, word) for edit in same_file):
        return None
    try:
        edited = apply_edits(data, same_file)
    except ValueError:
        return None
    start = word.start_byte + sum(_growth(edit) for edit in same_file if edit.origin.end_byte <= word.start_byte)
    # Imported here: the shell reader (~15 ms) is otherwise loaded only to read a launcher, and a scan whose facts are
    # all cached reads none.
    from trainlint.readers.shell.reader import ShellReader

    try:
        script = ShellReader(SourceText(word.path, edited, edited.decode("utf-8", errors="replace"))).read()
    except RecursionError:  # nesting the first read survived but the edited text does not: no answer
        return None
    for launch in script.launches:
        for setting in _words(launch):
            if setting.origin is not None and setting.origin.start_byte == start:
                return setting.value
    return None


def _words(launch: Launch) -> Iterable[Setting]:
    yield from launch.launcher_args
    yield from launch.script_args
    yield from launch.wrapper_args
    yield from launch.env.values()


def _overlaps(edit: Origin, word: Origin) -> bool:
    return edit.start_byte < word.end_byte and word.start_byte < edit.end_byte


def _growth(edit: Edit) -> int:
    return len(edit.content.encode("utf-8")) - (edit.origin.end_byte - edit.origin.start_byte)

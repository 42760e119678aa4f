"""Scripts another script runs with arguments: `bash scripts/train/finetune.sh "$DATA" "$MODEL" 2048` in a
per-model wrapper. The called script is read again as that call runs it, `$1`, `$2`, ... being the caller's
words, and each of its launches is a job of its own, named after the call. Read by itself, the called script
leaves those values unknown; both readings are kept, as a user may run either."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator, Optional

from trainlint.core import FileKind, TrainingRun, file_kind
from trainlint.readers.facts import Launch, ScriptCall
from trainlint.readers.source import display_path, safe_resolve
from trainlint.resolution.workspace import Workspace

BuildRun = Callable[[Launch, Path, Workspace], Optional[TrainingRun]]


def called_runs(call: ScriptCall, caller: Path, workspace: Workspace, build_run: BuildRun) -> Iterator[TrainingRun]:
    """The jobs the script `call` runs starts, as it runs them; none when the script is not one the tree holds."""
    called = _called_script(call, caller, workspace)
    if called is None:
        return
    script = workspace.called_shell(called, call)
    if script is None:
        return
    shown = display_path(caller)
    label = f" (run by {shown}:{call.origin.line})"
    for launch in script.launches:
        run = build_run(launch, called, workspace)
        if run is not None:
            # The caller is a file the job reads: a change to it changes the job (`--diff-base`, the result cache).
            files = tuple(dict.fromkeys((shown, *run.files)))
            yield replace(run, id=run.id + label, called_by=call.origin, files=files)


def _called_script(call: ScriptCall, caller: Path, workspace: Workspace) -> Optional[Path]:
    written = call.script.value
    if not isinstance(written, str) or call.cwd_unknown:
        return None
    found = workspace.find(written, workspace.search_dirs(caller, call.cwd))
    if found is None or not workspace.inside(found) or file_kind(found) != FileKind.SHELL:
        return None
    return None if safe_resolve(found) == safe_resolve(caller) else found

"""What each subcommand does with its parsed arguments: ask trainlint.api, write the answer, return
the exit code. Nothing here computes; the API and the reporters do."""
from __future__ import annotations

import json
import os
import shlex
import sys
from argparse import Namespace
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

from trainlint.api import CheckResult, ExitCode, UsageError, load_settings, target_of, write_baseline
from trainlint.api import estimate as estimate_jobs
from trainlint.api import fix as fix_jobs
from trainlint.api import lint as lint_jobs
from trainlint.atomic_write import write_text_atomically
from trainlint.config import Settings

if TYPE_CHECKING:
    from trainlint.core import Report
    from trainlint.results import CheckOutput

# The settings every subcommand with target options may carry (argparse leaves out the others).
_SETTING_OPTIONS = ("config", "isolated", "select", "ignore", "exclude", "gpu", "gpu_memory", "num_gpus", "fail_on",
                    "allow_outside_reads", "extend_select", "extend_ignore", "respect_gitignore", "cache_dir")


@dataclass(frozen=True)
class Terminal:
    """How stdout is drawn: colour, and the width to wrap at (None: not a terminal, do not wrap)."""

    color: bool
    width: Optional[int]


# The environment variables with which rich takes stdout for a terminal when it is not one.
_FORCES_TERMINAL = frozenset({"FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"})


def terminal(args: Namespace, to_file: bool = False) -> Terminal:
    """rich's own detection of stdout (a terminal, its width, NO_COLOR when non-empty, FORCE_COLOR,
    TERM=dumb), overridden by `--color always|never`."""
    choice = getattr(args, "color", "auto")
    if to_file or not (_isatty(sys.stdout) or _FORCES_TERMINAL & set(os.environ)):
        # rich takes stdout for a terminal only when it is one or one of these forces it: not importing
        # it here keeps a check answered from the result cache fast.
        return Terminal(color=choice == "always", width=None)
    from rich.console import Console

    console = Console(file=sys.stdout)
    detected = console.is_terminal and console.color_system is not None and not console.no_color
    color = choice == "always" or (choice == "auto" and detected)
    return Terminal(color=color, width=console.width if console.is_terminal else None)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no such method, or a closed stream (as rich reads them)
        return False


def effective_settings(args: Namespace) -> Settings:
    """The config file merged with the command line; the command line wins."""
    given = {name: getattr(args, name) for name in _SETTING_OPTIONS if getattr(args, name, None) is not None}
    return load_settings(list(args.paths), **given)


def fix_command(args: Namespace) -> str:
    """The `trainlint fix` command that applies the fixes this check proposes: the same paths and the
    options that change which fixes are planned (the target, the selection, the batch policy)."""
    words: List[str] = ["trainlint", "fix"]
    for name in ("config", "gpu", "gpu_memory", "num_gpus"):
        value = getattr(args, name, None)
        if value is not None:
            words += [f"--{name.replace('_', '-')}", str(value)]
    for name in ("select", "extend_select", "ignore", "extend_ignore", "exclude"):
        values = getattr(args, name, None) or []
        if values:
            words += [f"--{name.replace('_', '-')}", ",".join(values)]
    for name in ("isolated", "preserve_effective_batch", "changed"):
        if getattr(args, name, False):
            words.append(f"--{name.replace('_', '-')}")
    if not getattr(args, "respect_gitignore", True):
        words.append("--no-respect-gitignore")
    words += [str(path) for path in args.paths]
    return " ".join(shlex.quote(word) for word in words)


def _write(text: str, output_file: Optional[Path]) -> None:
    if output_file is None:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        return
    try:
        write_text_atomically(Path(output_file), text)
    except OSError as error:
        raise UsageError(f"cannot write {output_file}: {error.strerror or error}") from error


def _runs_json(report: Report) -> str:
    """`show` and `estimate` as JSON: the runs of the check document, without findings."""
    from trainlint.report.json_output import report_document

    document = report_document(report)
    return json.dumps({"version": document["version"], "runs": document["runs"]}, indent=2)


def _report_errors(errors) -> None:
    """Internal errors the scan survived: each said on stderr (the exit code then says 2)."""
    for error in errors:
        sys.stderr.write(f"trainlint: internal error: {error}\n")


def run_check(args: Namespace) -> int:
    settings = effective_settings(args)
    if args.write_baseline is not None:
        result = lint_jobs(args.paths, settings, preserve_effective_batch=args.preserve_effective_batch,
                           diff_base=args.diff_base, changed=args.changed)
        return _write_baseline(args.write_baseline, result)
    shown = terminal(args, to_file=args.output_file is not None)
    stored = _result_cache(args, settings, shown)
    if stored is None:
        return _emit(args, _check(args, settings, shown))
    cache, roots = stored
    tree = cache.tree(roots)
    found = cache.load(tree)
    if found is not None:
        return _emit(args, found)
    from trainlint.inputs import recording_inputs

    with recording_inputs() as log:
        result = _scan(args, settings)
        output = _output(args, settings, shown, result)
    # Stored only when nothing the scan read changed while it ran and no file came or went in the tree
    # meanwhile: the inputs are taken after the scan, the result is of the tree before it.
    if _unchanged_since_read(result) and cache.tree(roots) == tree:
        cache.store(cache.inputs(tree, log, _shown_files(result)), output)
    return _emit(args, output)


def _result_cache(args: Namespace, settings: Settings, shown: Terminal):
    """The result cache for this check and the tree roots it covers, or None when the check bypasses
    it: --no-cache; --diff-base and --changed, whose answer depends on git's state (the index, the
    refs, the merge base) that the stored inputs do not cover; --allow-outside-reads, whose imports
    are looked for in folders outside the tree that are not recorded."""
    if args.no_cache or args.diff_base or args.changed or settings.allow_outside_reads:
        return None
    from trainlint.api import cache_dir_of
    from trainlint.fixers.journal import recover_paths
    from trainlint.inputs import tree_roots
    from trainlint.results import ResultCache

    recover_paths(args.paths)  # a fix that was interrupted is settled before the tree is compared
    cwd = Path.cwd().resolve()
    paths = [Path(path) for path in args.paths] or [Path(".")]
    roots = tree_roots(paths, cwd)
    baseline = args.baseline
    request = {
        "paths": [str(path) for path in paths], "roots": [str(root) for root in roots],
        "settings": repr(settings), "config": _file_state(settings.config_path),
        "baseline": [str(baseline), _file_state(baseline)] if baseline is not None else None,
        "preserve_effective_batch": args.preserve_effective_batch, "output_format": args.output_format,
        "statistics": args.statistics, "quiet": args.quiet, "show_info": args.show_info,
        "extend_select": list(args.extend_select or []), "fix_command": fix_command(args),
        "terminal": [shown.color, shown.width], "summary": _summary_target(args) is not None,
    }
    return ResultCache(cache_dir_of(settings), request), roots


def _file_state(path) -> Optional[str]:
    from trainlint.inputs import path_state

    return path_state(path) if path is not None else None


def _scan(args: Namespace, settings: Settings) -> CheckResult:
    from trainlint.api import ScanOptions
    from trainlint.report.progress import scan_progress

    progress = scan_progress()
    try:
        return lint_jobs(args.paths, settings, preserve_effective_batch=args.preserve_effective_batch,
                         diff_base=args.diff_base, changed=args.changed, baseline=args.baseline,
                         options=ScanOptions(cache=not args.no_cache, progress=progress))
    finally:
        if progress is not None:
            progress.close()


def _check(args: Namespace, settings: Settings, shown: Terminal) -> "CheckOutput":
    return _output(args, settings, shown, _scan(args, settings))


def _output(args: Namespace, settings: Settings, shown: Terminal, result: CheckResult) -> "CheckOutput":
    """What the check writes, as text: the report, the summary, the errors and the exit code."""
    from trainlint.report import Visibility, render
    from trainlint.results import CheckOutput

    report = result.report
    if args.statistics:
        text = _statistics(report)
    else:
        visibility = Visibility(show_info=args.show_info, selected=(*settings.select, *(args.extend_select or [])))
        text = render(report, args.output_format, root=".", color=shown.color, visibility=visibility,
                      fix_command=fix_command(args), width=shown.width)
        if (args.diff_base or args.changed) and not report.runs and not report.findings:
            text = _no_job_changed(args.output_format, text)
        if args.quiet and args.output_format in ("full", "concise"):
            text = _findings_only(text)
    summary = _summary_text(args, report) if _summary_target(args) is not None else None
    return CheckOutput(text, summary, tuple(result.errors), int(result.exit_code))


def _shown_files(result: CheckResult) -> List[str]:
    """The files the report quotes (the full format shows their lines): inputs of the stored text too."""
    paths = {finding.path for finding in result.findings}
    paths.update(finding.origin.path for finding in result.findings if finding.origin is not None)
    return sorted(path for path in paths if path)


def _unchanged_since_read(result: CheckResult) -> bool:
    """No file the scan read changed while it ran: otherwise its inputs, taken now, would not be the
    ones its result came from."""
    from trainlint.resolution.workspace import file_stamp

    for path, stamp in result.stamps.items():
        try:
            if file_stamp(path) != stamp:
                return False
        except OSError:
            return False
    return True


def _emit(args: Namespace, output: "CheckOutput") -> int:
    _write(output.text, args.output_file)
    if output.summary is not None:
        _write_summary(args, output.summary)
    _report_errors(output.errors)
    if output.exit_code == ExitCode.FINDINGS and args.exit_zero:
        return ExitCode.CLEAN
    return output.exit_code


NO_JOB_CHANGED = "No job reads a changed file: this change touches no training job, so there is nothing to check."


def _no_job_changed(output_format: str, text: str) -> str:
    """Changed-files mode with no affected job says so (rather than "no training job found")."""
    if output_format in ("full", "concise"):
        return NO_JOB_CHANGED + "\n"
    if output_format == "github":
        return text + f"::notice title=trainlint::{NO_JOB_CHANGED}\n"
    return text


def _findings_only(text: str) -> str:
    """--quiet: the report without its trailing notes and summary line (the findings stay)."""
    kept = [line for line in text.split("\n") if not _is_note_line(line)]
    return "\n".join(kept).strip("\n")


def _is_note_line(line: str) -> bool:
    from trainlint.report.common import NO_JOB_FOUND

    plain = line.strip()
    return plain.startswith(("Found ", "No problems found", "Unknown in ", "Could not read statically", "... and ",
                             "(--show-info")) or plain == NO_JOB_FOUND


def _statistics(report: Report) -> str:
    """--statistics: one line per rule, most findings first, as ruff prints it."""
    from trainlint.checks import rule_by_code

    counts = Counter(finding.code for finding in report.findings)
    if not counts:
        return "No problems found."
    width = len(str(max(counts.values())))
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_by_code(code)
        lines.append(f"{count:>{width}}\t{code}\t{rule.name if rule is not None else ''}")
    return "\n".join(lines)


def _write_baseline(path: Path, result: CheckResult) -> int:
    count = write_baseline(path, result.findings)
    print(f"trainlint: wrote {count} finding{'s' if count != 1 else ''} to {path}", file=sys.stderr)
    return ExitCode.CLEAN


def _summary_target(args: Namespace) -> Optional[Path]:
    """Where the Markdown job summary goes: --summary-file, or $GITHUB_STEP_SUMMARY when the
    annotations go to GitHub (each step has its own summary file; other writers may share it)."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.summary_file is None and step_summary and args.output_format == "github":
        return Path(step_summary)
    return args.summary_file


def _summary_text(args: Namespace, report: Report) -> str:
    from trainlint.report import render_summary

    if (args.diff_base or args.changed) and not report.runs and not report.findings:
        return f"## trainlint\n\n{NO_JOB_CHANGED}\n"
    return render_summary(report, root=".")


def _write_summary(args: Namespace, text: str) -> None:
    """The summary to its file: appended to $GITHUB_STEP_SUMMARY, else written whole."""
    target = _summary_target(args)
    if target is None:
        return
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    append = step_summary is not None and os.path.abspath(target) == os.path.abspath(step_summary)
    if append:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    else:
        write_text_atomically(Path(target), text)


def run_config(args: Namespace) -> int:
    from trainlint.config import render_settings

    settings = effective_settings(args)
    target_of(settings)  # an unknown GPU in the config is a usage error here too
    _write(render_settings(settings), None)
    return ExitCode.CLEAN


def run_show(args: Namespace) -> int:
    from trainlint.report.views import render_show

    result = estimate_jobs(args.paths, effective_settings(args))
    if args.output_format == "json":
        _write(_runs_json(result.report), None)
    else:
        shown = terminal(args)
        _write(render_show(result.report, color=shown.color, width=shown.width), None)
        from trainlint.report.unknowns import unread_location

        for diagnostic in result.diagnostics:
            print(f"note: {unread_location(diagnostic)}: {diagnostic.message}", file=sys.stderr)
    return ExitCode.CLEAN


def run_estimate(args: Namespace) -> int:
    from trainlint.report.views import render_estimates

    as_json = args.output_format == "json"
    result = estimate_jobs(args.paths, effective_settings(args), with_suggestions=not as_json,
                           global_batch=args.global_batch)
    if as_json:
        from trainlint.report.json_output import estimate_document

        _write(json.dumps(estimate_document(result.report, result.plans, result.gpu.key, result.num_gpus), indent=2),
               None)
        return ExitCode.CLEAN
    if not result.runs:
        _write("No training jobs found.", None)
        return ExitCode.CLEAN
    text = render_estimates(result.runs, result.estimates, result.suggestions, color=terminal(args).color,
                            plans=result.plans)
    if result.gpu_assumed:
        text = f"(no --gpu given: assuming {result.gpu.name})\n\n" + text
    _write(text, None)
    return ExitCode.CLEAN


def run_rule(args: Namespace) -> int:
    from trainlint.checks import all_rules, rule_by_code

    if args.all:
        rules = list(all_rules())
    elif args.code:
        found = rule_by_code(args.code)
        if found is None:
            raise UsageError(f"no rule {args.code}; `trainlint rule --all` lists them")
        rules = [found]
    else:
        raise UsageError("give a rule code (TL101) or --all")
    from trainlint.checks.docs import examples_markdown

    blocks = [f"# {r.code} {r.name} ({r.severity.value})\n\n{r.summary}.\n\n{r.docs()}\n\n"
              f"{examples_markdown(r, heading_level=2)}" for r in rules]
    _write("\n".join(blocks), None)
    return ExitCode.CLEAN


def run_gpus(_args: Namespace) -> int:
    """The catalog: the key to pass to --gpu, the usable memory and the name messages use."""
    from trainlint.memory import gpu_catalog

    lines = [f"{'--gpu':<12} {'usable GiB':>10}  {'bf16':<4}  name"]
    for key, gpu in sorted(gpu_catalog().items()):
        lines.append(f"{key:<12} {gpu.total_gib:>10.1f}  {'yes' if gpu.bf16 else 'no':<4}  {gpu.name}")
    _write("\n".join(lines), None)
    return ExitCode.CLEAN


def run_completion(args: Namespace) -> int:
    from trainlint.cli import build_parser
    from trainlint.completion import completion_script

    _write(completion_script(build_parser(), args.shell), None)
    return ExitCode.CLEAN


def run_fix(args: Namespace) -> int:
    from trainlint.report.fix_summary import render_fix_summary

    result = fix_jobs(args.paths, effective_settings(args), unsafe=args.unsafe_fixes,
                      preserve_effective_batch=args.preserve_effective_batch, preview=args.diff,
                      changed=args.changed, global_batch=args.global_batch)
    summary = render_fix_summary(result.outcome, unsafe=result.unsafe, preview=result.preview)
    if result.preview:
        sys.stdout.write(result.diff)
        sys.stdout.flush()  # the diff before the summary when both streams go to one place (`2>&1`)
        sys.stderr.write(summary)
    else:
        sys.stdout.write(summary)
    if result.error:
        sys.stderr.write(f"trainlint: error: {result.error}\n")
    return result.exit_code

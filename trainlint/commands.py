"""What each subcommand does with its parsed arguments. Exit codes: 0 clean, 1 findings, 2 error."""
from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from pathlib import Path
from typing import List, Optional, Sequence

from trainlint.config import ConfigError, Settings, fails, resolve_settings
from trainlint.core import Finding, Report
from trainlint.linter import LintResult, Selection, Target, UsageError, lint, make_target

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _paths(args: Namespace) -> List[Path]:
    return list(args.paths) or [Path(".")]


def effective_settings(args: Namespace) -> Settings:
    """The config file merged with the command line; the command line wins."""
    try:
        return resolve_settings(args)
    except ConfigError as error:
        raise UsageError(str(error)) from None


def _target(settings: Settings) -> Target:
    if settings.num_gpus is not None and settings.num_gpus < 1:
        raise UsageError("--num-gpus must be at least 1")
    return make_target(settings.gpu, settings.gpu_memory, settings.num_gpus)


def selection_of(settings: Settings) -> Selection:
    return Selection(tuple(settings.select), tuple(settings.ignore), tuple(settings.per_file_ignores))


def lint_with_settings(args: Namespace, settings: Settings, paths: Optional[Sequence[Path]] = None,
                       preserve: bool = False) -> LintResult:
    """One lint call with everything the config and the command line say (target, selection,
    per-file ignores, excludes). `paths` overrides the command line's paths."""
    return lint(list(paths) if paths is not None else _paths(args), _target(settings), selection_of(settings),
                tuple(settings.exclude), preserve_effective_batch=preserve)


def _report(result: LintResult) -> Report:
    return Report(tuple(result.findings), tuple(result.scan.runs), dict(result.estimates))


def _write(text: str, output_file: Optional[Path]) -> None:
    if output_file is None:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        return
    from trainlint.fixers.atomic import write_atomically

    target = Path(output_file)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, text.encode("utf-8"))
    except OSError as error:
        raise UsageError(f"cannot write {output_file}: {error.strerror or error}") from error


def run_check(args: Namespace) -> int:
    from trainlint.report import render

    settings = effective_settings(args)
    result = _check_result(args, settings)
    if getattr(args, "write_baseline", None) is not None:
        return _write_baseline(args.write_baseline, result)
    if getattr(args, "baseline", None) is not None:
        result.findings = _new_findings(args.baseline, result)
    from trainlint.fixers.engine import with_planned_edits

    result.findings = with_planned_edits(result)
    report = _report(result)
    color = _color() and args.output_file is None
    _write(render(report, args.output_format, root=".", color=color), args.output_file)
    _write_summary(args, report)
    if _report_errors(result):
        return EXIT_ERROR
    failing = fails((f.severity for f in result.findings), settings.fail_on)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_OK


def _report_errors(result: LintResult) -> bool:
    """Internal errors the scan survived: each said on stderr; the exit code then says 2."""
    for error in result.errors:
        sys.stderr.write(f"trainlint: internal error: {error}\n")
    return bool(result.errors)


def changed_paths(args: Namespace) -> Optional[List[Path]]:
    """The changed files of `--diff-base REF` or `--changed PATHS...`, or None outside that mode."""
    from trainlint.changed import ChangedFilesError, git_changed_files

    base = getattr(args, "diff_base", None)
    if getattr(args, "changed", False):
        if base:
            raise UsageError("--changed and --diff-base are exclusive")
        return [path.resolve() for path in args.paths]
    if not base:
        return None
    try:
        return git_changed_files(base)
    except ChangedFilesError as error:
        raise UsageError(str(error)) from None


def _check_result(args: Namespace, settings: Settings) -> LintResult:
    """The lint result of `check`: the whole tree, or in changed-files mode the repository scan
    narrowed to the jobs that read a changed file."""
    from trainlint.changed import repository_of, restrict, scan_paths
    from trainlint.resolution import Scan

    changed = changed_paths(args)
    preserve = getattr(args, "preserve_effective_batch", False)
    if changed is None:
        return lint_with_settings(args, settings, preserve=preserve)
    if getattr(args, "changed", False):
        roots = list(dict.fromkeys(repository_of(path) for path in changed)) if changed else []
    else:
        roots = _paths(args)
    if not roots:
        return LintResult(scan=Scan())
    result = lint_with_settings(args, settings, scan_paths(roots, changed, settings.exclude), preserve)
    findings, narrowed = restrict(result.scan, result.findings, changed)
    kept_runs = {run.id for run in narrowed.runs}
    estimates = {run_id: value for run_id, value in result.estimates.items() if run_id in kept_runs}
    return LintResult(narrowed, findings, estimates, result.suppressed, result.errors)


def _write_baseline(path: Path, result: LintResult) -> int:
    from trainlint.baseline import write_baseline

    count = write_baseline(Path(path), result.findings)
    print(f"trainlint: wrote {count} finding{'s' if count != 1 else ''} to {path}", file=sys.stderr)
    return EXIT_OK


def _new_findings(path: Path, result: LintResult) -> List[Finding]:
    from trainlint.baseline import BaselineError, load_baseline

    try:
        baseline = load_baseline(Path(path))
    except BaselineError as error:
        raise UsageError(str(error)) from None
    new, _known = baseline.split(result.findings)
    return new


def _write_summary(args: Namespace, report: Report) -> None:
    """The Markdown job summary: to --summary-file, or appended to $GITHUB_STEP_SUMMARY when the
    annotations go to GitHub (each step has its own summary file; other writers may share it)."""
    from trainlint.report import render_summary

    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    target = getattr(args, "summary_file", None)
    if target is None and step_summary and args.output_format == "github":
        target = Path(step_summary)
    if target is None:
        return
    text = render_summary(report, root=".")
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    append = step_summary is not None and os.path.abspath(target) == os.path.abspath(step_summary)
    if append:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    else:
        from trainlint.fixers.atomic import write_atomically

        write_atomically(Path(target), text.encode("utf-8"))


def run_config(args: Namespace) -> int:
    from trainlint.config import render_settings

    settings = effective_settings(args)
    _target(settings)  # an unknown GPU in the config is a usage error here too
    _write(render_settings(settings), None)
    return EXIT_OK


def run_show(args: Namespace) -> int:
    from trainlint.report.json_output import report_document
    from trainlint.report.views import render_show

    result = lint_with_settings(args, effective_settings(args))
    if args.output_format == "json":
        document = report_document(Report((), tuple(result.scan.runs), dict(result.estimates)))
        _write(json.dumps({"version": document["version"], "runs": document["runs"]}, indent=2), None)
    else:
        _write(render_show(result.scan.runs, color=_color()), None)
        for diagnostic in result.scan.diagnostics:
            print(f"note: {diagnostic.message}", file=sys.stderr)
    return EXIT_OK


def run_estimate(args: Namespace) -> int:
    from trainlint.memory import suggestions
    from trainlint.report.json_output import report_document
    from trainlint.report.views import render_estimates

    settings = effective_settings(args)
    target = _target(settings)
    result = lint_with_settings(args, settings)
    runs = result.scan.runs
    if args.output_format == "json":
        document = report_document(Report((), tuple(runs), dict(result.estimates)))
        _write(json.dumps({"version": document["version"], "runs": document["runs"]}, indent=2), None)
        return EXIT_OK
    if not runs:
        _write("No training jobs found.", None)
        return EXIT_OK
    proposals = {run.id: suggestions(run, target.gpu) for run in runs
                 if run.id in result.estimates and not result.estimates[run.id].fits}
    text = render_estimates(runs, result.estimates, proposals, color=_color())
    if target.gpu_assumed:
        text = f"(no --gpu given: assuming {target.gpu.name})\n\n" + text
    _write(text, None)
    return EXIT_OK


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
    blocks = [f"# {r.code} {r.name} ({r.severity.value})\n\n{r.summary}.\n\n{r.docs()}\n" for r in rules]
    _write("\n".join(blocks), None)
    return EXIT_OK


def run_gpus(_args: Namespace) -> int:
    """The catalog: the key to pass to --gpu, the usable memory and the name messages use."""
    from trainlint.memory import gpu_catalog

    lines = [f"{'--gpu':<12} {'usable GiB':>10}  {'bf16':<4}  name"]
    for key, gpu in sorted(gpu_catalog().items()):
        lines.append(f"{key:<12} {gpu.total_gib:>10.1f}  {'yes' if gpu.bf16 else 'no':<4}  {gpu.name}")
    _write("\n".join(lines), None)
    return EXIT_OK


def run_fix(args: Namespace) -> int:
    from trainlint.fixers.engine import FixSession, summary

    settings = effective_settings(args)
    session = FixSession(lambda: _check_result(args, settings), bool(args.unsafe_fixes),
                         bool(args.preserve_effective_batch))
    if args.diff:
        outcome = session.preview()
        sys.stdout.write(outcome.diff)
        sys.stderr.write(summary(outcome, unsafe=bool(args.unsafe_fixes), preview=True))
    else:
        outcome = session.run()
        sys.stdout.write(summary(outcome, unsafe=bool(args.unsafe_fixes)))
    if outcome.error:
        sys.stderr.write(f"trainlint: error: {outcome.error}\n")
        return EXIT_ERROR
    remaining = fails((f.severity for f in outcome.result.findings), settings.fail_on)
    return EXIT_FINDINGS if remaining or (args.diff and outcome.diff) else EXIT_OK
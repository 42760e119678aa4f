"""What each subcommand does with its parsed arguments: ask trainlint.api, write the answer, return
the exit code. Nothing here computes; the API and the reporters do."""
from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from pathlib import Path
from typing import Optional

from trainlint.api import CheckResult, ExitCode, UsageError, load_settings, target_of, write_baseline
from trainlint.api import estimate as estimate_jobs
from trainlint.api import fix as fix_jobs
from trainlint.api import lint as lint_jobs
from trainlint.atomic_write import write_text_atomically
from trainlint.config import Settings
from trainlint.core import Report

# The settings every subcommand with target options may carry (argparse leaves out the others).
_SETTING_OPTIONS = ("config", "isolated", "select", "ignore", "exclude", "gpu", "gpu_memory", "num_gpus", "fail_on",
                    "cache_dir")


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def effective_settings(args: Namespace) -> Settings:
    """The config file merged with the command line; the command line wins."""
    given = {name: getattr(args, name) for name in _SETTING_OPTIONS if getattr(args, name, None) is not None}
    return load_settings(list(args.paths), **given)


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
    from trainlint.api import ScanOptions
    from trainlint.report import render
    from trainlint.report.progress import scan_progress

    settings = effective_settings(args)
    if args.write_baseline is not None:
        result = lint_jobs(args.paths, settings, preserve_effective_batch=args.preserve_effective_batch,
                           diff_base=args.diff_base, changed=args.changed)
        return _write_baseline(args.write_baseline, result)
    progress = scan_progress()
    try:
        result = lint_jobs(args.paths, settings, preserve_effective_batch=args.preserve_effective_batch,
                           diff_base=args.diff_base, changed=args.changed, baseline=args.baseline,
                           options=ScanOptions(cache=not args.no_cache, progress=progress))
    finally:
        if progress is not None:
            progress.close()
    report = result.report
    color = _color() and args.output_file is None
    _write(render(report, args.output_format, root=".", color=color), args.output_file)
    _write_summary(args, report)
    _report_errors(result.errors)
    if result.exit_code == ExitCode.FINDINGS and args.exit_zero:
        return ExitCode.CLEAN
    return result.exit_code


def _write_baseline(path: Path, result: CheckResult) -> int:
    count = write_baseline(path, result.findings)
    print(f"trainlint: wrote {count} finding{'s' if count != 1 else ''} to {path}", file=sys.stderr)
    return ExitCode.CLEAN


def _write_summary(args: Namespace, report: Report) -> None:
    """The Markdown job summary: to --summary-file, or appended to $GITHUB_STEP_SUMMARY when the
    annotations go to GitHub (each step has its own summary file; other writers may share it)."""
    from trainlint.report import render_summary

    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    target = args.summary_file
    if target is None and step_summary and args.output_format == "github":
        target = Path(step_summary)
    if target is None:
        return
    text = render_summary(report, root=".")
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
        _write(render_show(result.report, color=_color()), None)
        for diagnostic in result.diagnostics:
            print(f"note: {diagnostic.message}", file=sys.stderr)
    return ExitCode.CLEAN


def run_estimate(args: Namespace) -> int:
    from trainlint.report.views import render_estimates

    as_json = args.output_format == "json"
    result = estimate_jobs(args.paths, effective_settings(args), with_suggestions=not as_json)
    if as_json:
        _write(_runs_json(result.report), None)
        return ExitCode.CLEAN
    if not result.runs:
        _write("No training jobs found.", None)
        return ExitCode.CLEAN
    text = render_estimates(result.runs, result.estimates, result.suggestions, color=_color())
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
    blocks = [f"# {r.code} {r.name} ({r.severity.value})\n\n{r.summary}.\n\n{r.docs()}\n" for r in rules]
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


def run_fix(args: Namespace) -> int:
    from trainlint.report.fix_summary import render_fix_summary

    result = fix_jobs(args.paths, effective_settings(args), unsafe=args.unsafe_fixes,
                      preserve_effective_batch=args.preserve_effective_batch, preview=args.diff,
                      changed=args.changed)
    summary = render_fix_summary(result.outcome, unsafe=result.unsafe, preview=result.preview)
    if result.preview:
        sys.stdout.write(result.diff)
        sys.stderr.write(summary)
    else:
        sys.stdout.write(summary)
    if result.error:
        sys.stderr.write(f"trainlint: error: {result.error}\n")
    return result.exit_code

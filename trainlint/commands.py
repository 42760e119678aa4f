"""What each subcommand does with its parsed arguments. Exit codes: 0 clean, 1 findings, 2 error."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List

from trainlint.core import Report, Severity
from trainlint.linter import LintResult, Selection, Target, UsageError, lint, make_target

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _paths(args) -> List[Path]:
    return list(args.paths) or [Path(".")]


def _target(args) -> Target:
    if args.num_gpus is not None and args.num_gpus < 1:
        raise UsageError("--num-gpus must be at least 1")
    return make_target(args.gpu, args.gpu_memory, args.num_gpus)


def _lint(args, preserve: bool = False) -> LintResult:
    selection = Selection(tuple(args.select), tuple(args.ignore))
    return lint(_paths(args), _target(args), selection, tuple(args.exclude), preserve_effective_batch=preserve)


def _report(result: LintResult) -> Report:
    return Report(tuple(result.findings), tuple(result.scan.runs), dict(result.estimates))


def _write(text: str, output_file) -> None:
    if output_file is None:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        return
    from trainlint.fixers.atomic import write_atomically

    write_atomically(Path(output_file), text.encode("utf-8"))


def run_check(args) -> int:
    from trainlint.report import render

    result = _lint(args, preserve=args.preserve_effective_batch)
    report = _report(result)
    color = _color() and args.output_file is None
    _write(render(report, args.output_format, root=".", color=color), args.output_file)
    failing = [f for f in result.findings if f.severity != Severity.INFO]
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_OK


def run_show(args) -> int:
    from trainlint.report.json_output import report_document
    from trainlint.report.views import render_show

    result = _lint(args)
    if args.output_format == "json":
        document = report_document(Report((), tuple(result.scan.runs), dict(result.estimates)))
        _write(json.dumps({"version": document["version"], "runs": document["runs"]}, indent=2), None)
    else:
        _write(render_show(result.scan.runs, color=_color()), None)
        for diagnostic in result.scan.diagnostics:
            print(f"note: {diagnostic.message}", file=sys.stderr)
    return EXIT_OK


def run_estimate(args) -> int:
    from trainlint.memory import suggestions
    from trainlint.report.json_output import report_document
    from trainlint.report.views import render_estimates

    result = _lint(args)
    runs = result.scan.runs
    if args.output_format == "json":
        document = report_document(Report((), tuple(runs), dict(result.estimates)))
        _write(json.dumps({"version": document["version"], "runs": document["runs"]}, indent=2), None)
        return EXIT_OK
    target = _target(args)
    proposals = {run.id: suggestions(run, target.gpu) for run in runs
                 if run.id in result.estimates and not result.estimates[run.id].fits}
    text = render_estimates(runs, result.estimates, proposals, color=_color())
    if target.gpu_assumed:
        text = f"(no --gpu given: assuming {getattr(target.gpu, 'name', target.gpu)})\n\n" + text
    _write(text or "No training jobs found.", None)
    return EXIT_OK


def run_rule(args) -> int:
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


def run_gpus(args) -> int:
    from trainlint.memory import gpu_catalog

    lines = [f"{'name':<16} {'memory (GiB)':>12}  bf16"]
    for name, gpu in sorted(gpu_catalog().items(), key=lambda item: item[0]):
        lines.append(f"{name:<16} {gpu.total_gib:>12.1f}  {'yes' if gpu.bf16 else 'no'}")
    _write("\n".join(lines), None)
    return EXIT_OK


def run_fix(args) -> int:
    from trainlint.fixers.engine import run_fix as fix

    return fix(args)

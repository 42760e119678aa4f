"""Terminal views of resolved jobs (`trainlint show`) and their memory (`trainlint estimate`)."""
from __future__ import annotations

import io
from typing import Iterable, Mapping, Optional, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from trainlint.core import MemoryEstimate, Report, Setting, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.memory import gpu_by_key
from trainlint.memory.plans import Plan, PortPlan
from trainlint.report.common import format_value, relative_path, run_batch
from trainlint.resolution.frameworks.memory_features import OUT_OF_SCOPE

# The knobs a user reads first; the rest follow alphabetically.
LEADING_KNOBS = (K.PER_DEVICE_TRAIN_BATCH_SIZE, K.GRADIENT_ACCUMULATION_STEPS, K.WORLD_SIZE,
                 K.PER_DEVICE_EVAL_BATCH_SIZE, K.EVAL_STRATEGY, K.EVAL_STEPS, K.MAX_SEQ_LENGTH, K.BF16, K.FP16,
                 K.GRADIENT_CHECKPOINTING, K.ZERO_STAGE, K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM, K.MODEL_NAME_OR_PATH,
                 K.VISION_TOWER, K.DEEPSPEED)


# Output that is not a terminal is neither wrapped nor cut: as wide as its longest line needs.
UNWRAPPED_WIDTH = 10_000


def _console(color: bool, buffer: io.StringIO, width: Optional[int] = None) -> Console:
    """`width`: the terminal's; None (piped, a file) wraps nothing."""
    # No markup: a plan's "[unsafe: ...]" tag, a path or a note holding brackets is text, never a style.
    return Console(file=buffer, force_terminal=color, no_color=not color, width=width or UNWRAPPED_WIDTH,
                   highlight=False, markup=False, emoji=False, color_system="standard" if color else None)


def origin_text(setting: Setting, root: str) -> str:
    """`scripts/finetune.sh:14:35 (launcher flag) ← line 3` or why the value is what it is."""
    ups = [s for s in setting.chain()[1:] if s.origin is not None]
    if setting.origin is not None:
        text = f"{relative_path(setting.origin.path, root)}:{setting.origin.line}:{setting.origin.column}"
        text += f" ({setting.kind.value})"
        home = setting.origin.path
    else:
        # Computed from other values (a world size from --nproc_per_node × --nnodes): where they are.
        text = f"{setting.kind.value}: {setting.note}" if setting.note else setting.kind.value
        home = ups[0].origin.path if ups else ""
        if ups and home:
            text += f" in {relative_path(home, root)}"
    for upstream in ups:
        where = f"line {upstream.origin.line}" if upstream.origin.path == home else (
            f"{relative_path(upstream.origin.path, root)}:{upstream.origin.line}")
        text += f" ← `{upstream.text or upstream.value}` at {where}"
    return text


def ordered_knobs(settings: Mapping[str, Setting]) -> Sequence[str]:
    leading = [k for k in LEADING_KNOBS if k in settings]
    return leading + sorted(k for k in settings if k not in LEADING_KNOBS)


def render_show(report: Report, *, root: str = ".", color: bool = False, width: Optional[int] = None) -> str:
    """Each run of `report` as a table of its settings, values and origins, then its effective batch;
    `width` is the terminal's (None: as wide as the table needs)."""
    buffer = io.StringIO()
    console = _console(color, buffer, width)
    runs = list(report.runs)
    if not runs:
        console.print("No training jobs found.")
    for run in runs:
        title = f"{run.id}  [{run.launcher}]"
        if run.entry:
            title += f" → {run.entry}"
        table = Table(title=title, title_justify="left", show_lines=False, expand=False)
        table.add_column("setting")
        table.add_column("value")
        table.add_column("from")
        for name in ordered_knobs(run.settings):
            setting = run.settings[name]
            value = setting.value
            shown = Text(f"unknown: {value.reason}", style="yellow") if isinstance(value, Unknown) else Text(
                format_value(value))
            table.add_row(name, shown, origin_text(setting, root))
        batch = run_batch(report, run.id)
        table.add_row(Text("effective batch", style="bold"),
                      Text(str(batch) if not isinstance(batch, Unknown) else f"unknown: {batch.reason}"),
                      "per-device × accumulation × world size")
        console.print(table)
        facts = run.facts
        eval_text = {True: "given", False: "none (eval_dataset=None)", None: "cannot be told statically"}[
            facts.eval_dataset]
        console.print(f"  eval dataset: {eval_text}; configs: {', '.join(run.configs) or 'none'}")
        console.print()
    return buffer.getvalue()


def _plan_line(plan: Plan) -> str:
    safety = "" if plan.safe else " [unsafe: changes what trains]"
    return (f"{plan.estimate.peak_gib:.1f} GiB, relative speed {plan.relative_speed:.2f}{safety}: "
            f"{plan.summary()}")


def _print_port(console: Console, port: PortPlan) -> None:
    """The port plan: the chosen plan, or the best one and the hardware that would run the job."""
    target = f"{port.num_gpus} × {gpu_name(port.gpu)}" if port.num_gpus else gpu_name(port.gpu)
    if port.chosen is not None:
        console.print(Text(f"  plan for {target}: {_plan_line(port.chosen)}", style="green"))
        for plan in port.runners_up:
            console.print(f"    or: {_plan_line(plan)}")
    elif port.best_effort is not None:
        console.print(Text(f"  nothing fits {target}; the best plan peaks at {_plan_line(port.best_effort)}",
                           style="bold red"))
    if port.global_batch is not None:
        console.print(f"  global batch kept: {port.global_batch}")
    for note in port.notes:
        console.print(f"  note: {note}")
    count = f"{port.num_gpus} × " if port.num_gpus else ""
    none = f"none in the catalog (at {port.num_gpus} GPUs)" if port.num_gpus else "none in the catalog"
    if port.chosen is None or port.smallest_gpu_as_written:
        console.print(f"  smallest GPU for the job as written: {count}{port.smallest_gpu_as_written or none}")
    if port.chosen is None:
        console.print(f"  smallest GPU with the best plan: {count}{port.smallest_gpu_with_plan or none}")
    console.print("  (relative speed: estimated throughput against the recipe as written, were memory no limit; "
                  "docs/planner.md)")


def gpu_name(key: str) -> str:
    """`NVIDIA A100 40GB` for the catalog key `a100-40gb` (an estimate names its GPU by key)."""
    found = gpu_by_key(key)
    return found.name if found is not None else key


def _bar(value: float, scale: float, width: int = 40) -> str:
    cells = int(round(width * value / scale)) if scale > 0 else 0
    return "█" * max(0, min(width, cells))


def render_estimates(runs: Iterable[TrainingRun], estimates: Mapping[str, MemoryEstimate],
                     suggestions: Optional[Mapping[str, Sequence]] = None, *, color: bool = False,
                     plans: Optional[Mapping[str, PortPlan]] = None) -> str:
    buffer = io.StringIO()
    console = _console(color, buffer)
    for run in runs:
        estimate = estimates.get(run.id)
        if estimate is None:
            continue
        if not getattr(estimate, "model", True):
            # A model known only by the size in its name still has an estimate (its assumptions say so).
            scope = run.value(OUT_OF_SCOPE)
            if isinstance(scope, str) and scope:
                # Naming the model would not give one: say why first.
                line = f"{run.id}: no estimate: {scope}: out of the memory model's scope"
            else:
                line = (f"{run.id}: no estimate: the model is not recognised "
                        f"({run.value(K.MODEL_NAME_OR_PATH) or 'not set'}); a local path with a "
                        f"config.json, or a known model name, gives one")
            console.print(Text(line, style="yellow"))
            console.print()
            continue
        verdict = Text("fits", style="green") if estimate.fits else Text("does not fit", style="bold red")
        header = Text(f"{run.id}: {estimate.peak_gib:.1f} GiB per GPU "
                      f"({estimate.low_gib:.1f}–{estimate.high_gib:.1f}) on {gpu_name(estimate.gpu)} "
                      f"({estimate.capacity_gib:.1f} GiB usable): ")
        header.append(verdict)
        console.print(header)
        scale = max(estimate.capacity_gib, estimate.high_gib)
        for term, gib in sorted(estimate.breakdown.items(), key=lambda item: -item[1]):
            console.print(f"  {term:<12} {gib:6.1f} GiB  {_bar(gib, scale)}")
        console.print(f"  {'capacity':<12} {estimate.capacity_gib:6.1f} GiB  {_bar(estimate.capacity_gib, scale)}│")
        for line in estimate.assumptions:
            console.print(f"  assumes: {line}")
        for line in estimate.unknowns:
            console.print(Text(f"  unknown: {line}", style="yellow"))
        port = (plans or {}).get(run.id)
        if port is not None and port.needed:
            _print_port(console, port)
            console.print()
            continue
        for suggestion in (suggestions or {}).get(run.id, ()):
            new = getattr(suggestion, "estimate", None)
            description = getattr(suggestion, "description", str(suggestion))
            tail = f" → {new.peak_gib:.1f} GiB" + (" (fits)" if new.fits else "") if new is not None else ""
            console.print(f"  to fit: {description}{tail}")
        console.print()
    return buffer.getvalue()

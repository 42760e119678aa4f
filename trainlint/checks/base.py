"""The contract every rule follows, and what a rule may ask while it checks a run."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import ClassVar, Iterable, Mapping, Optional, Sequence, Tuple

from trainlint.core import (
    Diagnostic,
    DiagnosticKind,
    Finding,
    Fix,
    Origin,
    Related,
    Setting,
    Severity,
    TrainingRun,
)
from trainlint.memory.gpus import Gpu


@dataclass(frozen=True)
class Example:
    """A small job a rule documents: files by relative path, the CLI target options, and whether
    the rule fires on it. A firing example pins where: `at` is the finding's "path:line:column" (the
    path alone for a finding without a line), and `fixed` holds the files that `trainlint fix` with
    the same options (only this rule selected) changes, as they read afterwards. Tests are generated
    from these."""

    title: str
    files: Mapping[str, str]
    fires: bool
    options: Tuple[str, ...] = ()
    at: Optional[str] = None
    fixed: Optional[Mapping[str, str]] = None


@dataclass(frozen=True)
class CheckContext:
    """The target the user asked about; `gpu_assumed` says the user did not name the GPU. (A world
    size from `--num-gpus` is already in each run, as an assumed setting.)"""

    gpu: Gpu
    gpu_assumed: bool = True
    preserve_effective_batch: bool = False
    # The machine's GPU count (`--num-gpus`), whatever the launcher states.
    num_gpus: Optional[int] = None


class Rule:
    """Subclass in one module per rule under trainlint/checks/. The class docstring is the rule's
    documentation, in four parts: What it does / Why is this bad / Example / Fix safety."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    examples: ClassVar[Sequence[Example]] = ()
    # Reader diagnostics this rule reports (e.g. DiagnosticKind.BROKEN_LINE_CONTINUATION), attached to a run or not.
    diagnostic_kinds: ClassVar[Tuple[DiagnosticKind, ...]] = ()
    # For a rule that says what trainlint could not know: the setting that answers it. Terminal reports
    # then fold its findings into one line of the unknowns instead of one finding per job.
    answered_by: ClassVar[str] = ""

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        return ()

    def from_diagnostic(self, diagnostic: Diagnostic, run: Optional[TrainingRun]) -> Finding:
        """The finding for a reader diagnostic of one of `diagnostic_kinds`."""
        return Finding(
            code=self.code,
            name=self.name,
            severity=self.diagnostic_severity(diagnostic),
            message=diagnostic.message,
            path=diagnostic.origin.path if diagnostic.origin else diagnostic.path,
            origin=diagnostic.origin,
            run_id=run.id if run is not None else None,
            fix=self.diagnostic_fix(diagnostic),
        )

    def diagnostic_fix(self, diagnostic: Diagnostic) -> Optional[Fix]:
        return None

    def diagnostic_severity(self, diagnostic: Diagnostic) -> Severity:
        """The severity of a finding made from `diagnostic` (the rule's own unless the file type decides)."""
        return self.severity

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    def finding(
        self,
        run: TrainingRun,
        message: str,
        at: Optional[Setting] = None,
        origin: Optional[Origin] = None,
        related: Iterable[Related] = (),
        fix: Optional[Fix] = None,
        severity: Optional[Severity] = None,
    ) -> Finding:
        """A finding placed at `origin`, else at the setting's origin, else at the launch command;
        the setting's provenance chain becomes related locations."""
        where = origin or (at.origin if at is not None else None) or run.origin
        chain_related = tuple(provenance_related(at)) if at is not None else ()
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            path=where.path if where else run.path,
            origin=where,
            run_id=run.id,
            related=chain_related + tuple(related),
            fix=fix,
        )


def provenance_related(setting: Setting) -> Iterable[Related]:
    """Related locations for every upstream place the value passed through."""
    for upstream in setting.chain()[1:]:
        if upstream.origin is not None:
            shown = upstream.text or str(upstream.value)
            yield Related(upstream.origin, f"value `{shown}` comes from here ({upstream.kind.value})")


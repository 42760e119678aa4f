"""Baselines: the findings a project accepts for now, by fingerprint, so CI reports only new ones.

Fingerprints (report.common.fingerprint) hold the code, the file, the job and the text of the
finding's line, not its line number: a baseline survives lines added above. Paths inside it are
relative to the baseline's own folder, so it works from any working directory. Counts are kept per
fingerprint: two identical findings on identical lines need two entries."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Tuple

from trainlint import __version__
from trainlint.atomic_write import write_text_atomically
from trainlint.core import Finding
from trainlint.report.common import SourceLines, by_location, fingerprint, relative_path

BASELINE_FORMAT = 1


class BaselineError(Exception):
    """The baseline file cannot be used (exit code 2)."""


@dataclass(frozen=True)
class Baseline:
    root: str
    counts: Mapping[str, int]

    def split(self, findings: Iterable[Finding]) -> Tuple[List[Finding], List[Finding]]:
        """(new findings, findings the baseline accepts)."""
        remaining: Dict[str, int] = dict(self.counts)
        sources = SourceLines(self.root)
        new: List[Finding] = []
        known: List[Finding] = []
        for finding in findings:
            key = fingerprint(finding, self.root, sources)
            if remaining.get(key, 0) > 0:
                remaining[key] -= 1
                known.append(finding)
            else:
                new.append(finding)
        return new, known


def baseline_document(findings: Iterable[Finding], root: str) -> Dict:
    sources = SourceLines(root)
    entries = []
    for finding in by_location(findings, root):
        origin = finding.origin
        entries.append({
            "fingerprint": fingerprint(finding, root, sources),
            "code": finding.code,
            "path": relative_path(finding.path, root),
            "line": origin.line if origin else None,
            "message": finding.message,
        })
    return {"trainlint_baseline": BASELINE_FORMAT, "version": __version__, "findings": entries}


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    """Write every finding to `path` (atomically); returns how many were written."""
    root = str(path.resolve().parent)
    document = baseline_document(findings, root)
    write_text_atomically(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return len(document["findings"])


def load_baseline(path: Path) -> Baseline:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist (create it with --write-baseline {path})") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BaselineError(f"cannot read baseline {path}: {error}") from None
    entries = document.get("findings") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
                                                for e in entries):
        raise BaselineError(f"{path} is not a trainlint baseline (expected a `findings` list with fingerprints)")
    counts = Counter(entry["fingerprint"] for entry in entries)
    return Baseline(str(path.resolve().parent), dict(counts))

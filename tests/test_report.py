"""Reporters on a hand-built Report: two jobs, three findings (a safe fix with edits, a finding with
provenance, a file-level finding with an unsafe text repair), positions taken from real files."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict

import pytest

from trainlint import __version__
from trainlint.checks.base import Rule
from trainlint.core import (
    Applicability,
    Edit,
    Finding,
    Fix,
    KnobChange,
    MemoryEstimate,
    Origin,
    Related,
    Report,
    RunFacts,
    Setting,
    Severity,
    SourceKind,
    TrainingRun,
    Unknown,
)
from trainlint.readers.source import SourceText, read_source
from trainlint.report import FORMATS, fingerprint, render, render_summary
from trainlint.report.github import annotation
from trainlint.resolution.batch import effective_batch

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
ANSI = re.compile(r"\x1b\[")

FINETUNE = """#!/bin/bash
# full fine-tune of a 7B chat model, GPU count from the scheduler
BATCH=8
ACCUM=2

deepspeed --num_gpus $NUM_GPUS train.py \\
    --deepspeed ds_zero2.json \\
    --model_name_or_path my-org/chat-7b \\
    --per_device_train_batch_size $BATCH \\
    --gradient_accumulation_steps $ACCUM \\
    --bf16 True
"""

LORA = """#!/bin/bash
torchrun --nproc_per_node 4 train.py \\
  --lora_enable True \\
  --per_device_train_batch_size 4 \\
  --per_device_eval_batch_size 16 \\
  --gradient_accumulation_steps 4 \\
  --evaluation_strategy steps
"""

BROKEN = """#!/bin/bash
python train.py --output_dir out \\ 
    --per_device_train_batch_size 2
"""


def _write(root: Path, relative: str, text: str) -> SourceText:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    source = read_source(path)
    assert isinstance(source, SourceText)
    return source


def _at(source: SourceText, needle: str, line_hint: str = "") -> Origin:
    """The origin of `needle`, searched from the start of the first line containing `line_hint`."""
    data = source.data
    start = data.find(line_hint.encode()) if line_hint else 0
    offset = data.find(needle.encode(), start)
    assert offset >= 0, needle
    return source.origin(offset, offset + len(needle.encode()))


def _setting(value, kind: SourceKind, origin=None, via=()) -> Setting:
    return Setting(value=value, kind=kind, origin=origin, text=str(value), via=via)


class Sample:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.finetune = _write(root, "scripts/finetune.sh", FINETUNE)
        self.lora = _write(root, "scripts/lora.sh", LORA)
        self.broken = _write(root, "scripts/broken.sh", BROKEN)
        self.finetune_id = f"{self.finetune.path}:6"
        self.lora_id = f"{self.lora.path}:2"
        runs = (self._finetune_run(), self._lora_run())
        self.report = Report(
            findings=(self._too_large(), self._eval_batch(), self._broken_continuation()),
            runs=runs,
            estimates={self.finetune_id: self._estimate()},
            run_batches={run.id: effective_batch(run) for run in runs},
        )

    # positions
    def batch_flag(self) -> Origin:
        return _at(self.finetune, "$BATCH", "--per_device_train_batch_size")

    def batch_literal(self) -> Origin:
        return _at(self.finetune, "8", "BATCH=")

    def accum_literal(self) -> Origin:
        return _at(self.finetune, "2", "ACCUM=")

    def _finetune_run(self) -> TrainingRun:
        batch = _setting(8, SourceKind.LAUNCHER_FLAG, self.batch_flag(),
                         via=(_setting(8, SourceKind.SHELL_VARIABLE, self.batch_literal()),))
        accum = _setting(2, SourceKind.LAUNCHER_FLAG, _at(self.finetune, "$ACCUM", "--gradient_accumulation"),
                         via=(_setting(2, SourceKind.SHELL_VARIABLE, self.accum_literal()),))
        world = _setting(Unknown("$NUM_GPUS comes from the environment"), SourceKind.LAUNCHER_FLAG,
                         _at(self.finetune, "$NUM_GPUS"))
        return TrainingRun(
            id=self.finetune_id, path=self.finetune.path, launcher="deepspeed",
            origin=_at(self.finetune, "deepspeed", "deepspeed --num_gpus"), entry=str(self.root / "train.py"),
            settings={
                "per_device_train_batch_size": batch,
                "gradient_accumulation_steps": accum,
                "world_size": world,
                "bf16": _setting(True, SourceKind.LAUNCHER_FLAG, _at(self.finetune, "True", "--bf16")),
                "gradient_checkpointing": _setting(False, SourceKind.FRAMEWORK_DEFAULT),
            },
        )

    def _lora_run(self) -> TrainingRun:
        return TrainingRun(
            id=self.lora_id, path=self.lora.path, launcher="torchrun", origin=_at(self.lora, "torchrun"),
            entry=str(self.root / "train.py"),
            settings={
                "per_device_train_batch_size": _setting(4, SourceKind.LAUNCHER_FLAG, self.lora_train_batch()),
                "per_device_eval_batch_size": _setting(16, SourceKind.LAUNCHER_FLAG, self.lora_eval_batch()),
                "gradient_accumulation_steps": _setting(4, SourceKind.LAUNCHER_FLAG,
                                                        _at(self.lora, "4", "--gradient_accumulation")),
                "world_size": _setting(4, SourceKind.LAUNCHER_FLAG, _at(self.lora, "4", "--nproc_per_node")),
            },
        )

    def lora_train_batch(self) -> Origin:
        return _at(self.lora, "4", "--per_device_train_batch_size")

    def lora_eval_batch(self) -> Origin:
        return _at(self.lora, "16", "--per_device_eval_batch_size")

    def _estimate(self) -> MemoryEstimate:
        return MemoryEstimate(
            gpu="a100-40gb", capacity_gib=39.4, peak_gib=47.123, low_gib=41.0, high_gib=53.0,
            breakdown={"weights": 13.5, "gradients": 1.7, "optimizer": 6.8, "activations": 19.6, "overhead": 5.5},
            assumptions=("world size assumed 8 (the | count is unknown)",),
        )

    def _too_large(self) -> Finding:
        fix = Fix(
            Applicability.SAFE, "keeps the effective batch at 16 per GPU",
            changes=(KnobChange("per_device_train_batch_size", 8, 4), KnobChange("gradient_accumulation_steps", 2, 4)),
            edits=(Edit(self.batch_literal(), "4"), Edit(self.accum_literal(), "4")),
        )
        return Finding(
            code="TL101", name="per-device-batch-too-large", severity=Severity.ERROR,
            message="per_device_train_batch_size 8 needs about 47.1 GiB on a100-40gb (39.4 GiB usable)",
            path=self.finetune.path, origin=self.batch_flag(), run_id=self.finetune_id,
            related=(Related(self.batch_literal(), "value `8` comes from here (shell variable)"),),
            fix=fix,
        )

    def _eval_batch(self) -> Finding:
        return Finding(
            code="TL103", name="eval-batch-exceeds-train-batch", severity=Severity.WARNING,
            message="evaluation batch 16 is 4x the train batch 4",
            path=self.lora.path, origin=self.lora_eval_batch(), run_id=self.lora_id,
            related=(Related(self.lora_train_batch(), "train batch is set here"),),
            fix=Fix(Applicability.DISPLAY_ONLY, "lower per_device_eval_batch_size to 4",
                    changes=(KnobChange("per_device_eval_batch_size", 16, 4),)),
        )

    def broken_origin(self) -> Origin:
        return _at(self.broken, "\\ ")

    def _broken_continuation(self) -> Finding:
        return Finding(
            code="TL304", name="broken-line-continuation", severity=Severity.ERROR,
            message="`\\` followed by a space ends the command; the next line runs on its own",
            path=self.broken.path, origin=self.broken_origin(), run_id=None,
            fix=Fix(Applicability.UNSAFE, "remove the space after `\\`",
                    edits=(Edit(self.broken_origin(), "\\"),)),
        )


@pytest.fixture
def sample(tmp_path: Path) -> Sample:
    return Sample(tmp_path)


@pytest.fixture
def no_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reporters must cope with an empty registry (rules are written in parallel)."""
    monkeypatch.setattr("trainlint.report.sarif.all_rules", lambda: ())


# --- json --------------------------------------------------------------------------------------

FINDING_KEYS = ["code", "name", "severity", "message", "path", "line", "column", "end_line", "end_column",
                "run", "related", "fix"]


def test_json_follows_the_contract(sample: Sample) -> None:
    document = json.loads(render(sample.report, "json", root=str(sample.root)))
    assert list(document) == ["version", "findings", "runs", "unread"]
    assert document["version"] == __version__
    assert [f["code"] for f in document["findings"]] == ["TL304", "TL101", "TL103"]  # by path, line
    broken, too_large, eval_batch = document["findings"]
    for finding in document["findings"]:
        assert list(finding) == FINDING_KEYS
    assert too_large["path"] == "scripts/finetune.sh"
    assert (too_large["line"], too_large["column"], too_large["end_line"], too_large["end_column"]) == (9, 35, 9, 41)
    assert too_large["run"] == "scripts/finetune.sh:6"
    assert too_large["related"] == [
        {"path": "scripts/finetune.sh", "line": 3, "column": 7, "message": "value `8` comes from here (shell variable)"}
    ]
    assert too_large["fix"] == {
        "applicability": "safe",
        "message": "keeps the effective batch at 16 per GPU",
        "edits": [
            {"path": "scripts/finetune.sh", "line": 3, "column": 7, "end_line": 3, "end_column": 8, "content": "4"},
            {"path": "scripts/finetune.sh", "line": 4, "column": 7, "end_line": 4, "end_column": 8, "content": "4"},
        ],
    }
    assert broken["run"] is None
    assert broken["fix"]["applicability"] == "unsafe"
    assert broken["fix"]["edits"] == [
        {"path": "scripts/broken.sh", "line": 2, "column": 34, "end_line": 2, "end_column": 36, "content": "\\"}
    ]
    assert eval_batch["fix"] == {"applicability": "display-only", "message": "lower per_device_eval_batch_size to 4",
                                 "edits": []}


def test_json_runs_have_null_with_reason_for_unknowns(sample: Sample) -> None:
    finetune, lora = json.loads(render(sample.report, "json", root=str(sample.root)))["runs"]
    assert list(finetune) == ["id", "launcher", "entry", "world_size", "world_size_reason", "settings",
                              "effective_batch", "effective_batch_reason", "memory"]
    assert finetune["id"] == "scripts/finetune.sh:6"
    assert finetune["entry"] == "train.py"
    assert finetune["world_size"] is None
    assert finetune["world_size_reason"] == "$NUM_GPUS comes from the environment"
    assert finetune["effective_batch"] is None
    assert "world_size" in finetune["effective_batch_reason"]
    assert finetune["settings"]["world_size"] == {
        "value": None, "reason": "$NUM_GPUS comes from the environment",
        "path": "scripts/finetune.sh", "line": 6, "column": 22,
    }
    assert finetune["settings"]["per_device_train_batch_size"] == {
        "value": 8, "path": "scripts/finetune.sh", "line": 9, "column": 35}
    assert finetune["settings"]["gradient_checkpointing"] == {
        "value": False, "path": None, "line": None, "column": None}
    assert list(finetune["settings"]) == sorted(finetune["settings"])
    assert finetune["memory"] == {
        "gpu": "a100-40gb", "capacity_gib": 39.4, "peak_gib": 47.12, "low_gib": 41.0, "high_gib": 53.0,
        "breakdown": {"weights": 13.5, "gradients": 1.7, "optimizer": 6.8, "activations": 19.6, "overhead": 5.5},
        "assumptions": ["world size assumed 8 (the | count is unknown)"], "unknowns": [],
    }
    assert list(lora) == ["id", "launcher", "entry", "world_size", "settings", "effective_batch", "memory"]
    assert (lora["world_size"], lora["effective_batch"], lora["memory"]) == (4, 64, None)


def test_json_is_deterministic(sample: Sample) -> None:
    first = render(sample.report, "json", root=str(sample.root))
    reordered = Report(tuple(reversed(sample.report.findings)), sample.report.runs, sample.report.estimates,
                       run_batches=sample.report.run_batches)
    assert render(reordered, "json", root=str(sample.root)) == first
    assert first.startswith('{\n  "version"')


def test_reporters_format_the_effective_batch_the_report_carries(sample: Sample) -> None:
    """The number is the linter's: a reporter shows what it is given and computes nothing."""
    finetune, lora = sample.report.runs
    given = Report((), sample.report.runs, run_batches={lora.id: 96})
    runs = json.loads(render(given, "json", root=str(sample.root)))["runs"]
    assert (runs[1]["effective_batch"], runs[0]["effective_batch"]) == (96, None)
    assert runs[0]["effective_batch_reason"] == "the effective batch was not computed"
    summary = render_summary(given, root=str(sample.root))
    assert "Effective batch: 96." in summary
    assert "Effective batch: unknown (the effective batch was not computed)." in summary


def test_effective_batch_applies_the_data_multiplier(sample: Sample) -> None:
    lora = sample.report.runs[1]
    packed = TrainingRun(**{**lora.__dict__, "facts": RunFacts(batch_multiplier=_setting(3, SourceKind.DERIVED))})
    assert effective_batch(packed) == 4 * 4 * 4 * 3
    unknown = TrainingRun(**{**lora.__dict__, "facts": RunFacts(
        batch_multiplier=_setting(Unknown("computed at runtime"), SourceKind.DERIVED))})
    assert isinstance(effective_batch(unknown), Unknown)
    no_accum = TrainingRun(**{**lora.__dict__, "settings": {
        k: v for k, v in lora.settings.items() if k != "gradient_accumulation_steps"}})
    assert "gradient_accumulation_steps is not set" in effective_batch(no_accum).reason


# --- github ------------------------------------------------------------------------------------

def test_github_annotations_sorted_errors_first(sample: Sample) -> None:
    lines = render(sample.report, "github", root=str(sample.root)).splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::error", "::warning"]
    assert lines[0] == ("::error file=scripts/broken.sh,line=2,col=34,endLine=2,endColumn=36,"
                        "title=trainlint (TL304)::"
                        "`\\` followed by a space ends the command; the next line runs on its own")
    assert lines[1].startswith(
        "::error file=scripts/finetune.sh,line=9,col=35,endLine=9,endColumn=41,title=trainlint (TL101)::")


def test_github_escapes_data_and_properties() -> None:
    origin = Origin("jobs,v2/run:a.sh", 3, 5, 3, 9, 20, 24)
    finding = Finding("TL104", "frequent-evaluation", Severity.INFO, "eval every 5 steps = 100% more\r\npeaks: a, b",
                      origin.path, origin, run_id="jobs,v2/run:a.sh:1")
    assert annotation(finding) == (
        "::notice file=jobs%2Cv2/run%3Aa.sh,line=3,col=5,endLine=3,endColumn=9,title=trainlint (TL104)"
        "::eval every 5 steps = 100%25 more%0D%0Apeaks: a, b"
    )


def test_github_file_level_finding_without_origin() -> None:
    finding = Finding("TL302", "missing-referenced-file", Severity.ERROR, "ds.json does not exist", "run.sh", None)
    assert annotation(finding) == "::error file=run.sh,title=trainlint (TL302)::ds.json does not exist"


# --- sarif -------------------------------------------------------------------------------------

def _validate_sarif(document: Dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.exists():
        pytest.skip("SARIF schema not available")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    # The published file only holds definitions; the log itself is `#/definitions/Root`.
    schema = {**schema, "$ref": "#/definitions/Root"}
    jsonschema.Draft7Validator(schema).validate(document)


def test_sarif_validates_and_points_at_repo_relative_files(sample: Sample, no_rules: None) -> None:
    document = json.loads(render(sample.report, "sarif", root=str(sample.root)))
    _validate_sarif(document)
    run = document["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("trainlint", __version__)
    rule_ids = [rule["id"] for rule in driver["rules"]]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["TL304", "TL101", "TL103"]
    for result in results:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
    broken, too_large, eval_batch = results
    assert [r["level"] for r in results] == ["error", "error", "warning"]
    location = too_large["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "scripts/finetune.sh", "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 9, "startColumn": 35, "endLine": 9, "endColumn": 41}}
    assert too_large["relatedLocations"][0]["id"] == 1
    assert too_large["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 3
    replacements = too_large["fixes"][0]["artifactChanges"][0]["replacements"]
    assert [r["insertedContent"]["text"] for r in replacements] == ["4", "4"]
    assert replacements[1]["deletedRegion"] == {"startLine": 4, "startColumn": 7, "endLine": 4, "endColumn": 8}
    assert "fixes" not in eval_batch  # a suggestion edits nothing
    assert eval_batch["relatedLocations"][0]["message"]["text"] == "train batch is set here"
    assert broken["fixes"][0]["artifactChanges"][0]["artifactLocation"]["uri"] == "scripts/broken.sh"
    fingerprints = {r["partialFingerprints"]["trainlint/v1"] for r in results}
    assert len(fingerprints) == 3


class _FakeRule(Rule):
    """
    ## What it does
    Flags large batches.

    ## Why is this bad
    Out of memory.

    ## Example
    `--per_device_train_batch_size 64`

    ## Fix safety
    Safe when the accumulation is raised too.
    """

    code = "TL101"
    name = "per-device-batch-too-large"
    severity = Severity.ERROR
    summary = "The per-device batch does not fit the GPU"


class _OtherRule(Rule):
    """What it does: flags frequent evaluation."""

    code = "TL104"
    name = "frequent-evaluation"
    severity = Severity.INFO
    summary = "Evaluation runs every few steps"


def test_sarif_describes_every_registered_rule(sample: Sample, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("trainlint.report.sarif.all_rules", lambda: (_FakeRule(), _OtherRule()))
    document = json.loads(render(sample.report, "sarif", root=str(sample.root)))
    _validate_sarif(document)
    rules = {rule["id"]: rule for rule in document["runs"][0]["tool"]["driver"]["rules"]}
    assert sorted(rules) == ["TL101", "TL103", "TL104", "TL304"]  # registered + codes found but unregistered
    tl101 = rules["TL101"]
    assert tl101["shortDescription"]["text"] == "The per-device batch does not fit the GPU"
    assert tl101["fullDescription"] == {"text": "Flags large batches."}
    assert "## Fix safety\nSafe when" in tl101["help"]["markdown"]
    assert tl101["help"]["text"] == "The per-device batch does not fit the GPU. `trainlint rule TL101` prints the " \
                                    "documentation."
    assert tl101["defaultConfiguration"] == {"level": "error"}
    assert rules["TL104"]["defaultConfiguration"] == {"level": "note"}
    assert rules["TL103"]["name"] == "eval-batch-exceeds-train-batch"


def test_sarif_links_to_the_project_only_when_the_package_names_it(
        sample: Sample, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("trainlint.report.sarif.all_rules", lambda: (_FakeRule(),))
    monkeypatch.setattr("trainlint.report.sarif.project_url", lambda: None)
    driver = json.loads(render(sample.report, "sarif", root=str(sample.root)))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert not any("helpUri" in rule for rule in driver["rules"])
    monkeypatch.setattr("trainlint.report.sarif.project_url", lambda: "https://git.example.org/ml/trainlint/")
    document = json.loads(render(sample.report, "sarif", root=str(sample.root)))
    _validate_sarif(document)
    driver = document["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://git.example.org/ml/trainlint/"
    tl101 = next(rule for rule in driver["rules"] if rule["id"] == "TL101")
    assert tl101["helpUri"] == "https://git.example.org/ml/trainlint/blob/main/docs/rules.md#tl101"


def test_sarif_holds_each_rules_documentation_once(sample: Sample) -> None:
    from trainlint.checks import all_rules

    text = render(sample.report, "sarif", root=str(sample.root))
    for rule in all_rules():
        assert text.count(json.dumps(rule.docs(), ensure_ascii=False)[1:-1]) == 1, rule.code
    results = json.loads(text)["runs"][0]["results"]
    assert all(set(result) >= {"ruleId", "ruleIndex"} and "help" not in result for result in results)
    # Each rule's documentation is once in the driver (above); each result carries its location, message and fix,
    # under 2.5 kB, not its rule's documentation again.
    assert all(len(json.dumps(result, ensure_ascii=False).encode("utf-8")) < 2_500 for result in results)


def test_sarif_lists_the_registered_rules(sample: Sample) -> None:
    from trainlint.checks import all_rules

    document = json.loads(render(sample.report, "sarif", root=str(sample.root)))
    _validate_sarif(document)
    listed = [rule["id"] for rule in document["runs"][0]["tool"]["driver"]["rules"]]
    assert {rule.code for rule in all_rules()} <= set(listed)
    assert listed == sorted(listed)


def test_fingerprint_survives_a_line_shift(sample: Sample) -> None:
    finding = sample.report.findings[0]
    before = fingerprint(finding, str(sample.root))
    shifted_source = _write(sample.root, "scripts/finetune.sh", "# a new header line\n\n" + FINETUNE)
    moved = Finding(**{**finding.__dict__, "origin": _at(shifted_source, "$BATCH", "--per_device_train_batch_size"),
                       "run_id": f"{shifted_source.path}:8",
                       "message": "per_device_train_batch_size 8 needs about 48.0 GiB on a100-40gb"})
    assert moved.origin.line == 11
    assert fingerprint(moved, str(sample.root)) == before
    other_code = Finding(**{**moved.__dict__, "code": "TL106"})
    assert fingerprint(other_code, str(sample.root)) != before


# --- full and concise --------------------------------------------------------------------------

def test_full_shows_frame_provenance_fix_and_summary(sample: Sample) -> None:
    output = render(sample.report, "full", root=str(sample.root), color=False)
    assert not ANSI.search(output)
    lines = output.splitlines()
    header = lines.index("error[TL101] per-device-batch-too-large: "
                         "per_device_train_batch_size 8 needs about 47.1 GiB on a100-40gb (39.4 GiB usable)")
    assert lines[header + 1] == "  --> scripts/finetune.sh:9:35"  # gutter as wide as line 10
    frame_line = " 9 |     --per_device_train_batch_size $BATCH \\"
    caret_line = lines[lines.index(frame_line, header) + 1]
    assert caret_line == "   |" + " " * (frame_line.index("$BATCH") - 4) + "^^^^^^"
    assert " 7 |     --deepspeed ds_zero2.json \\" in lines[header:]
    assert "10 |     --gradient_accumulation_steps $ACCUM \\" in lines[header:]
    assert "11 |     --bf16 True" not in lines
    block = "\n".join(lines[header:header + 14])
    assert "= job: scripts/finetune.sh:6" in block
    assert "= where the value came from:\n" in block
    assert "scripts/finetune.sh:3:7 value `8` comes from here (shell variable)" in block
    assert ("= fix (safe): per_device_train_batch_size 8 → 4, gradient_accumulation_steps 2 → 4"
            " — keeps the effective batch at 16 per GPU") in block
    assert "= suggestion: per_device_eval_batch_size 16 → 4 — lower per_device_eval_batch_size to 4" in output
    assert "= fix (unsafe): remove the space after `\\`" in output
    assert lines[-1] == ("Found 3 problems (2 errors, 1 warning) in 2 jobs; 1 fixable with `trainlint fix`, "
                         "1 more with --unsafe-fixes.")


def test_full_renders_the_file_level_finding_with_its_frame(sample: Sample) -> None:
    output = render(sample.report, "full", root=str(sample.root), color=False)
    lines = output.splitlines()
    frame_line = "2 | python train.py --output_dir out \\ "
    assert frame_line in lines
    caret_line = lines[lines.index(frame_line) + 1]
    assert caret_line.rstrip() == "  |" + " " * (frame_line.index("\\ ") - 3) + "^^"
    assert "job:" not in output.split("error[TL304]")[1].split("error[TL101]")[0]


def test_full_with_color_uses_ansi_codes(sample: Sample) -> None:
    output = render(sample.report, "full", root=str(sample.root), color=True)
    assert "\x1b[1;31merror[TL101]\x1b[0m" in output
    # The quoted source line is plain text; only the gutter is colored.
    assert "\x1b[34m 9 | \x1b[0m    --per_device_train_batch_size $BATCH \\\n" in output
    assert ANSI.sub("", output).replace("[0m", "").count("TL101") == 1


def test_full_skips_the_frame_when_the_file_is_gone(sample: Sample) -> None:
    (sample.root / "scripts" / "lora.sh").unlink()
    output = render(sample.report, "full", root=str(sample.root), color=False)
    section = output.split("warning[TL103]")[1]
    assert " --> scripts/lora.sh:5:32" in section
    assert "5 |" not in section
    assert "scripts/lora.sh:4:33 train batch is set here" in section


def test_full_caret_accounts_for_tabs_and_wide_characters(tmp_path: Path) -> None:
    source = _write(tmp_path, "run.sh", "# 批大小\n\tBATCH=32  # 每卡\n")
    origin = _at(source, "32")
    finding = Finding("TL101", "per-device-batch-too-large", Severity.ERROR, "too large", source.path, origin)
    output = render(Report((finding,)), "full", root=str(tmp_path), color=False)
    lines = output.splitlines()
    assert "2 |     BATCH=32  # 每卡" in lines
    caret = lines[lines.index("2 |     BATCH=32  # 每卡") + 1]
    assert caret == "  |           ^^"


def test_concise_lines_sorted_by_location(sample: Sample) -> None:
    output = render(sample.report, "concise", root=str(sample.root))
    assert not ANSI.search(output)
    assert output.splitlines() == [
        "scripts/broken.sh:2:34: TL304 [error] "
        "`\\` followed by a space ends the command; the next line runs on its own",
        "scripts/finetune.sh:9:35: TL101 [error] per_device_train_batch_size 8 needs about 47.1 GiB on a100-40gb "
        "(39.4 GiB usable)",
        "scripts/lora.sh:5:32: TL103 [warning] evaluation batch 16 is 4x the train batch 4",
        "Found 3 problems (2 errors, 1 warning) in 2 jobs; 1 fixable with `trainlint fix`, 1 more with --unsafe-fixes.",
    ]


def test_empty_report_in_every_format(sample: Sample, no_rules: None) -> None:
    empty = Report((), runs=sample.report.runs)
    assert render(empty, "concise", root=str(sample.root)) == "No problems found in 2 jobs.\n"
    assert render(empty, "full", root=str(sample.root)).strip() == "No problems found in 2 jobs."
    assert render(empty, "github", root=str(sample.root)) == ""
    assert json.loads(render(empty, "json", root=str(sample.root)))["findings"] == []
    _validate_sarif(json.loads(render(empty, "sarif", root=str(sample.root))))
    with pytest.raises(ValueError, match="unknown output format"):
        render(empty, "xml")
    assert FORMATS == ("full", "concise", "json", "github", "sarif")


# --- markdown summary --------------------------------------------------------------------------

def test_summary_tables(sample: Sample) -> None:
    pipe = Finding("TL305", "unknown-training-argument", Severity.WARNING, "flag `--a|b` is not accepted\nby train.py",
                   sample.lora.path, _at(sample.lora, "--lora_enable"), run_id=sample.lora_id)
    report = Report(sample.report.findings + (pipe,), sample.report.runs, sample.report.estimates,
                    effective_batches={sample.lora_id: (64, 64)}, run_batches=sample.report.run_batches)
    text = render_summary(report, root=str(sample.root))
    lines = text.splitlines()
    assert "| Severity | Code | Location | Message |" in lines
    # Text from the files is literal Markdown on one line: its backticks and line breaks add nothing.
    assert ("| 🟡 warning | TL305 unknown-training-argument | `scripts/lora.sh:3:3` | "
            "flag \\`--a\\|b\\` is not accepted by train.py |") in lines
    assert lines.index("| 🔴 error | TL101 per-device-batch-too-large | `scripts/finetune.sh:9:35` | "
                       "per_device_train_batch_size 8 needs about 47.1 GiB on a100-40gb (39.4 GiB usable) |") < \
        lines.index("| 🟡 warning | TL103 eval-batch-exceeds-train-batch | `scripts/lora.sh:5:32` | "
                    "evaluation batch 16 is 4x the train batch 4 |")
    assert "<summary>Job scripts/finetune.sh:6 (deepspeed → train.py)</summary>" in lines
    # The summary leads with a table of the jobs, before any fold.
    assert lines.index("| Job | Estimated peak per GPU | Usable | Verdict |") < lines.index("<details>")
    assert "| `scripts/finetune.sh:6` | 47.1 GiB (41.0–53.0) | 39.4 GiB (NVIDIA A100 40GB) | 🔴 1 error |" in lines
    assert ("GPU NVIDIA A100 40GB (`a100-40gb`): 39.4 GiB usable; estimated peak **47.1 GiB** "
            "(interval 41.0–53.0 GiB), **does not fit**.") in lines
    assert "| activations | 19.60 | 42% |" in lines  # 19.6 of the 47.1 GiB the terms add up to
    assert lines.index("| activations | 19.60 | 42% |") < lines.index("| weights | 13.50 | 29% |")
    assert "- world size assumed 8 (the \\| count is unknown)" in lines
    assert "Effective batch: unknown (world_size is unknown: $NUM_GPUS comes from the environment)." in lines
    assert "Effective batch: 64 before, 64 after the fixes." in lines
    assert "No memory estimate for this job." in lines


def test_every_listed_plan_that_changes_what_trains_says_so(tmp_path, cli) -> None:
    # A full fine-tune that only LoRA makes fit: the chosen plan and each runner-up carry the unsafe tag (a
    # bracketed tag once read as console markup vanished from the runner-up lines).
    (tmp_path / "full.yaml").write_text(
        "model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\ndo_train: true\nfinetuning_type: full\n"
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\ncutoff_len: 2048\nbf16: true\n"
        "output_dir: out\n")
    _, out, _ = cli.run(tmp_path, "estimate", "full.yaml", "--gpu", "a100-80gb", "--isolated")
    plans = [line for line in out.splitlines() if line.lstrip().startswith(("plan for", "or:"))]
    assert len(plans) >= 2
    assert all("[unsafe: changes what trains]" in line for line in plans if "LoRA" in line)


def test_full_frame_of_a_very_long_line_is_a_window_around_the_span(tmp_path: Path) -> None:
    # A minified DeepSpeed config: the whole file on one line, the problem far along it.
    padding = ", ".join(f'"key_{index}": {index}' for index in range(400))
    text = '{' + padding + ', "train_micro_batch_size_per_gpu": 64}\n'
    source = _write(tmp_path, "ds.json", text)
    origin = _at(source, "64}")
    finding = Finding("TL101", "per-device-batch-too-large", Severity.ERROR, "too large", source.path, origin)
    lines = render(Report((finding,)), "full", root=str(tmp_path), color=False).splitlines()
    (row,) = [line for line in lines if line.startswith("1 | ")]
    assert len(row) < 200 and row.startswith("1 | …") and "train_micro_batch_size_per_gpu" in row
    caret = lines[lines.index(row) + 1]
    assert row[caret.index("^"):caret.index("^") + 3] == "64}" and caret.count("^") == 3


def test_concise_names_the_job_of_a_finding_in_a_file_several_jobs_read(tmp_path: Path) -> None:
    # Two launchers read one hostfile: their two findings at the same place say which job each is about.
    hostfile = _write(tmp_path, "hostfile", "node_0 slots=8\nnode_1 slots=8\n")
    origin = _at(hostfile, "slots=8")
    findings = tuple(Finding("TL112", "launcher-gpu-count-mismatch", Severity.WARNING, "16 GPUs on 8", hostfile.path,
                             origin, run_id=f"{tmp_path / name}:3") for name in ("stage_1.sh", "stage_2.sh"))
    own = Finding("TL101", "per-device-batch-too-large", Severity.WARNING, "too large", hostfile.path, origin,
                  run_id=f"{hostfile.path}:1")
    recipe = _write(tmp_path, "recipes/sft.yaml", "per_device_eval_batch_size: 8\n")
    in_recipe = Finding("TL103", "eval-batch-exceeds-train-batch", Severity.WARNING, "eval batch 8", recipe.path,
                        _at(recipe, "8"), run_id=recipe.path)  # a recipe's job id is its path alone
    called = Finding("TL101", "per-device-batch-too-large", Severity.WARNING, "called", hostfile.path, origin,
                     run_id=f"{hostfile.path}:1 (run by {tmp_path / 'sweep.sh'}:4)")  # run by another script
    lines = render(Report((*findings, own, in_recipe, called)), "concise", root=str(tmp_path)).splitlines()
    assert "recipes/sft.yaml:1:29: TL103 [warning] eval batch 8" in lines
    assert "hostfile:1:8: TL101 [warning] called" in lines
    assert "hostfile:1:8: TL112 [warning] 16 GPUs on 8 (job: stage_1.sh:3)" in lines
    assert "hostfile:1:8: TL112 [warning] 16 GPUs on 8 (job: stage_2.sh:3)" in lines
    assert "hostfile:1:8: TL101 [warning] too large" in lines  # a job's own file needs no name

"""The JSON output keeps the contract of docs/json-output.md: `check`, `show` and `estimate` output on
real-looking jobs validates against docs/json-output.schema.json, and the schema rejects what the
contract rules out."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import MOE_LLAVA, SAMPLES, write_tree
from trainlint.checks import rule_by_code

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_PATH = Path(__file__).parent.parent / "docs" / "json-output.schema.json"
JOBS = [
    MOE_LLAVA,
    SAMPLES / "ci_repo",
    SAMPLES / "stories" / "minicpm",
    SAMPLES / "stories" / "sharegpt4v",
    SAMPLES / "realworld" / "slurm_chat",
    SAMPLES / "realworld" / "axolotl_recipe",
    SAMPLES / "realworld" / "fsdp_accelerate",
    SAMPLES / "shell",
]
# Documented rule examples whose findings carry fixes with edits, provenance and file-level positions.
RULE_EXAMPLES = ("TL002", "TL101", "TL201", "TL305")


class Validator:
    """The schema as published (either document), and each document kind alone for readable errors."""

    def __init__(self) -> None:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        self.root = jsonschema.Draft202012Validator(schema)
        self.kinds = {kind: jsonschema.Draft202012Validator({"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]})
                      for kind in ("check_document", "runs_document", "estimate_document")}

    def iter_errors(self, document: Dict):
        kind = ("check_document" if "findings" in document
                else "estimate_document" if "target" in document else "runs_document")
        yield from self.kinds[kind].iter_errors(document)
        if not self.root.is_valid(document):
            yield jsonschema.ValidationError("not valid under the published schema")


@pytest.fixture(scope="module")
def validator() -> Validator:
    return Validator()


def _errors(validator: Validator, document: Dict) -> List[str]:
    return [f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(document)]


def _documents(cli, folder: Path, *options: str) -> Dict[str, Dict]:
    documents = {}
    for command in ("check", "show", "estimate"):
        code, out, err = cli.run(folder, command, ".", *options, "--output-format", "json")
        assert code in (0, 1), err
        documents[command] = json.loads(out)
    return documents


@pytest.mark.parametrize("folder", JOBS, ids=lambda p: p.relative_to(p.parents[1]).as_posix())
def test_output_of_real_looking_jobs_follows_the_schema(cli, validator, folder: Path) -> None:
    documents = _documents(cli, folder, "--gpu", "a100-40gb")
    for command, document in documents.items():
        assert _errors(validator, document) == [], command
    assert list(documents["check"]) == ["version", "findings", "runs", "unread"]
    assert list(documents["show"]) == ["version", "runs"]
    assert list(documents["estimate"]) == ["version", "target", "runs"]
    assert documents["show"]["runs"] == documents["check"]["runs"]
    # estimate carries each job's estimate and its port plan next to the run as show writes it.
    for shown, estimated in zip(documents["show"]["runs"], documents["estimate"]["runs"]):
        assert {key: value for key, value in estimated.items() if key != "plan"} == shown
        assert "plan" in estimated


def test_rule_examples_cover_every_part_of_the_contract(tmp_path: Path, cli, validator) -> None:
    findings, runs = [], []
    for code in RULE_EXAMPLES:
        rule = rule_by_code(code)
        for number, example in enumerate(rule.examples):
            folder = write_tree(tmp_path / f"{code}-{number}", example.files)
            _, out, _ = cli.run(folder, "check", ".", *example.options, "--output-format", "json")
            document = json.loads(out)
            assert _errors(validator, document) == []
            findings += document["findings"]
            runs += document["runs"]
    # The documents validated above hold each optional shape at least once.
    assert any(f["fix"] and f["fix"]["edits"] for f in findings)
    assert any(f["related"] for f in findings)
    assert any(f["run"] is None for f in findings)
    assert any(r["memory"] for r in runs)
    assert any(setting.get("reason") for r in runs for setting in r["settings"].values())


def _check_document(cli, tmp_path: Path) -> Dict:
    example = rule_by_code("TL101").examples[0]
    write_tree(tmp_path, example.files)
    code, out, _ = cli.run(tmp_path, "check", ".", *example.options, "--output-format", "json")
    return json.loads(out)


def test_the_schema_rejects_what_the_contract_rules_out(tmp_path: Path, cli, validator) -> None:
    document = _check_document(cli, tmp_path)
    assert _errors(validator, document) == []
    finding, run = document["findings"][0], document["runs"][0]
    broken = []
    for mutate in (
        lambda d: d["findings"][0].update(severity="fatal"),
        lambda d: d["findings"][0].pop("end_column"),
        lambda d: d["findings"][0].update(extra=1),
        lambda d: d["findings"][0]["fix"].update(applicability="maybe"),
        lambda d: d["runs"][0].update(effective_batch=None),  # null needs its reason
        lambda d: d["runs"][0].update(effective_batch_reason="unknown"),  # a reason needs null
        lambda d: d["runs"][0]["memory"].update(peak_gib="huge"),
        lambda d: d["runs"][0]["settings"]["bf16"].update(reason="unknown"),
        lambda d: d.pop("runs"),
    ):
        changed = copy.deepcopy(document)
        mutate(changed)
        broken.append(bool(_errors(validator, changed)))
    assert all(broken), broken
    unknown_world = copy.deepcopy(document)
    unknown_world["runs"][0].update(world_size=None, world_size_reason="$NUM_GPUS comes from the environment")
    unknown_world["runs"][0]["memory"] = None  # a job whose estimate failed
    assert _errors(validator, unknown_world) == []
    assert finding["code"] == "TL101" and run["effective_batch"] == 128

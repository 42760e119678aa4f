"""Inline suppressions on real-looking launchers, entry scripts and recipes, and TL901 for the
directives that suppress nothing."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.checks._examples import job
from trainlint.core import Finding, Origin, Severity
from trainlint.suppressions import apply_suppressions, read_suppressions

# A private checkpoint trainlint cannot size, so that only TL103 fires (how far the eval pass peaks is not
# known): on the eval batch flag, line 4 of finetune.sh (line 5 once a directive line is added above the command,
# which then spans lines 3-10).
EVAL_FLAGS = ("--per_device_train_batch_size 4\n--per_device_eval_batch_size 16\n--eval_strategy steps\n"
              "--eval_steps 5000\n--model_name_or_path acme-lab/chat-sft-base\n--model_max_length 512\n"
              "--bf16 True")


def _launcher(before: str = "", last_line_comment: str = "") -> dict:
    files = job(EVAL_FLAGS, eval_dataset="eval_set")
    script = files["finetune.sh"].replace("#!/bin/bash\n", "#!/bin/bash\n" + before, 1)
    if last_line_comment:
        script = script.replace("--bf16 True\n", f"--bf16 True  {last_line_comment}\n")
    files["finetune.sh"] = script
    return files


def _findings(cli, tmp_path: Path, files: dict, *options: str):
    write_tree(tmp_path, files)
    _, document = cli.check_json(tmp_path, ".", *options)
    return document["findings"]


def test_without_a_directive_the_eval_batch_is_reported(tmp_path, cli):
    assert [f["code"] for f in _findings(cli, tmp_path, _launcher())] == ["TL103"]


def test_a_trailing_directive_covers_the_whole_continued_command(tmp_path, cli):
    files = _launcher(last_line_comment="# trainlint: ignore[TL103] -- the eval split is 200 samples")
    assert _findings(cli, tmp_path, files) == []


def test_a_directive_on_the_line_above_covers_the_command_below(tmp_path, cli):
    files = _launcher(before="# trainlint: ignore[eval-batch-exceeds-train-batch]\n")
    assert _findings(cli, tmp_path, files) == []


def test_a_bare_ignore_covers_every_code(tmp_path, cli):
    assert _findings(cli, tmp_path, _launcher(before="# trainlint: ignore\n")) == []


def test_a_directive_for_another_code_leaves_the_finding_and_is_unused(tmp_path, cli):
    findings = _findings(cli, tmp_path, _launcher(before="# trainlint: ignore[TL104]\n"))
    assert sorted((f["code"], f["line"]) for f in findings) == [("TL103", 5), ("TL901", 2)]
    unused = next(f for f in findings if f["code"] == "TL901")
    assert unused["severity"] == "warning"
    assert "no TL104 finding on lines 3–10" in unused["message"]
    # The fix removes the whole comment line.
    assert unused["fix"]["edits"] == [{"path": "finetune.sh", "line": 2, "column": 1, "end_line": 3,
                                       "end_column": 1, "content": ""}]


def test_a_bare_ignore_over_a_clean_command_is_unused(tmp_path, cli):
    files = job("--per_device_train_batch_size 4\n--model_name_or_path acme-lab/chat-sft-base\n--bf16 True")
    files["finetune.sh"] = files["finetune.sh"].replace("#!/bin/bash\n", "#!/bin/bash\n# trainlint: ignore\n")
    [unused] = _findings(cli, tmp_path, files)
    assert unused["code"] == "TL901" and unused["message"] == "unused suppression: no finding on lines 3–6"


def test_a_blank_line_ends_what_a_directive_covers(tmp_path, cli):
    findings = _findings(cli, tmp_path, _launcher(before="# trainlint: ignore[TL103]\n\n"))
    assert sorted(f["code"] for f in findings) == ["TL103", "TL901"]


def test_unused_codes_are_reported_and_the_fix_keeps_the_used_one(tmp_path, cli):
    files = _launcher(last_line_comment="# trainlint: ignore[TL103, TL101] -- tested on H100")
    [unused] = _findings(cli, tmp_path, files)
    assert unused["code"] == "TL901" and unused["line"] == 9
    assert unused["message"] == "unused suppression: no TL101 finding on lines 2–9"
    [edit] = unused["fix"]["edits"]
    assert edit["content"] == "[TL103]"


def test_ignore_file_covers_the_file_from_anywhere(tmp_path, cli):
    files = _launcher()
    files["finetune.sh"] += "# trainlint: ignore-file[TL103] -- evaluation is tiny in this project\n"
    assert _findings(cli, tmp_path, files) == []


def test_misspelled_and_unknown_directives_are_reported(tmp_path, cli):
    files = _launcher(before="# trainlint: ignore TL103\n")
    files["other.sh"] = "#!/bin/bash\n# trainlint: ignore[TL999]\necho done\n"
    findings = _findings(cli, tmp_path, files)
    by_code = sorted((f["code"], f["path"]) for f in findings)
    # The missing brackets make the directive unreadable: it suppresses nothing.
    assert by_code == [("TL103", "finetune.sh"), ("TL901", "finetune.sh"), ("TL901", "other.sh")]
    messages = " ".join(f["message"] for f in findings if f["code"] == "TL901")
    assert "cannot read this suppression" in messages and "`TL999` is not a trainlint rule code" in messages


def test_the_selection_does_not_make_a_used_directive_unused(tmp_path, cli):
    files = _launcher(last_line_comment="# trainlint: ignore[TL103]")
    assert _findings(cli, tmp_path, files, "--select", "TL9") == []


def test_suppressed_findings_do_not_fail_the_run(tmp_path, cli):
    write_tree(tmp_path, _launcher(last_line_comment="# trainlint: ignore[TL103]"))
    assert cli.run(tmp_path, "check", ".")[0] == 0


def test_text_that_only_looks_like_a_directive_is_not_one(tmp_path):
    script = write_tree(tmp_path, {"run.sh": (
        "#!/bin/bash\n"
        "echo \"# trainlint: ignore[TL101]\"\n"
        "cat <<'EOF'\n# trainlint: ignore[TL102]\nEOF\n"
        "torchrun train.py --bf16 True # trainlint: ignore[TL105]\n")}) / "run.sh"
    [directive] = read_suppressions(str(script)).suppressions
    assert directive.codes == frozenset({"TL105"}) and (directive.first_line, directive.last_line) == (6, 6)


PYTHON = '''\
import transformers

NOTE = "# trainlint: ignore[TL101]"

# trainlint: ignore[TL103] -- evaluation runs on 100 samples
args = transformers.TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=2,
    per_device_eval_batch_size=8,
)
trainer = transformers.Trainer(args=args)  # trainlint: ignore
'''


def _finding(path: Path, line: int, code: str) -> Finding:
    return Finding(code, "some-rule", Severity.WARNING, "message", str(path),
                   Origin(str(path), line, 5, line, 6, 0, 1))


def test_python_directives_cover_whole_statements_and_skip_strings(tmp_path):
    path = write_tree(tmp_path, {"train.py": PYTHON}) / "train.py"
    entry = read_suppressions(str(path))
    assert [(s.codes, s.first_line, s.last_line, s.reason) for s in entry.suppressions] == [
        (frozenset({"TL103"}), 6, 10, "evaluation runs on 100 samples"),
        (None, 11, 11, ""),
    ]
    eval_keyword = _finding(path, 9, "TL103")
    other_code = _finding(path, 9, "TL101")
    applied = apply_suppressions([eval_keyword, other_code, _finding(path, 11, "TL107")])
    assert applied.findings == [other_code]
    assert [f.code for f, _ in applied.suppressed] == ["TL103", "TL107"]
    assert applied.unused == []


RECIPE = """\
model_name_or_path: my-org/chat-7b
# trainlint: ignore[TL101] -- measured on 8xH100
per_device_train_batch_size: 16
eval_steps: 10   # trainlint: ignore[TL104]
url: "http://example.com/#trainlint: ignore"
"""


def test_yaml_directives_and_unused_ones_in_files_without_findings(tmp_path):
    path = write_tree(tmp_path, {"sft.yaml": RECIPE, "ds.json": "{}\n"}) / "sft.yaml"
    entry = read_suppressions(str(path))
    assert [(sorted(s.codes), s.first_line) for s in entry.suppressions] == [(["TL101"], 3), (["TL104"], 4)]
    applied = apply_suppressions([_finding(path, 3, "TL101")], files=[str(path), str(tmp_path / "ds.json")])
    assert applied.findings == []
    [unused] = applied.unused
    assert (unused.code, unused.origin.line, unused.message) == ("TL901", 4, "unused suppression: no TL104 "
                                                                 "finding on line 4")

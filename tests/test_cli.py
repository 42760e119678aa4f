"""The command line as users and CI meet it: exit codes, output formats, bad input."""

from __future__ import annotations

import json

from tests.conftest import MOE_LLAVA, write_tree
from trainlint.checks._examples import job

RISKY = job(
    "--per_device_train_batch_size 4\n--per_device_eval_batch_size 16\n--eval_strategy steps\n"
    "--eval_steps 5000\n--model_name_or_path acme-lab/chat-sft-base\n--bf16 True\n"
    "--model_max_length 512",
    eval_dataset="eval_set",
)


def test_exit_codes_follow_findings(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    assert cli.run(tmp_path, "check", ".")[0] == 1
    assert cli.run(tmp_path, "check", ".", "--exit-zero")[0] == 0
    assert cli.run(tmp_path, "check", ".", "--ignore", "TL103")[0] == 0
    assert cli.run(tmp_path, "check", ".", "--select", "TL2")[0] == 0
    assert cli.run(tmp_path, "check", ".", "--gpu", "no-such-card")[0] == 2


def test_json_output_follows_the_contract(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    code, document = cli.check_json(tmp_path, ".")
    assert code == 1
    assert set(document) == {"version", "findings", "runs", "unread"}
    [finding] = document["findings"]
    assert {
        "code",
        "name",
        "severity",
        "message",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "run",
        "related",
        "fix",
    } <= set(finding)
    assert (finding["code"], finding["path"], finding["line"]) == ("TL103", "finetune.sh", 4)
    assert finding["fix"]["applicability"] == "safe"
    [run] = document["runs"]
    assert run["id"] == finding["run"] == "finetune.sh:2"
    assert run["launcher"] == "deepspeed" and run["entry"] == "train.py" and run["world_size"] == 8
    assert run["settings"]["per_device_train_batch_size"] == {
        "value": 4,
        "path": "finetune.sh",
        "line": 3,
        "column": 35,
    }
    assert run["effective_batch"] == 32
    assert {"gpu", "capacity_gib", "peak_gib", "low_gib", "high_gib", "breakdown"} <= set(run["memory"])


def test_output_file_is_written_and_stdout_stays_empty(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    code, out, _ = cli.run(tmp_path, "check", ".", "--output-format", "json", "--output-file", "report.json")
    assert code == 1 and out == ""
    assert json.loads((tmp_path / "report.json").read_text())["findings"][0]["code"] == "TL103"


def test_bad_input_gets_diagnostics_and_the_scan_goes_on(tmp_path, cli):
    write_tree(
        tmp_path,
        {
            **RISKY,
            "broken.sh": "deepspeed --num_gpus 2 train.py --per_device_train_batch_size 4 \\\n  --bf16 ( True\n",
            "ds.json": '{"zero_optimization": {"stage": 3,, }',
            "weights.sh": "\x00\x00binary",
        },
    )
    (tmp_path / "weights.sh").write_bytes(b"\x00\x01\x02binary")
    code, document = cli.check_json(tmp_path, ".", "finetune.sh", "broken.sh", "weights.sh", "ds.json", "missing.sh")
    codes = {f["code"] for f in document["findings"]}
    assert {"TL103", "TL002", "TL302"} <= codes
    assert code == 1


def test_show_prints_every_value_with_its_origin(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    code, out, _ = cli.run(tmp_path, "show", "finetune.sh")
    assert code == 0
    assert "per_device_train_batch_size" in out and "finetune.sh:3:35" in out
    assert "framework default" in out


def test_show_names_the_place_of_each_note(tmp_path, cli):
    # A trailing `\` before a carriage return on the last line: tree-sitter-bash cannot parse it, bash escapes the CR.
    launcher = b"torchrun --nproc_per_node 2 train.py \\\n    --per_device_train_batch_size 4 \\\r\n"
    (tmp_path / "run.sh").write_bytes(launcher)
    code, _, err = cli.run(tmp_path, "show", "run.sh")
    assert code == 0
    assert "note: run.sh:2:" in err and "cannot parse" in err


def test_estimate_reports_a_breakdown(cli):
    code, out, _ = cli.run(MOE_LLAVA, "estimate", "scripts", "--gpu", "a100-40gb", "--num-gpus", "8")
    assert code == 0 and "does not fit" in out and "activations" in out


def test_rule_docs_and_gpu_list(tmp_path, cli):
    code, out, _ = cli.run(tmp_path, "rule", "TL101")
    assert code == 0 and "## Fix safety" in out
    assert cli.run(tmp_path, "rule", "TL999")[0] == 2
    code, out, _ = cli.run(tmp_path, "gpus")
    assert code == 0 and "v100" in out.lower()


def test_nothing_to_check_is_clean(tmp_path, cli):
    (tmp_path / "README.md").write_text("hello\n")
    assert cli.run(tmp_path, "check")[0] == 0


def test_output_file_in_a_new_folder_is_created(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    code, _, _ = cli.run(tmp_path, "check", ".", "--output-format", "sarif", "--output-file", "out/reports/t.sarif")
    assert code == 1 and (tmp_path / "out" / "reports" / "t.sarif").is_file()


def test_bad_target_options_are_usage_errors_that_say_what_is_wrong(tmp_path, cli):
    for options, said in (
        (("--gpu", "a1000"), "unknown GPU `a1000`"),
        (("--gpu-memory", "inf"), "cannot read GPU"),
        (("--gpu-memory", "abc"), "cannot read GPU"),
        (("--num-gpus", "0"), "at least 1"),
        (("--select", "TL1O1"), "`TL1O1` is not a rule code"),
        (("--ignore", "E501"), "`E501` is not a rule code"),
    ):
        code, out, err = cli.run(tmp_path, "check", ".", *options)
        assert (code, out) == (2, "") and said in err, (options, err)


def test_estimate_of_a_folder_without_jobs_says_so(tmp_path, cli):
    code, out, _ = cli.run(tmp_path, "estimate")
    assert code == 0 and "No training jobs found." in out


def test_gpu_list_names_the_key_to_pass_and_the_name_messages_use(tmp_path, cli):
    code, out, _ = cli.run(tmp_path, "gpus")
    assert code == 0
    [a100] = [line.split() for line in out.splitlines() if line.startswith("a100-40gb ")]
    assert a100[:3] == ["a100-40gb", "39.4", "yes"] and " ".join(a100[3:]) == "NVIDIA A100 40GB"


def test_fix_exits_by_the_configured_failing_severity(tmp_path, cli):
    # Evaluating every 50 steps is a warning whose fix is unsafe: plain `fix` leaves it in place.
    write_tree(tmp_path, job("--eval_strategy steps\n--eval_steps 50", eval_dataset="eval_set"))
    assert cli.run(tmp_path, "fix", ".")[0] == 1
    (tmp_path / "trainlint.toml").write_text('fail-on = "error"\n')
    assert cli.run(tmp_path, "fix", ".")[0] == 0


def test_estimate_shows_a_model_known_only_by_the_size_in_its_name(tmp_path, cli):
    write_tree(
        tmp_path,
        job(
            "--model_name_or_path ./checkpoints/acme-chat-13b\n--bf16 True\n"
            "--per_device_train_batch_size 1\n--model_max_length 2048"
        ),
    )
    code, out, _ = cli.run(tmp_path, "estimate", "--gpu", "a100-80gb")
    assert code == 0 and "not recognised" not in out
    assert "GiB per GPU" in out and "size 13B read from the name" in out


def test_a_failing_rule_is_reported_and_the_scan_goes_on(tmp_path, cli, monkeypatch):
    from trainlint.checks.tl103_eval_batch_exceeds_train_batch import EvalBatchExceedsTrainBatch

    def broken(self, run, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(EvalBatchExceedsTrainBatch, "check", broken)
    launcher = RISKY["finetune.sh"].replace(
        "--model_max_length 512", "--model_max_length 512 \\\n    --no_such_option 1"
    )
    write_tree(tmp_path, {**RISKY, "finetune.sh": launcher})
    code, out, err = cli.run(tmp_path, "check", ".", "--output-format", "concise")
    assert code == 2
    assert "TL103 failed on finetune.sh:2: RuntimeError: boom" in err
    assert "TL305" in out  # the other rules still ran


def test_show_traces_a_derived_world_size_to_the_values_it_multiplies(tmp_path, cli):
    launcher = ("GPUS=4\nNODES=2\ntorchrun --nproc_per_node $GPUS --nnodes $NODES train.py "
                "--per_device_train_batch_size 2\n")
    write_tree(tmp_path, {**RISKY, "finetune.sh": launcher})
    code, out, _ = cli.run(tmp_path, "show", "finetune.sh")
    flat = " ".join(out.split())
    assert "`4` at line 1" in flat and "`2` at line 2" in flat


def test_named_files_no_reader_takes_are_not_read_as_bash(tmp_path, cli):
    # `trainlint check $(git ls-files)`: a TOML configuration, a README, a notebook hold no job and are not bash
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ruff.lint]\nselect = ["E"]\n')
    (tmp_path / "README.md").write_text("# Demo\n\n*Fine-tuning* with `deepspeed` (see [docs](docs/)).\n")
    (tmp_path / "train.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ["!deepspeed train.py"]}]}\n')
    (tmp_path / "run").write_text("torchrun --nproc_per_node 2 train.py --per_device_train_batch_size 4\n")
    (tmp_path / "train.py").write_text("import transformers\n\ntransformers.Trainer(model=None).train()\n")
    code, document = cli.check_json(tmp_path, "pyproject.toml", "README.md", "train.ipynb", "run")
    assert document["findings"] == [] and document["unread"] == []
    assert [run["id"] for run in document["runs"]] == ["run:1"]  # a file without a suffix is still a launcher


def test_paths_may_follow_options(tmp_path, cli):
    # `trainlint check finetune.sh --gpu X train.py`: argparse alone takes no path after an option that follows one
    write_tree(tmp_path, RISKY)
    code, out, err = cli.run(tmp_path, "check", "finetune.sh", "--output-format", "concise", "--gpu", "a100-80gb",
                             "train.py", "--select", "TL103")
    assert code == 1 and "finetune.sh:" in out and "TL103" in out, err


def test_a_file_named_on_its_own_and_through_its_folder_is_one_job(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    code, document = cli.check_json(tmp_path, ".", "finetune.sh", "./finetune.sh")
    assert len(document["runs"]) == 1 and len(document["findings"]) == 1

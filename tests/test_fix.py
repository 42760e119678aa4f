"""`trainlint fix`: edits land where the settings graph says, every other byte stays, the job still
parses, the effective batch is kept, and a second run changes nothing."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import MOE_LLAVA, SAMPLES, write_tree
from trainlint.checks._examples import TRAIN_PY, job
from trainlint.core import Applicability, Edit, Finding, Fix, Severity
from trainlint.fixers import transaction
from trainlint.fixers.edits import apply_edits, collide, origin_of
from trainlint.fixers.engine import FixSession, plan_fixes, rewrite, with_planned_edits
from trainlint.fixers.planner import PlannedFix
from trainlint.linter import Selection, lint, make_target

EVAL_FLAGS = ("--per_device_train_batch_size 4\n--eval_strategy steps\n--eval_steps 5000\n"
              "--model_name_or_path acme-lab/chat-sft-base\n--bf16 True\n--model_max_length 512\n")

ZERO2_PINNED = """{
    "train_micro_batch_size_per_gpu": 16,
    "gradient_accumulation_steps": 1,
    "zero_optimization": {
        "stage": 2
    }
}
"""


def snapshot(root: Path):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def changed_files(before, after):
    return sorted(name for name in after if before.get(name) != after[name])


def fix(cli, folder: Path, *argv: str):
    return cli.run(folder, "fix", *argv)


def second_fix_is_a_no_op(cli, folder: Path, *argv: str) -> None:
    before = snapshot(folder)
    fix(cli, folder, *argv)
    assert snapshot(folder) == before


# ------------------------------------------------------------------ the story
MOE_FLAGS = """--deepspeed zero2.json
--model_name_or_path lmsys/vicuna-7b-v1.5
--per_device_train_batch_size 8
--per_device_eval_batch_size 4
--gradient_accumulation_steps 2
--evaluation_strategy "no"
--bf16 True
--model_max_length 2048
--gradient_checkpointing True
--report_to tensorboard"""

ZERO2_MOE = """{
  "bf16": {"enabled": "auto"},
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 2,
  "train_batch_size": 128,
  "zero_optimization": {"stage": 2, "overlap_comm": true, "reduce_bucket_size": "auto"}
}
"""


def test_moe_llava_like_launcher_goes_from_8_2_to_4_4_and_stays_there(tmp_path, cli):
    write_tree(tmp_path, job(MOE_FLAGS, extra={"zero2.json": ZERO2_MOE}))
    target = ("--gpu", "a100-40gb", "--preserve-effective-batch", "--select", "TL1,TL2")
    _, before_doc = cli.check_json(tmp_path, ".", *target)
    assert [f["code"] for f in before_doc["findings"]] == ["TL101"]
    before = snapshot(tmp_path)

    code, out, _ = fix(cli, tmp_path, ".", *target)

    assert code == 0
    after = snapshot(tmp_path)
    assert changed_files(before, after) == ["finetune.sh", "zero2.json"]
    launcher = after["finetune.sh"].decode()
    assert "--per_device_train_batch_size 4 \\\n" in launcher and "--gradient_accumulation_steps 4 \\\n" in launcher
    assert launcher == before["finetune.sh"].decode().replace("batch_size 8 \\", "batch_size 4 \\").replace(
        "accumulation_steps 2 \\", "accumulation_steps 4 \\")
    # DeepSpeed defers to the trainer; train_batch_size 128 = 4 × 4 × 8 still holds and is left alone.
    assert after["zero2.json"].decode() == ZERO2_MOE.replace(": 8,", ': "auto",').replace(': 2,\n', ': "auto",\n')
    assert "effective batch 128 (unchanged)" in out
    _, after_doc = cli.check_json(tmp_path, ".", *target)
    assert after_doc["findings"] == []
    assert after_doc["runs"][0]["effective_batch"] == 128
    second_fix_is_a_no_op(cli, tmp_path, ".", *target)


def test_moe_llava_story_sample(tmp_path, cli):
    folder = tmp_path / "moe"
    shutil.copytree(MOE_LLAVA, folder)
    before = snapshot(folder)
    argv = ("scripts/finetune_phi2.sh", "--gpu", "a100-40gb", "--num-gpus", "8", "--preserve-effective-batch")
    assert fix(cli, folder, *argv)[0] == 0
    after = snapshot(folder)
    assert changed_files(before, after) == ["scripts/finetune_phi2.sh"]
    old_lines = before["scripts/finetune_phi2.sh"].decode().splitlines()
    new_lines = after["scripts/finetune_phi2.sh"].decode().splitlines()
    assert [(o.strip(), n.strip()) for o, n in zip(old_lines, new_lines) if o != n] == [
        ("--per_device_train_batch_size 8 \\", "--per_device_train_batch_size 4 \\"),
        ("--gradient_accumulation_steps 2 \\", "--gradient_accumulation_steps 4 \\")]
    _, document = cli.check_json(folder, *argv)
    assert not [f for f in document["findings"] if f["code"] == "TL101"]
    assert document["runs"][0]["effective_batch"] == 128
    second_fix_is_a_no_op(cli, folder, *argv)


def test_without_a_world_size_per_device_times_accumulation_is_kept(tmp_path, cli):
    flags = ("--model_name_or_path Qwen/Qwen2-0.5B\n--per_device_train_batch_size 16\n"
             "--gradient_accumulation_steps 2\n--bf16 True\n--model_max_length 2048\n--gradient_checkpointing True")
    files = job(flags, launcher="torchrun --nproc_per_node gpu")
    write_tree(tmp_path, files)
    code, out, _ = fix(cli, tmp_path, ".", "--gpu", "a100-40gb", "--preserve-effective-batch", "--select", "TL101")
    assert (tmp_path / "finetune.sh").read_text() == files["finetune.sh"].replace(
        "batch_size 16", "batch_size 4").replace("accumulation_steps 2", "accumulation_steps 8")
    assert "effective batch unknown" in out and "per-device × accumulation" in out
    assert code == 0


# ------------------------------------------------------------------ where edits land
def _eval_job(flags: str, launcher_lines=None, **extra):
    files = job(EVAL_FLAGS + flags, eval_dataset="eval_set", extra=extra)
    if launcher_lines is not None:
        files["finetune.sh"] = launcher_lines
    return files


def test_a_variable_used_only_by_the_flag_is_edited_at_its_assignment(tmp_path, cli):
    files = _eval_job("--per_device_eval_batch_size $EVAL_BS")
    files["finetune.sh"] = files["finetune.sh"].replace("#!/bin/bash\n", "#!/bin/bash\nEVAL_BS=16  # eval\n")
    write_tree(tmp_path, files)
    fix(cli, tmp_path, ".", "--select", "TL103")
    text = (tmp_path / "finetune.sh").read_text()
    assert text == files["finetune.sh"].replace("EVAL_BS=16  # eval", "EVAL_BS=4  # eval")
    assert cli.codes(tmp_path, ".", "--select", "TL103") == []


def test_a_variable_shared_by_two_flags_is_replaced_at_the_flag(tmp_path, cli):
    files = _eval_job("--per_device_eval_batch_size \"$BS\"\n--dataloader_num_workers $BS")
    files["finetune.sh"] = files["finetune.sh"].replace("#!/bin/bash\n", "#!/bin/bash\nBS=16\n")
    write_tree(tmp_path, files)
    fix(cli, tmp_path, ".", "--select", "TL103")
    text = (tmp_path / "finetune.sh").read_text()
    # The quotes of the word survive; BS=16 still feeds the other flag.
    assert text == files["finetune.sh"].replace('--per_device_eval_batch_size "$BS"',
                                                '--per_device_eval_batch_size "4"')
    second_fix_is_a_no_op(cli, tmp_path, ".", "--select", "TL103")


@pytest.mark.parametrize("written, expected", [
    ("--per_device_eval_batch_size=16", "--per_device_eval_batch_size=4"),
    ("--per_device_eval_batch_size '16'", "--per_device_eval_batch_size '4'"),
    ("--per_device_eval_batch_size=\"16\"", "--per_device_eval_batch_size=\"4\""),
])
def test_flag_forms_keep_their_spelling(tmp_path, cli, written, expected):
    files = _eval_job(written)
    write_tree(tmp_path, files)
    fix(cli, tmp_path, ".", "--select", "TL103")
    assert (tmp_path / "finetune.sh").read_text() == files["finetune.sh"].replace(written, expected)


def test_pinned_deepspeed_keys_become_auto_and_the_json_keeps_its_layout(tmp_path, cli):
    files = job(EVAL_FLAGS + "--deepspeed ds.json\n--gradient_accumulation_steps 4", extra={"ds.json": ZERO2_PINNED})
    write_tree(tmp_path, files)
    code, out, _ = fix(cli, tmp_path, ".", "--select", "TL201")
    assert (tmp_path / "ds.json").read_text() == ZERO2_PINNED.replace('": 16,', '": "auto",').replace(
        '"gradient_accumulation_steps": 1,', '"gradient_accumulation_steps": "auto",')
    assert (tmp_path / "finetune.sh").read_text() == files["finetune.sh"]
    assert code == 0 and "TL201" in out
    second_fix_is_a_no_op(cli, tmp_path, ".", "--select", "TL201")


def test_a_dataclass_default_is_edited_when_no_launcher_flag_sets_the_value(tmp_path, cli):
    train_py = TRAIN_PY.replace(
        "    model_max_length: int = field(default=2048)\n",
        "    model_max_length: int = field(default=2048)\n"
        "    per_device_eval_batch_size: int = field(\n        default=16,  # big cards\n    )\n")
    files = _eval_job("")
    files["train.py"] = train_py.replace("{eval_dataset}", "eval_set")
    write_tree(tmp_path, files)
    fix(cli, tmp_path, ".", "--select", "TL103")
    assert (tmp_path / "train.py").read_text() == files["train.py"].replace("default=16,  # big", "default=4,  # big")
    assert (tmp_path / "finetune.sh").read_text() == files["finetune.sh"]


def test_a_training_arguments_keyword_in_a_script_run_directly(tmp_path, cli):
    script = '''import transformers

args = transformers.TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=2,
    per_device_eval_batch_size=8,  # eval on the big batch
    eval_strategy="steps",
    logging_steps=10,
)
trainer = transformers.Trainer(model=None, args=args, train_dataset=None, eval_dataset="val",
                               compute_metrics=lambda prediction: {})
trainer.train()
'''
    write_tree(tmp_path, {"train.py": script})
    code, out, _ = fix(cli, tmp_path, "train.py", "--select", "TL103,TL107")
    text = (tmp_path / "train.py").read_text()
    # The eval batch is edited in place (comment kept); eval_accumulation_steps, set nowhere, is added as a
    # keyword in the call's own layout.
    assert text == script.replace("per_device_eval_batch_size=8,", "per_device_eval_batch_size=2,").replace(
        "    logging_steps=10,\n", "    logging_steps=10,\n    eval_accumulation_steps=4,\n")
    second_fix_is_a_no_op(cli, tmp_path, "train.py", "--select", "TL103,TL107")


def test_crlf_launcher_gets_a_new_flag_with_its_continuation_style_and_keeps_its_mode(tmp_path, cli):
    launcher = ("#!/bin/bash\r\ndeepspeed --num_gpus 2 train.py \\\r\n"
                "\t--per_device_train_batch_size 4 \\\r\n\t--eval_strategy steps \\\r\n"
                "\t--logging_steps 10 \\\r\n\t--gradient_checkpointing True \\\r\n"
                "\t--per_device_eval_batch_size 32 \\\r\n\t--model_name_or_path Qwen/Qwen2.5-0.5B \\\r\n"
                "\t--model_max_length 512\r\necho done\r\n")
    files = {"finetune.sh": launcher, "train.py": TRAIN_PY.replace("{eval_dataset}", "eval_set")}
    write_tree(tmp_path, {"train.py": files["train.py"]})
    (tmp_path / "finetune.sh").write_bytes(launcher.encode())
    os.chmod(tmp_path / "finetune.sh", 0o755)

    code, out, _ = fix(cli, tmp_path, ".", "--select", "TL104")
    assert (tmp_path / "finetune.sh").read_bytes() == launcher.encode()  # unsafe: not applied by default
    assert "--unsafe-fixes" in out and "TL104" in out

    fix(cli, tmp_path, ".", "--select", "TL104", "--unsafe-fixes")
    assert (tmp_path / "finetune.sh").read_bytes() == launcher.replace(
        "\t--model_max_length 512\r\n", "\t--model_max_length 512 \\\r\n\t--eval_steps 1000\r\n").encode()
    assert stat.S_IMODE((tmp_path / "finetune.sh").stat().st_mode) == 0o755
    assert cli.codes(tmp_path, ".", "--select", "TL104") == []
    second_fix_is_a_no_op(cli, tmp_path, ".", "--select", "TL104", "--unsafe-fixes")


def test_a_broken_continuation_is_repaired_only_with_unsafe_fixes(tmp_path, cli):
    launcher = ("#!/bin/bash\ndeepspeed --num_gpus 2 train.py \\\n    --per_device_train_batch_size 4 \\\n"
                "    --report_to \"tensorboard\" \\ # wandb\n    --gradient_checkpointing True\n")
    write_tree(tmp_path, {"finetune.sh": launcher, "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    assert cli.codes(tmp_path, ".", "--select", "TL304") == ["TL304"]
    fix(cli, tmp_path, ".", "--select", "TL304")
    assert (tmp_path / "finetune.sh").read_text() == launcher
    fix(cli, tmp_path, ".", "--select", "TL304", "--unsafe-fixes")
    assert (tmp_path / "finetune.sh").read_text() == launcher.replace("\\ # wandb", "\\")
    _, document = cli.check_json(tmp_path, ".", "--select", "TL304")
    assert document["findings"] == []
    assert document["runs"][0]["settings"]["gradient_checkpointing"]["value"] is True


def test_diff_prints_the_change_and_writes_nothing(tmp_path, cli):
    files = _eval_job("--per_device_eval_batch_size 16")
    write_tree(tmp_path, files)
    before = snapshot(tmp_path)
    code, out, err = fix(cli, tmp_path, ".", "--select", "TL103", "--diff")
    assert snapshot(tmp_path) == before
    assert code == 1
    assert "--- a/finetune.sh\n+++ b/finetune.sh\n" in out
    assert "-    --per_device_eval_batch_size 16\n+    --per_device_eval_batch_size 4\n" in out
    assert "Would fix 1 finding" in err


ARGPARSE_TRAIN = ("import argparse\nimport transformers\np = argparse.ArgumentParser()\n"
                  "p.add_argument('--bf16', action='store_true')\nargs = p.parse_args()\n"
                  "ta = transformers.TrainingArguments(output_dir='o', bf16=args.bf16, fp16=not args.bf16)\n")


def test_a_store_true_switch_feeding_both_precisions_is_dropped(tmp_path, cli):
    # `--bf16` feeds bf16 and, negated, fp16: dropping the switch gives fp16 on and bf16 off together.
    files = {"train.py": ARGPARSE_TRAIN, "run.sh": "torchrun --nproc_per_node 2 train.py --bf16\n"}
    write_tree(tmp_path, files)
    code, out, _ = fix(cli, tmp_path, ".", "--select", "TL203", "--gpu", "v100-32gb")
    assert snapshot(tmp_path)["run.sh"] == files["run.sh"].encode()  # unsafe: not without --unsafe-fixes
    code, out, _ = fix(cli, tmp_path, ".", "--select", "TL203", "--gpu", "v100-32gb", "--unsafe-fixes")
    assert snapshot(tmp_path)["run.sh"] == b"torchrun --nproc_per_node 2 train.py\n"
    assert code == 0 and "TL203" in out
    assert cli.codes(tmp_path, ".", "--select", "TL203", "--gpu", "v100-32gb") == []


def test_a_switch_on_its_own_continued_line_goes_with_its_line(tmp_path, cli):
    files = {"train.py": ARGPARSE_TRAIN,
             "run.sh": "torchrun --nproc_per_node 2 train.py \\\n    --bf16 \\\n    --micro-batch-size 2\n"}
    write_tree(tmp_path, files)
    fix(cli, tmp_path, ".", "--select", "TL203", "--gpu", "v100-32gb", "--unsafe-fixes")
    assert snapshot(tmp_path)["run.sh"] == b"torchrun --nproc_per_node 2 train.py \\\n    --micro-batch-size 2\n"


# ------------------------------------------------------------------ refusals
def test_a_switch_is_dropped_with_its_blank_and_never_turned_on(tmp_path):
    from trainlint.core import KnobChange
    from trainlint.fixers.planner import Planner, Refused

    script = ARGPARSE_TRAIN.replace(", fp16=not args.bf16", "")
    write_tree(tmp_path, {"train.py": script, "run.sh": "torchrun train.py --bf16\n"})
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = lint([Path("run.sh")], make_target("v100-32gb"))
        [run] = result.scan.runs
        [edit] = Planner(result).change(run, KnobChange("bf16", True, False))
        assert (edit.origin.start_byte, edit.origin.end_byte, edit.content) == (17, 24, "")  # " --bf16"
        with pytest.raises(Refused, match="switch"):
            # Turning a store-true switch on where the knob reads it negated is not a deletion.
            from trainlint.fixers.editors.shell import drop_switch
            drop_switch(b"x --bf16\n", edit.origin, "--bf16", True, True)
    finally:
        os.chdir(cwd)


def test_a_stale_plan_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path, _eval_job("--per_device_eval_batch_size 16"))
    result = lint([Path("finetune.sh")], make_target(None), Selection(("TL103",)))
    launcher = tmp_path / "finetune.sh"
    launcher.write_text(launcher.read_text().replace("batch_size 16", "batch_size 32"))
    [plan] = plan_fixes(result, unsafe=False)
    assert plan.applicability == Applicability.DISPLAY_ONLY and not plan.edits
    assert "no longer reads" in plan.problem


# ------------------------------------------------------------------ atomicity and verification
def test_a_failure_while_writing_several_files_leaves_every_file_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path, job(MOE_FLAGS, extra={"zero2.json": ZERO2_MOE}))
    before = snapshot(tmp_path)
    calls = []
    stage = transaction._stage_file

    def failing_stage(target, name: str) -> None:
        calls.append(name)
        if len(calls) == 2:
            raise OSError("disk full")
        stage(target, name)

    def again():
        return lint([Path(".")], make_target("a100-40gb"), Selection(("TL101",)), preserve_effective_batch=True)

    monkeypatch.setattr(transaction, "_stage_file", failing_stage)
    outcome = FixSession(again, unsafe=False, preserve=True).run()
    # One fix edits the launcher and the DeepSpeed config: the first file was staged, staging the
    # second failed, and nothing was written (no staged file is left either).
    assert len(calls) == 2
    assert outcome.error and "disk full" in outcome.error
    assert snapshot(tmp_path) == before
    assert not outcome.applied
    monkeypatch.setattr(transaction, "_stage_file", stage)
    outcome = FixSession(again, unsafe=False, preserve=True).run()
    assert outcome.files_changed == ["finetune.sh", "zero2.json"] and outcome.error is None
    assert len(outcome.history) == 1


def test_an_edit_that_breaks_the_syntax_is_rejected_before_writing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path, {"ds.json": ZERO2_PINNED, "run.sh": "deepspeed train.py --x 1\n"})
    data = (tmp_path / "ds.json").read_bytes()
    start = data.index(b"16")
    breaking = Edit(origin_of("ds.json", data, start, start + 2), "16,,")
    harmless = Edit(origin_of("run.sh", b"deepspeed train.py --x 1\n", 23, 24), "2")
    finding = Finding("TL201", "x", Severity.ERROR, "m", "ds.json", None, fix=Fix(Applicability.SAFE, "m"))
    bad = PlannedFix(finding, (breaking,), Applicability.SAFE)
    good = PlannedFix(finding, (harmless,), Applicability.SAFE)
    pending = rewrite([bad, good])
    assert [p for p, _ in pending.rejected] == [bad] and "no longer parse" in pending.rejected[0][1]
    assert list(pending.contents) == [Path("run.sh")]
    assert pending.contents[Path("run.sh")] == b"deepspeed train.py --x 2\n"


def test_with_planned_edits_fills_the_fixs_edits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path, _eval_job("--per_device_eval_batch_size 16"))
    result = lint([Path(".")], make_target(None), Selection(("TL103",)))
    [finding] = with_planned_edits(result)
    [edit] = finding.fix.edits
    assert (edit.origin.path, edit.origin.line, edit.content) == ("finetune.sh", 9, "4")
    assert (tmp_path / "finetune.sh").read_bytes()[edit.origin.start_byte:edit.origin.end_byte] == b"16"


# ------------------------------------------------------------------ edit primitives
def test_edits_collide_only_when_their_order_or_bytes_would_be_ambiguous():
    def at(start, end, content="x"):
        return Edit(origin_of("f", b"0123456789", start, end), content)

    assert collide(at(1, 3), at(2, 4)) and collide(at(2, 2), at(2, 2, "y")) and collide(at(2, 2), at(1, 3))
    assert not collide(at(1, 3), at(3, 5)) and not collide(at(1, 3), at(1, 3)) and not collide(at(3, 3), at(1, 3))
    assert apply_edits(b"0123456789", [at(1, 3, "ab"), at(5, 5, "+"), at(9, 10, "")]) == b"0ab34+5678"


def test_docowl_story_a100_launcher_moves_to_fp16_for_v100(tmp_path, cli):
    folder = tmp_path / "docowl"
    shutil.copytree(SAMPLES / "stories" / "docowl", folder)
    fix(cli, folder, "scripts/train_it.sh", "--gpu", "v100-32gb", "--num-gpus", "8", "--unsafe-fixes",
        "--select", "TL203")
    _, document = cli.check_json(folder, "scripts/train_it.sh", "--gpu", "v100-32gb", "--num-gpus", "8")
    [run] = document["runs"]
    assert run["settings"]["bf16"]["value"] is False and run["settings"]["fp16"]["value"] is True
    assert not [f for f in document["findings"] if f["code"] == "TL203"]


def test_a_recipe_key_no_framework_has_is_named_as_a_recipe_key(tmp_path, cli):
    # axolotl trains LoRA with `adapter: lora` and keys of its own: a plan of LoRA adapters is left to a person, and
    # the reason speaks of the recipe, not of a command line.
    (tmp_path / "fft.yml").write_text(
        "base_model: NousResearch/Llama-2-7b-hf\ndatasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"
        "sequence_len: 4096\nsample_packing: true\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\n"
        "num_epochs: 1\noptimizer: adamw_torch\nlearning_rate: 0.00002\nbf16: true\ngradient_checkpointing: true\n"
        "flash_attention: true\n")
    code, out, err = cli.run(tmp_path, "fix", "--diff", "--unsafe-fixes", "--gpu", "a100-40gb", "fft.yml")
    assert "fft.yml:1:13: TL108 no recipe key sets `lora`" in out + err

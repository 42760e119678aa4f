"""A launch whose entry script is not read (absent from the tree, or an installed module) trains with
defaults nobody can see: transformers' TrainingArguments defaults are not assumed for it, so no rule
reports a precision, batch or memory problem that rests on them."""
from __future__ import annotations

from tests.conftest import SAMPLES
from trainlint.core import Unknown
from trainlint.linter import lint, make_target

FOLDER = SAMPLES / "unread_entry"


def _result():
    return lint([FOLDER], make_target("a100-80gb", None, 8), processes=1)


def test_defaults_of_an_unread_entry_script_are_unknown_and_say_why():
    runs = {run.path.rsplit("/", 1)[-1]: run for run in _result().scan.runs}
    sft = runs["sft_7b.sh"]
    for knob in ("bf16", "per_device_train_batch_size", "gradient_checkpointing"):
        value = sft.setting(knob).value
        assert isinstance(value, Unknown) and "base-sft.py` does not exist" in value.reason
    assert sft.setting("model_name_or_path") is None or isinstance(sft.setting("model_name_or_path").value, str)


def test_no_memory_or_precision_verdict_rests_on_defaults_the_job_may_not_have():
    findings = _result().findings
    assert not [f for f in findings if f.code in ("TL101", "TL102", "TL105", "TL106", "TL108", "TL111")]
    # The missing script itself is still reported: python cannot open it.
    assert [f.code for f in findings if f.path.endswith("sft_7b.sh") and f.severity.value == "error"] == ["TL302"]


def test_words_after_a_double_dash_are_a_command_handed_on_not_options_of_the_script():
    """argparse stops reading options at `--`: a submitter's `--gpus 8 -- accelerate launch ... --lr 3e-6`
    hands the rest on. The submitter's own options are no training settings, so it is no training job, and
    none of the handed-on flags is reported as unknown to it."""
    result = lint([SAMPLES / "submitter"], make_target("a100-80gb", None, 8), processes=1)
    assert result.scan.runs == [] and result.findings == []


def test_flags_a_script_reads_from_parse_known_args_leftovers_are_not_called_dropped():
    """`args, unknown = parser.parse_known_args()`, then code that applies `unknown` to a config: the flags
    may take effect, so none is reported, and the batch they set is unknown rather than the default."""
    target = make_target("a100-80gb", None, 8)
    applies = lint([SAMPLES / "known_args_rest" / "applies"], target, processes=1)
    assert not [f for f in applies.findings if f.code == "TL305"]
    [run] = applies.scan.runs
    assert isinstance(run.setting("per_device_train_batch_size").value, Unknown)
    drops = lint([SAMPLES / "known_args_rest" / "drops"], target, processes=1)
    assert sorted(f.message.split("`")[1] for f in drops.findings if f.code == "TL305") == [
        "--gradient_accumulation_steps", "--learning_rate", "--model_name_or_path", "--per_device_train_batch_size"]


def test_leftovers_that_are_only_printed_are_still_dropped(tmp_path):
    """`args, left_argv = parser.parse_known_args()` then `ic(left_argv)`: shown, not handled; the V100
    launcher's `--fp16` still has no effect, and says so."""
    import shutil

    folder = tmp_path / "job"
    shutil.copytree(SAMPLES / "known_args_rest" / "applies", folder)
    script = folder / "submit_finetune.py"
    script.write_text(script.read_text().replace(
        "    index = 0\n    while index < len(unknown):\n        key = unknown[index].lstrip(\"-\")\n"
        "        config[key] = unknown[index + 1]\n        index += 2\n",
        "    print(f\"left over: {unknown}\")\n    logger.info(unknown)\n"))
    result = lint([folder], make_target("a100-80gb", None, 8), processes=1)
    assert len([f for f in result.findings if f.code == "TL305"]) == 4


def test_a_trainer_class_of_the_repository_brings_no_transformers_defaults():
    """`SFTTrainer` imported from the package's own modules may be anything (OpenRLHF's is an ABC with its own
    loop): the job takes no TrainingArguments defaults, and under the `deepspeed` launcher a script that is no
    HF Trainer script sets up DeepSpeed itself, so its ZeRO stage is unknown rather than "none"."""
    [run] = lint([SAMPLES / "own_trainer"], make_target("a100-80gb", None, 8), processes=1).scan.runs
    assert run.setting("per_device_train_batch_size") is None
    assert run.setting("bf16") is None
    stage = run.setting("zero_stage").value
    assert isinstance(stage, Unknown) and "builds its own DeepSpeed setup" in stage.reason


def test_transformers_trainer_still_brings_its_defaults(tmp_path):
    import shutil

    folder = tmp_path / "repo"
    shutil.copytree(SAMPLES / "own_trainer", folder)
    script = folder / "pkg" / "train_sft.py"
    script.write_text(script.read_text().replace("from pkg.trainer import SFTTrainer",
                                                 "from transformers import Trainer as SFTTrainer"))
    [run] = lint([folder], make_target("a100-80gb", None, 8), processes=1).scan.runs
    assert run.setting("per_device_train_batch_size").value == 8  # TrainingArguments' default
    assert run.setting("zero_stage").value == 0  # an HF Trainer with no --deepspeed: no DeepSpeed

"""A launcher's own options override the config file it names: `accelerate launch --config_file ddp.yaml
--num_processes 1` starts one process, whatever `num_processes` the file holds (accelerate fills from the config
only the options the command line leaves out). Written after alignment-handbook's README commands, which run its
8-GPU configs on one GPU this way."""
from __future__ import annotations

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY

_DDP_8 = ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n"
          "mixed_precision: bf16\n")
_FLAGS = ("train.py --model_name_or_path meta-llama/Llama-3.2-1B --bf16 True --per_device_train_batch_size 1 "
          "--gradient_checkpointing True --model_max_length 1024 --output_dir out\n")


def _check(cli, folder, launcher: str):
    write_tree(folder, {"train.py": TRAIN_PY.replace("{eval_dataset}", "None"), "configs/ddp.yaml": _DDP_8,
                        "run.sh": launcher})
    _, document = cli.check_json(folder, "run.sh", "--isolated", "--no-cache", "--gpu", "rtx4090", "--num-gpus", "1")
    return document


def test_the_command_lines_process_count_overrides_the_accelerate_config(cli, tmp_path):
    document = _check(cli, tmp_path, "accelerate launch --config_file configs/ddp.yaml --num_processes=1 " + _FLAGS)
    assert [f["code"] for f in document["findings"] if f["code"] == "TL112"] == []
    assert document["runs"][0]["settings"]["world_size"]["value"] == 1


def test_the_configs_process_count_holds_when_the_command_line_gives_none(cli, tmp_path):
    document = _check(cli, tmp_path, "accelerate launch --config_file configs/ddp.yaml " + _FLAGS)
    assert [f["code"] for f in document["findings"] if f["severity"] == "error"] == ["TL112"]
    assert document["runs"][0]["settings"]["world_size"]["value"] == 8


def test_a_mismatch_is_reported_at_the_command_lines_count_and_fixed_there(cli, tmp_path):
    document = _check(cli, tmp_path, "accelerate launch --config_file configs/ddp.yaml --num_processes 4 " + _FLAGS)
    (mismatch,) = [f for f in document["findings"] if f["code"] == "TL112"]
    assert (mismatch["path"], mismatch["line"], mismatch["column"]) == ("run.sh", 1, 66)  # the `4`, not the config
    _, out, _ = cli.run(tmp_path, "fix", "run.sh", "--isolated", "--unsafe-fixes", "--gpu", "rtx4090", "--num-gpus",
                        "1", "--diff")
    assert "-accelerate launch --config_file configs/ddp.yaml --num_processes 4 " in out
    assert "+accelerate launch --config_file configs/ddp.yaml --num_processes 1 " in out


def test_other_options_of_the_command_line_override_the_config_too(cli, tmp_path):
    launcher = "accelerate launch --config_file configs/ddp.yaml --mixed_precision=fp16 --num_machines 1 " + _FLAGS
    document = _check(cli, tmp_path, launcher)
    settings = document["runs"][0]["settings"]
    assert settings["mixed_precision"]["value"] == "fp16" and settings["mixed_precision"]["path"] == "run.sh"
    assert settings["world_size"]["value"] == 8  # the config's count, which the command line leaves


_ZERO = '{{"zero_optimization": {{"stage": {stage}}}, "train_micro_batch_size_per_gpu": "auto"}}\n'


def test_the_command_lines_deepspeed_config_file_is_read_with_or_without_a_config_file(cli, tmp_path):
    """open-instruct's `accelerate launch --use_deepspeed --deepspeed_config_file stage3.conf`: ZeRO-3, not "no
    DeepSpeed config". Beside a config file that names another DeepSpeed config, which one is read depends on the
    accelerate release (test_a_config_section_and_the_command_line_that_disagree_follow_the_pinned_accelerate)."""
    write_tree(tmp_path, {"ds/stage3.conf": _ZERO.format(stage=3), "ds/stage2.json": _ZERO.format(stage=2),
                          "configs/ds.yaml": "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
                                             "  deepspeed_config_file: ds/stage2.json\n"})
    alone = _check(cli, tmp_path, "accelerate launch --use_deepspeed --num_processes 1 --deepspeed_config_file "
                                  "ds/stage3.conf " + _FLAGS)
    assert alone["runs"][0]["settings"]["zero_stage"]["value"] == 3
    beside = "accelerate launch --config_file configs/ds.yaml --deepspeed_config_file ds/stage3.conf " + _FLAGS
    unpinned = _check(cli, tmp_path, beside)["runs"][0]["settings"]["zero_stage"]
    assert unpinned["value"] is None and "the repository pins no accelerate release" in unpinned["reason"]
    for pin, stage in (("1.6.0", 3), ("0.27.0", 2)):
        write_tree(tmp_path, {"requirements.txt": f"accelerate=={pin}\n"})
        assert _check(cli, tmp_path, beside)["runs"][0]["settings"]["zero_stage"]["value"] == stage, pin
    config_only = _check(cli, tmp_path, "accelerate launch --config_file configs/ds.yaml " + _FLAGS)
    assert config_only["runs"][0]["settings"]["zero_stage"]["value"] == 2


_DS_ZERO2 = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\n"
             "deepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: none\n")


def test_a_config_section_and_the_command_line_that_disagree_follow_the_pinned_accelerate(cli, tmp_path):
    """accelerate 0.16 to 1.4 copy a config file's `deepspeed_config` and `fsdp_config` keys over the command line's
    options (huggingface/accelerate#3203 reports it on 0.27); 1.5 gave the command line precedence back
    (huggingface/accelerate#3409), as releases before 0.16 did. Unpinned, the value is unknown."""
    write_tree(tmp_path, {"configs/ds.yaml": _DS_ZERO2})
    launcher = "accelerate launch --config_file configs/ds.yaml --num_processes 1 --zero_stage 3 " + _FLAGS
    document = _check(cli, tmp_path, launcher)
    stage = document["runs"][0]["settings"]["zero_stage"]
    assert stage["value"] is None
    assert stage["reason"].startswith("`--zero_stage 3` and `zero_stage: 2` in the accelerate config disagree")
    for pin, expected in (("0.15.0", 3), ("0.16.0", 2), ("0.34.2", 2), ("1.5.0", 3), ("1.10.1", 3)):
        write_tree(tmp_path, {"requirements.txt": f"accelerate=={pin}\n"})
        assert _check(cli, tmp_path, launcher)["runs"][0]["settings"]["zero_stage"]["value"] == expected, pin
    # The same value on both sides is no question.
    (tmp_path / "requirements.txt").unlink()
    same = _check(cli, tmp_path, launcher.replace("--zero_stage 3", "--zero_stage 2"))
    assert same["runs"][0]["settings"]["zero_stage"]["value"] == 2


def test_the_command_lines_mixed_precision_is_read_without_a_config_file(cli, tmp_path):
    """`accelerate launch --mixed_precision bf16` (34 launchers of the fetched repositories) hands bf16 to a trainer
    left at its defaults, as a config file's `mixed_precision` does."""
    document = _check(cli, tmp_path, "accelerate launch --multi_gpu --num_processes 1 --mixed_precision bf16 "
                      + _FLAGS.replace("--bf16 True ", ""))
    settings = document["runs"][0]["settings"]
    assert settings["mixed_precision"]["value"] == "bf16" and settings["bf16"]["value"] is True
    assert "TL105" not in [f["code"] for f in document["findings"]]


def test_without_a_config_file_or_mixed_precision_the_machines_default_config_chooses_the_precision(cli, tmp_path):
    """TinyLlama's SFT launcher (`accelerate launch --multi_gpu --num_processes 4 finetune.py ...`, no precision flag
    anywhere): accelerate takes `mixed_precision` from the default config of the machine it runs on, and the trainer
    honours it, so fp32 is not certain and the estimate assumes 16 bits as for any unknown precision."""
    document = _check(cli, tmp_path, "accelerate launch --multi_gpu --num_processes 1 "
                      + _FLAGS.replace("--bf16 True ", "").replace("Llama-3.2-1B", "Llama-3.2-3B"))
    settings = document["runs"][0]["settings"]
    assert settings["mixed_precision"]["value"] is None and "default config" in settings["mixed_precision"]["reason"]
    assert settings["bf16"]["value"] is None
    assert "TL105" not in [f["code"] for f in document["findings"]]
    # The trainer's own flag is written into the environment accelerate reads: then the machine does not choose.
    chosen = _check(cli, tmp_path, "accelerate launch --multi_gpu --num_processes 1 " + _FLAGS)
    assert chosen["runs"][0]["settings"]["bf16"]["value"] is True


def test_an_accelerate_config_out_of_view_leaves_the_precision_unknown_but_not_the_command_lines(cli, tmp_path):
    """`--config_file /home/me/fsdp.yaml` (GritLM's launchers): the file may set the mixed precision as it may shard;
    an option the command line gives next to it still counts."""
    unread = _check(cli, tmp_path, "accelerate launch --config_file /home/me/fsdp.yaml "
                    + _FLAGS.replace("--bf16 True ", "").replace("Llama-3.2-1B", "Llama-3.2-3B"))
    settings = unread["runs"][0]["settings"]
    assert settings["bf16"]["value"] is None and "/home/me/fsdp.yaml" in settings["mixed_precision"]["reason"]
    assert "TL105" not in [f["code"] for f in unread["findings"]]
    given = _check(cli, tmp_path, "accelerate launch --config_file /home/me/fsdp.yaml --mixed_precision bf16 "
                   + _FLAGS.replace("--bf16 True ", ""))
    assert given["runs"][0]["settings"]["bf16"]["value"] is True

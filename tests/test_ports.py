"""Porting real recipes to the hardware at hand: `trainlint fix --gpu G --num-gpus N` applies each job's
port plan (several changes at once, the launcher's GPU count included) and the result runs there."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Tuple

import pytest

from tests.conftest import SAMPLES
from trainlint.api import estimate, fix, load_settings
from trainlint.checks._examples import TRAIN_PY
from trainlint.fixers.planner import first_devices
from trainlint.linter import lint, make_target
from trainlint.memory import find_gpu
from trainlint.memory.cost import relative_speed
from trainlint.memory.plans import ChangeKind, count_devices, plan_port

PORTS = SAMPLES / "ports"
MEMORY_RULES = {"TL101", "TL106", "TL108", "TL112"}


@dataclass(frozen=True)
class Port:
    folder: str
    gpu: str
    num_gpus: int
    options: Tuple[str, ...] = ("--preserve-effective-batch",)
    # What the plan must contain (a change kind each), so that a port that happens to fit untouched fails.
    expected: Tuple[ChangeKind, ...] = ()


CASES = {
    "13B full fine-tune onto 4 x RTX 4090": Port(
        "llava13b_4090", "rtx4090", 4, expected=(ChangeKind.MICRO_BATCH, ChangeKind.OFFLOAD_OPTIMIZER)),
    "LoRA recipe pinned to 8 GPUs onto 4 x A100 40GB": Port(
        "qwenvl_lora_a100_40gb", "a100-40gb", 4, expected=(ChangeKind.GPU_COUNT,)),
    "bf16 recipe onto 4 x V100 32GB": Port(
        "alpaca_bf16_v100", "v100-32gb", 4, ("--preserve-effective-batch", "--unsafe-fixes"),
        expected=(ChangeKind.FP16,)),
    "torchrun --nproc_per_node=8 onto a 4-GPU machine": Port(
        "vicuna13b_nproc8", "a6000", 4, expected=(ChangeKind.GPU_COUNT,)),
    "LLaMA-Factory YAML onto 2 x A100 40GB": Port(
        "lf_qwen_2gpu", "a100-40gb", 2, expected=(ChangeKind.MICRO_BATCH, ChangeKind.OFFLOAD_OPTIMIZER)),
    "deepspeed --include localhost:0-7 onto 4 x A100 40GB": Port(
        "minicpmv_include8", "a100-40gb", 4, expected=(ChangeKind.GPU_COUNT, ChangeKind.OFFLOAD_OPTIMIZER)),
}


def snapshot(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def global_batches(folder: Path, port: Port) -> Dict[str, object]:
    """Each job's global batch, counting the launcher's GPUs when it states them."""
    result = lint([folder], make_target(port.gpu, None, port.num_gpus))
    return {run.path.rsplit("/", 1)[-1]: result.effective_batches[run.id] for run in result.scan.runs}


@pytest.mark.parametrize("port", list(CASES.values()), ids=list(CASES))
def test_a_real_recipe_is_ported_and_stays_ported(tmp_path, cli, port: Port) -> None:
    folder = tmp_path / port.folder
    shutil.copytree(PORTS / port.folder, folder)
    target = ("--gpu", port.gpu, "--num-gpus", str(port.num_gpus))
    planned = estimate([folder], load_settings([folder], gpu=port.gpu, num_gpus=port.num_gpus, isolated=True))
    (plan,) = planned.plans.values()
    assert plan.chosen is not None
    assert set(port.expected) <= {step.kind for step in plan.chosen.steps}
    before_batches = global_batches(folder, port)
    before = snapshot(folder)

    code, out, err = cli.run(folder, "fix", *target, *port.options, "--isolated")
    assert "undone" not in err, err
    assert snapshot(folder) != before, out

    _, document = cli.check_json(folder, *target, "--isolated")
    codes = {finding["code"] for finding in document["findings"]}
    assert "TL001" not in codes  # every rewritten file parses
    assert not codes & MEMORY_RULES, document["findings"]
    # Nor anything the target GPU refuses at start-up (stanford_alpaca's A100 launcher sets bf16 and tf32).
    assert not codes & {"TL203", "TL204", "TL205"}, document["findings"]
    assert all(run["memory"]["peak_gib"] <= run["memory"]["capacity_gib"] for run in document["runs"])
    assert global_batches(folder, port) == before_batches

    after = snapshot(folder)
    cli.run(folder, "fix", *target, *port.options, "--isolated")
    assert snapshot(folder) == after


def test_the_llava_port_rewrites_batch_and_deepspeed_config_together(tmp_path, cli) -> None:
    folder = tmp_path / "llava"
    shutil.copytree(PORTS / "llava13b_4090", folder)
    cli.run(folder, "fix", "--gpu", "rtx4090", "--num-gpus", "4", "--preserve-effective-batch", "--isolated")
    launcher = (folder / "scripts" / "finetune.sh").read_text()
    assert "--per_device_train_batch_size 2 \\" in launcher and "--gradient_accumulation_steps 8 \\" in launcher
    config = json.loads((folder / "scripts" / "zero3.json").read_text())
    assert config["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert config["zero_optimization"]["stage"] == 3


def test_a_gpu_count_in_a_variable_is_rewritten_at_the_variable(tmp_path, cli) -> None:
    folder = tmp_path / "qwen"
    shutil.copytree(PORTS / "qwenvl_lora_a100_40gb", folder)
    cli.run(folder, "fix", "--gpu", "a100-40gb", "--num-gpus", "4", "--preserve-effective-batch", "--isolated")
    launcher = (folder / "finetune" / "finetune_lora_ds.sh").read_text()
    assert "GPUS_PER_NODE=4\n" in launcher and "--nproc_per_node $GPUS_PER_NODE" in launcher
    assert "--gradient_accumulation_steps 16 \\" in launcher


def test_check_reports_a_launcher_that_pins_more_processes_than_gpus(cli) -> None:
    codes = cli.codes(PORTS / "minicpmv_include8", "--gpu", "a100-80gb", "--num-gpus", "4", "--isolated")
    assert "TL112" in codes
    assert "TL112" not in cli.codes(PORTS / "minicpmv_include8", "--gpu", "a100-80gb", "--num-gpus", "8",
                                     "--isolated")
    assert "TL112" not in cli.codes(PORTS / "minicpmv_include8", "--gpu", "a100-80gb", "--isolated")


def test_without_a_stated_count_the_global_batch_option_names_the_batch_to_keep(tmp_path) -> None:
    folder = tmp_path / "llava"
    shutil.copytree(PORTS / "llava13b_4090", folder)
    settings = load_settings([folder], gpu="rtx4090", num_gpus=4, isolated=True)
    kept = estimate([folder], settings)
    (plan,) = kept.plans.values()
    assert plan.global_batch == 64 and any("global batch" in note for note in plan.notes)
    named = estimate([folder], settings, global_batch=128)
    (plan,) = named.plans.values()
    assert plan.global_batch == 128
    overrides = plan.chosen.overrides
    assert overrides.get("per_device_train_batch_size", 16) * overrides["gradient_accumulation_steps"] * 4 == 128


def test_when_nothing_fits_the_best_plan_and_the_hardware_that_would_run_it_are_named(cli) -> None:
    code, out, _ = cli.run(PORTS / "llava13b_4090", "estimate", "--gpu-memory", "4GiB", "--num-gpus", "1",
                           "--isolated")
    assert "nothing fits" in out
    assert "smallest GPU for the job as written" in out and "smallest GPU with the best plan" in out


def test_estimate_lists_the_chosen_plan_with_its_relative_speed_and_runners_up(cli) -> None:
    _, out, _ = cli.run(PORTS / "llava13b_4090", "estimate", "--gpu", "rtx4090", "--num-gpus", "4", "--isolated")
    assert "plan for 4 × NVIDIA GeForce RTX 4090" in out and "relative speed 0." in out
    assert out.count("    or: ") >= 2


def test_estimate_json_carries_the_estimate_and_the_plan(cli) -> None:
    _, out, _ = cli.run(PORTS / "llava13b_4090", "estimate", "--gpu", "rtx4090", "--num-gpus", "4",
                        "--output-format", "json", "--isolated")
    document = json.loads(out)
    assert document["target"] == {"gpu": "rtx4090", "num_gpus": 4}
    (run,) = document["runs"]
    assert run["memory"]["peak_gib"] > run["memory"]["capacity_gib"]
    chosen = run["plan"]["chosen"]
    assert chosen["fits"] and chosen["peak_gib"] <= run["memory"]["capacity_gib"] and 0 < chosen["relative_speed"] < 1
    assert {change["kind"] for change in chosen["changes"]} >= {"micro-batch", "offload-optimizer"}


def test_the_cost_model_orders_the_classic_trade_offs() -> None:
    result = lint([PORTS / "alpaca_bf16_v100"], make_target("a100-80gb", None, 4))
    (run,) = result.scan.runs
    gpu = find_gpu("a100-80gb")
    checkpointing_off = {"gradient_checkpointing": False}
    assert relative_speed(run, gpu, {"gradient_checkpointing": True}, checkpointing_off) == pytest.approx(0.75, 0.01)
    assert relative_speed(run, gpu, {"per_device_train_batch_size": 1, "gradient_accumulation_steps": 16}) < 1
    assert relative_speed(run, gpu, {}) == 1.0


def test_a_bf16_recipe_on_a_gpu_without_bf16_gets_fp16_in_every_plan_and_only_with_unsafe_fixes(tmp_path, cli):
    folder = tmp_path / "alpaca"
    shutil.copytree(PORTS / "alpaca_bf16_v100", folder)
    result = lint([folder], make_target("v100-32gb", None, 4))
    port = plan_port(result.scan.runs[0], find_gpu("v100-32gb"), 4, unsafe=True)
    assert all(ChangeKind.FP16 in {s.kind for s in plan.steps} for plan in (port.chosen, *port.runners_up))
    assert ChangeKind.LORA not in {s.kind for s in port.chosen.steps}  # the smallest departure wins
    cli.run(folder, "fix", "--gpu", "v100-32gb", "--num-gpus", "4", "--preserve-effective-batch", "--isolated")
    # Without --unsafe-fixes only changes that keep the training math may land: the precision stays.
    launcher = (folder / "train.sh").read_text()
    assert "--bf16 True" in launcher and "--fp16" not in launcher


@pytest.mark.parametrize("spec, count, first", [
    ("localhost:0-7", 8, "localhost:0-3"),
    ("0,1,2,3,4,5,6,7", 8, "0,1,2,3"),
    ("localhost:2-5", 4, "localhost:2-3"),
])
def test_device_lists_are_counted_and_cut_in_their_own_form(spec: str, count: int, first: str) -> None:
    assert count_devices(spec) == count
    assert first_devices(spec, 2 if spec.endswith("2-5") else 4) == first


@pytest.mark.parametrize("spec, count, grown", [
    ("localhost:4,5,6,7", 8, "localhost:0,1,2,3,4,5,6,7"),
    ("localhost:4-7", 8, "localhost:0-7"),
    ("1,0", 8, "0,1,2,3,4,5,6,7"),
    ("2,3", 4, None),  # four of the eight: which is not told
])
def test_a_device_list_grows_to_every_gpu_only_when_the_count_is_the_whole_machine(spec, count, grown) -> None:
    assert first_devices(spec, count, machine=8) == grown
    assert first_devices(spec, count) is None  # the machine's size unknown


@pytest.mark.parametrize("spec, machine, cut", [
    ("localhost:4,5,6,7", 2, "localhost:0,1"),  # every GPU of the target: the only two it has
    ("localhost:4-7", 2, "localhost:0-1"),
    ("2,3,4,5", 4, "2,3"),  # the first two the target has
    ("localhost:0,1,2,3", 2, "localhost:0,1"),
    ("4,5,6,7", 3, None),  # two of three: which is not told
])
def test_a_device_list_cut_to_a_smaller_machine_names_devices_it_has(spec, machine, cut) -> None:
    # DeepSpeed's runner raises "No slot '4' specified on host 'localhost'" on a two-GPU machine.
    assert first_devices(spec, 2, machine=machine) == cut


def test_an_accumulation_computed_from_other_settings_is_never_frozen_into_a_number(tmp_path, cli) -> None:
    launcher = (PORTS / "llava13b_4090" / "scripts" / "finetune.sh").read_text()
    launcher = launcher.replace("deepspeed llava", "GPUS=8\nPER_DEVICE=16\nACC=$((128 / PER_DEVICE / GPUS))\n"
                                "deepspeed --num_gpus $GPUS llava")
    launcher = launcher.replace("--per_device_train_batch_size 16", "--per_device_train_batch_size $PER_DEVICE")
    launcher = launcher.replace("--gradient_accumulation_steps 1", "--gradient_accumulation_steps $ACC")
    folder = tmp_path / "job"
    shutil.copytree(PORTS / "llava13b_4090", folder)
    (folder / "scripts" / "finetune.sh").write_text(launcher)
    cli.run(folder, "fix", "--gpu", "rtx4090", "--num-gpus", "4", "--preserve-effective-batch", "--isolated")
    assert "ACC=$((128 / PER_DEVICE / GPUS))" in (folder / "scripts" / "finetune.sh").read_text()


def _computed_accumulation_job(tmp_path: Path, accumulation: str) -> Path:
    folder = tmp_path / "job"
    shutil.copytree(PORTS / "computed_accumulation_2gpu", folder)
    (folder / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    launcher = folder / "finetune.sh"
    launcher.write_text(launcher.read_text().replace("$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))", accumulation))
    return folder


def test_an_accumulation_computed_from_the_gpu_count_follows_the_ported_inputs(tmp_path, cli) -> None:
    # `GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`, written for 2 GPUs, onto 8: the GPU count
    # and the micro-batch are rewritten where they are set, and the derived accumulation comes out right
    # without being frozen into a number.
    folder = _computed_accumulation_job(tmp_path, "$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))")
    target = make_target("a100-80gb", None, 8)
    before = lint([folder], target)
    assert {f.code for f in before.findings} >= {"TL112"}
    assert list(before.effective_batches.values()) == [16]
    code, _, _ = cli.run(folder, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    text = (folder / "finetune.sh").read_text()
    assert "GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))" in text
    assert "GPUS=${GPUS:-8}" in text and "--nproc_per_node=${GPUS}" in text
    after = lint([folder], target)
    run = after.scan.runs[0]
    assert run.value("world_size") == 8
    assert list(after.effective_batches.values()) == [16]
    assert "TL112" not in {f.code for f in after.findings}
    assert code == 0


def test_an_accumulation_that_would_not_follow_its_inputs_is_left_for_a_human(tmp_path, cli) -> None:
    # The divisor is a constant, not the GPU count: no edit of the inputs gives the accumulation the port
    # needs, so the fix is refused and the launcher is left as it was.
    folder = _computed_accumulation_job(tmp_path, "$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / 2))")
    original = (folder / "finetune.sh").read_bytes()
    _, out, err = cli.run(folder, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    assert (folder / "finetune.sh").read_bytes() == original
    assert "is computed from other settings; change its inputs by hand" in out + err


def test_a_gpu_count_change_no_accumulation_can_compensate_is_an_unsafe_fix(tmp_path, cli) -> None:
    # The entry script lives outside the tree, so its accumulation is unknown: rewriting 16 processes to the
    # machine's 8 halves (or worse) the global batch, which only --unsafe-fixes may do.
    launcher = tmp_path / "tune.sh"
    launcher.write_text(
        "#!/bin/bash\nNGPUS=16\n"
        "python -m torch.distributed.launch --nproc_per_node=$NGPUS $HF_PATH/examples/run_glue.py \\\n"
        "    --model_name_or_path bert-base-cased --per_device_train_batch_size 32 --do_train \\\n"
        "    --output_dir out\n")
    original = launcher.read_bytes()
    cli.run(tmp_path, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    assert launcher.read_bytes() == original
    cli.run(tmp_path, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated", "--unsafe-fixes")
    assert "NGPUS=8" in launcher.read_text() or "--nproc_per_node=8" in launcher.read_text()


def test_a_port_onto_more_gpus_than_the_global_batch_divides_is_unsafe(tmp_path, cli) -> None:
    # One GPU at micro-batch 1 and accumulation 2 (a global batch of 2) onto 8 GPUs: no micro-batch and
    # accumulation keep 2 samples per optimizer step, so the plan's count change alters the training math.
    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    launcher = tmp_path / "train.sh"
    launcher.write_text(
        "#!/bin/bash\nGPUS_PER_NODE=${MLP_WORKER_GPU:-1}\n"
        "torchrun --nproc_per_node $GPUS_PER_NODE train.py --model_name_or_path lmsys/vicuna-7b-v1.5 \\\n"
        "    --per_device_train_batch_size 1 --gradient_accumulation_steps 2 --bf16 True \\\n"
        "    --gradient_checkpointing True --model_max_length 2048 --output_dir out\n")
    run = lint([tmp_path], make_target("a100-80gb", None, 8)).scan.runs[0]
    port = plan_port(run, find_gpu("a100-80gb"), 8, unsafe=True)
    assert port is not None and port.global_batch is None
    assert all(not plan.safe for plan in (port.chosen, *port.runners_up) if plan is not None)
    original = launcher.read_bytes()
    cli.run(tmp_path, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    assert launcher.read_bytes() == original


def test_a_gpu_count_change_scaled_by_a_known_accumulation_stays_safe(tmp_path, cli) -> None:
    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    launcher = tmp_path / "tune.sh"
    launcher.write_text(
        "#!/bin/bash\nNGPUS=16\n"
        "python -m torch.distributed.launch --nproc_per_node=$NGPUS train.py \\\n"
        "    --model_name_or_path bert-base-cased --per_device_train_batch_size 32 --do_train \\\n"
        "    --gradient_accumulation_steps 1 --output_dir out\n")
    cli.run(tmp_path, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    after = lint([tmp_path], make_target("a100-80gb", None, 8))
    assert after.scan.runs[0].value("world_size") == 8
    assert list(after.effective_batches.values()) == [32 * 16]


def test_a_multi_node_launch_larger_than_the_gpus_given_is_a_warning_not_a_start_up_failure(tmp_path) -> None:
    # Two nodes of 8 checked against 8 GPUs: torchrun waits for the second node; it does not start 16
    # processes on 8 GPUs, so nothing about it is certain.
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\nNNODES=2\nGPUS_PER_NODE=8\n"
        "torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE train.py \\\n"
        "    --model_name_or_path lmsys/vicuna-7b-v1.5 --per_device_train_batch_size 1 --bf16 True\n")
    single = tmp_path / "single"
    single.mkdir()
    (single / "train.sh").write_text(
        "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py \\\n"
        "    --model_name_or_path lmsys/vicuna-7b-v1.5 --per_device_train_batch_size 1 --bf16 True\n")
    multi = [f for f in lint([tmp_path / "train.sh"], make_target("a100-80gb", None, 8)).findings if f.code == "TL112"]
    one = [f for f in lint([single], make_target("a100-80gb", None, 4)).findings if f.code == "TL112"]
    assert [f.severity.value for f in multi] == ["warning"] and "2 nodes × 8 GPUs" in multi[0].message
    assert [f.severity.value for f in one] == ["error"] and "fails at start-up" in one[0].message


def test_a_gpu_count_an_environment_may_replace_is_a_warning(tmp_path) -> None:
    # `GPUS=${GPUS:-16}`: the job's environment usually sets GPUS; 16 is only the script's fallback.
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\nGPUS=${GPUS:-16}\n"
        "torchrun --nnodes 1 --nproc_per_node ${GPUS} train.py \\\n"
        "    --model_name_or_path lmsys/vicuna-7b-v1.5 --per_device_train_batch_size 1 --bf16 True\n")
    found = [f for f in lint([tmp_path], make_target("a100-80gb", None, 8)).findings if f.code == "TL112"]
    assert [f.severity.value for f in found] == ["warning"]


def test_global_batch_names_the_batch_to_keep_when_the_launcher_states_no_gpu_count(tmp_path, cli) -> None:
    # A bare `deepspeed` uses every visible GPU: the recipe's 16 × 1 was 128 on the 8 GPUs it was written
    # for; --global-batch 128 keeps that on 4 GPUs, and --preserve-effective-batch holds the fix to it.
    folder = tmp_path / "job"
    shutil.copytree(PORTS / "llava13b_4090", folder)
    target = ("--gpu", "rtx4090", "--num-gpus", "4", "--global-batch", "128", "--preserve-effective-batch",
              "--isolated")
    code, out, err = cli.run(folder, "fix", *target)
    assert "effective batch 64 → 128" in out, out + err
    [run] = lint([folder], make_target("rtx4090", None, 4)).scan.runs
    assert run.known("per_device_train_batch_size") * run.known("gradient_accumulation_steps") * 4 == 128
    after = snapshot(folder)
    cli.run(folder, "fix", *target)
    assert snapshot(folder) == after


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("gpu", ["v100-32gb", "a100-40gb", "rtx4090"])
def test_the_plan_a_fix_takes_is_the_one_the_full_port_chooses(name: str, gpu: str) -> None:
    from trainlint.memory.plans import chosen_plan

    target = make_target(gpu, None, CASES[name].num_gpus)
    for run in lint([PORTS / CASES[name].folder], target).scan.runs:
        port = plan_port(run, target.gpu, target.num_gpus, unsafe=True)
        assert chosen_plan(run, target.gpu, target.num_gpus) == (port.chosen if port is not None else None)


def test_a_multi_node_srun_layout_is_ported_to_one_node_by_its_total(tmp_path):
    """`--ntasks=${GPUS}` beside `--nodes=$((GPUS / GPUS_PER_NODE))`: the node count follows the total, so the
    total alone is rewritten, and the launcher read again asks for 8 tasks on 1 node."""
    folder = tmp_path / "srun"
    shutil.copytree(PORTS / "srun_multinode", folder)
    settings = load_settings([folder], gpu="a100-80gb", num_gpus=8, isolated=True)
    [finding] = [f for f in lint([folder / "train.sh"], make_target("a100-80gb", None, 8)).findings
                 if f.code == "TL112"]
    assert finding.severity.value == "warning" and "4 nodes × 8 GPUs" in finding.message
    result = fix([folder / "train.sh"], settings, preserve_effective_batch=True)
    assert not any(plan.code == "TL112" for plan in result.outcome.left)
    launcher = (folder / "train.sh").read_text()
    assert "GPUS=${GPUS:-8}\n" in launcher and "NODES=$((GPUS / GPUS_PER_NODE))\n" in launcher
    [run] = lint([folder / "train.sh"], make_target("a100-80gb", None, 8)).scan.runs
    assert (run.known("world_size"), run.known("gradient_accumulation_steps")) == (8, 4)



def test_a_single_node_srun_count_is_ported(tmp_path):
    folder = tmp_path / "srun"
    shutil.copytree(PORTS / "srun_single_node", folder)
    settings = load_settings([folder], gpu="a100-80gb", num_gpus=4, isolated=True)
    fix([folder], settings, preserve_effective_batch=True)
    text = (folder / "train.sh").read_text()
    assert "--nodes=1 --ntasks=4 " in text and "--gradient_accumulation_steps 8" in text
    assert global_batches(folder, Port("srun", "a100-80gb", 4)) == {"train.sh": 128}


def test_a_fix_never_moves_a_knob_it_names_to_a_value_it_did_not_ask_for(tmp_path) -> None:
    # GPUS feeds the process count and, through arithmetic, the micro-batch. A fix asking world_size 2 -> 8 and
    # the micro-batch to stay 8 could edit GPUS for both (they are the fix's own knobs), but the micro-batch would
    # then read 16 * 2 / 8 = 4: the planner refuses rather than write it.
    from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity
    from trainlint.fixers.planner import Planner

    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\nGPUS=2\nPER_DEVICE=$((16 / GPUS))\n"
        "torchrun --nproc_per_node $GPUS train.py --model_name_or_path lmsys/vicuna-7b-v1.5 \\\n"
        "    --per_device_train_batch_size $PER_DEVICE --bf16 True --output_dir out\n")
    result = lint([tmp_path], make_target("a100-80gb", None, 8))
    [run] = result.scan.runs
    assert run.value("per_device_train_batch_size") == 8
    changes = (KnobChange("world_size", 2, 8), KnobChange("per_device_train_batch_size", 8, 8))
    # A rule's own fix (not a port plan, which would be planned afresh).
    finding = Finding("TL201", "deepspeed-batch-mismatch", Severity.WARNING, "test", run.path, None, run.id,
                      fix=Fix(Applicability.SAFE, "test", changes))
    planned = Planner(result).plan(finding)
    assert planned is not None and not planned.edits
    assert "per_device_train_batch_size" in planned.problem



@pytest.mark.parametrize("launched, says", [
    (1, "the launcher states 1 GPU, the machine has 8 (--num-gpus): 7 of the machine's 8 GPUs stay idle"),
    (7, "the launcher states 7 GPUs, the machine has 8 (--num-gpus): 1 of the machine's 8 GPUs stays idle"),
])
def test_the_gpu_count_message_agrees_in_number(cli, tmp_path, launched, says) -> None:
    (tmp_path / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (tmp_path / "run.sh").write_text(f"deepspeed --num_gpus {launched} train.py --per_device_train_batch_size 4\n")
    _, document = cli.check_json(tmp_path, "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated", "--no-cache")
    [message] = [f["message"] for f in document["findings"] if f["code"] == "TL112"]
    assert message.startswith(says)

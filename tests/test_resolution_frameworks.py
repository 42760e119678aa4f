"""Framework defaults and derived knobs, the order they are applied in, and the settings graph's
answers about provenance."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.core import Setting, SourceKind, Unknown
from trainlint.graph import FileNode, file_node
from trainlint.knobs import ARGS
from trainlint.readers.source import display_path
from trainlint.resolution import scan
from trainlint.resolution.frameworks import (
    AXOLOTL,
    HF_ARGUMENTS,
    LLAMAFACTORY,
    Derivation,
    DeriveContext,
    Framework,
    Stage,
    recipe_framework,
)
from trainlint.resolution.precedence import Candidates, by_precedence
from trainlint.resolution.workspace import Workspace

LLAMAFACTORY_ENTRY = "from llamafactory.train.tuner import run_exp\n\n\nif __name__ == '__main__':\n    run_exp()\n"


def _scan(folder: Path, *names: str):
    return scan([folder / n for n in names], workspace=Workspace(folder))


def test_a_repeated_flag_wins_over_its_earlier_spelling_and_kinds_keep_their_order():
    early = Setting(2, SourceKind.LAUNCHER_FLAG, note="--per_device_train_batch_size")
    late = Setting(4, SourceKind.LAUNCHER_FLAG, note="--per_device_train_batch_size")
    config = Setting(8, SourceKind.CONFIG_FILE)
    default = Setting(16, SourceKind.FRAMEWORK_DEFAULT)
    assert [s.value for s in by_precedence([default, early, config, late])] == [4, 2, 8, 16]


def test_pure_bf16_decides_bf16_over_the_accelerate_mixed_precision(tmp_path):
    write_tree(tmp_path, {
        "run.sh": "accelerate launch --config_file acc.yaml src/train.py sft.yaml\n",
        "acc.yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n",
        "sft.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nfinetuning_type: full\n"
                    "per_device_train_batch_size: 2\npure_bf16: true\n",
        "src/train.py": LLAMAFACTORY_ENTRY,
    })
    [run] = _scan(tmp_path, "run.sh").runs
    bf16 = run.settings["bf16"]
    assert bf16.value is True and bf16.note == "pure_bf16"
    assert [s.note for s in run.pins["bf16"][:2]] == ["pure_bf16", "mixed_precision bf16"]
    assert run.settings["torch_dtype"].value == "bfloat16"
    assert run.settings["lora"].value is False and run.settings["world_size"].value == 8


def test_a_qlora_adapter_sets_four_bits_before_a_load_in_8bit_switch(tmp_path):
    write_tree(tmp_path, {"qlora.yml": "base_model: meta-llama/Llama-2-7b-hf\nadapter: qlora\nload_in_8bit: true\n"
                                       "micro_batch_size: 2\nnum_epochs: 3\n"})
    [run] = _scan(tmp_path, "qlora.yml").runs
    assert run.launcher == "axolotl"
    assert (run.settings["bits"].value, run.settings["bits"].note) == (4, "adapter qlora")
    assert run.settings["per_device_eval_batch_size"].value == 2  # axolotl: the micro-batch
    assert run.settings["num_train_epochs"].value == 3


def test_llamafactory_keeps_checkpointing_off_when_the_recipe_disables_it(tmp_path):
    write_tree(tmp_path, {"sft.yaml": "model_name_or_path: Qwen/Qwen2-7B\nper_device_train_batch_size: 1\n"
                                      "disable_gradient_checkpointing: true\n"})
    [run] = _scan(tmp_path, "sft.yaml").runs
    assert run.launcher == "llamafactory-cli"
    assert run.settings["gradient_checkpointing"].value is False
    assert run.settings["gradient_checkpointing"].note == "disable_gradient_checkpointing"


def test_a_recipe_belongs_to_the_framework_whose_own_keys_it_names():
    written = lambda *keys: {key: Setting("x", SourceKind.CONFIG_FILE) for key in keys}  # noqa: E731
    assert recipe_framework(written("base_model")) is AXOLOTL
    assert recipe_framework(written("micro_batch_size")) is AXOLOTL
    assert recipe_framework(written("model_name_or_path", "stage", "finetuning_type")) is LLAMAFACTORY
    assert recipe_framework(written("model_name_or_path", "cutoff_len")) is LLAMAFACTORY
    # TrainingArguments' and TRL's own keys only: a file of HF arguments, no framework's defaults.
    assert recipe_framework(written("model_name_or_path", "per_device_train_batch_size", "use_peft")) is HF_ARGUMENTS


# alignment-handbook style: TRL's ModelConfig and SFTConfig keys, read by `scripts/sft.py` through TrlParser and
# started by `accelerate launch --config_file zero3.yaml` (not in view).
FULL_SFT_ARGUMENTS = """model_name_or_path: mistralai/Mistral-7B-v0.1
torch_dtype: bfloat16
attn_implementation: flash_attention_2
dataset_mixer:
  HuggingFaceH4/ultrachat_200k: 1.0
gradient_accumulation_steps: 2
gradient_checkpointing: true
learning_rate: 2.0e-05
max_seq_length: 2048
num_train_epochs: 1
output_dir: data/zephyr-7b-sft-full
per_device_train_batch_size: 16
"""


def test_a_file_of_hf_arguments_by_itself_is_a_full_fine_tune_with_its_sharding_and_defaults_unknown(tmp_path):
    write_tree(tmp_path, {"config_full.yaml": FULL_SFT_ARGUMENTS})
    [run] = _scan(tmp_path, "config_full.yaml").runs
    assert run.launcher == "arguments-file"
    assert run.value("lora") is not True and "finetuning_type" not in run.settings
    assert isinstance(run.settings["zero_stage"].value, Unknown)
    assert isinstance(run.settings["bf16"].value, Unknown)  # `accelerate launch --mixed_precision` may set it
    assert run.settings["per_device_train_batch_size"].value == 16


def test_a_file_of_hf_arguments_given_to_a_script_gets_no_llamafactory_defaults(tmp_path):
    write_tree(tmp_path, {"config_full.yaml": FULL_SFT_ARGUMENTS,
                          "train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                          "run.sh": "accelerate launch train.py config_full.yaml\n"})
    [run] = _scan(tmp_path, "run.sh").runs
    assert run.value("lora") is not True and "finetuning_type" not in run.settings
    assert run.settings["per_device_train_batch_size"].value == 16


def test_a_framework_runs_only_the_derivations_of_the_stage_asked_for():
    ran = []
    framework = Framework("demo", ARGS, derivations=(
        Derivation(Stage.PRECISION, lambda candidates, context: ran.append("precision")),
        Derivation(Stage.SHARDING, lambda candidates, context: ran.append(f"sharding {context.launcher}")),
    ))
    context = DeriveContext("torchrun")
    framework.derive(Stage.ADAPTER, Candidates(), context)
    framework.derive(Stage.SHARDING, Candidates(), context)
    assert ran == ["sharding torchrun"]


def test_the_graph_traces_a_value_upstream_to_where_it_is_written(tmp_path):
    write_tree(tmp_path, {"finetune.sh": "BATCH=16\nNODES=2\ntorchrun --nproc_per_node 4 --nnodes $NODES train.py "
                                         "--per_device_train_batch_size $BATCH\n",
                          "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    result = _scan(tmp_path, "finetune.sh")
    [run] = result.runs
    batch = result.graph.upstream(run.id, "per_device_train_batch_size")
    assert [(s.text, s.origin.line) for s in batch] == [("$BATCH", 3), ("16", 1)]
    world = result.graph.upstream(run.id, "world_size")
    assert world[0].value == 8 and world[0].origin is None
    assert {s.text for s in world[1:] if s.origin is not None} >= {"4", "2"}
    assert result.graph.upstream(run.id, "no_such_knob") == ()
    assert result.graph.upstream("elsewhere.sh:1", "world_size") == ()


def test_the_graph_names_the_files_each_job_reads(tmp_path):
    write_tree(tmp_path, {"a.sh": "deepspeed --num_gpus 2 train.py --deepspeed ds.json\n",
                          "ds.json": '{"zero_optimization": {"stage": 2}}\n',
                          "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    result = _scan(tmp_path, "a.sh")
    shown = display_path(tmp_path / "ds.json")
    file_nodes = [node for node in result.graph.graph.nodes if isinstance(node, FileNode)]
    assert file_node(shown) in file_nodes and file_node(shown) == ("file", shown)
    assert result.graph.runs_touching(shown) == [run.id for run in result.runs]

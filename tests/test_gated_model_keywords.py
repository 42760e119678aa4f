"""Model keywords given under a branch on the script's arguments (`if args.use_qlora:
BitsAndBytesConfig(load_in_4bit=True)`) count only when the launch takes that branch; and a project's own parser
class built on HfArgumentParser (`ProjectArgumentParser((FinetuneArguments,))`) makes its dataclasses the script's
arguments. Written after instruction-tuning scripts that keep full, LoRA and QLoRA fine-tuning in one file."""
from __future__ import annotations

import shutil

from tests.conftest import SAMPLES, write_tree

SAMPLE = SAMPLES / "gated_model_keywords"


def _edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def _run(cli, tmp_path, launcher: str, *argv: str) -> dict:
    shutil.copytree(SAMPLE, tmp_path / "repo")
    _, document = cli.check_json(tmp_path / "repo", launcher, "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                 *argv)
    return document["runs"][0]


def test_a_quantized_base_under_a_branch_the_launch_skips_is_not_counted(cli, tmp_path):
    run = _run(cli, tmp_path, "full_finetune.sh", "--num-gpus", "8")
    # use_qlora is off by its dataclass default: the 4-bit load never runs, and neither do the adapters.
    assert "bits" not in run["settings"] or run["settings"]["bits"]["value"] is None
    assert run["settings"]["lora"]["value"] is False
    assert not any("4-bit base" in line or "LoRA" in line for line in run["memory"]["assumptions"])
    # The model is loaded in bf16 by the branch that runs.
    assert run["settings"]["torch_dtype"]["line"] == 33


def test_a_quantized_base_under_a_branch_the_launch_takes_is_counted(cli, tmp_path):
    run = _run(cli, tmp_path, "qlora.sh", "--num-gpus", "1")
    assert run["settings"]["bits"] == {"value": 4, "path": "finetune.py", "line": 29, "column": 56}
    assert "4-bit base: linear weights at 0.53 B/param, embeddings 16-bit" in run["memory"]["assumptions"]


def test_a_branch_that_cannot_be_told_keeps_the_keyword(cli, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "repo")
    launcher = "python finetune.py --model_name_or_path meta-llama/Llama-2-7b-hf --use_lora True " \
               "--use_qlora $QLORA --output_dir out\n"
    write_tree(tmp_path / "repo", {"maybe.sh": launcher})
    _, document = cli.check_json(tmp_path / "repo", "maybe.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    # `--use_qlora $QLORA` may be on: the quantized base, which lowers memory, is kept.
    assert document["runs"][0]["settings"]["bits"]["value"] == 4


def test_the_dataclasses_of_a_derived_parser_are_the_scripts_arguments(cli, tmp_path):
    run = _run(cli, tmp_path, "full_finetune.sh", "--num-gpus", "8")
    assert run["settings"]["max_seq_length"] == {"value": 2048, "path": "finetune.py", "line": 17, "column": 41}
    assert run["settings"]["gradient_checkpointing"]["value"] is False


def test_a_derived_parser_may_accept_flags_its_dataclasses_do_not_define(cli, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "repo")
    launcher = (SAMPLE / "full_finetune.sh").read_text().replace("--output_dir", "--recipe_note baseline --output_dir")
    write_tree(tmp_path / "repo", {"noted.sh": launcher})
    _, document = cli.check_json(tmp_path / "repo", "noted.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                 "--num-gpus", "8")
    # Its own parse methods may take `--recipe_note`; what HF's would refuse is not certain here.
    assert [f["code"] for f in document["findings"] if f["code"] == "TL305"] == []


def test_argparse_parser_is_no_hf_parser(cli, tmp_path):
    script = ("import argparse\nfrom transformers import Trainer, TrainingArguments\n"
              "parser = argparse.ArgumentParser(description='fine-tune')\n"
              "parser.add_argument('--batch', type=int, default=2)\nargs = parser.parse_args()\n"
              "Trainer(args=TrainingArguments(output_dir='out', per_device_train_batch_size=args.batch)).train()\n")
    write_tree(tmp_path, {"train.py": script, "run.sh": "python train.py --batch 4 --unknown_flag 1\n"})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    # The argparse parser's options are the whole set: an unknown flag stops the job.
    assert [f["code"] for f in document["findings"] if f["code"] == "TL305"] == ["TL305"]


_ADAPTERS_BY_OWN_SWITCH = '''\
from dataclasses import dataclass, field

from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    adapters_enabled: bool = field(default=False)


model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
if model_args.adapters_enabled:
    model = get_peft_model(model, LoraConfig(r=16, target_modules=["q_proj", "v_proj"]))
Trainer(model=model, args=training_args).train()
'''


def test_adapters_built_under_a_switch_the_launch_leaves_off_are_not_assumed(cli, tmp_path):
    launcher = "torchrun --nproc_per_node 8 train.py --output_dir out --bf16 True {flag}\n"
    write_tree(tmp_path, {"train.py": _ADAPTERS_BY_OWN_SWITCH, "full.sh": launcher.format(flag=""),
                          "lora.sh": launcher.format(flag="--adapters_enabled True")})
    _, full = cli.check_json(tmp_path, "full.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert "lora" not in full["runs"][0]["settings"]
    assert not any("LoRA" in line for line in full["runs"][0]["memory"]["assumptions"])
    _, lora = cli.check_json(tmp_path, "lora.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    # The switch is the script's own: its name says nothing to trainlint, the wrap the launch reaches under it does.
    assert lora["runs"][0]["settings"]["lora"]["value"] is True
    assert any(line.startswith("LoRA r=") for line in lora["runs"][0]["memory"]["assumptions"])


_ADAPTERS_WHEN_SET = '''\
import argparse

from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--lora_rank", type=int, default=None)
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
if args.lora_rank is not None:
    model = get_peft_model(model, LoraConfig(r=args.lora_rank or 8, target_modules=["q_proj", "v_proj"]))
Trainer(model=model, args=TrainingArguments(output_dir="out", bf16=True)).train()
'''


def test_a_branch_on_whether_an_argument_is_set_holds_for_a_falsy_value(cli, tmp_path):
    write_tree(tmp_path, {"train.py": _ADAPTERS_WHEN_SET, "zero.sh": "python train.py --lora_rank 0\n",
                          "unset.sh": "python train.py\n"})
    _, zero = cli.check_json(tmp_path, "zero.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    # `--lora_rank 0` is set (`is not None`), though falsy: the branch is taken and the adapters wrap the model.
    assert zero["runs"][0]["settings"]["lora"]["value"] is True
    _, unset = cli.check_json(tmp_path, "unset.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert "lora" not in unset["runs"][0]["settings"]


_MAIN = "def main(args: FinetuneArguments) -> None:\n"


def _settings_with_main(cli, tmp_path, header: str, model: str = "Llama-2-7b-hf") -> dict:
    """The full fine-tune's settings, with `main`'s first line replaced by `header` and the model by `model`."""
    shutil.copytree(SAMPLE, tmp_path / "repo")
    _edit(tmp_path / "repo" / "finetune.py", _MAIN, header)
    launcher = (SAMPLE / "full_finetune.sh").read_text().replace("Llama-2-7b-hf", model)
    write_tree(tmp_path / "repo", {"run.sh": launcher})
    _, document = cli.check_json(tmp_path / "repo", "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                 "--num-gpus", "8")
    return document["runs"][0]["settings"]


def test_a_branch_on_an_argument_the_script_reassigns_cannot_be_told(cli, tmp_path):
    # The script turns QLoRA on itself for the largest models: the launch alone no longer says whether it runs.
    settings = _settings_with_main(cli, tmp_path, _MAIN + "    if \"70b\" in args.model_name_or_path.lower():\n"
                                                          "        args.use_qlora = True\n", model="Llama-2-70b-hf")
    # The 4-bit load may run: it is kept, the lower side.
    assert settings["bits"]["value"] == 4


def test_an_argument_copied_between_namespaces_is_still_told(cli, tmp_path):
    settings = _settings_with_main(cli, tmp_path, "def main(args: FinetuneArguments, training_args=None) -> None:\n"
                                                  "    training_args.use_qlora = args.use_qlora\n")
    # The same value under another name: use_qlora is still off by default, and the 4-bit load never runs.
    assert "bits" not in settings or settings["bits"]["value"] is None


def test_argument_classes_reached_through_a_module_name_are_read(cli, tmp_path):
    # `from open_instruct import dpo_utils` ... `ArgumentParserPlus((dpo_utils.DPOExperimentConfig, ...))`: the
    # module the class is reached through is read, so its defaults tell the branches
    for statement, configs in (("from project import configs", "project/configs.py"),
                               ("import configs", "configs.py")):
        repo = tmp_path / statement.replace(" ", "_")
        shutil.copytree(SAMPLE, repo)
        script = repo / "finetune.py"
        text = script.read_text()
        start, end = text.index("@dataclass"), text.index("def main(")
        (repo / "project").mkdir()
        (repo / "project" / "__init__.py").write_text("")
        (repo / configs).write_text("from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n"
                                    + text[start:end])
        script.write_text(text[:start].replace("from project_args import", f"{statement}\nfrom project_args import")
                          + text[end:].replace("(FinetuneArguments,)", "(configs.FinetuneArguments,)")
                          .replace("args: FinetuneArguments", "args"))
        _, document = cli.check_json(repo, "full_finetune.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                     "--num-gpus", "8")
        run = document["runs"][0]
        assert "bits" not in run["settings"] or run["settings"]["bits"]["value"] is None, statement
        assert run["settings"]["max_seq_length"]["path"] == configs


_ADAPTER_CHOICE = '''from dataclasses import dataclass, field

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    adapter_name: str = field(default="lora")
    lora_rank: int = field(default=8)


def main():
    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
    if model_args.adapter_name == "qlora":
        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, quantization_config=quantization)
    else:
        model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, torch_dtype=torch.bfloat16)
    if model_args.adapter_name == "lora" or model_args.adapter_name == "qlora":
        model = get_peft_model(model, LoraConfig(r=model_args.lora_rank, target_modules=["q_proj", "v_proj"]))
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    main()
'''


def _settings_by_launcher(cli, folder, script: str, launchers: dict) -> dict:
    """The settings of each launcher (name -> the flags it adds) running `script` as `finetune.py` on 2 GPUs."""
    command = "torchrun --nproc_per_node 2 finetune.py --output_dir out --bf16 True {flags}\n"
    write_tree(folder, {"finetune.py": script,
                        **{name: command.format(flags=flags) for name, flags in launchers.items()}})
    _, document = cli.check_json(folder, ".", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return {run["id"].split(":")[0]: run["settings"] for run in document["runs"]}


def test_a_branch_that_compares_an_argument_with_a_constant_is_told(cli, tmp_path):
    # LLM-Adapters' `if adapter_name == "lora":` around its LoraConfig: an equality, not a substring (`qlora`)
    runs = _settings_by_launcher(cli, tmp_path, _ADAPTER_CHOICE,
                                 {"lora.sh": "", "qlora.sh": "--adapter_name qlora --lora_rank 16"})
    assert runs["lora.sh"]["lora_r"]["value"] == 8
    assert "bits" not in runs["lora.sh"] or runs["lora.sh"]["bits"]["value"] is None
    assert (runs["qlora.sh"]["lora_r"]["value"], runs["qlora.sh"]["bits"]["value"]) == (16, 4)


_BITS_MEMBERSHIP = '''from dataclasses import dataclass, field

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    bits: int = field(default=16)
    lora_enable: bool = field(default=False)


def main():
    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
    extra = {}
    if model_args.bits in [4, 8]:
        extra["quantization_config"] = BitsAndBytesConfig(load_in_4bit=model_args.bits == 4,
                                                          load_in_8bit=8 == model_args.bits,
                                                          bnb_4bit_compute_dtype=torch.bfloat16)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **extra)
    if model_args.lora_enable and model_args.bits not in (16, 32):
        model = get_peft_model(model, LoraConfig(r=64, target_modules=["q_proj", "v_proj"]))
''' + _ADAPTER_CHOICE[_ADAPTER_CHOICE.index("    Trainer(model=model"):]


def test_a_branch_on_membership_in_constants_is_told(cli, tmp_path):
    # Phi3-Vision-Finetune's `if training_args.bits in [4, 8]:` around its BitsAndBytesConfig: equal to any member;
    # `not in (...)` holds when equal to none of them. Its keywords compare the argument too (`bits == 4`).
    runs = _settings_by_launcher(cli, tmp_path, _BITS_MEMBERSHIP, {
        "full.sh": "", "qlora.sh": "--bits 4 --lora_enable True", "lora8.sh": "--bits 8 --lora_enable True"})
    assert runs["full.sh"].get("load_in_4bit", {}).get("value") in (None, False)
    assert runs["full.sh"]["lora"]["value"] is False
    assert runs["qlora.sh"]["load_in_4bit"]["value"] is True and runs["qlora.sh"]["lora"]["value"] is True
    # `load_in_4bit=model_args.bits == 4`: a comparison of the argument, told from the flag, which is where to edit.
    assert runs["qlora.sh"]["load_in_4bit"]["path"] == "qlora.sh"
    assert (runs["lora8.sh"]["load_in_4bit"]["value"], runs["lora8.sh"]["load_in_8bit"]["value"]) == (False, True)


_HELPER_PARAMETERS = '''from dataclasses import dataclass, field

import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    use_lora: bool = field(default=False)
    qlora: bool = field(default=False)


def load_model(model_path: str, use_lora: bool = True, qlora: bool = False):
    if qlora:
        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained(model_path, quantization_config=quantization)
    else:
        model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.bfloat16)
    if use_lora:
        model = get_peft_model(model, LoraConfig(r=64, target_modules=["q_proj", "v_proj"]))
    return model


if __name__ == "__main__":
    parser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = load_model("meta-llama/Llama-2-7b-hf", use_lora=training_args.use_lora, qlora=training_args.qlora)
    Trainer(model=model, args=training_args).train()
'''


def test_a_branch_on_a_helpers_parameter_is_told_from_the_argument_the_entry_passes(cli, tmp_path):
    # MiniCPM's `load_model_and_tokenizer(..., qlora=training_args.qlora)` builds its 4-bit load under `if qlora:`:
    # the parameter is the argument the call hands it, so a launch without `--qlora` loads no 4-bit base.
    runs = _settings_by_launcher(cli, tmp_path, _HELPER_PARAMETERS,
                                 {"lora.sh": "--use_lora True", "qlora.sh": "--use_lora True --qlora True"})
    assert runs["lora.sh"].get("load_in_4bit", {}).get("value") in (None, False)
    assert runs["lora.sh"].get("bits", {}).get("value") is None
    assert runs["qlora.sh"]["load_in_4bit"]["value"] is True
    assert runs["lora.sh"]["lora"]["value"] is True  # `if use_lora:` around get_peft_model, taken

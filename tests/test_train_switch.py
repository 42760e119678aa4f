"""Launches that take no training step: a script that trains only `if training_args.do_train:`, launched with
`do_train` off (a prediction launcher next to the training one), and an inference script started under
`deepspeed` with a DeepSpeed config. No memory rule judges them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.readers.python import read_python
from trainlint.readers.python.train_gate import train_gate
from trainlint.readers.python.tree_nodes import tree_nodes

# A seq2seq fine-tuning script in the style of HF's examples: it trains, evaluates or predicts as asked.
_MAIN = """from dataclasses import dataclass, field

from transformers import AutoModel, HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="THUDM/chatglm-6b")


@dataclass
class DataArguments:
    max_source_length: int = field(default=1024)
    max_target_length: int = field(default=128)


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, Seq2SeqTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModel.from_pretrained(model_args.model_name_or_path)
    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=None, eval_dataset=None)
    if training_args.do_train:
        trainer.train(resume_from_checkpoint=None)
        trainer.save_model()
    if training_args.do_predict:
        trainer.predict(None, max_length=data_args.max_target_length)


if __name__ == "__main__":
    main()
"""

_FLAGS = """    --model_name_or_path THUDM/chatglm-6b \\
    --output_dir out \\
    --max_source_length 512 \\
    --max_target_length 512 \\
    --per_device_train_batch_size 4 \\
    --fp16"""


def _tree(folder: Path, *launchers: str):
    files = {"main.py": _MAIN}
    for name in launchers:
        switch = {"train.sh": "--do_train", "predict.sh": "--do_predict", "train_off.sh": "--do_train False",
                  "train_unknown.sh": "--do_train $DO_TRAIN"}[name]
        files[name] = f"CUDA_VISIBLE_DEVICES=0 python3 main.py {switch} \\\n{_FLAGS}\n"
    return write_tree(folder, files)


def _memory_findings(cli, folder: Path):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-40gb")
    return sorted((f["path"], f["code"]) for f in document["findings"] if f["code"] in ("TL101", "TL108", "TL111"))


def test_the_training_launcher_is_judged_and_the_prediction_launcher_is_not(cli, tmp_path):
    # A 6B full fine-tune in fp16 mixed precision on one 40 GB card: its model states alone do not fit.
    _tree(tmp_path, "train.sh", "predict.sh")
    assert _memory_findings(cli, tmp_path) == [("train.sh", "TL108")]


@pytest.mark.parametrize("launcher", ["train_off.sh"])
def test_do_train_written_false_is_off_too(cli, tmp_path, launcher):
    _tree(tmp_path, launcher)
    assert _memory_findings(cli, tmp_path) == []


def test_a_do_train_value_trainlint_cannot_read_leaves_the_job_judged(cli, tmp_path):
    _tree(tmp_path, "train_unknown.sh")
    assert _memory_findings(cli, tmp_path) == [("train_unknown.sh", "TL108")]


def test_estimate_says_why_a_prediction_launch_is_not_judged(cli, tmp_path):
    _tree(tmp_path, "predict.sh")
    _, out, _ = cli.run(tmp_path, "estimate", "predict.sh", "--isolated")
    assert "main.py trains only `if ...do_train:`" in out
    assert "no memory rule judges this job" in out


def test_a_script_that_always_trains_is_judged_whatever_do_train_says(cli, tmp_path):
    always = _MAIN.replace("    if training_args.do_train:\n        trainer.train(", "    trainer.train(")
    always = always.replace("        trainer.save_model()\n", "    trainer.save_model()\n")
    write_tree(tmp_path, {"main.py": always, "predict.sh": f"python3 main.py --do_predict \\\n{_FLAGS}\n"})
    assert _memory_findings(cli, tmp_path) == [("predict.sh", "TL108")]


@pytest.mark.parametrize("code, gate", [
    ("if args.do_train:\n    trainer.train()\n", "do_train"),
    ("if args.do_train and not args.dry_run:\n    self.trainer.train()\n", "do_train"),
    ("model.train()\nif args.do_train:\n    trainer.train()\n", "do_train"),  # a mode switch, not training
    ("if args.do_train or args.resume:\n    trainer.train()\n", None),
    ("if args.do_train:\n    pass\nelse:\n    trainer.train()\n", None),
    ("if args.do_train:\n    trainer.train()\ntrainer.train()\n", None),
    ("model.train()\n", None),
])
def test_the_gate_is_read_only_when_every_training_call_sits_under_it(code, gate):
    assert train_gate(tree_nodes(ast.parse(code))) == gate


def test_the_reader_records_the_gate_of_the_module_that_builds_the_trainer(tmp_path):
    path = tmp_path / "main.py"
    path.write_text(_MAIN)
    assert read_python(path).train_gate == "do_train"


_CHATBOT = """from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, HfArgumentParser


@dataclass
class ChatArguments:
    model_name_or_path: str = field(default="gpt2")
    max_new_tokens: int = field(default=200)
    model_max_length: int = field(default=2048)


def main():
    (chat_args,) = HfArgumentParser((ChatArguments,)).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(chat_args.model_name_or_path)
    print(model.generate(max_new_tokens=chat_args.max_new_tokens))


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("extra, judged", [("", False), (" --per_device_train_batch_size 4", True)])
def test_an_inference_script_under_deepspeed_is_no_training_job(cli, tmp_path, extra, judged):
    launcher = ("deepspeed chat.py --deepspeed ds.json --model_name_or_path lmsys/vicuna-13b-v1.5 "
                f"--model_max_length 4096{extra}\n")
    write_tree(tmp_path, {"chat.py": _CHATBOT, "chat.sh": launcher,
                          "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": true}}'})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-40gb")
    assert bool(document["runs"]) is judged


_OWN_LOOP = """import argparse

from accelerate import Accelerator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--seq-length", type=int, default=4096)
    parser.add_argument("--model", type=str)
    args = parser.parse_args()
    accelerator = Accelerator()
    for batch in []:
        loss = model(batch).loss
        {step}


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("step, judged", [("accelerator.backward(loss)", True), ("print(loss)", False)])
def test_a_loop_of_its_own_that_calls_backward_is_a_training_job(cli, tmp_path, step, judged):
    # Its flags are its own (`--seq-length`): a `.backward()` is what shows it trains.
    write_tree(tmp_path, {"loop.py": _OWN_LOOP.replace("{step}", step),
                          "run.sh": "accelerate launch loop.py --batch-size 1 --seq-length 32768 --model m\n"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    assert bool(document["runs"]) is judged

"""Gradient checkpointing and LoRA adapters: HF's Trainer checkpoints reentrantly, so a LoRA job whose frozen layers'
inputs never require grad fails its first backward once checkpointing is on. Such a job is still told that
checkpointing would save memory, but no fix or port plan flips the flag: the code change comes first."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trainlint.readers.python.loading import read_python

SAMPLE = Path(__file__).parent / "samples" / "python" / "lora_without_input_grads"
PORT = ("--gpu", "rtx4090", "--num-gpus", "2", "--preserve-effective-batch")


def _job(tmp_path: Path, script_edit=None, launcher_edit=None) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "job")
    folder = tmp_path / "job"
    for name, edit in (("finetune.py", script_edit), ("lora_finetune.sh", launcher_edit)):
        if edit is not None:
            path = folder / name
            path.write_text(edit(path.read_text()))
    return folder


def _fixes(document, code):
    return [f.get("fix") or {} for f in document["findings"] if f["code"] == code]


def _checkpointing_written(document) -> bool:
    """Some safe fix's edits write the checkpointing flag."""
    return any("gradient_checkpointing" in edit["content"] for finding in document["findings"]
               for edit in ((finding.get("fix") or {}).get("edits") or ())
               if (finding.get("fix") or {}).get("applicability") == "safe")


def test_the_reader_tells_a_wrapped_model_from_one_whose_inputs_require_grad():
    module = read_python(SAMPLE / "finetune.py")
    # `param.requires_grad_(False)` freezes: it is no remedy, and the remedy itself is commented out.
    assert module.wraps_in_adapters and not module.inputs_require_grad


@pytest.mark.parametrize("remedy", [
    "model.enable_input_require_grads()",
    "model = prepare_model_for_kbit_training(model)",
    "model.get_input_embeddings().register_forward_hook(lambda m, i, o: o.requires_grad_(True))",
    "model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant': False})",
])
def test_each_remedy_counts(tmp_path, remedy):
    commented = "# model.enable_input_require_grads()  # needed with an adapter"
    text = (SAMPLE / "finetune.py").read_text().replace(commented, remedy)
    (tmp_path / "finetune.py").write_text(text)
    assert read_python(tmp_path / "finetune.py").inputs_require_grad


def test_checkpointing_is_reported_but_never_flipped_without_the_remedy(tmp_path, cli):
    folder = _job(tmp_path)
    _, document = cli.check_json(folder, ".", *PORT)
    (tl102,) = _fixes(document, "TL102")
    assert tl102["applicability"] == "display-only"
    assert "enable_input_require_grads" in tl102["message"] and "finetune.py" in tl102["message"]
    assert not _checkpointing_written(document)
    before = (folder / "lora_finetune.sh").read_text()
    cli.run(folder, "fix", ".", *PORT)
    assert "gradient_checkpointing" not in (folder / "lora_finetune.sh").read_text()
    assert (folder / "lora_finetune.sh").read_text() != before  # the GPU count is still ported


@pytest.mark.parametrize("edit", [
    # The script makes the inputs require grad.
    ("script", lambda text: text.replace("# model.enable_input_require_grads()", "model.enable_input_require_grads()")),
    # The launch picks a non-reentrant checkpoint.
    ("launcher", lambda text: text.replace("--use_lora \\", "--use_lora \\\n    --gradient_checkpointing_kwargs "
                                                           "'{\"use_reentrant\": false}' \\")),
    # A full fine-tune: no adapters, every layer trains.
    ("launcher", lambda text: text.replace("--bf16 --use_lora", "--bf16")),
    # TRL's trainer may make the inputs require grad itself: no claim.
    ("script", lambda text: text.replace("from transformers import AutoModelForCausalLM, Trainer",
                                         "from transformers import AutoModelForCausalLM\nfrom trl import SFTTrainer")
     .replace("trainer = Trainer(", "trainer = SFTTrainer(")),
])
def test_the_port_turns_checkpointing_on_when_nothing_stops_it(tmp_path, cli, edit):
    where, change = edit
    folder = _job(tmp_path, script_edit=change if where == "script" else None,
                  launcher_edit=change if where == "launcher" else None)
    _, document = cli.check_json(folder, ".", *PORT)
    assert all(fix.get("applicability") == "safe" for fix in _fixes(document, "TL102"))
    assert _checkpointing_written(document)


def test_a_trained_embedding_gives_the_inputs_a_grad(tmp_path, cli):
    folder = _job(tmp_path, launcher_edit=lambda text: text.replace(
        "--use_lora \\", "--use_lora \\\n    --lora_modules_to_save embed_tokens,lm_head \\"),
        script_edit=lambda text: text.replace("    use_lora: bool = field(default=False)",
                                              "    use_lora: bool = field(default=False)\n"
                                              "    lora_modules_to_save: str = field(default='')"))
    _, document = cli.check_json(folder, ".", *PORT)
    assert all(fix.get("applicability") == "safe" for fix in _fixes(document, "TL102"))


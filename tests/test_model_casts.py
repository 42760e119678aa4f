"""A model cast after loading (`model = model.half()`, `model.to(torch.bfloat16)`) decides the dtype its weights train
in, whatever `from_pretrained` loaded. Written after ChatGLM's P-tuning/LoRA/full fine-tuning scripts, which load in
fp32 and cast in the branch of each mode, and which their READMEs run on one 24 GB card."""
from __future__ import annotations

import shutil

from tests.conftest import SAMPLES
from trainlint.core import Unknown
from trainlint.readers.python import read_python

SAMPLE = SAMPLES / "model_casts"


def _run(cli, tmp_path, launcher_text: str) -> dict:
    shutil.copytree(SAMPLE, tmp_path / "repo")
    (tmp_path / "repo" / "run.sh").write_text(launcher_text)
    _, document = cli.check_json(tmp_path / "repo", "run.sh", "--isolated", "--no-cache", "--gpu", "rtx3090")
    return document


def test_casts_of_the_loaded_model_are_read_and_others_are_not():
    module = read_python(SAMPLE / "main.py")
    casts = [(o.setting.text, o.target) for o in module.overrides if o.name == "torch_dtype"]
    # The prefix encoder's own cast (a sub-module) and a batch's (a tensor) are no cast of the model.
    assert casts == [("model.half()", "model"), ("model.to(torch.bfloat16)", "model"), ("model.float()", "model")]
    assert all(isinstance(o.setting.value, Unknown) for o in module.overrides if o.name == "torch_dtype")


def test_a_cast_in_one_branch_of_several_leaves_16_bit_weights_possible(cli, tmp_path):
    document = _run(cli, tmp_path, (SAMPLE / "lora.sh").read_text())
    run = document["runs"][0]
    # Loaded in fp32, 6.2B parameters are 23 GiB, over the card: the LoRA branch casts them to bf16.
    assert [f["code"] for f in document["findings"] if f["severity"] == "error"] == []
    assert "the dtype the weights are loaded in is computed in code: assumed 16-bit" in run["memory"]["unknowns"]
    # The branch the launch takes (`--lora_r 32`) gives the LoraConfig its rank.
    assert run["settings"]["lora_r"]["value"] == 32


def test_an_unconditional_cast_is_the_weights_dtype(cli, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "repo")
    main = tmp_path / "repo" / "main.py"
    text = main.read_text()
    start, end = text.index("    if model_args.pre_seq_len"), text.index("    trainer = Seq2SeqTrainer")
    main.write_text(text[:start] + "    model = model.half()\n" + text[end:])
    (tmp_path / "repo" / "run.sh").write_text((SAMPLE / "lora.sh").read_text().replace("    --lora_r 32\n", ""))
    _, document = cli.check_json(tmp_path / "repo", "run.sh", "--isolated", "--no-cache", "--gpu", "rtx3090")
    dtype = document["runs"][0]["settings"]["torch_dtype"]
    assert (dtype["value"], dtype["path"], dtype["line"]) == ("torch.float16", "main.py", 23)


def test_a_cast_chained_on_the_load_is_read(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nfrom transformers import AutoModel\n"
                      "model = AutoModel.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True).half().cuda()\n"
                      "batch = torch.zeros(3).half()\n")
    module = read_python(script)
    assert [(o.name, o.setting.value) for o in module.overrides] == [("torch_dtype", "torch.float16")]

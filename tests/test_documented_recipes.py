"""A file of arguments whose launch command lives in a README (alignment-handbook, open-r1, SimPO): the command a
Markdown document shows is the recipe's job, with the accelerate config and entry script it names. Written after
those repositories' READMEs: a `shell` block, a `console` block with a `$ ` prompt and a continuation, a command
under a list item naming a script the tree no longer holds, a Python block and a shown output."""
from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import write_tree
from trainlint.checks._examples import job
from trainlint.readers.markdown import read_documented_commands, shell_lines

SAMPLE = Path(__file__).parent / "samples" / "documented_recipes"
_ARGS = ("--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")


def _runs(cli, folder: Path = SAMPLE):
    _, document = cli.check_json(folder, *_ARGS)
    return {run["id"]: run for run in document["runs"]}, document


def test_a_recipe_the_readme_starts_is_the_job_of_that_command(cli):
    runs, _ = _runs(cli)
    job = runs["README.md:8"]
    assert (job["launcher"], job["entry"]) == ("accelerate", "scripts/run_sft.py")
    settings = job["settings"]
    # The sharding and the process count come from the accelerate config the command names ...
    assert (settings["zero_stage"]["value"], settings["zero_stage"]["path"]) == (3, "configs/zero3.yaml")
    assert (settings["world_size"]["value"], settings["world_size"]["path"]) == (8, "configs/zero3.yaml")
    # ... and the rest from the recipe, which is no longer a job of its own.
    assert settings["per_device_train_batch_size"]["path"] == "recipes/zephyr/sft/config_full.yaml"
    assert "recipes/zephyr/sft/config_full.yaml" not in runs


def test_trls_config_flag_in_a_prompted_console_block(cli):
    runs, _ = _runs(cli)
    job = runs["README.md:14"]  # `$ accelerate launch ... \` with `--config` on the next line
    assert job["entry"] == "src/distill.py"
    assert job["settings"]["max_seq_length"]["path"] == "recipes/distill/config.yaml"
    assert job["settings"]["zero_stage"]["value"] == 3


def test_a_command_naming_a_script_the_tree_lacks_leaves_the_recipe_by_itself(cli):
    runs, document = _runs(cli)
    assert runs["recipes/orphan/config.yaml"]["launcher"] == "arguments-file"
    # A document is no script bash runs: its missing script, its Python block and its shown output report nothing.
    assert [f for f in document["findings"] if f["path"] == "README.md"] == []
    assert not any(d.get("path") == "README.md" for d in document.get("diagnostics") or [])


def test_shell_lines_keep_their_place_and_blank_the_rest():
    data = (SAMPLE / "README.md").read_bytes()
    masked = shell_lines(data)
    original, kept = data.splitlines(), masked.splitlines()
    assert len(kept) == len(original) and len(masked) == len(data)  # every byte keeps its offset
    assert kept[7] == original[7] and kept[7].startswith(b"ACCELERATE_LOG_LEVEL=info accelerate launch")
    assert kept[13] == b"  " + original[13][2:]  # the prompt is blanked, so every column stays the document's
    assert kept[20].strip() == b""  # a Python block is no shell's
    assert kept[26] == original[26]  # a block indented under a list item, read with its indentation
    assert all(line.strip() == b"" for line, source in zip(kept, original) if source.startswith(b"#"))


def test_the_document_reader_reports_nothing_of_its_own():
    script = read_documented_commands(SAMPLE / "README.md")
    assert script.diagnostics == ()
    assert [launch.origin.line for launch in script.launches] == [8, 14, 27]


_LONE_SFT_RECIPE = """model_name_or_path: meta-llama/Meta-Llama-3-8B
torch_dtype: bfloat16
bf16: true
do_eval: true
eval_strategy: steps
gradient_accumulation_steps: 4
gradient_checkpointing: true
max_seq_length: 2048
output_dir: out
per_device_eval_batch_size: 8
per_device_train_batch_size: 8
"""


def test_a_fix_that_needs_a_key_no_known_parser_takes_is_refused_for_a_file_checked_by_itself(cli, tmp_path):
    """A lone file of arguments is read by a parser out of view: LoRA has no TrainingArguments field, and writing
    a guessed key (`lora_enable: true`) would make HfArgumentParser refuse the whole file."""
    (tmp_path / "config.yaml").write_text(_LONE_SFT_RECIPE)
    _, out, _ = cli.run(tmp_path, "fix", "config.yaml", "--isolated", "--unsafe-fixes", "--gpu", "a100-40gb",
                        "--num-gpus", "4")
    assert "lora" not in (tmp_path / "config.yaml").read_text()
    assert "sets `lora`" in out


def test_a_fix_of_a_documented_command_edits_the_document_in_place(cli, tmp_path):
    folder = tmp_path / "recipes"
    shutil.copytree(SAMPLE, folder)
    readme = folder / "README.md"
    before = readme.read_text()
    readme.write_text(before.replace("--config_file configs/zero3.yaml scripts/run_sft.py",
                                     "--config_file configs/zero3.yaml --num_processes 8 scripts/run_sft.py"))
    cli.run(folder, "fix", "--isolated", "--gpu", "a100-80gb", "--num-gpus", "4", "--preserve-effective-batch")
    after = readme.read_text()
    assert "--config_file configs/zero3.yaml --num_processes 4 scripts/run_sft.py" in after
    # Only that word changed: the rest of the document is as it was.
    assert after.replace("--num_processes 4", "") == before.replace(
        "--config_file configs/zero3.yaml scripts/run_sft.py", "--config_file configs/zero3.yaml  scripts/run_sft.py")


def test_a_document_named_by_itself_has_a_job_for_each_training_command_it_shows(cli, tmp_path):
    """`trainlint check docs/train.md`: Chat-UniVi and Video-ChatGPT document their launch only there. Scanned as
    part of a folder, such a command is no job: only a recipe no launcher runs takes a document's command."""
    files = job("--per_device_train_batch_size 4\n--model_max_length 2048")
    command = files.pop("finetune.sh").split("\n", 1)[1]
    write_tree(tmp_path, {**files, "docs/train.md": f"# Training\n\nOn 8 GPUs:\n\n```bash\n{command}```\n\n"
                                                    "```bash\npython scripts/gone.py --per_device_train_batch_size 4\n"
                                                    "```\n"})
    _, document = cli.check_json(tmp_path, "docs/train.md", *_ARGS)
    [run] = document["runs"]  # the second command names a script the tree lacks: not this tree's job
    assert run["id"] == "docs/train.md:6" and run["entry"] == "train.py"
    batch = run["settings"]["per_device_train_batch_size"]
    assert (batch["value"], batch["path"], batch["line"]) == (4, "docs/train.md", 7)
    _, folder = cli.check_json(tmp_path, ".", *_ARGS)
    assert [run["id"] for run in folder["runs"]] == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["```bash", "```", "~~~sh", "    ```", "$ torchrun train.py \\", "  --bf16 True",
                                 "text with `code`", "", "> quoted", "- item", "\r", "é ünïcode", "```python",
                                 "deepspeed train.py --deepspeed ds.json"]), max_size=40),
       st.sampled_from(["\n", "\r\n"]))
def test_any_document_keeps_every_byte_offset_and_reads_without_error(lines, ending):
    data = ending.join(lines).encode()
    masked = shell_lines(data)
    assert masked == b"" or len(masked) == len(data)
    assert all(kept in (source, source.replace(b"$ ", b"  ", 1)) or not kept.strip()
               for kept, source in zip(masked.splitlines(), data.splitlines()))

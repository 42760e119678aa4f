"""Behaviour of the shell launcher reader on small scripts that reproduce real launcher constructs."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest

from trainlint.core import Origin, Setting, SourceKind, Unknown
from trainlint.readers.facts import Flow, Launch, ShellScript
from trainlint.readers.shell import read_shell

SAMPLES = Path(__file__).parent / "samples" / "shell"


def read_text(tmp_path: Path, text: str, name: str = "run.sh") -> ShellScript:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return read_shell(path)


def only_launch(script: ShellScript) -> Launch:
    assert len(script.launches) == 1, [launch.launcher for launch in script.launches]
    return script.launches[0]


def values(settings) -> List[object]:
    return [setting.value for setting in settings]


def after(launch: Launch, flag: str) -> Setting:
    """The script argument that follows `flag`."""
    args = list(launch.script_args)
    for index, setting in enumerate(args):
        if setting.value == flag:
            return args[index + 1]
    raise AssertionError(f"{flag} not among {values(args)}")


def span_of(data: bytes, needle: bytes, occurrence: int = 0) -> tuple:
    start = -1
    for _ in range(occurrence + 1):
        start = data.index(needle, start + 1)
    return start, start + len(needle)


def assert_at(origin: Optional[Origin], data: bytes, needle: bytes, occurrence: int = 0) -> None:
    assert origin is not None
    assert (origin.start_byte, origin.end_byte) == span_of(data, needle, occurrence)


# ----------------------------------------------------------------------------- variables
def test_flag_value_from_variable_has_use_origin_and_assignment_via(tmp_path):
    script = read_text(tmp_path, "BATCH=16\ndeepspeed train.py --per_device_train_batch_size $BATCH\n")
    setting = after(only_launch(script), "--per_device_train_batch_size")
    assert setting.value == "16"
    assert setting.kind is SourceKind.LAUNCHER_FLAG
    assert setting.text == "$BATCH"
    assert setting.origin == Origin(script.path, 2, 50, 2, 56, 58, 64)
    (assignment,) = setting.via
    assert assignment.kind is SourceKind.SHELL_VARIABLE
    assert assignment.value == "16" and assignment.text == "16"
    assert assignment.origin == Origin(script.path, 1, 7, 1, 9, 6, 8)
    assert setting.head() is assignment


def test_default_word_is_the_origin_when_the_variable_is_unset(tmp_path):
    text = "GPUS_USED=${NUM_GPUS:-8}\ntorchrun --nproc_per_node $GPUS_USED --nnodes ${NODES:-1} t.py\n"
    script = read_text(tmp_path, text)
    data = text.encode()
    launch = only_launch(script)
    nproc, nnodes = launch.launcher_args[1], launch.launcher_args[3]
    assert nproc.value == "8"
    chain = nproc.chain()
    assert [s.text for s in chain] == ["$GPUS_USED", "${NUM_GPUS:-8}", "8"]
    assert_at(chain[-1].origin, data, b"8")
    assert nproc.head().origin == chain[-1].origin
    assert nnodes.value == "1" and nnodes.text == "${NODES:-1}"
    assert_at(nnodes.via[0].origin, data, b"1", occurrence=0)


def test_assign_default_operator_sets_the_variable(tmp_path):
    text = ": ${ACCUM:=4}\ndeepspeed t.py --gradient_accumulation_steps $ACCUM\n"
    setting = after(only_launch(read_text(tmp_path, text)), "--gradient_accumulation_steps")
    assert setting.value == "4"
    assert_at(setting.head().origin, text.encode(), b"4")


def test_export_local_declare_and_mixed_case_names(tmp_path):
    text = (
        "export Max_Len=2048\n"
        "declare -x LR=2e-5\n"
        "declare Plain=3\n"
        "deepspeed t.py --model_max_length \"${Max_Len}\" --lr $LR --n $Plain --q '$LR'\n"
    )
    launch = only_launch(read_text(tmp_path, text))
    assert after(launch, "--model_max_length").value == "2048"
    assert after(launch, "--model_max_length").text == '"${Max_Len}"'
    assert after(launch, "--lr").value == "2e-5"
    assert after(launch, "--n").value == "3"
    assert after(launch, "--q").value == "$LR"  # single quotes do not expand
    assert set(launch.env) == {"Max_Len", "LR"}


def test_unset_and_environment_variables_are_unknown_with_reasons(tmp_path):
    text = "# BATCH=64\npython train.py --batch $BATCH --world $WORLD_SIZE --pos $1 --rand $RANDOM\n"
    launch = only_launch(read_text(tmp_path, text))
    assert after(launch, "--batch").value == Unknown("$BATCH is not set in this script (environment)")
    assert after(launch, "--world").value == Unknown("$WORLD_SIZE is not set in this script (environment)")
    assert isinstance(after(launch, "--pos").value, Unknown)
    assert "positional" in after(launch, "--pos").value.reason
    assert isinstance(after(launch, "--rand").value, Unknown)


def test_arithmetic_expansion(tmp_path):
    text = (
        "MICRO=8\n"
        "ACCUM=$((32 / MICRO))\n"
        "NEG=$(( -7 / 2 ))\n"
        "MOD=$(( -7 % 3 ))\n"
        "BAD=$(( GLOBAL / MICRO ))\n"
        "deepspeed t.py --a $ACCUM --b $NEG --c $MOD --d $BAD --e $(( (MICRO + 2) * 3 ))\n"
    )
    launch = only_launch(read_text(tmp_path, text))
    assert after(launch, "--a").value == "4"
    assert [s.text for s in after(launch, "--a").chain()] == ["$ACCUM", "$((32 / MICRO))", "8"]
    assert after(launch, "--b").value == "-3"  # bash truncates toward zero
    assert after(launch, "--c").value == "-1"
    bad = after(launch, "--d").value
    assert isinstance(bad, Unknown) and "$GLOBAL is not set" in bad.reason
    assert after(launch, "--e").value == "30"


def test_command_substitution_is_unknown(tmp_path):
    text = (
        "GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)\n"
        "HERE=`pwd`\n"
        "torchrun --nproc_per_node $GPUS_PER_NODE t.py --out $HERE\n"
    )
    launch = only_launch(read_text(tmp_path, text))
    nproc = launch.launcher_args[1]
    assert nproc.value == Unknown(
        "command substitution `$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)`")
    assert nproc.via[0].text.startswith("$(nvidia-smi")
    assert after(launch, "--out").value == Unknown("command substitution ``pwd``")


def test_branches_make_values_unknown_and_name_both(tmp_path):
    script = read_shell(SAMPLES / "branches.sh")
    data = (SAMPLES / "branches.sh").read_bytes()
    launch = only_launch(script)
    seq = after(launch, "--seq_len")
    assert isinstance(seq.value, Unknown)
    assert "`1024` at line 10" in seq.value.reason and "`4096` at line 12" in seq.value.reason
    assert [s.value for s in seq.via] == ["1024", "4096"]
    assert_at(seq.via[0].origin, data, b"1024")
    nodes = launch.launcher_args[3]  # $NUM_MACHINES: assigned only when MASTER_ADDR is empty
    assert isinstance(nodes.value, Unknown) and "environment" in nodes.value.reason
    assert [s.value for s in nodes.via] == ["1"]
    # a variable defined only in a comment stays unset
    assert after(launch, "--batch").value == Unknown("$BATCH is not set in this script (environment)")
    assert launch.entry.value == "run/pretrain.py"
    assert script.diagnostics == ()


# ----------------------------------------------------------------------------- word splitting and flows
def test_unquoted_string_variable_splits_into_words_with_inner_origins():
    path = SAMPLES / "split_args.sh"
    data = path.read_bytes()
    launch = only_launch(read_shell(path))
    assert launch.launcher == "torchrun"
    assert values(launch.launcher_args) == ["--nproc_per_node", "4", "--nnodes", "1", "--master_port", "29400"]
    flag, count = launch.launcher_args[0], launch.launcher_args[1]
    assert_at(flag.origin, data, b"--nproc_per_node")
    assert flag.origin.line == 8 and flag.origin.column == 5 and flag.via == ()
    assert_at(count.origin, data, b"$GPU_COUNT")
    assert count.text == "$GPU_COUNT"
    assert count.origin.line == 8
    assert [s.text for s in count.chain()] == ["$GPU_COUNT", "${GPUS:-4}", "4"]
    port = launch.launcher_args[5]
    assert port.text == "$RDZV_PORT" and port.via[0].text == "29400"
    assert launch.entry.value == "src/train_vlm.py" and launch.entry.origin.line == 16
    assert after(launch, "--output_dir").value == "runs/bs8"
    assert after(launch, "--report_to").value == "none"


def test_flows_record_every_use_of_an_assignment():
    path = SAMPLES / "split_args.sh"
    data = path.read_bytes()
    script = read_shell(path)
    micro_source = span_of(data, b"MICRO=8")
    micro_value = (micro_source[0] + len("MICRO="), micro_source[1])
    targets = [(f.target.start_byte, f.target.end_byte) for f in script.flows
               if (f.source.start_byte, f.source.end_byte) == micro_value]
    # $((32 / MICRO)), --per_device_train_batch_size $MICRO and "runs/bs${MICRO}"
    assert len(targets) == 3
    assert span_of(data, b"$MICRO \\") [0] in [t[0] for t in targets]
    assert all(isinstance(flow, Flow) for flow in script.flows)


def test_array_expansion_yields_one_word_per_element_at_the_element():
    path = SAMPLES / "eval_loop.sh"
    data = path.read_bytes()
    script = read_shell(path)
    assert [(l.launcher, l.entry.value, l.entry_is_module) for l in script.launches] == [
        ("python", "vlm.eval.answer", True), ("python", "tools/score.py", False)]
    loop = script.launches[0]
    temperature = after(loop, "--temperature")
    assert temperature.value == "0"
    assert_at(after(loop, "--max_new_tokens").origin, data, b"64")
    assert isinstance(after(loop, "--shard").value, Unknown)
    assert isinstance(loop.env["CUDA_VISIBLE_DEVICES"].value, Unknown)
    assert script.diagnostics == ()


def test_adjacent_expansions_in_a_path_stay_one_word(tmp_path):
    text = "A=x\nB=y\nOUT=./p/$A/$B/merge.jsonl\npython t.py --src $OUT --dst ./q/$A/$B/z.json\n"
    launch = only_launch(read_text(tmp_path, text))
    assert values(launch.script_args) == ["--src", "./p/x/y/merge.jsonl", "--dst", "./q/x/y/z.json"]
    assert [s.value for s in after(launch, "--dst").via] == ["x", "y"]


def test_list_flag_continued_over_lines(tmp_path):
    text = ("DIR=data\n"
            "deepspeed t.py --data_path ${DIR}/a.json \\\n"
            "        ${DIR}/b.json ${DIR}/c.json \\\n"
            "    --bf16 True\n")
    launch = only_launch(read_text(tmp_path, text))
    assert values(launch.script_args) == ["--data_path", "data/a.json", "data/b.json", "data/c.json", "--bf16",
                                          "True"]


# ----------------------------------------------------------------------------- launch detection
@pytest.mark.parametrize("command, launcher, launcher_args, entry, module, first_script_arg", [
    ("deepspeed train.py --x 1", "deepspeed", [], "train.py", False, "--x"),
    ("deepspeed --include localhost:0,1,2,3 --master_port 29501 train.py --x 1", "deepspeed",
     ["--include", "localhost:0,1,2,3", "--master_port", "29501"], "train.py", False, "--x"),
    ("deepspeed --num_gpus=2 --num_nodes 1 --hostfile hosts train.py", "deepspeed",
     ["--num_gpus=2", "--num_nodes", "1", "--hostfile", "hosts"], "train.py", False, None),
    ("torchrun --standalone --nproc-per-node 8 -m pkg.train --y 2", "torchrun",
     ["--standalone", "--nproc-per-node", "8", "-m"], "pkg.train", True, "--y"),
    ("torchrun --rdzv_backend c10d --rdzv_endpoint=h:1 --nnodes 2 run.py", "torchrun",
     ["--rdzv_backend", "c10d", "--rdzv_endpoint=h:1", "--nnodes", "2"], "run.py", False, None),
    ("python -m torch.distributed.launch --nproc_per_node 4 --use_env main.py --z", "torch.distributed.launch",
     ["--nproc_per_node", "4", "--use_env"], "main.py", False, "--z"),
    ("python3 -m torch.distributed.run --nproc_per_node=4 main.py", "torch.distributed.run",
     ["--nproc_per_node=4"], "main.py", False, None),
    ("accelerate launch --config_file acc.yaml --num_processes 8 --mixed_precision bf16 sft.py --lr 1",
     "accelerate", ["--config_file", "acc.yaml", "--num_processes", "8", "--mixed_precision", "bf16"], "sft.py",
     False, "--lr"),
    ("python -u train.py --bs 4", "python", ["-u"], "train.py", False, "--bs"),
    ("python -m llava.eval.model_vqa --q 1", "python", [], "llava.eval.model_vqa", True, "--q"),
    ("llamafactory-cli train examples/sft.yaml learning_rate=1e-5", "llamafactory-cli", [], "examples/sft.yaml",
     False, "learning_rate=1e-5"),
    ("nohup /usr/bin/python3.10 train.py", "python", [], "train.py", False, None),
])
def test_launchers(tmp_path, command, launcher, launcher_args, entry, module, first_script_arg):
    launch = only_launch(read_text(tmp_path, command + "\n"))
    assert launch.launcher == launcher
    assert values(launch.launcher_args) == launcher_args
    assert launch.entry.value == entry and launch.entry_is_module is module
    assert (launch.script_args[0].value if launch.script_args else None) == first_script_arg


@pytest.mark.parametrize("text", [
    'echo "deepspeed train.py --x 1"\n',
    "# torchrun train.py\n",
    "python -c 'import torch; print(torch.cuda.device_count())'\n",
    "accelerate config\n",
    "llamafactory-cli chat cfg.yaml\n",
    "python\n",
])
def test_not_launches(tmp_path, text):
    assert read_text(tmp_path, text).launches == ()


def test_env_prefix_exports_pipe_and_redirect(tmp_path):
    text = (
        "export NCCL_DEBUG=INFO\n"
        "LOCAL_ONLY=1\n"
        "HF_DATASETS_OFFLINE=1 CUDA_VISIBLE_DEVICES=0,1 deepspeed t.py --a 1 2>&1 | tee train.log\n"
    )
    launch = only_launch(read_text(tmp_path, text))
    assert set(launch.env) == {"NCCL_DEBUG", "HF_DATASETS_OFFLINE", "CUDA_VISIBLE_DEVICES"}
    assert launch.env["CUDA_VISIBLE_DEVICES"].value == "0,1"
    assert launch.env["CUDA_VISIBLE_DEVICES"].origin.column == 44
    assert values(launch.script_args) == ["--a", "1"]
    assert launch.origin.line == 3 and launch.origin.column == 1
    assert launch.origin.end_column == len("HF_DATASETS_OFFLINE=1 CUDA_VISIBLE_DEVICES=0,1 deepspeed t.py --a 1") + 1


def test_passthrough_arguments(tmp_path):
    text = 'python -m torch.distributed.launch --nproc_per_node 2 ./p/train.py "$@" --x 1\n'
    launch = only_launch(read_text(tmp_path, text))
    assert launch.passthrough is True
    assert values(launch.script_args) == ["--x", "1"]
    plain = only_launch(read_text(tmp_path, "deepspeed t.py --x 1\n"))
    assert plain.passthrough is False


def test_launches_in_functions_loops_and_background(tmp_path):
    text = (
        "train() {\n"
        "    local STEPS=100\n"
        "    deepspeed t.py --max_steps $STEPS\n"
        "}\n"
        "unused() { torchrun u.py; }\n"
        "for LR in 1e-5 2e-5; do\n"
        "    python sweep.py --lr $LR &\n"
        "done\n"
        "wait\n"
        "train\n"
        "echo $STEPS\n"
    )
    script = read_text(tmp_path, text)
    assert [(l.launcher, l.entry.value) for l in script.launches] == [
        ("deepspeed", "t.py"), ("torchrun", "u.py"), ("python", "sweep.py")]
    assert after(script.launches[0], "--max_steps").value == "100"
    assert isinstance(after(script.launches[2], "--lr").value, Unknown)


def test_working_directory(tmp_path):
    text = (
        "cd sub\n"
        "cd ../work/dir\n"
        "deepspeed a.py\n"
        "cd /abs/repo\n"
        "deepspeed b.py\n"
        "cd $(dirname $0)\n"
        "deepspeed c.py\n"
        "cd rel\n"
        "deepspeed d.py\n"
        "cd ~/proj\n"
        "(cd inner && deepspeed e.py)\n"
        "deepspeed f.py\n"
    )
    script = read_text(tmp_path, text)
    assert [l.cwd for l in script.launches] == ["work/dir", "/abs/repo", None, None, "~/proj/inner", "~/proj"]
    assert script.diagnostics == ()


# ----------------------------------------------------------------------------- srun bash -c and SLURM
def test_srun_bash_c_inner_command_and_exports():
    path = SAMPLES / "slurm_wrapped.sh"
    data = path.read_bytes()
    script = read_shell(path)
    launch = only_launch(script)
    assert launch.launcher == "torchrun" and launch.wrapper == "srun"
    assert launch.entry.value == "train/sft.py"
    assert_at(launch.entry.origin, data, b"train/sft.py")
    nproc = launch.launcher_args[3]
    assert nproc.value == "8"
    assert_at(nproc.origin, data, b"$PER_NODE")
    assert nproc.origin.line == 12
    assert_at(nproc.via[0].origin, data, b"8", occurrence=1)  # the 8 of PER_NODE=8 (after gpu:8)
    assert after(launch, "--learning_rate").value == "1e-5"
    workers = after(launch, "--dataloader_num_workers").value
    assert isinstance(workers, Unknown) and "not exported" in workers.reason
    assert isinstance(launch.launcher_args[1].value, Unknown)  # $SLURM_NNODES comes from SLURM
    assert set(launch.env) == {"PER_NODE", "LR"}
    lr_use = span_of(data, b"${LR}")
    assert any((f.target.start_byte, f.target.end_byte) == lr_use for f in script.flows)
    assert launch.origin.line == 12 and launch.origin.end_line == 16


def test_sbatch_directives():
    path = SAMPLES / "slurm_wrapped.sh"
    data = path.read_bytes()
    sbatch = read_shell(path).sbatch
    assert {key: s.value for key, s in sbatch.items()} == {
        "job-name": "vlm-sft", "nodes": "2", "ntasks-per-node": "1", "gres": "gpu:8"}
    assert all(s.kind is SourceKind.SBATCH for s in sbatch.values())
    assert_at(sbatch["gres"].origin, data, b"gpu:8")
    assert sbatch["nodes"].origin.line == 3 and sbatch["nodes"].origin.column == 17


def test_sbatch_short_options_and_stop_at_first_command(tmp_path):
    text = ("#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gpus-per-node 8  # all of them\n#SBATCH -n8\n"
            "echo start\n#SBATCH --nodes=9\n")
    sbatch = read_text(tmp_path, text).sbatch
    assert {key: s.value for key, s in sbatch.items()} == {"nodes": "4", "gpus-per-node": "8", "ntasks": "8"}
    assert sbatch["ntasks"].origin.column == 11 and sbatch["ntasks"].text == "8"


# ----------------------------------------------------------------------------- diagnostics
def test_broken_continuation_with_comment_names_the_orphaned_flag():
    path = SAMPLES / "broken_continuation.sh"
    data = path.read_bytes()
    script = read_shell(path)
    launch = only_launch(script)
    assert values(launch.script_args)[-2:] == ["--logging_dir", "logs"]
    (diagnostic,) = script.diagnostics
    assert diagnostic.kind == "broken-line-continuation"
    assert "--gradient_checkpointing" in diagnostic.message and "deepspeed" in diagnostic.message
    start = data.index(b"\\ # switch")
    end = data.index(b"\n", start)
    assert (diagnostic.origin.start_byte, diagnostic.origin.end_byte) == (start, end)
    assert diagnostic.origin.line == 5 and diagnostic.origin.column == 24


def test_broken_continuation_trailing_whitespace_and_end_of_command(tmp_path):
    text = "torchrun t.py --a 1 \\  \n    --b 2\n"
    (diagnostic,) = read_text(tmp_path, text).diagnostics
    assert diagnostic.kind == "broken-line-continuation"
    assert (diagnostic.origin.start_byte, diagnostic.origin.end_byte) == (20, 23)
    assert "trailing whitespace" in diagnostic.message and "--b" in diagnostic.message
    text = "torchrun t.py --a 1 \\\n    --report_to \"none\" \\ # wandb\n\n"
    (diagnostic,) = read_text(tmp_path, text).diagnostics
    assert diagnostic.origin.line == 2 and diagnostic.origin.column == 24
    assert "stray" in diagnostic.message


@pytest.mark.parametrize("text", [
    "deepspeed t.py --a 1 \\\n    --b 2\n",
    'deepspeed t.py --a "x \\ y" \\\n    --b 2\n',
    "ls -la \\ # not a launch\n--b 2\n",
])
def test_no_false_broken_continuation(tmp_path, text):
    assert [d.kind for d in read_text(tmp_path, text).diagnostics] == []


def test_syntax_error_is_reported_and_reading_goes_on(tmp_path):
    text = "deepspeed a.py --x 1\nif [[ $X == y]]; then\n  echo\nfi\n"
    script = read_text(tmp_path, text)
    assert [l.entry.value for l in script.launches] == ["a.py"]
    errors = [d for d in script.diagnostics if d.kind == "syntax-error"]
    assert errors and "line 2" in errors[0].message and errors[0].origin.line == 2


def test_unmodelled_construct_in_a_launch_argument(tmp_path):
    text = "NAME=abc\npython t.py --run ${NAME^^}\necho ${NAME^^}\n"
    script = read_text(tmp_path, text)
    (diagnostic,) = script.diagnostics
    assert diagnostic.kind == "unmodelled-construct" and diagnostic.origin.line == 2
    assert isinstance(after(only_launch(script), "--run").value, Unknown)


def test_trim_and_length_operators(tmp_path):
    text = "P=out/run/model.bin\npython t.py --dir ${P%/*} --base ${P##*/} --n ${#P}\n"
    launch = only_launch(read_text(tmp_path, text))
    assert values(launch.script_args) == ["--dir", "out/run", "--base", "model.bin", "--n", "17"]


# ----------------------------------------------------------------------------- file problems
def test_missing_empty_and_binary_files(tmp_path):
    missing = read_shell(tmp_path / "nope.sh")
    assert missing.launches == () and missing.diagnostics[0].kind == "missing-file"
    (tmp_path / "empty.sh").write_bytes(b"")
    assert read_shell(tmp_path / "empty.sh") == ShellScript(path=read_shell(tmp_path / "empty.sh").path,
                                                            launches=())
    (tmp_path / "blob.sh").write_bytes(b"\x7fELF\x00\x01\x02deepspeed x.py")
    blob = read_shell(tmp_path / "blob.sh")
    assert blob.launches == () and blob.diagnostics[0].kind == "unreadable-file"


def test_crlf_line_endings_keep_byte_exact_origins(tmp_path):
    data = b"BATCH=4\r\ndeepspeed t.py \\\r\n  --bs $BATCH \\\r\n  --bf16 True\r\n"
    (tmp_path / "crlf.sh").write_bytes(data)
    script = read_shell(tmp_path / "crlf.sh")
    launch = only_launch(script)
    assert values(launch.script_args) == ["--bs", "4", "--bf16", "True"]
    assert_at(after(launch, "--bs").origin, data, b"$BATCH")
    assert_at(after(launch, "--bs").via[0].origin, data, b"4")
    assert after(launch, "--bs").origin.line == 3
    assert script.diagnostics == ()


def test_non_utf8_bytes_and_no_trailing_newline(tmp_path):
    data = "NOTE=caf\u00e9\n".encode("latin-1") + b"deepspeed t.py --note $NOTE --bs 2"
    (tmp_path / "latin.sh").write_bytes(data)
    launch = only_launch(read_shell(tmp_path / "latin.sh"))
    assert after(launch, "--note").value == "caf\ufffd"
    bs = after(launch, "--bs")
    assert bs.value == "2" and bs.origin.end_byte == len(data)
    note = after(launch, "--note").via[0]
    assert (note.origin.start_byte, note.origin.end_byte) == (5, 9)


@pytest.mark.parametrize("written, cwd", [
    ('cd "$(dirname "${BASH_SOURCE[0]}")/../sft/"', "../sft"),
    ('cd "$(dirname "$0")"', None),
    ("cd $(dirname $0)/..", ".."),
])
def test_a_cd_into_the_scripts_own_folder_is_followed(tmp_path, written, cwd):
    # `$0` and BASH_SOURCE name the script as invoked: before any other cd, their dirname is the script's folder.
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\n{written}\ndeepspeed main.py --per_device_train_batch_size 1\n")
    [launch] = read_shell(script).launches
    assert launch.cwd == cwd and not launch.cwd_unknown


def test_a_command_substitution_of_a_comment_is_an_empty_word():
    """`--flag value `# a note` \\`: bash runs the comment and the word expands to nothing, so every flag after it is
    still the command's (tree-sitter-bash reads the `#` as a comment that swallows the closing backquote)."""
    script = read_shell(SAMPLES / "commented_flags.sh")
    assert not script.diagnostics
    (launch,) = script.launches
    words = [arg.value for arg in launch.script_args]
    assert words == ["--dataset=my-instructions", "--dataset_format=alpaca", "--learning_rate", "0.0001",
                     "--per_device_train_batch_size", "1", "--model_name_or_path", "huggyllama/llama-7b",
                     "--source_max_len", "512", "--output_dir", "out"]
    model = launch.script_args[7]
    assert (model.origin.line, model.origin.column) == (7, 26)


def test_a_comment_substitution_inside_quotes_or_joined_to_a_word_is_not_blanked(tmp_path):
    script = read_text(tmp_path, 'python t.py --note "a `# b`" --x `#c`d\n')
    (launch,) = script.launches
    assert launch.script_args[0].value == "--note"
    # Inside quotes it expands to an empty string, not blanks: left to tree-sitter, which says what it cannot read.
    assert any("which bash accepts" in diagnostic.message for diagnostic in script.diagnostics)

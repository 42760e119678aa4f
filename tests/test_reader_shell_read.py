"""`read` fed by a here-doc or a here-string the script writes: values as bash reads them, at their bytes."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.test_reader_shell import after, assert_at, only_launch, read_text, values
from trainlint.core import Unknown
from trainlint.readers.shell import read_shell

SAMPLES = Path(__file__).parent / "samples" / "shell" / "read_input"

# What bash itself gives each variable of heredoc_forms.sh (printed with `printf '%q'`).
BASH_VALUES = {
    "--all": "--model llama-7b   --note \"two words\" 'single' 42 8 $MODEL \\ \\x\n  --last",
    "--first": "first line",
    "--joined": "first second",
    "--quoted": "--model $MODEL \\\n  --seed ${SEED:-1}",
    "--tabs": "--a\t1\n--b 2",
    "--tabs-joined": "--a \t\t--b 2",  # the line after a backslash-newline keeps its tabs
    "--one": "one",
    "--rest": "two  three  four",
    "--p1": "single",
    "--p2": "",
    "--p3": "",
    "--reply": "  no name  ",  # REPLY, when no name is given, keeps its blanks
    "--here": "here  llama-7b",
    "--keep": "  kept  \n",
    "--comma": "a b",
}


def test_read_from_here_docs_and_here_strings_gives_what_bash_gives():
    launch = only_launch(read_shell(SAMPLES / "heredoc_forms.sh"))
    assert {flag: after(launch, flag).value for flag in BASH_VALUES} == BASH_VALUES
    if shutil.which("bash") is not None:  # and the expected values are bash's own
        text = (SAMPLES / "heredoc_forms.sh").read_text()
        stub = "python() { shift; while [ $# -gt 0 ]; do printf '%s\\0%s\\0' \"$1\" \"$2\"; shift 2; done; }\n"
        out = subprocess.run(["bash", "-c", stub + text], capture_output=True, check=True, env={}).stdout
        items = out.decode().split("\0")[:-1]
        assert dict(zip(items[::2], items[1::2])) == BASH_VALUES


def test_a_value_read_from_a_here_doc_points_at_the_here_doc_bytes():
    path = SAMPLES / "heredoc_forms.sh"
    data = path.read_bytes()
    first = after(only_launch(read_shell(path)), "--first")
    # The variable's assignment is the part of the body `read` kept: the words of the first line.
    (assignment,) = first.via
    assert_at(assignment.origin, data, b"first line")


def test_a_command_read_from_a_here_doc_is_launched_with_each_word_at_its_bytes():
    path = SAMPLES / "launch_heredoc.sh"
    data = path.read_bytes()
    launch = only_launch(read_shell(path))
    assert launch.entry is not None and launch.entry.value == "mypkg.cli.train" and launch.entry_is_module
    assert_at(launch.entry.origin, data, b"mypkg.cli.train")
    assert values(launch.script_args) == [
        "--train.micro_batch_size", "4", "--data.name", '"my', 'data"', "--nodes", "1", "--steps", "200"]
    batch = after(launch, "--train.micro_batch_size")
    assert batch.origin.start_byte == data.index(b"4 \\") and batch.origin.end_byte - batch.origin.start_byte == 1
    assert_at(after(launch, "--nodes").origin, data, b"${NODES}")
    assert_at(after(launch, "--steps").origin, data, b"$((100*2))")
    # Quotes in an unquoted here-doc are characters: the value keeps them and splits inside them.
    assert_at(after(launch, "--data.name").origin, data, b'"my')


def test_read_from_other_input_is_unknown_with_the_reason():
    launch = only_launch(read_shell(SAMPLES / "read_elsewhere.sh"))
    reasons = {}
    for flag in ("--file", "--pipe", "--terminal", "--fd", "--counted", "--line", "--whole"):
        value = after(launch, flag).value
        reasons[flag] = value.reason if isinstance(value, Unknown) else value
    assert "args.txt" in reasons["--file"]
    assert "not set in this script" in reasons["--pipe"]  # a pipeline's `read` runs in a subshell
    assert "read from input" in reasons["--terminal"]
    assert "-u" in reasons["--fd"]
    assert "-n" in reasons["--counted"]
    # A command substitution may hold a newline, where `read` without -d would stop.
    assert "command substitution" in reasons["--line"] and "newline" in reasons["--line"]
    # With -d '' the whole body is read: only the substitution is unknown, the words around it are known.
    assert "command substitution" in reasons["--whole"] and "newline" not in reasons["--whole"]


def test_a_here_doc_body_starting_with_an_escaped_dollar_is_read_as_bash_reads_it(tmp_path):
    # tree-sitter-bash misreads this body; the reader lexes here-doc bodies itself.
    script = read_text(tmp_path, "X=1\nread -r -d '' A <<EOF\n\\$X \\\\$X --b 2\nEOF\n"
                                 "python train.py --a \"$A\"\n")
    assert after(only_launch(script), "--a").value == "$X \\1 --b 2"  # what bash gives


def test_a_back_quoted_command_in_a_here_doc_is_unknown(tmp_path):
    script = read_text(tmp_path, "read -r -d '' A <<EOF\n--a `hostname` --b 2\nEOF\npython train.py $A\n")
    launch = only_launch(script)
    assert after(launch, "--b").value == "2"
    value = after(launch, "--a").value
    assert isinstance(value, Unknown) and "hostname" in value.reason


def test_ifs_that_is_not_known_leaves_the_variables_unknown(tmp_path):
    script = read_text(tmp_path, "IFS=$SEP\nread -r A B <<< 'x y'\npython train.py --a \"$A\"\n")
    value = after(only_launch(script), "--a").value
    assert isinstance(value, Unknown) and "IFS" in value.reason


JOB = SAMPLES / "heredoc_job"


def test_a_job_launched_from_a_here_doc_is_checked_and_fixed_inside_the_here_doc(tmp_path, cli):
    folder = tmp_path / "job"
    shutil.copytree(JOB, folder)
    launcher = folder / "scripts" / "finetune.sh"
    before = launcher.read_text()
    _, doc = cli.check_json(folder, ".", "--gpu", "a100-40gb", "--select", "TL103")
    (finding,) = doc["findings"]
    assert finding["code"] == "TL103"
    assert (finding["line"], finding["column"], finding["end_column"]) == (10, 34, 36)  # the `16` in the body

    cli.run(folder, "fix", ".", "--gpu", "a100-40gb", "--select", "TL103")

    assert launcher.read_text() == before.replace("--per_device_eval_batch_size 16 \\",
                                                  "--per_device_eval_batch_size 8 \\")
    assert cli.codes(folder, ".", "--gpu", "a100-40gb", "--select", "TL103") == []


def test_a_crlf_here_doc_continues_its_lines_as_the_rest_of_the_script_does(tmp_path):
    script = read_text(tmp_path, "read -r -d '' X <<EOF\r\ntrain.py \\\r\n  --a 1\r\nEOF\r\ndeepspeed $X\r\n")
    assert values(only_launch(script).script_args) == ["--a", "1"]


def test_an_expansion_in_a_here_doc_ends_where_bash_pairs_it():
    """A `)` inside quotes within `$( )` does not close it (the here-doc scanner is the file scanner's)."""
    from trainlint.readers.shell.certainty import expansion_end

    data = b'--tag $(echo "run)" | tr a b) --lr ${LR:-1e-5} `date`'
    spans = {data[i:expansion_end(data, i, len(data))] for i in (6, 35, 47)}
    assert spans == {b'$(echo "run)" | tr a b)', b"${LR:-1e-5}", b"`date`"}

"""A shell syntax error is reported only where bash itself rejects the script; what only tree-sitter-bash
fails to parse is an unmodelled construct, and the rest of the script is still read."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

from trainlint.core import DiagnosticKind, Unknown
from trainlint.readers.facts import Launch, ShellScript
from trainlint.readers.shell import read_shell
from trainlint.readers.shell.certainty import judge

SYNTAX_SAMPLES = sorted((Path(__file__).parent / "samples" / "shell" / "syntax").glob("*.sh"))


def kinds(script: ShellScript, kind: DiagnosticKind) -> List[int]:
    """Lines of the diagnostics of one kind."""
    return [d.origin.line for d in script.diagnostics if d.kind == kind and d.origin is not None]


def sample(name: str) -> ShellScript:
    return read_shell(next(path for path in SYNTAX_SAMPLES if path.name == name))


def flag(launch: Launch, name: str):
    args = list(launch.script_args)
    return next(args[index + 1].value for index, setting in enumerate(args) if setting.value == name)


def bash_rejects(path: Path) -> bool:
    """`bash -n` fails: a non-zero status, or an error printed (bash 5 exits 0 on a broken `[[ ]]`)."""
    checked = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    errors = [line for line in checked.stderr.splitlines() if line.strip() and "warning:" not in line]
    return checked.returncode != 0 or bool(errors)


def test_the_samples_cover_both_verdicts():
    names = [path.name for path in SYNTAX_SAMPLES]
    assert sum(name.startswith("accepted_") for name in names) >= 6
    assert sum(name.startswith("rejected_") for name in names) >= 5


@pytest.mark.parametrize("path", SYNTAX_SAMPLES, ids=lambda path: path.stem)
def test_a_syntax_error_exactly_when_the_sample_is_named_rejected(path):
    script = read_shell(path)
    assert bool(kinds(script, DiagnosticKind.SYNTAX_ERROR)) == path.name.startswith("rejected_")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("path", SYNTAX_SAMPLES, ids=lambda path: path.stem)
def test_a_syntax_error_exactly_when_bash_rejects_the_sample(path):
    script = read_shell(path)
    assert bool(kinds(script, DiagnosticKind.SYNTAX_ERROR)) == bash_rejects(path)
    assert bash_rejects(path) == path.name.startswith("rejected_")


def test_a_zsh_split_flag_is_unknown_and_the_lines_after_it_are_read():
    script = sample("accepted_zsh_split_flag.sh")
    assert kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT)[0] == 4
    (launch,) = script.launches
    assert launch.launcher == "torchrun"
    assert flag(launch, "--per_device_train_batch_size") == "8"
    assert isinstance(flag(launch, "--first_device"), Unknown)


def test_a_substring_expansion_in_an_array_leaves_the_other_variables_known():
    script = sample("accepted_array_of_substring.sh")
    (launch,) = script.launches
    assert flag(launch, "--per_device_train_batch_size") == "16"
    assert isinstance(flag(launch, "--devices"), Unknown)
    assert 5 in kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT)


@pytest.mark.parametrize("name", ["accepted_backslash_at_end_of_file.sh", "accepted_backslash_on_last_line.sh"])
def test_a_backslash_on_the_last_line_keeps_every_flag(name):
    script = sample(name)
    (launch,) = script.launches
    assert flag(launch, "--per_device_train_batch_size") == "4" and flag(launch, "--output_dir") == "out"
    # bash drops a `\` that continues into the end of the file: the script is read as bash reads it.
    assert kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT) == []


def test_a_backslash_before_a_carriage_return_on_the_last_line_stays_unmodelled(tmp_path):
    # `\` + CR escapes the carriage return (an argument of its own to bash), which the reader does not model.
    path = tmp_path / "crlf.sh"
    path.write_bytes(b"BATCH=4\r\npython finetune.py \\\r\n    --output_dir out \\\r\n")
    script = read_shell(path)
    assert kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT) == [3]


def test_a_here_doc_without_a_command_is_skipped():
    script = sample("accepted_heredoc_without_command.sh")
    (launch,) = script.launches
    assert launch.launcher == "accelerate" and flag(launch, "--per_device_train_batch_size") == "2"
    assert kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT) == [2]


def test_an_escaped_comparison_in_a_test_keeps_the_launch_below_it():
    script = sample("accepted_escaped_less_than.sh")
    (launch,) = script.launches
    assert launch.launcher == "python"
    assert kinds(script, DiagnosticKind.UNMODELLED_CONSTRUCT) == [4]


@pytest.mark.parametrize("name, line", [
    ("rejected_conditional_without_space.sh", 3),
    ("rejected_unterminated_quote.sh", 2),
    ("rejected_unterminated_command_substitution.sh", 2),
    ("rejected_fi_without_if.sh", 4),
    ("rejected_done_without_do.sh", 4),
    ("rejected_if_without_fi.sh", 2),
    ("rejected_redirection_without_file.sh", 3),
])
def test_a_syntax_error_points_at_what_bash_stops_on(name, line):
    script = sample(name)
    assert kinds(script, DiagnosticKind.SYNTAX_ERROR) == [line]
    assert all(isinstance(d.kind, DiagnosticKind) for d in script.diagnostics)


@pytest.mark.parametrize("text", [
    "f() ( echo )\n", "function f { echo; }\n", "for ((i=0;i<3;i++)); do echo; done\n",
    "case $x in a|b) echo;; (c) ;; *) ;; esac\n", "x=$(case a in b) echo;; esac)\n", "A=(a b\n# c\nd)\n",
    "echo ${x:-{a}}\n", "echo `if`\n", "cat <<-EOF\n\tx $(\n\tEOF\n", "echo $(( (1+2) * 3 ))\n",
    "while read -r a; do :; done < <(ls)\n", "ls 2>&1 |& cat &> log\n", "echo a \\\n",
    "echo a > \\\n  out.log\n", "exec 3<&-\n", "echo a >| b 2>&1\n", "[[ a > b ]]\n",
    # `do` right after the arithmetic of a C-style `for`, no `;` between (a sweep over LoRA ranks and epochs).
    "for (( e=0; e<6; e=e+1 )) do\n\tfor ((r=0; r<4; r=r+1 )) do echo $r; done\ndone\n",
])
def test_the_scanner_accepts_what_bash_accepts(text):
    verdict = judge(text.encode())
    assert verdict.certain and not verdict.rejected


@pytest.mark.parametrize("text", [
    "echo 'a\n", "x=${a\n", "echo `ls\n", "x=$((1+2\n", "}\n", ")\n", "echo a; ;;\n", "then\n", "{ echo\n",
    "for a in b; do echo; fi\n", "if true; fi\n", "case a in b) echo;;\n",
    "echo a >\n", "x=<A_PATH>\n", "echo a > # log\n", "echo a >; ls\n", "ls 2>&1 >| \n",
])
def test_the_scanner_rejects_what_bash_rejects(text):
    assert judge(text.encode()).rejected


def test_an_extglob_pattern_is_left_undecided():
    # bash -n rejects it, but a script that runs `shopt -s extglob` first runs it.
    verdict = judge(b"shopt -s extglob\nrm !(keep)\n")
    assert not verdict.certain and not verdict.rejected


def test_a_placeholder_left_in_a_template_is_named():
    script = sample("rejected_redirection_without_file.sh")
    [error] = [d for d in script.diagnostics if d.kind == DiagnosticKind.SYNTAX_ERROR]
    assert "`<YOUR_PROJECT_ROOT>` reads as redirections" in error.message and "placeholder" in error.message
    assert "redirection `>` has no file" in judge(b"echo a >\n").error.message

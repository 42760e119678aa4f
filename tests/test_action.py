"""The composite action, run step by step the way GitHub runs it: each `run:` script under
`bash -eo pipefail`, its `env:` expressions evaluated from the inputs, GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY and GITHUB_WORKSPACE set, step outputs passed on, `if:` honoured. The install
step is skipped with TRAINLINT_SKIP_INSTALL=1 (the package under test is already installed), except
where a test runs it for real."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import pytest
import yaml

from tests.conftest import SAMPLES

REPO = Path(__file__).resolve().parents[1]
ACTION = REPO / "action.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMPARISON = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")


def _load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@dataclass
class StepRun:
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    ran: List[str] = field(default_factory=list)
    outputs: Dict[str, Dict[str, str]] = field(default_factory=dict)
    summary: str = ""


class Runner:
    """Enough of the Actions runner for a composite action whose expressions are context lookups
    and comparisons with a string literal (the action must stay that simple)."""

    def __init__(self, workspace: Path, temp: Path, install: bool = False,
                 env: Optional[Dict[str, str]] = None) -> None:
        self.action = _load(ACTION)
        self.workspace = workspace
        self.temp = temp
        self.install = install
        self.env = env or {}

    def run(self, inputs: Dict[str, str]) -> StepRun:
        declared = self.action["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        context = {
            "inputs": {name: str(spec.get("default", "")) for name, spec in declared.items()},
            "github": {"action_path": str(REPO), "workspace": str(self.workspace)},
            "runner": {"temp": str(self.temp)},
            "steps": {},
        }
        context["inputs"].update(inputs)
        summary = self.temp / "step_summary.md"
        summary.write_text("")
        result = StepRun()
        for index, step in enumerate(self.action["runs"]["steps"]):
            if "if" in step and not self._truthy(step["if"], context):
                continue
            output_file = self.temp / f"output_{index}"
            output_file.write_text("")
            env = {
                **os.environ,
                # The installed package's `trainlint` and `python` come first, as after the install step.
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_ACTION_PATH": str(REPO),
                "GITHUB_OUTPUT": str(output_file),
                "GITHUB_STEP_SUMMARY": str(summary),
                "RUNNER_TEMP": str(self.temp),
            }
            env.pop("NO_COLOR", None)
            env.pop("TRAINLINT_SKIP_INSTALL", None)
            if not self.install:
                env["TRAINLINT_SKIP_INSTALL"] = "1"
            env.update(self.env)
            for name, value in (step.get("env") or {}).items():
                env[name] = self._substitute(str(value), context)
            cwd = self._substitute(step.get("working-directory", "${{ github.workspace }}"), context)
            script = self.temp / f"step_{index}.sh"
            script.write_text(step["run"])
            # `shell: bash` in a composite action runs `bash --noprofile --norc -eo pipefail {0}`.
            assert step.get("shell") == "bash"
            completed = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                                       env=env, capture_output=True, text=True, timeout=300)
            result.ran.append(step.get("id", step.get("name", str(index))))
            result.stdout += completed.stdout
            result.stderr += completed.stderr
            context["steps"][step.get("id", f"_{index}")] = {"outputs": _outputs(output_file)}
            result.exit_code = completed.returncode
            if completed.returncode != 0:
                break
        result.outputs = {name: value["outputs"] for name, value in context["steps"].items()}
        result.summary = summary.read_text()
        return result

    def _lookup(self, path: str, context) -> str:
        value = context
        for part in path.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return str(value)

    def _evaluate(self, expression: str, context) -> str:
        comparison = COMPARISON.match(expression)
        if comparison:
            left, operator, literal = comparison.groups()
            equal = self._lookup(left, context) == literal
            return "true" if equal == (operator == "==") else "false"
        assert re.fullmatch(r"[\w.-]+", expression), f"expression the test runner does not model: {expression}"
        return self._lookup(expression, context)

    def _substitute(self, text: str, context) -> str:
        return EXPRESSION.sub(lambda m: self._evaluate(m.group(1), context), text)

    def _truthy(self, condition: str, context) -> bool:
        match = EXPRESSION.fullmatch(condition.strip())
        value = self._evaluate(match.group(1) if match else condition.strip(), context)
        return value not in ("", "false", "0")


def _outputs(path: Path) -> Dict[str, str]:
    outputs = {}
    for line in path.read_text().splitlines():
        if "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The sample repository after a risky change: the ZeRO-3 config pins a micro-batch of 16
    (TL201, error, on line 8 of scripts/zero3.json, for both launchers that use it); the ZeRO-2
    launcher evaluates with a batch of 32 over 4 (TL103, warning, line 7)."""
    root = tmp_path / "workspace"
    shutil.copytree(SAMPLES / "ci_repo", root)
    config = root / "scripts" / "zero3.json"
    config.write_text(config.read_text().replace('"train_micro_batch_size_per_gpu": "auto"',
                                                 '"train_micro_batch_size_per_gpu": 16'))
    return root


@pytest.fixture
def runner(workspace: Path, tmp_path: Path) -> Runner:
    temp = tmp_path / "runner_temp"
    temp.mkdir()
    return Runner(workspace, temp)


ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)$")


def _annotations(stdout: str) -> List[Dict[str, str]]:
    found = []
    for line in stdout.splitlines():
        match = ANNOTATION.match(line)
        if match:
            properties = dict(part.split("=", 1) for part in match.group("properties").split(","))
            found.append({"level": match.group(1), **properties, "message": match.group("message")})
    return found


def test_default_inputs_annotate_the_right_lines_and_write_the_summary(runner):
    result = runner.run({"gpu": "a100-80gb"})
    assert result.ran == ["install", "check"]  # no SARIF step without the input
    assert result.exit_code == 1, result.stderr
    annotations = _annotations(result.stdout)
    assert [(a["level"], a["file"], a["line"], a["title"]) for a in annotations] == [
        ("error", "scripts/zero3.json", "8", "trainlint (TL201)"),
        ("error", "scripts/zero3.json", "8", "trainlint (TL201)"),
        ("warning", "scripts/eval_often_zero2.sh", "7", "trainlint (TL103)"),
    ]
    assert "is 16 but per_device_train_batch_size is 4" in " ".join(a["message"] for a in annotations)
    summary = result.summary
    assert summary.startswith("## trainlint\n")
    assert "| Severity | Code | Location | Message |" in summary
    assert "| 🔴 error | TL201 deepspeed-batch-mismatch | `scripts/zero3.json:8:37` |" in summary
    assert "`scripts/eval_often_zero2.sh:7:34`" in summary
    assert "<summary>Job scripts/full_zero3.sh:3 (deepspeed → train.py)</summary>" in summary


@pytest.mark.parametrize("fail_on,args,expected", [
    ("never", "", 0),
    ("error", "--select TL103", 0),  # only a warning left
    ("warning", "--select TL103", 1),
    ("info", "--ignore TL", 0),  # nothing at all
])
def test_the_step_exit_status_follows_fail_on(runner, fail_on, args, expected):
    result = runner.run({"fail-on": fail_on, "args": args})
    assert result.exit_code == expected, result.stderr


def test_sarif_is_written_validates_and_is_named_in_the_outputs(runner, workspace):
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.exists():
        pytest.skip("SARIF schema not available")
    result = runner.run({"sarif": "out/trainlint.sarif"})
    assert result.ran == ["install", "sarif", "check"]
    # The SARIF step never fails; the check still does, after the file is written.
    assert result.exit_code == 1, result.stderr
    assert result.outputs["sarif"] == {"file": "out/trainlint.sarif"}
    document = json.loads((workspace / "out" / "trainlint.sarif").read_text())
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator({**schema, "$ref": "#/definitions/Root"}).validate(document)
    results = document["runs"][0]["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results) == [
        ("TL103", "scripts/eval_often_zero2.sh", 7),
        ("TL201", "scripts/zero3.json", 8),
        ("TL201", "scripts/zero3.json", 8),
    ]
    # Annotations still go to the log, and the SARIF run does not add a second summary.
    assert len(_annotations(result.stdout)) == 3 and result.summary.count("## trainlint") == 1


def test_quoted_inputs_are_words_and_never_shell_code(runner, workspace):
    (workspace / "has space").mkdir()
    shutil.copy(workspace / "scripts" / "eval_often_zero2.sh", workspace / "has space" / "run.sh")
    result = runner.run({"paths": "'has space/run.sh'", "args": "--select 'TL103'", "fail-on": "never"})
    assert result.exit_code == 0, result.stderr
    assert [a["file"] for a in _annotations(result.stdout)] == ["has space/run.sh"]

    marker = workspace / "pwned"
    result = runner.run({"args": "$(touch pwned) `touch pwned`", "gpu": "; touch pwned"})
    assert not marker.exists()
    assert result.exit_code == 2  # trainlint rejects them as arguments


# A pull request controls every file in the checkout. Each of these announces its import by writing
# a marker outside it: the action must import or run none of them, whatever Python looks for first.
SHADOWING_MODULES = ["shlex.py", "pip/__init__.py", "pip/__main__.py", "venv/__init__.py", "venv/__main__.py"]


def _plant_shadowing_modules(workspace: Path, markers: Path) -> None:
    markers.mkdir()
    for relative in SHADOWING_MODULES:
        module = workspace / relative
        module.parent.mkdir(parents=True, exist_ok=True)
        marker = markers / relative.replace("/", ".")
        module.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n")


def test_the_planted_modules_would_run_if_python_looked_in_the_checkout(workspace, tmp_path):
    markers = tmp_path / "markers"
    _plant_shadowing_modules(workspace, markers)
    # What the action used to do in the checkout: `python3 -c 'import shlex ...'`, `python3 -m venv`, `python -m pip`.
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")}
    for command in (["-c", "import shlex"], ["-m", "venv", "--help"], ["-m", "pip", "--version"]):
        subprocess.run([sys.executable, *command], cwd=workspace, env=env, capture_output=True, timeout=60)
    assert sorted(path.name for path in markers.iterdir()) == sorted(name.replace("/", ".")
                                                                     for name in SHADOWING_MODULES)


def test_the_checks_import_nothing_from_the_pull_request(runner, workspace, tmp_path):
    markers = tmp_path / "markers"
    _plant_shadowing_modules(workspace, markers)
    result = runner.run({"paths": "scripts 'train.py'", "args": "--select TL2", "sarif": "out/trainlint.sarif"})
    assert result.ran == ["install", "sarif", "check"]
    assert result.exit_code == 1, result.stderr
    assert {(a["file"], a["title"]) for a in _annotations(result.stdout)} == {
        ("scripts/zero3.json", "trainlint (TL201)")}
    assert list(markers.iterdir()) == []


def test_the_install_step_imports_nothing_from_the_pull_request(workspace, tmp_path):
    """The real install step, offline: it creates the virtual environment and runs pip, which
    then stops at fetching the build backend (the package index is switched off here)."""
    markers = tmp_path / "markers"
    _plant_shadowing_modules(workspace, markers)
    temp = tmp_path / "runner_temp"
    temp.mkdir()
    offline = {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": "", "PIP_NO_CACHE_DIR": "1"}
    result = Runner(workspace, temp, install=True, env=offline).run({})
    assert result.ran == ["install"]
    assert (temp / "trainlint-venv" / "pyvenv.cfg").is_file()
    assert result.exit_code != 0 and "No matching distribution found for setuptools" in result.stderr, result.stderr
    assert list(markers.iterdir()) == []


BASH_4_ONLY = {
    "mapfile / readarray (bash 4.0)": re.compile(r"\b(mapfile|readarray)\b"),
    "case conversion ${var,,} ${var^^} (bash 4.0)": re.compile(r"\$\{[#!]?\w+(\[[^]]*\])?(,,?|\^\^?)"),
    "associative arrays or namerefs (bash 4.0, 4.3)": re.compile(r"\b(declare|local|typeset)\s+-\w*[An]"),
    "|& and &>> (bash 4.0)": re.compile(r"\|&|&>>"),
    "coproc, ;& and ;;& (bash 4.0)": re.compile(r"\bcoproc\b|;;?&"),
    "${var@Q} transformations (bash 4.4)": re.compile(r"\$\{\w+(\[[^]]*\])?@[QEPAaUuLK]\}"),
    "negative array subscripts (bash 4.3)": re.compile(r"\$\{\w+\[-\d+\]\}"),
    "[[ -v ]] (bash 4.2)": re.compile(r"\[\[\s+-v\b"),
    # Before bash 4.4, "${a[@]}" of an empty array is an unbound variable under `set -u`.
    'bare "${array[@]}" under set -u (bash 4.4)': re.compile(r'(?<!\+)"\$\{\w+\[@\]\}"'),
}


def test_the_scripts_run_under_the_bash_3_2_of_macos_runners():
    offences = []
    for step in _load(ACTION)["runs"]["steps"]:
        for number, line in enumerate(step["run"].splitlines(), 1):
            offences += [f"{step['id']} line {number}: {construct}" for construct, pattern in BASH_4_ONLY.items()
                         if pattern.search(line)]
    assert offences == []


@pytest.mark.parametrize("line", [
    'mapfile -t paths <<< "$listed"', 'echo "${INPUT_GPU,,}"', "declare -A seen=()", '"$T" "${args[@]}"',
    "cmd |& tee log", 'echo "${name@Q}"', "[[ -v name ]]"])
def test_the_bash_3_2_patterns_catch_what_they_name(line):
    assert any(pattern.search(line) for pattern in BASH_4_ONLY.values())


def test_a_changed_config_in_a_pull_request_annotates_its_launchers(runner, workspace):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull}
    config = workspace / "scripts" / "zero3.json"
    pinned = config.read_text()
    config.write_text(pinned.replace('"train_micro_batch_size_per_gpu": 16',
                                     '"train_micro_batch_size_per_gpu": "auto"'))
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"],
                    ["checkout", "-q", "-b", "pr"]):
        subprocess.run(["git", *command], cwd=workspace, env=env, check=True, capture_output=True)
    config.write_text(pinned)
    subprocess.run(["git", "commit", "-q", "-am", "pin"], cwd=workspace, env=env, check=True, capture_output=True)
    result = runner.run({"args": "--diff-base main"})
    assert result.exit_code == 1
    assert {(a["file"], a["line"], a["title"]) for a in _annotations(result.stdout)} == {
        ("scripts/zero3.json", "8", "trainlint (TL201)")}
    assert "<summary>Job scripts/eval_often_zero2.sh:3" not in result.summary
    assert "<summary>Job scripts/long_context_zero3.sh:3" in result.summary


# --- the files themselves ----------------------------------------------------------------------

def test_action_declares_the_documented_inputs_and_never_splices_them_into_scripts():
    action = _load(ACTION)
    assert set(action["inputs"]) == {"paths", "args", "gpu", "version", "sarif", "fail-on"}
    assert action["runs"]["using"] == "composite"
    for step in action["runs"]["steps"]:
        assert "${{" not in step["run"], f"expression spliced into the script of {step.get('id')}"


def test_pre_commit_hooks_run_trainlint_on_changed_files():
    hooks = {hook["id"]: hook for hook in _load(HOOKS)}
    assert set(hooks) == {"trainlint-check", "trainlint-fix"}
    assert hooks["trainlint-check"]["entry"].startswith("trainlint check --changed")
    assert hooks["trainlint-fix"]["entry"].startswith("trainlint fix")
    assert all(hook["language"] == "python" for hook in hooks.values())


def test_summary_file_option_and_the_step_summary_variable(workspace, cli, monkeypatch, tmp_path):
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("## an earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    # Terminal output: the step summary is left alone; --summary-file writes (and replaces) a file.
    (workspace / "reports").mkdir()
    (workspace / "reports" / "summary.md").write_text("stale\n")
    cli.run(workspace, "check", "--summary-file", "reports/summary.md")
    written = (workspace / "reports" / "summary.md").read_text()
    assert written.startswith("## trainlint\n") and "stale" not in written
    assert step_summary.read_text() == "## an earlier step\n"
    # Annotations: the summary is appended to the step's file.
    code, out, _ = cli.run(workspace, "check", "--output-format", "github")
    assert code == 1 and out.startswith("::error ")
    assert step_summary.read_text().startswith("## an earlier step\n## trainlint\n")

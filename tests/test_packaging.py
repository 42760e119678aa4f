"""What a release ships: the pre-commit hooks' file filter, and the source distribution built by the
project's own build backend (setuptools' PEP 517 hooks, run offline in a copy of the tree)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import List, Set

import pytest
import yaml
from packaging.version import Version

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from trainlint import __version__
from trainlint.core import DISCOVERED_SUFFIXES

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / ".pre-commit-hooks.yaml"
# Never part of a release: local environments, caches and build output.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info", "__pycache__",
                                    "*.pyc", ".pytest_cache", ".hypothesis", ".ruff_cache", ".mypy_cache")


# --- pre-commit ----------------------------------------------------------------------------------

def _hooks():
    return {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}


def _runs_on(hook, path: str) -> bool:
    """pre-commit's filter for one staged path, for hooks that filter by name only: `files` searched
    in the path, `exclude` not, and no file-type condition beyond being a file."""
    assert set(hook.get("types", ["file"])) == {"file"} and "types_or" not in hook, \
        "file-type detection misses .slurm/.sbatch launchers; filter by name"
    return re.search(hook.get("files", ""), path) is not None and not (
        hook.get("exclude") and re.search(hook["exclude"], path))


LAUNCHERS_AND_CONFIGS = ["scripts/train.slurm", "run.sbatch", "ds_zero3.json", "scripts/finetune.sh", "launch.bash",
                         "train.py", "recipes/qwen_lora.yaml", "accelerate/fsdp.yml", "examples/RUN.SH"]


@pytest.mark.parametrize("path", LAUNCHERS_AND_CONFIGS + ["pyproject.toml", "configs/trainlint.toml"])
def test_the_check_hook_runs_for_every_file_kind_trainlint_reads(path):
    assert _runs_on(_hooks()["trainlint-check"], path)


@pytest.mark.parametrize("path", LAUNCHERS_AND_CONFIGS)
def test_the_fix_hook_runs_for_every_file_kind_it_rewrites(path):
    assert _runs_on(_hooks()["trainlint-fix"], path)


@pytest.mark.parametrize("path", ["README.md", "data/train.csv", "model.safetensors", "slurm.log", "run.sh.orig",
                                  "notes.json.bak"])
def test_the_hooks_skip_files_trainlint_never_reads(path):
    assert not any(_runs_on(hook, path) for hook in _hooks().values())


def test_the_check_hook_covers_the_suffixes_the_scan_discovers():
    suffixes = DISCOVERED_SUFFIXES | {".py", ".json"}
    assert [suffix for suffix in sorted(suffixes) if not _runs_on(_hooks()["trainlint-check"], f"a/b{suffix}")] == []


# --- the source distribution ---------------------------------------------------------------------

def _backend_can_build() -> str:
    """Why the build backend cannot run here, or '' when it can."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not installed (the test extra brings it)"
    if Version(setuptools.__version__) < Version("77"):
        return f"setuptools {setuptools.__version__} is older than the build backend pyproject.toml requires (77)"
    return ""


def _build(hook: str, source: Path, output: Path) -> Path:
    """Runs one PEP 517 hook of setuptools in `source`, as a build frontend does without isolation."""
    output.mkdir()
    code = f"import sys; from setuptools import build_meta; print(build_meta.{hook}(sys.argv[1]))"
    completed = subprocess.run([sys.executable, "-c", code, str(output)], cwd=source, capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return output / completed.stdout.strip().splitlines()[-1]


def _files_under(root: Path, *folders: str) -> Set[str]:
    found = set()
    for folder in folders:
        for path in (root / folder).rglob("*"):
            relative = path.relative_to(root)
            generated = {"__pycache__", ".pytest_cache"} & set(relative.parts) or path.suffix == ".pyc"
            if path.is_file() and not generated:
                found.add(relative.as_posix())
    return found


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    reason = _backend_can_build()
    if reason:
        pytest.skip(reason)
    source = tmp_path_factory.mktemp("source") / "trainlint"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    return _build("build_sdist", source, tmp_path_factory.mktemp("dist") / "sdist")


def _members(archive: Path) -> List[str]:
    with tarfile.open(archive) as tar:
        prefix = f"trainlint-{__version__}/"
        assert all(name == prefix.rstrip("/") or name.startswith(prefix) for name in tar.getnames())
        return [name[len(prefix):] for name in tar.getnames() if name.startswith(prefix)]


def test_the_sdist_holds_what_its_tests_need(sdist):
    assert sdist.name == f"trainlint-{__version__}.tar.gz"
    members = set(_members(sdist))
    needed = {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "action.yml", ".pre-commit-hooks.yaml",
              "trainlint/py.typed", "trainlint/data/gpus.csv", "tests/conftest.py", "benchmarks/memory_accuracy.py"}
    assert needed - members == set()
    # Every test, sample and example file, not just some of them.
    assert _files_under(REPO, "tests", "examples") - members == set()
    assert [name for name in members if "__pycache__" in name or name.startswith((".venv/", ".git/"))] == []


def test_the_sdist_metadata_names_the_license_version_and_project(sdist):
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"trainlint-{__version__}/PKG-INFO")
        metadata = HeaderParser().parsestr(member.read().decode("utf-8"))
    assert metadata["Version"] == __version__
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert "Source, https://github.com/trainlint/trainlint" in metadata.get_all("Project-URL")
    assert metadata["Requires-Python"] == ">=3.10"


def test_a_wheel_built_from_the_sdist_ships_the_type_marker_and_data(sdist, tmp_path):
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # extraction filters: 3.10.12 on
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", **safe)
    wheel = _build("build_wheel", tmp_path / "unpacked" / f"trainlint-{__version__}", tmp_path / "wheel")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"trainlint/py.typed", "trainlint/data/gpus.csv", "trainlint/data/models.csv", "trainlint/cli.py"} <= names
    # The tests ship in the sdist only, never as an importable package.
    assert [name for name in names if name.startswith(("tests/", "examples/", "benchmarks/"))] == []


# --- what the docs tell users to pin -------------------------------------------------------------

DOCS = REPO / "docs" / "github-action.md"


def test_the_docs_pin_this_version_from_the_project_s_own_repository():
    """Users pin the action and the hooks to the version they install; every pin in the docs names
    this version, and every repository named is the one the package metadata gives."""
    text = DOCS.read_text(encoding="utf-8")
    pins = re.findall(r"uses: ([\w.-]+/[\w.-]+)@(\S+)", text)
    action_pins = {ref for repository, ref in pins if repository.endswith("/trainlint")}
    hook_pins = set(re.findall(r"^\s*rev: (\S+)", text, flags=re.MULTILINE))
    assert action_pins == hook_pins == {f"v{__version__}"}
    urls = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    repositories = set(re.findall(r"^\s*- repo: (\S+)", text, flags=re.MULTILINE))
    repositories |= {f"https://github.com/{repository}" for repository, _ in pins if repository.endswith("/trainlint")}
    assert repositories == {urls["Source"]}

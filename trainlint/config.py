"""Project configuration: `[tool.trainlint]` in pyproject.toml or a trainlint.toml, merged with the
command line (the command line wins), with the source of every effective value kept for
`trainlint config`."""
from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from trainlint.severity import Severity

# Looked for in each folder from the start folder upwards, in this order (like ruff: a dedicated file
# wins over pyproject.toml; a pyproject.toml without [tool.trainlint] is passed over).
CONFIG_FILE_NAMES = ("trainlint.toml", ".trainlint.toml", "pyproject.toml")
FAIL_ON_LEVELS = ("error", "warning", "info", "never")
DEFAULT_FAIL_ON = "warning"
SOURCE_DEFAULT = "default"
SOURCE_CLI = "command line"
# Compiled (and cached by `re`) on first use: most runs name no selector.
_SELECTOR = r"^(TL\d{0,3}|ALL)$"
# Each key of the config and the Settings field it sets; `_` spellings are accepted too.
KEYS = ("select", "ignore", "per-file-ignores", "gpu", "gpu-memory", "num-gpus", "exclude", "fail-on",
        "allow-outside-reads", "cache-dir")


class ConfigError(Exception):
    """The configuration cannot be used (exit code 2)."""


@dataclass(frozen=True)
class PerFileIgnore:
    """Codes (or prefixes) ignored in files matching `pattern`, a glob relative to `root` (the folder
    of the config file, or the working directory for patterns given elsewhere)."""

    pattern: str
    codes: Tuple[str, ...]
    root: str = "."

    def matches_path(self, path: str) -> bool:
        return path_matches(path, self.pattern, self.root)

    def ignores(self, code: str, path: str) -> bool:
        return any(code.upper().startswith(prefix) for prefix in self.codes) and self.matches_path(path)


def path_matches(path: str, pattern: str, root: str = ".") -> bool:
    """`path` (relative to the working directory, or absolute) matches a glob written relative to
    `root`: the whole relative path (`scripts/*.json`), its tail (`*.json`, `configs/zero3.json`),
    or a folder prefix (`legacy/`)."""
    relative = _relative_to(path, root)
    cleaned = pattern.strip().replace("\\", "/")
    if cleaned.startswith("./"):
        cleaned = cleaned[2:]
    folder = cleaned.rstrip("/")
    if not folder:
        return False
    if fnmatch.fnmatchcase(relative, cleaned) or relative == folder or relative.startswith(folder + "/"):
        return True
    return not cleaned.startswith("/") and "**" not in cleaned and PurePosixPath(relative).match(cleaned)


def _relative_to(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, os.path.abspath(root))
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return Path(path).as_posix()
    return Path(relative).as_posix()


@dataclass(frozen=True)
class FileConfig:
    """The `[tool.trainlint]` table of one file, keys normalised to Settings field names."""

    path: Path
    values: Mapping[str, Any]

    @property
    def label(self) -> str:
        table = " [tool.trainlint]" if self.path.name == "pyproject.toml" else ""
        return f"{_shown(self.path)}{table}"


@dataclass(frozen=True)
class Settings:
    """What a command runs with, after the config file and the command line are merged. `sources`
    maps each field name to where its value came from."""

    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[PerFileIgnore, ...] = ()
    gpu: Optional[str] = None
    gpu_memory: Optional[str] = None
    num_gpus: Optional[int] = None
    exclude: Tuple[str, ...] = ()
    fail_on: str = DEFAULT_FAIL_ON
    # Read configs and scripts a launcher names outside the scanned tree. Off by default: the tree
    # may come from a stranger, and a file it names (`--deepspeed /etc/passwd`) could be shown.
    allow_outside_reads: bool = False
    config_path: Optional[str] = None
    # Where reader facts are kept between runs (a config file's value is relative to that file's folder).
    cache_dir: Optional[str] = None
    sources: Mapping[str, str] = field(default_factory=dict)
    # Skip what .gitignore ignores in the folder walk (the command line's --no-respect-gitignore).
    respect_gitignore: bool = True

    def source(self, name: str) -> str:
        return self.sources.get(name, SOURCE_DEFAULT)


# --- finding and reading the file ---------------------------------------------------------------

def find_config(start: Path) -> Optional[Path]:
    """The nearest config file from `start` upwards; the search stops at the repository root (the
    folder holding `.git`) so that a stray file above the checkout never applies."""
    folder = start.resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate_dir in [folder, *folder.parents]:
        for name in CONFIG_FILE_NAMES:
            candidate = candidate_dir / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_trainlint_table(candidate)):
                return candidate
        if (candidate_dir / ".git").exists():
            return None
    return None


def _has_trainlint_table(path: Path) -> bool:
    try:
        # A table of trainlint's names it, in any of TOML's spellings (`[tool.trainlint]`, `tool.trainlint.gpu =`,
        # a quoted key): a project's pyproject.toml that never does is not parsed on every check.
        if b"trainlint" not in path.read_bytes():
            return False
    except OSError:
        pass  # parsed below, which says why it cannot be read
    try:
        document = _parse_toml(path)
    except ConfigError:
        return True  # report the broken file rather than silently skip the project's settings
    return isinstance(document.get("tool"), dict) and "trainlint" in document["tool"]


def _parse_toml(path: Path) -> Dict[str, Any]:
    # Imported here: the TOML parser (~4 ms) only once a settings file is found.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{_shown(path)} is not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"cannot read {_shown(path)}: {error.strerror or error}") from None


def load_config(path: Path) -> FileConfig:
    """Read and validate one config file; raise ConfigError with the file and key on any problem."""
    document = _parse_toml(path)
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("trainlint", {}) if isinstance(tool, dict) else {}
    else:
        # trainlint.toml may hold the keys at the top level or under [tool.trainlint].
        tool = document.get("tool")
        table = tool["trainlint"] if isinstance(tool, dict) and "trainlint" in tool else document
    if not isinstance(table, dict):
        raise ConfigError(f"{_shown(path)}: [tool.trainlint] must be a table")
    root = str(path.resolve().parent)
    values = {}
    for key, raw in table.items():
        if key == "tool" and table is document:
            continue
        name = key.replace("_", "-")
        if name not in KEYS:
            raise ConfigError(f"{_shown(path)}: unknown setting `{key}` (known: {', '.join(KEYS)})")
        values[name.replace("-", "_")] = _validated(name, raw, root, path)
    return FileConfig(path, values)


def _validated(name: str, raw: Any, root: str, path: Path) -> Any:
    where = f"{_shown(path)}: `{name}`"
    if name in ("select", "ignore"):
        return _selectors(_string_list(raw, where), where)
    if name == "exclude":
        return tuple(_string_list(raw, where))
    if name == "per-file-ignores":
        if not isinstance(raw, dict):
            raise ConfigError(f"{where} must be a table of glob = [codes]")
        return tuple(PerFileIgnore(pattern, _selectors(_string_list(codes, f"{where} \"{pattern}\""), where), root)
                     for pattern, codes in raw.items())
    if name == "gpu":
        if not isinstance(raw, str) or not raw.strip():
            raise ConfigError(f"{where} must be a GPU name such as \"a100-40gb\"")
        return raw.strip()
    if name == "gpu-memory":
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ConfigError(f"{where} must be a size such as \"48GiB\"")
        return str(raw)
    if name == "num-gpus":
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise ConfigError(f"{where} must be a whole number of at least 1")
        return raw
    if name == "fail-on":
        return parse_fail_on(raw, where)
    if name == "allow-outside-reads":
        if not isinstance(raw, bool):
            raise ConfigError(f"{where} must be true or false")
        return raw
    if name == "cache-dir":
        if not isinstance(raw, str) or not raw.strip():
            raise ConfigError(f"{where} must be a folder such as \".trainlint_cache\"")
        return os.path.join(root, raw.strip())
    raise ConfigError(f"{where}: unknown setting")  # pragma: no cover - KEYS and this function agree


def _string_list(raw: Any, where: str) -> List[str]:
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"{where} must be a list of strings")
    return [item.strip() for item in raw if item.strip()]


def _selectors(items: Iterable[str], where: str) -> Tuple[str, ...]:
    out = []
    for item in items:
        code = item.strip().upper()
        if not re.match(_SELECTOR, code):
            raise ConfigError(f"{where}: `{item}` is not a rule code or prefix (such as TL101 or TL1)")
        out.append(code)
    return tuple(out)


def parse_fail_on(raw: Any, where: str = "--fail-on") -> str:
    level = str(raw).strip().lower() if isinstance(raw, str) else None
    if level not in FAIL_ON_LEVELS:
        raise ConfigError(f"{where} must be one of {', '.join(FAIL_ON_LEVELS)} (got {raw!r})")
    return level


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


# --- merging with the command line --------------------------------------------------------------

def config_start(paths: Sequence[Path]) -> Path:
    """Where to look for the config: the folder of the first path named, else the working directory."""
    if not paths:
        return Path.cwd()
    first = Path(paths[0])
    return first if first.is_dir() else first.parent


def locate_config(args) -> Optional[FileConfig]:
    """The config the command runs with: `--config FILE`, none under `--isolated`, else discovered."""
    if getattr(args, "isolated", False):
        return None
    explicit = getattr(args, "config", None)
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file {explicit} does not exist")
        return load_config(path)
    found = find_config(config_start(list(getattr(args, "paths", None) or [])))
    if found is None:
        return None
    discovered = load_config(found)
    # A config found in the scanned tree is written by whoever wrote the tree: it may not widen
    # what trainlint reads (only --allow-outside-reads or an explicit --config can).
    return FileConfig(found, {name: value for name, value in discovered.values.items()
                              if name != "allow_outside_reads"})


def _cli_values(args) -> Dict[str, Any]:
    """Options the user actually gave (argparse defaults of [] and None mean "not given")."""
    given: Dict[str, Any] = {}
    for name in ("select", "ignore", "extend_select", "extend_ignore"):
        value = getattr(args, name, None)
        if value:
            given[name] = _selectors(value, f"--{name.replace('_', '-')}")
    if getattr(args, "exclude", None):
        given["exclude"] = tuple(args.exclude)
    for name in ("gpu", "gpu_memory", "num_gpus", "cache_dir"):
        value = getattr(args, name, None)
        if value is not None:
            given[name] = value
    fail_on = getattr(args, "fail_on", None)
    if fail_on is not None:
        given["fail_on"] = parse_fail_on(fail_on)
    if getattr(args, "allow_outside_reads", False):
        given["allow_outside_reads"] = True
    return given


def merge(file_config: Optional[FileConfig], cli: Mapping[str, Any]) -> Settings:
    """Defaults, overridden by the config file, overridden by the command line."""
    values: Dict[str, Any] = {}
    sources: Dict[str, str] = {}
    if file_config is not None:
        for name, value in file_config.values.items():
            values[name] = value
            sources[name] = file_config.label
    for name, value in cli.items():
        if name in EXTENDING:
            continue
        # Like ruff's extend-ignore, an ignore on the command line adds to the configured ones.
        values[name] = _joined(values.get(name, ()), value) if name == "ignore" else value
        sources[name] = SOURCE_CLI if name not in sources or name != "ignore" else f"{sources[name]} + {SOURCE_CLI}"
    for extending, name in EXTENDING.items():
        if extending in cli:
            if name == "select" and not values.get("select"):
                continue  # every rule is already selected
            values[name] = _joined(values.get(name, ()), cli[extending])
            sources[name] = f"{sources[name]} + {SOURCE_CLI}" if name in sources else SOURCE_CLI
    return Settings(**values, config_path=str(file_config.path) if file_config else None, sources=sources)


# --extend-select / --extend-ignore and the list each adds to.
EXTENDING = {"extend_select": "select", "extend_ignore": "ignore"}


def _joined(first: Sequence[str], second: Sequence[str]) -> Tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def resolve_settings(args) -> Settings:
    """The effective settings of a parsed command line (any subcommand with target options)."""
    return merge(locate_config(args), _cli_values(args))


# --- using the settings -------------------------------------------------------------------------

def fails(severities: Iterable[Any], fail_on: str) -> bool:
    """True when any severity (a Severity or its value) is at or above `fail_on`."""
    if fail_on == "never":
        return False
    return any(_rank(severity) >= Severity(fail_on).rank for severity in severities)


def _rank(severity: Any) -> int:
    try:
        return Severity(getattr(severity, "value", severity)).rank
    except ValueError:
        return Severity.WARNING.rank  # a severity this version does not know counts as a warning


def render_settings(settings: Settings) -> str:
    """The effective settings as TOML a user can paste, each line saying where the value came from."""
    lines = [f"# config file: {_shown(Path(settings.config_path)) if settings.config_path else 'none found'}",
             "[tool.trainlint]"]
    rows = [
        ("select", _toml_list(settings.select), "select"),
        ("ignore", _toml_list(settings.ignore), "ignore"),
        ("gpu", _toml_string(settings.gpu), "gpu"),
        ("gpu-memory", _toml_string(settings.gpu_memory), "gpu_memory"),
        ("num-gpus", str(settings.num_gpus) if settings.num_gpus is not None else None, "num_gpus"),
        ("exclude", _toml_list(settings.exclude), "exclude"),
        ("fail-on", _toml_string(settings.fail_on), "fail_on"),
        ("allow-outside-reads", "true" if settings.allow_outside_reads else "false", "allow_outside_reads"),
    ]
    width = max(len(f"{key} = {value}") for key, value, _ in rows if value is not None)
    for key, value, name in rows:
        if value is None:
            lines.append(f"# {key}: not set ({settings.source(name)})")
        else:
            lines.append(f"{key} = {value}".ljust(width) + f"  # {settings.source(name)}")
    lines.append("")
    lines.append(f"[tool.trainlint.per-file-ignores]  # {settings.source('per_file_ignores')}")
    for entry in settings.per_file_ignores:
        lines.append(f"{_toml_string(entry.pattern)} = {_toml_list(entry.codes)}")
    return "\n".join(lines) + "\n"


def _toml_string(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_string(v) or "" for v in values) + "]"

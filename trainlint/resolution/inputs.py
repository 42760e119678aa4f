"""What a job is assembled from so far: the candidates for each knob and the files it reads."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Collection, Dict, List

from trainlint.core import Setting
from trainlint.knobs import KNOBS, knob_for
from trainlint.readers.facts import ConfigFile
from trainlint.resolution.precedence import Candidates

KNOB_TYPES = {spec.name: spec.type for spec in KNOBS}


def config_values(config: ConfigFile, namespace: str, candidates: Candidates,
                  overridden: Collection[str] = ()) -> None:
    """The knobs a config file's keys pin, its keys read in the spelling of `namespace`; a key whose last part is in
    `overridden` is left to what overrides it (an option given on the command line)."""
    for key, setting in config.values.items():
        if key.rpartition(".")[2] in overridden:
            continue
        name = knob_for(key, namespace)
        if name is not None:
            candidates.add(name, setting)
    for key, items in _scalar_lists(config).items():
        name = knob_for(key, namespace)
        if name is not None and KNOB_TYPES.get(name) is str and key not in config.values:
            # `fsdp: [full_shard, auto_wrap]` means what the string `full_shard auto_wrap` means.
            joined = " ".join(str(item.value) for item in items)
            candidates.add(name, replace(items[0], value=joined, via=tuple(items[1:]), note=key, written_as=key))


def _scalar_lists(config: ConfigFile) -> Dict[str, List[Setting]]:
    """YAML lists of plain values, read back from their flattened `key.0`, `key.1` entries."""
    lists: Dict[str, List[Setting]] = {}
    for key, setting in config.values.items():
        head, _, index = key.rpartition(".")
        if head and index.isdigit() and isinstance(setting.value, (str, int, float)):
            lists.setdefault(head, []).append(setting)
    return lists


@dataclass
class JobInputs:
    candidates: Candidates = field(default_factory=Candidates)
    files: List[str] = field(default_factory=list)  # every file the job reads
    configs: List[str] = field(default_factory=list)  # the config files among them

    def read_config(self, config: ConfigFile, namespace: str, overridden: Collection[str] = ()) -> None:
        """A config file the job reads: recorded, its problems kept, its keys pinning knobs (but those in
        `overridden`, see config_values)."""
        self.files.append(config.path)
        self.configs.append(config.path)
        self.candidates.diagnostics.extend(config.diagnostics)
        config_values(config, namespace, self.candidates, overridden)

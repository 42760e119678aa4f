"""What the extractors gather from one file while it is walked, in the order the walk meets it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple

from trainlint.core import Diagnostic
from trainlint.readers.facts import (
    ConfigCall,
    DataclassInfo,
    FieldDefault,
    Freeze,
    ImportInfo,
    Keyword,
    Override,
    TrainerCall,
)


@dataclass
class Findings:
    """Several extractors append to the same list (overrides come from calls and from assignments),
    so the lists live here rather than in any one of them: their order stays the order of the file."""

    dataclasses: List[DataclassInfo] = field(default_factory=list)
    argparse_args: List[FieldDefault] = field(default_factory=list)
    hf_parsers: List[Tuple[str, ...]] = field(default_factory=list)
    derived_parsers: List[str] = field(default_factory=list)
    config_calls: List[ConfigCall] = field(default_factory=list)
    trainer_calls: List[TrainerCall] = field(default_factory=list)
    overrides: List[Override] = field(default_factory=list)
    imports: List[ImportInfo] = field(default_factory=list)
    other_keywords: List[Tuple[str, Keyword]] = field(default_factory=list)
    diagnostics: List[Diagnostic] = field(default_factory=list)
    freezes: List[Freeze] = field(default_factory=list)
    parse_known_args: bool = False
    reads_config_flag: bool = False
    takes_any_flag: bool = False

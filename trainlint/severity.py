"""How serious a finding is. A module of its own: the configuration reads it, and a check answered from the
result cache imports the configuration but none of the scan's types."""
from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]

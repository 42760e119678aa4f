"""The files a launcher writes before a launch (`Launch.written`), asked whether a path the launch names is one
of them: such a file exists when the launch runs, whether or not the tree holds it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Tuple

from trainlint.readers.facts import Launch


@dataclass(frozen=True)
class LaunchWrites:
    """`written`: as `Launch.written`, relative to the script's folder when the launcher's `cd` is known; `cwd`:
    the launch's own directory, in the same terms."""

    written: Tuple[str, ...]
    cwd: Optional[str]

    @classmethod
    def of(cls, launch: Launch) -> "LaunchWrites":
        return cls(launch.written, None if launch.cwd_unknown else launch.cwd)

    def names(self, shown: str) -> bool:
        """Whether `shown`, a path as the launch names it, is a file the launcher wrote before."""
        if not self.written:
            return False
        if os.path.isabs(shown) or self.cwd is None:
            return os.path.normpath(shown) in self.written
        return os.path.normpath(os.path.join(self.cwd, shown)) in self.written

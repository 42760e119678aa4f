# -*- coding: latin-1 -*-
from dataclasses import dataclass


@dataclass
class Args:
    label: str = "résumé"; batch: int = 16
    tail: str = "â‚"; seq: int = 1024

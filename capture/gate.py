"""A cheap first look at a prompt, importable without the detector (hooks stay fast)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAY_REMEMBER"]

#: Words without which a prompt cannot ask to remember (in any language the
#: detector knows): only a prompt holding one is run through the detector.
MAY_REMEMBER: Final = re.compile(
    r"remember|forget|note|keep in mind|future reference|merk|souviens|retiens|recuerda|lembre|"
    r"(?:store|save|log|memori[sz]e|write|jot|add) th(?:is|at)",
    re.I,
)

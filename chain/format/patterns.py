"""Regular expressions compiled at their first use, not when their module is imported.

Compiling a pattern costs 0.1-1 ms. The modules on the session-start path
hold about forty, and a session start uses a few: compiled at import, they
were a tenth of the hook's time. ``lazy(pattern)`` stands for
``re.compile(pattern)`` wherever the pattern is used through its methods
(``search``, ``fullmatch``, ``finditer``, ``sub``, ...): the first method
looked up compiles it, and each method is then the object's own attribute,
so later calls pay no indirection. It is not an ``re.Pattern``: do not pass
it to ``re.sub`` or ``isinstance``.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

__all__ = ["lazy"]


class _Lazy:
    __slots__ = ("__dict__", "_flags", "_pattern")

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what is not yet an attribute
        found = getattr(re.compile(self._pattern, self._flags), name)
        setattr(self, name, found)
        return found


def lazy(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled at the first use of one of its methods."""
    return cast("re.Pattern[AnyStr]", _Lazy(pattern, flags))

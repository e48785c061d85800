"""memory-chain: provable memory for AI agents.

The library's door is ``Memory`` (one data directory and its workspace)::

    from memory_chain import Memory

    with Memory.open() as memory:
        memory.add("We deploy on Tuesdays", type="decision", tier="committed")
        for found in memory.search("when do we deploy"):
            print(found["score"], found["text"])

``Memory`` and the types of its arguments and results (``ContentType``,
``Tier``, ``Source``, ``Scope``, ``Origin``; ``Added``, ``Found``, ``Entry``,
``Recent``, ``Redacted``, ``Remembered``, ``Waiting``, ``Verified``,
``Proof``, ``FileInfo``) are imported on first use, so that importing the
package (as the command line does) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.types import (
        Added,
        ContentType,
        Entry,
        FileInfo,
        Found,
        Origin,
        Proof,
        Recent,
        Redacted,
        Remembered,
        Scope,
        Source,
        Tier,
        Verified,
        Waiting,
    )

__all__ = [
    "Added",
    "ContentType",
    "Entry",
    "FileInfo",
    "Found",
    "Memory",
    "Origin",
    "Proof",
    "Recent",
    "Redacted",
    "Remembered",
    "Scope",
    "Source",
    "Tier",
    "Verified",
    "Waiting",
]

_TYPES = frozenset(__all__) - {"Memory"}


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from memory_chain.integrations.api import Memory

        return Memory
    if name in _TYPES:
        from memory_chain.integrations import types

        return getattr(types, name)
    raise AttributeError(f"module 'memory_chain' has no attribute {name!r}")

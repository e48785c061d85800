"""Progress of long work, reported to whoever is watching (usually nobody).

Library code calls ``track(label, total, unit)`` and gets back a function
that advances the count; with no watcher installed (the default, and always
for ``--json``, pipes and CI: see cli/progress.py) it is a no-op that costs
one call. The CLI installs a watcher with ``watching``. Nothing here imports
a progress-bar library: that is the watcher's business, and it does so only
when a bar is shown.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Protocol

__all__ = ["Watcher", "counted", "track", "watching"]


class Watcher(Protocol):
    def start(self, label: str, total: int | None, unit: str) -> Callable[[int], None]:
        """Begin showing one task; return the function that advances it."""

    def stop(self) -> None:
        """Close what ``start`` opened."""


_watcher: ContextVar[Watcher | None] = ContextVar("memory_chain_progress", default=None)


def _nothing(_n: int) -> None:
    return None


def track(label: str, total: int | None, unit: str = "B") -> Callable[[int], None]:
    """Start a task for the current watcher; the returned function advances it by n."""
    watcher = _watcher.get()
    return _nothing if watcher is None else watcher.start(label, total, unit)


def counted(items: Iterable[bytes], advance: Callable[[int], None]) -> Iterator[bytes]:
    """``items`` as they are, advancing by each one's length."""
    if advance is _nothing:
        yield from items
        return
    for item in items:
        advance(len(item))
        yield item


@contextlib.contextmanager
def watching(watcher: Watcher | None) -> Iterator[None]:
    """Report the progress of the work done inside the block to ``watcher`` (None: nobody)."""
    token = _watcher.set(watcher)
    try:
        yield
    finally:
        _watcher.reset(token)
        if watcher is not None:
            watcher.stop()

"""Progress bars on stderr for long commands, only where a person is watching.

A bar (tqdm: rate and time left) is shown when stderr is a terminal, the
command was not asked for ``--json``, and the ``CI`` environment variable
is unset; otherwise nothing is printed and tqdm is never imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from memory_chain.chain.format.progress import Watcher

__all__ = ["bars", "wanted"]


def wanted(json_output: bool = False) -> bool:
    """True when a bar would be seen by a person and mixed with nothing machine-read."""
    if json_output or os.environ.get("CI") or os.environ.get("MEMORY_CHAIN_NO_PROGRESS"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Stderr:
    """sys.stderr behind a plain writer. Handed sys.stderr itself, tqdm 4.70
    printed nothing on this machine's pseudo-terminals (not understood yet);
    through this wrapper it draws as expected."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return True


class _Bars:
    """tqdm bars, one per task; each closed when the next starts or the command ends."""

    def __init__(self) -> None:
        self._open: list[Any] = []

    def start(self, label: str, total: int | None, unit: str) -> Callable[[int], None]:
        import shutil

        from tqdm import tqdm  # only when a bar is shown

        self.stop()
        bar = tqdm(
            total=total,
            desc=label,
            unit=unit,
            unit_scale=unit == "B",
            unit_divisor=1024 if unit == "B" else 1000,
            file=_Stderr(),
            leave=False,
            # A terminal that reports no width (0 columns) still gets a bar.
            ncols=shutil.get_terminal_size((80, 24)).columns or 80,
            mininterval=0.2,
            ascii=True,  # plain "#" bars: every terminal and log shows them
        )
        self._open.append(bar)

        def advance(n: int) -> None:
            bar.update(n)
            if total is not None and bar.n >= total:
                bar.close()  # done: the line is cleared before the command's output

        return advance

    def stop(self) -> None:
        while self._open:
            self._open.pop().close()


def bars(json_output: bool = False) -> Watcher | None:
    """A watcher drawing bars, or None when no one should see them."""
    return _Bars() if wanted(json_output) else None

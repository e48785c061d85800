"""The secret screen of a long batch's chunk, in a forked child (issue 27).

Per entry, a batch add signs (about 21 us), builds and self-checks the line
(about 25 us) and screens the content and metadata for secrets (about
27 us): one core adds about 14,000 entries a second. The screen needs
nothing but the entries, so for each chunk of a long batch a child is
forked: it sees the chunk in the memory it shares with the parent (nothing
is copied to it), screens it on the other core while the parent hashes and
signs the same chunk, answers in a pipe and exits. The parent reads the
verdict before it writes a byte of the chunk (a blob, a spooled line), so
a secret is still never stored; the item reported is the first that fails
any check, with the message the screen gives in the parent.

A child is forked only where that is safe: a POSIX fork, and no other
thread in the process (a fork copies locks other threads may hold). It
closes every descriptor but its end of the pipe at once (it must not hold
the chain's lock, nor the packs, open) and ignores SIGINT (the parent
handles it). If anything goes wrong with it (it died, it answered nonsense,
it could not screen an item), the parent screens what is left itself: the
child only ever saves time.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Sequence
from typing import Final

from ..format.newentry import NewEntry, screen_parts, secret_parts

__all__ = ["Failed", "Screen"]

#: What the child answers when it could not screen an item: the parent screens from it.
_UNSCREENED: Final = "unscreened"

#: (position in the chunk, the screen's message, its hint) of the first item holding a
#: secret; None when none does.
Failed = tuple[int, str, str | None]


def _screen(items: Sequence[NewEntry], start: int = 0) -> Failed | None:
    for n in range(start, len(items)):
        failed = screen_parts(*secret_parts(items[n]))
        if failed is not None:
            return n, failed.message, failed.hint
    return None


def _child(items: Sequence[NewEntry], answer: int) -> None:
    """In the forked child: screen ``items``, write the verdict to ``answer``, exit."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.closerange(0, answer)
        os.closerange(answer + 1, os.sysconf("SC_OPEN_MAX"))
        result: tuple[int, str, str | None] | None = None
        for n, item in enumerate(items):
            try:
                failed = screen_parts(*secret_parts(item))
            except Exception:
                result = (n, _UNSCREENED, None)
                break
            if failed is not None:
                result = (n, failed.message, failed.hint)
                break
        data = memoryview(pickle.dumps(result))
        while data:
            data = data[os.write(answer, data) :]
    except BaseException:
        code = 1
    os._exit(code)


class Screen:
    """A child screening one chunk of a batch while the parent signs it."""

    def __init__(self, pid: int, answer: int, items: Sequence[NewEntry]) -> None:
        self.pid, self.answer, self.items = pid, answer, items

    @classmethod
    def fork(cls, items: Sequence[NewEntry]) -> Screen | None:
        """A child screening ``items``, or None where forking is not safe here."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return None
        if pid == 0:
            _child(items, write)  # never returns
        os.close(write)
        return cls(pid, read, items)

    def verdict(self) -> Failed | None:
        """The chunk's first item that holds a secret, or None. Screens the chunk in this
        process when the child cannot answer. Ends the child."""
        start = 0
        try:
            data = self._read()
            if not data:
                raise EOFError  # it died before it answered
            answer = pickle.loads(data)
            if answer is None:
                return None
            position, message, hint = answer
            if message != _UNSCREENED:
                return int(position), str(message), None if hint is None else str(hint)
            start = int(position)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            start = 0
        finally:
            self.close()
        return _screen(self.items, start)

    def _read(self) -> bytes:
        parts = []
        while chunk := os.read(self.answer, 1 << 16):
            parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        """End the child (if it still runs) and wait for it; idempotent."""
        if self.pid <= 0:
            return
        with contextlib.suppress(OSError):
            os.close(self.answer)
        self.answer = -1  # never read again: a descriptor number is soon another file's
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self.pid = -1

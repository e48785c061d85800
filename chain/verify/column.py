"""A byte column read from a file only where it is touched (the verification cache's
per-entry digests and flags, FORMAT.md 13.1).

A verify that resumes reads a few of the cached entries' 33 bytes (a redaction's target)
and appends the new entries'. Loading all of them cost 100 ms and 100 MB at a million
entries; a ``Column`` maps the file and keeps only what changed: bytes set below the
mapped length, and the bytes appended after it.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

__all__ = ["Column"]


class Column:
    """The bytes ops ChainState uses (``c[i]``, ``c[i:j]``, ``c[i] = v``, ``append``,
    ``extend``, ``len``, ``bytes``) over a read-only ``base`` (an mmap, or bytes), with
    the changes kept apart: ``changes()`` gives them for a save that writes only them."""

    __slots__ = ("_base", "_changed", "_n", "_tail")

    def __init__(self, base: Any = b"", changed: dict[int, int] | None = None) -> None:
        self._base = base
        self._n = len(base)
        self._tail = bytearray()
        self._changed: dict[int, int] = dict(changed or {})

    def __len__(self) -> int:
        return self._n + len(self._tail)

    def __getitem__(self, key: SupportsIndex | slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ValueError("a Column is sliced with step 1 only")
            lo, hi = start, min(stop, self._n)
            out = bytearray(self._base[lo:hi]) if lo < hi else bytearray()
            for i, v in self._changed.items():
                if lo <= i < hi:
                    out[i - lo] = v
            if stop > self._n:
                out += self._tail[max(start - self._n, 0) : stop - self._n]
            return out
        i = key.__index__()
        if i < 0:
            i += len(self)
        if i < self._n:
            value = self._changed.get(i)
            return self._base[i] if value is None else value
        return self._tail[i - self._n]

    def __setitem__(self, key: SupportsIndex, value: int) -> None:
        i = key.__index__()
        if i < 0:
            i += len(self)
        if i < self._n:
            self._changed[i] = value
        else:
            self._tail[i - self._n] = value

    def append(self, value: int) -> None:
        self._tail.append(value)

    def extend(self, data: bytes) -> None:
        self._tail += data

    def __bytes__(self) -> bytes:
        out = bytearray(self._base[: self._n])
        for i, v in self._changed.items():
            out[i] = v
        return bytes(out + self._tail)

    def changes(self) -> tuple[int, dict[int, int], bytes]:
        """(the mapped length, the bytes set below it, the bytes appended after it)."""
        return self._n, dict(self._changed), bytes(self._tail)

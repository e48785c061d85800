"""Content since the last verify: are the pack bytes that were hashed still the same?

A verify hashes the blob of every entry it checks (step 10). To say on the
next, incremental, verify that the blobs of the entries it skips are still
present and unaltered, without reading them one by one, it remembers each
pack as it was when its records had been hashed (a `Seen`): the bytes
covered, their BLAKE3, and the file's identity (inode, size, mtime and ctime
in nanoseconds). The next verify compares (`compare`):

- a pack whose identity is unchanged has not been written since: the same;
- a pack that grew (the active one) is the same if the BLAKE3 of the bytes
  covered before is unchanged; the appended bytes belong to new entries,
  whose blobs the verify hashes anyway;
- a pack that is gone, shorter, or whose covered bytes differ has changed
  (a redaction erases records in place; so does an attacker): every
  record is read and hashed again (`rescan`), and the entries whose blob
  is no longer soundly stored anywhere are reported, as a full verify would.

Loose blobs of the layout before packs (FORMAT.md 6.4) carry no pack
identity; a directory that still has them is always rescanned.

The record lives in the verification cache (incremental.py), in the per-user
state folder: never in the data directory, which the chain's writer controls.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from typing import Any

from blake3 import blake3

from ..content.store import ContentStore
from ..format.values import Record, Value

__all__ = ["Comparison", "Seen", "compare", "rescan", "snapshot"]

#: (st_ino, st_size, st_mtime_ns, st_ctime_ns): a file not written since has the same four.
Ident = tuple[int, int, int, int]


class Seen(Value):
    """One pack as a verify left it: ``size`` bytes whose BLAKE3 is ``digest``."""

    __slots__ = ("digest", "ident", "number", "size")
    number: int
    size: int
    digest: str
    ident: Ident

    def __init__(self, number: int, size: int, digest: str, ident: Ident) -> None:
        set_ = object.__setattr__
        set_(self, "number", number)
        set_(self, "size", size)
        set_(self, "digest", digest)
        set_(self, "ident", ident)

    def as_list(self) -> list[object]:
        return [self.number, self.size, self.digest, list(self.ident)]

    @classmethod
    def from_list(cls, raw: list[Any]) -> Seen:
        """The inverse of as_list (raises ValueError, TypeError or KeyError on damage)."""
        number, size, digest, ident = raw
        a, b, c, d = (int(n) for n in ident)
        return cls(int(number), int(size), str(digest), (a, b, c, d))


class Comparison(Record):
    """What became of the packs a verify saw."""

    __slots__ = ("changed", "loose", "same")
    #: Packs whose covered bytes are unchanged, each with a hasher at the end of them.
    same: dict[int, tuple[Seen, blake3 | None]]
    #: Packs gone, cut or altered since (their numbers).
    changed: list[int]
    #: True when loose blobs (the layout before packs) are present: they have no identity.
    loose: bool

    def __init__(
        self,
        same: dict[int, tuple[Seen, blake3 | None]] | None = None,
        changed: list[int] | None = None,
        loose: bool = False,
    ) -> None:
        self.same = {} if same is None else same
        self.changed = [] if changed is None else changed
        self.loose = loose

    @property
    def intact(self) -> bool:
        return not self.changed and not self.loose


def _ident(st: os.stat_result) -> Ident:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _hash(path: str, start: int, end: int, hasher: blake3) -> None:
    """Feed bytes [start, end) of ``path`` to ``hasher``."""
    if end <= start:
        return
    with open(path, "rb") as f, mmap.mmap(f.fileno(), end, prot=mmap.PROT_READ) as view:
        hasher.update(memoryview(view)[start:end])


def compare(store: ContentStore, seen: Iterable[Seen]) -> Comparison:
    """Compare the packs on disk with ``seen`` (without reading the packs not written since)."""
    out = Comparison(loose=store.has_loose())
    for s in seen:
        path = store.pack_path(s.number)
        try:
            st = os.stat(path)
        except OSError:
            out.changed.append(s.number)
            continue
        if _ident(st) == s.ident:
            out.same[s.number] = (s, None)
            continue
        if st.st_size < s.size:
            out.changed.append(s.number)
            continue
        hasher = blake3()
        try:
            _hash(path, 0, s.size, hasher)
        except (OSError, ValueError):
            out.changed.append(s.number)
            continue
        if "b3:" + hasher.hexdigest() != s.digest:
            out.changed.append(s.number)
        else:
            out.same[s.number] = (s, hasher)
    return out


def snapshot(store: ContentStore, before: Comparison | None = None) -> list[Seen]:
    """Every pack now, for the next verify; packs in ``before.same`` are only extended.

    Call it after the verify read the chain: every blob a verified line
    names was written before that line, so it lies in the bytes covered.
    """
    out: list[Seen] = []
    same = before.same if before is not None else {}
    for number in store.pack_numbers():
        path = store.pack_path(number)
        try:
            st = os.stat(path)
        except OSError:
            continue  # gone since: the next verify finds the records missing
        old = same.get(number)
        if old is not None and _ident(st) == old[0].ident:
            out.append(old[0])
            continue
        if old is not None and old[1] is not None:
            hasher, start = old[1], old[0].size
        else:
            hasher, start = blake3(), 0
        try:
            _hash(path, start, st.st_size, hasher)
        except (OSError, ValueError):
            continue
        out.append(Seen(number, st.st_size, "b3:" + hasher.hexdigest(), _ident(st)))
    return out


def rescan(store: ContentStore) -> tuple[set[bytes], set[bytes]]:
    """(digests soundly stored, digests stored only as altered bytes): every record, hashed.

    The slow path, taken only when a pack changed since the last verify (a
    redaction, or damage): it reads what a full verify's step 10 reads.
    """
    sound: set[bytes] = set()
    altered: set[bytes] = set()
    for rec in store.records(altered=True):
        if rec.live:
            (sound if rec.sound else altered).add(rec.digest)
    for content_hash in store.loose_blobs():
        digest = bytes.fromhex(content_hash[3:])
        if digest in sound:
            continue
        try:
            with open(store.loose_path(content_hash), "rb") as f:
                data = f.read()
        except OSError:
            continue
        (sound if blake3(data).digest() == digest else altered).add(digest)
    return sound, altered - sound

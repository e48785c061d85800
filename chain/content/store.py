"""The content store: blobs named by their BLAKE3 hash, in append-only pack files.

Layout (specs/FORMAT.md 6, the decision in specs/adr/0001-content-packs.md)::

    content/packs/00000000.pack   "MCPACK1\\n", then records, appended only
    content/packs/index/ab        44-byte hints: digest, pack number, offset

A record is ``state (1) | digest (32) | n (4, big-endian) | bytes (n) | n (4)``.
The state is ``L`` (live) or ``E`` (erased by a redaction: its bytes are
zeros). The trailing length lets a writer check the pack's last record in
O(1) before it appends; a pack whose tail is torn is never appended to again
(the next record starts a new pack), so records are never moved or cut.

The index is a hint: it is written without fsync, every hit is checked
against the record it points at, and a miss rescans the packs once (and
writes the hints it lacked). Blobs of a data directory written before packs
(``content/<2 hex>/<62 hex>``) are still read; ``migrate`` moves them into a
pack.

A store is used by one thread; writers hold the ledger's lock.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, repeat
from operator import add
from typing import Final, cast

from blake3 import blake3

from ..format.fsutil import fsync_dir, write_all, write_parts
from ..format.patterns import lazy
from ..format.values import Value

__all__ = ["ABSENT", "ALTERED", "PACK_MAGIC", "ContentStore", "Record", "scan_pack"]

PACK_MAGIC: Final = b"MCPACK1\n"
LIVE: Final = 0x4C  # "L"
ERASED: Final = 0x45  # "E"
HEAD: Final = 37  # state, digest, length
TAIL: Final = 4
#: What check_digest() answers when no copy of a blob is stored, or only altered ones.
ABSENT: Final = -1
ALTERED: Final = -2
HINT: Final = struct.Struct(">32sIQ")  # digest, pack number, record offset: 44 bytes
#: A pack is closed for appending once it reaches this size.
PACK_LIMIT: Final = 256 << 20
#: Bytes read at a time when records are read in order.
WINDOW: Final = 1 << 20
#: int.to_bytes as map() calls it: (int, length, byte order).
_to_bytes = cast("Callable[[int, int, str], bytes]", int.to_bytes)
_PACK_RE: Final = lazy(r"([0-9]{8})\.pack")
_LOOSE_DIR_RE: Final = lazy(r"[0-9a-f]{2}")
_LOOSE_RE: Final = lazy(r"[0-9a-f]{62}")


class Record(Value):
    """One record of a pack: where it is and what it holds."""

    __slots__ = ("digest", "live", "offset", "pack", "size", "sound")
    pack: int
    offset: int
    digest: bytes
    size: int
    live: bool
    sound: bool  # False: live, framed, but its bytes no longer hash to its digest

    def __init__(
        self, pack: int, offset: int, digest: bytes, size: int, live: bool, sound: bool = True
    ) -> None:
        set_ = object.__setattr__
        set_(self, "pack", pack)
        set_(self, "offset", offset)
        set_(self, "digest", digest)
        set_(self, "size", size)
        set_(self, "live", live)
        set_(self, "sound", sound)


def _valid(
    data: bytes | memoryview, at: int, pack: int = -1, *, hashed: bool = True
) -> Record | None:
    """The record starting at ``at`` in ``data``, or None if none is whole and sound.

    With ``hashed`` False a live record whose bytes no longer hash to its
    digest (altered in place) still counts: the verifier reports it.
    """
    if at + HEAD + TAIL > len(data):
        return None
    state = data[at]
    if state not in (LIVE, ERASED):
        return None
    digest = bytes(data[at + 1 : at + 33])
    (size,) = struct.unpack_from(">I", data, at + 33)
    end = at + HEAD + size
    if end + TAIL > len(data) or struct.unpack_from(">I", data, end)[0] != size:
        return None
    if hashed and state == LIVE and blake3(data[at + HEAD : end]).digest() != digest:
        return None
    return Record(pack, at, digest, size, state == LIVE)


def scan_pack(data: bytes, pack: int = -1, *, altered: bool = False) -> Iterator[Record]:
    """Every sound record of a pack's bytes, in order (FORMAT.md 6.1).

    Bytes that are not a sound record (a torn write a crash left behind)
    are skipped: the scan looks for the next offset where a record parses
    and, if live, hashes to its digest. With ``altered``, a live record
    whose framing is whole but whose bytes no longer hash to its digest is
    yielded too (``sound`` False), and the scan goes on from the next byte,
    as it would over junk. A file without the magic holds no record.
    """
    if not data.startswith(PACK_MAGIC):
        return
    at = len(PACK_MAGIC)
    view = memoryview(data)
    while at < len(data):
        rec = _valid(view, at, pack)
        if rec is not None:
            yield rec
            at += HEAD + rec.size + TAIL
            continue
        if altered and data[at] == LIVE:
            framed = _valid(view, at, pack, hashed=False)
            if framed is not None:
                yield Record(pack, at, framed.digest, framed.size, True, False)
        at += 1


def _digest(content_hash: str) -> bytes:
    return bytes.fromhex(content_hash[3:])


def _digests(blobs: Iterable[bytes]) -> list[bytes]:
    """The BLAKE3 digest of each blob, by one hasher reset after each (making a new hasher
    for each blob cost about 0.2 us more a blob)."""
    h = blake3()
    update, digest, reset = h.update, h.digest, h.reset
    out: list[bytes] = []
    found = out.append
    for blob in blobs:
        update(blob)
        found(digest())
        reset()
    return out


class ContentStore:
    """Blobs under ``root`` (a data directory's content/), addressed by ``b3:<hex>``."""

    def __init__(self, root: os.PathLike[str] | str) -> None:
        self.root = os.fspath(root)
        self.packs = f"{self.root}/packs"
        self.hints = f"{self.packs}/index"
        self._fds: dict[int, int] = {}  # pack number -> read descriptor
        self._window: tuple[int, int, bytes] = (-1, 0, b"")  # pack, start, bytes
        self._cursor: tuple[int, int] = (-1, 0)  # where the next record in order starts
        self._shards: dict[int, bytes] = {}  # first digest byte -> hint bytes read
        self._scanned = False
        self._active: tuple[int, int] | None = None  # pack number, append descriptor
        self._pending = False  # records written, not yet synced
        self._new_pack = False  # a pack file created, its name not yet synced
        self._new_dir = False  # packs/ created, its name not yet synced

    # -- reading --------------------------------------------------------

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._active is not None:
            os.close(self._active[1])
            self._active = None
        self._window = (-1, 0, b"")

    def pack_path(self, pack: int) -> str:
        return f"{self.packs}/{pack:08d}.pack"

    def _fd(self, pack: int) -> int | None:
        """A read descriptor of pack ``pack``, or None when it is missing or not a pack.

        A file that does not start with the magic is not a pack (FORMAT.md
        6.1): none of its bytes are read, through the hints or by a scan.
        """
        fd = self._fds.get(pack)
        if fd is None:
            try:
                fd = os.open(self.pack_path(pack), os.O_RDONLY)
            except (FileNotFoundError, IsADirectoryError):
                return None
            if os.pread(fd, len(PACK_MAGIC), 0) != PACK_MAGIC:
                os.close(fd)
                return None
            self._fds[pack] = fd
        return fd

    def _read(self, pack: int, offset: int, need: int) -> bytes:
        """``need`` bytes of a pack from ``offset`` (fewer at its end), through a read window."""
        wpack, start, data = self._window
        if wpack == pack and start <= offset and offset + need <= start + len(data):
            return data[offset - start : offset - start + need]
        fd = self._fd(pack)
        if fd is None:
            return b""
        data = os.pread(fd, max(need, WINDOW), offset)
        self._window = (pack, offset, data)
        return data[:need]

    def _record_at(self, pack: int, offset: int, digest: bytes) -> tuple[Record, bytes] | None:
        """The sound record for ``digest`` at (pack, offset), with its bytes, or None."""
        head = self._read(pack, offset, HEAD)
        if len(head) < HEAD or head[1:33] != digest or head[0] not in (LIVE, ERASED):
            return None
        (size,) = struct.unpack_from(">I", head, 33)
        whole = self._read(pack, offset, HEAD + size + TAIL)
        rec = _valid(whole, 0, hashed=False)
        if rec is None:
            return None
        self._cursor = (pack, offset + HEAD + size + TAIL)
        return Record(pack, offset, digest, size, rec.live), whole[HEAD : HEAD + size]

    def _shard(self, first: int) -> bytes:
        data = self._shards.get(first)
        if data is None:
            try:
                with open(f"{self.hints}/{first:02x}", "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                data = b""
            self._shards[first] = data
        return data

    def _hinted(self, digest: bytes) -> Iterator[tuple[int, int]]:
        """(pack, offset) of every whole hint naming ``digest``, newest first."""
        data = self._shard(digest[0])
        found: list[tuple[int, int]] = []
        at = data.find(digest)
        while at >= 0:
            if at % HINT.size == 0 and at + HINT.size <= len(data):
                _, pack, offset = HINT.unpack_from(data, at)
                found.append((int(pack), int(offset)))
            at = data.find(digest, at + 1)
        return reversed(found)

    def _records(self, digest: bytes) -> list[tuple[Record, bytes]]:
        """Sound records of ``digest``: the next one in order if it is live, else all of them."""
        pack, offset = self._cursor
        if pack >= 0:
            # Blobs are mostly read in the order they were written; the first
            # record of the next pack follows the last one of a full pack.
            # Only a sound copy ends the search: another may be sound (6.1).
            for at in ((pack, offset), (pack + 1, len(PACK_MAGIC))):
                hit = self._record_at(*at, digest)
                if hit is not None and hit[0].live and blake3(hit[1]).digest() == digest:
                    return [hit]
        return self._all_records(digest)

    def _all_records(self, digest: bytes, *, search: bool = True) -> list[tuple[Record, bytes]]:
        """Every sound record of ``digest`` the hints (or, once, a rescan) find.

        With ``search``, a miss reads the hint shard again (another process
        may have added to it since it was cached), then rescans the packs
        once per store. Without it (a writer's duplicate check) the hints
        alone answer: a missed duplicate costs only bytes.
        """
        self._window = (-1, 0, b"")  # a point read sees the bytes on disk now

        def found() -> list[tuple[Record, bytes]]:
            return [r for p, o in self._hinted(digest) if (r := self._record_at(p, o, digest))]

        out = found()
        if not out and search:
            self._shards.pop(digest[0], None)
            out = found()
        if not out and search and not self._scanned:
            self._rescan()
            out = found()
        return out

    def loose_path(self, content_hash: str) -> str:
        """Where the layout before packs kept a blob: content/<2 hex>/<62 hex>."""
        digest = content_hash[3:]
        return f"{self.root}/{digest[:2]}/{digest[2:]}"

    def _read_loose(self, content_hash: str) -> bytes | None:
        try:
            with open(self.loose_path(content_hash), "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def raw(self, content_hash: str) -> bytes | None:
        """The bytes stored for ``content_hash`` as they are, or None (for the verifier).

        Bytes altered in place (a live record, or a loose blob of the layout
        before packs, that no longer hashes to its name) are returned as
        they are, so that the verifier can say "mismatch" and not "missing";
        a sound copy wins over an altered one.
        """
        digest = _digest(content_hash)
        altered = None
        for rec, data in self._records(digest):
            if rec.live:
                if blake3(data).digest() == digest:
                    return data
                altered = altered if altered is not None else data
        if altered is not None and not self._scanned:
            # Only altered copies were hinted: a sound one the hints miss still wins (6.1).
            self._rescan()
            for rec, data in self._all_records(digest, search=False):
                if rec.live and blake3(data).digest() == digest:
                    return data
        loose = self._read_loose(content_hash)
        return loose if loose is not None else altered

    def check_digest(self, digest: bytes) -> int:
        """The size of a sound stored copy of the blob, or ABSENT, or ALTERED (for the verifier).

        What raw() answers, as a verifier needs it, hashing the bytes once:
        the size when a copy hashes to its 32-byte digest, ALTERED when only
        altered copies are stored, ABSENT when none is.
        """
        return self.check_digests((digest,))[0]

    def check_digests(
        self, digests: Sequence[bytes], sizes: Sequence[int] | None = None
    ) -> list[int]:
        """check_digest() of each digest, in order, in one loop (verify checks runs of entries).

        The blob that follows the last one read, inside the read window, is
        checked in place (blobs are mostly read in the order they were
        written); any other goes through raw(). ``sizes``, the size each
        entry gives its blob, changes only how fast the answer comes: blobs
        stored one after the other at those sizes are checked together
        (_check_in_order).
        """
        if sizes is None:
            return self._check_each(digests)
        out: list[int] = []
        i, n = 0, len(digests)
        while i < n:
            done = self._check_in_order(digests[i:], sizes[i:])
            if done:
                out += sizes[i : i + done]
                i += done
            else:  # the next blob is not in the window at its place: found the long way
                out += self._check_each(digests[i : i + 1])
                i += 1
        return out

    def _check_in_order(self, digests: Sequence[bytes], sizes: Sequence[int]) -> int:
        """How many of the blobs, from the first, are sound in the read window one after the
        other from the cursor at the given sizes: all those that fit, or 0.

        The checks of _check_each's in-window path (a live record, its digest,
        its length before and after, its bytes hashed), each made over the
        whole stretch by one call rather than once a blob: what _check_each
        answers for such blobs is their sizes. On any difference this
        answers 0 and _check_each finds what is wrong, blob by blob.
        """
        pack, offset = self._cursor
        wpack, start, data = self._window
        at = offset - start
        if wpack != pack or pack < 0 or at < 0 or max(sizes) >= 1 << 32:
            return 0
        # where each record starts, then where the last one ends
        starts = list(accumulate(map(add, sizes, repeat(HEAD + TAIL)), initial=at))
        k = bisect_right(starts, len(data)) - 1  # records that end inside the window
        if k <= 0:
            return 0
        ends = starts[1 : k + 1]
        lengths = list(map(_to_bytes, sizes[:k], repeat(4), repeat("big")))
        named = digests[:k]
        blobs = list(
            map(
                data.__getitem__,
                map(slice, map(add, starts, repeat(HEAD)), map(add, ends, repeat(-TAIL))),
            )
        )
        # the records as they must be, their blobs as they are: one comparison for the framing
        made = b"".join(chain.from_iterable(zip(repeat(b"L"), named, lengths, blobs, lengths)))
        if made != data[at : ends[-1]] or _digests(blobs) != list(named):
            return 0
        self._cursor = (pack, start + ends[-1])
        return k

    def _check_each(self, digests: Iterable[bytes]) -> list[int]:
        """check_digests() blob by blob."""
        out: list[int] = []
        pack, offset = self._cursor
        wpack, start, data = self._window
        view = memoryview(data)
        for digest in digests:
            at = offset - start
            if wpack == pack >= 0 and at >= 0 and data.startswith(b"L", at):
                length = data[at + 33 : at + HEAD]
                end = at + HEAD + int.from_bytes(length, "big")
                if (
                    data.startswith(digest, at + 1)
                    and data.startswith(length, end)
                    and blake3(view[at + HEAD : end]).digest() == digest
                ):
                    offset = start + end + TAIL
                    out.append(end - at - HEAD)
                    continue
            self._cursor = (pack, offset)
            raw = self.raw("b3:" + digest.hex())  # may move the window and the cursor
            out.append(
                ABSENT if raw is None else len(raw) if blake3(raw).digest() == digest else ALTERED
            )
            pack, offset = self._cursor
            wpack, start, data = self._window
            view = memoryview(data)
        self._cursor = (pack, offset)
        return out

    def get(self, content_hash: str) -> bytes | None:
        """The blob's bytes, verified against its name; None when absent, erased or altered."""
        data = self.raw(content_hash)
        if data is None or blake3(data).digest() != _digest(content_hash):
            return None
        return data

    def exists(self, content_hash: str) -> bool:
        return self.get(content_hash) is not None

    def pack_numbers(self) -> list[int]:
        try:
            names = os.listdir(self.packs)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for n in names if (m := _PACK_RE.fullmatch(n)))

    def pack_bytes(self, pack: int) -> bytes:
        with open(self.pack_path(pack), "rb") as f:
            return f.read()

    def records(self, *, altered: bool = False) -> Iterator[Record]:
        """Every sound record of every pack, in order (``altered``: see scan_pack)."""
        for pack in self.pack_numbers():
            try:
                data = self.pack_bytes(pack)
            except (FileNotFoundError, IsADirectoryError):
                continue
            yield from scan_pack(data, pack, altered=altered)

    def loose_blobs(self) -> list[str]:
        """Content hashes of the blobs stored one file each (the layout before packs)."""
        return [
            f"b3:{os.path.basename(folder)}{name}"
            for folder in self.loose_folders()
            for name in sorted(os.listdir(folder))
            if _LOOSE_RE.fullmatch(name)
        ]

    def loose_folders(self) -> list[str]:
        """The fan-out folders of the layout before packs (content/<2 hex>/)."""
        try:
            names = sorted(os.listdir(self.root))
        except FileNotFoundError:
            return []
        return [
            f"{self.root}/{n}"
            for n in names
            if _LOOSE_DIR_RE.fullmatch(n) and os.path.isdir(f"{self.root}/{n}")
        ]

    def has_loose(self) -> bool:
        """True if content/ holds a folder of the layout before packs (cheap: one listdir)."""
        try:
            return any(_LOOSE_DIR_RE.fullmatch(n) for n in os.listdir(self.root))
        except FileNotFoundError:
            return False

    def count(self) -> tuple[int, int]:
        """(number of distinct live blobs, their total bytes), packs and loose files."""
        seen: dict[bytes, int] = {}
        for rec in self.records():
            if rec.live:
                seen[rec.digest] = rec.size
        for content_hash in self.loose_blobs():
            digest = _digest(content_hash)
            if digest not in seen:
                seen[digest] = os.stat(self.loose_path(content_hash)).st_size
        return len(seen), sum(seen.values())

    def _rescan(self) -> None:
        """Read every pack once and write the hints that are missing (a crash can lose them).

        Altered records get hints too, so that the verifier finds them as it
        does through the hints: deleting the hints changes no verdict (6.2).
        """
        self._scanned = True
        self._shards.clear()
        missing: dict[int, list[bytes]] = {}
        for rec in self.records(altered=True):
            hinted = self._shard(rec.digest[0])
            hint = HINT.pack(rec.digest, rec.pack, rec.offset)
            at = hinted.find(hint)
            while at >= 0 and at % HINT.size:
                at = hinted.find(hint, at + 1)
            if at < 0:
                missing.setdefault(rec.digest[0], []).append(hint)
        for first, hints in missing.items():
            self._add_hints(first, b"".join(hints))

    def _add_hints(self, first: int, data: bytes) -> None:
        """Append hints to a shard (no fsync: they are checked on use and rebuilt on a miss)."""
        try:
            fd = os.open(f"{self.hints}/{first:02x}", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except FileNotFoundError:
            os.makedirs(self.hints, exist_ok=True)
            fd = os.open(f"{self.hints}/{first:02x}", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            return  # a read-only copy: hints are an optimisation
        try:
            size = os.fstat(fd).st_size
            if size % HINT.size:  # a torn hint: pad it out so the next ones stay aligned
                data = b"\0" * (HINT.size - size % HINT.size) + data
            write_all(fd, data)
        finally:
            os.close(fd)
        cached = self._shards.get(first)
        if cached is not None:
            self._shards[first] = cached + data

    # -- writing (under the ledger's lock) ------------------------------

    def _open_active(self) -> tuple[int, int]:
        """The pack to append to: the last one if its tail is sound and it has room."""
        if self._active is not None:
            return self._active
        numbers = self.pack_numbers()
        if numbers:
            last = numbers[-1]
            fd = os.open(self.pack_path(last), os.O_RDWR | os.O_APPEND)
            if self._appendable(fd):
                self._active = (last, fd)
                return self._active
            os.close(fd)
        number = numbers[-1] + 1 if numbers else 0
        if not os.path.isdir(self.packs):
            os.makedirs(self.packs, exist_ok=True)
            self._new_dir = True
        fd = os.open(
            self.pack_path(number), os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644
        )
        write_all(fd, PACK_MAGIC)
        self._new_pack = True
        self._active = (number, fd)
        return self._active

    @staticmethod
    def _appendable(fd: int) -> bool:
        """The pack ends with a sound record (or is just its magic) and is below the limit."""
        size = os.fstat(fd).st_size
        if size >= PACK_LIMIT or os.pread(fd, len(PACK_MAGIC), 0) != PACK_MAGIC:
            return False
        if size == len(PACK_MAGIC):
            return True
        (n,) = struct.unpack(">I", os.pread(fd, TAIL, size - TAIL).rjust(TAIL, b"\0"))
        start = size - (HEAD + n + TAIL)
        if start < len(PACK_MAGIC):
            return False
        return _valid(os.pread(fd, HEAD + n + TAIL, start), 0) is not None

    def _packed(self, digest: bytes) -> bool:
        return any(
            rec.live and blake3(data).digest() == digest
            for rec, data in self._all_records(digest, search=False)
        )

    def packed(self, content_hash: str) -> bool:
        """True if a live record in a pack holds the blob (by the hints)."""
        return self._packed(_digest(content_hash))

    def end_write(self) -> None:
        """Close the append descriptor (the writer's lock is about to be released)."""
        if self._active is not None:
            os.close(self._active[1])
            self._active = None

    def put(self, data: bytes) -> str:
        """Append ``data`` to the active pack unless a live record holds it; return its hash.

        Not yet durable: the caller calls sync() before acknowledging
        anything that names the blob.
        """
        return self.put_batch([data])[0]

    def put_many(self, blobs: list[tuple[bytes, bytes]]) -> None:
        """Append records for (digest, bytes) pairs in one write (no duplicate check)."""
        if not blobs:
            return
        pack, fd = self._open_active()
        offset = os.fstat(fd).st_size
        parts: list[bytes] = []
        hints: dict[int, list[bytes]] = {}
        for digest, data in blobs:
            n = struct.pack(">I", len(data))
            parts += (b"L", digest, n, data, n)
            hints.setdefault(digest[0], []).append(HINT.pack(digest, pack, offset))
            offset += HEAD + len(data) + TAIL
        try:
            write_parts(fd, parts)
        except BaseException:
            # A partial record is left as a torn tail: close this pack to appends.
            os.close(fd)
            self._active = None
            raise
        self._pending = True
        for first, got in hints.items():
            self._add_hints(first, b"".join(got))
        if offset >= PACK_LIMIT:
            self.sync()
            os.close(fd)
            self._active = None

    def put_batch(self, datas: list[bytes], digests: list[bytes] | None = None) -> list[str]:
        """Store many blobs (skipping ones already live or repeated); return their hashes.
        ``digests``: their BLAKE3 digests, when the caller has them already."""
        out: list[str] = []
        todo: list[tuple[bytes, bytes]] = []
        seen: set[bytes] = set()
        for n, data in enumerate(datas):
            digest = blake3(data).digest() if digests is None else digests[n]
            out.append("b3:" + digest.hex())
            if digest in seen:
                continue
            seen.add(digest)
            # most blobs of a batch are new: no hint holds their digest (one find in C)
            if digest not in self._shard(digest[0]) or not self._packed(digest):
                todo.append((digest, data))
        self.put_many(todo)
        return out

    def sync(self, content_hash: str | None = None) -> None:
        """Make every record written so far durable (one fdatasync of the active pack)."""
        if not self._pending or self._active is None:
            return
        os.fdatasync(self._active[1])
        if self._new_pack:
            fsync_dir(self.packs)
            self._new_pack = False
        if self._new_dir:
            fsync_dir(self.root)
            self._new_dir = False
        self._pending = False

    def remove(self, content_hash: str) -> list[str]:
        """Erase every copy of a blob durably (its bytes become zeros); where each copy was
        (``packs/00000003.pack``, or the loose file of the old layout), relative to the
        content folder: empty when none was there."""
        digest = _digest(content_hash)
        erased: list[str] = []
        for rec, _ in self._all_records(digest):
            if not rec.live:
                continue
            fd = os.open(self.pack_path(rec.pack), os.O_WRONLY)
            try:
                blank = b"E" + digest + struct.pack(">I", rec.size) + bytes(rec.size)
                os.pwrite(fd, blank, rec.offset)
                os.fdatasync(fd)
            finally:
                os.close(fd)
            erased.append(f"packs/{rec.pack:08d}.pack")
        self._window = (-1, 0, b"")
        loose = self.loose_path(content_hash)
        try:
            os.unlink(loose)
        except (FileNotFoundError, NotADirectoryError):
            pass
        else:
            fsync_dir(os.path.dirname(loose))
            erased.append(os.path.relpath(loose, self.root))
        return erased

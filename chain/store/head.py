"""The cached head: what an append needs, without reading the chain.

head.json records the chain's size, byte length, the offset and hash of its
last line, the last ts and the current key. It is a cache: overwritten in
place without fsync, self-checking (a torn write reads as lost), checked
against the chain on every open, and rebuilt from the chain when lost.
Opening for a write also recovers:

- complete lines beyond the head (a writer crashed after its fsync but
  before updating head.json) are checked and adopted;
- an unterminated last line (a writer crashed mid-append; never
  acknowledged) is moved to quarantine/ with a warning, then cut off;
- a chain shorter than the head, or whose last line no longer hashes to the
  head, is refused: that is truncation or rewriting, not a crash.

"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from pathlib import Path

import orjson

from ..format.canonical import b3, canonical
from ..format.config import Layout
from ..format.entry import MAX_LINE_BYTES
from ..format.errors import ChainStateError, IntegrityError, OperationalError
from ..format.fsutil import fsync_dir
from ..format.values import Record
from ..log.merkle import BLAKE3, Frontier
from ..verify.lines import ChainState, LineResult, check_line

__all__ = ["Head", "TornTailWarning", "load_head", "recover", "save_head"]


class TornTailWarning(UserWarning):
    """An unterminated last line was moved to quarantine."""


class Head(Record):
    __slots__ = ("chain_id", "frontier", "hash", "key", "last_offset", "offset", "size", "ts")
    size: int  # number of entries
    offset: int  # byte length of chain.jsonl covered
    last_offset: int  # where the last line starts
    hash: str | None  # b3 of the last line
    ts: str
    key: str | None  # current signing key
    chain_id: str | None
    # The Merkle frontier of the first ``size`` entries (merkle.Frontier).
    frontier: Frontier

    def __init__(
        self,
        size: int = 0,
        offset: int = 0,
        last_offset: int = 0,
        hash: str | None = None,
        ts: str = "",
        key: str | None = None,
        chain_id: str | None = None,
        frontier: Frontier | None = None,
    ) -> None:
        self.size = size
        self.offset = offset
        self.last_offset = last_offset
        self.hash = hash
        self.ts = ts
        self.key = key
        self.chain_id = chain_id
        self.frontier = Frontier(BLAKE3) if frontier is None else frontier

    def as_dict(self) -> dict[str, object]:
        # Not dataclasses.asdict: that deep-copies, and this is on the add path.
        return {
            "size": self.size,
            "offset": self.offset,
            "last_offset": self.last_offset,
            "hash": self.hash,
            "ts": self.ts,
            "key": self.key,
            "chain_id": self.chain_id,
            "frontier": [node.hex() for node in self.frontier.nodes],
        }

    def root(self) -> bytes:
        """The Merkle root of the chain up to this head: O(log n)."""
        return self.frontier.root()


HEAD_BYTES = 4096


def load_head(layout: Layout) -> Head | None:
    """The cached head, or None when missing, torn or unreadable."""
    try:
        data = orjson.loads(layout.head.read_bytes())
        check = data.pop("check")
        if check != b3(canonical(data)):
            return None
        nodes = [bytes.fromhex(node) for node in data.pop("frontier")]
        head = Head(**data)
        head.frontier = Frontier(BLAKE3, head.size, nodes)
    except (OSError, orjson.JSONDecodeError, TypeError, KeyError, AttributeError, ValueError):
        return None
    return head if _well_typed(head) else None


def _well_typed(h: Head) -> bool:
    """The members have the types and order a saved head can have."""
    ints = (h.size, h.offset, h.last_offset)
    if any(type(n) is not int or n < 0 for n in ints) or type(h.ts) is not str:
        return False
    if any(v is not None and type(v) is not str for v in (h.hash, h.key, h.chain_id)):
        return False
    if h.size == 0:
        return h.offset == h.last_offset == 0
    return 0 < h.offset - h.last_offset <= MAX_LINE_BYTES


def save_head(layout: Layout, head: Head) -> None:
    """Overwrite head.json in place with one pwrite (no fsync: it is a cache).

    The record is padded to a fixed size and carries its own hash, so a
    torn write is detected on load and the head is rebuilt from the chain.
    """
    fields = head.as_dict()
    fields["check"] = b3(canonical(head.as_dict()))
    record = orjson.dumps(fields)
    if len(record) >= HEAD_BYTES:
        raise OperationalError("head record too large")
    fd = os.open(layout.head, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, record.ljust(HEAD_BYTES - 1) + b"\n", 0)
        os.ftruncate(fd, HEAD_BYTES)  # a no-op unless something made the file longer
    finally:
        os.close(fd)


def _quarantine(layout: Layout, fd: int, start: int, data: bytes) -> Path:
    """Save ``data`` (the torn tail at ``start``) aside, then cut it off."""
    if not layout.quarantine.is_dir():
        layout.quarantine.mkdir()
        fsync_dir(layout.root)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = layout.quarantine / f"chain.jsonl.{start}.{stamp}.{os.urandom(4).hex()}.torn"
    with open(dest, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(layout.quarantine)
    os.ftruncate(fd, start)
    os.fsync(fd)
    warnings.warn(
        f"chain.jsonl ended with an unacknowledged write of {len(data)} bytes at offset "
        f"{start} (interrupted by a crash); moved to {dest}",
        TornTailWarning,
        stacklevel=3,
    )
    return dest


class _Inconsistent(Exception):
    """head.json names the right last line but disagrees with it."""


def _check_at_head(layout: Layout, fd: int, head: Head, file_size: int) -> None:
    if file_size < head.offset:
        raise IntegrityError(
            f"chain.jsonl is {file_size} bytes, but the cached head covers {head.offset} "
            f"bytes ({head.size} entries): the chain was truncated",
            reason="truncated",
            seq=head.size,
            hint="run `memory-chain verify`; restore the chain from a backup or export",
        )
    if head.size == 0:
        return
    last = os.pread(fd, head.offset - head.last_offset, head.last_offset)
    if not last.endswith(b"\n") or b3(last[:-1]) != head.hash:
        raise IntegrityError(
            f"the line at seq {head.size - 1} no longer hashes to the cached head {head.hash}: "
            "the chain was rewritten",
            reason="rewritten",
            seq=head.size - 1,
            hint="run `memory-chain verify`; remove head.json only if the new chain is trusted",
        )
    # The head's other members must agree with that line (the check hash
    # only catches torn writes: anyone can recompute it).
    obj = orjson.loads(last)
    key = obj["meta"]["new_key"] if obj["type"] == "key-rotation" else obj["key"]
    if (obj["seq"], obj["ts"], key) != (head.size - 1, head.ts, head.key):
        raise _Inconsistent


def recover(
    layout: Layout,
    fd: int,
    *,
    known: Head | None = None,
    check_signatures: bool = True,
) -> Head:
    """Return the head of the chain open (read-write) at ``fd``.

    Must be called with the write lock held. ``known`` is the head this
    process saved last, used as is when the chain still ends where it
    says (its last line is still checked). Adopts complete lines beyond
    the cached head (their blobs were made durable before they were
    written, so a missing blob there is a deletion for verify to report, not
    a crash leftover), quarantines a torn tail, and saves the head if it
    moved.
    """
    file_size = os.fstat(fd).st_size
    if known is not None and known.offset == file_size:
        # This process wrote the head last and the chain has not moved since:
        # check it against the chain's last line, skip reading head.json.
        with contextlib.suppress(_Inconsistent):
            _check_at_head(layout, fd, known, file_size)
            return known
    cached = load_head(layout)
    if cached is not None:
        try:
            _check_at_head(layout, fd, cached, file_size)
        except _Inconsistent:
            cached = None  # rebuilt from the chain below
    head = cached if cached is not None else Head()
    if file_size == head.offset and cached is not None:
        return head
    tail = _read(fd, head.offset, file_size - head.offset)
    lines = tail.split(b"\n")
    torn = lines.pop()  # b"" when the tail ends with a newline
    state = ChainState(
        size=head.size, head=head.hash, ts=head.ts, key=head.key, chain_id=head.chain_id
    )
    offset = head.offset
    # Without a cached head, the whole chain is rolled forward once; its
    # signatures are left to `verify` (which checks every step).
    sigs = check_signatures and cached is not None
    frontier = head.frontier.copy() if cached is not None else Frontier(BLAKE3)
    for line in lines:
        result = check_line(line, None, signatures=sigs)
        failure = _apply_light(state, result)
        if failure is not None:
            raise IntegrityError(
                f"line at seq {state.size} beyond the cached head does not follow it: {failure}",
                reason="bad-tail",
                seq=state.size,
                hint="run `memory-chain verify` for the full report",
            )
        frontier.append(result.leaf)
        head.last_offset = offset
        offset += len(line) + 1
    if torn:
        _quarantine(layout, fd, offset, torn)
    if state.size == 0:
        raise ChainStateError(
            "chain.jsonl holds no entry (not even its genesis)",
            hint="restore it from a backup or an export, or `memory-chain init` a new directory",
        )
    # The adopted lines were written by a writer that may have died before
    # its fsync: make them durable before the head says they are there.
    os.fdatasync(fd)
    head.size, head.offset, head.hash = state.size, offset, state.head
    head.ts, head.key, head.chain_id = state.ts, state.key, state.chain_id
    head.frontier = frontier
    save_head(layout, head)
    return head


def _apply_light(state: ChainState, r: LineResult) -> str | None:
    """Steps 1-8 (not the redaction rules, which need the whole chain)."""
    if r.error is not None:
        return r.error[2]
    if r.seq != state.size:
        return f"expected seq {state.size}, found {r.seq}"
    if r.prev != state.head:
        return "prev does not match the previous line"
    if r.ts < state.ts:
        return "ts goes backwards"
    if state.size > 0 and r.key != state.key:
        return f"signed by {r.key}, not the current key {state.key}"
    if not r.sig_ok or not r.rotation_ok:
        return "signature does not verify"
    if r.seq == 0:
        state.chain_id, state.key = r.hash, r.key
    elif r.type == "key-rotation":
        state.key = r.new_key
    state.head, state.ts = r.hash, r.ts
    state.size += 1
    return None


def _read(fd: int, offset: int, length: int) -> bytes:
    chunks = []
    while length > 0:
        chunk = os.pread(fd, min(length, 1 << 24), offset)
        if not chunk:
            raise OperationalError("chain.jsonl changed while it was being read")
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(chunks)

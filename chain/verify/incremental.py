"""The verification cache: resume verify where the last one ended.

After a verify succeeds, the state it ended in (verify.ChainState: head,
key history, Merkle frontier, per-entry content digests and flags, blobs
still missing) is saved with the number of bytes of chain.jsonl it covered,
the BLAKE3 hash of each 1 MiB chunk of those bytes, and the file's identity
(inode, length, mtime, ctime) before it was read. The next verify knows the
bytes are unchanged when the identity is the same, or when the appends
record (writes by this program, which note the identity before and after
each append) leads from it to the identity now: then it reads only the last
verified line. Else it hashes the chunks again (a few milliseconds per
10 MB, no parsing, no signatures). Either way only the lines after it are
verified, from the saved state, so verifying after k new entries costs O(k)
signature checks (specs/FORMAT.md 13).

What it trusts: the cache file, which lives in the per-user state folder
beside the witness (never in the data directory, which the chain's own
writer controls). Blobs of entries verified before are not hashed again:
the cache also records each content pack as it was then (packs.py), and a
pack gone, cut or altered since is read again record by record.

File: one JSON header line (format, the covered size, its chunk hashes and
the file's identity, the state's scalar members, the frontier, the missing blobs, the checkpoints
already checked, the packs seen, the length and hash of the binary part), then the binary
part: 32 bytes of content digest per entry, then one flag byte per entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from ..format.canonical import b3
from ..format.fsutil import replace_file
from ..format.values import Record
from ..log.merkle import BLAKE3, Frontier
from .column import Column
from .lines import ChainState, Failure
from .packs import Seen

__all__ = [
    "CACHE_FORMAT",
    "CHUNK",
    "Verified",
    "appends_path",
    "cache_path",
    "clear_failure",
    "failure_path",
    "identity",
    "load_failure",
    "load_verified",
    "only_appended",
    "record_append",
    "record_failure",
    "save_verified",
    "trim_appends",
]

CACHE_FORMAT: Final = "memory-chain-verified/3"
#: Revision 2 files are read too (without a file identity: their prefix is hashed once).
_REVISION_2: Final = "memory-chain-verified/2"
#: Flags changed after the flags file was written (a redaction of an earlier entry) are
#: kept in the header, up to this many; then the body files are written whole again.
MAX_FLAGGED: Final = 4096
#: chain.jsonl is hashed in chunks of this many bytes (13.1 ``chunks``): a verify that
#: resumes after appends hashes only the last chunk and the new bytes.
CHUNK: Final = 1 << 20


class Verified(Record):
    """A saved verification: the state after ``offset`` bytes of the chain."""

    __slots__ = ("chain", "checked", "chunks", "files", "offset", "packs", "state")
    offset: int
    chunks: list[str]  # b3 of each CHUNK of chain.jsonl[0:offset], the last one partial
    state: ChainState
    checked: set[str]  # b3 of the text of each checkpoint the chain was checked against
    packs: list[Seen]  # the content packs as they were when their records had been hashed
    #: chain.jsonl's identity (identity()) when its bytes [0:offset] were known to be
    #: those verified; None in a revision 2 file
    chain: list[int] | None
    #: the identities of the body files as read (a save appends to them only if unchanged)
    files: list[list[int] | None] | None

    def __init__(
        self,
        offset: int,
        chunks: list[str],
        state: ChainState,
        checked: set[str],
        packs: list[Seen],
        chain: list[int] | None = None,
        files: list[list[int] | None] | None = None,
    ) -> None:
        self.offset = offset
        self.chunks = chunks
        self.state = state
        self.checked = checked
        self.packs = packs
        self.chain = chain
        self.files = files


def cache_path(state_dir: Path, chain_id: str) -> Path:
    return state_dir / "verified" / f"{chain_id.removeprefix('b3:')}.state"


def _body_paths(path: Path) -> tuple[Path, Path]:
    return path.with_suffix(".digests"), path.with_suffix(".flags")


@contextlib.contextmanager
def _locked(path: Path, how: int) -> Iterator[None]:
    """flock on ``<chain id>.lock`` beside the cache: shared to read, exclusive to save.
    Where the lock cannot be made (a read-only state folder), a read goes on without it."""
    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        if how != fcntl.LOCK_SH:
            raise
        yield
        return
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)


def _stat(path: Path) -> list[int] | None:
    try:
        return identity(path.stat())
    except OSError:
        return None


def save_verified(path: Path, verified: Verified) -> None:
    """Write the cache (not fsynced: losing it costs one full verify). The header is
    replaced atomically; of the body files, a resumed state whose files are as it read
    them gets only its new bytes appended and its changed flags written in place, any
    other state is written whole (13.1)."""
    s = verified.state
    digests_path, flags_path = _body_paths(path)
    with contextlib.suppress(OSError):  # a read-only home: the next verify is full again
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path, fcntl.LOCK_EX):
            files = [_stat(digests_path), _stat(flags_path)]
            flagged: dict[int, int] = {}
            if (
                isinstance(s.digests, Column)
                and isinstance(s.flags, Column)
                and verified.files is not None
                and files == verified.files
                and len(s.flags.changes()[1]) <= MAX_FLAGGED
            ):
                # append only: a reader's mapping of the older bytes never changes
                _append(digests_path, s.digests)
                _append(flags_path, s.flags)
                flagged = s.flags.changes()[1]
            else:
                replace_file(digests_path, bytes(s.digests), mode=0o600, durable=False)
                replace_file(flags_path, bytes(s.flags), mode=0o600, durable=False)
            header = {
                "format": CACHE_FORMAT,
                "offset": verified.offset,
                "chunks": verified.chunks,
                "chain": verified.chain,
                "size": s.size,
                "head": s.head,
                "ts": s.ts,
                "key": s.key,
                "chain_id": s.chain_id,
                "genesis_key": s.genesis_key,
                "keys": s.keys,
                "frontier": [node.hex() for node in s.frontier.nodes],
                "pending": {str(seq): blob for seq, blob in s.pending.items()},
                "checked": sorted(verified.checked),
                "packs": [p.as_list() for p in verified.packs],
                "digests": _stat(digests_path),
                "flags": _stat(flags_path),
                "flagged": {str(seq): flag for seq, flag in sorted(flagged.items())},
            }
            replace_file(path, orjson.dumps(header) + b"\n", mode=0o600, durable=False)


def _append(path: Path, column: Column) -> None:
    """Append the bytes added to ``column`` since it was read from ``path``."""
    mapped, _, tail = column.changes()
    if tail:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, tail, mapped)
        finally:
            os.close(fd)


def _mapped(path: Path, length: int) -> Any:
    """The first ``length`` bytes of ``path``, mapped read-only (b"" when empty)."""
    if length == 0:
        return b""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), length, prot=mmap.PROT_READ)


def load_verified(path: Path) -> Verified | None:
    """The saved verification, or None when missing or damaged (it is a cache)."""
    try:
        with _locked(path, fcntl.LOCK_SH):
            return _load(path)
    except OSError:
        return None


def _load(path: Path) -> Verified | None:
    raw = path.read_bytes()
    cut = raw.find(b"\n")
    with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError, OSError):
        h: dict[str, Any] = orjson.loads(raw[:cut])
        size = h["size"]
        files: list[list[int] | None] | None = None
        if h["format"] == CACHE_FORMAT:
            if cut != len(raw) - 1:
                return None
            digests_path, flags_path = _body_paths(path)
            files = [_stat(digests_path), _stat(flags_path)]
            if files != [h["digests"], h["flags"]] or None in files:
                return None
            if files[0][1] != 32 * size or files[1][1] != size:  # type: ignore[index]
                return None
            flagged = {int(seq): int(flag) for seq, flag in h["flagged"].items()}
            if not all(0 <= seq < size and 0 <= flag < 256 for seq, flag in flagged.items()):
                return None
            digests = Column(_mapped(digests_path, 32 * size))
            flags = Column(_mapped(flags_path, size), flagged)
        elif h["format"] == _REVISION_2:
            body = raw[cut + 1 :]
            if b3(body) != h["body"] or len(body) != 33 * size:
                return None
            digests, flags = Column(body[: 32 * size]), Column(body[32 * size :])
        else:
            return None
        state = ChainState(
            size=size,
            head=h["head"],
            ts=h["ts"],
            key=h["key"],
            chain_id=h["chain_id"],
            digests=digests,
            flags=flags,
            pending={int(seq): blob for seq, blob in h["pending"].items()},
            genesis_key=h["genesis_key"],
            keys=list(h["keys"]),
            frontier=Frontier(BLAKE3, size, [bytes.fromhex(n) for n in h["frontier"]]),
        )
        checked = {str(c) for c in h["checked"]}
        packs = [Seen.from_list(p) for p in h["packs"]]
        offset = int(h["offset"])
        if h["format"] == CACHE_FORMAT:
            chunks = [str(c) for c in h["chunks"]]
            chain = h["chain"]
            if chain is not None and (len(chain) != 4 or not all(type(v) is int for v in chain)):
                return None
            if len(chunks) != -(-offset // CHUNK):
                return None
        else:  # revision 2: one hash of the whole prefix, no identity
            chunks, chain = [str(h["prefix"])], None
        return Verified(offset, chunks, state, checked, packs, chain, files)
    return None


def identity(st: os.stat_result) -> list[int]:
    """A file's identity, as for packs (13.3): inode, length, mtime and ctime (ns). While
    it is unchanged the file was not written: ctime cannot be set back by a user."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


# -- appends by this program, for the verifier (13.5) -----------------------------------
#
# A writer that appended lines records the chain file's identity before and after, one
# JSON line [[before], [after]] in <chain id>.appends beside the cache. A verify whose
# cache recorded identity I, and that finds a path of such records from I to the file's
# identity now, knows the bytes it verified are unchanged without reading them.


def appends_path(state_dir: Path, chain_id: str) -> Path:
    return state_dir / "verified" / f"{chain_id.removeprefix('b3:')}.appends"


def record_append(path: Path, before: list[int], after: list[int]) -> None:
    """Note that this program appended to the chain between two identities (best effort,
    not fsynced: a record lost costs one hash of the chain)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, orjson.dumps([before, after]) + b"\n")
        finally:
            os.close(fd)


#: The appends file is rewritten without the records a saved cache made useless once it
#: has more than this many.
APPENDS_KEPT: Final = 256


def only_appended(path: Path, since: list[int], now: list[int]) -> bool:
    """Whether the appends recorded lead from identity ``since`` to ``now``, each one
    growing the file (so that no byte before ``since``'s length was written)."""
    if since == now:
        return True
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    step: dict[tuple[int, ...], list[int]] = {}
    for line in raw.splitlines():
        with contextlib.suppress(orjson.JSONDecodeError, TypeError, ValueError):
            before, after = orjson.loads(line)
            if len(before) == len(after) == 4 and after[1] > before[1]:
                step[tuple(before)] = after
    at = since
    for _ in range(len(step)):
        nxt = step.get(tuple(at))
        if nxt is None:
            return False
        if nxt == now:
            return True
        at = nxt
    return False


def trim_appends(path: Path, kept_from: int) -> None:
    """Drop the records of appends that ended at or below ``kept_from`` bytes, once there
    are more than APPENDS_KEPT (a saved cache starts after them)."""
    with contextlib.suppress(OSError):
        lines = path.read_bytes().splitlines()
        if len(lines) <= APPENDS_KEPT:
            return
        keep = []
        for line in lines:
            with contextlib.suppress(orjson.JSONDecodeError, TypeError, ValueError, IndexError):
                if orjson.loads(line)[1][1] > kept_from:
                    keep.append(line + b"\n")
        replace_file(path, b"".join(keep), mode=0o600, durable=False)


# -- the last verdict, for writers ------------------------------------------------
#
# A failed verify leaves <chain id>.failed beside the cache (one JSON object:
# seq, step, reason, message); a writer checks for it (one stat) and refuses to
# append on a chain it knows is broken; the next passing verify removes it.


def failure_path(state_dir: Path, chain_id: str) -> Path:
    return state_dir / "verified" / f"{chain_id.removeprefix('b3:')}.failed"


def record_failure(path: Path, failure: Failure) -> None:
    """Remember that the chain failed at ``failure`` (best effort: a read-only home is fine)."""
    body = {
        "seq": failure.seq,
        "step": failure.step,
        "reason": failure.reason,
        "message": failure.message,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, orjson.dumps(body) + b"\n", mode=0o600, durable=False)


def clear_failure(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def load_failure(path: Path) -> Failure | None:
    """The recorded failure, or None; a damaged record still counts as a failure."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Failure(0, 0, "unknown", f"cannot read {path}: {exc.strerror}")
    with contextlib.suppress(orjson.JSONDecodeError, TypeError, KeyError, ValueError):
        obj = orjson.loads(raw)
        return Failure(int(obj["seq"]), int(obj["step"]), str(obj["reason"]), str(obj["message"]))
    return Failure(0, 0, "unknown", f"{path} records a failed verify")

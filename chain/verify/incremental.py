"""The verification cache: resume verify where the last one ended.

After a verify succeeds, the state it ended in (verify.ChainState: head,
key history, Merkle frontier, per-entry content digests and flags, blobs
still missing) is saved with the number of bytes of chain.jsonl it covered
and the BLAKE3 hash of those bytes. The next verify hashes that prefix
again (a few milliseconds per 10 MB, no parsing, no signatures): if it is
unchanged, only the lines after it are verified, from the saved state, so
verifying after k new entries costs O(k) signature checks.

What it trusts: the cache file, which lives in the per-user state folder
beside the witness (never in the data directory, which the chain's own
writer controls). Blobs of entries verified before are not hashed again:
the cache also records each content pack as it was then (packs.py), and a
pack gone, cut or altered since is read again record by record.

File: one JSON header line (format, the covered size and its hash, the
state's scalar members, the frontier, the missing blobs, the checkpoints
already checked, the packs seen, the length and hash of the binary part), then the binary
part: 32 bytes of content digest per entry, then one flag byte per entry.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from ..format.canonical import b3
from ..format.fsutil import replace_file
from ..log.merkle import BLAKE3, Frontier
from .lines import ChainState, Failure
from .packs import Seen

__all__ = [
    "CACHE_FORMAT",
    "Verified",
    "cache_path",
    "clear_failure",
    "failure_path",
    "load_failure",
    "load_verified",
    "record_failure",
    "save_verified",
]

CACHE_FORMAT: Final = "memory-chain-verified/2"


@dataclass(slots=True)
class Verified:
    """A saved verification: the state after ``offset`` bytes of the chain."""

    offset: int
    prefix: str  # b3 of chain.jsonl[0:offset]
    state: ChainState
    checked: set[str]  # b3 of the text of each checkpoint the chain was checked against
    packs: list[Seen]  # the content packs as they were when their records had been hashed


def cache_path(state_dir: Path, chain_id: str) -> Path:
    return state_dir / "verified" / f"{chain_id.removeprefix('b3:')}.state"


def save_verified(path: Path, verified: Verified) -> None:
    """Write the cache (atomically; not fsynced: losing it costs one full verify)."""
    s = verified.state
    body = bytes(s.digests) + bytes(s.flags)
    header = {
        "format": CACHE_FORMAT,
        "offset": verified.offset,
        "prefix": verified.prefix,
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
        "body": b3(body),
    }
    with contextlib.suppress(OSError):  # a read-only home: the next verify is full again
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, orjson.dumps(header) + b"\n" + body, mode=0o600, durable=False)


def load_verified(path: Path) -> Verified | None:
    """The saved verification, or None when missing or damaged (it is a cache)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    cut = raw.find(b"\n")
    with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
        h: dict[str, Any] = orjson.loads(raw[:cut])
        body = raw[cut + 1 :]
        size = h["size"]
        if h["format"] != CACHE_FORMAT or b3(body) != h["body"] or len(body) != 33 * size:
            return None
        state = ChainState(
            size=size,
            head=h["head"],
            ts=h["ts"],
            key=h["key"],
            chain_id=h["chain_id"],
            digests=bytearray(body[: 32 * size]),
            flags=bytearray(body[32 * size :]),
            pending={int(seq): blob for seq, blob in h["pending"].items()},
            genesis_key=h["genesis_key"],
            keys=list(h["keys"]),
            frontier=Frontier(BLAKE3, size, [bytes.fromhex(n) for n in h["frontier"]]),
        )
        checked = {str(c) for c in h["checked"]}
        packs = [Seen.from_list(p) for p in h["packs"]]
        return Verified(int(h["offset"]), str(h["prefix"]), state, checked, packs)
    return None


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

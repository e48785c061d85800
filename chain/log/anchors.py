"""anchors.jsonl: the local record of checkpoints posted to EVM chains.

One JSON object per line, appended, never rewritten (specs/FORMAT.md
section 18.4). A transaction gets a ``sent`` record before it is
broadcast, so a crash between sending and recording cannot lose its hash,
then one record per later state (``confirmed``, ``failed``, ``dropped``).
Readers merge the records of one transaction, later fields winning.

This module is the file format only; talking to a chain is
memory_chain.anchor's business (chain imports none of the others).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from ..format.config import Layout
from ..format.errors import OperationalError
from ..format.fsutil import fsync_dir, write_all

__all__ = [
    "RECORD_FORMAT",
    "STATES",
    "Anchors",
    "append_record",
    "merge_records",
    "read_anchors",
]

RECORD_FORMAT: Final = "memory-chain-anchor/1"
STATES: Final = ("sent", "confirmed", "failed", "dropped")
_NOT_ANCHORS: Final = ("failed", "dropped")
TX_RE: Final = re.compile(r"0x[0-9a-f]{64}")
HEX32_RE: Final = re.compile(r"[0-9a-f]{64}")

# Fields every record carries, with their checks (FORMAT 18.4).
_REQUIRED: Final[dict[str, Callable[[Any], bool]]] = {
    "format": lambda v: v == RECORD_FORMAT,
    "state": lambda v: v in STATES,
    "tx": lambda v: isinstance(v, str) and TX_RE.fullmatch(v) is not None,
    "network": lambda v: isinstance(v, str) and 0 < len(v) <= 64,
    "evm_chain_id": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "chain_id": lambda v: isinstance(v, str) and HEX32_RE.fullmatch(v) is not None,
    "tree_size": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "root": lambda v: isinstance(v, str) and HEX32_RE.fullmatch(v) is not None,
    "checkpoint_hash": lambda v: isinstance(v, str) and HEX32_RE.fullmatch(v) is not None,
}


def _problem(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return "not a JSON object"
    for name, ok in _REQUIRED.items():
        if name not in rec:
            return f"no {name!r}"
        if not ok(rec[name]):
            return f"bad {name!r}"
    return None


@dataclass(frozen=True, slots=True)
class Anchors:
    """What anchors.jsonl holds: one merged record per transaction, in file order."""

    records: list[dict[str, Any]]
    skipped: list[str]  # "line N: why" for lines that are not records
    torn_tail: bool  # the last line has no newline (a write cut by a crash)

    def for_checkpoint(self, size: int, root: bytes) -> list[dict[str, Any]]:
        """Records that commit to this tree size and root, except dropped and failed ones.

        Those never anchored anything (`anchor verify` skips them too), so a
        proof bundle must not carry them as anchor references.
        """
        want = root.hex()
        return [
            r
            for r in self.records
            if r["tree_size"] == size and r["root"] == want and r["state"] not in _NOT_ANCHORS
        ]

    def pending(self, network: str) -> list[dict[str, Any]]:
        """Transactions sent on ``network`` whose outcome is not recorded yet."""
        return [r for r in self.records if r["network"] == network and r["state"] == "sent"]


def merge_records(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold the records of each transaction into one, later fields winning."""
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        merged.setdefault(row["tx"], {}).update(row)
    return list(merged.values())


def parse_anchors(raw: bytes) -> Anchors:
    """Parse anchors.jsonl bytes; lines that are not records are listed, not fatal."""
    torn = bool(raw) and not raw.endswith(b"\n")
    lines = raw.split(b"\n")
    if torn or lines[-1] == b"":
        lines = lines[:-1]
    rows, skipped = [], []
    for n, line in enumerate(lines, 1):
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            skipped.append(f"line {n}: not JSON")
            continue
        why = _problem(rec)
        if why is not None:
            skipped.append(f"line {n}: {why}")
            continue
        rows.append(rec)
    return Anchors(merge_records(rows), skipped, torn)


def read_anchors(layout: Layout) -> Anchors:
    """Read and parse the data directory's anchors.jsonl (empty if absent)."""
    try:
        raw = layout.anchors.read_bytes()
    except FileNotFoundError:
        return Anchors([], [], False)
    except OSError as exc:
        raise OperationalError(f"cannot read {layout.anchors}: {exc.strerror}") from None
    return parse_anchors(raw)


def append_record(layout: Layout, record: dict[str, Any]) -> None:
    """Append one record durably (write, fsync) before returning.

    A torn last line left by a crash is closed with a newline first, so the
    new record starts on a line of its own.
    """
    why = _problem(record)
    if why is not None:
        raise ValueError(f"not an anchor record: {why}")
    line = orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n"
    path = layout.anchors
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as exc:
        raise OperationalError(f"cannot open {path}: {exc.strerror}") from None
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        write_all(fd, line)
        os.fsync(fd)
        if size == 0:
            fsync_dir(layout.root)  # a new file: make its name durable too
    except OSError as exc:
        raise OperationalError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        os.close(fd)

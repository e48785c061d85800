"""Shared support for the index tests: a settable clock, snapshots, and index dumps."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memory_chain.chain.format.entry import format_ts

DAY = 86_400_000_000  # microseconds
HOUR = 3_600_000_000
#: 2026-01-01T00:00:00Z in microseconds.
T0 = 1_767_225_600_000_000


class Clock:
    """A clock for Ledger and Index: returns ``t`` (µs), moved by hand."""

    def __init__(self, t: int = T0) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t

    def ts(self) -> str:
        return format_ts(self.t)


def snapshot(root: Path) -> dict[str, bytes]:
    """chain.jsonl and every blob under content/, byte for byte."""
    files = {"chain.jsonl": (root / "chain.jsonl").read_bytes()}
    for path in sorted((root / "content").rglob("*")):
        if path.is_file():
            files[str(path.relative_to(root))] = path.read_bytes()
    return files


def dump(conn: sqlite3.Connection) -> dict[str, Any]:
    """Everything an index holds that a rebuild must reproduce (not built_at)."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab "
        "USING fts5vocab(main, memories_fts, instance)"
    )
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    return {
        "memories": conn.execute("SELECT * FROM memories ORDER BY seq").fetchall(),
        "usage": conn.execute("SELECT * FROM usage ORDER BY hash").fetchall(),
        "state": conn.execute(
            "SELECT size, offset, last_offset, head, chain_id, agent FROM state"
        ).fetchall(),
        "fts": sorted(conn.execute("SELECT term, doc, col, offset FROM temp.vocab").fetchall()),
        # bm25's row count and lengths: the docsize rows and the averages record
        "docsize": conn.execute("SELECT id, sz FROM memories_fts_docsize ORDER BY id").fetchall(),
        "averages": [
            _averages(block)
            for (block,) in conn.execute("SELECT block FROM memories_fts_data WHERE id = 1")
        ],
    }


def _averages(block: bytes) -> tuple[int, ...]:
    """FTS5's averages record as its numbers (the row count, then each column's tokens), with
    no rows read as no record: FTS5 keeps zeros once its last row is deleted, and a rebuild
    over no row writes an empty record; bm25 reads both as none."""
    numbers: list[int] = []
    at = 0
    while at < len(block):  # SQLite varints: 7 bits a byte, high bit set while more follow
        value = 0
        for i in range(9):
            byte = block[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        numbers.append(value)
    return () if not any(numbers) else tuple(numbers)

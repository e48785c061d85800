"""The best matches of an OR query at a cost bounded by k, not by how many rows match.

FTS5's ``bm25()`` counts every row each phrase of the query matches before it
ranks one, and ``ORDER BY rank`` scores every match: a word in half of 100k
memories costs ~90 ms, and ten times that at 1M (issue 27). So the ranking
here is exact only while it is cheap:

- When no word of the query matches more than BOUND rows, FTS5 ranks it
  (``best`` returns None and the caller runs ``ORDER BY rank``): at most
  BOUND rows per word are looked at.
- Otherwise the words are split. A *rare* word (at most BOUND rows) brings
  every row it matches; a *common* word brings only the rows of the newest
  ``window`` that match one of the common words (``window`` is BOUND for a
  search of ten, and grows with the pool asked for), and, when rows that
  hold two common words are sparse, the newest ``window`` older rows that
  hold two. Each candidate is scored by bm25 as FTS5 computes it (k1 1.2,
  b 0.75, FTS5's idf, length from ``<table>_docsize``, the averages from
  ``<table>_data``), with each word counted once per row (binary term
  frequency: a memory is a sentence or three, and bm25 saturates), and a
  common word's document frequency read from its density in the window.

So a memory that holds one of the query's rarer words is always a
candidate, and of those that hold only its common words, the newest are
(and older ones that hold two). specs/INDEX.md 3.4 states the rule.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Final

__all__ = ["BOUND", "best", "fts_row_stats", "idf", "phrase", "varint"]

#: A word that matches at most this many rows is rare: all of its rows are looked at. Of
#: the rows that hold only common words, the newest ``BOUND * (pool // 20)`` are (BOUND for
#: the pool of 20 a search for ten memories asks for).
BOUND: int = 1000
#: Rows that hold two of the query's common words are looked at further back (the newest
#: ``window`` of them); pairs are formed from its first PAIRED common words.
PAIRED: Final = 6
SPARSE: Final = 4
#: FTS5's bm25 constants.
K1: Final = 1.2
B: Final = 0.75


def varint(buf: bytes, pos: int = 0) -> tuple[int, int]:
    """SQLite's variable-length integer at ``buf[pos:]`` (as FTS5 writes its records):
    (value, the position after it)."""
    value = 0
    for i in range(8):
        byte = buf[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | buf[pos + 8], pos + 9


def fts_row_stats(conn: sqlite3.Connection, table: str) -> tuple[int, float]:
    """(rows, average tokens per row) of an FTS5 table of one column, from its averages
    record (the ``<table>_data`` row with id 1: the row count, then each column's total
    tokens, as varints)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:  # an empty table, or rows not yet committed
        return 0, 0.0
    rows, pos = varint(row[0])
    tokens, _ = varint(row[0], pos)
    return rows, (tokens / rows if rows else 0.0)


def phrase(term: str) -> str:
    """One word as an FTS5 string (the query's words hold no quote)."""
    return f'"{term}"'


def _count_upto(conn: sqlite3.Connection, table: str, match: str, cap: int) -> int:
    """How many rows ``match`` matches, counting no further than ``cap``."""
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (match, cap)).fetchone()[0])


def _sized(
    conn: sqlite3.Connection, table: str, match: str, sql: str = "", *args: int
) -> dict[int, int]:
    """rowid -> tokens of the rows ``match`` matches (and ``sql`` allows), the length
    read from ``<table>_docsize`` (one varint per column)."""
    found = conn.execute(
        f"SELECT f.rowid, d.sz FROM {table} f JOIN {table}_docsize d ON d.id = f.rowid "
        f"WHERE {table} MATCH ? {sql}",
        (match, *args),
    )
    return {r: sz[0] if sz[0] < 0x80 else varint(sz)[0] for r, sz in found.fetchall()}


def _pairs(terms: list[str]) -> str:
    """An FTS5 expression for "two of ``terms``", or "" for fewer than two."""
    return " OR ".join(
        f"({phrase(a)} AND {phrase(b)})" for i, a in enumerate(terms) for b in terms[i + 1 :]
    )


def idf(rows: int, hits: float) -> float:
    """FTS5's idf: log((N - n + 0.5) / (n + 0.5)), or 1e-6 when that is not positive."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    return math.log(ratio) if ratio > 1 else 1e-6


def best(
    conn: sqlite3.Connection, table: str, terms: list[str], pool: int
) -> tuple[list[tuple[int, float]], bool] | None:
    """The candidates of ``terms`` ORed, as (rowid, bm25) best first, and whether more
    rows match than were looked at; None when no word matches more than BOUND rows (FTS5
    ranks that query exactly, at a bounded cost)."""
    counted = {t: _count_upto(conn, table, phrase(t), BOUND + 1) for t in terms}
    common = [t for t in terms if counted[t] > BOUND]
    if not common:
        return None
    rows, avgdl = fts_row_stats(conn, table)
    members = {t: _sized(conn, table, phrase(t)) for t in terms if counted[t] <= BOUND}
    df: dict[str, float] = {t: float(len(m)) for t, m in members.items()}
    window = BOUND * max(1, pool // 20)
    either = " OR ".join(phrase(t) for t in common)
    edge = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (either, window - 1),
    ).fetchone()
    cut = edge is not None and any(
        conn.execute(
            f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid < ? LIMIT 1", (either, edge[0])
        )
    )
    floor = edge[0] if cut else 0
    in_window = (
        conn.execute(f"SELECT count(*) FROM {table}_docsize WHERE id >= ?", (floor,)).fetchone()[0]
        if cut
        else rows
    )
    inside = {t: _sized(conn, table, phrase(t), "AND f.rowid >= ?", floor) for t in common}
    for t, found in inside.items():
        # its density among the newest rows stands for its density in the table
        df[t] = max(float(BOUND + 1), len(found) * rows / in_window) if cut else float(len(found))
    # Older rows: those that hold a rare word, and, when rows that hold two of the common
    # words are sparse in the window (so that the newest ``window`` of them reach at least
    # SPARSE times further back), those
    older = any(r < floor for m in members.values() for r in m)
    rare_either = " OR ".join(phrase(t) for t in members)
    pairs = _pairs(common[:PAIRED])
    floor2 = floor
    if pairs and cut:
        seen: dict[int, int] = {}
        for found in inside.values():
            for r in found:
                seen[r] = seen.get(r, 0) + 1
        if sum(n > 1 for n in seen.values()) * SPARSE <= window:
            edge = conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid < ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (pairs, floor, window - 1),
            ).fetchone()
            floor2 = edge[0] if edge is not None else 0
    for t, found in inside.items():
        if older:
            match = f"({rare_either}) AND {phrase(t)}"
            found.update(_sized(conn, table, match, "AND f.rowid < ?", floor))
        if floor2 < floor:
            match = f"({pairs}) AND {phrase(t)}"
            between = "AND f.rowid >= ? AND f.rowid < ?"
            found.update(_sized(conn, table, match, between, floor2, floor))
        members[t] = found
    weight: dict[int, float] = {}
    length: dict[int, int] = {}
    for t, found in members.items():
        w = idf(rows, df[t])
        length.update(found)
        for r in found:
            weight[r] = weight.get(r, 0.0) + w
    per_token = B / avgdl if avgdl else 0.0
    scored = sorted(
        (-idf_sum * (K1 + 1) / (1 + K1 * (1 - B + per_token * length[r])), -r)
        for r, idf_sum in weight.items()
    )
    return [(-r, -score) for score, r in scored], cut

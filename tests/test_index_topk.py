"""Top-k at a bounded cost (index/topk.py, specs/INDEX.md 3.4): what is looked at, and
that the score is FTS5's bm25 where each word occurs once in a row."""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.index import topk
from memory_chain.index.db import Index
from memory_chain.index.query import search


def sqlite_varint(value: int) -> bytes:
    """SQLite's varint, written from its file-format description: big-endian groups of
    seven bits with the high bit set on all but the last, and a ninth byte of eight."""
    if value > (1 << 56) - 1:
        low = value & 0xFF
        value >>= 8
        groups = [(value >> (7 * i)) & 0x7F for i in range(8)][::-1]
        return bytes(g | 0x80 for g in groups) + bytes([low])
    groups = []
    while True:
        groups.append(value & 0x7F)
        value >>= 7
        if not value:
            break
    groups.reverse()
    return bytes(g | 0x80 for g in groups[:-1]) + bytes([groups[-1]])


@given(st.integers(min_value=0, max_value=(1 << 64) - 1), st.binary(max_size=4))
def test_varint_reads_what_sqlite_writes(value: int, tail: bytes) -> None:
    data = sqlite_varint(value)
    assert topk.varint(data + tail) == (value, len(data))


def _table(rows: list[str]) -> sqlite3.Connection:
    """A plain FTS5 table of these texts (rowid = position + 1), tokenised as memories_fts."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO t (rowid, content) VALUES (?, ?)", enumerate(rows, 1))
    conn.commit()  # FTS5 writes its averages record when the transaction ends
    return conn


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setattr(topk, "BOUND", 20)
    yield 20


def test_row_stats_and_lengths_are_fts5s() -> None:
    long = " ".join(f"w{i}" for i in range(300))  # 300 tokens: a two-byte varint
    conn = _table(["alpha beta", long, "gamma"])
    rows, avgdl = topk.fts_row_stats(conn, "t")
    assert (rows, avgdl) == (3, (2 + 300 + 1) / 3)
    (sz,) = conn.execute("SELECT sz FROM t_docsize WHERE id = 2").fetchone()
    assert topk.varint(sz)[0] == 300


def test_no_common_word_leaves_ranking_to_fts5(bound: int) -> None:
    conn = _table([f"alpha row{i}" for i in range(bound)] + ["beta"])
    assert topk.best(conn, "t", ["alpha", "beta"], 20) is None


def test_scores_are_fts5_bm25_when_each_word_occurs_once(bound: int) -> None:
    """Every row within the window (nothing cut): the document frequencies are exact, and
    each candidate's score is -bm25() to 1e-9, in the same order."""
    rng = random.Random(3)
    vocab = ["apple", "brick", "cedar", "delta", "ember", "fjord", "grove", "harbor"]
    rows = []
    for i in range(60):
        words = rng.sample(vocab, rng.randint(1, 5)) + [f"id{i}"] * rng.randint(0, 1)
        rows.append(" ".join(words + [f"pad{j}" for j in range(rng.randint(0, 12))]))
    conn = _table(rows)
    terms = ["apple", "cedar", "id7", "harbor"]
    found, cut = topk.best(conn, "t", terms, 20 * 4) or ([], True)  # a window of 80 rows
    assert not cut and found
    match = " OR ".join(topk.phrase(t) for t in terms)
    fts = conn.execute(
        "SELECT rowid, -bm25(t) FROM t WHERE t MATCH ? ORDER BY rank, rowid DESC", (match,)
    ).fetchall()
    assert {r for r, _ in found} == {r for r, _ in fts}
    theirs = dict(fts)
    for rowid, score in found:
        assert math.isclose(score, theirs[rowid], rel_tol=1e-9), rowid
    assert [r for r, _ in found] == [r for r, _ in sorted(fts, key=lambda x: (-x[1], -x[0]))]


def test_a_rare_word_finds_its_row_however_old(bound: int) -> None:
    rows = ["the zebra crossed the common road"] + [f"common road {i}" for i in range(400)]
    conn = _table(rows)
    found, cut = topk.best(conn, "t", ["common", "road", "zebra"], 20) or ([], False)
    assert cut
    assert found[0][0] == 1  # the oldest row, first: it holds the rare word
    assert len(found) <= 1 + bound  # the rare row and the window of common ones


def test_two_common_words_together_reach_back_past_the_window(bound: int) -> None:
    """alpha and beta are each in hundreds of rows, together in one old row only."""
    rows = ["alpha and beta, together"]
    rows += [("alpha" if i % 2 else "beta") + f" alone {i}" for i in range(600)]
    conn = _table(rows)
    found, cut = topk.best(conn, "t", ["alpha", "beta"], 20) or ([], False)
    assert cut and found[0][0] == 1


def test_rows_holding_one_common_word_are_the_newest_window(bound: int) -> None:
    conn = _table([f"common row {i}" for i in range(500)])
    found, cut = topk.best(conn, "t", ["common"], 20) or ([], False)
    assert cut
    assert sorted(r for r, _ in found) == list(range(500 - bound + 1, 501))
    wider, _ = topk.best(conn, "t", ["common"], 80) or ([], False)  # a search of 40
    assert len(wider) == 4 * bound


def test_search_over_the_bound_finds_what_exact_ranking_finds(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through index.query.search: a store whose common words pass the bound answers a
    question with a rare word as exact bm25 does, and a question of common words only
    from the newest memories."""
    led = Ledger.init(data_dir, name="topk-agent")
    rng = random.Random(5)
    words = ["deploy", "staging", "tests", "review", "database", "backup", "release", "notes"]
    texts = [" ".join(rng.choices(words, k=8)) + f" note {i}" for i in range(300)]
    texts[40] = "the staging database password rotates on the first monday"
    led.add_batch([NewEntry(content=t.encode()) for t in texts])
    led.close()
    with Index.open(data_dir) as index:
        index.semantic = False
        exact = search(index, "when does the staging password rotate", record=False)
        monkeypatch.setattr(topk, "BOUND", 30)
        assert topk.best(index.conn, "memories_fts", ["staging", "password"], 20) is not None
        bounded = search(index, "when does the staging password rotate", record=False)
        assert bounded[0].seq == exact[0].seq == 41
        newest = search(index, "deploy review", limit=5, record=False)
        assert all(h.seq > 300 - 2 * 30 for h in newest)

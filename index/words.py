"""Words as memory.db's full-text index makes them, for an index that is not SQLite.

memory.db ranks by FTS5's bm25 over ``memories_fts`` (tokenizer ``porter
unicode61``). A fleet's PostgreSQL ranks the same memories with the same
formula (index/fleet_store.py), so it must count the same words: they are
taken from SQLite itself, by putting the texts in an FTS5 table of the same
tokenizer in memory and reading its ``fts5vocab`` instance table. Nothing
here is a second tokenizer that could drift from FTS5's.

A word is stored as ``term_id``: the first 8 bytes of its BLAKE3 hash as a
signed integer (PostgreSQL's bigint). Two different words share an id with
a chance of about n**2 / 2**65 for n distinct words: 3e-6 for ten million.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from blake3 import blake3

__all__ = ["TOKENIZE", "Counted", "Words", "term_id"]

#: The tokenizer of memories_fts (index/schema.py).
TOKENIZE: Final = "porter unicode61"


class Counted:
    """The words of some texts, as FTS5 counts them: ``length`` (key -> all the tokens
    of its text: what ``<table>_docsize`` holds and bm25 takes as the length),
    ``rows``, one (key, word, occurrences) per distinct word of each text, and ``lead``
    (key -> its first word: what FTS5's ``^"word"`` matches)."""

    __slots__ = ("lead", "length", "rows")

    def __init__(
        self,
        length: dict[int, int],
        rows: list[tuple[int, str, int]],
        lead: dict[int, str] | None = None,
    ) -> None:
        self.length = length
        self.rows = rows
        self.lead = lead or {}

    def words(self, key: int) -> dict[str, int]:
        """word -> occurrences in the text of ``key``."""
        return {w: n for k, w, n in self.rows if k == key}


@lru_cache(maxsize=1 << 20)
def term_id(word: str) -> int:
    """A word's id: the first 8 bytes of BLAKE3 of its UTF-8, big-endian, signed."""
    return int.from_bytes(blake3(word.encode()).digest(length=8), "big", signed=True)


class Words:
    """An in-memory FTS5 table with memories_fts's tokenizer, to count texts' words."""

    __slots__ = ("conn",)

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(c, tokenize='{TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def close(self) -> None:
        self.conn.close()

    def count(self, texts: Iterable[tuple[int, str]]) -> Counted:
        """The words of each (key, text) (keys distinct integers)."""
        conn = self.conn
        with conn:
            conn.execute("DELETE FROM t")
            conn.executemany("INSERT INTO t (rowid, c) VALUES (?, ?)", texts)
            rows = conn.execute("SELECT doc, term, count(*) FROM v GROUP BY doc, term").fetchall()
            length = dict(conn.execute("SELECT doc, count(*) FROM v GROUP BY doc").fetchall())
            lead = dict(conn.execute("SELECT doc, term FROM v WHERE offset = 0").fetchall())
            conn.execute("DELETE FROM t")
        return Counted(length, rows, lead)

    def tokens(self, text: str) -> list[str]:
        """The words of ``text`` in order (a query's term, as FTS5 reads the phrase)."""
        with self.conn:
            self.conn.execute("DELETE FROM t")
            self.conn.execute("INSERT INTO t (rowid, c) VALUES (1, ?)", (text,))
            found = [w for (w,) in self.conn.execute("SELECT term FROM v ORDER BY offset")]
            self.conn.execute("DELETE FROM t")
        return found

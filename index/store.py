"""What recall reads, behind one protocol: memory.db here, a fleet's PostgreSQL elsewhere.

index/query.py ranks memories (bm25, names, kinds, time, neighbours,
speakers, the page's order) in Python, and reads the index a dozen times a
search. Those reads are the methods of a ``Store`` (ADR 0003, point 4): the
ranking is written once, and whatever the recall benchmark measures on one
engine it measures on the other. ``SqliteStore`` is memory.db's (this
module); index/fleet_store.py is a fleet's, for one agent or many.

A store names each memory by an integer id. In memory.db it is the seq; in a
fleet it is the chain's number times 2**40 plus the seq, so that the memories
of one chain are neighbours by id exactly as by seq, and two chains never
are. A row is the 16 columns of ``COLUMNS`` (the id first).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Protocol

from memory_chain.chain.format.values import Value

from .db import not_superseded, visible
from .settings import Weights

if TYPE_CHECKING:
    from .db import Index

__all__ = ["COLUMNS", "Filter", "Match", "SqliteStore", "Store"]

#: A row of a memory, as the ranking reads it: id, type, tier, source, ts, importance,
#: status, session, content hash, text, tokens, access count, created (µs), origin,
#: approved, and the seq of the entry that superseded it (or None).
COLUMNS: Final = (
    "m.seq, m.type, m.tier, m.source, m.ts, m.importance, m.status, m.session, "
    "m.content_hash, m.content, m.tokens, m.access_count, m.created, m.origin, m.approved, "
    "(SELECT min(sup.seq) FROM memories sup WHERE sup.supersedes = m.seq)"
)

#: (row, bm25 with its sign flipped), best first.
Match = tuple[tuple[Any, ...], float]


class Filter(Value):
    """Which memories a search may return (each engine writes it as its own SQL)."""

    __slots__ = (
        "below",
        "cutoff",
        "include_archived",
        "include_superseded",
        "since",
        "source",
        "tier",
        "type_",
        "until",
    )
    cutoff: int  # ephemeral memories created (or restored) at or before this have expired
    type_: str | None
    tier: str | None
    include_archived: bool
    include_superseded: bool
    source: str | None
    since: int | None  # created at or after (µs since the epoch)
    until: int | None  # created before
    below: int | None  # seq below this (context: the verified prefix)

    def __init__(
        self,
        cutoff: int,
        type_: str | None = None,
        tier: str | None = None,
        include_archived: bool = False,
        include_superseded: bool = False,
        source: str | None = None,
        since: int | None = None,
        until: int | None = None,
        below: int | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "cutoff", cutoff)
        set_(self, "type_", type_)
        set_(self, "tier", tier)
        set_(self, "include_archived", include_archived)
        set_(self, "include_superseded", include_superseded)
        set_(self, "source", source)
        set_(self, "since", since)
        set_(self, "until", until)
        set_(self, "below", below)


class Store(Protocol):
    """The reads of a ranking (index/query.py). Ids are as the module says."""

    @property
    def weights(self) -> Weights:
        """The score weights when a search is given none."""
        ...

    def now(self) -> int:
        """The time (µs since the epoch) a search ranks at."""
        ...

    def cutoff(self, now: int) -> int:
        """Ephemeral memories created (or restored) at or before this have expired."""
        ...

    def max_access(self) -> int:
        """The highest access count (0 where none is kept)."""
        ...

    def record_access(self, ids: Iterable[int]) -> None:
        """Count one access to each of ``ids`` (nothing where none is kept)."""
        ...

    def matches(self, terms: list[str], pool: int, where: Filter) -> tuple[list[Match], int]:
        """The ``pool`` best matches by bm25 of ``terms`` ORed that pass ``where``, and
        how many were looked at (fewer than ``pool``: there are no more)."""
        ...

    def floor(self) -> float:
        """The bm25 below which the best match is not taken as a full match
        (index/query.py REFERENCE_SHARE)."""
        ...

    def rows(self, ids: list[int], where: Filter) -> list[tuple[Any, ...]]:
        """The rows of these memories that pass ``where``."""
        ...

    def semantic(self, query: str, k: int) -> dict[int, float]:
        """id -> cosine part of the ``k`` memories nearest ``query``; {} when lexical."""
        ...

    def dated(self, lo: str, hi: str, pool: int) -> list[tuple[int, Any, Any, Any]]:
        """(id, about_from, about_to, said) of the ``pool`` last memories that speak of a
        day in [lo, hi] (ISO days) or were said on one."""
        ...

    def after(self, ids: list[int]) -> list[tuple[Any, ...]]:
        """For each of ``ids`` that has a next memory in its chain: (id, session, said,
        created, the next's id, session, said, created, text)."""
        ...

    def heads(self, lo: int, hi: int) -> Iterable[tuple[int, Any, str]]:
        """(id, session, first 64 characters) of the memories with text, ids lo to hi."""
        ...

    def places(self, ids: list[int]) -> Iterable[tuple[int, Any, Any, int, str | None]]:
        """(id, session, said, created, first 64 characters or None) of these memories."""
        ...

    def chain_of(self, id_: int) -> int:
        """Which chain of the store the memory ``id_`` is of (a number)."""
        ...


def listed(ids: Iterable[int]) -> str:
    """Integers as an SQL list (named parameters cannot mix with "?")."""
    return ", ".join(str(int(i)) for i in ids)


class SqliteStore:
    """The reads of a ranking from an open memory.db (index/db.py ``Index``)."""

    __slots__ = ("index",)

    def __init__(self, index: Index) -> None:
        self.index = index

    @property
    def weights(self) -> Weights:
        return self.index.settings.weights

    def now(self) -> int:
        return self.index.now()

    def cutoff(self, now: int) -> int:
        return self.index.cutoff(now)

    def max_access(self) -> int:
        return self.index.max_access()

    def record_access(self, ids: Iterable[int]) -> None:
        self.index.record_access(ids)

    @staticmethod
    def where(f: Filter) -> tuple[str, dict[str, Any]]:
        """SQL condition on memories ``m`` and its parameters."""
        if f.include_archived:
            where = "m.status IN ('active', 'archived', 'expired') AND m.content IS NOT NULL"
            if not f.include_superseded:
                where += f" AND {not_superseded('m')}"
        else:
            where = visible("m", include_superseded=f.include_superseded)
        params: dict[str, Any] = {"cutoff": f.cutoff}
        for column, value in (
            ("type", f.type_),
            ("tier", f.tier),
            ("source", f.source),
        ):
            if value is not None:
                where += f" AND m.{column} = :{column}"
                params[column] = value
        if f.below is not None:
            where += " AND m.seq < :below"
            params["below"] = f.below
        if f.since is not None:
            where += " AND m.created >= :since"
            params["since"] = f.since
        if f.until is not None:
            where += " AND m.created < :until"
            params["until"] = f.until
        return where, params

    def matches(self, terms: list[str], pool: int, where: Filter) -> tuple[list[Match], int]:
        """A query with a word in more than topk.BOUND memories is ranked at a cost
        bounded by the pool (index/topk.py); any other by FTS5's bm25."""
        from . import topk

        conn = self.index.conn
        ranked = topk.best(conn, "memories_fts", terms, pool)
        if ranked is not None:
            found, cut = ranked
            top = found[:pool]
            got = {r[0]: r for r in self._rows([s for s, _ in top], where, flag=True)}
            kept = [(got[s][:16], b) for s, b in top if s in got and got[s][16]]
            return kept, pool if cut else len(top)
        sql, params = self.where(where)
        rows = conn.execute(
            f"SELECT {COLUMNS}, f.b, {sql} FROM ("
            "  SELECT rowid AS id, -bm25(memories_fts) AS b FROM memories_fts"
            "  WHERE memories_fts MATCH :match ORDER BY rank LIMIT :pool"
            ") f JOIN memories m ON m.seq = f.id ORDER BY f.b DESC, m.seq DESC",
            {**params, "match": " OR ".join(topk.phrase(t) for t in terms), "pool": pool},
        ).fetchall()
        return [(r[:16], r[16]) for r in rows if r[17]], len(rows)

    def floor(self) -> float:
        from .query import bm25_floor

        return bm25_floor(self.index)

    def _rows(self, ids: list[int], f: Filter, *, flag: bool = False) -> list[tuple[Any, ...]]:
        """The rows of these memories that pass ``f`` (with ``flag``: of all of them, each
        followed by whether it passes)."""
        if not ids:
            return []
        sql, params = self.where(f)
        rows = self.index.conn.execute(
            f"SELECT {COLUMNS}, {sql} FROM memories m WHERE m.seq IN ({listed(ids)})", params
        ).fetchall()
        return rows if flag else [r[:16] for r in rows if r[16]]

    def rows(self, ids: list[int], where: Filter) -> list[tuple[Any, ...]]:
        return self._rows(ids, where)

    def semantic(self, query: str, k: int) -> dict[int, float]:
        from .query import semantic_parts

        return semantic_parts(self.index, query, k)

    def dated(self, lo: str, hi: str, pool: int) -> list[tuple[int, Any, Any, Any]]:
        from .query import read_times

        read_times(self.index)
        return self.index.conn.execute(
            "SELECT seq, about_from, about_to, said FROM memories "
            "WHERE (about_from <= :hi AND about_to >= :lo) OR (said BETWEEN :lo AND :hi) "
            "ORDER BY seq DESC LIMIT :pool",
            {"lo": lo, "hi": hi, "pool": pool},
        ).fetchall()

    def after(self, ids: list[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        return self.index.conn.execute(
            "SELECT m.seq, m.session, m.said, m.created, n.seq, n.session, n.said, n.created, "
            "n.content FROM memories m JOIN memories n ON n.seq = "
            "(SELECT min(x.seq) FROM memories x WHERE x.seq > m.seq) "
            f"WHERE m.seq IN ({listed(ids)})"
        ).fetchall()

    def heads(self, lo: int, hi: int) -> Iterable[tuple[int, Any, str]]:
        return self.index.conn.execute(
            "SELECT seq, session, substr(content, 1, 64) FROM memories "
            "WHERE seq BETWEEN ? AND ? AND content IS NOT NULL",
            (lo, hi),
        )

    def places(self, ids: list[int]) -> Iterable[tuple[int, Any, Any, int, str | None]]:
        return self.index.conn.execute(
            "SELECT seq, session, said, created, substr(content, 1, 64) FROM memories "
            f"WHERE seq IN ({listed(ids) or -1})"
        )

    def chain_of(self, id_: int) -> int:
        return 0

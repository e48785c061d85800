"""What recall reads, behind one protocol: memory.db here, a fleet's PostgreSQL elsewhere.

index/query.py ranks memories (bm25, names, kinds, time, neighbours,
speakers, the page's order) in Python, and reads the index a dozen times a
search. Those reads are the methods of a ``Store`` (ADR 0003, point 4): the
ranking is written once, and whatever the recall benchmark measures on one
engine it measures on the other. ``SqliteStore`` (index/query.py, beside
the ranking it serves) is memory.db's; index/fleet_store.py is a fleet's,
for one agent or many.

A store names each memory by an integer id. In memory.db it is the seq; in a
fleet it is the chain's number times 2**40 plus the seq, so that the memories
of one chain are neighbours by id exactly as by seq, and two chains never
are. A row is the 16 columns of ``COLUMNS`` (the id first).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Protocol

from memory_chain.chain.format.values import Value

from .settings import Weights

__all__ = ["COLUMNS", "Filter", "Match", "Store", "listed"]

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

    def leading(self, names: list[str]) -> list[str]:
        """Those of ``names`` (single words) that are the first word of a memory with text,
        as FTS5's ``^"name"`` matches: the speakers of a conversation's turns."""
        ...

    def chain_of(self, id_: int) -> int:
        """Which chain of the store the memory ``id_`` is of (a number)."""
        ...


def listed(ids: Iterable[int]) -> str:
    """Integers as an SQL list (named parameters cannot mix with "?")."""
    return ", ".join(str(int(i)) for i in ids)

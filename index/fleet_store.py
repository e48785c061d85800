"""Search a fleet's PostgreSQL (index/fleet.py) with memory.db's ranking: one agent or many.

The ranking is index/query.py's, unchanged: this module is its ``Store`` for
a fleet (index/store.py), so a search of one agent's memories in the fleet
ranks them as that agent's memory.db does (the recall benchmark checks it:
benchmarks/recall.py ``--url``). What differs is where bm25 comes from:

- Words are FTS5's (index/words.py), kept as postings (word, memory, times
  in it, the memory's length in words) with each chain's document
  frequencies (``mc_df``) and totals (``mc_chains.fts_rows``,
  ``fts_tokens``). bm25 is FTS5's formula (k1 1.2, b 0.75, FTS5's idf) over
  the statistics of the chains searched: one agent's search counts that
  agent's memories only, as its memory.db does.
- A word in at most topk.BOUND of the memories searched brings all of them.
  The commoner words bring, of each chain searched, its newest memories that
  hold one of them (an equal share of ``BOUND * (pool // 20)``: the chain's
  window), each with every word of the query it holds, and so do the
  memories a rarer word brought; their frequencies are exact. The cost of a
  search is then bounded by BOUND and the number of chains, not by their
  size (specs/INDEX.md 7.4). memory.db's bound (index/topk.py) also looks
  further back for rows that hold two common words; this one does not.
- A query word that FTS5 splits in two ("foo_bar") matches the memories
  that hold both parts, anywhere; FTS5 asks them to stand side by side.
- No usage statistics (each host keeps its own): the access part is 0.
- Vectors (the semantic extra) where the server has pgvector: each host's
  memory.db's, copied at sync (index/fleet.py), compared with the query's
  by exact inner product over the chains searched, as memory.db compares
  them, and fused by the same rule (query.py ``cosine_parts``, ``fuse``).
  Across more than EXACT_UPTO memories, where the fleet has an HNSW index
  of them, the nearest are the index's: approximate, and no longer any
  one memory.db's.
  Where the server has no pgvector, or this process no semantic extra, the
  semantic part is 0: recall is lexical, as memory.db's is without it.

Ids are index/fleet.py's: the chain's number times 2**40 plus the seq.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from memory_chain.chain.format.errors import InputError

from . import topk
from .fleet import BLOCK, SHIFT, VECTOR_INDEX, span
from .query import Hit, cosine_parts, rank, without_speakers
from .settings import Settings, Weights
from .store import Filter, Match
from .words import Words, term_id

if TYPE_CHECKING:
    import psycopg

__all__ = ["FleetStore", "notes", "search"]

#: A row as index/store.py COLUMNS reads it (no usage in a fleet: access count 0).
COLUMNS: Final = (
    "m.id, m.type, m.tier, m.source, m.ts, m.importance, m.status, m.session, "
    "m.content_hash, m.content, m.tokens, 0, m.created, m.origin, m.approved, "
    "(SELECT min(sup.seq) FROM mc_memories sup "
    f"WHERE sup.id >> {SHIFT} = m.id >> {SHIFT} AND sup.supersedes = m.seq "
    "AND sup.supersedes IS NOT NULL)"
)
_NOT_SUPERSEDED: Final = (
    f"NOT EXISTS (SELECT 1 FROM mc_memories sup WHERE sup.id >> {SHIFT} = m.id >> {SHIFT} "
    "AND sup.supersedes = m.seq AND sup.supersedes IS NOT NULL)"
)
_MASK: Final = (1 << SHIFT) - 1
#: The nearest vectors by the server's inner product are taken this many beyond those
#: asked for, and compared again here (FleetStore.semantic).
RECHECK: Final = 16
#: Up to this many memories with text in the chains searched, the nearest vectors are
#: found by a scan, exactly as memory.db finds them (one agent of 10k: about 8 ms);
#: beyond it by the HNSW index where the fleet has one (a scan of a million: about 0.8 s).
EXACT_UPTO: Final = 100_000
_ARRAYS: Final = ("seqs", "tf", "len")


class FleetStore:
    """The reads of a ranking from a fleet database: the chains numbered ``nums``."""

    __slots__ = (
        "avgdl",
        "clock",
        "conn",
        "has_vectors",
        "near",
        "nums",
        "rows_",
        "settings",
        "words",
    )

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        nums: list[int],
        *,
        settings: Settings | None = None,
        clock: Any = None,
    ) -> None:
        import time

        self.conn = conn
        self.nums = sorted(nums)
        self.settings = settings or Settings()
        self.clock = clock or (lambda: time.time_ns() // 1000)
        self.words = Words()
        row = conn.execute(
            "SELECT coalesce(sum(fts_rows), 0), coalesce(sum(fts_tokens), 0), "
            "to_regclass('mc_vectors') IS NOT NULL FROM mc_chains WHERE num = ANY(%s)",
            (self.nums,),
        ).fetchone()
        self.rows_ = int(row[0]) if row else 0
        self.avgdl = (int(row[1]) / self.rows_) if row and self.rows_ else 0.0
        self.has_vectors = bool(row and row[2])
        self.near: tuple[str, int, list[tuple[int, float]]] | None = None

    def close(self) -> None:
        self.words.close()

    # -- what a search ranks with -------------------------------------------

    @property
    def weights(self) -> Weights:
        return self.settings.weights

    def now(self) -> int:
        return int(self.clock())

    def cutoff(self, now: int) -> int:
        return now - self.settings.ephemeral_ttl_us

    def max_access(self) -> int:
        return 0

    def record_access(self, ids: Iterable[int]) -> None:
        """Usage statistics are each host's own (memory.db's usage table)."""

    def chain_of(self, id_: int) -> int:
        return id_ >> SHIFT

    # -- where -------------------------------------------------------------

    def _scope(self, column: str = "m.id") -> tuple[str, list[Any]]:
        """SQL condition: ``column`` is the id of a memory of one of the chains searched."""
        if len(self.nums) == 1:
            lo, hi = span(self.nums[0])
            return f"{column} >= %s AND {column} < %s", [lo, hi]
        return f"{column} >> {SHIFT} = ANY(%s)", [self.nums]

    @staticmethod
    def where(f: Filter) -> tuple[str, list[Any]]:
        """SQL condition on ``mc_memories m`` and its parameters (index/query.py's
        SqliteStore.where, in PostgreSQL's words)."""
        args: list[Any] = []
        if f.include_archived:
            where = "m.status IN ('active', 'archived', 'expired') AND m.content IS NOT NULL"
        else:
            where = (
                "m.status = 'active' AND m.content IS NOT NULL "
                "AND NOT (m.tier = 'ephemeral' AND m.created <= %s)"
            )
            args.append(f.cutoff)
        if not f.include_superseded:
            where += f" AND {_NOT_SUPERSEDED}"
        for column, value in (("type", f.type_), ("tier", f.tier), ("source", f.source)):
            if value is not None:
                where += f" AND m.{column} = %s"
                args.append(value)
        for sql, bound in (
            ("m.seq < %s", f.below),
            ("m.created >= %s", f.since),
            ("m.created < %s", f.until),
        ):
            if bound is not None:
                where += f" AND {sql}"
                args.append(bound)
        return where, args

    # -- bm25 ----------------------------------------------------------------

    def _df(self, terms: list[int]) -> dict[tuple[int, int], int]:
        """(term, chain number) -> how many of that chain's memories hold the term."""
        if not terms:
            return {}
        return {
            (t, n): d
            for t, n, d in self.conn.execute(
                "SELECT term, num, df FROM mc_df WHERE term = ANY(%s) AND num = ANY(%s)",
                (terms, self.nums),
            ).fetchall()
        }

    def _postings(
        self,
        terms: list[int],
        *,
        newest: int | None = None,
        ids: list[int] | None = None,
        per_chain: dict[tuple[int, int], int] | None = None,
    ) -> list[tuple[int, int, int, int]]:
        """(term, id, tf, len) of ``terms`` in the chains searched: all of them; of each
        chain, the ``newest`` of each term (``per_chain``: how many it has there); or
        those of ``ids``."""
        if not terms:
            return []
        if ids is not None:
            if not ids:
                return []
            # each memory's element of each word's row of its block, found by the server
            wanted = sorted(set(ids))
            rows = self.conn.execute(
                "SELECT p.term, m.num, m.seq, p.tf[x.i], p.len[x.i] "
                "FROM unnest(%s::integer[], %s::integer[]) AS m (num, seq) "
                "JOIN mc_postings p ON p.term = ANY(%s) AND p.num = m.num "
                f"AND p.block = m.seq / {BLOCK} "
                "CROSS JOIN LATERAL (SELECT array_position(p.seqs, m.seq) AS i) x "
                "WHERE x.i IS NOT NULL",
                ([i >> SHIFT for i in wanted], [i & _MASK for i in wanted], terms),
            ).fetchall()
            return [(t, (n << SHIFT) + q, tf, size) for t, n, q, tf, size in rows]
        if newest is None:
            rows = self.conn.execute(
                "SELECT term, num, seqs, tf, len FROM mc_postings "
                "WHERE term = ANY(%s) AND num = ANY(%s)",
                (terms, self.nums),
            ).fetchall()
            return list(_expand(rows))
        # the last ``newest`` of each of the last two blocks of each (term, chain); all of
        # them where those hold fewer than ``newest`` and the chain has more
        tail = ", ".join(f"{a}[greatest(1, cardinality({a}) - %(n)s + 1):]" for a in _ARRAYS)
        rows = self.conn.execute(
            "SELECT p.* FROM unnest(%(terms)s::bigint[]) AS t (term) "
            "CROSS JOIN unnest(%(nums)s::integer[]) AS c (num) CROSS JOIN LATERAL ("
            f"  SELECT term, num, {tail} FROM mc_postings "
            "  WHERE term = t.term AND num = c.num ORDER BY block DESC LIMIT 2) p",
            {"terms": terms, "nums": self.nums, "n": newest},
        ).fetchall()
        got: dict[tuple[int, int], int] = {}
        for term, num, seqs, _, _ in rows:
            got[term, num] = got.get((term, num), 0) + len(seqs)
        asked = set(terms)
        short = {
            pair
            for pair, n in (per_chain or {}).items()
            if pair[0] in asked and n > got.get(pair, 0) and got.get(pair, 0) < newest
        }
        if short:
            rows = [r for r in rows if (r[0], r[1]) not in short]
            rows += self.conn.execute(
                "SELECT term, num, seqs, tf, len FROM mc_postings "
                "WHERE (term, num) IN (SELECT * FROM unnest(%s::bigint[], %s::integer[]))",
                ([t for t, _ in short], [n for _, n in short]),
            ).fetchall()
        by_pair: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
        for p in _expand(rows):
            by_pair.setdefault((p[0], p[1] >> SHIFT), []).append(p)
        return [
            p for found in by_pair.values() for p in sorted(found, key=lambda p: -p[1])[:newest]
        ]

    def bm25(self, terms: list[str], pool: int) -> tuple[list[tuple[int, float]], bool]:
        """(id, bm25) of the candidates of ``terms`` ORed, best first, and whether more
        memories match than were looked at (see the module's rule). Like FTS5, a word
        asked twice ("Run run") counts twice."""
        phrases = [
            list(dict.fromkeys(term_id(w) for w in self.words.tokens(term))) for term in terms
        ]
        phrases = [p for p in phrases if p]
        every = sorted({t for p in phrases for t in p})
        per_chain = self._df(every)
        df: dict[int, int] = {}
        for (t, _), d in per_chain.items():
            df[t] = df.get(t, 0) + d
        common = sorted(t for t in every if df.get(t, 0) > topk.BOUND)
        found = self._postings([t for t in every if df.get(t, 0) <= topk.BOUND])
        cut = False
        if common:
            window = topk.BOUND * max(1, pool // 20)
            share = max(1, math.ceil(window / len(self.nums)))
            newest = self._postings(common, newest=share, per_chain=per_chain)
            cut = any(per_chain.get((t, n), 0) > share for t in common for n in self.nums)
            # each chain's window: its newest ``share`` memories that hold one of the common
            # words, each with all of those words it holds (as index/topk.py's window)
            held: dict[int, set[int]] = {}
            for p in newest:
                held.setdefault(p[1] >> SHIFT, set()).add(p[1])
            floor = {
                num: sorted(ids, reverse=True)[share - 1] if len(ids) >= share else 0
                for num, ids in held.items()
            }
            newest = [p for p in newest if p[1] >= floor[p[1] >> SHIFT]]
            found += newest + self._postings(common, ids=list({p[1] for p in found}))
        by_term: dict[int, dict[int, int]] = {}
        length: dict[int, int] = {}
        for term, id_, times, size in found:
            by_term.setdefault(term, {})[id_] = times
            length[id_] = size
        n = self.rows_
        per_token = topk.B / self.avgdl if self.avgdl else 0.0
        score: dict[int, float] = {}
        for phrase in phrases:
            if len(phrase) == 1:
                hits = by_term.get(phrase[0], {})
                hit_df = float(df.get(phrase[0], 0))
            else:  # the words of one query term (index/words.py): all of them, anywhere
                lists = [by_term.get(w, {}) for w in phrase]
                both = set(lists[0]).intersection(*lists[1:])
                hits = {i: min(m[i] for m in lists) for i in both}
                hit_df = float(len(both))
            w = topk.idf(n, hit_df)
            for id_, times in hits.items():
                d = length[id_]
                part = w * times * (topk.K1 + 1) / (times + topk.K1 * (1 - topk.B + per_token * d))
                score[id_] = score.get(id_, 0.0) + part
        # FTS5 ORDER BY rank keeps the lower rowid of equal scores
        ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked, cut

    def matches(self, terms: list[str], pool: int, where: Filter) -> tuple[list[Match], int]:
        ranked, cut = self.bm25(terms, pool)
        top = ranked[:pool]
        got = {r[0]: r for r in self._rows([i for i, _ in top], where, flag=True)}
        kept = [(got[i][:16], b) for i, b in sorted(top, key=lambda kv: (-kv[1], -kv[0]))]
        kept = [(row, b) for row, b in kept if got[row[0]][16]]
        return kept, pool if cut else len(top)

    def floor(self) -> float:
        from .query import REFERENCE_SHARE

        rows = self.rows_
        if rows <= 0 or REFERENCE_SHARE <= 0:
            return 0.0
        return min(topk.idf(rows, REFERENCE_SHARE * rows), topk.idf(rows, 1))

    # -- rows ----------------------------------------------------------------

    def _rows(self, ids: list[int], f: Filter, *, flag: bool = False) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        where, args = self.where(f)
        rows = self.conn.execute(
            f"SELECT {COLUMNS}, {where} FROM mc_memories m WHERE m.id = ANY(%s)",
            (*args, ids),
        ).fetchall()
        return rows if flag else [r[:16] for r in rows if r[16]]

    def rows(self, ids: list[int], where: Filter) -> list[tuple[Any, ...]]:
        return self._rows(ids, where)

    def semantic(self, query: str, k: int) -> dict[int, float]:
        """The cosine parts of the ``k`` memories nearest ``query`` among the chains
        searched (exact, as memory.db's), from the vectors their hosts copied; {} where
        there are none, or this process has no semantic extra (or it is turned off). The
        nearest are kept for the query: a ranking that grows its pool asks again."""
        from . import vectors

        if not self.has_vectors or not vectors.enabled(self.settings.semantic):
            return {}
        kept = self.near
        if kept is None or kept[0] != query or (kept[1] < k and len(kept[2]) >= kept[1]):
            self.near = kept = (query, k, self._nearest(query, k))
        return cosine_parts(kept[2][:k])

    def _nearest(self, query: str, k: int) -> list[tuple[int, float]]:
        """(id, inner product) of the ``k`` memories nearest ``query``, best first."""
        import numpy as np

        from . import vectors

        scope, args = self._scope("v.id")
        some = self.conn.execute(f"SELECT 1 FROM mc_vectors v WHERE {scope} LIMIT 1", args)
        if some.fetchone() is None:
            return []
        said = without_speakers(self, query)
        q = vectors.get_embedder().query(said).astype(np.float32)
        text = "[" + ",".join(map(repr, q.tolist())) + "]"
        # the nearest by the server's sums, and a few more: their products are taken again
        # here as memory.db takes them (numpy, float32), so that the order of nearly equal
        # ones is memory.db's, not that of a sum in another order
        order = "v.vec::vector <#> %s::vector, v.id"  # exact: a scan, no index can serve it
        if self.rows_ > EXACT_UPTO and self._approximate():
            # many agents' memories and an HNSW index (``index --vector-index``): the
            # nearest by the index, filtered as it goes (pgvector's iterative scan)
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(100, k + RECHECK)}")
            self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            order = "v.vec <#> %s::halfvec"
        rows = self.conn.execute(  # the nearest ids first: only theirs are read as text
            "SELECT n.id, w.vec::text FROM (SELECT v.id FROM mc_vectors v "
            f"WHERE {scope} ORDER BY {order} LIMIT %s) n JOIN mc_vectors w ON w.id = n.id",
            (*args, text, k + RECHECK),
        ).fetchall()
        if not rows:
            return []
        mat = np.array([r[1][1:-1].split(",") for r in rows], dtype=np.float32)
        with vectors.one_blas_thread():
            sims = mat @ q
        near = sorted(
            ((int(r[0]), float(c)) for r, c in zip(rows, sims, strict=True)),
            key=lambda p: (-p[1], p[0]),
        )
        return near[:k]

    def _approximate(self) -> bool:
        """Whether the fleet has the HNSW index of its vectors (index/fleet.py
        ``vector_index``)."""
        row = self.conn.execute(f"SELECT to_regclass('{VECTOR_INDEX}') IS NOT NULL").fetchone()
        return bool(row and row[0])

    def leading(self, names: list[str]) -> list[str]:
        wanted = {n: self.words.tokens(n) for n in names}
        terms = {n: term_id(t[0]) for n, t in wanted.items() if len(t) == 1}
        if not terms:
            return []
        scope, args = self._scope()
        found = {
            t
            for (t,) in self.conn.execute(
                "SELECT t FROM unnest(%s::bigint[]) AS u (t) WHERE EXISTS (SELECT 1 FROM "
                f"mc_memories m WHERE m.lead = u.t AND {scope})",
                (sorted(set(terms.values())), *args),
            ).fetchall()
        }
        return [n for n in names if terms.get(n) in found]

    def dated(self, lo: str, hi: str, pool: int) -> list[tuple[int, Any, Any, Any]]:
        scope, args = self._scope()
        return self.conn.execute(
            "SELECT m.id, m.about_from, m.about_to, m.said FROM mc_memories m "
            "WHERE ((m.about_from <= %s AND m.about_to >= %s) OR (m.said BETWEEN %s AND %s)) "
            f"AND {scope} ORDER BY m.created DESC, m.id DESC LIMIT %s",
            (hi, lo, lo, hi, *args, pool),
        ).fetchall()

    def after(self, ids: list[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        return self.conn.execute(
            "SELECT m.id, m.session, m.said, m.created, n.id, n.session, n.said, n.created, "
            "n.content FROM mc_memories m CROSS JOIN LATERAL (SELECT * FROM mc_memories x "
            f"WHERE x.id > m.id AND x.id < ((m.id >> {SHIFT}) + 1) << {SHIFT} "
            "ORDER BY x.id LIMIT 1) n WHERE m.id = ANY(%s)",
            (ids,),
        ).fetchall()

    def heads(self, lo: int, hi: int) -> Iterable[tuple[int, Any, str]]:
        return self.conn.execute(
            "SELECT id, session, left(content, 64) FROM mc_memories "
            "WHERE id BETWEEN %s AND %s AND content IS NOT NULL",
            (lo, hi),
        ).fetchall()

    def places(self, ids: list[int]) -> Iterable[tuple[int, Any, Any, int, str | None]]:
        return self.conn.execute(
            "SELECT id, session, said, created, left(content, 64) FROM mc_memories "
            "WHERE id = ANY(%s)",
            (ids,),
        ).fetchall()


def _expand(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[int, int, int, int]]:
    """(term, id, tf, len) of each memory of rows of mc_postings (term, num, seqs, tf,
    len)."""
    for term, num, seqs, tfs, lens in rows:
        base = num << SHIFT
        for seq, tf, size in zip(seqs, tfs, lens, strict=True):
            yield term, base + seq, tf, size


def _chosen(conn: psycopg.Connection[Any], agents: list[str] | None) -> dict[int, tuple[str, str]]:
    """num -> (chain id, agent) of the chains searched: those whose agent name or chain
    id (or its start, 8 characters or more) is one of ``agents``; all with None."""
    rows = conn.execute("SELECT num, chain_id, agent FROM mc_chains ORDER BY num").fetchall()
    if agents is None:
        return {r[0]: (r[1], r[2]) for r in rows}
    out: dict[int, tuple[str, str]] = {}
    for name in agents:
        bare = name.removeprefix("b3:")
        named = [
            r
            for r in rows
            if r[2] == name or (len(bare) >= 8 and r[1].removeprefix("b3:").startswith(bare))
        ]
        if not named:
            raise InputError(
                f"--agent {name}: no chain of that agent or id in the fleet",
                hint="`memory-chain index --list` lists them",
            )
        out.update((r[0], (r[1], r[2])) for r in named)
    return out


def search(
    url: str,
    query: str,
    *,
    agents: list[str] | None = None,
    settings: Settings | None = None,
    **given: Any,
) -> list[Hit]:
    """The best memories of the fleet at ``url`` for ``query``: of the chains of
    ``agents`` (names or chain ids), or of all. ``given``: index/query.py ``rank``'s
    keywords (limit, filters, weights, offset...). Each hit names its chain and agent,
    and its seq is the seq in that chain."""
    from .fleet import _session

    with _session(url) as conn:
        chosen = _chosen(conn, agents)
        if not chosen:
            return []
        store = FleetStore(conn, list(chosen), settings=settings)
        try:
            hits = rank(store, query, **{"record": False, **given})
        finally:
            store.close()
    for h in hits:
        chain, agent = chosen[h.seq >> SHIFT]
        h.seq, h.chain, h.agent = h.seq & _MASK, chain, agent
    return hits


#: What waits for a person, as index/query.py Hit.role says: an agent's or capture's words
#: (not a person's, not a tool's or a quotation, which are withheld) no person approved.
_NOTE: Final = (
    "m.status = 'active' AND m.content IS NOT NULL AND m.origin IN ('agent', 'capture') "
    "AND m.approved IS NULL"
)


def notes(url: str, *, agents: list[str] | None = None, limit: int = 50) -> dict[str, Any]:
    """The fleet's review queue: the chain memories of ``agents`` (or of all) that an agent
    or capture wrote and no person approved (shown to agents as notes, not guidance), the
    newest ``limit`` first, and how many each agent has. Approving one is its agent's
    host's to do (`memory-chain review`, signed into its chain): the fleet shows it
    approved at that chain's next sync."""
    from .fleet import _session

    with _session(url) as conn:
        chosen = _chosen(conn, agents)
        nums = sorted(chosen)
        rows = conn.execute(
            "SELECT m.id, m.seq, m.type, m.origin, m.ts, m.content FROM mc_memories m "
            f"WHERE {_NOTE} AND m.id >> {SHIFT} = ANY(%s) ORDER BY m.created DESC, m.id DESC "
            "LIMIT %s",
            (nums, limit),
        ).fetchall()
        counts = conn.execute(
            f"SELECT m.id >> {SHIFT}, count(*) FROM mc_memories m "
            f"WHERE {_NOTE} AND m.id >> {SHIFT} = ANY(%s) GROUP BY 1",
            (nums,),
        ).fetchall()
    return {
        "waiting": [
            {
                "agent": chosen[i >> SHIFT][1],
                "chain": chosen[i >> SHIFT][0],
                "seq": seq,
                "type": kind,
                "origin": origin,
                "ts": ts,
                "text": text,
            }
            for i, seq, kind, origin, ts, text in rows
        ],
        "per_agent": {chosen[n][1]: c for n, c in sorted(counts)},
    }

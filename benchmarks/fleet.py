"""A fleet's chains synced into PostgreSQL (issue 29; index/fleet.py, specs/INDEX.md 7).

    python benchmarks/fleet.py --url postgresql://mc@127.0.0.1:55432/postgres \
        [--agents 100] [--per 10000] [--workers 2]

Builds ``agents`` chains of ``per`` memories each once (cached in
benchmarks/results/fleet-<agents>x<per>/; the texts of benchmarks/index.py's
corpus, a session and a day in each entry's meta), empties the fleet tables of
the database at ``--url``, then measures:

- the first sync of every chain, ``workers`` processes at a time (wall time,
  memories a second);
- the database's size per memory (``mc_memories`` with its indexes);
- a sync with nothing new, chain after chain in one process (median per chain);
- a sync of 100 new entries in each of ten chains;
- searches (index/fleet_store.py, limit 10, a new connection each, as
  ``memory-chain search --fleet`` makes): across every agent, and of one agent,
  beside the same query of that agent's memory.db in process (index/query.py);
  20 queries a class, p50 and p90 (``--no-search`` skips them).

With ``--vectors`` (a server with pgvector) every memory with text gets a random unit
vector in ``mc_vectors`` first (made by the server: embedding a million texts would take
hours, and a scan's cost does not depend on the values; kept for the next run), and the
searches are timed with vectors too (the query embedded by the semantic extra, as
``search --fleet`` does). ``--vector-index`` then builds the HNSW index
(``index --vector-index``) and times it: a search across every agent uses it.

Start a server as benchmarks/postgres_bm25.py says. Needs the postgres extra.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from common import REPO, log
from ledger import _WORDS

from index import Corpus
from memory_chain.chain.format.config import Layout
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import fleet, fleet_store
from memory_chain.index.db import Index
from memory_chain.index.query import search

RESULTS = REPO / "benchmarks" / "results"


def build(agents: int, per: int) -> list[Path]:
    """The agents' data directories, built once and kept."""
    top = RESULTS / f"fleet-{agents}x{per}"
    roots = [top / f"agent{n:04d}" for n in range(agents)]
    if (top / "complete").exists():
        return roots
    shutil.rmtree(top, ignore_errors=True)
    corpus = Corpus(seed=11)
    t0 = time.perf_counter()
    for n, root in enumerate(roots):
        led = Ledger.init(root, name=f"agent-{n:04d}")
        for done in range(0, per, 5_000):
            led.add_batch(corpus.entries(min(5_000, per - done)))
        led.close()
        if n % 10 == 9:
            log(f"built {n + 1} of {agents} chains")
    (top / "complete").write_text(f"{time.perf_counter() - t0:.1f} s\n")
    return roots


def _sync(url: str, root: str) -> int:
    return fleet.sync(url, Layout(Path(root))).added


def query_classes(agents: int, per: int, count: int = 20) -> dict[str, list[str]]:
    """Queries of each kind the corpus allows (benchmarks/index.py Corpus: texts of a
    hundred common words, a topic word of 2,000, and the entry's number)."""
    rng = random.Random(29)
    words = sorted(set(_WORDS))
    topics = [f"topic{rng.randrange(2000)}" for _ in range(count)]
    return {
        "a number (one memory)": [str(rng.randrange(1, agents * per)) for _ in range(count)],
        "a topic word": topics,
        "a common word": [rng.choice(words) for _ in range(count)],
        "three common words": [" ".join(rng.sample(words, 3)) for _ in range(count)],
        "a topic and two common words": [f"{t} {' '.join(rng.sample(words, 2))}" for t in topics],
        "a question": [
            f"what did the user say about {' and '.join(rng.sample(words, 2))}?"
            for _ in range(count)
        ],
    }


def _timed(run: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    """(p50, p90) in ms of ``run`` over ``queries``."""
    times = []
    for q in queries:
        t = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def searches(
    url: str, roots: list[Path], agents: int, per: int, *, semantic: bool = False
) -> list[str]:
    """Table rows: each query class across the fleet, of one agent, and of its memory.db
    (lexical); with ``semantic``, across the fleet and of one agent with vectors."""
    from memory_chain.index.settings import Settings

    one = roots[len(roots) // 2]
    name = f"agent-{len(roots) // 2:04d}"
    out = []
    lexical, vectors = Settings(semantic=False), Settings(semantic=True)

    def ask(settings: Settings, agents: list[str] | None = None) -> Callable[[str], object]:
        return lambda q: fleet_store.search(url, q, agents=agents, limit=10, settings=settings)

    with Index.open(one) as index:
        index.semantic = False  # the chains' memory.db have no vectors: lexical
        for kind, queries in query_classes(agents, per).items():
            ask(lexical)(queries[0])  # warm the server's caches once a class
            every = _timed(ask(lexical), queries)
            mine = _timed(ask(lexical, [name]), queries)
            local = _timed(lambda q: search(index, q, limit=10, record=False), queries)
            row = (
                f"| {kind} | {every[0]:.1f} / {every[1]:.1f} | {mine[0]:.1f} / {mine[1]:.1f} "
                f"| {local[0]:.1f} / {local[1]:.1f} |"
            )
            if semantic:
                ask(vectors)(queries[0])
                every, mine = _timed(ask(vectors), queries), _timed(ask(vectors, [name]), queries)
                row += f" {every[0]:.1f} / {every[1]:.1f} | {mine[0]:.1f} / {mine[1]:.1f} |"
            out.append(row)
    return out


def random_vectors(url: str) -> tuple[int, float]:
    """Give every memory with text a random unit vector (the server's random(), pgvector's
    l2_normalize); (vectors, seconds)."""
    import psycopg

    t = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        if not fleet._vector_table(conn):  # the extension and the table, as a sync makes them
            raise SystemExit(f"{fleet.safe_url(url)}: the server has no pgvector")
        have = conn.execute("SELECT count(*) FROM mc_vectors").fetchone()
        want = conn.execute("SELECT count(*) FROM mc_memories WHERE content IS NOT NULL")
        if have == want.fetchone():  # made by an earlier run (an index on them is kept)
            log("the random vectors of an earlier run are there")
            return int(have[0]) if have else 0, 0.0
        conn.execute(f"DROP INDEX IF EXISTS {fleet.VECTOR_INDEX}")
        conn.execute("TRUNCATE mc_vectors")
        conn.execute(
            # the WHERE makes the subquery correlated: a new vector for every row
            "INSERT INTO mc_vectors SELECT m.id, l2_normalize((SELECT array_agg(random() - 0.5) "
            "FROM generate_series(1, 384) WHERE m.id IS NOT NULL)::vector)::halfvec "
            "FROM mc_memories m WHERE m.content IS NOT NULL"
        )
        conn.execute("VACUUM ANALYZE mc_vectors")
        row = conn.execute("SELECT count(*), pg_total_relation_size('mc_vectors') FROM mc_vectors")
        n, size = row.fetchone() or (0, 0)
    log(f"{n:,} random vectors, {size / max(n, 1):,.0f} bytes a vector with the key")
    return n, time.perf_counter() - t


def _header(semantic: bool) -> str:
    head = "| query (p50 / p90 ms) | every agent | one agent | its memory.db |"
    line = "|---|---|---|---|"
    if semantic:
        head += " every agent, vectors | one agent, vectors |"
        line += "---|---|"
    return head + "\n" + line


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--per", type=int, default=10_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--no-search", action="store_true", help="measure the syncs only")
    p.add_argument(
        "--search-only", action="store_true", help="the fleet is synced already: search only"
    )
    p.add_argument(
        "--vector-index",
        action="store_true",
        help="with --vectors: build the HNSW index of the vectors first (kept for the next run)",
    )
    p.add_argument(
        "--vectors",
        action="store_true",
        help="give every memory a random vector (pgvector) and time searches with vectors too",
    )
    args = p.parse_args()
    import psycopg

    roots = build(args.agents, args.per)
    if args.search_only:
        if args.vectors:
            random_vectors(args.url)
            if args.vector_index:
                took = fleet.vector_index(args.url)
                log(f"the HNSW index: {took or 0:.1f} s")
        print(_header(args.vectors))
        print("\n".join(searches(args.url, roots, args.agents, args.per, semantic=args.vectors)))
        return
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(
            "DROP TABLE IF EXISTS mc_vectors, mc_memories, mc_chains, mc_schema, mc_postings, mc_df"
        )
    log("first sync of every chain")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        added = sum(pool.map(_sync, [args.url] * len(roots), [str(r) for r in roots]))
    first = time.perf_counter() - t0
    with psycopg.connect(args.url, autocommit=True) as conn:
        for table in ("mc_memories", "mc_postings", "mc_df", "mc_chains"):
            conn.execute(f"VACUUM ANALYZE {table}")
        row = conn.execute(
            "SELECT count(*), pg_total_relation_size('mc_memories'), "
            "pg_relation_size('mc_memories') FROM mc_memories"
        ).fetchone()
        words = conn.execute(
            "SELECT count(*), pg_total_relation_size('mc_postings'), "
            "pg_total_relation_size('mc_df') FROM mc_postings"
        ).fetchone()
    assert row is not None and words is not None
    memories, total, heap = row
    log("syncs with nothing new")
    idle = []
    for root in roots:
        t = time.perf_counter()
        fleet.sync(args.url, Layout(root))
        idle.append(time.perf_counter() - t)
    log("100 new entries in each of ten chains (copies: the cache stays as built)")
    corpus = Corpus(seed=99)
    corpus.n = 50_000_000  # texts the chains do not hold
    scratch = Path(tempfile.mkdtemp(prefix="mc-fleet-"))
    try:
        copies = [shutil.copytree(root, scratch / root.name) for root in roots[:10]]
        for root in copies:
            led = Ledger(root)
            led.add_batch(corpus.entries(100))
            led.close()
        t = time.perf_counter()
        for root in copies:
            fleet.sync(args.url, Layout(root))
        ten = time.perf_counter() - t
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"fleet of {args.agents} agents x {args.per:,} memories, {args.workers} workers\n")
    print("| measure | value |")
    print("|---|---|")
    print(
        f"| first sync of every chain | {first:.1f} s ({added:,} entries, "
        f"{added / first:,.0f} a second) |"
    )
    print(
        f"| mc_memories, {memories:,} rows | {total / 2**20:,.0f} MiB with indexes "
        f"({total / memories:,.0f} bytes a memory; heap {heap / memories:,.0f}) |"
    )
    print(
        f"| mc_postings, {words[0]:,} rows, and mc_df | {words[1] / 2**20:,.0f} MiB and "
        f"{words[2] / 2**20:,.0f} MiB ({(words[1] + words[2]) / memories:,.0f} bytes a memory) |"
    )
    print(f"| a sync with nothing new, median a chain | {statistics.median(idle) * 1000:.1f} ms |")
    print(f"| 100 new entries, each of ten chains | {ten / 10 * 1000:.1f} ms a chain |")
    if not args.no_search:
        if args.vectors:
            n, took = random_vectors(args.url)
            print(f"| {n:,} random vectors made by the server | {took:.1f} s |")
        print()
        print(_header(args.vectors))
        print("\n".join(searches(args.url, roots, args.agents, args.per, semantic=args.vectors)))


if __name__ == "__main__":
    main()

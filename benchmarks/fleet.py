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
- a sync of 100 new entries in each of ten chains.

Start a server as benchmarks/postgres_bm25.py says. Needs the postgres extra.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from common import REPO, log

from index import Corpus
from memory_chain.chain.format.config import Layout
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import fleet

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--per", type=int, default=10_000)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    import psycopg

    roots = build(args.agents, args.per)
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS mc_memories, mc_chains, mc_schema")
    log("first sync of every chain")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        added = sum(pool.map(_sync, [args.url] * len(roots), [str(r) for r in roots]))
    first = time.perf_counter() - t0
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE mc_memories")
        row = conn.execute(
            "SELECT count(*), pg_total_relation_size('mc_memories'), "
            "pg_relation_size('mc_memories') FROM mc_memories"
        ).fetchone()
    assert row is not None
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
    print(f"| a sync with nothing new, median a chain | {statistics.median(idle) * 1000:.1f} ms |")
    print(f"| 100 new entries, each of ten chains | {ten / 10 * 1000:.1f} ms a chain |")


if __name__ == "__main__":
    main()

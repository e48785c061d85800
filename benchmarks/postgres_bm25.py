"""bm25 in PostgreSQL over a postings table: what a fleet index would pay (issue 29, ADR 0003).

    python benchmarks/postgres_bm25.py --url postgresql://mc@127.0.0.1:55432/postgres \
        [--agents 100] [--per 10000]

A measurement for a design, not of the product: nothing of memory-chain is
imported. It fills two UNLOGGED tables of a PostgreSQL server it is given
(``docs``, ``postings``; dropped first) with ``agents x per`` synthetic
memories of 30 to 60 words drawn from a Zipf law over 30,000 words, one
posting per (word, memory) with its bm25 term weight (FTS5's k1 1.2 and
b 0.75, the corpus's average length), then times, per query class, p50 of
20 queries each:

- *fleet, exact*: bm25 over every posting of the query's words, all agents;
- *fleet, top 2000 a word*: each word's 2,000 best postings only (an index
  scan), and how many of the exact top 10 it keeps;
- *one agent, exact*: bm25 over one agent's postings (index on chain, term).

Start a server from Debian's packages as any user but root, for example:

    /usr/lib/postgresql/15/bin/initdb -D /tmp/pg -A trust -U mc
    /usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pg -l /tmp/pg.log \
        -o "-p 55432 -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off" start

Needs psycopg 3 (``pip install 'psycopg[binary]'``).
"""

from __future__ import annotations

import argparse
import bisect
import math
import random
import statistics
import time
from collections import Counter
from typing import Any

K1, B = 1.2, 0.75
VOCABULARY = 30_000

FLEET_EXACT = """
SELECT chain, seq, sum(q.w * p.impact) AS s FROM postings p
JOIN unnest(%s::text[], %s::float8[]) AS q(term, w) ON p.term = q.term
GROUP BY chain, seq ORDER BY s DESC LIMIT 20"""
FLEET_BOUNDED = """
SELECT chain, seq, sum(w * impact) AS s FROM unnest(%s::text[], %s::float8[]) AS q(term, w)
CROSS JOIN LATERAL (
  SELECT chain, seq, impact FROM postings p WHERE p.term = q.term ORDER BY impact DESC LIMIT 2000
) x
GROUP BY chain, seq ORDER BY s DESC LIMIT 20"""
ONE_AGENT = """
SELECT seq, sum(q.w * p.impact) AS s FROM postings p
JOIN unnest(%s::text[], %s::float8[]) AS q(term, w) ON p.term = q.term WHERE p.chain = %s
GROUP BY seq ORDER BY s DESC LIMIT 20"""


def idf(rows: int, hits: int) -> float:
    """FTS5's idf."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    return math.log(ratio) if ratio > 1 else 1e-6


def fill(cur: Any, agents: int, per: int) -> tuple[Counter[str], Counter[tuple[int, str]]]:
    """The two tables, indexed; the document frequency of each word, fleet-wide and per
    (agent, word)."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(VOCABULARY)]
    cum, acc = [], 0.0
    for rank in range(1, VOCABULARY + 1):
        acc += 1.0 / rank
        cum.append(acc)
    docs = []
    total = 0
    for a in range(agents):
        for s in range(per):
            n = rng.randint(30, 60)
            drawn = (words[bisect.bisect_left(cum, rng.random() * acc)] for _ in range(n))
            docs.append((a, s, n, Counter(drawn)))
            total += n
    avgdl = total / len(docs)
    cur.execute("DROP TABLE IF EXISTS postings, docs")
    cur.execute(
        "CREATE UNLOGGED TABLE docs (chain int, seq int, len int, PRIMARY KEY (chain, seq))"
    )
    cur.execute(
        "CREATE UNLOGGED TABLE postings (term text, chain int, seq int, tf int, impact real)"
    )
    df: Counter[str] = Counter()
    agent_df: Counter[tuple[int, str]] = Counter()
    t0 = time.perf_counter()
    with cur.copy("COPY docs (chain, seq, len) FROM STDIN") as cp:
        for a, s, n, _ in docs:
            cp.write_row((a, s, n))
    with cur.copy("COPY postings (term, chain, seq, tf, impact) FROM STDIN") as cp:
        for a, s, n, tfs in docs:
            norm = K1 * (1 - B + B * n / avgdl)
            for term, tf in tfs.items():
                cp.write_row((term, a, s, tf, tf * (K1 + 1) / (tf + norm)))
                df[term] += 1
                agent_df[a, term] += 1
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    cur.execute("CREATE INDEX ON postings (term, impact DESC) INCLUDE (chain, seq)")
    cur.execute("CREATE INDEX ON postings (chain, term) INCLUDE (seq, impact)")
    cur.execute("VACUUM ANALYZE postings")
    cur.execute("VACUUM ANALYZE docs")
    cur.execute("SELECT count(*), pg_total_relation_size('postings') FROM postings")
    count, size = cur.fetchone()
    print(
        f"{len(docs):,} memories, {count:,} postings, {size / 2**20:,.0f} MiB with indexes; "
        f"loaded in {loaded:.0f} s, indexed in {time.perf_counter() - t0:.0f} s"
    )
    return df, agent_df


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--per", type=int, default=10_000)
    args = p.parse_args()
    import psycopg

    with psycopg.connect(args.url, autocommit=True) as conn:
        cur = conn.cursor()
        df, agent_df = fill(cur, args.agents, args.per)
        rows = args.agents * args.per
        w = [f"w{i}" for i in range(VOCABULARY)]
        classes = {
            "rare (rank 8000)": [[w[r]] for r in range(8000, 8020)],
            "medium (rank 300)": [[w[r]] for r in range(300, 320)],
            "common (rank 3-22)": [[w[r]] for r in range(3, 23)],
            "three common": [[w[r], w[r + 1], w[r + 2]] for r in range(3, 63, 3)],
        }
        print("| query | fleet, exact | fleet, top 2000 a word (top 10 kept) | one agent, exact |")
        print("|---|---|---|---|")
        for name, queries in classes.items():
            exact, bounded, agent, kept = [], [], [], []
            for q in queries:
                weights = [idf(rows, df[t]) for t in q]
                t0 = time.perf_counter()
                cur.execute(FLEET_EXACT, (q, weights))
                best = [(r[0], r[1]) for r in cur.fetchall()[:10]]
                exact.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                cur.execute(FLEET_BOUNDED, (q, weights))
                near = [(r[0], r[1]) for r in cur.fetchall()[:10]]
                bounded.append(time.perf_counter() - t0)
                kept.append(len(set(near) & set(best)) / max(1, len(best)))
                mine = [idf(args.per, agent_df[7, t]) for t in q]
                t0 = time.perf_counter()
                cur.execute(ONE_AGENT, (q, mine, 7))
                cur.fetchall()
                agent.append(time.perf_counter() - t0)
            med = [statistics.median(x) * 1000 for x in (exact, bounded, agent)]
            print(
                f"| {name} | {med[0]:.1f} ms | {med[1]:.1f} ms ({statistics.mean(kept):.2f}) "
                f"| {med[2]:.1f} ms |"
            )


if __name__ == "__main__":
    main()

"""Recall benchmark (issue 25): does search find the turn that answers a question?

    python benchmarks/recall.py [--part tune|held-out|both] [--misses]

Each conversation of tests/corpora/recall_gen.py becomes a chain of its own:
every turn one memory (``<speaker>: <text>``, its session in ``meta``),
added in one batch. Each question is then asked of the chain's index with
``index.query.search`` (the ranking of ``memory-chain search``, limit 10,
access recorded as the CLI records it), and, in the same run, of raw SQLite FTS5 bm25 over
the same texts (the ``unicode61`` tokenizer, every word of the question
ORed): the baseline the issue measures against.

Reported per question kind and overall, for each part: turn recall@10 (the
share of a question's evidence turns among the first 10 results, averaged)
and session recall@5 (the share of its evidence sessions among the
sessions of the first 5). The tune part is what the ranking may be tuned
on; the held-out part (other people, places and question forms) is the
report.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "corpora"))

from recall_gen import KINDS, Conversation, conversations  # noqa: E402

from memory_chain.chain.format.newentry import NewEntry  # noqa: E402
from memory_chain.chain.store.ledger import Ledger  # noqa: E402
from memory_chain.index.db import Index  # noqa: E402
from memory_chain.index.query import search  # noqa: E402

_WORD = re.compile(r"\w+")


class Tally:
    """Recall sums per kind."""

    def __init__(self) -> None:
        self.turn: dict[str, list[float]] = defaultdict(list)
        self.session: dict[str, list[float]] = defaultdict(list)

    def add(self, kind: str, turn: float, session: float) -> None:
        for k in (kind, "all"):
            self.turn[k].append(turn)
            self.session[k].append(session)

    def row(self, kind: str) -> tuple[int, float, float]:
        t, s = self.turn[kind], self.session[kind]
        return len(t), sum(t) / len(t) if t else 0.0, sum(s) / len(s) if s else 0.0


def _recalls(
    found: list[str], evidence: list[str], session_of: dict[str, str]
) -> tuple[float, float]:
    top10 = set(found[:10])
    turn = sum(e in top10 for e in evidence) / len(evidence)
    sessions5 = {session_of[f] for f in found[:5]}
    wanted = {session_of[e] for e in evidence}
    session = len(wanted & sessions5) / len(wanted)
    return turn, session


def raw_bm25(conv: Conversation) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text, tokenize='unicode61')")
    db.executemany("INSERT INTO t (id, text) VALUES (?, ?)", [(t.id, t.memory) for t in conv.turns])
    return db


def raw_search(db: sqlite3.Connection, question: str) -> list[str]:
    words = list(dict.fromkeys(_WORD.findall(question)))
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    rows = db.execute(
        "SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,)
    ).fetchall()
    return [r[0] for r in rows]


def run(part: str, misses: bool = False) -> tuple[Tally, Tally]:
    ours, raw = Tally(), Tally()
    tmp = Path(tempfile.mkdtemp(prefix="mc-recall-"))
    try:
        for n, conv in enumerate(conversations(part)):
            root = tmp / f"c{n}"
            led = Ledger.init(root, name=conv.name)
            entries = [
                NewEntry(
                    content=t.memory.encode(),
                    type="memory",
                    tier="relationship",
                    source="auto",
                    meta={"session": t.session, "turn": t.id, "date": t.day.isoformat()},
                )
                for t in conv.turns
            ]
            appended = led.add_batch(entries)
            led.close()
            by_seq = {a.seq: t.id for a, t in zip(appended, conv.turns, strict=True)}
            session_of = {t.id: t.session for t in conv.turns}
            db = raw_bm25(conv)
            with Index.open(root) as index:
                for q in conv.questions:
                    hits = search(index, q.text, limit=10, record=True)
                    found = [by_seq[h.seq] for h in hits if h.seq in by_seq]
                    ours.add(q.kind, *_recalls(found, q.evidence, session_of))
                    base = raw_search(db, q.text)
                    raw.add(q.kind, *_recalls(base, q.evidence, session_of))
                    if misses and not set(found[:10]) & set(q.evidence):
                        print(f"MISS {q.kind:11} {q.text}")
            db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ours, raw


def table(part: str, ours: Tally, raw: Tally) -> str:
    rows = [
        f"{part}: memory-chain search against raw FTS5 bm25, same texts, same run",
        "",
        "| kind | questions | turn recall@10 | raw bm25 | session recall@5 | raw bm25 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in (*KINDS, "all"):
        n, t, s = ours.row(kind)
        _, rt, rs = raw.row(kind)
        bold = "**" if kind == "all" else ""
        rows.append(
            f"| {kind} | {n} | {bold}{t:.3f}{bold} | {rt:.3f} | {bold}{s:.3f}{bold} | {rs:.3f} |"
        )
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["tune", "held-out", "both"], default="both")
    p.add_argument("--misses", action="store_true")
    args = p.parse_args()
    parts = ["tune", "held-out"] if args.part == "both" else [args.part]
    for part in parts:
        ours, raw = run(part, args.misses)
        print(table(part, ours, raw))
        print()


if __name__ == "__main__":
    main()

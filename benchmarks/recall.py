"""Recall benchmark (issue 25): does search find the turn that answers a question?

    python benchmarks/recall.py [--part tune|held-out|both] [--semantic] [--misses]
    python benchmarks/recall.py --tune
    python benchmarks/recall.py --part P --pool P2,P3 [--semantic]   # one store of all
    python benchmarks/recall.py --part P --haystack 600 [--semantic]  # a long conversation
    python benchmarks/recall.py --part P --bare [--semantic]  # turns added with no meta

Each conversation of tests/corpora/recall_gen.py becomes a chain of its own:
every turn one memory (``<speaker>: <text>``, its session in ``meta``),
added in one batch. Each question is then asked of the chain's index with
``index.query.search`` (the ranking of ``memory-chain search``, limit 10),
lexically and, with ``--semantic``, with vectors (the semantic extra; every
turn embedded first). Access is not recorded: one question's hits must not
rank the next. In the same run the same questions go to raw SQLite FTS5
bm25 over the same texts (the ``unicode61`` tokenizer, every word of the
question ORed): the baseline the issue measures against.

Reported per question kind and overall, for each part: turn recall@10 (the
share of a question's evidence turns among the first 10 results, averaged)
and session recall@5 (the share of its evidence sessions among the
sessions of the first 5). The tune part is what the ranking may be tuned
on (``--tune`` grid-searches the time weight and the fusion constants of
index/query.py on it);
the held-out part (other people, places and question forms) is the report.

Two more parts are written by hand: ``hand`` (tests/corpora/recall-hand.txt
and recall-hand-long.txt: first a report, tuning material since the
neighbour constants were tuned on it with ``--tune-neighbours``) and
``held-out-hand`` (recall-heldout-long.txt, written after that tuning by
another method; reported once in session 34, and looked at as tuning
material since session 38). ``long`` (recall-long-tune.txt, session 38):
long turns that end by asking back, tuning material; ``long-held-out``
(recall-long-heldout.txt), written after by another method, never tuned on.
``held-out-3`` (recall-heldout3.txt, session 39) was written after the page order and the
kind words, and run once then. ``life`` (recall-life.txt, session 41): one conversation
of a year, 24 sessions and 306 turns, with questions that gather a list over many
sessions; tuning material. ``held-out-4`` (recall-heldout4.txt, session 41): written
after that, questions first, and run once. ``held-out-5`` (recall-heldout5.txt): written
after every step of session 41, its questions in other words than the chat's; run once.
``held-out-6`` (recall-heldout6.txt, session 49): written before the sparse head was
tried, from a timeline of events first; run only after that was settled.

``--haystack N`` (session 50) pads each conversation of a hand-written part to N turns
with whole sessions of the other hand-written tuning parts (then the generated tune
part), their speakers renamed to the conversation's two people: the published set's
conversations are about 600 turns long, ours 50 to 300, and a question's words come back
in many sessions that do not answer it. Only the conversation's own turns are evidence,
so a filler turn that happens to answer (a renamed person's other cat) counts against:
the figures are a pessimistic bound, as a conversation alone is an optimistic one.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "corpora"))

from recall_gen import KINDS, Conversation, Question, Turn, conversations  # noqa: E402

from memory_chain.chain.format.newentry import NewEntry  # noqa: E402
from memory_chain.chain.store.ledger import Ledger  # noqa: E402
from memory_chain.index import query  # noqa: E402
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


@dataclass
class Built:
    """One conversation's chain, indexed (and embedded, with vectors)."""

    conv: Conversation
    root: Path
    by_seq: dict[int, str]
    session_of: dict[str, str]
    part: str = ""  # in one store of several parts (``build_one``): the part it is of


HAND = REPO / "tests" / "corpora" / "recall-hand.txt"
HAND_LONG = REPO / "tests" / "corpora" / "recall-hand-long.txt"
#: Written after the neighbour constants were tuned on "tune" and "hand"; never tuned on.
HELD_OUT_HAND = REPO / "tests" / "corpora" / "recall-heldout-long.txt"
#: Long turns that end by asking something back (session 38): tuning material.
LONG = REPO / "tests" / "corpora" / "recall-long-tune.txt"
#: Long turns, written after ASIDE_WORDS was chosen on LONG, by another method; never tuned on.
LONG_HELD_OUT = REPO / "tests" / "corpora" / "recall-long-heldout.txt"
#: Written after the page order and the kind words were fixed (session 39), by another
#: method; never tuned on.
HELD_OUT_3 = REPO / "tests" / "corpora" / "recall-heldout3.txt"
#: A year of chat in one conversation, lists gathered over many sessions (session 41):
#: tuning material.
LIFE = REPO / "tests" / "corpora" / "recall-life.txt"
#: Written after the bm25 floor and the speakers' names (session 41), questions first; run
#: once.
HELD_OUT_4 = REPO / "tests" / "corpora" / "recall-heldout4.txt"
#: Written after every step of session 41, the questions in other words than the chat's;
#: run once.
HELD_OUT_5 = REPO / "tests" / "corpora" / "recall-heldout5.txt"
#: Written in session 49 before the sparse head was tried, from a timeline of events
#: first; run only after it was settled.
HELD_OUT_6 = REPO / "tests" / "corpora" / "recall-heldout6.txt"


def hand_conversations(path: Path = HAND) -> list[Conversation]:
    """The hand-written part (tests/corpora/recall-hand.txt; its header gives the format)."""
    from datetime import date

    out: list[Conversation] = []
    session, day, n = "", date.min, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line or line.startswith("# "):
            continue
        if line.startswith("## "):
            out.append(Conversation(line[3:].strip()))
        elif line.startswith("### "):
            session, when = line[4:].split()
            day, n = date.fromisoformat(when), 0
        elif line.startswith("? "):
            kind, text, evidence = (x.strip() for x in line[2:].split("|"))
            if kind not in KINDS:
                raise ValueError(f"{path}:{number}: unknown kind {kind!r}")
            conv = out[-1]
            ids = [f"{conv.name}:{e.strip().replace('.', ':')}" for e in evidence.split(",")]
            known = {t.id for t in conv.turns}
            if not set(ids) <= known:
                raise ValueError(f"{path}:{number}: no turn {sorted(set(ids) - known)}")
            conv.questions.append(Question(kind, text, ids, ""))
        else:
            speaker, _, said = line.partition(": ")
            n += 1
            conv = out[-1]
            conv.turns.append(Turn(f"{conv.name}:{session}:{n}", session, day, speaker, said))
    return out


#: The hand-written parts by name, and their files.
HAND_PARTS: dict[str, tuple[Path, ...]] = {
    "hand": (HAND, HAND_LONG),
    "held-out-hand": (HELD_OUT_HAND,),
    "long": (LONG,),
    "long-held-out": (LONG_HELD_OUT,),
    "held-out-3": (HELD_OUT_3,),
    "life": (LIFE,),
    "held-out-4": (HELD_OUT_4,),
    "held-out-5": (HELD_OUT_5,),
    "held-out-6": (HELD_OUT_6,),
}


def part_conversations(part: str, count: int = 60) -> list[Conversation]:
    files = HAND_PARTS.get(part)
    if files is not None:
        return [conv for path in files for conv in hand_conversations(path)]
    return conversations(part, count)


#: The parts a conversation is padded from (``--haystack``), none of them the target's part.
FILLERS: tuple[str, ...] = ("hand", "long", "life", "tune")


def speakers_of(conv: Conversation) -> list[str]:
    """The speakers of ``conv`` in the order they first speak."""
    return list(dict.fromkeys(t.speaker for t in conv.turns))


def padded(conv: Conversation, fillers: list[Conversation], size: int) -> Conversation:
    """``conv`` grown to at least ``size`` turns with whole sessions of ``fillers``, spoken
    by ``conv``'s own people: a long conversation between the same two people, as the
    published set's are (about 600 turns in 19 to 32 sessions), where the words of a
    question come back in many sessions that do not answer it.

    Each filler conversation's speakers are renamed, in the order they first speak, to
    ``conv``'s (in their turns' labels and wherever their names stand in the text, with a
    possessive); a third speaker keeps their name. Its sessions are spread evenly over
    ``conv``'s days (at least 60 of them) and added in day order among ``conv``'s, which
    keep their own days and ids: only ``conv``'s turns are evidence."""
    from datetime import timedelta

    own = speakers_of(conv)
    days = sorted({t.day for t in conv.turns})
    first, span = days[0], max((days[-1] - days[0]).days, 60)
    sessions: list[tuple[Any, ...]] = []  # (day, order, session id, turns)
    for t in conv.turns:
        if not sessions or sessions[-1][2] != t.session:
            sessions.append((t.day, 0, t.session, []))
        sessions[-1][3].append(t)
    extra: list[tuple[str, list[Turn]]] = []
    total = len(conv.turns)
    for k, other in enumerate(fillers):
        if total >= size:
            break
        names = dict(zip(speakers_of(other), own, strict=False))
        words = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
        current: list[Turn] = []
        last = None
        for t in other.turns:
            if t.session != last:
                if total >= size:
                    break
                last, current = t.session, []
                extra.append((f"fill{k}-{t.session}", current))
            text = words.sub(lambda m, to=names: to[m.group(1)], t.text) if words else t.text
            speaker = names.get(t.speaker, t.speaker)
            current.append(Turn(f"fill{k}:{t.id}", "", t.day, speaker, text))
            total += 1
    for i, (session, turns) in enumerate(extra):
        day = first + timedelta(days=round((i + 1) * span / (len(extra) + 1)))
        moved = [Turn(t.id, session, day, t.speaker, t.text) for t in turns]
        sessions.append((day, 1, session, moved))
    sessions.sort(key=lambda s: (s[0], s[1]))
    turns = [t for s in sessions for t in s[3]]
    return Conversation(conv.name, turns, conv.questions)


#: ``--bare`` (session 52): turns added with no meta at all, as a harness that adds each
#: turn's text and nothing else would: no session, no day (every turn said the day it was
#: added), so recall has only the text and the order the turns came in.
BARE = False


def turn_entry(t: Turn, session: str) -> NewEntry:
    """One turn as the memory it is added as (its session named as given; no meta with
    ``--bare``)."""
    return NewEntry(
        content=t.memory.encode(),
        type="memory",
        tier="relationship",
        source="auto",
        meta={} if BARE else {"session": session, "turn": t.id, "date": t.day.isoformat()},
    )


def build(
    part: str, tmp: Path, *, semantic: bool, count: int = 60, haystack: int = 0
) -> list[Built]:
    """Each conversation of ``part`` in a chain of its own; with ``haystack``, padded to
    that many turns (``padded``) from the conversations of FILLERS other than ``part``."""
    convs = part_conversations(part, count)
    if haystack:
        # every conversation padded from all of the fillers (each is a store of its own),
        # the hand-written ones first, each starting at another of them
        hand = [c for name in FILLERS[:-1] if name != part for c in part_conversations(name)]
        made = [c for name in FILLERS[-1:] if name != part for c in part_conversations(name)]
        convs = [
            padded(c, hand[n % len(hand) :] + hand[: n % len(hand)] + made, haystack)
            for n, c in enumerate(convs)
        ]
    out = []
    for n, conv in enumerate(convs):
        root = tmp / f"{part}{n}"
        led = Ledger.init(root, name=conv.name)
        appended = led.add_batch([turn_entry(t, t.session) for t in conv.turns])
        led.close()
        with Index.open(root) as index:
            if semantic:
                index.semantic = True
                index.embed()
        by_seq = {a.seq: t.id for a, t in zip(appended, conv.turns, strict=True)}
        session_of = {t.id: t.session for t in conv.turns}
        out.append(Built(conv, root, by_seq, session_of))
    return out


def build_one(
    part: str, tmp: Path, count: int = 60, *, more: tuple[str, ...] = (), semantic: bool = False
) -> list[Built]:
    """Every conversation of a part (and of the parts ``more``) in one chain (issue 27: a
    store large enough that common words pass index/topk.py's bound; issue 25: questions
    asked among the other conversations' turns, as in a store that holds many); sessions
    are named per part and conversation."""
    root = tmp / f"{part}-one"
    led = Ledger.init(root, name=part)
    out = []
    by_seq: dict[int, str] = {}  # every conversation's: a turn of another one is a miss
    session_of: dict[str, str] = {}
    for name in (part, *more):
        for conv in part_conversations(name, count):
            where = f"{name}/{conv.name}"
            entries = [turn_entry(t, f"{where}/{t.session}") for t in conv.turns]
            appended = led.add_batch(entries)
            by_seq.update((a.seq, t.id) for a, t in zip(appended, conv.turns, strict=True))
            session_of.update((t.id, f"{where}/{t.session}") for t in conv.turns)
            out.append(Built(conv, root, by_seq, session_of, name))
    led.close()
    if semantic:
        with Index.open(root) as index:
            index.semantic = True
            index.embed()
    return out


def bounded(built: list[Built], bounds: list[int]) -> dict[str, Tally]:
    """Recall in one store with index/topk.py's bound off (exact bm25) and at each bound."""
    from memory_chain.index import topk

    shipped = topk.BOUND
    rows = {}
    try:
        for bound in [0, *bounds]:
            topk.BOUND = bound or 10**12
            name = "exact" if not bound else f"bound {bound}"
            t0 = time.perf_counter()
            rows[name] = ask(built, semantic=False)
            print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    finally:
        topk.BOUND = shipped
    return rows


def ask(built: list[Built], *, semantic: bool, misses: bool = False) -> Tally:
    """Each question of each conversation, asked of its index: recall per kind."""
    tally = Tally()
    for b in built:
        with Index.open(b.root) as index:
            index.semantic = semantic
            index.catch_up = None
            for q in b.conv.questions:
                hits = search(index, q.text, limit=10, record=False)
                found = [b.by_seq[h.seq] for h in hits if h.seq in b.by_seq]
                tally.add(q.kind, *_recalls(found, q.evidence, b.session_of))
                if misses and not set(found[:10]) & set(q.evidence):
                    print(f"MISS {q.kind:11} {q.text}")
    return tally


def run(part: str, *, semantic: bool = False, count: int = 60) -> tuple[Tally, Tally]:
    """(ours, raw bm25) for the first ``count`` conversations of one part: lexical, or
    with vectors."""
    tmp = Path(tempfile.mkdtemp(prefix="mc-recall-"))
    try:
        built = build(part, tmp, semantic=semantic, count=count)
        return ask(built, semantic=semantic), ask_raw(built)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ask_fleet(
    built: list[Built], url: str, same: list[int] | None = None, *, semantic: bool = False
) -> Tally:
    """Each question asked of the conversation's chain in a fleet's PostgreSQL at ``url``
    (issue 29: index/fleet_store.py, the ranking of memory.db over the fleet's rows): each
    chain is synced there first (with ``semantic``, its memory.db's vectors too: the
    server needs pgvector). ``same`` gets [questions whose first 10 are memory.db's first
    10 in the same order, questions]."""
    from memory_chain.chain.format.config import Layout
    from memory_chain.index import fleet, fleet_store
    from memory_chain.index.settings import Settings

    tally = Tally()
    settings = Settings(semantic=semantic)
    for b in built:
        synced = fleet.sync(url, Layout(b.root), verify=False)
        if semantic and synced.vectors is None:
            raise SystemExit(f"{fleet.safe_url(url)}: the server has no pgvector")
        with Index.open(b.root) as index:
            index.catch_up = None
            index.semantic = semantic
            for q in b.conv.questions:
                hits = fleet_store.search(
                    url, q.text, agents=[synced.chain_id], limit=10, settings=settings
                )
                found = [b.by_seq[h.seq] for h in hits if h.seq in b.by_seq]
                tally.add(q.kind, *_recalls(found, q.evidence, b.session_of))
                if same is not None:
                    ours = [h.seq for h in search(index, q.text, limit=10, record=False)]
                    same[0] += ours == [h.seq for h in hits]
                    same[1] += 1
    return tally


def ask_raw(built: list[Built], among: list[Built] | None = None) -> Tally:
    """Raw bm25 over each conversation's turns, or over the turns of all of ``among``
    (one store of several conversations)."""
    tally = Tally()
    pooled = None
    if among is not None:
        pooled = raw_bm25(Conversation("all", turns=[t for b in among for t in b.conv.turns]))
    for b in built:
        db = raw_bm25(b.conv) if pooled is None else pooled
        for q in b.conv.questions:
            base = raw_search(db, q.text)
            tally.add(q.kind, *_recalls(base, q.evidence, b.session_of))
        if pooled is None:
            db.close()
    if pooled is not None:
        pooled.close()
    return tally


def tune(built: list[Built]) -> None:
    """Grid searches on ``built`` (the tune part only): the time weight lexically, then the
    fusion constants with vectors."""
    results = []
    for weight in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0):
        query.TIME_WEIGHT = weight
        _, turn, session = ask(built, semantic=False).row("all")
        results.append((turn + session, weight))
        print(f"time weight {weight:.1f}: turn {turn:.3f} session {session:.3f}")
    query.TIME_WEIGHT = max(results)[1]
    print(f"best: TIME_WEIGHT = {query.TIME_WEIGHT}")
    fused = []
    for share in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        for span in (0.05, 0.08, 0.1, 0.15, 0.2):
            query.SEMANTIC_SHARE, query.COS_SPAN = share, span
            _, turn, session = ask(built, semantic=True).row("all")
            fused.append((turn + session, share, span))
            print(f"share {share:.2f} span {span:.2f}: turn {turn:.3f} session {session:.3f}")
    best = max(fused)
    print(f"best: SEMANTIC_SHARE = {best[1]}, COS_SPAN = {best[2]}")


#: The neighbour constants of index/query.py and the values the search tries.
NEIGHBOUR_GRID: dict[str, tuple[float, ...]] = {
    "NEXT_WEIGHT": (0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0),
    "ASKED_FACTOR": (0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0),
    "CHAIN_WEIGHT": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
}


def tune_neighbours(parts: list[list[Built]], rounds: int = 2) -> None:
    """Coordinate search of the neighbour constants on tuning parts only (the generated
    tune part and the hand-written tuning parts), lexically and with vectors: each part's
    mean of turn@10 and session@5 counts the same, whatever its size."""

    def objective() -> float:
        total = 0.0
        for built in parts:
            for semantic in (False, True):
                _, turn, session = ask(built, semantic=semantic).row("all")
                total += turn + session
        return total / (4 * len(parts))

    chosen = {k: getattr(query, k) for k in ("NEXT_WEIGHT", "ASKED_FACTOR", "CHAIN_WEIGHT")}
    query.NEXT_WEIGHT, query.ASKED_FACTOR, query.CHAIN_WEIGHT = 0.0, 1.0, 0.0
    print(f"without neighbours {objective():.4f}")
    for k, v in chosen.items():
        setattr(query, k, v)
    best = objective()
    print(f"start {best:.4f}", chosen)
    for _ in range(rounds):
        for name, values in NEIGHBOUR_GRID.items():
            keep = getattr(query, name)
            for value in values:
                setattr(query, name, value)
                got = objective()
                print(f"  {name} = {value}: {got:.4f}")
                if got > best + 1e-9:
                    best, keep = got, value
            setattr(query, name, keep)
        print(f"round {best:.4f}", {k: getattr(query, k) for k in NEIGHBOUR_GRID})


def table(part: str, rows: dict[str, Tally]) -> str:
    names = list(rows)
    head = (
        " | ".join(f"turn@10 {n}" for n in names)
        + " | "
        + " | ".join(f"session@5 {n}" for n in names)
    )
    out = [
        f"{part}: turn recall@10 and session recall@5, same texts, same run",
        "",
        f"| kind | questions | {head} |",
        "|---|---:|" + "---:|" * (2 * len(names)),
    ]
    for kind in (*KINDS, "all"):
        n = rows[names[0]].row(kind)[0]
        turns = [f"{rows[k].row(kind)[1]:.3f}" for k in names]
        sessions = [f"{rows[k].row(kind)[2]:.3f}" for k in names]
        out.append(f"| {kind} | {n} | " + " | ".join(turns + sessions) + " |")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--part",
        choices=["tune", "held-out", *HAND_PARTS, "both"],
        default="both",
    )
    p.add_argument("--misses", action="store_true")
    p.add_argument(
        "--one-store",
        metavar="BOUNDS",
        help="all conversations of the part in one chain, ranked exactly and at each of "
        "these comma-separated bounds of index/topk.py (issue 27)",
    )
    p.add_argument(
        "--pool",
        metavar="PARTS",
        help="every conversation of --part and of these comma-separated parts in one "
        "chain; each part's questions asked there (issue 25: a store of many conversations)",
    )
    p.add_argument(
        "--haystack",
        metavar="TURNS",
        type=int,
        default=0,
        help="pad each conversation to this many turns with sessions of the other parts "
        "(FILLERS), its speakers renamed to the conversation's (a long conversation)",
    )
    p.add_argument(
        "--semantic",
        action="store_true",
        help="also rank with vectors (the semantic extra; embeds every turn, ~1.5 min a part)",
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="grid-search the fusion constants on the tune part (implies --semantic)",
    )
    p.add_argument(
        "--tune-neighbours",
        action="store_true",
        help="search the neighbour constants on the tune and hand parts (with vectors)",
    )
    p.add_argument(
        "--bare",
        action="store_true",
        help="add each turn with no meta (no session, no day): only its text and its order",
    )
    p.add_argument(
        "--url",
        metavar="URL",
        help="also ask each chain synced into the fleet database at this postgresql:// URL "
        "(issue 29: the same ranking over PostgreSQL); lexical only",
    )
    args = p.parse_args()
    global BARE
    BARE = args.bare
    tmp = Path(tempfile.mkdtemp(prefix="mc-recall-"))
    try:
        if args.tune:
            tune(build("tune", tmp, semantic=True))
            return
        if args.tune_neighbours:
            tune_neighbours([build(p, tmp, semantic=True) for p in ("tune", "hand")])
            return
        parts = ["tune", "held-out"] if args.part == "both" else [args.part]
        if args.pool:
            more = tuple(x for x in args.pool.split(",") if x)
            built = build_one(parts[0], tmp, more=more, semantic=args.semantic)
            for name in (parts[0], *more):
                mine = [b for b in built if b.part == name]
                rows = {
                    "raw bm25": ask_raw(mine, built),
                    "lexical": ask(mine, semantic=False),
                }
                same = [0, 0]
                if args.url:
                    rows["fleet"] = ask_fleet(mine, args.url, same)
                if args.semantic:
                    if args.url:
                        same_vec = [0, 0]
                        rows["fleet semantic"] = ask_fleet(mine, args.url, same_vec, semantic=True)
                    rows["semantic"] = ask(mine, semantic=True, misses=args.misses)
                print(table(f"{name}, among {len(built)} conversations", rows))
                if args.url:
                    print(
                        f"\nfleet: the same first 10 as memory.db in {same[0]} of {same[1]} "
                        "questions"
                    )
                    if args.semantic:
                        print(
                            f"fleet semantic: the same first 10 in {same_vec[0]} of {same_vec[1]}"
                        )
                print()
            return
        if args.one_store:
            bounds = [int(b) for b in args.one_store.split(",")]
            for part in parts:
                print(table(f"{part}, one store", bounded(build_one(part, tmp), bounds)))
                print()
            return
        for part in parts:
            built = build(part, tmp, semantic=args.semantic, haystack=args.haystack)
            rows = {"raw bm25": ask_raw(built), "lexical": ask(built, semantic=False)}
            same = [0, 0]
            if args.url:
                rows["fleet"] = ask_fleet(built, args.url, same)
            if args.semantic:
                if args.url:
                    same_vec = [0, 0]
                    rows["fleet semantic"] = ask_fleet(built, args.url, same_vec, semantic=True)
                rows["semantic"] = ask(built, semantic=True, misses=args.misses)
            elif args.misses:
                ask(built, semantic=False, misses=True)
            turns = sum(len(b.conv.turns) for b in built)
            print(table(f"{part}, {len(built)} conversations, {turns} turns", rows))
            if args.url:
                print(
                    f"\nfleet: the same first 10 as memory.db in {same[0]} of {same[1]} questions"
                )
                if args.semantic:
                    print(f"fleet semantic: the same first 10 in {same_vec[0]} of {same_vec[1]}")
            print()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

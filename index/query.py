"""Recall: a user's query string made safe for FTS5, and hybrid-ranked search.

Score of a memory that matches the query (every part in 0..1)::

    text       * bm25 / max(best bm25 among the candidates, bm25_floor) (sign flipped)
  + recency    * 0.5 ** (age_days / 7)               (7-day half-life)
  + importance * importance / 100
  + access     * access_count / highest access_count in the index

with weights 0.4/0.3/0.2/0.1 by default (config.json "index.weights" or
--weights). Recency counts only when the query asks for what is recent
("latest", "last", "now", ...; issue 25) unless weights are given. Only
memories that match the query are candidates: a query that matches
nothing returns nothing.

A second search for the names the three best matches mention (not in the
query) finds what they link to, ranked below a direct match (multi-hop).
The reply to a question that matches joins the candidates (``neighbours``;
specs/INDEX.md 3.3).

The query is analysed first (``query_terms``): its content words are
searched for, not its stop words ("what did Ana say about the move" looks
for Ana, move), unless it has no other; names and numbers stay, and a verb
brings its irregular past forms (index/verbs.py). With vectors the query is
embedded without its speakers' names (``without_speakers``). The query
string is never passed to FTS5 as syntax: its words (runs of letters,
digits and underscores) are each quoted as a string and joined with OR, so
quotes, operators (AND, NEAR, ``*``, ``^``, column filters), unicode and
empty strings cannot raise a syntax error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from memory_chain.chain.format.patterns import lazy
from memory_chain.chain.format.values import Record

from .budget import pack
from .db import Index, not_superseded, visible
from .kinds import members
from .settings import DAY_US, Weights
from .store import COLUMNS, Filter, Match, Store, listed
from .turns import Place, asks, spread, together
from .verbs import past_forms

__all__ = [
    "STOP_WORDS",
    "Hit",
    "SqliteStore",
    "asks_recent",
    "bm25_floor",
    "cosine_parts",
    "elsewhere",
    "fts_query",
    "query_terms",
    "rank",
    "search",
    "shown",
    "speakers",
    "spread_order",
    "weights_for",
    "without_speakers",
]

#: A verb of the query is also searched for in its irregular past forms (index/verbs.py).
IRREGULAR: bool = True
#: At most this many distinct words of a query are searched for.
MAX_TERMS: Final = 32
#: Longer words are cut to this many characters.
MAX_TERM_CHARS: Final = 64

_WORD = lazy(r"\w+")

#: English words that carry no subject of their own (issue 25: a question's
#: "what", "did", "the" matched every memory and drowned its content words).
_STOP_TEXT: Final = """
a an the and or but nor if then than so as of to in on at by for with from about
into onto over under after before between through during without within upon what
which who whom whose when where why how whether is are was were be been being am do
does did done doing have has had having will would shall should can could may might
must ought i me my mine myself we us our ours ourselves you your yours yourself
yourselves he him his himself she her hers herself it its itself they them their
theirs themselves this that these those there here not no yes very too just also
only own same other such each few more most some any all both either neither one s t
d ll m re ve tell say said know think anything something someone somebody ever much
"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())


def query_terms(text: str) -> list[str]:
    """The words of a query worth searching for (issue 25): its content words.

    Words that carry no subject (STOP_WORDS: articles, pronouns, auxiliaries,
    question words, common prepositions) are left out, unless they are all
    the query has; a capitalised word after the first is a name and stays,
    and so does every word with a digit. The index stems both sides (porter).
    """
    words: list[str] = []
    for word in _WORD.findall(text):
        word = word[:MAX_TERM_CHARS]
        if any(ch.isalnum() for ch in word) and word not in words:
            words.append(word)
    content = [
        w
        for n, w in enumerate(words)
        if w.casefold() not in STOP_WORDS
        or any(ch.isdigit() for ch in w)
        or (n > 0 and w[:1].isupper() and len(w) > 1)
    ]
    if not content:
        return words[:MAX_TERMS]
    if IRREGULAR:
        content += past_forms(content)
    return content[:MAX_TERMS]


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression for the content words of ``text``, or None when it has
    no word at all."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


#: Words that say the question is about what is recent: only then does recency rank.
_ASKS_RECENT: Final = lazy(
    r"\b(?:latest|recent|recently|newest|last|current|currently|now|today|lately|"
    r"this (?:week|month|morning))\b",
    re.I,
)


def asks_recent(text: str) -> bool:
    """Whether a query asks for what is recent ("the latest decision", "what now")."""
    return _ASKS_RECENT.search(text) is not None


def weights_for(query: str, given: Weights | None, default: Weights) -> Weights:
    """The weights a search uses: those given to it as they are; else the index's, with
    recency only where the query asks for what is recent (issue 25: a question about a
    fact wants the memory that holds it, however old)."""
    if given is not None:
        return given
    if asks_recent(query):
        return default
    return Weights(default.text, 0.0, default.importance, default.access)


class Hit(Record):
    """One recalled memory with its score and the parts of it."""

    __slots__ = (
        "access_count",
        "agent",
        "approved",
        "chain",
        "content_hash",
        "importance",
        "origin",
        "parts",
        "score",
        "seq",
        "session",
        "source",
        "status",
        "superseded_by",
        "text",
        "tier",
        "tokens",
        "ts",
        "type",
    )
    seq: int
    type: str
    tier: str
    source: str
    ts: str
    importance: int
    status: str
    session: str | None
    content_hash: str
    text: str
    tokens: int
    access_count: int
    score: float
    parts: tuple[float, float, float, float]  # text, recency, importance, access
    origin: str | None  # the signed ``origin`` member; None before provenance
    approved: str | None  # the signed ``approved`` date, when a person approved it
    superseded_by: int | None  # the seq of the entry that replaced this one
    chain: str | None  # in a fleet (index/fleet_store.py): its chain's id; else None
    agent: str | None  # and that chain's agent

    def __init__(
        self,
        seq: int,
        type: str,
        tier: str,
        source: str,
        ts: str,
        importance: int,
        status: str,
        session: str | None,
        content_hash: str,
        text: str,
        tokens: int,
        access_count: int,
        score: float,
        parts: tuple[float, float, float, float],
        origin: str | None = None,
        approved: str | None = None,
        superseded_by: int | None = None,
        chain: str | None = None,
        agent: str | None = None,
    ) -> None:
        self.seq = seq
        self.type = type
        self.tier = tier
        self.source = source
        self.ts = ts
        self.importance = importance
        self.status = status
        self.session = session
        self.content_hash = content_hash
        self.text = text
        self.tokens = tokens
        self.access_count = access_count
        self.score = score
        self.parts = parts
        self.origin = origin
        self.approved = approved
        self.superseded_by = superseded_by
        self.chain = chain
        self.agent = agent

    @property
    def role(self) -> str:
        """What an agent is shown it as (workspace.provenance.role; the same table)."""
        if self.origin in ("tool", "quoted"):
            return "withheld"
        if self.origin in (None, "person") or self.approved:
            return "guidance"
        return "note"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {} if self.chain is None else {"agent": self.agent, "chain": self.chain}
        )
        return out | {
            "seq": self.seq,
            "type": self.type,
            "tier": self.tier,
            "source": self.source,
            "ts": self.ts,
            "importance": self.importance,
            "status": self.status,
            "session": self.session,
            "content": self.content_hash,
            "text": self.text,
            "tokens": self.tokens,
            "access_count": self.access_count,
            "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in zip(PARTS, self.parts, strict=True)},
            "origin": self.origin,
            "approved": self.approved,
            "superseded_by": self.superseded_by,
            "role": self.role,
        }


PARTS: Final = ("text", "recency", "importance", "access")

#: A memory a later one replaced (shown only with include_superseded) counts this much.
SUPERSEDED_FACTOR: Final = 0.5


def recency(created: int, now: int) -> float:
    """0.5 ** (age in days / 7); 1 for a memory from the future."""
    age = max(0, now - created) / DAY_US
    return float(0.5 ** (age / 7))


def score_row(
    row: tuple[Any, ...],
    text_part: float,
    *,
    now: int,
    max_access: int,
    weights: Weights,
) -> Hit:
    """A Hit for a row of index/store.py COLUMNS, scored."""
    rec = recency(row[12], now)
    imp = row[5] / 100
    acc = row[11] / max_access if max_access > 0 else 0.0
    score = (
        weights.text * text_part
        + weights.recency * rec
        + weights.importance * imp
        + weights.access * acc
    )
    if row[15] is not None:
        score *= SUPERSEDED_FACTOR  # its replacement ranks before it (issue 26)
    parts = (text_part, rec, imp, acc)
    seq, kind, tier, source, ts, importance, status, session, content_hash, text = row[:10]
    return Hit(
        seq,
        kind,
        tier,
        source,
        ts,
        importance,
        status,
        session,
        content_hash,
        text,
        row[10],
        row[11],
        score,
        parts,
        row[13],
        row[14],
        row[15],
    )


#: Names are taken from this many best matches, and what they find counts this much.
LINK_FROM: Final = 3
LINK_WEIGHT: Final = 0.3
#: What the members of a kind the query names (index/kinds.py) find counts this much.
KIND_WEIGHT: float = 0.5
#: A name: a capitalised word (not the first of its sentence, not before a colon).
_NAME: Final = lazy(r"(?<=[^.!?:\s] )[A-Z][a-z]{2,}\b(?!:)")


def _link_terms(query: str, texts: list[str]) -> list[str]:
    """The names in ``texts`` that the query does not hold (at most eight)."""
    asked = {t.casefold() for t in _WORD.findall(query)}
    names: list[str] = []
    for text in texts:
        for name in _NAME.findall(text):
            folded = name.casefold()
            if folded not in asked and folded not in STOP_WORDS and name not in names:
                names.append(name)
    return names[:8]


#: The bm25 part of a match is its bm25 over the larger of the best match's and a
#: floor: what a memory of average length holding one word in a REFERENCE_SHARE of the
#: memories scores (that word's idf; less in a store too small for such a word). A word
#: in half the memories (a speaker's name before every turn of theirs) has an idf near
#: 0: the turns that match only it ("Hana: Fair.") once got a part of 1 as the best
#: matches, and outranked what the vectors, the kind words or the time found.
REFERENCE_SHARE: float = 0.1


def bm25_floor(index: Index, table: str = "memories_fts") -> float:
    """The bm25 below which the best match of ``table`` (memories_fts, or the workspace's
    ws_fts) is not taken as a full match (see REFERENCE_SHARE)."""
    from .topk import fts_row_stats, idf

    rows, _ = fts_row_stats(index.conn, table)
    if rows <= 0 or REFERENCE_SHARE <= 0:
        return 0.0
    return min(idf(rows, REFERENCE_SHARE * rows), idf(rows, 1))


def _normalised(found: list[tuple[tuple[Any, ...], float]], floor: float = 0.0) -> dict[int, float]:
    """seq -> bm25 / the larger of the best bm25 of ``found`` and ``floor`` (0..1)."""
    best = max(found[0][1] if found else 0.0, floor)
    if best <= 0:
        best = 1.0
    return {row[0]: max(b, 0.0) / best for row, b in found}


#: Semantic recall (index/vectors.py, when on): the memories nearest the query by cosine
#: join the candidates, and the text part of the score becomes
#: ``(1 - SEMANTIC_SHARE) * bm25 part + SEMANTIC_SHARE * cosine part``, the cosine part
#: being ``(cos - (best cos - COS_SPAN)) / COS_SPAN``, at least 0: the nearest memory gets
#: 1, one COS_SPAN further or more gets 0 (and, without a word of the query, is left out).
#: Both tuned on the tune part of benchmarks/recall.py (``--tune``), never on held-out.
SEMANTIC_SHARE: float = 0.7
COS_SPAN: float = 0.05
#: At least this many nearest memories are looked at.
VEC_POOL: Final = 50


def semantic_parts(index: Index, query: str, k: int, *, what: str = "memories") -> dict[int, float]:
    """id -> cosine part (0..1) of the ``k`` rows nearest ``query`` (memory seqs, or
    workspace entry ids with ``what="entries"``); {} when recall is lexical.

    Texts not yet embedded are embedded first when there are at most
    ``index.catch_up`` of them; with more, the result is {} (lexical) until
    ``reindex`` or the maintain job embeds them (``index.backlog``).
    """
    if not index.semantic:
        return {}
    from . import vectors

    index.catch_up_vectors()
    if index.backlog:
        return {}
    cached = index.query_vector
    if cached is None or cached[0] != query:
        said = without_speakers(SqliteStore(index), query)
        cached = index.query_vector = (query, vectors.get_embedder().query(said))
    return cosine_parts(vectors.nearest(index.conn, index.vector_cache, cached[1], k, what=what))


def cosine_parts(near: list[tuple[int, float]]) -> dict[int, float]:
    """id -> cosine part (0..1) of the nearest rows, (id, cosine) best first: 1 for the
    nearest, 0 from COS_SPAN further on (those are left out)."""
    if not near:
        return {}
    floor = near[0][1] - COS_SPAN
    return {i: (c - floor) / COS_SPAN for i, c in near if c > floor}


#: A capitalised word of a query (a name, or the question's first word), with its
#: possessive.
_CAPITAL: Final = lazy(r"\b([A-Z][a-z]{1,30})(?:'s|’s)?\b")


def speakers(store: Store, query: str) -> list[str]:
    """The names in ``query`` that begin a memory ("Hana: I signed up for a class..."):
    the speakers of a conversation's turns (issue 25)."""
    named = _named(query)
    return store.leading(named) if named else []


def without_speakers(store: Store, query: str) -> str:
    """``query`` as it is embedded: without the names of speakers (``speakers``). A turn
    is embedded with its speaker's name before it, and a short turn is mostly that name:
    "Which events did Hana attend?" was nearest "Hana: Aww." and "Hana: Fair.", and "What
    is the name of Diego's cat?" nearest Diego's turns, not Hana's about her cat (the
    words say what the question is about; bm25 and the kind words weigh the name). The
    query is kept whole when nothing of substance would be left."""
    names = speakers(store, query)
    if not names:
        return query
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in names) + r")(?:'s|’s)?\b"
    left = re.sub(r"\s+", " ", re.sub(pattern, " ", query)).strip()
    return (
        left
        if query_terms(left) and any(w.casefold() not in STOP_WORDS for w in _WORD.findall(left))
        else query
    )


def fuse(lexical: float, cosine: float | None) -> float:
    """The text part of a candidate from its bm25 part and, with vectors, its cosine part."""
    if cosine is None:
        return lexical
    return (1.0 - SEMANTIC_SHARE) * lexical + SEMANTIC_SHARE * cosine


#: Time (issue 25, index/timeref.py): when a query names days ("on May 2, 2023", "last
#: week"), a memory gains TIME_WEIGHT x its time part in its text part: 1 when the days
#: its text speaks of lie within those asked, 0.5 when they only overlap them or when it
#: was said on one of them, else 0. Memories with a time part join the candidates.
#: Tuned on the tune part of benchmarks/recall.py (``--tune``), never on held-out.
TIME_WEIGHT: float = 2.0


def read_times(index: Index) -> int:
    """Read the time the memories a rebuild left unread speak of (index/timeref.py): only
    those whose text FTS5 finds a word of time in; then all are marked read. Returns how
    many hold one."""
    from datetime import date

    from .sync import write_transaction
    from .timeref import FTS_TRIGGERS, spoken_of

    conn = index.conn
    if conn.execute("SELECT 1 FROM memories WHERE about_read = 0 LIMIT 1").fetchone() is None:
        return 0
    rows = conn.execute(
        "SELECT seq, content, said FROM memories WHERE about_read = 0 AND content IS NOT NULL "
        "AND seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)",
        (FTS_TRIGGERS,),
    ).fetchall()
    found = []
    for seq, text, said in rows:
        days = spoken_of(text, date.fromisoformat(said))
        if days is not None:
            found.append((days[0].isoformat(), days[1].isoformat(), seq))
    with write_transaction(conn):
        conn.executemany("UPDATE memories SET about_from = ?, about_to = ? WHERE seq = ?", found)
        conn.execute("UPDATE memories SET about_read = 1 WHERE about_read = 0")
    return len(found)


def time_parts(
    store: Store, query: str, pool: int, where: Filter
) -> tuple[dict[int, float], list[tuple[Any, ...]]]:
    """id -> time part of the memories that speak of (or were said on) the days ``query``
    asks about, and the rows of the ``pool`` newest of them; ({}, []) when the query
    names no day."""
    from datetime import UTC, datetime

    from .timeref import asked_about

    today = datetime.fromtimestamp(store.now() / 1_000_000, UTC).date()
    asked = asked_about(query, today)
    if asked is None:
        return {}, []
    lo, hi = asked[0].isoformat(), asked[1].isoformat()
    parts: dict[int, float] = {}
    for seq, a, b, said in store.dated(lo, hi, pool):
        if a is not None and a <= hi and b >= lo:
            parts[seq] = 1.0 if lo <= a and b <= hi else 0.5
        elif said is not None and lo <= said <= hi:
            parts[seq] = 0.5
    return parts, store.rows(list(parts), where)


def once(hits: list[Hit], store: Store) -> list[Hit]:
    """``hits`` with each text once: the best ranked of memories with the same content
    (the same words added twice, in two sessions) stands for all of them; in a fleet,
    once per chain (``store.chain_of``)."""
    seen: set[tuple[int, str]] = set()
    out = []
    for h in hits:
        key = (store.chain_of(h.seq), h.content_hash)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def text_parts(
    store: Store,
    query: str,
    terms: list[str],
    pool: int,
    where: Filter,
) -> tuple[list[tuple[Any, ...]], dict[int, float], int]:
    """The candidates for ``query`` that pass ``where`` (rows of index/store.py COLUMNS),
    the text part of each (id -> part), and how many bm25 matches were looked at (fewer
    than ``pool``: there are no more). One ranking for every door (search, context
    --query, the prompt hook, MCP, the API; issue 25):

    the ``pool`` best bm25 matches of ``terms`` (``query_terms(query)``), the
    memories their names link to (multi-hop), with vectors the nearest memories (fused),
    and, when the query names days, the memories that speak of them.
    """
    found, seen = store.matches(terms, pool, where)
    rows = {row[0]: row for row, _ in found}
    floor = store.floor()
    parts = _normalised(found, floor)

    def widened(extra: list[str], weight: float) -> None:
        """The query's words and ``extra`` searched together: what that finds joins the
        candidates, its text part at least ``weight`` x its normalised bm25 there."""
        nonlocal parts
        more, _ = store.matches(terms + extra, pool, where)
        second = _normalised(more, floor)
        for row, _ in more:
            rows.setdefault(row[0], row)
        parts = {seq: max(parts.get(seq, 0.0), weight * second.get(seq, 0.0)) for seq in rows}

    linked = _link_terms(query, [row[9] for row, _ in found[:LINK_FROM]])
    if linked and LINK_WEIGHT > 0:
        # multi-hop (issue 25): the names the best hits mention ("my sister Clara") find
        # the memories about them ("Clara got engaged"), ranked below what matched (and
        # weighed by how well it matched: names from matches of a word in most memories
        # lend next to nothing)
        widened(linked, LINK_WEIGHT * max(parts.values(), default=0.0))
    kinds = members(terms)[: max(0, MAX_TERMS - len(terms))]
    if kinds and KIND_WEIGHT > 0:
        # a kind in the query ("what instrument") finds the memories that name one of its
        # members ("double bass"), ranked below what matched (index/kinds.py)
        widened(kinds, KIND_WEIGHT)
    near = store.semantic(query, max(VEC_POOL, pool))
    if near:
        for row in store.rows([s for s in near if s not in rows], where):
            rows[row[0]] = row
        parts = {seq: fuse(parts.get(seq, 0.0), near.get(seq, 0.0)) for seq in rows}
    when, dated = time_parts(store, query, max(VEC_POOL, pool), where)
    if when:
        for row in dated:
            rows.setdefault(row[0], row)
        parts = {s: parts.get(s, 0.0) + TIME_WEIGHT * when.get(s, 0.0) for s in rows}
    parts = {s: parts.get(s, 0.0) for s in rows}
    neighbours(store, rows, parts, where)
    names = _named(query) if SPEAKER_FACTOR < 1 else []
    if names and any(_LABEL.match(row[9] or "") for row in rows.values()):
        for seq in elsewhere(store, names, {s: row[7] for s, row in rows.items()}):
            parts[seq] *= SPEAKER_FACTOR
    return list(rows.values()), parts, seen


#: A question that names a speaker ("What did Ravi name his dog?") is about the
#: conversations that speaker takes part in: a candidate none of the named speakers has a
#: turn ("Ravi: ...") near keeps SPEAKER_FACTOR of its text part. Several conversations in
#: one store share their words ("promotion", "dog"), and the embedded query leaves the
#: names out (``without_speakers``): the turns of the others came first. Near: in the same
#: session, at most SPEAKER_WINDOW memories away by seq (a conversation is added in
#: order). In a store of one conversation every turn is near one of each speaker, and
#: nothing changes. Chosen on the tuning parts of benchmarks/recall.py added to one store
#: (session 49): 0.5 and 0.2 gained alike, 0.2 a little more.
SPEAKER_FACTOR: float = 0.2
SPEAKER_WINDOW: Final = 10
#: A turn of a conversation: its speaker's name and a colon ("Ravi: ..."). Only when a
#: candidate is one are the speakers looked for (a store of notes pays nothing).
_LABEL: Final = lazy(r"\w+:")


def _named(query: str) -> list[str]:
    """The capitalised words of ``query`` that are not stop words: the names it may hold
    (``elsewhere`` keeps those that are speakers of turns near the candidates; unlike
    ``speakers`` no index is read: a name's first-word match reads every row that holds
    the word, 2.6 ms for a common word at 100k)."""
    return list(dict.fromkeys(n for n in _CAPITAL.findall(query) if n.casefold() not in STOP_WORDS))


def elsewhere(store: Store, names: list[str], sessions: dict[int, Any]) -> set[int]:
    """The seqs of ``sessions`` (seq -> its session) with no turn of one of ``names`` (a
    memory that begins with the name, any case, and a colon) in the same session within
    SPEAKER_WINDOW by seq; none when no candidate has such a turn near it."""
    if not sessions:
        return set()
    wanted = {n.casefold() for n in names}
    spans: list[list[int]] = []
    for seq in sorted(sessions):
        lo, hi = seq - SPEAKER_WINDOW, seq + SPEAKER_WINDOW
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = hi
        else:
            spans.append([lo, hi])
    spoken: dict[Any, list[int]] = {}
    for lo, hi in spans:
        for seq, session, head in store.heads(lo, hi):
            label = _LABEL.match(head)
            if label is not None and label.group()[:-1].casefold() in wanted:
                spoken.setdefault(session, []).append(seq)
    if not spoken:  # no turn of theirs among the candidates ("Postgres runs on...")
        return set()
    return {
        seq
        for seq, session in sessions.items()
        if not any(abs(seq - s) <= SPEAKER_WINDOW for s in spoken.get(session, ()))
    }


#: Neighbours (issue 25): in a conversation the answer is often the turn after the one the
#: query matches ("What's its name?" / "She's called Pixel"). Each of the NEIGHBOURS_OF
#: best candidates that asks (its text ends with "?") hands the memory after it by seq,
#: when the two are turns of one conversation (index/turns.py), NEXT_WEIGHT of its text
#: part, and that memory joins the candidates (and a statement followed by a question
#: hands the answer after it CHAIN_WEIGHT). A memory that asks keeps ASKED_FACTOR of
#: its own part: it holds no answer. Tuned on the tune part and the hand-written tuning
#: parts of benchmarks/recall.py (``--tune-neighbours``), never on held-out. The turn
#: before a match, and the turn after a statement, are not pulled in: the tuning gained
#: 0.003 from the one and lost from the other, and both pull an unrelated memory into
#: every search of a list of facts (specs/INDEX.md 3.3).
NEIGHBOURS_OF: Final = 10
NEXT_WEIGHT: float = 0.5
ASKED_FACTOR: float = 0.4
#: A statement among the best candidates followed by a question ("my car broke down" /
#: "what happened?") hands the answer after that question this share of its text part.
CHAIN_WEIGHT: float = 0.3


def _after(store: Store, seqs: list[int]) -> dict[int, tuple[int, Any, str | None]]:
    """id -> (the next memory's id, whether the two are turns of one conversation, the
    next memory's text) for each of ``seqs`` that has a next memory."""
    pairs = store.after(seqs)
    return {r[0]: (r[4], together(r[1:4], r[5:8]), r[8]) for r in pairs}


def neighbours(
    store: Store,
    rows: dict[int, tuple[Any, ...]],
    parts: dict[int, float],
    where: Filter,
) -> None:
    """The replies to the best candidates join the candidates, in place (see NEXT_WEIGHT
    and CHAIN_WEIGHT); every candidate that asks keeps ASKED_FACTOR of its own part."""
    own = dict(parts)
    best = sorted((s for s in own if own[s] > 0), key=lambda s: -own[s])[:NEIGHBOURS_OF]
    for seq in parts:
        if asks(rows[seq][9] or ""):
            parts[seq] = own[seq] * ASKED_FACTOR
    if not best or (NEXT_WEIGHT <= 0 and CHAIN_WEIGHT <= 0):
        return
    gains: dict[int, float] = {}

    def gain(seq: int, value: float) -> None:
        if value > 0:
            gains[seq] = max(gains.get(seq, 0.0), value)

    questions = [s for s in best if asks(rows[s][9] or "")]
    for seq, (reply, joined, _) in _after(store, questions).items():
        if joined:
            gain(reply, NEXT_WEIGHT * own[seq])
    # a statement, a question about it, the answer: "my car broke down" / "what
    # happened?" / "the clutch"
    statements = [s for s in best if s not in questions]
    asked_next = {
        seq: follow
        for seq, (follow, joined, text) in _after(store, statements).items()
        if joined and text is not None and asks(text)
    }
    for follow, (reply, joined, _) in _after(store, list(asked_next.values())).items():
        if joined:
            for seq in (s for s, f in asked_next.items() if f == follow):
                gain(reply, CHAIN_WEIGHT * own[seq])
    new = [s for s in gains if s not in rows]
    rows.update((r[0], r) for r in store.rows(new, where))
    for reply, value in gains.items():
        if reply in rows:
            parts[reply] = max(parts.get(reply, 0.0), value)


def shown(store: Store, page: list[Hit]) -> list[Hit]:
    """A page of hits in the order to show them: the best turn of each session first
    (``spread_order``)."""
    return [page[i] for i in spread_order(store, [h.seq for h in page])]


def spread_order(store: Store, seqs: list[int | None]) -> list[int]:
    """index/turns.py ``spread`` of a page of results, each a chain memory (its seq) or
    not (None: a workspace entry, which names no session). A memory without a session
    counts as a turn there (its seq handed on) when its text opens with a speaker's
    label ("Ana: ..."): a list of facts keeps its rank order. The page holds the same
    results: what ranks in the first ``limit`` is unchanged, and each page of a paged
    search is reordered on its own."""
    if len(seqs) < 3:
        return list(range(len(seqs)))
    places: dict[int, Place] = {}
    turns: set[int] = set()
    for seq, session, said, created, head in store.places([s for s in seqs if s is not None]):
        places[seq] = (session, said, created)
        if session is None and head is not None and _LABEL.match(head):
            turns.add(seq)
    loose = (None, None, 0)
    return spread(
        [loose if s is None else places.get(s, loose) for s in seqs],
        [s if s in turns else None for s in seqs],
    )


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
        return semantic_parts(self.index, query, k)

    def leading(self, names: list[str]) -> list[str]:
        first = "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1"
        conn = self.index.conn
        return [n for n in names if conn.execute(first, (f'^"{n}"',)).fetchone() is not None]

    def dated(self, lo: str, hi: str, pool: int) -> list[tuple[int, Any, Any, Any]]:
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


def search(index: Index, query: str, **given: Any) -> list[Hit]:
    """The best memories of memory.db for ``query``: ``rank`` over its SqliteStore, with
    rank's keywords (limit, max_tokens, filters, weights, record, offset)."""
    return rank(SqliteStore(index), query, **given)


def rank(
    store: Store,
    query: str,
    *,
    limit: int = 10,
    max_tokens: int | None = None,
    type_: str | None = None,
    tier: str | None = None,
    include_archived: bool = False,
    include_superseded: bool = False,
    weights: Weights | None = None,
    record: bool = True,
    source: str | None = None,
    since: int | None = None,
    until: int | None = None,
    offset: int = 0,
) -> list[Hit]:
    """The best memories of ``store`` for ``query``, within ``limit`` and ``max_tokens``,
    after the first ``offset`` (paging); ``source`` and the creation time (``since`` <=
    created < ``until``, µs) filter.

    Candidates are the best matches by bm25 (at least 20, twice ``limit``),
    ranked by the hybrid score and packed into the budget; when filters or
    the budget leave fewer than ``limit`` and more matches exist, the pool
    grows fourfold and ranking starts again. Access statistics of the
    memories returned are updated (unless ``record`` is False).
    """
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    w = weights_for(query, weights, store.weights)
    now = store.now()
    where = Filter(
        store.cutoff(now),
        type_=type_,
        tier=tier,
        include_archived=include_archived,
        include_superseded=include_superseded,
        source=source,
        since=since,
        until=until,
    )
    want = limit + max(offset, 0)
    top_access = store.max_access()
    pool = max(20, 2 * want)
    while True:
        found, parts, seen = text_parts(store, query, terms, pool, where)
        hits = [
            score_row(row, parts[row[0]], now=now, max_access=top_access, weights=w)
            for row in found
        ]
        hits.sort(key=lambda h: (-h.score, -h.seq))
        chosen = pack(once(hits, store), lambda h: h.tokens, budget=max_tokens, limit=want)
        if len(chosen) >= want or seen < pool:
            break
        pool *= 4
    chosen = shown(store, chosen[max(offset, 0) :])
    if record and chosen:
        store.record_access(h.seq for h in chosen)
    return chosen

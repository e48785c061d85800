"""Recall: hybrid ranking, filters, token budgets, access statistics, hostile queries."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers.index import DAY, T0, Clock, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.index.budget import pack
from memory_chain.index.db import Index
from memory_chain.index.gc import collect
from memory_chain.index.query import bm25_floor, fts_query, query_terms, recency, search
from memory_chain.index.settings import Weights

MINUTE = 60 * 1_000_000


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def chain(data_dir: Path, clock: Clock) -> Ledger:
    """Memories about deploys at different ages and importances (seq 1..5)."""
    led = Ledger.init(data_dir, name="search-agent", clock=clock)
    led.add(NewEntry(content=b"Deploys go out on Tuesdays", type="fact", importance=60))
    clock.t += 10 * DAY
    led.add(NewEntry(content=b"Never deploy on Fridays", type="decision", importance=90))
    led.add(NewEntry(content=b"The cat is called Miso", importance=50))
    led.add(NewEntry(content=b"deploy deploy deploy checklist", importance=10))
    led.add(NewEntry(content=b"A temporary deploy token", tier="ephemeral", importance=30))
    clock.t += DAY // 2
    return led


def _open(led: Ledger, clock: Clock) -> Index:
    return Index.open(led.layout.root, clock=clock)


def test_search_ranks_by_the_hybrid_score(chain: Ledger, clock: Clock) -> None:
    """Results are the matching memories ordered by 0.4 text + 0.3 recency + 0.2 importance
    + 0.1 access, and each score is that sum of its parts (a query that asks for what is
    recent: recency counts)."""
    with _open(chain, clock) as index:
        hits = search(index, "latest deploy", limit=10, record=False)
    assert {1, 2, 4, 5} == {h.seq for h in hits}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        text, rec, imp, acc = h.parts
        assert math.isclose(h.score, 0.4 * text + 0.3 * rec + 0.2 * imp + 0.1 * acc)
        assert imp == {1: 0.6, 2: 0.9, 4: 0.1, 5: 0.3}[h.seq]
    # bm25 normalised to the best match, or to the floor when the best is below it: in
    # these five memories "deploy" is in four, and weighs next to nothing
    with _open(chain, clock) as index:
        (best,) = index.conn.execute(
            "SELECT -bm25(memories_fts) FROM memories_fts "
            'WHERE memories_fts MATCH \'"latest" OR "deploy"\' ORDER BY rank LIMIT 1'
        ).fetchone()
        floor = bm25_floor(index)
    assert best < floor
    assert max(h.parts[0] for h in hits) == pytest.approx(best / floor)


def test_recency_has_a_seven_day_half_life() -> None:
    """recency = 0.5 at 7 days, 0.25 at 14, 1 now."""
    assert [1.0, 0.5, 0.25] == [recency(0, 0), recency(0, 7 * DAY), recency(0, 14 * DAY)]


def test_weights_change_the_order(chain: Ledger, clock: Clock) -> None:
    """Weights are configurable: importance only puts the most important first."""
    with _open(chain, clock) as index:
        by_imp = search(index, "deploy", weights=Weights(0, 0, 1, 0), record=False)
        by_text = search(index, "deploy", weights=Weights(1, 0, 0, 0), record=False)
    assert 2 == by_imp[0].seq
    assert 4 == by_text[0].seq  # "deploy" four times


def test_no_match_returns_nothing(chain: Ledger, clock: Clock) -> None:
    """A query that matches nothing returns nothing, not recent filler."""
    with _open(chain, clock) as index:
        assert [] == search(index, "zeppelin")
        assert [] == search(index, "")


def test_filters(chain: Ledger, clock: Clock) -> None:
    """--type and --tier restrict the candidates; --limit caps the count."""
    with _open(chain, clock) as index:
        assert [2] == [h.seq for h in search(index, "deploy", type_="decision")]
        assert [5] == [h.seq for h in search(index, "deploy", tier="ephemeral")]
        assert 2 == len(search(index, "deploy", limit=2))


def test_filters_look_past_the_first_pool(data_dir: Path) -> None:
    """A rare type among many matches is still found (the candidate pool grows)."""
    led = Ledger.init(data_dir, name="pool")
    led.add_batch([NewEntry(content=f"common word number {i}".encode()) for i in range(120)])
    led.add(NewEntry(content=b"common word in a lesson", type="lesson", importance=0))
    with Index.open(data_dir) as index:
        assert ["lesson"] == [h.type for h in search(index, "common word", type_="lesson")]


def test_archived_expired_and_redacted_are_hidden(chain: Ledger, clock: Clock) -> None:
    """Archived and expired memories appear only with include_archived; redacted never."""
    redact(chain, 4, "noise")
    clock.t += 40 * DAY
    with _open(chain, clock) as index:
        collect(index)
        statuses = dict(index.conn.execute("SELECT seq, status FROM memories").fetchall())
        assert {1: "archived", 3: "archived", 4: "redacted", 5: "expired"} == {
            k: v for k, v in statuses.items() if v != "active"
        }
        assert [2] == [h.seq for h in search(index, "deploy")]
        assert {1, 2, 5} == {h.seq for h in search(index, "deploy", include_archived=True)}


def test_ephemeral_past_its_lifetime_is_hidden_before_gc(chain: Ledger, clock: Clock) -> None:
    """An ephemeral memory older than its lifetime is not recalled even if GC has not run."""
    with _open(chain, clock) as index:
        assert [5] == [h.seq for h in search(index, "temporary token")]
        clock.t += DAY // 2  # 24 hours after it was made
        assert [] == search(index, "temporary token")
        assert 1 == index.counts()["expired"]


def test_access_statistics_are_updated(chain: Ledger, clock: Clock) -> None:
    """Returned memories get one access each (written at close), kept in usage by entry hash."""
    with _open(chain, clock) as index:
        returned = [h.seq for h in search(index, "Tuesdays")]
        search(index, "Tuesdays")
    with _open(chain, clock) as index:
        rows = index.conn.execute(
            "SELECT m.seq, m.access_count, u.access_count, m.last_access FROM memories m "
            "JOIN usage u ON u.hash = m.hash"
        ).fetchall()
        assert [(1, 2, 2, clock.t)] == rows
        assert [1] == returned
        assert 1.0 == search(index, "Tuesdays", record=False)[0].parts[3]


def test_search_leaves_the_chain_byte_identical(chain: Ledger, clock: Clock) -> None:
    """Search writes only memory.db."""
    before = snapshot(chain.layout.root)
    with _open(chain, clock) as index:
        search(index, "deploy")
    assert before == snapshot(chain.layout.root)


# -- budget packing ------------------------------------------------------------------


def test_budget_skips_what_does_not_fit_and_keeps_filling(data_dir: Path) -> None:
    """An item over the remaining budget is skipped; smaller ones after it are still taken."""
    led = Ledger.init(data_dir, name="budget")
    led.add(NewEntry(content=b"apple " + b"x" * 400, importance=100))  # ~102 tokens, best
    led.add(NewEntry(content=b"apple short one", importance=50))  # 4 tokens
    led.add(NewEntry(content=b"apple tiny", importance=0))  # 3 tokens
    with Index.open(data_dir) as index:
        hits = search(index, "apple", max_tokens=10, weights=Weights(0, 0, 1, 0))
    assert [2, 3] == [h.seq for h in hits]
    assert sum(h.tokens for h in hits) <= 10


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 60), max_size=40),
    st.integers(0, 200),
    st.none() | st.integers(1, 20),
)
def test_pack_never_exceeds_the_budget_and_is_greedy_maximal(
    costs: list[int], budget: int, limit: int | None
) -> None:
    """Packing stays within the budget and the limit, keeps the order, and every item left out
    did not fit when its turn came (or came after the limit was reached)."""
    items = list(enumerate(costs))
    taken = pack(items, lambda it: it[1], budget=budget, limit=limit)
    assert sum(c for _, c in taken) <= budget
    assert limit is None or len(taken) <= limit
    assert taken == [it for it in items if it in taken]  # order kept
    used = 0
    for it in items:
        if limit is not None and len([t for t in taken if t[0] < it[0]]) >= limit:
            assert it not in taken
            continue
        if it in taken:
            used += it[1]
        else:
            assert it[1] > budget - used  # did not fit at its turn
    left = budget - sum(c for _, c in taken)
    if limit is None or len(taken) < limit:
        assert all(c > left for i, c in items if (i, c) not in taken)


# -- hostile queries -------------------------------------------------------------------

HOSTILE = [
    "",
    " ",
    '"',
    '""',
    "'",
    "a AND",
    "OR OR OR",
    "NOT",
    "NEAR(a b, 3)",
    "content: x",
    "{content}: x",
    "x*",
    "*",
    "^x",
    "(",
    ")",
    "a + b - c",
    "-- ; DROP TABLE memories",
    "\x00",
    "\ud800",
    "☕ 🎉",
    "日本語のテキスト",
    "Ωμέγα",
    "x" * 100_000,
    " ".join(["w"] * 5000),
    "deploy\ndeploy\ttuesday",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_do_not_error(chain: Ledger, clock: Clock, query: str) -> None:
    """Quotes, FTS operators, column filters, control characters, unicode, huge and empty
    strings are searched as plain words, without an error."""
    with _open(chain, clock) as index:
        hits = search(index, query)
    assert all(h.status == "active" for h in hits)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_string_is_a_valid_query(query: str) -> None:
    """For any string, the FTS expression built from it is None or valid FTS5 syntax."""
    import sqlite3

    match = fts_query(query)
    if match is None:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('some text')")
    conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_recency_counts_only_when_the_query_asks_for_it(chain: Ledger, clock: Clock) -> None:
    """Issue 25: a question about a fact wants the memory that holds it, however old."""
    with _open(chain, clock) as index:
        plain = search(index, "deploy", limit=10, record=False)
        recent = search(index, "latest deploy", limit=10, record=False)
    assert all(
        math.isclose(h.score, 0.4 * h.parts[0] + 0.2 * h.parts[2] + 0.1 * h.parts[3]) for h in plain
    )
    assert any(h.parts[1] > 0 for h in recent)


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("What did Ana say about the move?", ["Ana", "move"]),
        ("when is the release in May", ["release", "May"]),
        ("what is it", ["what", "is", "it"]),  # stop words only: searched as they are
        ("Where does Sam work now?", ["Sam", "work", "now"]),
        ("the 2 tests", ["2", "tests"]),
    ],
)
def test_a_query_is_searched_by_its_content_words(query: str, terms: list[str]) -> None:
    assert terms == query_terms(query)


def test_the_recall_benchmark_is_big_and_answerable() -> None:
    """Issue 25's own benchmark: >= 1,000 questions over five kinds, in two parts that
    share no name, each question's evidence turns present in its conversation."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "corpora"))
    from recall_gen import KINDS, conversations

    parts = {p: conversations(p) for p in ("tune", "held-out")}
    questions = [q for convs in parts.values() for c in convs for q in c.questions]
    assert len(questions) >= 1000
    assert {q.kind for q in questions} == set(KINDS)
    for convs in parts.values():
        for c in convs:
            ids = {t.id for t in c.turns}
            assert all(set(q.evidence) <= ids for q in c.questions)
    speakers = {p: {t.speaker for c in convs for t in c.turns} for p, convs in parts.items()}
    assert not speakers["tune"] & speakers["held-out"]


def test_every_door_gates_recency_the_same_way(chain: Ledger, clock: Clock) -> None:
    """`memory-chain search` goes through workspace.recall, which resolves the weights
    itself: the same rule must hold there (weights given are used as given)."""
    from memory_chain.index.settings import Weights
    from memory_chain.workspace.recall import search as recall

    with _open(chain, clock) as index:
        plain = recall(index, None, "deploy", limit=10)
        recent = recall(index, None, "what is the latest on deploys", limit=10)
        given = recall(index, None, "deploy", limit=10, weights=Weights(0.4, 0.3, 0.2, 0.1))
    assert plain and all(f.chain is not None for f in plain)
    assert all(
        math.isclose(
            f.score, 0.4 * f.chain.parts[0] + 0.2 * f.chain.parts[2] + 0.1 * f.chain.parts[3]
        )
        for f in plain
        if f.chain is not None
    )
    assert any(f.chain is not None and f.chain.parts[1] > 0 for f in recent)
    assert any(
        f.chain is not None
        and not math.isclose(
            f.score, 0.4 * f.chain.parts[0] + 0.2 * f.chain.parts[2] + 0.1 * f.chain.parts[3]
        )
        for f in given
    )


def test_filters_and_paging_reach_every_search(chain: Ledger, clock: Clock) -> None:
    """Issue 25: source, a date range and paging, in the chain's search and the merged one."""
    from datetime import UTC, datetime, timedelta

    from memory_chain.workspace.recall import search as recall

    first_day = datetime.fromtimestamp(T0 / 1e6, tz=UTC).date()
    with _open(chain, clock) as index:
        every = search(index, "deploy", limit=10, record=False)
        assert [h.seq for h in search(index, "deploy", limit=10, record=False, offset=1)] == [
            h.seq for h in every[1:]
        ]
        assert [] == search(index, "deploy", limit=10, record=False, source="auto")
        assert len(every) == len(search(index, "deploy", limit=10, record=False, source="manual"))
        old = recall(index, None, "deploy", limit=10, until=first_day)
        new = recall(index, None, "deploy", limit=10, since=first_day + timedelta(days=1))
    assert {f.chain.seq for f in old if f.chain} == {1}
    assert {f.chain.seq for f in new if f.chain} == {2, 4, 5}


def test_a_name_in_the_best_match_finds_what_it_links_to(data_dir: Path, clock: Clock) -> None:
    """Multi-hop (issue 25): the engagement shares no word with the question; the sister's
    name, found in the best match, finds it, ranked below the direct match."""
    led = Ledger.init(data_dir, name="links", clock=clock)
    for text in (
        "Ana: My sister Clara lives in Lisbon now",
        "Ben: Big news, Clara got engaged to Sam over the weekend",
        "Ben: The weather turned cold again",
    ):
        led.add(NewEntry(content=text.encode()))
    with Index.open(data_dir, clock=clock) as index:
        hits = search(index, "Who is going to marry Ana's sister?", limit=10, record=False)
    texts = [h.text for h in hits]
    # the engagement holds no word of the question: only the name links it
    assert texts == [
        "Ana: My sister Clara lives in Lisbon now",
        "Ben: Big news, Clara got engaged to Sam over the weekend",
    ]


def test_a_text_added_twice_is_found_once(ledger: Ledger, data_dir: Path) -> None:
    """The same words in two sessions are one result (the newer), not two slots of ten."""
    ledger.add_batch(
        [
            NewEntry(content=b"Deploys go out on Tuesdays", meta={"session": "a"}),
            NewEntry(content=b"Deploys are frozen in December", meta={"session": "a"}),
            NewEntry(content=b"Deploys go out on Tuesdays", meta={"session": "b"}),
        ]
    )
    ledger.close()
    with Index.open(data_dir) as index:
        hits = search(index, "deploys", limit=10, record=False)
    assert sorted(h.seq for h in hits) == [2, 3]


def test_the_recall_benchmark_as_measured() -> None:
    """benchmarks/recall.py's held-out part, lexical, at the figures it gave when each
    text was returned once (turn recall@10 0.872, session recall@5 0.928; raw bm25 0.586 /
    0.752; the questions that name a day came with time fields; the neighbours left them
    unchanged: its turns ask nothing): a change that lowers them is a regression, one
    that raises them was tuned on them and must say so in benchmarks/README.md."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from recall import run

    ours, raw = run("held-out")
    _, turn, session = ours.row("all")
    _, raw_turn, raw_session = raw.row("all")
    assert turn >= 0.87 and session >= 0.925
    assert turn > raw_turn and session > raw_session


def test_memories_without_a_session_are_neighbours_only_in_one_sitting(
    data_dir: Path, clock: Clock
) -> None:
    """Turns added without a session (a conversation added with ``memory-chain add``, one
    turn at a time) are neighbours when added within a minute of each other; the same
    words added five minutes apart are not."""
    led = Ledger.init(data_dir, name="sitting", clock=clock)
    led.add(NewEntry(content=b"Ben: What's the cat's name?"))
    clock.t += 2 * 1_000_000
    led.add(NewEntry(content=b"Maya: Pixel, she is three"))
    clock.t += 5 * MINUTE
    led.add(NewEntry(content=b"Ben: What's the dog's name?"))
    clock.t += 5 * MINUTE
    led.add(NewEntry(content=b"Maya: Rex, he is nine"))
    led.close()
    with Index.open(data_dir, clock=clock) as index:
        cat = [h.text for h in search(index, "the cat's name", record=False)]
        dog = [h.text for h in search(index, "the dog's name", record=False)]
    assert "Maya: Pixel, she is three" in cat
    assert "Maya: Rex, he is nine" not in dog


def _conversation(data_dir: Path, clock: Clock, *turns: tuple[str, str]) -> None:
    """A chain of (session, text) turns, added in one batch."""
    led = Ledger.init(data_dir, name="conversation", clock=clock)
    led.add_batch([NewEntry(content=text.encode(), meta={"session": sid}) for sid, text in turns])
    led.close()


def test_the_reply_to_a_question_is_found_through_it(data_dir: Path, clock: Clock) -> None:
    """Neighbours (issue 25): the answer holds no word of the query; the question before
    it does, and hands it a share of its part. A turn of another session beside a hit is
    not a neighbour, and a bare question ranks below its answer."""
    _conversation(
        data_dir,
        clock,
        ("1", "Maya: I adopted a cat from the shelter"),
        ("1", "Ben: Finally! What's the cat's name?"),
        ("1", "Maya: Pixel, three, one white paw"),
        ("1", "Ben: The weather turned cold again"),
        ("2", "Ben: My cat sleeps all day"),
        ("3", "Maya: The bakery opens at seven"),
    )
    with Index.open(data_dir, clock=clock) as index:
        texts = [h.text for h in search(index, "What is the cat's name?", record=False)]
    assert "Maya: Pixel, three, one white paw" in texts
    # the next memory by seq is in another session: not pulled in
    assert "Maya: The bakery opens at seven" not in texts
    assert "Ben: The weather turned cold again" not in texts
    assert texts.index("Maya: Pixel, three, one white paw") < texts.index(
        "Ben: Finally! What's the cat's name?"
    )


def test_without_neighbours_the_reply_is_not_found(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: with the neighbour weights at 0 the answer is lost."""
    from memory_chain.index import query

    monkeypatch.setattr(query, "NEXT_WEIGHT", 0.0)
    _conversation(
        data_dir,
        clock,
        ("1", "Ben: Finally! What's the cat's name?"),
        ("1", "Maya: Pixel, three, one white paw"),
    )
    with Index.open(data_dir, clock=clock) as index:
        texts = [h.text for h in search(index, "What is the cat's name?", record=False)]
    assert texts == ["Ben: Finally! What's the cat's name?"]


def test_the_answer_to_a_question_about_a_match_is_found(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement, a question about it, the answer (issue 25): the statement matches,
    the answer holds no word of the query and is found through the two; with
    CHAIN_WEIGHT at 0 it is not."""
    from memory_chain.index import query

    _conversation(
        data_dir,
        clock,
        ("2", "Maya: My car broke down on the ring road."),
        ("2", "Ben: Oh no, what happened?"),
        ("2", "Maya: The clutch, two weeks at the garage."),
        ("2", "Ben: Take the tram, it is relaxing."),
    )
    answer = "Maya: The clutch, two weeks at the garage."
    with Index.open(data_dir, clock=clock) as index:
        texts = [h.text for h in search(index, "what broke on the car", record=False)]
        monkeypatch.setattr(query, "CHAIN_WEIGHT", 0.0)
        without = [h.text for h in search(index, "what broke on the car", record=False)]
    assert texts[:2] == ["Maya: My car broke down on the ring road.", answer]
    assert "Ben: Take the tram, it is relaxing." not in texts
    assert answer not in without


def test_a_turn_that_tells_and_asks_back_is_not_a_bare_question() -> None:
    """Only a question is taken for one (issue 25, long turns): a turn that tells something
    and then asks back holds an answer; a few words around a question do not."""
    from memory_chain.index.turns import asks, ends_asking

    told = "Nadia: I ran ten miles on Sunday, my longest ever. How was your week?"
    assert ends_asking(told) and not asks(told)
    for question in (
        "Ben: What wood?",
        "Ben: Oh no, poor you! What happened?",
        "Priya: Priya!! long time no see. how's hospital life?",
        'Ana: "Is it done?"',
        "Ben: Finally! What's the cat's name? Is she a kitten?",
    ):
        assert asks(question), question
    for statement in ("Tomas: Cedar strips.", "Ana: Is it done? I think so, it shipped on Monday."):
        assert not asks(statement), statement


def test_a_match_that_asks_back_keeps_its_part_and_pulls_in_no_reply(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long turn that holds the answer and ends by asking back ranks first, and the
    reply to its question is not pulled in; were it taken for a bare question (a question
    with any number of words around it), both would go wrong."""
    from memory_chain.index import turns

    _conversation(
        data_dir,
        clock,
        ("1", "Nadia: I ran my first half marathon in Bath in 2 hours 14. How was your weekend?"),
        ("1", "Ben: Quiet, we painted the fence green."),
        ("1", "Nadia: Harriet ran the half marathon in 1:51, she waited for me with a banana."),
    )
    first = "Nadia: I ran my first half marathon in Bath in 2 hours 14. How was your weekend?"
    fence = "Ben: Quiet, we painted the fence green."
    query = "How long did Nadia take for the half marathon in Bath?"
    with Index.open(data_dir, clock=clock) as index:
        texts = [h.text for h in search(index, query, record=False)]
        monkeypatch.setattr(turns, "ASIDE_WORDS", 1000)
        before = [h.text for h in search(index, query, record=False)]
    assert texts[0] == first and fence not in texts
    assert before[0] != first and fence in before


def test_the_hand_written_recall_parts_parse_and_cover_every_kind() -> None:
    """benchmarks/recall.py's hand-written parts: every question names turns that exist
    (the parser raises otherwise) and each part asks every kind of question."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from recall import (
        HAND,
        HAND_LONG,
        HELD_OUT_3,
        HELD_OUT_4,
        HELD_OUT_5,
        HELD_OUT_6,
        HELD_OUT_HAND,
        KINDS,
        LIFE,
        LONG,
        LONG_HELD_OUT,
        hand_conversations,
    )

    parts = (
        *(HAND, HAND_LONG, HELD_OUT_HAND, LONG, LONG_HELD_OUT),
        *(HELD_OUT_3, LIFE, HELD_OUT_4, HELD_OUT_5, HELD_OUT_6),
    )
    for path in parts:
        convs = hand_conversations(path)
        kinds = {q.kind for c in convs for q in c.questions}
        assert kinds == set(KINDS), path
    held_out = hand_conversations(HELD_OUT_HAND)
    assert sum(len(c.questions) for c in held_out) == 44
    assert len({t.session for c in held_out for t in c.turns}) == 22
    # the two long chats of session 41: a year of news each, lists gathered over sessions
    (life,) = hand_conversations(LIFE)
    assert (len(life.turns), len(life.questions)) == (306, 64)
    (fourth,) = hand_conversations(HELD_OUT_4)
    assert (len(fourth.turns), len(fourth.questions)) == (219, 47)
    (fifth,) = hand_conversations(HELD_OUT_5)
    assert (len(fifth.turns), len(fifth.questions)) == (124, 36)
    sixth = hand_conversations(HELD_OUT_6)
    assert [(len(c.turns), len(c.questions)) for c in sixth] == [(76, 23), (52, 23)]

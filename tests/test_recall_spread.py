"""A page of results opens with the best turn of each session (index/turns.py ``spread``,
index/query.py ``shown``; specs/INDEX.md 3.5).

Neighbour expansion pulls a match's reply into the candidates, so a page
could open with three turns of one session and push the one turn of
another session that holds the answer below the fold. The page keeps the
same memories; only their order changes.
"""

from __future__ import annotations

from pathlib import Path

from helpers.cli import Cli
from hypothesis import given
from hypothesis import strategies as st

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import query
from memory_chain.index.db import Index
from memory_chain.index.query import search
from memory_chain.index.turns import spread


def test_the_best_turn_of_each_session_comes_first() -> None:
    a, b, c = ("a", "2026-05-01", 0), ("b", "2026-05-01", 0), ("c", "2026-05-02", 0)
    assert [0, 2, 4, 1, 3] == spread([a, a, b, a, c])
    # the same session on another day is another sitting
    assert [0, 1] == spread([("a", "2026-05-01", 0), ("a", "2026-05-02", 0)])


def test_memories_without_a_session_keep_their_rank() -> None:
    loose = (None, "2026-05-01", 0)
    assert [0, 1, 2, 4, 3] == spread([loose, loose, ("a", "d", 0), ("a", "d", 0), loose])
    assert [0, 1, 2] == spread([loose, loose, loose])


def test_turns_without_a_session_are_spread_by_how_far_apart_they_are() -> None:
    """Turns that name no session (a chat added with its text alone) count as one
    session's when they are turns of one sitting at most NEAR_SEQS apart."""
    from memory_chain.index.turns import NEAR_SEQS

    turn = (None, "2026-05-01", 0)
    seqs = [10, 11, 10 + NEAR_SEQS + 1, 12, 40]
    assert [0, 2, 4, 1, 3] == spread([turn] * 5, seqs)
    # without seqs (facts, or turns with no label) the rank order stays
    assert [0, 1, 2, 3, 4] == spread([turn] * 5)
    assert [0, 1, 2, 3, 4] == spread([turn] * 5, [None] * 5)
    # another day, or added more than GAP_US apart, is another sitting
    other_day = (None, "2026-05-02", 0)
    later = (None, "2026-05-01", 61 * 1_000_000)
    assert [0, 1, 2] == spread([turn, other_day, later], [10, 11, 12])


places = st.lists(
    st.tuples(st.sampled_from([None, "s1", "s2", "s3"]), st.sampled_from(["d1", "d2"]), st.just(0)),
    max_size=12,
)


@given(places)
def test_spread_shows_every_session_as_early_as_the_ranking_does(ranked: list) -> None:
    order = spread(ranked)
    assert sorted(order) == list(range(len(ranked)))  # the same memories
    shown = [ranked[i] for i in order]

    def sessions(items: list) -> set:
        return {(s, d) for s, d, _ in items if s is not None}

    for n in range(len(ranked) + 1):
        assert sessions(ranked[:n]) <= sessions(shown[:n])
    # within those moved up and those moved down, the rank order is kept
    cut = len({(s, d) for s, d, _ in ranked if s is not None}) + sum(
        s is None for s, _, _ in ranked
    )
    assert order[:cut] == sorted(order[:cut]) and order[cut:] == sorted(order[cut:])


@given(
    st.lists(
        st.tuples(st.sampled_from(["d1", "d2"]), st.integers(0, 40), st.booleans()), max_size=12
    )
)
def test_spread_of_bare_turns_keeps_the_page_and_its_order(ranked: list) -> None:
    """Bare turns: the same memories, the best first, and the rank order kept within those
    moved up and within those moved down."""
    from memory_chain.index.turns import NEAR_SEQS

    places = [(None, day, 0) for day, _, _ in ranked]
    seqs = [seq if turn else None for _, seq, turn in ranked]
    order = spread(places, seqs)
    assert sorted(order) == list(range(len(ranked)))
    if ranked:
        assert order[0] == 0
    moved = [
        i
        for i in range(len(ranked))
        if seqs[i] is not None
        and any(
            seqs[j] is not None
            and j in order[: order.index(i)]
            and places[j][1] == places[i][1]
            and abs(seqs[j] - seqs[i]) <= NEAR_SEQS
            for j in range(i)
        )
    ]
    up = [i for i in order if i not in moved]
    assert order == up + moved and up == sorted(up) and moved == sorted(moved)
    # a fact (no seq handed) is never moved down
    assert all(seqs[i] is not None for i in moved)


def _turn(text: str, session: str) -> NewEntry:
    return NewEntry(content=text.encode(), meta={"session": session, "date": "2026-05-01"})


def test_a_search_opens_with_one_turn_of_each_session(tmp_path: Path, monkeypatch) -> None:
    """Turns of one chat about the canoe rank above the one turn of another chat that says
    what wood it is; shown, that turn comes second, and the page holds the same memories."""
    led = Ledger.init(tmp_path / "d", name="t")
    led.add_batch(
        [
            _turn("Ben: The canoe is nearly done, the canoe hull is sanded.", "s1"),
            _turn("Ana: Your canoe looks great! Is the canoe heavy?", "s1"),
            _turn("Ben: The canoe weighs about thirty kilos, light for a canoe.", "s1"),
            _turn("Ana: Send me a photo of the canoe, the canoe on the water!", "s1"),
            _turn("Ben: I bought cedar strips for a canoe, some glue and a lot of varnish.", "s2"),
            _turn("Ana: Lunch on Friday?", "s3"),
            # a store where "canoe" is a rare word, so that its matches rank first (in six
            # memories it would be in most, and weigh next to nothing: index/query.py's
            # bm25 floor)
            *(_turn(f"Ben: Chores for day {n}: laundry, dishes, post.", "s3") for n in range(30)),
        ]
    )
    led.close()
    with Index.open(led.layout.root) as index:
        shown = search(index, "what wood is the canoe made of?", limit=10, record=False)
        monkeypatch.setattr(query, "spread", lambda places, seqs=None: list(range(len(places))))
        ranked = search(index, "what wood is the canoe made of?", limit=10, record=False)
    assert {h.seq for h in shown} == {h.seq for h in ranked}
    assert [h.session for h in ranked].index("s2") >= 3  # the ranking: one chat first
    assert ["s1", "s2"] == [h.session for h in shown][:2]
    assert shown[0].seq == ranked[0].seq


def test_a_chat_added_without_sessions_opens_with_one_turn_of_each_stretch(
    tmp_path: Path, monkeypatch
) -> None:
    """The same chat as above added with its text alone (no session, no day), the turn
    that says what wood it is far from the four about the canoe: shown, it comes second.
    The same texts without speakers' labels are facts, and keep their rank order."""
    canoe = [
        "Ben: The canoe is nearly done, the canoe hull is sanded.",
        "Ana: Your canoe looks great! Is the canoe heavy?",
        "Ben: The canoe weighs about thirty kilos, light for a canoe.",
        "Ana: Send me a photo of the canoe, the canoe on the water!",
    ]
    chores = [f"Ben: Chores for day {n}: laundry, dishes, post." for n in range(30)]
    texts = [
        *canoe,
        *chores[:12],
        "Ben: I bought cedar strips for a canoe, and glue.",
        *chores[12:],
    ]
    question = "what wood is the canoe made of?"
    for labelled in (True, False):
        led = Ledger.init(tmp_path / str(labelled), name="t")
        led.add_batch(
            [NewEntry(content=(t if labelled else t.split(": ", 1)[1]).encode()) for t in texts]
        )
        led.close()
        with Index.open(led.layout.root) as index:
            shown = search(index, question, limit=10, record=False)
            with monkeypatch.context() as m:
                m.setattr(query, "spread", lambda places, seqs=None: list(range(len(places))))
                ranked = search(index, question, limit=10, record=False)
        cedar = len(canoe) + 12 + 1  # its seq: genesis is 0
        assert {h.seq for h in shown} == {h.seq for h in ranked}
        assert [h.seq for h in ranked].index(cedar) >= 3  # the ranking: the canoe turns first
        if labelled:
            assert [h.seq for h in shown].index(cedar) == 1
        else:
            assert [h.seq for h in shown] == [h.seq for h in ranked]


def test_the_command_line_search_shows_the_same_order(cli: Cli, tmp_path: Path) -> None:
    """`memory-chain search` merges the chain's page with the workspace's and sorts by
    score; the page it prints still opens with one turn of each session."""
    import json

    turns = [
        ("Ben: The canoe is nearly done, the canoe hull is sanded.", "s1"),
        ("Ana: Your canoe looks great! Is the canoe heavy?", "s1"),
        ("Ben: The canoe weighs about thirty kilos, light for a canoe.", "s1"),
        ("Ana: Send me a photo of the canoe, the canoe on the water!", "s1"),
        ("Ben: I bought cedar strips for a canoe, some glue and a lot of varnish.", "s2"),
        # "canoe" a rare word, as above
        *((f"Ben: Chores for day {n}: laundry, dishes, post.", "s3") for n in range(30)),
    ]
    batch = tmp_path / "turns.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"content": t, "meta": {"session": s, "date": "2026-05-01"}}) + "\n"
            for t, s in turns
        )
    )
    cli.ok("init", "--name", "t")
    cli.ok("add", "--batch", str(batch))
    found = cli.ok("search", "what wood is the canoe made of?", "--json").json()
    assert ["s1", "s2"] == [f["session"] for f in found][:2]
    assert len(found) == 5

"""benchmarks/recall.py ``--haystack`` (issue 25, session 50): a conversation padded to the
length of the published set's (about 600 turns) with whole sessions of other
conversations, spoken by its own two people. The padding must leave the conversation
itself as it was (its turns, ids, sessions, days and questions), so that its questions
keep their evidence, and must read as one conversation: every filler turn spoken by one
of its people, the sessions in day order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

recall = pytest.importorskip("recall")


def _convs(part: str) -> list:
    return recall.part_conversations(part)


@pytest.mark.parametrize("part", ["held-out-6", "life"])
def test_a_padded_conversation_keeps_its_own_turns_and_reads_as_one(part: str) -> None:
    conv = _convs(part)[0]
    fillers = [c for name in ("hand", "long") if name != part for c in _convs(name)]
    grown = recall.padded(conv, fillers, 400)
    own = [t for t in grown.turns if not t.id.startswith("fill")]
    assert own == conv.turns  # the same turns, ids, sessions and days, in the same order
    assert grown.questions == conv.questions
    assert len(grown.turns) >= 400
    assert len(grown.turns) - 400 < 40  # stops at the session that reaches the size
    people = set(recall.speakers_of(conv))
    fill = [t for t in grown.turns if t.id.startswith("fill")]
    spoken = [t for t in fill if t.speaker in people]
    assert len(spoken) / len(fill) > 0.95  # a third speaker of a filler keeps their name
    days = [t.day for t in grown.turns]
    assert days == sorted(days)
    first, last = min(t.day for t in conv.turns), max(t.day for t in conv.turns)
    assert all(first <= t.day <= max(last, first.replace(year=first.year + 1)) for t in fill)
    # each filler session whole, under a name of its own
    sessions = [t.session for t in grown.turns]
    runs = [s for i, s in enumerate(sessions) if i == 0 or sessions[i - 1] != s]
    assert len(runs) == len(set(runs))
    assert not {t.session for t in fill} & {t.session for t in conv.turns}


def test_filler_names_are_renamed_in_the_text_too() -> None:
    conv = _convs("held-out-6")[0]
    other = _convs("life")[0]  # Hana and Diego
    grown = recall.padded(conv, [other], len(conv.turns) + 50)
    fill = " ".join(t.text for t in grown.turns if t.id.startswith("fill"))
    assert "Hana" not in fill and "Diego" not in fill
    mapped = dict(zip(recall.speakers_of(other), recall.speakers_of(conv), strict=False))
    assert mapped["Hana"] in fill or mapped["Diego"] in fill


def test_a_conversation_already_long_enough_is_unchanged() -> None:
    conv = _convs("life")[0]
    grown = recall.padded(conv, _convs("hand"), 100)
    assert grown.turns == conv.turns

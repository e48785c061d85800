"""Irregular verbs in queries (issue 25, index/verbs.py): "When did Ruth's dahlias win?" is
answered by "My dahlias won first prize", which porter does not fold into "win"."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import query
from memory_chain.index.db import Index
from memory_chain.index.query import query_terms, search
from memory_chain.index.verbs import PAST, past_forms


def test_a_verb_brings_its_past_forms() -> None:
    assert past_forms(["dahlias", "win"]) == ["won"]
    assert past_forms(["Go", "swim"]) == ["went", "gone", "swam", "swum"]
    assert past_forms(["win", "won"]) == []  # already asked
    assert past_forms(["give", "forgive"]) == ["gave", "given", "forgave", "forgiven"]


def test_the_query_searches_them_after_its_own_words() -> None:
    assert query_terms("When did Ruth's dahlias win?") == ["Ruth", "dahlias", "win", "won"]
    # stop words bring nothing: "did", "have", "say" are not searched for
    assert query_terms("What did she say?") == ["What", "did", "she", "say"]


def test_no_past_form_is_a_common_word_of_another_sense() -> None:
    """The forms left out of the table, and the verbs that are mostly nouns."""
    forms = {f for fs in PAST.values() for f in fs}
    assert not forms & {"left", "found", "saw", "lay", "felt", "fell", "rose", "ground", "got"}
    assert not set(PAST) & {"bear", "ring", "show", "sink", "tear", "light", "get"}
    assert all(f.isalpha() and f.islower() for f in forms)


def test_a_question_in_the_present_finds_the_past(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger.add_batch(
        [
            NewEntry(content=b"Ruth: Guess who got first prize at the village show? My dahlias!"),
            NewEntry(content=b"Ruth: My dahlias won first prize at the show, the big red ones."),
            NewEntry(content=b"Kwame: I'll trade you a portrait of the dahlias for tomatoes."),
            NewEntry(content=b"Ruth: The dahlias need staking before the wind comes."),
        ]
    )
    ledger.close()
    with Index.open(data_dir) as index:
        hits = search(index, "When did Ruth's dahlias win?", limit=4, record=False)
        assert "won first prize" in hits[0].text
        monkeypatch.setattr(query, "IRREGULAR", False)
        before = search(index, "When did Ruth's dahlias win?", limit=4, record=False)
    assert "won first prize" not in before[0].text

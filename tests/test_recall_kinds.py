"""A query that names a kind of thing finds the memories that name one of its members
(index/kinds.py; specs/INDEX.md 3, "Kinds")."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import query
from memory_chain.index.db import Index
from memory_chain.index.kinds import KINDS, MAX_MEMBERS, members
from memory_chain.index.query import search


def test_a_kind_word_names_its_members() -> None:
    assert {"cello", "bass", "violin"} <= set(members(["instrument"]))
    assert members(["instruments"]) == members(["instrument"])  # plural
    assert members(["hobbies"]) == members(["hobby"])  # -ies
    assert members(["colors"]) == members(["colour"])  # the other spelling
    assert [] == members(["deploy", "staging"])
    assert "dog" not in members(["dog", "pet"])  # a word of the query is not added again


def test_members_are_capped_and_each_once() -> None:
    found = members(["pet", "animal", "sport", "game", "hobby"])
    assert len(found) == MAX_MEMBERS
    assert len(set(found)) == len(found)


def test_members_are_single_lowercase_words() -> None:
    for kind, words in KINDS.items():
        assert kind == kind.casefold()
        for word in words:
            assert word == word.casefold() and " " not in word, (kind, word)


@pytest.fixture
def chain(tmp_path: Path) -> Path:
    led = Ledger.init(tmp_path / "d", name="t")
    for text in (
        "Tomas joined the office band last month",
        "Tomas plays five-a-side football on Mondays",
        "He has owned a cello since school",
        "The band rehearses in Greta's attic",
    ):
        led.add(NewEntry(content=text.encode()))
    led.close()
    return tmp_path / "d"


def test_a_kind_in_the_question_finds_a_member_in_a_memory(
    chain: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "What instrument does Tomas play?"
    with Index.open(chain) as index:
        found = [h.text for h in search(index, question, record=False)]
        monkeypatch.setattr(query, "KIND_WEIGHT", 0.0)
        without = [h.text for h in search(index, question, record=False)]
    assert "He has owned a cello since school" in found
    assert "He has owned a cello since school" not in without  # no word of the question
    assert found[0] == without[0]  # below what matched the question's own words

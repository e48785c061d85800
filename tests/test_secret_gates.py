"""The secret screen's gates only skip work: scan() finds the same with them as without.

A gate is a cheap necessary condition checked before a rule's patterns run
(a symbol and a digit for a password-shaped token, "name" and "value" for a
name/value pair, a name stem for rule 3). Each is compared with the rule
run ungated, on every labelled secret corpus and on generated text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secret_corpora import HELD_OUT, TUNING

from memory_chain.chain.format import secrets

TEXTS = sorted({text for part in (*TUNING.values(), *HELD_OUT.values()) for text, _, _ in part})


def ungated_strong(text: str, low: str, found: list[secrets.Finding]) -> None:
    secrets._password_shaped(text, found)
    secrets._name_value(text, found)


def every_stem(low: str) -> bool:
    if not low.isascii():
        return True
    return re.search("|".join(map(re.escape, secrets._NAME_STEMS)), low) is not None


def test_the_corpora_are_read() -> None:
    assert len(TEXTS) > 1400


def test_scan_is_the_same_ungated(monkeypatch: pytest.MonkeyPatch) -> None:
    gated = [secrets.scan(text) for text in TEXTS]
    monkeypatch.setattr(secrets, "_strong", ungated_strong)
    monkeypatch.setattr(secrets, "_may_name", every_stem)
    assert [secrets.scan(text) for text in TEXTS] == gated
    assert sum(map(bool, gated)) > 700  # the corpora hold secrets the rules find


pieces = st.sampled_from(
    [
        "name",
        "Name",
        "value",
        "VALUE",
        ": ",
        "=",
        "\n",
        " ",
        "/",
        "?",
        "!",
        "#",
        "%",
        "Ab3",
        "x9",
        "٣",
        "pass",
        "wörd",
        "Tok",
        "secr",
        "ßecret",
        "K",
        "pw",
        "s3cr3T",
    ]
)


@settings(deadline=None, max_examples=300)
@given(parts=st.lists(pieces | st.text(max_size=6), max_size=14))
def test_generated_text_is_the_same_ungated(parts: list[str]) -> None:
    text = "".join(parts)
    low = text.casefold()
    assert secrets._may_name(low) == every_stem(low)
    gated: list[secrets.Finding] = []
    ungated: list[secrets.Finding] = []
    secrets._strong(text, low, gated)
    ungated_strong(text, low, ungated)
    assert gated == ungated


EDGES = {
    "a password whose only digits are not ASCII": "wifi: Guest / Abcd٣٣!xy",
    "a name/value pair in capitals": "- NAME: DB_PASSWORD\n  VALUE: Zq8#mK2vLp9",
    "a stem in another script": "パスワードは Zq8mK2vLp9x です",
    "a stem in capitals": "The SIGNING_KEY = Zq8mK2vLp9xR4tW",
}


@pytest.mark.parametrize("name", EDGES)
def test_edges_are_found_gated(name: str) -> None:
    text = EDGES[name]
    low = text.casefold()
    ungated: list[secrets.Finding] = []
    ungated_strong(text, low, ungated)
    gated: list[secrets.Finding] = []
    secrets._strong(text, low, gated)
    assert gated == ungated
    assert secrets.scan(text), name  # each is a secret the screen finds

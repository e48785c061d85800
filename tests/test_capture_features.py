"""The capture scorer's features are cheap where nothing can match (capture/features.py).

Each cue family is looked up in one index of words and phrases (``_Cues``), and each
of several patterns is tried only where what it needs is there (a word it starts
with, an apostrophe, a digit, a slash). These are speed-ups only: they must never
change a feature. Hypothesis builds statements out of the words, marks and cases
the patterns look for, and checks the cheap path against the plain one.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.capture import features as F

WORDS = [
    "not",
    "NOT",
    "never",
    "instead",
    "of",
    "rather",
    "than",
    "over",
    "no",
    "No",
    "não",
    "nicht",
    "pas",
    "so",
    "So",
    "because",
    "since",
    "as",
    "weil",
    "car",
    "porque",
    "it",
    "It",
    "is",
    "it's",
    "its",
    "settled",
    "you",
    "your",
    "You're",
    "port",
    "Port",
    "8080",
    "5433",
    "src/app",
    "./run",
    "a.py",
    "main.go",
    "Priya",
    "owns",
    "the",
    "billing",
    "we",
    "always",
    "use",
    "pnpm",
    "npm",
    "prefer",
    "tabs",
    "i'd",
    "like",
    "don't",
    "end",
    "the",
    "day",
    "kebab-case",
    "on-call",
    "go-to",
    "person",
    "q3",
    "3rd",
    "standardise",
    "standardize",
    "remember,",
    "remember",
    "at",
    "9am",
    "eu-west-1",
    "v2",
    "ask",
    "Jo",
    "about",
    "on",
    "team",
    "one",
    "file",
    "per",
    "module",
]
MARKS = ["", "", "", ",", ".", "!", "?", ":", "'", "`", " -", ";"]


@st.composite
def statements(draw: Any) -> str:
    n = draw(st.integers(min_value=1, max_value=12))
    parts = []
    for _ in range(n):
        parts.append(draw(st.sampled_from(WORDS)) + draw(st.sampled_from(MARKS)))
    return " ".join(parts)


def _plain_cues(body: str) -> list[float]:
    """Each family tried the slow way: every alternative as one whole-word pattern."""
    out = []
    for _, alternatives in F._FAMILIES:
        alts = [v for a in F._top_level(alternatives) for v in F._variants(a)]
        out.append(1.0 if F._whole(alts).search(body) else 0.0)
    return out


@settings(max_examples=400, deadline=None)
@given(statements())
def test_the_cue_index_finds_what_each_familys_pattern_finds(text: str) -> None:
    bits, _ = F._CUES.find(text)
    fast = [float(bits >> i & 1) for i in range(len(F._CUES.names))]
    assert fast == _plain_cues(text)


#: The guarded patterns, and the words their sources hold (so that every alternative is
#: written out in the statements below, whatever the pattern comes to say).
GUARDED = [
    F._CONTRAST,
    F._REASON,
    F._NEGATED,
    F._YOU,
    F._IT_IS_END,
    F._NAME,
    F._PATH,
    F._PORT,
]
SOURCE_WORDS = sorted(
    {w for rx in GUARDED for w in re.findall(r"[^\W\d_]{2,}", rx.pattern)}
    | {"n't", "it's", "src/app", "a.py", "8080", ":5433", "Priya", "x"}
)


@st.composite
def short_statements(draw: Any) -> str:
    n = draw(st.integers(min_value=1, max_value=4))
    words = []
    for _ in range(n):
        word = draw(st.sampled_from(SOURCE_WORDS))
        word = word.capitalize() if draw(st.booleans()) else word
        words.append(word + draw(st.sampled_from(MARKS)))
    return " ".join(words)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(statements(), short_statements()))
def test_a_pattern_is_skipped_only_where_it_cannot_match(text: str) -> None:
    _, tokens = F._CUES.find(text)
    quote = "'" in text
    low = text.lower()
    guarded = [
        (F._CONTRAST, quote or not tokens.isdisjoint(F._CONTRAST_WORDS)),
        (F._REASON, not tokens.isdisjoint(F._REASON_WORDS)),
        (F._NEGATED, quote or not tokens.isdisjoint(F._NEGATED_WORDS)),
        (F._YOU, quote or not tokens.isdisjoint(F._YOU_WORDS)),
        (F._IT_IS_END, quote or "it" in tokens or "its" in tokens),
        (F._NAME, text != low),
        (F._PATH, "/" in text or "." in text),
        (F._PORT, ":" in text or "port" in low),
    ]
    for pattern, tried in guarded:
        if pattern.search(text):
            assert tried, (pattern.pattern, text)

"""Turns of one conversation (issue 25): which memories stand beside each other.

Memories are turns of one conversation when they were said the same day and
either carry the same session (``meta.session``), or both carry none and were
added within GAP_US of each other (one sitting: a conversation added a turn at
a time). Recall uses it twice: the reply to a matching question joins the
candidates (index/query.py ``neighbours``), and a reply to a question is
embedded with the turns before it (index/vectors.py), so that "Cedar strips."
is found by "What wood is the canoe made of?" when the turn before asked
"What wood?".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from memory_chain.chain.format.patterns import lazy

__all__ = ["ASIDE_WORDS", "GAP_US", "Place", "asks", "ends_asking", "spread", "together"]

#: Two memories without a session are one sitting apart when added at most this far apart.
GAP_US: Final = 60 * 1_000_000

#: (session, said, created) of a memory: its session or None, the ISO day it was said,
#: and its creation time in µs.
Place = tuple[Any, Any, int]


def together(a: Place, b: Place) -> bool:
    """Whether two memories, by their places, are turns of one conversation."""
    if a[1] != b[1] or a[0] != b[0]:
        return False
    return a[0] is not None or abs(a[2] - b[2]) <= GAP_US


def spread(places: Sequence[Place]) -> list[int]:
    """The order to show ranked memories in, by their places (best first): each memory
    that is not a turn of a session already shown comes first, in rank order; then the
    rest, in rank order. A list of results then opens with the best turn of as many
    sessions as it holds, not with a match and its neighbours from one of them
    (index/query.py ``neighbours`` pulls those in); the same memories are shown. Only
    memories that name their session (``meta.session``, the same day) count as turns of
    one: facts added one by one, or in one sitting, keep their rank order. Every session
    among the first n memories ranked is among the first n shown, for any n
    (tests/test_recall_spread.py)."""
    first: list[int] = []
    rest: list[int] = []
    shown: set[tuple[Any, Any]] = set()
    for i, (session, said, _) in enumerate(places):
        if session is None:
            first.append(i)
        elif (session, said) in shown:
            rest.append(i)
        else:
            shown.add((session, said))
            first.append(i)
    return first + rest


_CLOSING: Final = " \t\n\"')»”"
#: Where a sentence ends: after ".", "!" or "?" and a space.
_SENTENCE_END: Final = lazy(r"(?<=[.!?])\s+")
#: A question may come with this many words of its own around it ("Oh no, poor you! What
#: happened?") and still be a question; more, and the turn tells something too.
ASIDE_WORDS: Final = 6


def ends_asking(text: str) -> bool:
    """Whether a memory's text ends with a question mark (then the turn after it may
    answer it: index/vectors.py embeds that turn with this one)."""
    return text.rstrip(_CLOSING).endswith("?")


def asks(text: str) -> bool:
    """Whether a memory's text is a question, and only that: it ends with a question mark,
    and its sentences that do not hold at most ASIDE_WORDS words. "I ran ten miles on
    Sunday, my longest ever. How was your week?" tells something, and asks back."""
    if not ends_asking(text):
        return False
    told = 0
    for sentence in _SENTENCE_END.split(text.strip()):
        if not sentence.rstrip(_CLOSING).endswith("?"):
            told += len(sentence.split())
            if told > ASIDE_WORDS:
                return False
    return True

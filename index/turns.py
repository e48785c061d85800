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

__all__ = [
    "ASIDE_WORDS",
    "GAP_US",
    "NEAR_SEQS",
    "Place",
    "asks",
    "ends_asking",
    "spread",
    "together",
]

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


#: Turns without a session (session 52): two memories that name no session, are turns of
#: one sitting (``together``) and are handed to ``spread`` as turns count as turns of one
#: session when at most this many seqs apart. A conversation added with nothing but each
#: turn's text then still opens a page with the best turn of each stretch of it. Chosen
#: on the tuning parts added so (benchmarks/recall.py --bare; their sessions are 8 to 13
#: turns long).
NEAR_SEQS: int = 8


def spread(places: Sequence[Place], seqs: Sequence[int | None] | None = None) -> list[int]:
    """The order to show ranked memories in, by their places (best first): each memory
    that is not a turn of a session already shown comes first, in rank order; then the
    rest, in rank order. A list of results then opens with the best turn of as many
    sessions as it holds, not with a match and its neighbours from one of them
    (index/query.py ``neighbours`` pulls those in); the same memories are shown.
    Memories that name their session (``meta.session``, the same day) are turns of one
    when their sessions are; memories that name none, when ``seqs`` gives the seqs of
    both (index/query.py ``spread_order`` gives those of turns with a speaker's label),
    when they are turns of one sitting (``together``) at most NEAR_SEQS apart. Any other
    memory (a fact) keeps its rank order. Every session among the first n memories ranked is
    among the first n shown, for any n (tests/test_recall_spread.py)."""
    first: list[int] = []
    rest: list[int] = []
    shown: set[tuple[Any, Any]] = set()
    loose: list[tuple[int, Place]] = []  # the memories without a session shown first
    for i, place in enumerate(places):
        session, said, _ = place
        if session is None:
            seq = seqs[i] if seqs is not None else None
            if seq is not None and any(
                abs(seq - s) <= NEAR_SEQS and together(place, p) for s, p in loose
            ):
                rest.append(i)
                continue
            if seq is not None:
                loose.append((seq, place))
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

"""When two entries say the same thing, and when they say opposite things (keywords only).

Seed 000 section 4.3: an exact match (after normalising case, whitespace,
markdown emphasis and final punctuation) or a keyword overlap is a
duplicate; a contradiction is the same keywords with a flipped polarity
("Use pnpm, not npm" against "Use npm, not pnpm"), or the same ``Key:``
with another value ("Timezone: UTC" against "Timezone: CET").

A keyword is a word of two or more letters or digits that is not a stop
word, with a plural ``s`` taken off; it is *negated* when it follows a
negation word (not, never, don't, avoid, ...) in the same clause (clauses
end at , ; : . ! ? and dashes).

Values tell apart texts whose words agree (issue 22): its **numbers** (the
words holding a digit: 30, 5433, v2, 1.5) and its **names** (a single
letter or digit standing alone, "Team A"; not "a" or "I", nor "A" as the
first word). Two texts with other names are never the same (Team A, Team
B). Two texts with the same names whose numbers differ are not the same;
they are a changed fact, a contradiction ("rotates every 30 days" against
"every 90 days"), when exactly one number differs and their other keywords
overlap by SIMILAR or more.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Final, NamedTuple

from memory_chain.chain.format.patterns import lazy

__all__ = [
    "SIMILAR",
    "Merger",
    "changed_fact",
    "contradicts",
    "keywords",
    "normalize",
    "overlap",
    "relation",
    "same",
]

#: Keyword overlap (Jaccard over polarised keywords) from which two entries are duplicates.
SIMILAR: Final = 0.7
#: Plain keyword overlap from which a flipped polarity is a contradiction.
RELATED: Final = 0.6

_STOP: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "will",
        "with",
        "you",
        "your",
        "my",
        "me",
        "us",
        "should",
        "must",
        "can",
        "could",
        "would",
        "please",
        "always",
        "also",
        "just",
        "only",
        "than",
        "into",
        "over",
        "under",
        "about",
        "when",
        "while",
    ]
)
_NEGATION: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "don't",
        "dont",
        "do_not",
        "avoid",
        "without",
        "stop",
        "neither",
        "nor",
        "cannot",
        "can't",
        "won't",
        "isn't",
        "aren't",
        "shouldn't",
        "mustn't",
        "instead_of",
    ]
)
_CLAUSE: Final = lazy(r"[,;:.!?]|\s-{1,2}\s|—|–")
_WORD: Final = lazy(r"[\w']+")
_EMPHASIS: Final = lazy(r"[*_`~]+")
_KEY_VALUE: Final = lazy(r"^([^:]{1,40}):\s+(\S.*)$")
_NUMBER: Final = lazy(r"[0-9](?:[\w.,/:-]*\w)?|\w*[0-9]\w*")
_NAME: Final = lazy(r"(?<![\w'.-])([A-Za-z0-9])(?![\w'-]|\.\w)")


@lru_cache(maxsize=8192)
def normalize(text: str) -> str:
    """Case, whitespace, markdown emphasis and final punctuation folded away."""
    flat = " ".join(_EMPHASIS.sub("", text).split()).casefold()
    return flat.rstrip(".!;, ")


def _stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@lru_cache(maxsize=8192)
def keywords(text: str) -> frozenset[tuple[str, bool]]:
    """(keyword, negated) pairs of ``text`` (cached: entries are compared again and again)."""
    out: set[tuple[str, bool]] = set()
    for clause in _CLAUSE.split(_EMPHASIS.sub("", text).casefold()):
        clause = clause.replace("do not", "do_not").replace("instead of", "instead_of")
        negated = False
        for word in _WORD.findall(clause):
            word = word.strip("'")
            if word in _NEGATION:
                negated = True
                continue
            if len(word) < 2 or word in _STOP:
                continue
            out.add((_stem(word), negated))
    return frozenset(out)


def overlap(a: frozenset[object], b: frozenset[object]) -> float:
    """Jaccard overlap of two keyword sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


class Profile(NamedTuple):
    """What the comparisons need of one text, computed once (and cached)."""

    norm: str
    words: frozenset[tuple[str, bool]]  # keywords with their negation
    plain: frozenset[str]  # keywords alone
    key: str | None  # the normalised key of a "Key: value" text
    value: str | None
    numbers: frozenset[str]  # words holding a digit, case-folded
    names: frozenset[str]  # single letters or digits standing alone
    core: frozenset[str]  # plain keywords that are not numbers


def values(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(numbers, names) of ``text`` (see the module docstring)."""
    flat = _EMPHASIS.sub("", text)
    numbers = frozenset(m.group(0).casefold().rstrip(".,:") for m in _NUMBER.finditer(flat))
    names = set()
    for m in _NAME.finditer(flat):
        c = m.group(1)
        if c in "aI" or (c == "A" and not flat[: m.start()].strip()) or c.isdigit():
            continue
        names.add(c.casefold())
    return numbers, frozenset(names)


@lru_cache(maxsize=8192)
def profile(text: str) -> Profile:
    kw = keywords(text)
    m = _KEY_VALUE.match(text.strip())
    key = normalize(m.group(1)) if m else None
    value = normalize(m.group(2)) if m else None
    plain = frozenset(w for w, _ in kw)
    numbers, names = values(text)
    core = frozenset(w for w in plain if not any(ch.isdigit() for ch in w))
    return Profile(normalize(text), kw, plain, key, value, numbers, names, core)


def _same(a: Profile, b: Profile) -> bool:
    if a.norm == b.norm:
        return True
    if a.numbers != b.numbers or a.names != b.names:
        return False  # Team A / Team B; every 30 days / every 90 days
    return len(a.words) >= 2 and len(b.words) >= 2 and overlap(a.words, b.words) >= SIMILAR


def _changed_number(a: Profile, b: Profile) -> bool:
    """The same words about the same names, with other numbers: a fact that changed."""
    if a.names != b.names or not a.numbers or not b.numbers or a.numbers == b.numbers:
        return False
    if len(a.numbers) != len(b.numbers) or len(a.numbers ^ b.numbers) != 2:
        return False  # one number changed; "Service 1 on 8080" / "Service 2 on 8081" are two
    if len(a.core) < 2 or len(b.core) < 2 or overlap(a.core, b.core) < SIMILAR:
        return False
    return overlap(a.plain, b.plain) >= RELATED  # keeps Merger's prefix filter exact


def _contradicts(a: Profile, b: Profile) -> bool:
    if a.norm == b.norm:
        return False
    if a.key is not None and b.key is not None and a.key == b.key:
        return a.value != b.value
    if len(a.plain) < 2 or len(b.plain) < 2 or not a.plain & b.plain:
        return False
    if overlap(a.plain, b.plain) < RELATED:
        return False
    if _changed_number(a, b):
        return True
    return any((w, not neg) in b.words and (w, neg) not in b.words for w, neg in a.words)


def changed_fact(new: str, old: str) -> bool:
    """``new`` says what ``old`` says with other numbers (every 90 days, not 30)."""
    a, b = profile(new), profile(old)
    return a.norm != b.norm and _changed_number(a, b)


def same(a: str, b: str) -> bool:
    """Exact (normalised) match, or keyword overlap >= SIMILAR with the same polarities."""
    return _same(profile(a), profile(b))


def contradicts(a: str, b: str) -> bool:
    """Same ``Key:`` with another value, or the same keywords with a flipped polarity."""
    return _contradicts(profile(a), profile(b))


def relation(new: str, old: str) -> str | None:
    """ "same", "contradicts" or None: how ``new`` stands to ``old`` (one profile each)."""
    a, b = profile(new), profile(old)
    if _same(a, b):
        return "same"
    return "contradicts" if _contradicts(a, b) else None


class Merger:
    """Finds, among the texts kept so far, one that is the same as or contradicts a new one.

    Comparing every pair is quadratic; this uses prefix filtering (the
    standard set-similarity join): two keyword sets with a Jaccard overlap
    of at least t share a word among the ``n - ceil(t * n) + 1`` rarest
    words of each (rarity by the frequencies given up front). Equal
    normalised texts and equal ``Key:`` are looked up directly. Every
    candidate is then checked with ``relation``, so the answer is exactly
    what comparing all pairs would give.
    """

    def __init__(self, texts: Iterable[str]) -> None:
        self.freq: Counter[str] = Counter(w for t in texts for w in profile(t).plain)
        self.kept: list[tuple[str, Profile, str]] = []  # (text, profile, group)
        self.by_norm: dict[str, list[int]] = {}
        self.by_key: dict[str, list[int]] = {}
        self.postings: dict[str, list[int]] = {}
        self.small: list[int] = []  # fewer than two plain keywords: always compared

    def _prefix(self, p: Profile) -> list[str]:
        words = sorted(p.plain, key=lambda w: (self.freq[w], w))
        return words[: len(words) - math.ceil(RELATED * len(words)) + 1]

    def _candidates(self, p: Profile) -> list[int]:
        found: set[int] = set(self.by_norm.get(p.norm, ()))
        if p.key is not None:
            found.update(self.by_key.get(p.key, ()))
        if len(p.plain) >= 2:
            for w in self._prefix(p):
                found.update(self.postings.get(w, ()))
        else:
            found.update(self.small)
        return sorted(found)

    def clash(self, text: str, *, other_than: str) -> str | None:
        """A kept text (of a group other than ``other_than``) that is the same or opposite."""
        p = profile(text)
        for i in self._candidates(p):
            kept, q, group = self.kept[i]
            if group != other_than and (_same(q, p) or _contradicts(q, p)):
                return kept
        return None

    def relations(self, text: str) -> list[tuple[str, str, str]]:
        """(relation, kept text, its group) for every kept text the same as or opposite to
        ``text``, in the order kept ("same" as in ``relation(text, kept)``)."""
        p = profile(text)
        out = []
        for i in self._candidates(p):
            kept, q, group = self.kept[i]
            if _same(p, q):
                out.append(("same", kept, group))
            elif _contradicts(p, q):
                out.append(("contradicts", kept, group))
        return out

    def add(self, text: str, group: str) -> None:
        p = profile(text)
        i = len(self.kept)
        self.kept.append((text, p, group))
        self.by_norm.setdefault(p.norm, []).append(i)
        if p.key is not None:
            self.by_key.setdefault(p.key, []).append(i)
        if len(p.plain) >= 2:
            for w in self._prefix(p):
                self.postings.setdefault(w, []).append(i)
        else:
            self.small.append(i)

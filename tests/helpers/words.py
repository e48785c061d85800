"""Made-up words for test data whose texts must not look alike to dedup (tests only)."""

from __future__ import annotations

import random

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def made_up_words(n: int, seed: int) -> list[str]:
    """``n`` distinct three-syllable words, sorted, from ``seed``."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(3)))
    return sorted(words)


__all__ = ["SYLLABLES", "made_up_words"]

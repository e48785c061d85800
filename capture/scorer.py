"""The capture scorer: which statements are worth remembering, and as what (issue 24).

A multinomial logistic model over ``capture.features``: one weight per
feature and class, the classes ``none`` and the statement categories of
the detector. The weights are data (``scorer_weights.json``, written by
benchmarks/capture_train.py from the corpus's tune part, its thresholds
chosen on the choose part) and the prediction is a dot product in plain
Python: nothing is imported but ``json`` and the features, so a hook that
captures starts as fast as before.

The rules of capture.detector stay the floor: the scorer speaks only for a
statement no rule claimed.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Final, NamedTuple

from .features import NAMES, features

__all__ = ["WEIGHTS", "Score", "Thresholds", "load", "score", "thresholds"]

WEIGHTS: Final = Path(__file__).resolve().parent / "scorer_weights.json"


class Score(NamedTuple):
    """The scorer's verdict on a statement."""

    category: str | None  # the best class that is not "none", if any
    p: float  # its probability
    none: float  # the probability that nothing in it is worth keeping


class _Model(NamedTuple):
    classes: tuple[str, ...]
    weights: tuple[tuple[float, ...], ...]  # one row per class, in NAMES order
    store: dict[str, float]  # per class: a statement is stored at this probability
    candidate: dict[str, float]  # ... and kept as a candidate at this one
    worth: float  # and only if the probability that it is not "none" is at least this
    sure: float  # a statement at least this likely not "none" is stored whatever its p


@cache
def load(path: Path = WEIGHTS) -> _Model | None:
    """The model, or None when its file is missing or was made for other features."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if tuple(data.get("features", ())) != NAMES:
        return None
    rows = tuple(tuple(float(w) for w in row) for row in data["weights"])
    classes = tuple(data["classes"])

    def per_class(value: Any) -> dict[str, float]:
        if isinstance(value, dict):
            return {c: float(value.get(c, 1.1)) for c in classes}
        return dict.fromkeys(classes, float(value))

    return _Model(
        classes,
        rows,
        per_class(data["store"]),
        per_class(data["candidate"]),
        float(data.get("worth", 0.0)),
        float(data.get("sure", 1.01)),
    )


def score(statement: str, model: _Model | None = None) -> Score | None:
    """The class probabilities of ``statement``; None without a model."""
    model = model or load()
    if model is None:
        return None
    x = features(statement)
    active = [i for i, v in enumerate(x) if v]  # every feature is 0 or 1, most are 0
    logits = [sum(row[i] for i in active) for row in model.weights]
    top = max(logits)
    exp = [math.exp(z - top) for z in logits]
    total = sum(exp)
    probs = [e / total for e in exp]
    best, p = None, 0.0
    for name, q in zip(model.classes, probs, strict=True):
        if name != "none" and q > p:
            best, p = name, q
    none = probs[model.classes.index("none")]
    return Score(best, p, none)


class Thresholds(NamedTuple):
    store: float  # p(category) from which a statement is stored
    candidate: float  # ... kept as a candidate
    worth: float  # and 1 - p(none) at least this
    sure: float  # or 1 - p(none) at least this, whatever p(category)


def thresholds(category: str, model: _Model | None = None) -> Thresholds:
    """The thresholds of the model in use for ``category``."""
    model = model or load()
    if model is None:
        return Thresholds(1.1, 1.1, 1.1, 1.1)
    return Thresholds(
        model.store.get(category, 1.1), model.candidate.get(category, 1.1), model.worth, model.sure
    )

"""The capture scorer: which statements are worth remembering, and as what (issue 24).

A multinomial logistic model over ``capture.features``: one weight per
feature and class, the classes ``none`` and the statement categories of
the detector. Beside the general features it has a learned vocabulary:
weights for lexical keys (``features.keys``: words, word pairs, the lead
words) and for the verdict of the rules (``rule:<category>``), so that it
can weigh what a rule said against the rest of the statement. The weights
are data (``scorer_weights.json``, written by benchmarks/capture_train.py;
what it was trained and judged on is written in the file) and the
prediction is a sparse dot product in plain Python: nothing is imported but
``json`` and the features, so a hook that captures starts as fast as
before, and the file is read only when a statement is scored.

The rules of capture.detector stay the floor: without the file, they alone
decide; with it, the scorer names the category of what a rule found, and
keeps what no rule claimed.

With the semantic extra, a second model (``scorer_semantic.json``, trained
the same way by ``capture_train.py --semantic``) reads each statement's
embedding (capture/semantic.py) beside the same features: one more weight
per class and embedding dimension. It has its own thresholds; a statement
that gets no embedding (no extra, semantic off, the capture's budget spent)
is scored by the lexical model alone.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Final, NamedTuple

from .features import NAMES, features, keys

__all__ = ["SEMANTIC", "WEIGHTS", "Score", "Thresholds", "load", "score", "thresholds"]

WEIGHTS: Final = Path(__file__).resolve().parent / "scorer_weights.json"
#: The model that also reads a statement's embedding (with the semantic extra).
SEMANTIC: Final = Path(__file__).resolve().parent / "scorer_semantic.json"


class Score(NamedTuple):
    """The scorer's verdict on a statement."""

    category: str | None  # the best class that is not "none", if any
    p: float  # its probability
    none: float  # the probability that nothing in it is worth keeping
    model: _Model | None = None  # the model that gave it (whose thresholds apply)


class _Model(NamedTuple):
    classes: tuple[str, ...]
    columns: tuple[tuple[float, ...], ...]  # one per feature of NAMES: its weight per class
    vocab: dict[str, tuple[float, ...]]  # a lexical key -> its weight per class
    store: dict[str, float]  # per class: a statement is stored at this probability
    candidate: dict[str, float]  # ... and kept as a candidate at this one
    worth: float  # and only if the probability that it is not "none" is at least this
    sure: float  # a statement at least this likely not "none" is stored whatever its p
    veto: float  # a rule's find is dropped when p(none) is at least this
    embedding: tuple[float, Any] | None = None  # (scale, weights: classes x dimensions)
    answer: float = 1.01  # "sure" for a statement that answers the agent's question


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

    vocab = {k: tuple(float(w) for w in row) for k, row in data.get("vocab", {}).items()}
    embedding = None
    block = data.get("embedding")
    if block is not None:
        from memory_chain.index.vectors import MODEL

        if block.get("model") != MODEL:
            return None  # weights for another model's vectors
        import numpy as np

        weights = np.asarray(block["weights"], dtype=np.float32)
        embedding = (float(block["scale"]), weights)
    return _Model(
        classes,
        tuple(zip(*rows, strict=True)),
        vocab,
        per_class(data["store"]),
        per_class(data["candidate"]),
        float(data.get("worth", 0.0)),
        float(data.get("sure", 1.01)),
        float(data.get("veto", 1.01)),
        embedding,
        float(data.get("answer", data.get("sure", 1.01))),
    )


def score(statement: str, model: _Model | None = None, rule: str | None = None) -> Score | None:
    """The class probabilities of ``statement``, which a rule of the detector found to be
    of category ``rule`` (None: no rule claimed it); None without a model."""
    if model is None:
        model = _semantic(statement) or load()
    if model is None:
        return None
    # every feature is 0 or 1 and most are 0: the logits are sums of the active rows
    vocab = model.vocab
    rows = [model.columns[i] for i, v in enumerate(features(statement)) if v]
    rows += [vocab[k] for k in {*keys(statement), f"rule:{rule}"} if k in vocab]
    logits = [sum(column) for column in zip(*rows, strict=True)]
    if model.embedding is not None:
        from .semantic import vector

        v = vector(statement)
        if v is None:  # no embedding after all: the lexical model's verdict
            return score(statement, load(), rule) if load() is not None else None
        scale, weights = model.embedding
        logits = [a + float(b) for a, b in zip(logits, weights @ (v * scale), strict=True)]
    top = max(logits)
    exp = [math.exp(z - top) for z in logits]
    total = sum(exp)
    probs = [e / total for e in exp]
    best, p = None, 0.0
    for name, q in zip(model.classes, probs, strict=True):
        if name != "none" and q > p:
            best, p = name, q
    none = probs[model.classes.index("none")]
    return Score(best, p, none, model)


def _semantic(statement: str) -> _Model | None:
    """The semantic model, where the statement can be embedded; else None."""
    from .semantic import vector, wanted

    if not wanted() or vector(statement) is None:  # no budget (the prompt hook): no model
        return None
    model = load(SEMANTIC)
    return model if model is not None and model.embedding is not None else None


class Thresholds(NamedTuple):
    store: float  # p(category) from which a statement is stored
    candidate: float  # ... kept as a candidate
    worth: float  # and 1 - p(none) at least this
    sure: float  # or 1 - p(none) at least this, whatever p(category)
    veto: float  # a rule's find is dropped at p(none) from this
    answer: float  # "sure" for an answer to the agent's question


def thresholds(category: str, model: _Model | None = None) -> Thresholds:
    """The thresholds of the model in use for ``category``."""
    model = model or load()
    if model is None:
        return Thresholds(1.1, 1.1, 1.1, 1.1, 1.1, 1.1)
    return Thresholds(
        model.store.get(category, 1.1),
        model.candidate.get(category, 1.1),
        model.worth,
        model.sure,
        model.veto,
        model.answer,
    )

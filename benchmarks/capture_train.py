"""Train the capture scorer's weights (issue 24) and write capture/scorer_weights.json.

    .venv/bin/python benchmarks/capture_train.py [--dry-run]

Fits a multinomial logistic model over capture.features on the statements
of the corpus's **tune** part (tests/corpora/capture-tune.txt) and issue
12's corpus, one label per statement: the turn's category when the turn
holds one statement, and ``none`` for every statement of a turn that
stores nothing (a turn with several statements and labels is left out:
which statement carries which label is not written down). The L2 strength
is the one with the best macro F1 on the **choose** part (other frames,
other words). The thresholds are judged with the whole detector running on
the choose part and issue 12's corpus: per class, the lowest store
threshold whose precision is at least ``PRECISION`` (else the best F0.5);
then ``worth`` and ``sure`` (on 1 - p(none)), each the value with the best
recall that keeps precision at ``PRECISION``. The held-out part is never
read. numpy is needed here only.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from capture_quality import PARTS, load  # noqa: E402

from memory_chain.capture.detector import CATEGORIES, statements_of  # noqa: E402
from memory_chain.capture.features import NAMES, features  # noqa: E402
from memory_chain.capture.scorer import WEIGHTS  # noqa: E402

#: "none" and the categories a statement can have (error-fix pairs come from tool calls).
CLASSES = ("none", *(c for c in CATEGORIES if c != "error-fix"))
PRECISION = 0.92  # on the choose part, so that unseen text keeps >= 0.9
L2_GRID = (0.003, 0.01, 0.03, 0.1)
WORTH_GRID = (0.0, 0.8, 0.9, 0.95)
SURE_GRID = (1.01, 0.98, 0.96, 0.94, 0.92, 0.9)


def dataset(path: Path) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for session in load(path):
        for turn, labels, maybe in zip(
            session.turns, session.labels, session.candidates, strict=True
        ):
            if turn.role != "user" or maybe:
                continue  # a candidate-only turn ("~>") is neither stored nor nothing
            found = statements_of(turn.text)
            if labels and (len(labels) != 1 or len(found) != 1):
                continue
            label = next(iter(labels)) if labels else "none"
            if label not in CLASSES:
                continue
            for s in found:
                xs.append(features(s))
                ys.append(CLASSES.index(label))
    return np.array(xs, dtype=float), np.array(ys, dtype=int)


def fit(x: np.ndarray, y: np.ndarray, l2: float, epochs: int = 3000) -> np.ndarray:
    """Softmax regression by full-batch gradient descent (deterministic)."""
    n, d = x.shape
    k = len(CLASSES)
    w = np.zeros((k, d))
    onehot = np.eye(k)[y]
    # each class weighs as much as the others (convention is the most frequent label; a
    # model fitted to the counts calls every project statement a convention)
    counts = np.bincount(y, minlength=k).astype(float)
    weight = (n / (k * np.maximum(counts, 1.0)))[y][:, None]
    rate = 0.5
    for _ in range(epochs):
        z = x @ w.T
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = ((p - onehot) * weight).T @ x / n + l2 * np.hstack([np.zeros((k, 1)), w[:, 1:]])
        w -= rate * grad
    return w


def probs(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    z = x @ w.T
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def macro_f1(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    pred = probs(w, x).argmax(axis=1)
    scores = []
    for c in range(1, len(CLASSES)):
        tp = np.sum((pred == c) & (y == c))
        fp = np.sum((pred == c) & (y != c))
        fn = np.sum((pred != c) & (y == c))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)
    return float(np.mean(scores))


def turn_level(
    out: dict[str, object], store: Any, worth: float, paths: list[Path], sure: float = 1.01
) -> Any:
    """The whole detector's score (rules, then the scorer with these weights, this store
    threshold (one, or per class) and this worth threshold) on the turns of ``path``."""
    from capture_quality import score

    from memory_chain.capture import scorer

    trial = dict(out, store=store, candidate=store, worth=worth, sure=sure)
    WEIGHTS.write_text(json.dumps(trial) + "\n", encoding="utf-8")
    scorer.load.cache_clear()
    return score([s for path in paths for s in load(path)])


def f_half(result: Any, c: str) -> float:
    p, r = result.precision(c), result.recall(c)
    return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0


def main() -> None:
    tune, choose = PARTS["tune"], PARTS["choose"]
    # issue 12's corpus (hand-written; the rules were written from it) adds phrasings and
    # negatives the generator has not; issue 12's held-out set stays out
    x1, y1 = dataset(tune)
    x2, y2 = dataset(PARTS["issue 12 corpus"])
    x, y = np.vstack([x1, x2]), np.concatenate([y1, y2])
    xc, yc = dataset(choose)
    print(f"tune: {len(y)} statements, choose: {len(yc)} statements, {len(NAMES)} features")
    results = []
    for l2 in L2_GRID:
        w = fit(x, y, l2)
        results.append((macro_f1(w, xc, yc), l2, w))
        print(
            f"  l2 {l2}: macro F1 on choose {results[-1][0]:.3f}, on tune {macro_f1(w, x, y):.3f}"
        )
    f1, l2, w = max(results, key=lambda r: r[0])
    out: dict[str, object] = {
        "about": "capture scorer weights: benchmarks/capture_train.py (issue 24)",
        "trained_on": [
            hashlib.sha256(tune.read_bytes()).hexdigest(),
            hashlib.sha256(PARTS["issue 12 corpus"].read_bytes()).hexdigest(),
        ],
        "chosen_on": hashlib.sha256(choose.read_bytes()).hexdigest(),
        "l2": l2,
        "classes": list(CLASSES),
        "features": list(NAMES),
        "weights": [[round(float(v), 4) for v in row] for row in w],
    }
    # The store thresholds, one per class: the lowest at which that class's precision on
    # the choose part, the whole detector running (rules included), is at least PRECISION.
    before = WEIGHTS.read_bytes() if WEIGHTS.exists() else None
    # judged on the choose part and on issue 12's hand-written corpus: its negatives
    # (small talk, "no worries", reminiscing) are what a generator writes least
    judge = [choose, PARTS["issue 12 corpus"]]
    # Two thresholds: how sure the model is that a statement is worth keeping at all
    # (1 - p(none), one for all), and how sure it is of the category (per class).
    grid = [round(0.35 + 0.05 * n, 2) for n in range(10)]
    options = []
    for worth in WORTH_GRID:
        runs = {t: turn_level(out, t, worth, judge) for t in grid}
        store: dict[str, float] = {}
        for c in CLASSES[1:]:
            good = [t for t in grid if runs[t].precision(c) >= PRECISION]
            # where the rules alone keep a class below PRECISION, the threshold that
            # weighs precision twice as much as recall (F0.5) for that class
            store[c] = good[0] if good else max(grid, key=lambda t: f_half(runs[t], c))
        r = turn_level(out, store, worth, judge)
        print(f"  worth {worth}: choose precision {r.precision():.3f}, recall {r.recall():.3f}")
        options.append((r.precision() >= PRECISION, r.recall(), r.precision(), worth, store))
    _, _, _, worth, store = max(options, key=lambda o: (o[0], o[1]))
    # Then "sure": a statement the model is this sure is worth keeping is kept as its best
    # category however the probability is split between categories; chosen the same way.
    sures = []
    for sure in SURE_GRID:
        r = turn_level(out, store, worth, judge, sure)
        print(f"  sure {sure}: choose precision {r.precision():.3f}, recall {r.recall():.3f}")
        sures.append((r.precision() >= PRECISION, r.recall(), sure))
    _, _, sure = max(sures, key=lambda o: (o[0], o[1]))
    print(f"chose l2 {l2} (F1 {f1:.3f}); worth {worth}, sure {sure}, store from {store}")
    out["worth"] = worth
    out["sure"] = sure
    out["store"] = store
    # candidates: a band of 0.1 below the store threshold, and none below 0.45
    out["candidate"] = {c: round(max(t - 0.1, min(t, 0.45)), 2) for c, t in store.items()}
    if "--dry-run" in sys.argv:
        if before is None:
            WEIGHTS.unlink()
        else:
            WEIGHTS.write_bytes(before)
        return
    WEIGHTS.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()

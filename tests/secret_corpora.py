"""The labelled secret corpora, by part: what the rules were tuned on, and what was held out.

tests/corpora/ holds eight tuning parts (seven files of templates, one
grammar), each written as a held-out part and scored before its misses
were fixed, and two held-out parts written after the tuning they follow and
never tuned on. ``PARTS`` maps a part's name to (text, is a secret, kind) rows; the
first-pass figures of each are in benchmarks/README.md. The old corpus of
issue 9 (tests/secrets_corpus.py) is the part "issue9".
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpora"))
sys.path.insert(0, str(HERE / "helpers"))

from secret_values import load  # noqa: E402
from secrets_corpus import CORPUS  # noqa: E402
from secrets_tune4 import corpus as tune4  # noqa: E402

Row = tuple[str, bool, str]

TUNING: dict[str, list[Row]] = {
    "issue9": list(CORPUS),
    "tune1": load(HERE / "corpora" / "secrets-tune.tsv"),
    "tune2": load(HERE / "corpora" / "secrets-tune2.tsv"),
    "tune3": load(HERE / "corpora" / "secrets-tune3.tsv"),
    "tune4": tune4(),
    "tune5": load(HERE / "corpora" / "secrets-tune5.tsv"),
    "tune6": load(HERE / "corpora" / "secrets-tune6.tsv"),
    "tune7": load(HERE / "corpora" / "secrets-tune7.tsv"),
    "tune8": load(HERE / "corpora" / "secrets-tune8.tsv"),
}
HELD_OUT: dict[str, list[Row]] = {
    "heldout": load(HERE / "corpora" / "secrets-heldout.tsv"),
    "heldout2": load(HERE / "corpora" / "secrets-heldout2.tsv"),
}
PARTS: dict[str, list[Row]] = {**TUNING, **HELD_OUT}


def rates(rows: list[Row], flagged: list[bool]) -> tuple[float, float]:
    """(share of secrets flagged, share of non-secrets flagged)."""
    secrets = [f for (_, s, _), f in zip(rows, flagged, strict=True) if s]
    plain = [f for (_, s, _), f in zip(rows, flagged, strict=True) if not s]
    return sum(secrets) / len(secrets), sum(plain) / len(plain)

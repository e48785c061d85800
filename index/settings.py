"""Tunables of recall and GC: defaults, config.json's "index" member, and parsing.

config.json may carry an ``"index"`` object (unknown members of config.json
survive rewrites), for example::

    "index": {"weights": [0.4, 0.3, 0.2, 0.1], "ephemeral_ttl_hours": 24, "semantic": true,
              "url": "postgresql://mc@db.internal:5432/fleet"}

Command-line options override it. ``url`` is the fleet's PostgreSQL database
(index/fleet.py): `memory-chain index` and the maintain job sync the chain there.
"""

from __future__ import annotations

import math
from typing import Any, Final, NamedTuple

from memory_chain.chain.format.errors import InputError, OperationalError

__all__ = ["DEFAULT_WEIGHTS", "Settings", "Weights", "parse_weights", "settings_from_config"]

HOUR_US: Final = 3_600_000_000
DAY_US: Final = 24 * HOUR_US


class Weights(NamedTuple):
    """Weights of the hybrid recall score (they need not sum to 1). A NamedTuple, not a
    dataclass: this module is on every command's start path, and a frozen dataclass costs
    about a millisecond to define."""

    text: float = 0.4
    recency: float = 0.3
    importance: float = 0.2
    access: float = 0.1

    def as_list(self) -> list[float]:
        return [self.text, self.recency, self.importance, self.access]


DEFAULT_WEIGHTS: Final = Weights()


class Settings(NamedTuple):
    weights: Weights = DEFAULT_WEIGHTS
    ephemeral_ttl_hours: float = 24.0
    #: config.json "index.semantic": False turns vector recall off, True or absent uses it
    #: whenever the semantic extra is installed (index/vectors.py).
    semantic: bool | None = None
    #: config.json "index.url": the fleet's PostgreSQL database (index/fleet.py), if any.
    url: str | None = None

    @property
    def ephemeral_ttl_us(self) -> int:
        return round(self.ephemeral_ttl_hours * HOUR_US)


def _weights(values: list[Any], where: str) -> Weights:
    if len(values) != 4:
        raise InputError(
            f"{where}: want 4 weights (text, recency, importance, access), got {len(values)}",
            hint="for example 0.4,0.3,0.2,0.1",
        )
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise InputError(f"{where}: weight {v!r} is not a number >= 0")
        out.append(float(v))
    if not any(out):
        raise InputError(f"{where}: at least one weight must be above 0")
    return Weights(*out)


def parse_weights(text: str) -> Weights:
    """``"0.4,0.3,0.2,0.1"`` (text, recency, importance, access) as Weights."""
    parts = [p.strip() for p in text.split(",")]
    values: list[Any] = []
    for p in parts:
        try:
            values.append(float(p))
        except ValueError:
            raise InputError(
                f"--weights: {p!r} is not a number", hint="for example 0.4,0.3,0.2,0.1"
            ) from None
    return _weights(values, "--weights")


def check_ttl(hours: float, where: str) -> float:
    if isinstance(hours, bool) or not isinstance(hours, (int, float)):
        raise InputError(f"{where}: {hours!r} is not a number of hours")
    if not math.isfinite(hours) or hours <= 0:
        raise InputError(f"{where}: the ephemeral lifetime must be a number of hours above 0")
    return float(hours)


def settings_from_config(data: dict[str, Any]) -> Settings:
    """Settings from config.json's parsed data (its "index" member, if any)."""
    raw = data.get("index")
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        raise OperationalError('config.json: "index" must be an object')
    try:
        weights = (
            _weights(list(raw["weights"]), "config.json index.weights")
            if "weights" in raw
            else DEFAULT_WEIGHTS
        )
        ttl = raw.get("ephemeral_ttl_hours", 24.0)
        ttl = check_ttl(ttl, "config.json index.ephemeral_ttl_hours")
    except TypeError:
        raise OperationalError("config.json: index.weights must be a list of 4 numbers") from None
    semantic = raw.get("semantic")
    if semantic is not None and not isinstance(semantic, bool):
        raise OperationalError("config.json: index.semantic must be true or false")
    url = raw.get("url")
    if url is not None and not (
        isinstance(url, str) and url.startswith(("postgresql://", "postgres://"))
    ):
        raise OperationalError("config.json: index.url must be a postgresql:// URL")
    return Settings(weights, ttl, semantic, url)


def semantic_setting(data_dir: Any) -> bool | None:
    """config.json's ``index.semantic`` in ``data_dir`` (None: not set, or no config yet):
    what capture asks before it embeds statements (capture/semantic.py)."""
    from memory_chain.chain.format.config import Config, Layout

    try:
        raw = Config.load(Layout(data_dir)).data.get("index")
    except OperationalError:
        return None
    value = raw.get("semantic") if isinstance(raw, dict) else None
    return value if isinstance(value, bool) else None

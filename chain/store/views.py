"""Read-only views of a chain for people: stats, recent entries, one entry.

These read the chain without verifying it (that is `verify`'s job); they
report what the lines say.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

import orjson

from ..format.canonical import b3
from .ledger import Ledger

__all__ = ["EntryView", "chain_stats", "entry_view", "recent"]


@dataclass(frozen=True, slots=True)
class EntryView:
    entry: dict[str, Any]
    redacted_by: int | None
    text: str | None  # the content, when asked for and present

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.entry)
        out["redacted_by"] = self.redacted_by
        if self.text is not None:
            out["text"] = self.text
        return out


def _redactions(ledger: Ledger) -> dict[int, int]:
    return {
        obj["meta"]["target"]: obj["seq"] for obj in ledger.entries() if obj["type"] == "redaction"
    }


def _text(ledger: Ledger, content: str | None) -> str | None:
    if content is None:
        return None
    data = ledger.store.get(content)
    return None if data is None else data.decode("utf-8", errors="replace")


def entry_view(ledger: Ledger, seq: int, *, with_content: bool) -> EntryView:
    obj = ledger.entry(seq)
    redacted_by = _redactions(ledger).get(seq)
    text = _text(ledger, obj["content"]) if with_content and redacted_by is None else None
    return EntryView(obj, redacted_by, text)


def recent(
    ledger: Ledger, *, limit: int, type_: str | None = None, tier: str | None = None
) -> list[EntryView]:
    """The newest ``limit`` entries matching the filters, newest first, with content."""
    keep: deque[dict[str, Any]] = deque(maxlen=max(limit, 0))
    redactions: dict[int, int] = {}
    for obj in ledger.entries():
        if obj["type"] == "redaction":
            redactions[obj["meta"]["target"]] = obj["seq"]
        if (type_ is None or obj["type"] == type_) and (tier is None or obj["tier"] == tier):
            keep.append(obj)
    views = []
    for obj in reversed(keep):
        by = redactions.get(obj["seq"])
        views.append(EntryView(obj, by, None if by is not None else _text(ledger, obj["content"])))
    return views


def chain_stats(ledger: Ledger) -> dict[str, Any]:
    """Counts and sizes of the chain, its blobs and its key."""
    types: Counter[str] = Counter()
    tiers: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    n = 0
    first = last = None
    redacted = 0
    key = None
    head = None
    chain_id = None
    for raw in ledger.iter_lines():
        if not raw.endswith(b"\n"):
            break
        obj = orjson.loads(raw)
        n += 1
        types[obj["type"]] += 1
        tiers[obj["tier"]] += 1
        sources[obj["source"]] += 1
        first = first or obj["ts"]
        last = obj["ts"]
        if obj["type"] == "redaction":
            redacted += 1
        if obj["seq"] == 0:
            key = obj["key"]
        elif obj["type"] == "key-rotation":
            key = obj["meta"]["new_key"]
        head = raw[:-1]
    if n:
        with open(ledger.layout.chain, "rb") as f:
            chain_id = b3(f.readline()[:-1])
    blobs, blob_bytes = ledger.store.count()
    return {
        "dir": str(ledger.layout.root),
        "name": ledger.config.name,
        "chain_id": chain_id,
        "entries": n,
        "head": b3(head) if head is not None else None,
        "first_ts": first,
        "last_ts": last,
        "by_type": dict(sorted(types.items())),
        "by_tier": dict(sorted(tiers.items())),
        "by_source": dict(sorted(sources.items())),
        "redacted": redacted,
        "blobs": blobs,
        "blob_bytes": blob_bytes,
        "chain_bytes": ledger.layout.chain.stat().st_size,
        "key": key,
        "key_mode": ledger.config.key_mode,
    }

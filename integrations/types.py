"""The types of the API's arguments and results (``from memory_chain import Tier``).

Literal types name the values a memory's fields take, so that a misspelled
tier (``tier="comitted"``) is a type error before it is a runtime one; the
values are checked again at run time (chain/format/entry.py holds them, and
tests/test_api_types.py keeps both lists equal). Results are TypedDicts:
plain dicts at run time (what ``--json`` prints), typed for a checker.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

__all__ = ["Added", "ContentType", "Found", "Origin", "Scope", "Source", "Tier"]

#: What a memory is (chain/format/entry.py CONTENT_TYPES).
ContentType = Literal[
    "memory", "identity", "decision", "commitment", "preference", "fact", "lesson", "episode"
]
#: How long it is kept: committed (never collected), relationship, ephemeral (a day).
Tier = Literal["committed", "relationship", "ephemeral"]
#: Who wrote it down: a person or agent by hand, capture, or curation.
Source = Literal["manual", "auto", "curation"]
#: Which MEMORY.md: the user's, the project's (shared in git), this machine's.
Scope = Literal["user", "project", "local"]
#: Where its words came from (FORMAT.md 4.4).
Origin = Literal["person", "agent", "capture", "tool", "quoted"]


class Added(TypedDict):
    """What ``Memory.add`` returns: the new entry's seq, hash, time and content hash."""

    seq: int
    hash: str
    ts: str
    content: str


class Found(TypedDict):
    """One result of ``Memory.search``: a chain memory (``provable``, with its seq and
    the chain's fields) or a workspace entry (``editable`` or ``untrusted``, with its
    scope, path and line)."""

    kind: Literal["provable", "editable", "untrusted"]
    score: float
    text: str
    role: Literal["guidance", "note", "withheld"]
    origin: str | None
    # a chain memory's
    seq: NotRequired[int]
    type: NotRequired[ContentType]
    tier: NotRequired[Tier]
    source: NotRequired[Source]
    ts: NotRequired[str]
    importance: NotRequired[int]
    status: NotRequired[str]
    session: NotRequired[str | None]
    content: NotRequired[str]
    tokens: NotRequired[int]
    access_count: NotRequired[int]
    parts: NotRequired[dict[str, float]]
    approved: NotRequired[str | None]
    superseded_by: NotRequired[int | None]
    # a workspace entry's
    scope: NotRequired[Scope]
    path: NotRequired[str]
    line: NotRequired[int]
    section: NotRequired[str | None]
    stale: NotRequired[bool]

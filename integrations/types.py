"""The types of the API's arguments and results (``from memory_chain import Tier``).

Literal types name the values a memory's fields take, so that a misspelled
tier (``tier="comitted"``) is a type error before it is a runtime one; the
values are checked again at run time (chain/format/entry.py holds them, and
tests/test_api_types.py keeps both lists equal). Results are TypedDicts:
plain dicts at run time (what ``--json`` prints), typed for a checker.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Added",
    "ContentType",
    "Entry",
    "FileInfo",
    "Found",
    "Origin",
    "Proof",
    "Recent",
    "Redacted",
    "Remembered",
    "Scope",
    "Source",
    "Tier",
    "Verified",
    "Waiting",
]

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


class Entry(TypedDict):
    """What ``Memory.get`` returns: the signed entry's 13 members (FORMAT.md 2.1), the
    redaction's seq when its content was withdrawn, and its text when it is there."""

    v: int
    seq: int
    ts: str
    type: str
    tier: Tier
    source: Source
    importance: int
    content: str | None
    size: int
    prev: str | None
    key: str
    meta: dict[str, Any]
    sig: str
    redacted_by: int | None
    text: NotRequired[str]


class Recent(TypedDict):
    """One memory of ``Memory.recent``: the newest shown first."""

    seq: int
    ts: str
    type: ContentType
    tier: Tier
    source: Source
    text: str


class Redacted(TypedDict):
    """What ``Memory.redact`` returns: the entry whose content was withdrawn, the
    redaction's seq (None when this call only finished an earlier one), the content
    hash, and whether its record was erased from its pack or kept (another memory
    holds the same words)."""

    target: int
    seq: int | None
    content: str
    erased: bool
    erased_in: list[str]  # the pack files (content/packs/...) whose record was zeroed
    shared: bool


class Failure(TypedDict):
    """Where and why a verification failed (FORMAT.md 5.2)."""

    seq: int
    step: int
    reason: str
    message: str


class Verified(TypedDict):
    """What ``Memory.verify`` returns (`verify --json`; FORMAT.md 5.4)."""

    ok: bool
    entries: int
    head: str | None
    chain_id: str | None
    key: str | None
    verified_from: int | None
    content_from: int | None
    resumed: bool
    checked: str | None
    root: str | None
    torn_tail_bytes: int
    failure: Failure | None


class ProvedLine(TypedDict):
    """A chain line and its inclusion proof (hex hashes, leaf to root)."""

    line: str
    inclusion: list[str]


class Proof(TypedDict):
    """What ``Memory.prove`` returns: the proof bundle `prove` writes (FORMAT.md 8)."""

    format: str
    checkpoint: str
    genesis: ProvedLine
    rotations: list[ProvedLine]
    entry: ProvedLine
    anchors: list[dict[str, Any]]
    public_key: str
    content: NotRequired[str]


class Remembered(TypedDict):
    """What ``Memory.remember`` returns: what happened to the entry (added, unchanged,
    updated, superseded ...), where it is, and the replaced wording when there was one."""

    action: str
    scope: Scope | None
    path: str
    line: int | None
    text: str | None
    section: str | None
    merged: bool
    old: NotRequired[str]
    contradicts: NotRequired[list[int]]  # the lines of MEMORY.md it contradicts


class Waiting(TypedDict):
    """An entry waiting for a person's review (``Memory.review_queue``)."""

    id: str
    scope: Scope
    line: int
    section: str | None
    text: str
    origin: Origin
    added: str | None
    ref: str | None
    seq: int | None


class FileInfo(TypedDict):
    """A memory file of a scope: its path in the scope, its summary line, its size."""

    path: str
    summary: str
    size: int

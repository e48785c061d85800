"""Where a memory's words came from, and what that lets it do (specs/WORKSPACE.md 3.5).

Every memory has an **origin**:

``person``
    typed by a person: the CLI at a terminal, an editor, the person's own
    explicit "remember ..." in a conversation;
``agent``
    the model wrote it through a tool (MCP, the memory tool, the API);
``capture``
    detected automatically in a conversation, or curated from what was;
``tool``
    derived from tool output, a web page, a file the agent read, another
    MCP server or a subagent;
``quoted``
    text the person pasted or quoted (a document, an issue, an e-mail, a log).

In MEMORY.md and the daily files the origin rides in the entry's metadata
(``from=``), with ``h=``, a mark of the text it was written with: a line a
person edits by hand no longer matches its mark and becomes ``person``, and
a line with no metadata at all is a person's. In the chain it is the signed
metadata member ``origin`` (specs/FORMAT.md 4.4).

The **injection policy** lives here too (``role``): guidance is what a
person wrote or approved (``ok=`` in the metadata, ``approved`` in the
chain); what an agent or capture wrote is shown as a note, dated, never as
an instruction; ``tool`` and ``quoted`` text is never injected.
"""

from __future__ import annotations

import os
from typing import Final, Literal

from memory_chain.chain.format.entry import ORIGINS
from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.patterns import lazy

from .markdown import Entry, Meta

__all__ = [
    "ORIGINS",
    "Role",
    "chain_role",
    "claim_new",
    "injected",
    "mark",
    "origin_of",
    "role",
    "stamp",
    "terminal_origin",
]

Role = Literal["guidance", "note", "withheld"]

#: The metadata ``src`` values of revisions before provenance, read as an origin.
_LEGACY: Final = {"manual": "person", "auto": "capture", "curation": "capture"}


def mark(text: str) -> str:
    """The ``h=`` mark of an entry's text: 8 hex digits of BLAKE2b over its words."""
    import hashlib  # a search that marks nothing does not pay its import

    words = " ".join(text.split()).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(words, digest_size=4).hexdigest()


def stamp(meta: Meta, text: str, origin: str) -> Meta:
    """``meta`` with the origin and the mark of ``text`` (what every writer records)."""
    if origin not in ORIGINS:
        raise InputError(f"unknown origin {origin!r}", hint=f"one of: {', '.join(ORIGINS)}")
    return meta.with_(**{"from": origin, "h": mark(text)})


def origin_of(entry: Entry) -> str:
    """Where an entry's words came from, as the file says now (see the module docstring)."""
    if entry.comment is None:
        return "person"  # no metadata: written by hand
    meta = entry.meta
    said = meta.get("from")
    h = meta.get("h")
    if said in ORIGINS:
        if h is not None and h != mark(entry.text):
            return "person"  # edited by hand since it was written
        return said
    if meta.untrusted:
        return "tool"
    return _LEGACY.get(meta.get("src") or "", "person")


def role(origin: str, *, approved: bool) -> Role:
    """What the session start and the prompt hook do with an entry of ``origin``."""
    if origin in ("tool", "quoted"):
        return "withheld"
    if origin == "person" or approved:
        return "guidance"
    return "note"


def chain_role(origin: str | None, *, approved: bool) -> Role:
    """``role`` for a chain entry; entries signed before provenance (no origin) stay guidance."""
    return "guidance" if origin is None else role(origin, approved=approved)


def terminal_origin() -> str:
    """The origin of a CLI write: ``$MEMORY_CHAIN_ORIGIN`` when set, else ``agent`` under an
    agent's shell (Claude Code sets CLAUDECODE=1 in its tools' shells), else ``person``."""
    said = os.environ.get("MEMORY_CHAIN_ORIGIN")
    if said in ORIGINS:
        return said
    return "agent" if os.environ.get("CLAUDECODE") == "1" else "person"


_DAILY_NAME: Final = lazy(r"\d{4}-\d{2}-\d{2}\.md")


def injected(path: str) -> bool:
    """Whether a workspace file's entries are injected at session start (MEMORY.md and
    the daily files): the files whose lines a tool call must mark as the agent's."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    name = parts[-1]
    return name == "MEMORY.md" or (
        len(parts) >= 2 and parts[-2] == "memory" and _DAILY_NAME.fullmatch(name) is not None
    )


def claim_new(old: bytes | None, new: bytes, origin: str, day: str) -> bytes:
    """``new`` with the entries a tool call added (no metadata, words not in ``old``)
    marked as ``origin``'s: a whole-file write by an agent cannot pass its lines off
    as a person's. Entries that were there before keep their bytes."""
    from .markdown import Document

    doc = Document.parse(new)
    if doc.open_fence is not None:
        return new  # a file the writers refuse to edit: left as it is
    before = {" ".join(e.text.split()) for e in Document.parse(old or b"").entries()}
    fresh = [
        e
        for e in doc.entries()
        if e.comment is None and e.text and " ".join(e.text.split()) not in before
    ]
    if not fresh:
        return new
    for e in reversed(fresh):  # bottom up: one line becomes one line, the rest stay put
        doc = doc.rewrite_entry(e, meta=stamp(Meta().with_(added=day), e.text, origin))
    return doc.render()

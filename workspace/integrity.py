"""Holding the two halves together: the workspace checked against the chain (read only).

``check_workspace`` reads every workspace file of the scopes in force and
reports (specs/WORKSPACE.md section 10):

errors (``verify --workspace`` exits 1)
  * ``edited-committed``: an entry claims a chain seq (``seq=`` in its
    metadata) but its text is not that entry's content (whitespace aside);
  * ``missing-entry``: the seq it claims is not a memory in the chain;
  * ``unreadable``: a file that is not UTF-8, holds a NUL byte, or has an
    unclosed ``<!-- mc:`` metadata comment;

warnings
  * ``redacted-entry``: the claimed chain entry's content was redacted;
  * ``contradiction``: two entries of one section say opposite things
    (seed 002's integrity scan; dedup.contradicts);
  * ``stale``: marked ``[?]``, or not confirmed for more than 90 days.

It never writes a file.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .dedup import contradicts
from .files import read_bytes
from .indexing import file_problem
from .markdown import Document, Entry
from .scopes import Workspace

__all__ = ["Finding", "check_workspace", "index_lookup", "seq_problem"]

ERRORS = frozenset({"edited-committed", "missing-entry", "unreadable"})

#: seq -> (type, content text or None when redacted), or None when there is no such memory.
Lookup = Callable[[int], tuple[str, str | None] | None]


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    scope: str
    path: str
    line: int | None
    message: str

    @property
    def error(self) -> bool:
        return self.kind in ERRORS

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": "error" if self.error else "warning",
            "scope": self.scope,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


def _flat(text: str) -> str:
    return " ".join(text.split())


#: A daily file's entry starts with the time it was written (section 4.1).
_DAILY_TIME = re.compile(r"^\d{1,2}:\d{2}\s+")


def seq_problem(e: Entry, lookup: Lookup, *, daily: bool = False) -> tuple[str, str] | None:
    """(kind, message) when the chain entry an entry claims does not hold its text
    (a daily file's entry: its text after the ``HH:MM``)."""
    seq = e.meta.seq
    if seq is None:
        return None
    found = lookup(seq)
    if found is None:
        return "missing-entry", f"claims chain seq {seq}, which is not a memory in the chain"
    if found[1] is None:
        return "redacted-entry", f"claims chain seq {seq}, whose content was redacted"
    text = _DAILY_TIME.sub("", e.text, count=1) if daily else e.text
    if _flat(found[1]) != _flat(text):
        return "edited-committed", (
            f"claims chain seq {seq} but its text is not that entry's content "
            "(edited after it was committed)"
        )
    return None


def _contradictions(doc: Document) -> Iterator[tuple[int, str]]:
    """(line, message) for each entry that contradicts an earlier one of its section."""
    for s in doc.sections:
        for i, a in enumerate(s.entries):
            for b in s.entries[i + 1 :]:
                if contradicts(a.text, b.text):
                    yield b.line, f"contradicts line {a.line} in section {s.title!r}"


def index_lookup(conn: sqlite3.Connection) -> Lookup:
    """The Lookup of a memory.db connection (the index's ``memories`` table)."""

    def lookup(seq: int) -> tuple[str, str | None] | None:
        row = conn.execute("SELECT type, content FROM memories WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else (row[0], row[1])

    return lookup


def check_workspace(
    workspace: Workspace,
    lookup: Lookup,
    *,
    today: date | None = None,
    stale_days: int = 90,
) -> list[Finding]:
    """Every finding, file by file (see the module docstring)."""
    limit = (today or date.today()) - timedelta(days=stale_days)
    out: list[Finding] = []
    for scope in workspace.in_order():
        for kind, path in scope.files():
            data = read_bytes(path) or b""
            at = (scope.name, path.relative_to(scope.root).as_posix())
            problem = file_problem(data)
            if problem is not None:
                out.append(Finding("unreadable", *at, None, problem))
            doc = Document.parse(data)
            for e in doc.entries():
                found = seq_problem(e, lookup, daily=kind == "daily")
                if found is not None:
                    out.append(Finding(found[0], *at, e.line, found[1]))
                seen = e.meta.seen
                if kind != "archive" and (e.stale or (seen is not None and seen < limit)):
                    why = "marked [?]" if e.stale else f"not confirmed since {seen}"
                    out.append(Finding("stale", *at, e.line, why))
            if kind in ("memory", "topic"):
                for line, message in _contradictions(doc):
                    out.append(Finding("contradiction", *at, line, message))
    return out

"""Keeping MEMORY.md small and current: decay, consolidation, the rolling window.

* **decay** (seed 000 section 5.4): an entry whose last confirmation (else
  its ``added`` date) is more than 90 days old gets the ``[?]`` mark;
  ``confirm`` clears it. Entries with neither date (written by hand) are
  left alone: their age is unknown.
* **consolidate** (seed 000 section 5.3): over the line cap (default 200),
  exact duplicates in a section are merged (the first kept, the others'
  new sub-lines added to it), then the largest sections are moved, entries
  and all, to topic files ``memory/<section>.md`` linked under ``## Links``,
  until the file is under the cap. Every entry stays, in MEMORY.md or in a
  linked topic file; topic files are written before MEMORY.md.
* **trim** (seed 002 section 7, opt-in): the rolling window keeps at most N
  entries; the oldest (by ``added``, undated first, then file order) go to
  the archive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError

from .dedup import normalize
from .files import ConflictError, edit, locked, read_bytes
from .markdown import Document, Entry, encode
from .ops import append_archive, archive_block, iso
from .scopes import Scope

__all__ = ["DECAY_DAYS", "LINE_CAP", "Report", "consolidate", "decay", "slug", "trim"]

DECAY_DAYS: Final = 90
LINE_CAP: Final = 200


@dataclass(slots=True)
class Report:
    """What a housekeeping pass did (or, with dry_run, would do)."""

    action: str
    scope: str
    path: Path
    changed: list[dict[str, Any]] = field(default_factory=list)
    lines_before: int = 0
    lines_after: int = 0
    dry_run: bool = False
    written: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "scope": self.scope,
            "path": str(self.path),
            "changed": self.changed,
            "lines_before": self.lines_before,
            "lines_after": self.lines_after,
            "dry_run": self.dry_run,
            "written": self.written,
        }


def decay(
    scope: Scope, *, days: int = DECAY_DAYS, today: date | None = None, dry_run: bool = False
) -> Report:
    """Mark ``[?]`` on entries not confirmed for more than ``days`` days."""
    day = today or date.today()
    limit = day - timedelta(days=days)
    report = Report("decay", scope.name, scope.memory_md, dry_run=dry_run)

    def change(current: bytes | None) -> bytes | None:
        doc = Document.parse(current or b"")
        report.changed.clear()
        report.lines_before = report.lines_after = len(doc.lines)
        for e in doc.entries():
            seen = e.meta.seen
            if e.stale or seen is None or seen >= limit:
                continue
            report.changed.append({"line": e.line, "text": e.text, "confirmed": iso(seen)})
            doc = doc.rewrite_entry(e, stale=True)
        return None if dry_run or not report.changed else doc.render()

    if dry_run:
        change(read_bytes(scope.memory_md))
        return report
    report.written = edit(scope.memory_md, change, lock_root=scope.root).written
    return report


def slug(title: str) -> str:
    """A topic file name for a section title: ``People & Roles`` -> ``people-roles``."""
    s = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")
    return s[:60] or "topic"


def _merge_duplicates(doc: Document, report: Report) -> Document:
    """Within each section, fold entries with the same normalised text into the first."""
    while True:
        for section in doc.sections:
            seen: dict[str, Entry] = {}
            for e in section.entries:
                key = normalize(e.text)
                first = seen.get(key)
                if first is None:
                    seen[key] = e
                    continue
                extra = [doc.lines[i] for i in range(e.start + 1, e.end)]
                extra = [x for x in extra if x not in doc.lines[first.start + 1 : first.end]]
                report.changed.append({"merged": e.text, "into_line": first.line, "line": e.line})
                # Later lines first, so that ``first``'s line numbers still hold.
                doc = doc.replace(e.start, e.end, [])
                doc = doc.replace(first.end, first.end, extra)
                break
            else:
                continue
            break
        else:
            return doc


def consolidate(
    scope: Scope, *, cap: int = LINE_CAP, today: date | None = None, dry_run: bool = False
) -> Report:
    """Bring MEMORY.md under ``cap`` lines without losing an entry (see the module docstring)."""
    if cap < 10:
        raise InputError("the line cap must be at least 10")
    day = today or date.today()
    report = Report("consolidate", scope.name, scope.memory_md, dry_run=dry_run)
    with locked(scope.root):
        before = read_bytes(scope.memory_md)
        doc = Document.parse(before or b"")
        report.lines_before = report.lines_after = len(doc.lines)
        if len(doc.lines) <= cap:
            return report
        doc = _merge_duplicates(doc, report)
        moves: list[tuple[str, list[tuple[str, list[str]]]]] = []
        while len(doc.lines) > cap:
            candidates = [s for s in doc.sections if s.entries and s.title.casefold() != "links"]
            if not candidates:
                break
            biggest = max(candidates, key=lambda s: sum(e.end - e.start for e in s.entries))
            title = biggest.title or "Notes"
            blocks = [(e.text, doc.lines[e.start : e.end]) for e in biggest.entries]
            moves.append((title, blocks))
            report.changed.append(
                {"moved": title, "entries": len(biggest.entries), "to": f"memory/{slug(title)}.md"}
            )
            doc = _drop_section_entries(doc, biggest.title)
            doc = _link(doc, title)
        report.lines_after = len(doc.lines)
        if dry_run:
            return report
        for title, blocks in moves:
            _append_topic(scope, title, blocks, day)
        after = doc.render()

        def change(current: bytes | None) -> bytes:
            if current != before:
                raise ConflictError(
                    "MEMORY.md changed during consolidation; the topic files already hold "
                    "copies of the moved entries, MEMORY.md was left as it is",
                    hint="run consolidate again",
                )
            return after

        report.written = edit(scope.memory_md, change, lock_root=None).written
    return report


def _drop_section_entries(doc: Document, title: str) -> Document:
    """Remove a section's entries; remove the section too when nothing but blanks is left."""
    section = next(s for s in doc.sections if s.title == title and s.entries)
    for e in reversed(section.entries):
        doc = doc.replace(e.start, e.end, [])
    section = next(s for s in doc.sections if s.title == title)
    body = doc.lines[section.start + 1 : section.end]
    if all(not line.strip() for line in body):
        doc = doc.replace(section.start, section.end, [])
    return doc


def _link(doc: Document, title: str) -> Document:
    target = f"memory/{slug(title)}.md"
    links = doc.section("Links")
    if links is not None and any(target in e.text for e in links.entries):
        return doc
    return doc.append_to_section("Links", [f"- [{title}]({target})"])


def _append_topic(scope: Scope, title: str, blocks: list[tuple[str, list[str]]], day: date) -> None:
    """Add entries (text, lines) to the ``## title`` section of memory/<slug>.md (lock held).

    An entry whose text the topic file already holds is not added again: a
    consolidation stopped after the topic file was written and before
    MEMORY.md was (a crash, an edit meanwhile) is finished by the next one
    without a second copy.
    """
    path = scope.memory_dir / f"{slug(title)}.md"

    def change(current: bytes | None) -> bytes:
        head = f"# {title}\n\n> Summary: {title.casefold()}, moved from MEMORY.md on {iso(day)}\n\n"
        doc = Document.parse(current if current else encode(head))
        there = {normalize(e.text) for e in doc.entries()}
        lines = [ln for text, block in blocks if normalize(text) not in there for ln in block]
        if not lines:
            return doc.render()
        return doc.append_to_section(
            title, [ln if ln.endswith("\n") else ln + "\n" for ln in lines]
        ).render()

    edit(path, change, lock_root=None)


def trim(scope: Scope, *, max_entries: int, today: date | None = None) -> Report:
    """The rolling window: archive the oldest entries beyond ``max_entries``."""
    if max_entries < 1:
        raise InputError("the window must keep at least one entry")
    day = today or date.today()
    report = Report("trim", scope.name, scope.memory_md)
    with locked(scope.root):

        def change(current: bytes | None) -> bytes | None:
            doc = Document.parse(current or b"")
            report.changed.clear()
            report.lines_before = len(doc.lines)
            entries = doc.entries()
            excess = len(entries) - max_entries
            if excess <= 0:
                report.lines_after = len(doc.lines)
                return None
            order = sorted(entries, key=lambda e: (e.meta.get("added") or "", e.start))
            drop = sorted(order[:excess], key=lambda e: e.start, reverse=True)
            blocks: list[str] = []
            for e in sorted(drop, key=lambda e: e.start):
                blocks += archive_block(doc, e, action="trimmed", reason="rolling window", day=day)
                report.changed.append({"line": e.line, "text": e.text})
            append_archive(scope, blocks, day)
            for e in drop:
                doc = doc.replace(e.start, e.end, [])
            report.lines_after = len(doc.lines)
            return doc.render()

        report.written = edit(scope.memory_md, change, lock_root=None).written
    return report

"""Capture's part of the daily files: the Captured, Candidates and Compactions sections.

A captured line is an entry of `memory/YYYY-MM-DD.md` (specs/WORKSPACE.md
section 12.2):

    - 14:05 Use pnpm, not npm <!-- mc: conf=0.80 src=auto cat=correction ref=0e26ec2f/5a1b2c3d
      scope=project -->   (one line in the file)

``cat`` is the detector's category, ``kind`` (for a remember request) what
is to be remembered, ``scope`` the MEMORY.md it belongs to, ``ref`` the
transcript record it came from, ``seq`` the chain entry when committed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Final, NamedTuple

from memory_chain.workspace.files import read_bytes
from memory_chain.workspace.markdown import Document, Entry, Meta, entry_lines
from memory_chain.workspace.provenance import stamp
from memory_chain.workspace.scopes import Scope

from .detector import CATEGORIES, SECTION_OF, Detection

__all__ = [
    "CANDIDATES",
    "CAPTURED",
    "COMPACTIONS",
    "DailyItem",
    "daily_files",
    "detection_lines",
    "detection_meta",
    "items",
    "new_daily",
    "parse_or_new",
]

CAPTURED: Final = "Captured"
CANDIDATES: Final = "Candidates"
COMPACTIONS: Final = "Compactions"
_TIME: Final = re.compile(r"^(\d{1,2}:\d{2})\s+")
_DAILY: Final = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


class DailyItem(NamedTuple):
    """One captured line of a daily file."""

    scope: Scope  # the scope whose daily file holds it
    path: Path
    day: date
    entry: Entry

    @property
    def text(self) -> str:
        """The memory, without the ``HH:MM`` the line starts with."""
        return _TIME.sub("", self.entry.text, count=1)

    @property
    def meta(self) -> Meta:
        return self.entry.meta

    @property
    def category(self) -> str | None:
        cat = self.meta.get("cat")
        return cat if cat in CATEGORIES else None

    @property
    def kind(self) -> str | None:
        kind = self.meta.get("kind") or self.category
        return kind if kind in CATEGORIES else None

    @property
    def confidence(self) -> float:
        try:
            return float(self.meta.get("conf") or 0.0)
        except ValueError:
            return 0.0

    @property
    def section(self) -> str:
        return SECTION_OF[self.kind or "remember"]

    @property
    def where(self) -> str:
        """``memory/2026-11-25.md:L12``, relative to the scope root."""
        return f"{self.path.relative_to(self.scope.root).as_posix()}:L{self.entry.line}"


def daily_files(scope: Scope) -> list[tuple[date, Path]]:
    """The scope's daily files (memory/YYYY-MM-DD.md), oldest first."""
    try:
        names = sorted(p.name for p in scope.memory_dir.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for name in names:
        m = _DAILY.match(name)
        if not m:
            continue
        try:
            day = date.fromisoformat(m.group(1))
        except ValueError:
            continue
        path = scope.memory_dir / name
        if path.is_file() and not path.is_symlink():
            out.append((day, path))
    return out


def items(
    scope: Scope, days: Iterable[date] | None = None, *, sections: Sequence[str] = (CAPTURED,)
) -> list[DailyItem]:
    """The captured lines of the scope's daily files (of ``days`` only, when given)."""
    want = None if days is None else set(days)
    folded = {s.casefold() for s in sections}
    out = []
    for day, path in daily_files(scope):
        if want is not None and day not in want:
            continue
        data = read_bytes(path)
        if not data:
            continue
        for e in Document.parse(data).entries():
            if e.section.casefold() in folded:
                out.append(DailyItem(scope, path, day, e))
    return out


def detection_meta(d: Detection, *, source: str = "auto", seq: int | None = None) -> Meta:
    return Meta().with_(
        conf=f"{d.confidence:.2f}",
        src=source,
        seq=None if seq is None else str(seq),
        cat=d.category,
        kind=d.kind if d.kind != d.category else None,
        scope=d.scope,
        ref=d.ref,
    )


def detection_lines(d: Detection, when: datetime, meta: Meta, nl: str) -> list[str]:
    """A daily file's lines for ``d``: its origin and the mark of the line's text recorded."""
    text = f"{when.strftime('%H:%M')} {d.text}"
    return entry_lines(text, stamp(meta, text, d.origin), nl=nl)


def new_daily(day: date) -> bytes:
    """The first bytes of a daily file (specs/WORKSPACE.md section 4.1)."""
    return f"# {day.isoformat()}\n\n".encode()


def parse_or_new(current: bytes | None, day: date) -> Document:
    return Document.parse(current if current else new_daily(day))

"""Reading a scope's archive back: which wordings were replaced, and by what (WORKSPACE.md 4.4).

Curation asks it so that an old wording a supersede took out of MEMORY.md
is not brought back beside its replacement (issue 26).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .dedup import normalize
from .markdown import Document
from .scopes import Scope

__all__ = ["Replaced", "replaced_wordings"]

_REPLACED = re.compile(r"(\d{4}-\d{2}-\d{2}) (?:superseded|updated) from ")
_BY = "> Replaced by: "


@dataclass(frozen=True, slots=True)
class Replaced:
    """An entry a supersede or an update archived: its words, what replaced them, and the
    day."""

    old: str
    by: str
    day: str


def replaced_wordings(scope: Scope) -> list[Replaced]:
    """Every superseded or updated entry of the scope's archive whose replacement is still
    an entry of its MEMORY.md, oldest first. Files that cannot be read count as empty."""
    try:
        current = Document.parse(scope.memory_md.read_bytes())
    except OSError:
        return []
    standing = {normalize(e.text) for e in current.entries()}
    found: list[Replaced] = []
    for path in sorted(scope.archive_dir.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9].md")):
        try:
            archive = Document.parse(path.read_bytes())
        except OSError:
            continue
        found.extend(r for r in _records(archive) if normalize(r.by) in standing)
    return found


def _records(archive: Document) -> list[Replaced]:
    """The supersede and update records of an archive file: a ``## DAY superseded from
    SECTION`` (or ``updated from``) heading, its ``> Replaced by:`` line and the entry
    that was replaced."""
    out = []
    for section in archive.sections:
        heading = _REPLACED.match(section.title)
        if heading is None or not section.entries:
            continue
        lines = archive.lines[section.start : section.end]
        by = next((ln[len(_BY) :].strip() for ln in lines if ln.startswith(_BY)), None)
        if by:
            out.append(Replaced(section.entries[0].text, by, heading.group(1)))
    return out

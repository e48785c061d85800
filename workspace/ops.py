"""What agents and people do to MEMORY.md: remember, update, remove, supersede, confirm.

Each operation is a function of the file's current bytes, applied with
files.edit: under the scope's lock, on what is on disk at that moment, so a
human's edit made since the caller looked is kept (the operation is redone
on top of it). Nothing is silently lost: a removed or superseded entry's
lines are appended, verbatim, to ``memory/archive/YYYY-MM.md`` with the date
and the reason, before MEMORY.md is written. Every text passes the secret
gate before anything is written.

Housekeeping over a whole file (decay, consolidation, the rolling window)
is in housekeeping.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.secrets import check as check_secret

from .dedup import Merger, changed_fact, normalize, relation
from .files import edit, read_bytes
from .markdown import SECTIONS, Document, Entry, Meta, encode, entry_lines
from .provenance import origin_of, stamp
from .scopes import Scope

__all__ = [
    "DEFAULT_SECTION",
    "SECTIONS",
    "EditConflict",
    "NewMemory",
    "Outcome",
    "archive_block",
    "check_section",
    "check_text",
    "confirm",
    "find_entry",
    "merge_in",
    "note",
    "remember",
    "remove",
    "supersede",
    "update",
]

DEFAULT_SECTION: Final = "Notes"
MAX_ENTRY_CHARS: Final = 1000
MAX_SECTION_CHARS: Final = 80
NEW_FILE_TITLE: Final = "# Memory\n"
#: A control character other than a tab, and a lone surrogate (a byte of a file that is
#: not UTF-8, as Python decodes it with ``surrogateescape``).
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f]")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
SOURCES: Final = ("manual", "auto", "curation")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one operation did (or would have done)."""

    action: str  # added, duplicate, updated, removed, superseded, confirmed, unchanged, ...
    scope: str
    path: Path
    line: int | None = None
    text: str | None = None
    section: str | None = None
    merged: bool = False  # the file had changed since it was read: applied on top
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "scope": self.scope,
            "path": str(self.path),
            "line": self.line,
            "text": self.text,
            "section": self.section,
            "merged": self.merged,
            **self.detail,
        }


class EditConflict(InputError):
    """The entry changed since the editor read it; ``current`` holds its words now."""

    def __init__(self, current: str) -> None:
        super().__init__(
            "the entry changed since it was read", hint="both texts are shown; keep one"
        )
        self.current = current


def iso(day: date) -> str:
    return day.isoformat()


def check_text(text: str, *, what: str = "entry") -> str:
    """An entry's text, trimmed; refused if empty, multi-line, too long or secret."""
    text = text.strip()
    if not text:
        raise InputError(f"the {what} is empty")
    if "\n" in text or "\r" in text:
        raise InputError(f"an {what} is one line", hint="put details in --child lines")
    if len(text) > MAX_ENTRY_CHARS:
        raise InputError(f"the {what} is {len(text)} characters; the limit is {MAX_ENTRY_CHARS}")
    if "<!--" in text or "-->" in text:
        raise InputError(f"the {what} may not hold an HTML comment (<!-- -->)")
    if _CONTROL.search(text):
        raise InputError(f"the {what} holds a control character")
    if _SURROGATE.search(text):  # a byte of a file that is not UTF-8
        raise InputError(f"the {what} holds bytes that are not UTF-8")
    check_secret(text, what=f"the {what}")
    return text


def check_section(name: str) -> str:
    name = name.strip()
    if not name or "\n" in name or "\r" in name or name.startswith("#"):
        raise InputError(f"bad section name {name!r}", hint='e.g. --section "User Preferences"')
    if len(name) > MAX_SECTION_CHARS:
        raise InputError(f"a section name is at most {MAX_SECTION_CHARS} characters")
    if any(ord(c) < 32 or "\ud800" <= c <= "\udfff" for c in name):  # found by the fuzz
        raise InputError("a section name holds a control character or bytes that are not UTF-8")
    check_secret(name, what="the section name")
    return name


def find_entry(doc: Document, match: str, section: str | None = None) -> Entry:
    """The one entry ``match`` names: a line number (``12`` or ``L12``), its text, or a
    unique part of its text (case-insensitive); optionally only in ``section``."""
    entries = doc.entries()
    if section is not None:
        want = section.strip().casefold()
        entries = [e for e in entries if e.section.casefold() == want]
    key = match.strip()
    number = key[1:] if key[:1] in ("L", "l") else key
    if number.isdigit():
        for e in entries:
            if e.line == int(number):
                return e
        raise InputError(f"no entry starts at line {number}")
    exact = [e for e in entries if normalize(e.text) == normalize(key)]
    found = exact or [e for e in entries if key.casefold() in e.text.casefold()]
    if not found:
        raise InputError(f"no entry matches {key!r}", hint="`memory-chain ws show` lists them")
    if len(found) > 1:
        lines = ", ".join(str(e.line) for e in found)
        raise InputError(
            f"{len(found)} entries match {key!r} (lines {lines})",
            hint="give more of the text, or the line number",
        )
    return found[0]


def _with_newline(lines: Sequence[str], nl: str) -> list[str]:
    return [line if line.endswith("\n") else line + nl for line in lines]


def archive_block(
    doc: Document, entry: Entry, *, action: str, reason: str, day: date, by: str | None = None
) -> list[str]:
    """The archive record of ``entry``: a heading, the reason, and its lines verbatim."""
    lines = [
        f"## {iso(day)} {action} from {entry.section or 'MEMORY.md'}\n",
        f"> Reason: {reason}\n",
    ]
    if by is not None:
        lines.append(f"> Replaced by: {by}\n")
    lines.append("\n")
    lines.extend(_with_newline(doc.lines[entry.start : entry.end], "\n"))
    lines.append("\n")
    return lines


def append_archive(scope: Scope, block: Sequence[str], day: date) -> None:
    """Add ``block`` to memory/archive/YYYY-MM.md (the caller holds the scope's lock)."""
    path = scope.archive(day.strftime("%Y-%m"))

    def change(current: bytes | None) -> bytes:
        head = b"" if current else encode(f"# Archive {day.strftime('%Y-%m')}\n\n")
        body = current or b""
        if body and not body.endswith(b"\n"):
            body += b"\n"
        return head + body + encode("".join(block))

    edit(path, change, lock_root=None)


def _run(
    scope: Scope,
    change: Callable[[Document], tuple[Document | None, Outcome]],
    *,
    base: bytes | str | None = "",
    must_exist: bool = False,
) -> Outcome:
    """Apply ``change`` to MEMORY.md; return its outcome (marked merged when redone).

    ``must_exist``: the operation names an entry, so a scope without a
    MEMORY.md is an error before anything (folder, lock file) is created.
    """
    if must_exist and not scope.memory_md.is_file():
        raise InputError(
            f"the {scope.name} scope has no MEMORY.md yet ({scope.memory_md})",
            hint="`memory-chain remember` creates it",
        )
    box: list[Outcome] = []

    def raw(current: bytes | None) -> bytes | None:
        start = encode(NEW_FILE_TITLE + "\n") if current is None else current
        parsed = Document.parse(start)
        if parsed.open_fence is not None:
            # Everything after it is code to every reader: an entry written
            # there would be in no listing, search or session start.
            raise InputError(
                f"{scope.memory_md}: line {parsed.open_fence + 1} opens a code fence that "
                "never closes, so nothing after it is read as a memory",
                hint="close the fence (a line of ``` or ~~~), then run this again; "
                "nothing was written",
            )
        doc, outcome = change(parsed)
        box.clear()
        box.append(outcome)
        return None if doc is None else doc.render()

    scope.prepare()
    done = edit(scope.memory_md, raw, lock_root=scope.root, base=base)
    return replace(box[0], merged=True) if done.merged else box[0]


def _meta(
    day: date,
    text: str,
    *,
    source: str,
    confidence: float | None,
    seq: int | None,
    untrusted: bool,
    origin: str | None = None,
) -> Meta:
    if source not in SOURCES:
        raise InputError(f"unknown source {source!r}", hint=f"choose one of: {', '.join(SOURCES)}")
    conf = None
    if confidence is not None:
        if not 0.0 <= confidence <= 1.0:
            raise InputError(f"confidence must be within 0..1, not {confidence}")
        conf = f"{confidence:.2f}"
    meta = Meta().with_(
        added=iso(day),
        confirmed=iso(day),
        conf=conf,
        src=source,
        seq=None if seq is None else str(seq),
        trust="untrusted" if untrusted else None,
    )
    return stamp(meta, text, origin or default_origin(source, untrusted=untrusted))


def default_origin(source: str, *, untrusted: bool = False) -> str:
    """The origin a write records when its caller names none (from its ``src``)."""
    if untrusted:
        return "tool"
    return "person" if source == "manual" else "capture"


def replaceable(entry: Entry) -> bool:
    """Whether an automatic write may replace this entry: only what capture wrote, and a
    line a person has since edited by hand is theirs (provenance.origin_of)."""
    return origin_of(entry) == "capture"


def remember(
    scope: Scope,
    text: str,
    *,
    section: str = DEFAULT_SECTION,
    source: str = "manual",
    confidence: float | None = None,
    seq: int | None = None,
    untrusted: bool = False,
    children: Sequence[str] = (),
    today: date | None = None,
    base: bytes | str | None = "",
    origin: str | None = None,
) -> Outcome:
    """Append an entry to ``section`` of the scope's MEMORY.md, unless one says the same.

    A duplicate (same text, or keyword overlap >= 0.7, seed 000 section 4.3)
    anywhere in the file is reported and nothing is written; an entry it
    contradicts is reported in ``detail["contradicts"]`` (supersede replaces it).
    """
    day = today or date.today()
    text = check_text(text)
    section = check_section(section)
    kids = [check_text(c, what="child line") for c in children]
    meta = _meta(
        day, text, source=source, confidence=confidence, seq=seq, untrusted=untrusted, origin=origin
    )
    path = scope.memory_md

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        clash = []
        changed: list[Entry] = []
        for e in doc.entries():
            rel = relation(text, e.text)
            if rel == "same":
                return None, Outcome("duplicate", scope.name, path, e.line, e.text, e.section)
            if rel == "contradicts":
                clash.append(e.line)
                if changed_fact(text, e.text):
                    changed.append(e)
        person = (origin or default_origin(source, untrusted=untrusted)) == "person"
        if len(changed) == 1 and (person or replaceable(changed[0])):
            # A fact that changed (every 90 days, not 30): the new text takes the old one's
            # place and the old lines go to the archive. An agent never replaces what a
            # person wrote: then both stay and the contradiction is reported.
            e = changed[0]
            block = archive_block(
                doc, e, action="superseded", reason="the fact changed", day=day, by=text
            )
            append_archive(scope, block, day)
            lines = entry_lines(text, meta, children=kids, nl=doc.newline)
            out = Outcome(
                "superseded", scope.name, path, e.line, text, e.section, detail={"old": e.text}
            )
            return doc.replace(e.start, e.end, lines), out
        new = doc.append_to_section(section, entry_lines(text, meta, children=kids, nl=doc.newline))
        detail: dict[str, Any] = {"contradicts": clash} if clash else {}
        line = None if new.inserted_at is None else new.inserted_at + 1
        return new, Outcome("added", scope.name, path, line, text, section, detail=detail)

    return _run(scope, change, base=base)


def update(
    scope: Scope,
    match: str,
    text: str,
    *,
    section: str | None = None,
    today: date | None = None,
    base: bytes | str | None = "",
    origin: str = "person",
    expect: str | None = None,
) -> Outcome:
    """Change an entry's text in place (its line only); it counts as confirmed today.

    The new words are ``origin``'s: a person's edit of an automatic entry makes
    it theirs (guidance), an agent's edit of a person's makes it the agent's.
    ``expect``: the entry's words when the editor read them; if they are other
    words now (an edit in between), EditConflict, and nothing is written. The
    old lines go to the archive (``updated``, with the new words), unless the
    words did not change.
    """
    day = today or date.today()
    text = check_text(text)
    path = scope.memory_md

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        e = find_entry(doc, match, section)
        if expect is not None and e.text != expect:
            raise EditConflict(e.text)
        if e.text != text:
            block = archive_block(doc, e, action="updated", reason="edited", day=day, by=text)
            append_archive(scope, block, day)
        if e.meta.values:
            meta = stamp(e.meta.with_(confirmed=iso(day)), text, origin)
        else:  # a hand-written entry: a person's edit keeps it bare, an agent's is marked
            meta = e.meta if origin == "person" else stamp(Meta(), text, origin)
        new = doc.rewrite_entry(e, text=text, stale=False, meta=meta)
        return new, Outcome(
            "updated", scope.name, path, e.line, text, e.section, detail={"old": e.text}
        )

    return _run(scope, change, base=base, must_exist=True)


def confirm(
    scope: Scope,
    match: str,
    *,
    section: str | None = None,
    today: date | None = None,
    base: bytes | str | None = "",
) -> Outcome:
    """Clear an entry's ``[?]`` mark and record today as its last confirmation."""
    day = today or date.today()
    path = scope.memory_md

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        e = find_entry(doc, match, section)
        meta = e.meta.with_(confirmed=iso(day))
        if not e.stale and meta == e.meta:
            return None, Outcome("unchanged", scope.name, path, e.line, e.text, e.section)
        new = doc.rewrite_entry(e, stale=False, meta=meta)
        return new, Outcome("confirmed", scope.name, path, e.line, e.text, e.section)

    return _run(scope, change, base=base, must_exist=True)


def remove(
    scope: Scope,
    match: str,
    *,
    reason: str,
    section: str | None = None,
    today: date | None = None,
    base: bytes | str | None = "",
    expect: str | None = None,
) -> Outcome:
    """Take an entry (with its sub-lines) out of MEMORY.md into the archive, with ``reason``.
    ``expect``: its words as the caller read them (else EditConflict, nothing written)."""
    day = today or date.today()
    reason = check_text(reason, what="reason")
    path = scope.memory_md

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        e = find_entry(doc, match, section)
        if expect is not None and e.text != expect:
            raise EditConflict(e.text)
        append_archive(scope, archive_block(doc, e, action="removed", reason=reason, day=day), day)
        new = doc.replace(e.start, e.end, [])
        return new, Outcome("removed", scope.name, path, e.line, e.text, e.section)

    return _run(scope, change, base=base, must_exist=True)


def supersede(
    scope: Scope,
    match: str,
    text: str,
    *,
    reason: str,
    section: str | None = None,
    source: str = "manual",
    confidence: float | None = None,
    seq: int | None = None,
    today: date | None = None,
    base: bytes | str | None = "",
) -> Outcome:
    """Replace a contradicted entry by ``text``; the old lines go to the archive with ``reason``."""
    day = today or date.today()
    text = check_text(text)
    reason = check_text(reason, what="reason")
    meta = _meta(day, text, source=source, confidence=confidence, seq=seq, untrusted=False)
    path = scope.memory_md

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        e = find_entry(doc, match, section)
        block = archive_block(doc, e, action="superseded", reason=reason, day=day, by=text)
        append_archive(scope, block, day)
        new = doc.replace(e.start, e.end, entry_lines(text, meta, nl=doc.newline))
        detail = {"old": e.text}
        return new, Outcome("superseded", scope.name, path, e.line, text, e.section, detail=detail)

    return _run(scope, change, base=base, must_exist=True)


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One entry for merge_in."""

    text: str
    section: str = DEFAULT_SECTION
    source: str = "curation"
    confidence: float | None = None
    seq: int | None = None
    why: str = ""  # the reason a superseded entry's archive record gives
    origin: str | None = None  # provenance.ORIGINS; None: from ``source``


def _topic_texts(scope: Scope) -> list[str]:
    """The entries of the scope's topic files (memory/<topic>.md)."""
    out: list[str] = []
    for kind, path in scope.files():
        if kind == "topic":
            data = read_bytes(path)
            if data is not None:
                out += [e.text for e in Document.parse(data).entries()]
    return out


def merge_in(
    scope: Scope,
    new: Sequence[NewMemory],
    *,
    today: date | None = None,
    dry_run: bool = False,
) -> list[Outcome]:
    """Add many entries to MEMORY.md in one write, with the precedence of seed 001 A4.

    For each new text, in order: an entry that says the same makes it a
    ``duplicate``; an entry it contradicts is ``superseded`` (archived, the
    new text in its place) when capture or curation wrote it (``src=auto``
    or ``curation``), and otherwise wins: the new text is ``kept`` out.
    The rest are ``added`` to their sections. One outcome per new text.
    An entry of the scope's topic files (where consolidation moved entries
    out of MEMORY.md) that says the same also makes a ``duplicate``, so a
    rerun after a crash adds nothing twice.
    ``dry_run``: the outcomes for the file as it is now, nothing written.
    """
    day = today or date.today()
    items = [replace(m, text=check_text(m.text), section=check_section(m.section)) for m in new]
    metas = [
        _meta(
            day,
            m.text,
            source=m.source,
            confidence=m.confidence,
            seq=m.seq,
            untrusted=False,
            origin=m.origin,
        )
        for m in items
    ]
    path = scope.memory_md

    topics = _topic_texts(scope)

    def decide(doc: Document) -> tuple[list[Outcome], dict[int, int]]:
        """One outcome per item, and which entries they replace (entry index -> item)."""
        entries = doc.entries()
        merger = Merger([e.text for e in entries] + [m.text for m in items] + topics)
        for n, e in enumerate(entries):
            merger.add(e.text, str(n))
        for text in topics:
            merger.add(text, "topic")
        outcomes: list[Outcome] = []
        swaps: dict[int, int] = {}
        for i, m in enumerate(items):
            # A topic file's entry counts as "same", never as one to supersede.
            rels = [r for r in merger.relations(m.text) if r[0] == "same" or r[2] != "topic"]
            found = next((r for r in rels if r[0] == "same"), None) or (rels[0] if rels else None)
            old = entries[int(found[2])] if found is not None and found[2].isdigit() else None
            if found is None:
                action = "added"
            elif found[0] == "same" or old is None:
                action = "duplicate"
            elif replaceable(old) and int(found[2]) not in swaps:
                action = "superseded"
                swaps[int(found[2])] = i
            else:
                action = "kept"
            if action in ("added", "superseded"):
                merger.add(m.text, f"new{i}")
            line = None if old is None or action == "added" else old.line
            section = old.section if action == "superseded" and old is not None else m.section
            detail = {"old": old.text} if action in ("superseded", "kept") and old else {}
            outcomes.append(Outcome(action, scope.name, path, line, m.text, section, detail=detail))
        return outcomes, swaps

    if dry_run:
        return decide(Document.parse(read_bytes(path) or b""))[0]

    def change(doc: Document) -> tuple[Document | None, Outcome]:
        entries = doc.entries()
        outcomes, swaps = decide(doc)
        adds: dict[str, list[str]] = {}
        for i, o in enumerate(outcomes):
            if o.action == "added":
                adds.setdefault(items[i].section, []).extend(
                    entry_lines(items[i].text, metas[i], nl=doc.newline)
                )
        if not swaps and not adds:
            return None, Outcome("unchanged", scope.name, path, detail={"outcomes": outcomes})
        for idx in sorted(swaps, reverse=True):
            e, i = entries[idx], swaps[idx]
            block = archive_block(
                doc,
                e,
                action="superseded",
                reason=items[i].why or "curation",
                day=day,
                by=items[i].text,
            )
            append_archive(scope, block, day)
            doc = doc.replace(e.start, e.end, entry_lines(items[i].text, metas[i], nl=doc.newline))
        for section, lines in adds.items():
            doc = doc.append_to_section(section, lines)
        return doc, Outcome("merged", scope.name, path, detail={"outcomes": outcomes})

    result = _run(scope, change)
    outcomes: list[Outcome] = result.detail["outcomes"]
    return outcomes


def note(
    scope: Scope,
    text: str,
    *,
    when: datetime | None = None,
    source: str = "manual",
    untrusted: bool = False,
    section: str = "Notes",
    origin: str | None = None,
) -> Outcome:
    """Append ``- HH:MM text`` to today's daily file memory/YYYY-MM-DD.md (seed 002)."""
    moment = when or datetime.now()
    text = check_text(text, what="note")
    day = moment.date()
    path = scope.daily(iso(day))
    line = f"{moment.strftime('%H:%M')} {text}"
    meta = stamp(
        Meta().with_(src=source, trust="untrusted" if untrusted else None),
        line,
        origin or default_origin(source, untrusted=untrusted),
    )
    box: list[int | None] = []

    def change(current: bytes | None) -> bytes:
        doc = Document.parse(current if current else encode(f"# {iso(day)}\n\n"))
        new = doc.append_to_section(section, entry_lines(line, meta, nl=doc.newline))
        box.append(None if new.inserted_at is None else new.inserted_at + 1)
        return new.render()

    scope.prepare()
    done = edit(path, change, lock_root=scope.root)
    return Outcome("noted", scope.name, path, box[-1], text, section, merged=done.merged)

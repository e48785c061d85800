"""MEMORY.md as data, over the file's own lines, so that no byte is ever lost.

A ``Document`` keeps the file as a list of lines, each with its own line
ending (the last may have none), decoded as UTF-8 with surrogateescape so
that any bytes, valid UTF-8 or not, come back unchanged: ``render()`` joins
the lines and encodes them again. Parsing only *reads* structure off those
lines (specs/WORKSPACE.md section 3):

* a **section** starts at a level-2 ATX heading (``## Title``, at most three
  spaces of indent, outside a fenced code block) and runs to the next one;
  lines before the first are the preamble;
* an **entry** is a bullet (``-``, ``*`` or ``+`` then a space) at column 0,
  plus the indented, non-blank lines that follow it (its sub-bullets and
  continuation lines); bullets before the first section belong to the
  section "" (a MEMORY.md without headings still has entries);
* an entry's first line may end with a metadata comment
  ``<!-- mc: added=2026-11-25 confirmed=2026-11-25 conf=0.9 src=auto seq=12 -->``
  (invisible in rendered markdown) and its text may start with the stale
  marker ``[?]``.

Edits are made by replacing whole lines (``replace``), so an edit changes
only the lines it touches, and the document is parsed again afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Final, NamedTuple

from memory_chain.chain.format.patterns import lazy
from memory_chain.chain.format.values import Record

__all__ = [
    "SECTIONS",
    "STALE_MARK",
    "Document",
    "Entry",
    "Meta",
    "Section",
    "decode",
    "encode",
    "entry_lines",
    "format_meta",
    "split_lines",
]

#: The sections of seed 000 section 3.3, in their injection priority (section 6.2) order.
SECTIONS: Final = (
    "Corrections",
    "User Preferences",
    "Project Conventions",
    "Error Patterns",
    "Tool Usage",
    "Architecture Decisions",
    "Workflow",
    "People & Roles",
    "Links",
)
STALE_MARK: Final = "[?]"
#: Keys of the metadata comment, in the order they are written.
META_ORDER: Final = ("added", "confirmed", "conf", "src", "from", "seq", "trust", "ok", "by", "h")

_HEADING2: Final = lazy(r" {0,3}##(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES: Final = lazy(r"[ \t]+#+$")
_BULLET: Final = lazy(r"([-*+])([ \t]+)(.*)$")
_FENCE: Final = lazy(r" {0,3}(`{3,}|~{3,})")
_NUMBERED: Final = lazy(r" {0,3}[0-9]{1,9}[.)][ \t]+(\S.*?)[ \t]*$")
_TABLE_ROW: Final = lazy(r" {0,3}\|(.*)\|[ \t]*$")
_TABLE_RULE: Final = lazy(r"[ \t]*:?-+:?[ \t]*")
_CHILD_MARK: Final = lazy(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])?[ \t]*")
_META_TOKEN: Final = lazy(r"([a-z][a-z0-9_-]*)=(\S*)")
#: First characters a heading, fence or bullet line can start with.
_STRUCTURE: Final = frozenset(" #`~-*+")


def decode(data: bytes) -> str:
    """Bytes to text that encodes back to the same bytes (surrogateescape)."""
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def shown(text: str) -> str:
    """``text`` fit to store in the index or show: each undecodable byte becomes U+FFFD.

    decode() keeps a byte that is not UTF-8 as a lone surrogate, so that a
    file is written back byte for byte; SQLite, JSON and a terminal take
    only real text.
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def split_lines(text: str) -> list[str]:
    """Lines split after each ``\\n`` only (a ``\\r`` stays on its line); ``"".join`` undoes it."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _body(line: str) -> str:
    """A line without its line ending."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


class Meta(NamedTuple):
    """An entry's metadata, from its ``<!-- mc: ... -->`` comment (all values are text)."""

    values: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        for k, v in self.values:
            if k == key:
                return v
        return None

    def with_(self, **changes: str | None) -> Meta:
        """A copy with keys set (or removed, for None); known keys in META_ORDER first."""
        data = dict(self.values)
        for k, v in changes.items():
            if v is None:
                data.pop(k, None)
            else:
                data[k] = v
        known = [(k, data[k]) for k in META_ORDER if k in data]
        rest = sorted((k, v) for k, v in data.items() if k not in META_ORDER)
        return Meta(tuple(known + rest))

    def as_dict(self) -> dict[str, str]:
        return dict(self.values)

    @property
    def seq(self) -> int | None:
        raw = self.get("seq")
        return int(raw) if raw is not None and raw.isdigit() else None

    @property
    def untrusted(self) -> bool:
        return self.get("trust") == "untrusted"

    @property
    def seen(self) -> date | None:
        """When the entry was last known true: ``confirmed``, else ``added`` (None: undated)."""
        for key in ("confirmed", "added"):
            try:
                return date.fromisoformat(self.get(key) or "")
            except ValueError:
                continue
        return None


def format_meta(meta: Meta) -> str:
    """The comment for ``meta`` (empty string for no metadata)."""
    if not meta.values:
        return ""
    return "<!-- mc: " + " ".join(f"{k}={v}" for k, v in meta.values) + " -->"


def _split_comment(text: str) -> tuple[str, str | None]:
    """The text before the metadata comment and the comment's body (None: no comment).

    The comment is the last ``<!--`` on the line when what follows it matches
    ``<!--[ \t]*mc:[ \t]*(.*?)[ \t]*-->[ \t]*$`` (string operations, for speed).
    """
    at = text.rfind("<!--")
    if at < 0:
        return text, None
    tail = text[at + 4 :].rstrip(" \t")
    if not tail.endswith("-->"):
        return text, None
    inner = tail[:-3].lstrip(" \t")
    if not inner.startswith("mc:"):
        return text, None
    return text[:at].rstrip(" \t"), inner[3:].strip(" \t")


class Entry(NamedTuple):
    """One bullet entry: lines [start, end) of the document (a tuple: parsing makes many)."""

    start: int
    end: int
    section: str
    text: str  # without marker, stale mark and metadata; whitespace-trimmed
    stale: bool
    comment: str | None  # the metadata comment's body, read into ``meta`` on use
    children: tuple[str, ...]  # the following lines without their line endings

    @property
    def meta(self) -> Meta:
        if self.comment is None:
            return Meta()
        return Meta(tuple(_META_TOKEN.findall(self.comment)))

    @property
    def line(self) -> int:
        """1-based line number of the bullet."""
        return self.start + 1


class Section(Record):
    """A ``## Title`` heading and the lines up to the next one ([start, end))."""

    __slots__ = ("end", "entries", "start", "title")
    title: str
    start: int  # the heading line
    end: int
    entries: list[Entry]

    def __init__(
        self, title: str, start: int, end: int, entries: list[Entry] | None = None
    ) -> None:
        self.title = title
        self.start = start
        self.end = end
        self.entries = [] if entries is None else entries


def _entry_from(
    lines: Sequence[str], start: int, end: int, section: str, m: re.Match[str]
) -> Entry:
    rest, comment = _split_comment(m.group(3))
    rest = rest.strip()
    stale = rest.startswith(STALE_MARK)
    if stale:
        rest = rest[len(STALE_MARK) :].lstrip()
    children = tuple(_body(line) for line in lines[start + 1 : end]) if end > start + 1 else ()
    return Entry(start, end, section, rest, stale, comment, children)


class Item(NamedTuple):
    """A line a person wrote that says something but is not a bullet entry (index only)."""

    line: int  # 1-based
    section: str
    text: str


def _cells(body: str) -> list[str] | None:
    m = _TABLE_ROW.match(body)
    return None if m is None else [c.strip() for c in m.group(1).split("|")]


def child_text(line: str) -> str:
    """A sub-line of an entry as text: its indent and any bullet or number taken off."""
    m = _CHILD_MARK.match(line)
    return (line[m.end() :] if m is not None else line).strip()


class Document:
    """A markdown memory file: its lines, and the sections and entries read off them."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._sections: list[Section] = []
        self._preamble_entries: list[Entry] = []  # bullets before the first ## heading
        self._items: list[Item] = []  # numbered items and table rows
        self._parsed = False
        #: Index of the first line that the last append_to_section inserted.
        self.inserted_at: int | None = None
        self._open_fence: int | None = None

    @property
    def sections(self) -> list[Section]:
        if not self._parsed:
            self._parse()
        return self._sections

    @property
    def items(self) -> list[Item]:
        """Numbered list items and table rows outside code (searched and injected, not edited).

        A table's data row reads "header: cell; header: cell"; its header and
        rule rows are not items.
        """
        if not self._parsed:
            self._parse()
        return self._items

    @property
    def open_fence(self) -> int | None:
        """Index of the line opening a code fence that never closes (the rest is code), or None."""
        if not self._parsed:
            self._parse()
        return self._open_fence

    @property
    def preamble_entries(self) -> list[Entry]:
        if not self._parsed:
            self._parse()
        return self._preamble_entries

    @classmethod
    def parse(cls, data: bytes) -> Document:
        return cls(split_lines(decode(data)))

    def render(self) -> bytes:
        return encode("".join(self.lines))

    # -- reading --------------------------------------------------------

    def _parse(self) -> None:
        """Read the structure off the lines (on first use: a document only rendered skips it)."""
        self._parsed = True
        lines = self.lines
        fence: str | None = None
        current: Section | None = None
        i = 0
        n = len(lines)
        while i < n:
            line = lines[i]
            first = line[:1]
            if fence is not None:
                stripped = line.strip()
                if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                    fence = None
                i += 1
                continue
            if first not in _STRUCTURE:
                if first.isdigit() or first == "|":
                    i = self._item(i, current.title if current is not None else "")
                    continue
                i += 1  # plain text or a blank line: no heading, fence or bullet starts so
                continue
            body = _body(line)
            fm = _FENCE.match(body) if first in " `~" else None
            if fm is not None:
                fence = fm.group(1)
                self._open_fence = i
                i += 1
                continue
            hm = _HEADING2.match(body) if first in " #" else None
            if hm is not None:
                if current is not None:
                    current.end = i
                title = _CLOSING_HASHES.sub("", hm.group(1) or "").strip()
                if set(title) == {"#"}:
                    title = ""
                current = Section(title, i, n)
                self._sections.append(current)
                i += 1
                continue
            bm = _BULLET.match(body) if first in "-*+" else None
            if bm is not None:
                j = i + 1
                while j < n:
                    nxt = lines[j]
                    if nxt[:1] not in (" ", "\t") or not nxt.strip():
                        break
                    j += 1
                if current is None:
                    self._preamble_entries.append(_entry_from(lines, i, j, "", bm))
                else:
                    current.entries.append(_entry_from(lines, i, j, current.title, bm))
                i = j
                continue
            i += 1
        if current is not None:
            current.end = n
        if fence is None:
            self._open_fence = None

    def _item(self, i: int, section: str) -> int:
        """Read the numbered item or the table at line ``i``; the index of the next line."""
        lines = self.lines
        body = _body(lines[i])
        m = _NUMBERED.match(body)
        if m is not None:
            self._items.append(Item(i + 1, section, m.group(1)))
            return i + 1
        header = _cells(body)
        if header is None:
            return i + 1
        j = i + 1
        rule = _cells(_body(lines[j])) if j < len(lines) else None
        if rule is not None and all(_TABLE_RULE.fullmatch(c) for c in rule):
            j += 1
        else:
            header = []  # not a table with a header: each row is read as it is
            j = i
        while j < len(lines) and (row := _cells(_body(lines[j]))) is not None:
            if header and len(header) == len(row):
                text = "; ".join(f"{h}: {c}" for h, c in zip(header, row, strict=True) if c)
            else:
                text = " | ".join(c for c in row if c)
            if text:
                self._items.append(Item(j + 1, section, text))
            j += 1
        return j

    def section(self, title: str) -> Section | None:
        """The first section whose title matches ``title`` (case-insensitive)."""
        want = title.strip().casefold()
        for s in self.sections:
            if s.title.casefold() == want:
                return s
        return None

    def entries(self) -> list[Entry]:
        """Every entry in file order (those before the first section have section "")."""
        return [*self.preamble_entries, *(e for s in self.sections for e in s.entries)]

    @property
    def newline(self) -> str:
        """The file's line ending (CRLF when most lines use it, else LF)."""
        crlf = sum(1 for line in self.lines if line.endswith("\r\n"))
        return "\r\n" if crlf * 2 > len(self.lines) else "\n"

    # -- editing --------------------------------------------------------

    def replace(self, start: int, end: int, new: Iterable[str]) -> Document:
        """A new document with lines [start, end) replaced by ``new``.

        A line before ``start`` that lacks its line ending (the old last
        line) gets one when lines are inserted after it.
        """
        lines = list(self.lines)
        new = list(new)
        if new and start > 0 and start == len(lines) and not lines[-1].endswith("\n"):
            nl = self.newline
            lines[-1] += "\n" if nl == "\r\n" and lines[-1].endswith("\r") else nl
        lines[start:end] = new
        return Document(lines)

    def append_to_section(self, title: str, new: Sequence[str]) -> Document:
        """Add entry lines after the last entry of section ``title`` (creating the section).

        In a section without entries they go after its last non-blank line.
        """
        s = self.section(title)
        if s is None:
            return self._new_section(title, new)
        if s.entries:
            at = s.entries[-1].end
        else:
            at = s.end
            while at > s.start + 1 and not _body(self.lines[at - 1]).strip():
                at -= 1
        nl = self.newline
        doc = self.replace(at, at, [line if line.endswith("\n") else line + nl for line in new])
        doc.inserted_at = at
        return doc

    def rewrite_entry(
        self,
        entry: Entry,
        *,
        text: str | None = None,
        stale: bool | None = None,
        meta: Meta | None = None,
    ) -> Document:
        """The entry's first line rebuilt with new text, stale mark or metadata.

        Its bullet character, the spacing after it and its line ending are
        kept, and so are its sub-lines: only that one line changes.
        """
        old = self.lines[entry.start]
        body = _body(old)
        ending = old[len(body) :]
        m = _BULLET.match(body)
        assert m is not None
        text = entry.text if text is None else text
        stale = entry.stale if stale is None else stale
        meta = entry.meta if meta is None else meta
        line = m.group(1) + m.group(2) + (f"{STALE_MARK} " if stale else "") + text
        comment = format_meta(meta)
        if comment:
            line += " " + comment
        return self.replace(entry.start, entry.start + 1, [line + ending])

    def _new_section(self, title: str, new: Sequence[str]) -> Document:
        """A section ``## title`` with ``new`` as its entries, before ``## Links`` or at the end."""
        nl = self.newline
        links = self.section("Links")
        block = [f"## {title}{nl}", *(line if line.endswith("\n") else line + nl for line in new)]
        if links is not None and title.casefold() != "links":
            doc = self.replace(links.start, links.start, [*block, nl])
            doc.inserted_at = links.start + 1
            return doc
        lines = self.lines
        prefix = [nl] if lines and _body(lines[-1]).strip() else []
        doc = self.replace(len(lines), len(lines), [*prefix, *block])
        doc.inserted_at = len(lines) + len(prefix) + 1
        return doc


def entry_lines(
    text: str,
    meta: Meta,
    *,
    stale: bool = False,
    children: Sequence[str] = (),
    nl: str = "\n",
) -> list[str]:
    """The lines of a new entry: ``- [?] text <!-- mc: ... -->`` and ``  - child`` lines."""
    head = f"- {STALE_MARK} {text}" if stale else f"- {text}"
    comment = format_meta(meta)
    if comment:
        head += " " + comment
    return [head + nl, *(f"  - {c}{nl}" for c in children)]

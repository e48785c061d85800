"""The ``> Summary:`` line of a fact or episode file (seed 003): read, made, set.

The summary is what session start lists for a file, so that an agent can
decide whether to read it. A made summary is the ``- Summary:`` values of
the file's ``##`` blocks, else their titles, else its bullets' ``Key:``
names lower-cased, joined with ", ", keeping the most recent that fit in
MAX_SUMMARY_CHARS (specs/WORKSPACE.md section 4.3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["MAX_SUMMARY_CHARS", "make_summary", "summary_of", "with_summary"]

MAX_SUMMARY_CHARS: Final = 120
_SUMMARY_LINE: Final = re.compile(r"^> ?Summary:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_ENTRY_SUMMARY: Final = re.compile(r"^[-*][ \t]+Summary:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_H1: Final = re.compile(r"^#[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_H2: Final = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_BULLET_KEY: Final = re.compile(r"^[-*][ \t]+([^:\n]{1,30}):", re.MULTILINE)


def summary_of(text: str) -> str | None:
    """The ``> Summary:`` line's text, if the file has one."""
    m = _SUMMARY_LINE.search(text)
    return m.group(1) if m else None


def _join(items: Sequence[str]) -> str:
    """The most recent items that fit MAX_SUMMARY_CHARS, oldest first."""
    out: list[str] = []
    size = 0
    for item in reversed(items):
        item = " ".join(item.split())
        if size + len(item) + 2 > MAX_SUMMARY_CHARS and out:
            break
        out.append(item[:MAX_SUMMARY_CHARS])
        size += len(item) + 2
    return ", ".join(reversed(out))


_META_COMMENT: Final = re.compile(r"[ \t]*<!--[ \t]*mc:[^\n]*?-->")


def make_summary(text: str) -> str:
    """A summary for a file without one: its blocks' summaries, titles or bullet keys."""
    text = _META_COMMENT.sub("", text)  # an entry's metadata is not its words
    for rx in (_ENTRY_SUMMARY, _H2, _BULLET_KEY):
        found = rx.findall(text)
        if found:
            return _join([f.casefold() if rx is _BULLET_KEY else f for f in found])
    m = _H1.search(text)
    return m.group(1) if m else "notes"


def with_summary(text: str, summary: str | None = None) -> str:
    """``text`` with its ``> Summary:`` line set (regenerated unless ``summary``).

    A new summary line goes under the ``# `` title on the first line, else on top.
    """
    summary = " ".join((summary or make_summary(_SUMMARY_LINE.sub("", text))).split())
    line = f"> Summary: {summary}"
    if _SUMMARY_LINE.search(text):
        return _SUMMARY_LINE.sub(lambda _m: line, text, count=1)
    title, _, rest = text.partition("\n")
    if title.startswith("# "):
        rest = rest.lstrip("\n")
        return f"{title}\n\n{line}\n" + (f"\n{rest}" if rest else "")
    return f"{line}\n\n{text}" if text else f"{line}\n"

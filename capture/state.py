"""The capture pointers: where each transcript was read up to, what was curated.

One JSON file in the user scope's root, ``.memory-chain-capture.json``
(specs/WORKSPACE.md section 12.4), written atomically under that root's
lock. Losing it loses no memory: a capture then rereads transcripts from
the start and the dedup finds everything already written; a curation
re-examines daily lines and MEMORY.md's dedup skips what is there (only an
entry a person removed from MEMORY.md could come back).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

if TYPE_CHECKING:
    from memory_chain.workspace.scopes import Scope

# Light on purpose: `unchanged` is all a capture of a transcript with nothing
# new needs, so this module imports no more than orjson (the workspace's
# writer is imported by `update`).
__all__ = ["STATE_NAME", "at_end", "fingerprint", "load", "unchanged", "update"]

STATE_NAME: Final = ".memory-chain-capture.json"
VERSION: Final = 1
#: How many bytes of a transcript's start identify it (a replaced file reads again from 0).
HEAD_BYTES: Final = 1024


def _path(user: Scope) -> Path:
    return user.root / STATE_NAME


def _empty() -> dict[str, Any]:
    return {"version": VERSION, "transcripts": {}, "curated": {}}


def load(user: Scope) -> dict[str, Any]:
    """The state (an empty one if the file is missing or unreadable)."""
    try:
        obj = orjson.loads(_path(user).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return _empty()
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        return _empty()
    obj.setdefault("transcripts", {})
    obj.setdefault("curated", {})
    return obj


def unchanged(user: Scope, transcript: Path) -> int | None:
    """The saved offset when ``transcript`` has nothing new since the last capture, else None."""
    try:
        size = transcript.stat().st_size
    except OSError:
        return None
    entry = load(user)["transcripts"].get(str(transcript))
    return size if at_end(entry, transcript, size) else None


def at_end(entry: dict[str, Any] | None, transcript: Path, size: int) -> bool:
    """The saved pointer ``entry`` is at the end of the transcript (``size`` bytes) and its
    first bytes are the same file's: nothing new to read."""
    if not entry or entry.get("offset") != size:
        return False
    return fingerprint(transcript, size) == entry.get("head")


def update(user: Scope, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``change`` to the current state under the user root's lock and save it."""
    from memory_chain.workspace.files import locked, write_atomic

    user.prepare()
    with locked(user.root):
        state = load(user)
        change(state)
        write_atomic(_path(user), orjson.dumps(state, option=orjson.OPT_SORT_KEYS) + b"\n")


def fingerprint(path: Path, upto: int) -> str:
    """The length and CRC-32 of a transcript's first bytes (at most HEAD_BYTES, not past
    ``upto``): enough to tell a replaced file from a grown one (not a security check)."""
    try:
        with open(path, "rb") as f:
            head = f.read(min(HEAD_BYTES, upto))
    except OSError:
        return ""
    return f"{len(head)}:{zlib.crc32(head):08x}"

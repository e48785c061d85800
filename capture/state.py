"""The capture pointers: where each transcript was read up to, what was curated.

One JSON file in the user scope's root, ``.memory-chain-capture.json``
(specs/WORKSPACE.md section 12.4), written atomically under that root's
lock. Losing it loses no memory: a capture then rereads transcripts from
the start and the dedup finds everything already written; a curation
re-examines daily lines and MEMORY.md's dedup skips what is there (only an
entry a person removed from MEMORY.md could come back).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, Final

import orjson

from memory_chain.workspace.files import locked, read_bytes, write_atomic
from memory_chain.workspace.scopes import Scope

__all__ = ["STATE_NAME", "fingerprint", "load", "update"]

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
    data = read_bytes(_path(user))
    if not data:
        return _empty()
    with suppress(orjson.JSONDecodeError):
        obj = orjson.loads(data)
        if isinstance(obj, dict) and obj.get("version") == VERSION:
            obj.setdefault("transcripts", {})
            obj.setdefault("curated", {})
            return obj
    return _empty()


def update(user: Scope, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``change`` to the current state under the user root's lock and save it."""
    user.prepare()
    with locked(user.root):
        state = load(user)
        change(state)
        write_atomic(_path(user), orjson.dumps(state, option=orjson.OPT_SORT_KEYS) + b"\n")


def fingerprint(path: Path, upto: int) -> str:
    """A hash of a transcript's first bytes (at most HEAD_BYTES, and not past ``upto``)."""
    try:
        with open(path, "rb") as f:
            head = f.read(min(HEAD_BYTES, upto))
    except OSError:
        return ""
    return hashlib.blake2b(head, digest_size=16).hexdigest()

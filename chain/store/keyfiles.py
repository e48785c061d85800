"""Key files across a rotation: the new key waits in ``<key file>.next``.

An interrupted rotation leaves that file behind; ``finish_rotation`` (run
by the ledger under its lock on open) installs it if the chain's head
already names its key, and drops it otherwise.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..format.errors import KeyAccessError
from ..format.fsutil import fsync_dir
from ..format.keys import Signer, key_file, write_public_key_file

if TYPE_CHECKING:
    from .head import Head
    from .ledger import Ledger

__all__ = ["finish_rotation", "install_key", "next_path"]


def next_path(path: Path) -> Path:
    return path.with_name(path.name + ".next")


def _pending(ledger: Ledger) -> tuple[str, Path, str] | None:
    """An interrupted rotation's (mode, .next path, public key), if any."""
    if not any(os.path.exists(p) for p in ledger.layout.next_keys):
        return None  # the common case: two stat calls, no Path objects
    for mode in ("raw", "encrypted"):
        final = key_file(ledger.layout.root, mode)
        assert final is not None
        nxt = next_path(final)
        if not os.path.exists(nxt):
            continue
        try:
            if mode == "raw":
                public = Signer(bytes.fromhex(nxt.read_text("ascii").strip())).key_id
            else:
                public = str(orjson.loads(nxt.read_bytes())["public_key"])
        except (OSError, ValueError, KeyError, TypeError, KeyAccessError):
            public = ""
        return mode, nxt, public
    return None


def finish_rotation(ledger: Ledger, head: Head) -> None:
    """Install or drop a new key left by an interrupted rotation (under the lock)."""
    pending = _pending(ledger)
    if pending is None:
        return
    mode, nxt, public = pending
    if public and public == head.key:
        install_key(ledger, mode, public)
    else:
        nxt.unlink()


def install_key(ledger: Ledger, mode: str, public: str) -> None:
    """Retire the old key file and put the new one (if any) in its place."""
    root = ledger.layout.root
    retired = ledger.layout.retired_keys
    for old_mode in ("raw", "encrypted"):
        old = key_file(root, old_mode)
        if old is not None and old.exists():
            retired.mkdir(parents=True, exist_ok=True, mode=0o700)
            # A unique name: a retired secret key is never overwritten.
            os.rename(old, retired / f"{old.name}.{time.time_ns()}.{os.urandom(4).hex()}")
            fsync_dir(retired)
    final = key_file(root, mode)
    if final is not None:
        os.replace(next_path(final), final)
    fsync_dir(root)
    write_public_key_file(ledger.layout.public_key, public)
    if ledger.config.key_mode != mode:
        ledger.config.data["key_mode"] = mode
        ledger.config.save(ledger.layout)

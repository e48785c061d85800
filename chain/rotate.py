"""Key rotation: hand the chain from the current key to a new one.

The key-rotation entry is signed by the old key and carries, in meta, the
new key and the new key's signature over the same statement (FORMAT.md 4),
so neither key alone can forge a hand-over. The new secret key is written
to ``<key file>.next`` before the entry is appended and renamed into place
after; an interrupted rotation is finished (or undone) on the next open.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from .entry import FORMAT_VERSION, default_importance, rotation_message
from .errors import InputError, KeyAccessError
from .fsutil import fsync_dir
from .keys import (
    ENV_NEW_KEY,
    KEY_MODES,
    Signer,
    key_file,
    load_signer,
    store_signer,
    write_public_key_file,
)

if TYPE_CHECKING:
    from .head import Head
    from .ledger import Appended, Ledger

__all__ = ["finish_rotation", "rotate"]


def _next_path(path: Path) -> Path:
    return path.with_name(path.name + ".next")


def rotate(ledger: Ledger, new_mode: str | None = None) -> Appended:
    """Rotate to a freshly generated key (or $MEMORY_CHAIN_NEW_SIGNING_KEY in env mode)."""
    from .ledger import self_checked  # ledger imports this module at load time

    old = ledger.signer()  # first: an imported, keyless chain says so
    mode = new_mode or ledger.config.key_mode
    if mode not in KEY_MODES:
        raise InputError(f"unknown key mode {mode!r}", hint="use raw, encrypted or env")
    if mode == "env":
        new = load_signer(None, "env", None, env_var=ENV_NEW_KEY)
    else:
        new = Signer.generate()
    final = key_file(ledger.layout.root, mode)
    source = ledger.passphrase
    if mode == "encrypted" and source is not None:
        # Ask before taking the lock; the .next file is written under it.
        phrase = source("Passphrase for the new signing key", True)
        source = lambda _prompt, _confirm: phrase  # noqa: E731
    with ledger.locked() as (fd, head):
        old = ledger.check_signer(old, head)
        if new.key_id == head.key:
            raise InputError("the new key is the current key")
        if final is not None:
            store_signer(new, _next_path(final), mode, source)
        obj = {
            "v": FORMAT_VERSION,
            "seq": head.size,
            "ts": ledger.next_ts(head),
            "type": "key-rotation",
            "tier": "committed",
            "source": "manual",
            "importance": default_importance("key-rotation", "committed"),
            "content": None,
            "size": 0,
            "prev": head.hash,
            "key": head.key,
            "meta": {"new_key": new.key_id},
        }
        obj["meta"] = {"new_key": new.key_id, "new_sig": new.sign(rotation_message(obj))}
        appended = ledger.append_line(fd, head, self_checked(obj, old))
        _install(ledger, mode, new.key_id)
        ledger.adopt_signer(new)
        return appended


def _pending(ledger: Ledger) -> tuple[str, Path, str] | None:
    """An interrupted rotation's (mode, .next path, public key), if any."""
    if not any(os.path.exists(p) for p in ledger.layout.next_keys):
        return None  # the common case: two stat calls, no Path objects
    for mode in ("raw", "encrypted"):
        final = key_file(ledger.layout.root, mode)
        assert final is not None
        nxt = _next_path(final)
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
        _install(ledger, mode, public)
    else:
        nxt.unlink()


def _install(ledger: Ledger, mode: str, public: str) -> None:
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
        os.replace(_next_path(final), final)
    fsync_dir(root)
    write_public_key_file(ledger.layout.public_key, public)
    if ledger.config.key_mode != mode:
        ledger.config.data["key_mode"] = mode
        ledger.config.save(ledger.layout)

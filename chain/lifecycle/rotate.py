"""Key rotation: hand the chain from the current key to a new one.

The key-rotation entry is signed by the old key and carries, in meta, the
new key and the new key's signature over the same statement (FORMAT.md 4),
so neither key alone can forge a hand-over. The new secret key is written
to ``<key file>.next`` before the entry is appended and renamed into place
after; an interrupted rotation is finished (or undone) on the next open.
"""

from __future__ import annotations

from ..format.entry import FORMAT_VERSION, default_importance, rotation_message
from ..format.errors import InputError
from ..format.keys import ENV_NEW_KEY, KEY_MODES, Signer, key_file, load_signer, store_signer
from ..store.keyfiles import install_key, next_path
from ..store.ledger import Appended, Ledger, self_checked

__all__ = ["rotate"]


def rotate(ledger: Ledger, new_mode: str | None = None) -> Appended:
    """Rotate to a freshly generated key (or $MEMORY_CHAIN_NEW_SIGNING_KEY in env mode)."""
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
            store_signer(new, next_path(final), mode, source)
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
        install_key(ledger, mode, new.key_id)
        ledger.adopt_signer(new)
        return appended

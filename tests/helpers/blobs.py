"""What an attacker or a crash does to a stored blob, for tests: alter its bytes, make it vanish.

Blobs live in pack records (specs/FORMAT.md 6); these helpers edit the pack
file itself, as someone with write access to the data directory would.
"""

from __future__ import annotations

import os
from pathlib import Path

from memory_chain.chain.content.store import HEAD, ContentStore


def locate(store: ContentStore, content_hash: str) -> tuple[str, int, int]:
    """(pack path, offset of the blob's bytes, their length) of the blob's live record."""
    digest = bytes.fromhex(content_hash[3:])
    for rec in store.records():
        if rec.digest == digest and rec.live:
            return f"{store.packs}/{rec.pack:08d}.pack", rec.offset + HEAD, rec.size
    raise AssertionError(f"no live record for {content_hash}")


def alter_blob(store: ContentStore, content_hash: str, data: bytes) -> None:
    """Overwrite the blob's bytes in its pack with ``data`` cut or padded to the same length."""
    path, offset, size = locate(store, content_hash)
    fitted = (data * (size // max(len(data), 1) + 1))[:size]
    assert fitted, "an empty blob cannot be altered"
    if fitted == Path(path).read_bytes()[offset : offset + size]:
        fitted = bytes(b ^ 1 for b in fitted)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, fitted, offset)
    finally:
        os.close(fd)
    store.close()


def delete_blob(store: ContentStore, content_hash: str) -> None:
    """Make the blob vanish: its record is zeroed and marked erased, as if redacted."""
    assert store.remove(content_hash), f"{content_hash} was not stored"
    store.close()


__all__ = ["alter_blob", "delete_blob", "locate"]

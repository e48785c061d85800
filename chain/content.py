"""The content store: blobs named by their BLAKE3 hash.

A blob for ``b3:abcdef...`` lives at ``content/ab/cdef...`` (the first two
hex digits name a fan-out folder). Writes are atomic: temp file, fsync,
rename, fsync of the folder. Two entries with the same content share one
blob; redaction removes a blob only when no live entry still names it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .canonical import b3
from .fsutil import fsync_dir, write_all

__all__ = ["ContentStore"]


class ContentStore:
    """Blobs under ``root``, addressed by ``b3:<hex>`` hash strings."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, content_hash: str) -> Path:
        digest = content_hash[3:]
        return self.root / digest[:2] / digest[2:]

    def get(self, content_hash: str) -> bytes | None:
        """The blob's bytes, or None when it is absent."""
        try:
            with open(self.path(content_hash), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def exists(self, content_hash: str) -> bool:
        return self.path(content_hash).exists()

    def put(self, data: bytes, *, durable: bool = True) -> str:
        """Store ``data``; return its hash. Idempotent.

        With ``durable`` the blob and its name are on disk when this returns;
        without it the caller must call sync_filesystem before relying on it.
        An existing blob whose bytes do not match its name is replaced.
        """
        content_hash = b3(data)
        path = self.path(content_hash)
        if self.get(content_hash) == data:
            return content_hash
        folder = path.parent
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            if durable:
                fsync_dir(self.root)
        tmp = folder / f".tmp-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        os.replace(tmp, path)
        if durable:
            fsync_dir(folder)
        return content_hash

    def remove(self, content_hash: str) -> bool:
        """Delete a blob durably; True if it was there."""
        path = self.path(content_hash)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        fsync_dir(path.parent)
        return True

    def count(self) -> tuple[int, int]:
        """(number of blobs, total bytes)."""
        n = total = 0
        if not self.root.is_dir():
            return 0, 0
        for folder in self.root.iterdir():
            if folder.is_dir():
                for blob in folder.iterdir():
                    if not blob.name.startswith(".tmp-"):
                        n += 1
                        total += blob.stat().st_size
        return n, total

"""The content store: blobs named by their BLAKE3 hash.

A blob for ``b3:abcdef...`` lives at ``content/ab/cdef...`` (the first two
hex digits name a fan-out folder). Writes are atomic (temp file, rename);
durability is a separate step (sync), so that one add can write its blob
and its line first and then pay for one journal commit, not two. Two
entries with the same content share one blob; redaction removes a blob only
when no live entry still names it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..format.canonical import b3
from ..format.fsutil import fsync_dir, write_all

__all__ = ["ContentStore"]


class ContentStore:
    """Blobs under ``root``, addressed by ``b3:<hex>`` hash strings."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = os.fspath(root)
        self._new_folders: set[str] = set()  # made by put(), not yet synced
        self._open: dict[str, int] = {}  # blobs written by put(), not yet synced

    def close(self) -> None:
        """Close descriptors of blobs written but never synced."""
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()

    def path(self, content_hash: str) -> Path:
        return Path(self.file(content_hash))

    def file(self, content_hash: str) -> str:
        """The blob's path as a string (cheaper than a Path on hot paths)."""
        digest = content_hash[3:]
        return f"{self._root}/{digest[:2]}/{digest[2:]}"

    def get(self, content_hash: str) -> bytes | None:
        """The blob's bytes, or None when it is absent."""
        try:
            fd = os.open(self.file(content_hash), os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def exists(self, content_hash: str) -> bool:
        return self.path(content_hash).exists()

    def put(self, data: bytes, *, keep_open: bool = False) -> str:
        """Write the blob for ``data`` atomically (temp file + rename); return its hash.

        Not yet durable: the caller calls sync() (or syncs the filesystem)
        before acknowledging anything that names the blob. An existing blob
        whose bytes do not match its name is replaced. With ``keep_open``
        the new file stays open until sync() (one add: saves a reopen).
        """
        content_hash = b3(data)
        if self.get(content_hash) == data:
            return content_hash
        path = self.file(content_hash)
        folder = os.path.dirname(path)
        try:
            os.mkdir(folder)
            self._new_folders.add(folder)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            self._new_folders.add(folder)
        tmp = f"{folder}/.tmp-{os.urandom(8).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(fd, data)
            os.replace(tmp, path)
        except BaseException:
            os.close(fd)
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        if not keep_open:
            os.close(fd)
            return content_hash
        old = self._open.pop(content_hash, None)
        if old is not None:
            os.close(old)
        self._open[content_hash] = fd
        return content_hash

    def synced_all(self) -> None:
        """Note that the whole filesystem was synced (batch): no folder is pending."""
        self._new_folders.clear()

    def sync(self, content_hash: str) -> None:
        """Make a blob durable: its bytes, its name and its folder's name."""
        path = self.file(content_hash)
        fd = self._open.pop(content_hash, None)
        if fd is None:
            fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        folder = os.path.dirname(path)
        fsync_dir(folder)
        if folder in self._new_folders:
            fsync_dir(self._root)
            self._new_folders.discard(folder)

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

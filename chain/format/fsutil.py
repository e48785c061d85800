"""Small durable-write helpers shared by the write path."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "TooLarge",
    "flocked",
    "fsync_dir",
    "read_bounded",
    "replace_file",
    "sync_filesystem",
    "write_all",
]

#: Bytes one read call asks for: a stream is read in a Python loop of these, so that a
#: signal (a hook's time limit) is handled between them, even on /dev/zero.
READ_CHUNK = 1 << 20


class TooLarge(Exception):
    """A stream held more than the bytes its reader accepts."""


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte of ``data`` is written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


#: Buffers one os.writev call takes at most (POSIX IOV_MAX is at least 16; Linux 1024).
_IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024) if hasattr(os, "sysconf") else 16


def write_parts(fd: int, parts: list[bytes]) -> None:
    """write_all of b"".join(parts), without the join: os.writev, a group at a time."""
    for at in range(0, len(parts), _IOV_MAX):
        group = parts[at : at + _IOV_MAX]
        done = os.writev(fd, group)
        for part in group:
            if done >= len(part):
                done -= len(part)
                continue
            write_all(fd, part[done:])  # a short write: the rest one by one
            done = 0


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make the entries of folder ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_libc: Any = None  # ctypes.CDLL, loaded on first use (ctypes is slow to import)


def sync_filesystem(path: Path) -> None:
    """Flush every dirty page of the filesystem holding ``path`` (syncfs).

    Used by batch writes: one call instead of two fsyncs per blob. Falls
    back to sync() where syncfs is not available.
    """
    import ctypes
    import ctypes.util

    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    syncfs = getattr(_libc, "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, *, mode: int = 0o644, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temp file, rename).

    With ``durable``, the file and its folder are fsynced, so after a crash
    the path holds either the old or the new bytes, whole. The temp name is
    unique, so concurrent writers never share one.
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def read_bounded(source: int | BinaryIO, limit: int, *, window: bool = False) -> bytes:
    """Up to ``limit`` bytes from ``source`` (a descriptor or a binary stream), in chunks.

    Signals (a hook's time limit) are handled between the chunks.

    A stream longer than ``limit`` raises TooLarge, unless ``window``: then
    its first ``limit`` bytes are the answer (a transcript's next window;
    the rest is read by a later call).
    """
    want = limit if window else limit + 1
    parts: list[bytes] = []
    got = 0
    while got < want:
        ask = min(READ_CHUNK, want - got)
        chunk = os.read(source, ask) if isinstance(source, int) else source.read(ask)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    if got > limit:
        raise TooLarge(f"more than {limit} bytes")
    return b"".join(parts)


@contextlib.contextmanager
def flocked(path: Path) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on ``path`` (created empty, mode 0600) for the block: what
    serialises one kind of run per folder (`anchor`, `publish`, a witness's state)."""
    import fcntl  # not at import: the add path never locks this way

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        from .errors import OperationalError

        raise OperationalError(f"cannot open {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

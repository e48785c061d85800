"""Workspace files on disk: atomic writes under a lock, never over a human's edit.

Every write of a workspace file goes through ``edit(path, change)``:

1. take the scope's lock (flock on ``<scope root>/.memory-chain.lock``), so
   two memory-chain writers never interleave;
2. read the file's current bytes and compute ``change(current)``;
3. write the result to a temporary file beside it and fsync it;
4. read the file again: if it changed since step 2 (an editor saved it,
   which takes no lock), go back to step 2 with the new bytes, so the edit
   is applied on top of the human's; else rename the temporary file over it
   and fsync the folder.

A caller that holds bytes it read earlier passes them as ``base``: when the
file no longer holds them, a ``change`` that can be re-applied (the
operations of ops.py) simply is, on the current bytes (a merge), and a
whole-file replacement (``replace_whole``) is refused with ConflictError.

What this cannot close is the instant between the check in step 4 and the
rename: an editor that saves in that window (microseconds) loses the race.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memory_chain.chain.format.errors import OperationalError

__all__ = [
    "LOCK_NAME",
    "ConflictError",
    "Edited",
    "edit",
    "fsync_dir",
    "keep_removed",
    "locked",
    "read_bytes",
    "replace_whole",
    "write_atomic",
]

LOCK_NAME: Final = ".memory-chain.lock"
#: How many times a write is redone when the file keeps changing under it.
MAX_RETRIES: Final = 8


class ConflictError(OperationalError):
    """The file changed since it was read, and the change cannot be merged."""


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise OperationalError(f"{path} is a folder, not a file") from None
    except OSError as exc:
        raise OperationalError(f"cannot read {path}: {exc.strerror}") from None


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold the scope's writer lock (flock on its lock file)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise OperationalError(f"cannot lock {root}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp(path: Path, data: bytes, mode: int) -> Path:
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def _temp_beside(path: Path, data: bytes) -> Path:
    """A synced temporary file beside ``path`` holding ``data``, with ``path``'s mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    return _temp(path, data, mode)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync the folder."""
    tmp = _temp_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


#: Where a tool's delete or whole-file replace keeps what it took away (under a scope root).
REMOVED_DIR: Final = "memory/archive/removed"


def keep_removed(
    root: Path, rel: str, source: Path | None = None, data: bytes | None = None
) -> str:
    """Keep a file a tool takes away: move ``source`` (or write ``data``) under REMOVED_DIR.

    The name is ``<UTC stamp>-<rel with / as __>``; the caller holds the
    scope's lock. Returns the kept path, relative to ``root``.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder = root / REMOVED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{stamp}-{rel.replace('/', '__')}"
    n = 1
    while (folder / name).exists():
        n += 1
        name = f"{stamp}-{n}-{rel.replace('/', '__')}"
    dest = folder / name
    if source is not None:
        os.rename(source, dest)  # whole files and folders, in one step
        fsync_dir(source.parent)
    else:
        write_atomic(dest, data or b"")
    fsync_dir(folder)
    return f"{REMOVED_DIR}/{name}"


@dataclass(frozen=True, slots=True)
class Edited:
    """What an edit did."""

    before: bytes | None
    after: bytes | None
    written: bool  # False: the change left the file as it was
    merged: bool  # the file had changed since ``base`` (or during the edit); applied on top


def edit(
    path: Path,
    change: Callable[[bytes | None], bytes | None],
    *,
    lock_root: Path | None,
    base: bytes | str | None = "",
) -> Edited:
    """Apply ``change`` (current bytes or None -> new bytes, or None to leave it) atomically.

    ``base`` is what the caller read before (bytes, or None for "no file");
    the default "" means "whatever is there now". ``lock_root`` None: the
    caller already holds the scope's lock. See the module docstring.
    """
    merged = False
    hold = locked(lock_root) if lock_root is not None else contextlib.nullcontext()
    with hold:
        for _ in range(MAX_RETRIES):
            current = read_bytes(path)
            if not isinstance(base, str) and current != base:
                merged = True
            new = change(current)
            if new is None or new == current:
                return Edited(current, current, False, merged)
            tmp = _temp_beside(path, new)
            try:
                if read_bytes(path) != current:
                    merged = True  # edited under us: redo the change on the new bytes
                    continue
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
            fsync_dir(path.parent)
            return Edited(current, new, True, merged)
    raise ConflictError(
        f"{path} kept changing while memory-chain tried to write it; nothing was written",
        hint="try again when the file is no longer being edited",
    )


def replace_whole(
    path: Path,
    data: bytes,
    *,
    lock_root: Path | None,
    base: bytes | str | None,
    shown: str | None = None,
) -> Edited:
    """Write ``data`` as the whole file, refusing if it is no longer ``base``.

    ``base`` "" means "whatever is there" (a plain overwrite); ``shown`` is
    the name the error uses (default: the file name).
    """

    def change(current: bytes | None) -> bytes:
        if not isinstance(base, str) and current != base:
            raise ConflictError(
                f"{shown or path.name} changed since it was read; nothing was written",
                hint="read it again and redo the change on what is there now",
            )
        return data

    return edit(path, change, lock_root=lock_root)

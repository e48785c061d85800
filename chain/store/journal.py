"""The batch journal: makes a batch add all or nothing across a crash.

batch.journal holds one header line, ``memory-chain-journal/1 OFFSET LENGTH
HASH``, then the batch's lines. It is made durable before the batch is
appended at OFFSET and removed after. On the next open for writing:

- an incomplete journal (wrong length or hash) means the crash came before
  the append started: the journal is dropped and the chain is untouched;
- a complete journal whose bytes the chain holds only in part (a crash
  mid-append) is rolled forward: the rest is appended and fsynced.
"""

from __future__ import annotations

import contextlib
import os

from ..format.canonical import b3
from ..format.config import Layout
from ..format.errors import IntegrityError, OperationalError
from ..format.fsutil import fsync_dir, write_all

__all__ = ["append_batch", "roll_forward"]

MAGIC = b"memory-chain-journal/1"


def append_batch(layout: Layout, fd: int, offset: int, lines: list[bytes]) -> None:
    """Journal, then append, ``lines`` at ``offset`` of the chain open at ``fd``."""
    data = b"".join(line + b"\n" for line in lines)
    header = b"%s %d %d %s\n" % (MAGIC, offset, len(data), b3(data).encode())
    jfd = os.open(layout.journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        write_all(jfd, header + data)
        os.fsync(jfd)
    finally:
        os.close(jfd)
    fsync_dir(layout.root)
    try:
        write_all(fd, data)
        os.fdatasync(fd)
    except OSError as exc:
        # The batch failed: cut the chain back and drop the journal, so
        # that nothing of it is rolled forward later.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, offset)
            os.fdatasync(fd)
            os.unlink(layout.journal)
        raise OperationalError(f"cannot append the batch: {exc.strerror}") from None
    os.unlink(layout.journal)


def roll_forward(layout: Layout, fd: int) -> None:
    """Finish or drop a batch that a crash interrupted (see module doc)."""
    if not os.path.exists(layout.journal):
        return
    raw = layout.journal.read_bytes()
    header, _, data = raw.partition(b"\n")
    parts = header.split(b" ")
    complete = False
    offset = 0
    if len(parts) == 4 and parts[0] == MAGIC and parts[1].isdigit() and parts[2].isdigit():
        offset = int(parts[1])
        complete = len(data) == int(parts[2]) and b3(data).encode() == parts[3]
    if complete:
        size = os.fstat(fd).st_size
        if size < offset:
            raise IntegrityError(
                f"batch.journal starts at byte {offset}, beyond the end of chain.jsonl ({size})",
                reason="bad-journal",
                hint="move batch.journal aside and run `memory-chain verify`",
            )
        have = os.pread(fd, min(size - offset, len(data)), offset)
        if not data.startswith(have):
            raise IntegrityError(
                "chain.jsonl does not match the interrupted batch in batch.journal",
                reason="bad-journal",
                hint="move batch.journal aside and run `memory-chain verify`",
            )
        if len(have) < len(data):
            os.ftruncate(fd, offset + len(have))
            write_all(fd, data[len(have) :])
            os.fdatasync(fd)
    os.unlink(layout.journal)
    fsync_dir(layout.root)

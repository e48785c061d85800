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
from collections.abc import Iterator
from typing import BinaryIO

from blake3 import blake3

from ..format.config import Layout
from ..format.errors import IntegrityError, OperationalError
from ..format.fsutil import fsync_dir, write_all

__all__ = ["PIECE", "SPOOL_MEMORY", "Spool", "append_spool", "roll_forward"]

MAGIC = b"memory-chain-journal/1"


#: Bytes a Spool keeps in memory before it moves the batch's lines to a file.
SPOOL_MEMORY = 8 << 20
#: Bytes read or written at a time when a spooled batch is copied, or a journal read.
PIECE = 1 << 20


class Spool:
    """A batch's lines as they are made: in memory up to ``memory`` bytes, then in a file.

    The file (``batch.spool`` beside the journal, mode 0600) holds lines not
    yet in the chain or the journal; it is removed by close(), and one left
    by a crash is never read (recovery reads only the journal).
    """

    def __init__(self, path: os.PathLike[str] | str, memory: int | None = None) -> None:
        self.path = os.fspath(path)
        self.memory = SPOOL_MEMORY if memory is None else memory
        self.length = 0
        self._parts: list[bytes] = []
        self._hash = blake3()
        self._fd: int | None = None

    def write(self, data: bytes) -> None:
        self._hash.update(data)
        self.length += len(data)
        if self._fd is None and self.length <= self.memory:
            self._parts.append(data)
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            for part in self._parts:
                write_all(self._fd, part)
            self._parts = []
        write_all(self._fd, data)

    def digest(self) -> str:
        return "b3:" + self._hash.hexdigest()

    def pieces(self) -> Iterator[bytes]:
        """The lines written, in pieces of at most about PIECE bytes (a batch held in
        memory: one piece, joined once however often it is read)."""
        if self._fd is None:
            if len(self._parts) > 1:
                self._parts = [b"".join(self._parts)]
            yield from self._parts
            return
        at = 0
        while at < self.length:
            piece = os.pread(self._fd, min(PIECE, self.length - at), at)
            if not piece:
                raise OperationalError(f"{self.path} is shorter than the batch written to it")
            yield piece
            at += len(piece)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        self._parts = []


def append_spool(layout: Layout, fd: int, offset: int, spool: Spool) -> None:
    """Journal, then append, the lines of ``spool`` at ``offset`` of the chain open at ``fd``."""
    header = b"%s %d %d %s\n" % (MAGIC, offset, spool.length, spool.digest().encode())
    jfd = os.open(layout.journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        pieces = spool.pieces()
        write_all(jfd, header + next(pieces, b""))  # one write for a batch held in memory
        for piece in pieces:
            write_all(jfd, piece)
        os.fsync(jfd)
    finally:
        os.close(jfd)
    fsync_dir(layout.root)
    try:
        for piece in spool.pieces():
            write_all(fd, piece)
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
    """Finish or drop a batch that a crash interrupted (see module doc).

    The journal is read in pieces (twice when it is complete: to hash it,
    then to compare and append), so that a batch of any size is recovered
    in bounded memory.
    """
    if not os.path.exists(layout.journal):
        return
    with open(layout.journal, "rb") as journal:
        header = journal.readline(len(MAGIC) + 200)
        start = journal.tell()
        parts = header.rstrip(b"\n").split(b" ")
        complete = False
        offset = length = 0
        if (
            header.endswith(b"\n")
            and len(parts) == 4
            and parts[0] == MAGIC
            and parts[1].isdigit()
            and parts[2].isdigit()
        ):
            offset, length = int(parts[1]), int(parts[2])
            hasher = blake3()
            read = 0
            while piece := journal.read(PIECE):
                hasher.update(piece)
                read += len(piece)
            complete = read == length and ("b3:" + hasher.hexdigest()).encode() == parts[3]
        if complete:
            _finish(fd, journal, start, offset, length)
    os.unlink(layout.journal)
    fsync_dir(layout.root)


def _finish(fd: int, journal: BinaryIO, start: int, offset: int, length: int) -> None:
    """Append what the chain lacks of a complete journal's ``length`` bytes at ``offset``."""
    size = os.fstat(fd).st_size
    if size < offset:
        raise IntegrityError(
            f"batch.journal starts at byte {offset}, beyond the end of chain.jsonl ({size})",
            reason="bad-journal",
            hint="move batch.journal aside and run `memory-chain verify`",
        )
    have = min(size - offset, length)
    journal.seek(start)
    at = 0
    while at < have:  # the part the chain holds must be the journal's
        want = min(PIECE, have - at)
        if os.pread(fd, want, offset + at) != journal.read(want):
            raise IntegrityError(
                "chain.jsonl does not match the interrupted batch in batch.journal",
                reason="bad-journal",
                hint="move batch.journal aside and run `memory-chain verify`",
            )
        at += want
    if have < length:
        os.ftruncate(fd, offset + have)
        os.lseek(fd, 0, os.SEEK_END)
        while piece := journal.read(PIECE):
            write_all(fd, piece)
        os.fdatasync(fd)

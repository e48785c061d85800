"""memory.vec: the memories' vectors as one float32 matrix in a file, mapped, not read.

A search with vectors compares the query with every memory's vector. Read from
memory.db's ``vectors`` table (float16 blobs, one row each) they cost a fresh process
about 0.9 s at 100k memories, every time (the whole search: 1.2 s and 361 MiB); mapped
from this file the product costs about 11 ms and the pages are the page cache's
(specs/INDEX.md 3.1.1).

The file is a cache of the table, like memory.db is of the chain: written whole (to a
temporary file, then renamed over the old one), never edited, and read only while it
matches the database it was made from:

* the database's ``epoch`` (a rebuilt or replaced memory.db has another);
* its count of vectors deleted or changed (``deleted``): any such change (a
  redaction, a prune) makes the file stale, and a stale file is deleted when seen,
  so that no trace of a redacted text's vector stays on disk;
* vectors written since (``added`` above the file's) are read from the table and
  compared as well (the delta), until there are enough of them to write the file
  again.

Layout (little-endian): a 128-byte header (magic, dimensions, key width, rows, the
``inserted`` count it holds up to, the ``deleted`` count, the epoch, the model), the
matrix (rows x dimensions float32, row-major), then each row's key (ASCII, padded with
spaces to the key width). Only the memories' vectors are kept (not the workspace's).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import mmap

    import numpy as np

__all__ = ["NAME", "Stamp", "VecFile", "build", "drop", "fresh_rows", "open_file", "stamp"]

NAME: Final = "memory.vec"
MAGIC: Final = b"MCVEC1\n\x00"
#: The header's fields (struct format): magic, dim, key width, rows, inserted, deleted,
#: epoch, model. mmap and struct are imported when a file is read or written: this
#: module is on the start path (index/db.py names the file).
HEADER_FORMAT: Final = "<8sIIqqq32s32s"
HEADER_SIZE: Final = 128
#: Rows converted and written at a time while the file is made (bounded memory).
_CHUNK: Final = 8192
#: The memories' vectors: every key but a workspace entry's (``ws:`` ...).
NOT_WS: Final = "NOT (key >= 'ws:' AND key < 'ws;')"


class Stamp:
    """What the database says of its vectors now: (inserted, deleted, epoch)."""

    __slots__ = ("deleted", "epoch", "inserted")

    def __init__(self, inserted: int, deleted: int, epoch: str) -> None:
        self.inserted = inserted
        self.deleted = deleted
        self.epoch = epoch


def stamp(conn: sqlite3.Connection) -> Stamp:
    row = conn.execute("SELECT inserted, deleted, epoch FROM vectors_generation").fetchone()
    return Stamp(int(row[0]), int(row[1]), str(row[2]))


class VecFile:
    """An open memory.vec: ``matrix`` (rows x dim float32, mapped) and each row's key."""

    __slots__ = ("_map", "added", "deleted", "epoch", "matrix", "rows", "width")

    def __init__(
        self,
        mapped: mmap.mmap,
        rows: int,
        dim: int,
        width: int,
        added: int,
        deleted: int,
        epoch: str,
    ) -> None:
        import numpy as np

        self._map = mapped
        self.rows = rows
        self.width = width
        self.added = added
        self.deleted = deleted
        self.epoch = epoch
        self.matrix: np.ndarray = np.frombuffer(
            mapped, dtype="<f4", count=rows * dim, offset=HEADER_SIZE
        ).reshape(rows, dim)

    def key(self, row: int) -> str:
        at = HEADER_SIZE + self.matrix.nbytes + row * self.width
        return self._map[at : at + self.width].decode("ascii").rstrip(" ")

    def matches(self, now: Stamp) -> bool:
        """Made from this database, and nothing it holds was deleted or changed since."""
        return (
            now.epoch == self.epoch and now.deleted == self.deleted and self.added <= now.inserted
        )


def open_file(path: Path, model: str, dim: int) -> VecFile | None:
    """The file at ``path`` mapped, or None when there is none or it is not whole (a
    crash while it was written: it is made again)."""
    import mmap
    import struct

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < HEADER_SIZE:
            return None
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    magic, d, width, rows, added, deleted, epoch, name = struct.unpack_from(
        HEADER_FORMAT, mapped, 0
    )
    whole = (
        magic == MAGIC
        and d == dim
        and name.rstrip(b"\x00").decode("ascii", "replace") == model
        and rows >= 0
        and width > 0
        and size == HEADER_SIZE + rows * (dim * 4 + width)
    )
    if not whole:
        mapped.close()
        return None
    return VecFile(mapped, rows, dim, width, added, deleted, epoch.decode("ascii", "replace"))


def drop(path: Path) -> None:
    """Delete the file (a redaction, a prune, a stale file seen), if this process may: it
    is made again."""
    with contextlib.suppress(OSError):
        path.unlink()


def build(conn: sqlite3.Connection, path: Path, model: str, dim: int, *, durable: bool) -> int:
    """Write the memories' vectors of ``model`` to ``path`` as one snapshot of the table
    (in a read transaction); return how many rows. ``durable``: fsync it before the
    rename (a command that writes); a read leaves that to the page cache, as it does
    memory.db (a file cut short by a crash is seen by its size and made again)."""
    import struct
    import tempfile

    import numpy as np

    from memory_chain.chain.format.progress import track

    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        now = stamp(conn)
        where = f"model = ? AND {NOT_WS}"
        (rows,) = conn.execute(f"SELECT count(*) FROM vectors WHERE {where}", (model,)).fetchone()
        (width,) = conn.execute(
            f"SELECT coalesce(max(length(key)), 1) FROM vectors WHERE {where}", (model,)
        ).fetchone()
        fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), 0o600)
                head = struct.pack(
                    HEADER_FORMAT,
                    MAGIC,
                    dim,
                    width,
                    rows,
                    now.inserted,
                    now.deleted,
                    now.epoch.encode("ascii")[:32],
                    model.encode("ascii")[:32],
                )
                out.write(head.ljust(HEADER_SIZE, b"\x00"))
                keys: list[bytes] = []
                cursor = conn.execute(f"SELECT key, vec FROM vectors WHERE {where}", (model,))
                written = 0
                advance = track(NAME, rows, "vectors")  # a bar on a terminal: 7 s at 1M
                while batch := cursor.fetchmany(_CHUNK):
                    keys.extend(k.encode("ascii").ljust(width) for k, _ in batch)
                    flat = np.frombuffer(b"".join(v for _, v in batch), dtype="<f2")
                    out.write(flat.astype("<f4").tobytes())
                    written += len(batch)
                    advance(len(batch))
                if written != rows:  # cannot happen inside one read transaction
                    raise sqlite3.DatabaseError("vectors changed while memory.vec was written")
                out.write(b"".join(keys))
                out.flush()
                if durable:
                    os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    finally:
        if own:
            conn.execute("COMMIT")
    return int(rows)


def delta(conn: sqlite3.Connection, model: str, after: int) -> list[tuple[str, Any]]:
    """(key, float16 blob) of the memories' vectors written after the ``after``-th."""
    # "+model": the range of ``added`` picks the rows, not the primary key (every row)
    return conn.execute(
        f"SELECT key, vec FROM vectors WHERE added > ? AND +model = ? AND {NOT_WS}",
        (after, model),
    ).fetchall()


def fresh_rows(conn: sqlite3.Connection, path: Path, model: str, dim: int) -> int | None:
    """How many vectors the file at ``path`` holds when a search would read it; None when
    there is none or it is stale (read only: doctor)."""
    found = open_file(path, model, dim)
    if found is None or not found.matches(stamp(conn)):
        return None
    return found.rows

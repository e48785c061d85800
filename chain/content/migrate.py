"""Moving a data directory's blobs from one file each into a pack (FORMAT.md 6.4).

Before packs, the blob for ``b3:HHHH…`` was the file ``content/HH/HHHH…``.
``migrate_loose`` appends every such blob whose bytes hash to its name to the
active pack, in the order given (the chain's order, so that a verify reads
the pack front to back), makes the pack durable, and only then removes the
files. A crash at any point leaves every blob readable: in its file, in the
pack, or both (a second run finishes the job). A file whose bytes do not
hash to its name is left where it is, for the verifier to report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from blake3 import blake3

from ..format.fsutil import fsync_dir
from .store import ContentStore

__all__ = ["migrate_loose"]

#: Blobs appended per write while migrating (bounded memory).
_CHUNK = 8 << 20


def migrate_loose(store: ContentStore, order: Iterable[str] = ()) -> int:
    """Pack every sound loose blob, then delete the files; return how many were moved.

    Runs under the ledger's lock.
    """
    loose = store.loose_blobs()
    present = set(loose)
    ordered = [h for h in dict.fromkeys(order) if h in present]
    first = set(ordered)
    ordered += [h for h in loose if h not in first]
    moved: list[str] = []
    batch: list[tuple[bytes, bytes]] = []
    size = 0
    for content_hash in ordered:
        path = store.loose_path(content_hash)
        with open(path, "rb") as f:
            data = f.read()
        digest = blake3(data).digest()
        if digest.hex() != content_hash[3:]:
            continue  # altered: left in place, verify says "content-mismatch"
        moved.append(content_hash)
        if store.packed(content_hash):
            continue  # packed by an earlier, interrupted run
        batch.append((digest, data))
        size += len(data)
        if size >= _CHUNK:
            store.put_many(batch)
            batch, size = [], 0
    store.put_many(batch)
    store.sync()
    for content_hash in moved:
        os.unlink(store.loose_path(content_hash))
    for folder in store.loose_folders():
        for name in os.listdir(folder):
            if name.startswith(".tmp-"):  # an interrupted write of the old layout: never a blob
                os.unlink(f"{folder}/{name}")
        fsync_dir(folder)
        if not os.listdir(folder):
            os.rmdir(folder)
    fsync_dir(store.root)
    return len(moved)

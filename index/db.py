"""The Index: memory.db opened, migrated and synced with the chain.

``Index.open(root)`` is what every reader calls: it creates memory.db if
needed (a damaged one is moved aside and rebuilt, with a warning), applies
pending migrations and syncs the index with chain.jsonl, so what it returns
is never stale. Only the index is ever written: chain.jsonl and content/
are opened read-only.
"""

from __future__ import annotations

import os
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memory_chain.chain.format.config import Config, Layout
from memory_chain.chain.format.errors import ChainStateError, OperationalError

from . import vecfile, vectors
from .schema import DB_NAME, connect, migrate
from .settings import Settings, settings_from_config
from .sync import IndexWarning, State, SyncResult, read_state, rebuild, sync, write_transaction

__all__ = ["Clock", "Index", "purge_redacted", "system_clock", "visible"]

#: Returns the current time in microseconds since the Unix epoch.
Clock = Callable[[], int]


#: Pending access counts are written at least this often (seconds) ...
FLUSH_SECONDS = 1.0
#: ... and whenever this many memories have pending counts.
FLUSH_ITEMS = 256
#: A search first embeds the texts that have no vector yet when they are at most this many
#: (a conversation imported at once: about 13 s for 1,000 on two cores, once); with more,
#: it stays lexical until `reindex` or the maintain job embeds them all.
CATCH_UP = 1000


def system_clock() -> int:
    return time.time_ns() // 1000


def visible(alias: str = "", *, include_superseded: bool = False) -> str:
    """SQL condition for "may be shown": active, with content, not an
    ephemeral entry past its lifetime (counted from creation, or from its
    last restore), and (unless ``include_superseded``) not superseded by a
    later entry. Takes the parameter :cutoff = now - lifetime."""
    p = f"{alias}." if alias else "memories."
    shown = (
        f"{p}status = 'active' AND {p}content IS NOT NULL AND NOT ({p}tier = 'ephemeral' "
        f"AND max({p}created, coalesce({p}restored_at, 0)) <= :cutoff)"
    )
    return shown if include_superseded else f"{shown} AND {not_superseded(alias)}"


def not_superseded(alias: str = "") -> str:
    """SQL condition: no later entry names this one in its ``supersedes`` metadata."""
    p = f"{alias}." if alias else "memories."
    return f"NOT EXISTS (SELECT 1 FROM memories sup WHERE sup.supersedes = {p}seq)"


class Index:
    """An open, synced memory.db for one data directory."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        layout: Layout,
        settings: Settings,
        clock: Clock,
        last_sync: SyncResult,
    ) -> None:
        self.conn = conn
        self.layout = layout
        self.settings = settings
        self.clock = clock
        self.last_sync = last_sync
        self._pending: dict[int, tuple[int, int]] = {}  # seq -> (accesses, last one)
        self._flushed_at = time.monotonic()
        self.chainless = False  # a data directory without a chain yet (without_chain)
        #: Whether recall uses vectors (index/vectors.py; the prompt hook turns it off: it
        #: must answer quickly), and how many missing ones a search may embed first.
        self.semantic = vectors.enabled(settings.semantic)
        self.catch_up: int | None = CATCH_UP
        self.caught_up: tuple[int, ...] | None = None  # vectors.state() when last looked at
        #: More texts lack a vector than a search may embed (a batch add, the extra installed
        #: on an old chain): recall is lexical until `reindex` or the maintain job embeds them.
        self.backlog = False
        self.vector_cache = vectors.Cache()
        self.query_vector: tuple[str, Any] | None = None  # the last query and its vector

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        clock: Clock = system_clock,
        settings: Settings | None = None,
        sync_now: bool = True,
        durable: bool = True,
    ) -> Index:
        """Open (creating and migrating) the index of ``root`` and sync it with the chain.

        ``durable=False`` for a command that only reads: nothing it writes to the
        cache is fsynced (schema.connect)."""
        layout = Layout(root)
        config = Config.load(layout)
        if not layout.chain.exists():
            raise ChainStateError(
                f"no chain in {root} (chain.jsonl is missing)",
                hint="restore it from a backup, or `memory-chain init` a new directory",
            )
        if settings is None:
            settings = settings_from_config(config.data)
        path = root / DB_NAME
        if not _writable(root, path):
            conn = _in_memory_copy(path)
        else:
            try:
                conn = connect(path, durable=durable)
                migrate(conn)
            except sqlite3.DatabaseError as exc:
                if not _damaged(exc):
                    raise OperationalError(f"cannot open {path}: {exc}") from None
                conn = _replace_damaged(path, exc)
        index = cls(conn, layout, settings, clock, SyncResult(0, False))
        index.vector_cache = vectors.Cache(root / vecfile.NAME, durable=durable)
        if sync_now:
            try:
                index.sync()
            except BaseException:
                conn.close()
                raise
        return index

    @classmethod
    def without_chain(cls, root: Path, *, clock: Clock = system_clock) -> Index:
        """An index for a data directory that has no chain yet: in memory, workspace only.

        The workspace works before `init`: what an agent remembers there can be
        searched and injected (it could not be read back before), and nothing
        is written in the data directory.
        """
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        migrate(conn)
        index = cls(conn, Layout(root), Settings(), clock, SyncResult(0, False))
        index.chainless = True
        return index

    @classmethod
    def open_or_empty(cls, root: Path, *, durable: bool = True) -> Index:
        """Index.open, or without_chain for a directory never initialised (no config.json and
        no chain.jsonl; a config.json without its chain is still refused as a lost chain)."""
        layout = Layout(root)
        if not layout.chain.exists() and not layout.config.exists():
            return cls.without_chain(root)
        return cls.open(root, durable=durable)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.conn.close()

    # -- time -----------------------------------------------------------

    def now(self) -> int:
        return self.clock()

    def cutoff(self, now: int) -> int:
        """Ephemeral entries created (or restored) at or before this have expired."""
        return now - self.settings.ephemeral_ttl_us

    # -- keeping up with the chain ----------------------------------------

    def sync(self) -> SyncResult:
        """Read what the chain gained since the last sync (rebuild if it was replaced)."""
        if self.chainless:
            return self.last_sync
        self.flush()  # pending counts name seqs of the chain as it was
        self.last_sync = sync(self.conn, self.layout, now=self.now())
        if self.last_sync.purged or self.last_sync.rebuilt:
            # Old pages of redacted text may still be in the WAL: fold it in and empty it.
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if self.last_sync.purged:
            vecfile.drop(self.layout.root / vecfile.NAME)  # it may hold a redacted text's vector
        return self.last_sync

    def rebuild(self) -> SyncResult:
        """Rebuild from chain.jsonl; usage and GC state are kept by entry hash."""
        self.flush()
        self.last_sync = rebuild(self.conn, self.layout, now=self.now())
        vectors.prune(self.conn)
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return self.last_sync

    def embed(self, *, limit: int | None = None) -> int:
        """Embed up to ``limit`` indexed texts that have no vector yet (all with None), when
        recall is semantic; return how many (index/vectors.py)."""
        if not self.semantic:
            return 0
        done = vectors.embed_missing(self.conn, vectors.get_embedder(), limit=limit) or 0
        vectors.mapped(self.conn, self.vector_cache)  # memory.vec made now, not by a search
        return done

    def catch_up_vectors(self) -> None:
        """Before a semantic search: embed the texts without a vector when there are at
        most ``catch_up`` of them; with more, set ``backlog`` (recall stays lexical until
        `reindex` or the maintain job embeds them: every search would be slow, and
        ranked towards the few texts embedded so far). Looks only when something changed
        since the last look (the memories without a vector are read from a partial index:
        they alone, not every memory)."""
        if not self.semantic or not self.catch_up:
            return
        now = vectors.state(self.conn)
        if self.caught_up == now:
            return
        done = vectors.embed_missing(self.conn, None, limit=self.catch_up, whole=True)
        self.backlog = done is None
        self.caught_up = vectors.state(self.conn)

    def missing_vectors(self) -> int:
        """How many indexed texts have no vector yet (0 when recall is lexical)."""
        return vectors.missing_count(self.conn) if self.semantic else 0

    def state(self) -> State:
        return read_state(self.conn) or State()

    # -- usage ------------------------------------------------------------

    def record_access(self, seqs: Iterable[int]) -> None:
        """Count one access (now) to each of ``seqs``.

        Written behind: kept in memory and written to memories and usage in
        one transaction by flush(), which runs on close(), before a sync or
        GC, every FLUSH_SECONDS and every FLUSH_ITEMS memories. Until then
        other readers (and this one's scores) see the older counts.
        """
        now = self.now()
        for seq in set(seqs):
            count, _ = self._pending.get(seq, (0, now))
            self._pending[seq] = (count + 1, now)
        if (
            len(self._pending) >= FLUSH_ITEMS
            or time.monotonic() - self._flushed_at >= FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write the pending access counts (see record_access)."""
        self._flushed_at = time.monotonic()
        if not self._pending:
            return
        pending = sorted(self._pending.items())
        self._pending.clear()
        with write_transaction(self.conn):
            self.conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_access = ? "
                "WHERE seq = ?",
                [(count, when, seq) for seq, (count, when) in pending],
            )
            self.conn.executemany(
                "INSERT INTO usage (hash, seq, access_count, last_access) "
                "SELECT hash, seq, access_count, last_access FROM memories WHERE seq = ? "
                "ON CONFLICT (hash) DO UPDATE SET access_count = excluded.access_count, "
                "last_access = excluded.last_access",
                [(seq,) for seq, _ in pending],
            )

    def require_memory(self, seq: int, what: str) -> None:
        """Raise InputError unless ``seq`` is a memory of the chain (``what`` names the
        argument in the message: "--supersedes 7: there is no entry 7")."""
        from memory_chain.chain.format.errors import InputError

        if seq >= self.state().size or seq < 0:
            raise InputError(f"{what} {seq}: there is no entry {seq}")
        if self.conn.execute("SELECT 1 FROM memories WHERE seq = ?", (seq,)).fetchone() is None:
            raise InputError(f"{what} {seq}: entry {seq} is a system entry, not a memory")

    def max_access(self) -> int:
        row = self.conn.execute("SELECT max(access_count) FROM memories").fetchone()
        return int(row[0] or 0)

    # -- counts -----------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Indexed memories by status; ephemeral ones past their lifetime count as expired."""
        now = self.now()
        out = {"active": 0, "archived": 0, "expired": 0, "redacted": 0}
        rows = self.conn.execute(
            "SELECT CASE WHEN status = 'active' AND tier = 'ephemeral' AND "
            "max(created, coalesce(restored_at, 0)) <= ? THEN 'expired' ELSE status END AS s, "
            "count(*) FROM memories GROUP BY s",
            (self.cutoff(now),),
        )
        for status, n in rows:
            out[status] = out.get(status, 0) + n
        return out

    def info(self) -> dict[str, Any]:
        """Counts plus where the index stands in the chain (for `stats`)."""
        s = self.state()
        return {**self.counts(), "indexed_entries": s.size}


def _writable(root: Path, path: Path) -> bool:
    """Can this process write memory.db (and its WAL beside it)?"""
    return os.access(root, os.W_OK | os.X_OK) and (not path.exists() or os.access(path, os.W_OK))


def _in_memory_copy(path: Path) -> sqlite3.Connection:
    """The index of a data directory this process may not write: memory.db copied into memory.

    Searches and the session start work (the copy is synced with the chain
    in memory, and what they count is forgotten); nothing on disk changes.
    A memory.db that cannot be read is not copied: the index is rebuilt in
    memory from the chain.
    """
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    if path.exists():
        try:
            # immutable: no lock, no -wal or -shm file read or made (a cache may lag; it syncs)
            uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
            disk = sqlite3.connect(uri, uri=True)
            try:
                disk.backup(conn)
            finally:
                disk.close()
            migrate(conn)
            return conn
        except sqlite3.DatabaseError:
            conn.close()
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(conn)
    return conn


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """True when the file is not a database or is corrupt (not busy, locked or read-only)."""
    text = str(exc).lower()
    transient = ("readonly", "read-only", "locked", "busy", "unable to open", "disk i/o")
    return not any(word in text for word in transient)


def _replace_damaged(path: Path, exc: sqlite3.DatabaseError) -> sqlite3.Connection:
    """Move a damaged memory.db (and its WAL) aside and start a new one."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(f"{path}{suffix}")
        if src.exists():
            src.replace(Path(f"{aside}{suffix}"))
    warnings.warn(
        f"{path.name} could not be read ({exc}); moved it to {aside.name} and rebuilding "
        "the index from the chain (usage statistics start again)",
        IndexWarning,
        stacklevel=3,
    )
    conn = connect(path)
    migrate(conn)
    return conn


def purge_redacted(root: Path) -> None:
    """After a redaction: sync an existing index, so its copy of the text goes now.

    The sync deletes the text and its FTS terms (merging the FTS segments),
    secure_delete zeroes the freed pages, and the WAL, which may still hold
    old pages, is checkpointed and truncated. Does nothing without an index.
    """
    vecfile.drop(root / vecfile.NAME)
    if not (root / DB_NAME).exists():
        return
    with Index.open(root):
        pass  # the sync purges the text and checkpoints the WAL

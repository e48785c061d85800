"""memory.db: connection settings and the schema under named migrations.

Each migration has a name and runs once, in order, in one transaction; the
names applied are recorded in the ``migrations`` table. Migrations use
sqlite-utils, which is imported only when one is pending (a new or older
database), so opening an up-to-date index costs no sqlite_utils import.
specs/INDEX.md documents the resulting tables; keep it in step.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memory_chain.chain.format.errors import OperationalError

if TYPE_CHECKING:
    from sqlite_utils import Database

__all__ = ["DB_NAME", "MIGRATIONS", "applied_migrations", "connect", "migrate"]

DB_NAME: Final = "memory.db"

#: Values of memories.status.
STATUSES: Final = ("active", "archived", "expired", "redacted")


def _memories(db: Database) -> None:
    db.table("memories").create(
        {
            "seq": int,
            "hash": str,
            "ts": str,
            "created": int,
            "type": str,
            "tier": str,
            "source": str,
            "importance": int,
            "content_hash": str,
            "size": int,
            "content": str,
            "tokens": int,
            "session": str,
            "status": str,
            "redacted_by": int,
            "access_count": int,
            "last_access": int,
            "restored_at": int,
        },
        pk="seq",
        not_null={
            "hash",
            "ts",
            "created",
            "type",
            "tier",
            "source",
            "importance",
            "content_hash",
            "size",
            "tokens",
            "status",
            "access_count",
        },
        defaults={"status": "active", "access_count": 0},
    )
    table = db.table("memories")
    table.create_index(["created"], index_name="memories_created")
    table.create_index(["importance", "created"], index_name="memories_importance")
    table.create_index(["access_count"], index_name="memories_access")
    table.create_index(["type", "tier"], index_name="memories_kind")


def _fts(db: Database) -> None:
    db.table("memories").enable_fts(["content"], tokenize="porter unicode61", create_triggers=False)


def _usage(db: Database) -> None:
    db.table("usage").create(
        {
            "hash": str,
            "seq": int,
            "access_count": int,
            "last_access": int,
            "state": str,
            "state_at": int,
            "restored_at": int,
        },
        pk="hash",
        not_null={"seq", "access_count"},
        defaults={"access_count": 0},
    )


def _state(db: Database) -> None:
    db.table("state").create(
        {
            "id": int,
            "chain_id": str,
            "agent": str,
            "size": int,
            "offset": int,
            "last_offset": int,
            "head": str,
            "built_at": int,
        },
        pk="id",
        not_null={"size", "offset", "last_offset"},
    )


def _supersedes(db: Database) -> None:
    """memories.supersedes: the seq an entry's metadata says it replaces (specs/INDEX.md)."""
    db.execute("ALTER TABLE memories ADD COLUMN supersedes INTEGER")
    db.execute("CREATE INDEX memories_supersedes ON memories (supersedes)")
    # Older rows lack the column's value: forget the sync state, so that the
    # next open rebuilds from the chain (usage and GC state are kept by hash).
    db.execute("DELETE FROM state")


def _workspace(db: Database) -> None:
    """The workspace mirror: files by size/mtime/hash, their entries, and full text."""
    db.execute(
        "CREATE TABLE ws_files (path TEXT PRIMARY KEY, root TEXT NOT NULL, scope TEXT NOT NULL, "
        "kind TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, "
        "ctime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, hash TEXT NOT NULL, summary TEXT, "
        "lines INTEGER NOT NULL, problem TEXT)"
    )
    db.execute("CREATE INDEX ws_files_root ON ws_files (root)")
    db.execute(
        "CREATE TABLE ws_entries (id INTEGER PRIMARY KEY, path TEXT NOT NULL, root TEXT NOT NULL, "
        "scope TEXT NOT NULL, kind TEXT NOT NULL, section TEXT NOT NULL, line INTEGER NOT NULL, "
        "text TEXT NOT NULL, stale INTEGER NOT NULL, untrusted INTEGER NOT NULL, seq INTEGER, "
        "added TEXT, confirmed TEXT, source TEXT, tokens INTEGER NOT NULL)"
    )
    db.execute("CREATE INDEX ws_entries_path ON ws_entries (path)")
    db.execute("CREATE INDEX ws_entries_root ON ws_entries (root, kind)")
    db.execute(
        "CREATE VIRTUAL TABLE ws_fts USING fts5(text, section, content='ws_entries', "
        "content_rowid='id', tokenize='porter unicode61')"
    )


def _provenance(db: Database) -> None:
    """Where each memory's words came from, and whether a person approved it (issue 23):
    memories.origin / approved from the signed metadata, ws_entries.origin / approved from
    an entry's metadata and its text (workspace.provenance)."""
    db.execute("ALTER TABLE memories ADD COLUMN origin TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN approved TEXT")
    db.execute("ALTER TABLE ws_entries ADD COLUMN origin TEXT NOT NULL DEFAULT 'person'")
    db.execute("ALTER TABLE ws_entries ADD COLUMN approved INTEGER NOT NULL DEFAULT 0")
    # Rows from before have no values: read the chain and every workspace file again.
    db.execute("DELETE FROM state")
    db.execute("INSERT INTO ws_fts (ws_fts) VALUES ('delete-all')")
    db.execute("DELETE FROM ws_entries")
    db.execute("DELETE FROM ws_files")


def _vectors(db: Database) -> None:
    """Embeddings for semantic recall (index/vectors.py): one per model and text, keyed by
    the memory's content hash or ``ws:`` + BLAKE3 of a workspace entry's text."""
    db.execute(
        "CREATE TABLE vectors (model TEXT NOT NULL, key TEXT NOT NULL, vec BLOB NOT NULL, "
        "PRIMARY KEY (model, key)) WITHOUT ROWID"
    )
    db.execute("CREATE INDEX vectors_key ON vectors (key)")
    # Bumped by every change to vectors: a reader keeps its matrix while it is the same.
    db.execute(
        "CREATE TABLE vectors_generation (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "generation INTEGER NOT NULL)"
    )
    db.execute("INSERT INTO vectors_generation VALUES (1, 0)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER vectors_{event.lower()} AFTER {event} ON vectors BEGIN "
            "UPDATE vectors_generation SET generation = generation + 1; END"
        )


def _time(db: Database) -> None:
    """The time a memory speaks of (index/timeref.py): the day it was said, and the days
    its text names ("last Tuesday"), as ISO dates; about_read 0 while they are unread."""
    db.execute("ALTER TABLE memories ADD COLUMN said TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN about_from TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN about_to TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN about_read INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX memories_unread ON memories (seq) WHERE about_read = 0")
    db.execute("CREATE INDEX memories_about ON memories (about_from)")
    db.execute("CREATE INDEX memories_said ON memories (said)")
    db.execute("DELETE FROM state")  # older rows have no values: the next open rebuilds


def _vector_keys(db: Database) -> None:
    """The key of each memory's vector (index/vectors.py): its content hash, or ``cx:`` +
    BLAKE3 of its passage when it is embedded with the turns before it; NULL until the
    first semantic search (or reindex) works it out."""
    db.execute("ALTER TABLE memories ADD COLUMN vec_key TEXT")
    db.execute("CREATE INDEX memories_vec_key ON memories (vec_key)")
    db.execute(
        "CREATE INDEX memories_unkeyed ON memories (seq) "
        "WHERE vec_key IS NULL AND content IS NOT NULL AND status = 'active'"
    )


def _pinned(db: Database) -> None:
    """The session start's pinned sections (index/context.py) in score order: partial
    indexes of identities and of committed decisions and commitments, so that their first
    200 are read without sorting all of them (a thousand each at a million entries)."""
    db.execute(
        "CREATE INDEX memories_identity ON memories (importance, created) WHERE type = 'identity'"
    )
    db.execute(
        "CREATE INDEX memories_committed ON memories (importance, created) "
        "WHERE tier = 'committed' AND type IN ('decision', 'commitment')"
    )


def _ws_merged(db: Database) -> None:
    """The session start's merge of MEMORY.md entries across scopes, kept for the next one
    while the entries and the code that merges them are the same (workspace/context.py)."""
    db.execute(
        "CREATE TABLE ws_merged (id INTEGER PRIMARY KEY CHECK (id = 1), digest TEXT NOT NULL, "
        "clashed BLOB NOT NULL)"
    )


def _vector_file(db: Database) -> None:
    """What memory.vec (index/vecfile.py) and a search's catch-up read instead of every
    row (specs/INDEX.md): each vector's place in the order they were written
    (``vectors.added``, from the counter ``vectors_generation.inserted``), the count of
    vectors deleted or changed (``deleted``), a random ``epoch`` naming this database
    (memory.vec of another one is never read), and ``memories.embedded`` (1 while a
    vector of the model is kept for its ``vec_key``) with a partial index of the active
    memories with text that have a key and no vector. Triggers keep all of them, whoever
    writes."""
    from .vectors import MODEL

    model = "'" + MODEL.replace("'", "''") + "'"
    db.execute("ALTER TABLE vectors ADD COLUMN added INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX vectors_added ON vectors (added)")
    for column, default in (("inserted", "0"), ("deleted", "0"), ("epoch", "''")):
        kind = "TEXT" if column == "epoch" else "INTEGER"
        db.execute(
            f"ALTER TABLE vectors_generation ADD COLUMN {column} {kind} NOT NULL DEFAULT {default}"
        )
    db.execute("UPDATE vectors_generation SET epoch = lower(hex(randomblob(16)))")
    db.execute("ALTER TABLE memories ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0")
    db.execute(
        "UPDATE memories SET embedded = 1 WHERE vec_key IS NOT NULL AND EXISTS "
        f"(SELECT 1 FROM vectors v WHERE v.model = {model} AND v.key = memories.vec_key)"
    )
    db.execute(
        "CREATE INDEX memories_unembedded ON memories (seq) WHERE embedded = 0 "
        "AND vec_key IS NOT NULL AND content IS NOT NULL AND status = 'active'"
    )
    has_vector = f"EXISTS (SELECT 1 FROM vectors WHERE model = {model} AND key = NEW.vec_key)"
    for name, body in (
        (
            "vectors_added AFTER INSERT ON vectors",
            "UPDATE vectors_generation SET inserted = inserted + 1; "
            "UPDATE vectors SET added = (SELECT inserted FROM vectors_generation) "
            "WHERE model = NEW.model AND key = NEW.key; "
            f"UPDATE memories SET embedded = (NEW.model = {model}) OR embedded "
            "WHERE vec_key = NEW.key;",
        ),
        (
            "vectors_removed AFTER DELETE ON vectors",
            "UPDATE vectors_generation SET deleted = deleted + 1; "
            f"UPDATE memories SET embedded = 0 WHERE vec_key = OLD.key AND OLD.model = {model};",
        ),
        (
            # a vector's value changed in place: memory.vec's copy is no longer it
            "vectors_changed AFTER UPDATE OF model, key, vec ON vectors",
            "UPDATE vectors_generation SET deleted = deleted + 1; "
            f"UPDATE memories SET embedded = 0 WHERE vec_key = OLD.key AND OLD.model = {model}; "
            f"UPDATE memories SET embedded = (NEW.model = {model}) OR embedded "
            "WHERE vec_key = NEW.key;",
        ),
        (
            # whoever changes a key without saying whether its vector is kept (index/vectors.py
            # sets embedded with the key: a second write of each row cost a rebuild 2.4 s at
            # 100k, a subquery in WHEN 1.2 s). A row is inserted without a key (sync):
            # embedded 0 is right for it.
            "memories_keyed AFTER UPDATE OF vec_key ON memories WHEN "
            "NEW.embedded = OLD.embedded AND NEW.vec_key IS NOT OLD.vec_key",
            f"UPDATE memories SET embedded = (NEW.vec_key IS NOT NULL AND {has_vector}) "
            "WHERE seq = NEW.seq; "
            # a reader's matrix maps vectors to memories by key: it is read again
            "UPDATE vectors_generation SET generation = generation + 1;",
        ),
    ):
        db.execute(f"CREATE TRIGGER {name} BEGIN {body} END")


#: (name, step) in the order they run. Never rename or reorder one that
#: shipped: add a new one at the end.
MIGRATIONS: Final[tuple[tuple[str, Callable[[Database], None]], ...]] = (
    ("0001_memories", _memories),
    ("0002_memories_fts", _fts),
    ("0003_usage", _usage),
    ("0004_state", _state),
    ("0005_supersedes", _supersedes),
    ("0006_workspace", _workspace),
    ("0007_provenance", _provenance),
    ("0008_vectors", _vectors),
    ("0009_time", _time),
    ("0010_vector_keys", _vector_keys),
    ("0011_pinned", _pinned),
    ("0012_ws_merged", _ws_merged),
    ("0013_vector_file", _vector_file),
)


def connect(path: Path, *, durable: bool = True) -> sqlite3.Connection:
    """Open (creating, mode 0600) memory.db in autocommit mode with the index's settings.

    WAL lets readers run beside a syncing writer; synchronous=NORMAL skips
    the fsync per commit (the index is a cache: a lost commit is re-synced
    from the chain); secure_delete overwrites the text of redacted entries.
    ``durable=False`` (a command that only reads, issue 25): synchronous=OFF,
    so what it writes to the cache (catching up with the chain, access
    counts) is never fsynced; a power loss can at worst damage memory.db,
    which is then moved aside and rebuilt from the chain.
    """
    if not path.exists():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            raise OperationalError(f"cannot create {path}: {exc.strerror}") from None
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
    try:
        # before the journal mode: switching a new file to WAL is a transaction of its own
        conn.execute("PRAGMA synchronous=NORMAL" if durable else "PRAGMA synchronous=OFF")
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA secure_delete=ON")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations recorded in ``conn`` ([] for a new database)."""
    try:
        return [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise


def pending(conn: sqlite3.Connection) -> list[str]:
    """Migrations not yet applied; raises if the database is from a newer version."""
    done = applied_migrations(conn)
    known = [name for name, _ in MIGRATIONS]
    unknown = [name for name in done if name not in known]
    if unknown:
        raise OperationalError(
            f"memory.db has migrations this version does not know ({', '.join(unknown)}): "
            "it was written by a newer memory-chain",
            hint="upgrade memory-chain, or delete memory.db (a cache) and run "
            "`memory-chain reindex`",
        )
    return [name for name in known if name not in done]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the pending migrations, each in its own transaction; return their names."""
    todo = pending(conn)
    if not todo:
        return []
    from sqlite_utils import Database

    db = Database(conn, execute_plugins=False, recursive_triggers=False)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    steps = dict(MIGRATIONS)
    ran = []
    for name in todo:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if name in {r[0] for r in conn.execute("SELECT name FROM migrations")}:
                conn.execute("COMMIT")  # another process applied it meanwhile
                continue
            steps[name](db)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, stamp))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        ran.append(name)
    return ran

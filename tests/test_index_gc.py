"""Garbage collection (seed 001) and restore: exact boundaries, index-only writes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from helpers.index import DAY, HOUR, T0, Clock, snapshot

from memory_chain.chain.format.errors import InputError
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.index.db import Index
from memory_chain.index.gc import GC_THRESHOLD, collect, relevance, restore, should_archive

ANCIENT = 3650 * DAY  # recency term ~1e-227: relevance is access and importance alone


def _chain(root: Path, *items: dict[str, object]) -> Ledger:
    led = Ledger.init(root, name="gc", clock=Clock(T0))
    for i, item in enumerate(items):
        led.add(NewEntry(content=f"memory {i}".encode(), **item))  # type: ignore[arg-type]
    return led


def _status(index: Index) -> dict[int, str]:
    return dict(index.conn.execute("SELECT seq, status FROM memories ORDER BY seq").fetchall())


def test_relevance_formula() -> None:
    """0.30 x exp(-age/7) + 0.40 x access + 0.30 x importance/100."""
    assert 0.30 + 0.40 + 0.30 == relevance(0, 1.0, 100)
    assert 0.2 == relevance(ANCIENT / DAY, 0.5, 0)  # exactly the threshold
    assert GC_THRESHOLD == 0.2


def test_boundaries_of_the_rule() -> None:
    """Archive iff relevance < 0.2 and age > 30 days, never the committed tier."""
    thirty = 30 * DAY
    assert not should_archive(0.0, thirty, "relationship")  # exactly 30 days: kept
    assert should_archive(0.0, thirty + 1, "relationship")
    assert not should_archive(0.2, thirty + 1, "relationship")  # exactly 0.2: kept
    assert should_archive(0.19999999, thirty + 1, "ephemeral")
    assert not should_archive(0.0, 10 * thirty, "committed")


def test_exactly_thirty_days_is_kept(data_dir: Path) -> None:
    """An irrelevant memory exactly 30 days old stays; one microsecond later it is archived."""
    _chain(data_dir, {"importance": 0})
    clock = Clock(T0 + 30 * DAY)
    with Index.open(data_dir, clock=clock) as index:
        assert [] == collect(index).decisions
        clock.t += 1
        result = collect(index)
        assert [(1, "archive")] == [(d.seq, d.action) for d in result.decisions]
        assert "archived" == _status(index)[1]


def test_exactly_threshold_is_kept(data_dir: Path) -> None:
    """Relevance exactly 0.2 (access 1 of a maximum of 2, importance 0, ancient) is kept;
    below it is archived; importance alone decides at 67 vs 66."""
    _chain(
        data_dir,
        {"importance": 0},  # seq 1: 1 access of max 2 -> 0.4 * 0.5 = 0.2
        {"importance": 0},  # seq 2: 2 accesses -> 0.4
        {"importance": 0},  # seq 3: no access -> 0.0
        {"importance": 67},  # seq 4: 0.201
        {"importance": 66},  # seq 5: 0.198
    )
    clock = Clock(T0 + ANCIENT)
    with Index.open(data_dir, clock=clock) as index:
        index.record_access([1, 2])
        index.record_access([2])
        result = collect(index)
        scores = {d.seq: d.relevance for d in result.decisions}
        assert {3, 5} == set(scores)
        assert {1: "active", 2: "active", 3: "archived", 4: "active", 5: "archived"} == _status(
            index
        )


def test_committed_tier_is_never_archived(data_dir: Path) -> None:
    """A committed memory with no importance, no access and ten years of age stays active."""
    _chain(data_dir, {"tier": "committed", "importance": 0, "type": "decision"})
    with Index.open(data_dir, clock=Clock(T0 + ANCIENT)) as index:
        assert [] == collect(index).decisions
        assert {1: "active"} == _status(index)


def test_ephemeral_expires_after_its_lifetime(data_dir: Path) -> None:
    """An ephemeral memory expires exactly 24 hours after it was made (not a microsecond
    before); the lifetime is configurable per run and in config.json."""
    _chain(data_dir, {"tier": "ephemeral"}, {"tier": "ephemeral"})
    clock = Clock(T0 + 24 * HOUR - 1)
    with Index.open(data_dir, clock=clock) as index:
        assert [] == collect(index).decisions
        clock.t += 1
        assert [(1, "expire"), (2, "expire")] == [
            (d.seq, d.action) for d in collect(index, dry_run=True).decisions
        ]
    with Index.open(data_dir, clock=Clock(T0 + 2 * HOUR)) as index:
        assert [] == collect(index).decisions
        assert 2 == collect(index, ttl_hours=1).expired
    restore(Index.open(data_dir, clock=Clock(T0 + 2 * HOUR)), None)
    config = orjson.loads((data_dir / "config.json").read_bytes())
    config["index"] = {"ephemeral_ttl_hours": 1}
    (data_dir / "config.json").write_bytes(orjson.dumps(config))
    with Index.open(data_dir, clock=Clock(T0 + 2 * HOUR + 2 * 3_600_000_000)) as index:
        assert 2 == collect(index).expired


def test_dry_run_changes_nothing(data_dir: Path) -> None:
    """--dry-run reports the decisions and writes nothing."""
    _chain(data_dir, {"importance": 0})
    with Index.open(data_dir, clock=Clock(T0 + ANCIENT)) as index:
        result = collect(index, dry_run=True)
        assert (1, True) == (result.archived, result.dry_run)
        assert {1: "active"} == _status(index)
        assert [] == index.conn.execute("SELECT * FROM usage").fetchall()


def test_gc_and_restore_leave_chain_and_content_byte_identical(data_dir: Path) -> None:
    """GC and restore write only the index."""
    _chain(data_dir, {"importance": 0}, {"tier": "ephemeral"}, {"tier": "committed"})
    before = snapshot(data_dir)
    with Index.open(data_dir, clock=Clock(T0 + ANCIENT)) as index:
        result = collect(index)
        assert (1, 1) == (result.archived, result.expired)
        assert [1, 2] == restore(index, None)
    assert before == snapshot(data_dir)


def test_restore(data_dir: Path) -> None:
    """restore brings one or all archived/expired memories back; it is not re-archived at once;
    unknown and redacted seqs are refused."""
    led = _chain(data_dir, {"importance": 0}, {"importance": 0}, {"tier": "ephemeral"})
    clock = Clock(T0 + 40 * DAY)
    with Index.open(data_dir, clock=clock) as index:
        collect(index)
        assert {1: "archived", 2: "archived", 3: "expired"} == _status(index)
        assert [1] == restore(index, 1)
        assert [] == restore(index, 1)  # already active
        assert [] == collect(index).decisions  # a fresh start: 30 days from the restore
        assert [2, 3] == restore(index, None)
        clock.t += 31 * DAY
        assert {1, 2, 3} == {d.seq for d in collect(index).decisions}
        with pytest.raises(InputError, match="not a memory"):
            restore(index, 0)
        with pytest.raises(InputError, match="not a memory"):
            restore(index, 99)
    redact(led, 2, "gone")
    with Index.open(data_dir, clock=clock) as index, pytest.raises(InputError, match="redacted"):
        restore(index, 2)


def test_archive_state_survives_deleting_nothing_but_usage(data_dir: Path) -> None:
    """Deleting memory.db loses GC decisions and usage (a cache), nothing else."""
    _chain(data_dir, {"importance": 0})
    with Index.open(data_dir, clock=Clock(T0 + ANCIENT)) as index:
        collect(index)
    for path in data_dir.glob("memory.db*"):
        path.unlink()
    with Index.open(data_dir, clock=Clock(T0)) as index:
        assert {1: "active"} == _status(index)

"""Resuming verify after this program's own appends without reading the chain again
(FORMAT.md 13.1 chunks, 13.5 the appends record): what is read, and that anything else
that wrote to chain.jsonl makes the bytes be hashed again, with the full verdict."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_chain.chain.audit import verify_ledger as vl
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import ENV_STATE_DIR
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify import incremental
from memory_chain.chain.verify.column import Column
from memory_chain.chain.verify.incremental import appends_path, cache_path

SEED = bytes([9]) * 32  # test-only
START = 1_735_689_600_000_000
SMALL_CHUNK = 512  # so that a short chain spans many chunks


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "state"
    monkeypatch.setenv(ENV_STATE_DIR, str(path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setattr(incremental, "CHUNK", SMALL_CHUNK)
    monkeypatch.setattr(vl, "CHUNK", SMALL_CHUNK)
    return path


@pytest.fixture
def read() -> Iterator[list[int]]:
    """The bytes of chain.jsonl each verify hashed (its _Prefix's count)."""
    counts: list[int] = []
    real = vl._Prefix.close

    def close(self: vl._Prefix) -> None:
        counts.append(self.hashed)
        real(self)

    vl._Prefix.close = close  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        vl._Prefix.close = real  # type: ignore[method-assign]


def make(root: Path, entries: int) -> Ledger:
    clock = itertools.count(START, 1_000_000).__next__
    led = Ledger.init(root, name="appends", signer=Signer(SEED), clock=clock)
    for i in range(entries - 1):
        led.add(NewEntry(f"entry number {i} with a few more words".encode(), tier="relationship"))
    return led


def add(led: Ledger, n: int) -> None:
    for i in range(n):
        led.add(NewEntry(f"later entry {i}".encode(), tier="relationship"))


def test_after_adds_only_the_new_bytes_are_read(tmp_path: Path, read: list[int]) -> None:
    led = make(tmp_path / "c", 30)
    assert verify_ledger(led).ok
    old = led.layout.chain.stat().st_size
    assert old > 10 * SMALL_CHUNK
    add(led, 3)
    led.add_batch([NewEntry(b"batched one"), NewEntry(b"batched two")])
    report = verify_ledger(Ledger(led.layout.root))
    assert (report.ok, report.resumed, report.verified_from, report.size) == (True, True, 30, 35)
    new = led.layout.chain.stat().st_size - old
    # the last verified line, the last partial chunk, and the new bytes (for the saved
    # chunks): not the old prefix
    assert read[-1] <= 2 * SMALL_CHUNK + new + 1024
    assert verify_ledger(Ledger(led.layout.root)).ok  # and again, from the new cache
    assert read[-1] < SMALL_CHUNK + 1024


def test_a_byte_changed_in_place_after_an_add_is_found(tmp_path: Path) -> None:
    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    add(led, 2)
    data = bytearray(led.layout.chain.read_bytes())
    line4 = sum(len(line) + 1 for line in data.split(b"\n")[:4])
    at = data.index(b'"sig":"', line4) + 10
    data[at] = ord("A") if data[at] != ord("A") else ord("B")  # in place: only ctime tells
    with open(led.layout.chain, "r+b") as f:
        f.write(data)
    report = verify_ledger(Ledger(led.layout.root))
    full = verify_ledger(Ledger(led.layout.root), incremental=False)
    assert not report.ok and report.failure is not None and full.failure is not None
    assert (report.failure.seq, report.failure.reason) == (full.failure.seq, full.failure.reason)
    assert report.failure.seq == 4


def test_bytes_appended_by_another_program_are_checked(tmp_path: Path, read: list[int]) -> None:
    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    size = led.layout.chain.stat().st_size
    with open(led.layout.chain, "ab") as f:
        f.write(b'{"not": "an entry"}\n')
    report = verify_ledger(Ledger(led.layout.root))
    assert not report.ok and report.failure is not None and report.failure.seq == 20
    assert read[-1] >= size  # no record of that append: the old bytes were hashed


def test_a_copied_chain_resumes_by_hashing(tmp_path: Path, read: list[int]) -> None:
    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    shutil.copytree(led.layout.root, tmp_path / "copy")  # other inodes: no identity path
    report = verify_ledger(Ledger(tmp_path / "copy"))
    assert (report.ok, report.resumed, report.verified_from) == (True, True, 20)
    assert read[-1] >= led.layout.chain.stat().st_size


def test_an_edited_appends_record_is_not_a_path(
    tmp_path: Path, state_dir: Path, read: list[int]
) -> None:
    """A record whose identities do not chain from the cache's is no path: the bytes are
    hashed (the record is a hint from this program, checked against the file's identity)."""
    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    add(led, 1)
    path = appends_path(state_dir, led.config.chain_id or "")
    before, after = orjson.loads(path.read_bytes().splitlines()[-1])
    after[3] += 1  # another ctime
    path.write_bytes(orjson.dumps([before, after]) + b"\n")
    report = verify_ledger(Ledger(led.layout.root))
    assert (report.ok, report.verified_from) == (True, 20)
    assert read[-1] >= before[1]


def test_a_revision_2_cache_is_resumed_and_rewritten(
    tmp_path: Path, state_dir: Path, read: list[int]
) -> None:
    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    cache = cache_path(state_dir, led.config.chain_id or "")
    h = orjson.loads(cache.read_bytes())
    body = cache.with_suffix(".digests").read_bytes() + cache.with_suffix(".flags").read_bytes()
    offset = h["offset"]
    old = {"format": "memory-chain-verified/2", "offset": offset}
    old["prefix"] = b3(led.layout.chain.read_bytes()[:offset])
    gone = ("format", "offset", "chunks", "chain", "digests", "flags")
    old |= {k: v for k, v in h.items() if k not in gone}
    old["body"] = b3(body)
    cache.write_bytes(orjson.dumps(old) + b"\n" + body)
    add(led, 1)
    report = verify_ledger(Ledger(led.layout.root))
    assert (report.ok, report.resumed, report.verified_from) == (True, True, 20)
    assert orjson.loads(cache.read_bytes())["format"] == "memory-chain-verified/3"


def test_a_resumed_save_writes_only_what_changed(tmp_path: Path, state_dir: Path) -> None:
    """After adds and a redaction of an old entry, the body files keep their inodes (the
    new entries' bytes appended, the old entry's new flag kept in the header: the files'
    older bytes never change under a reader's mapping) and read back as a full verify's
    state."""
    from memory_chain.chain.lifecycle.redact import redact
    from memory_chain.chain.verify.incremental import load_verified

    led = make(tmp_path / "c", 20)
    assert verify_ledger(led).ok
    cache = cache_path(state_dir, led.config.chain_id or "")
    inodes = [cache.with_suffix(x).stat().st_ino for x in (".digests", ".flags")]
    add(led, 3)
    redact(led, 5, reason="test")
    assert verify_ledger(Ledger(led.layout.root)).ok
    assert inodes == [cache.with_suffix(x).stat().st_ino for x in (".digests", ".flags")]
    resumed = load_verified(cache)
    full = verify_ledger(Ledger(led.layout.root), incremental=False)
    assert full.ok and resumed is not None
    fresh = load_verified(cache)  # the full verify saved its own state
    assert fresh is not None and resumed.state.size == fresh.state.size == 24
    assert bytes(resumed.state.digests) == bytes(fresh.state.digests)
    assert bytes(resumed.state.flags) == bytes(fresh.state.flags)
    assert resumed.state.flags[5] & 4  # redacted


def test_appends_records_are_trimmed_by_a_verify(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incremental, "APPENDS_KEPT", 4)
    led = make(tmp_path / "c", 3)
    add(led, 8)
    path = appends_path(state_dir, led.config.chain_id or "")
    assert len(path.read_bytes().splitlines()) >= 8
    assert verify_ledger(Ledger(led.layout.root)).ok
    assert len(path.read_bytes().splitlines()) == 0


@given(
    st.binary(max_size=40),
    st.lists(
        st.one_of(
            st.tuples(st.just("set"), st.integers(0, 80), st.integers(0, 255)),
            st.tuples(st.just("append"), st.integers(0, 255)),
            st.tuples(st.just("extend"), st.binary(max_size=8)),
            st.tuples(st.just("slice"), st.integers(-5, 90), st.integers(-5, 90)),
        ),
        max_size=30,
    ),
)
def test_a_column_behaves_as_a_bytearray(base: bytes, ops: list[tuple[Any, ...]]) -> None:
    col, model = Column(base), bytearray(base)
    for op in ops:
        if op[0] == "set" and op[1] < len(model):
            col[op[1]] = op[2]
            model[op[1]] = op[2]
        elif op[0] == "append":
            col.append(op[1])
            model.append(op[1])
        elif op[0] == "extend":
            col.extend(op[1])
            model.extend(op[1])
        elif op[0] == "slice":
            assert bytes(col[op[1] : op[2]]) == bytes(model[op[1] : op[2]])
        assert len(col) == len(model)
        assert all(col[i] == model[i] for i in range(len(model)))
    assert bytes(col) == bytes(model)
    mapped, changed, tail = col.changes()
    rebuilt = bytearray(base)
    for i, v in changed.items():
        rebuilt[i] = v
    assert bytes(rebuilt + tail) == bytes(model) and mapped == len(base)

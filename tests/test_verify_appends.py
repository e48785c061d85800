"""Resuming verify after this program's own appends without reading the chain again
(FORMAT.md 13.1 chunks, 13.5 the appends record): what is read, and that anything else
that wrote to chain.jsonl makes the bytes be hashed again, with the full verdict."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from memory_chain.chain.audit import verify_ledger as vl
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import ENV_STATE_DIR
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify import incremental
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
    header, _, body = cache.read_bytes().partition(b"\n")
    h = orjson.loads(header)
    offset = h["offset"]
    old = {"format": "memory-chain-verified/2", "offset": offset}
    old["prefix"] = b3(led.layout.chain.read_bytes()[:offset])
    old |= {k: v for k, v in h.items() if k not in ("format", "offset", "chunks", "chain")}
    cache.write_bytes(orjson.dumps(old) + b"\n" + body)
    add(led, 1)
    report = verify_ledger(Ledger(led.layout.root))
    assert (report.ok, report.resumed, report.verified_from) == (True, True, 20)
    assert orjson.loads(cache.read_bytes().partition(b"\n")[0])["format"] == (
        "memory-chain-verified/3"
    )


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

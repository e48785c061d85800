"""Crash safety: no acknowledged entry is ever lost, and recovery always lets the chain go on.

Two halves. The SIGKILL loop runs tests/helpers/appender.py as a real child
process and kills it at random moments; after each kill the chain is
reopened, one more entry is added, and every entry the child acknowledged
must be there with its content, and the chain must verify. Which recovery
path a kill exercises depends on timing, so the second half builds each
crash state by hand: a torn tail, complete lines beyond the cached head, a
complete and an incomplete batch journal, a lost head.json.

The kill delays come from a seeded random.Random; the seed is printed and
can be set with MEMORY_CHAIN_CRASH_SEED to replay a run's schedule.
"""

# The project's style is `assert expected == actual`, which SIM300 calls a Yoda condition.

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from helpers.blobs import alter_blob, delete_blob

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.secrets import SecretError
from memory_chain.chain.store import head as head_module
from memory_chain.chain.store import journal
from memory_chain.chain.store.head import TornTailWarning, load_head
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify.lines import verify_lines

APPENDER = Path(__file__).parent / "helpers" / "appender.py"
MIN_DELAY, MAX_DELAY = 0.005, 0.080


# -- helpers -------------------------------------------------------------


def chain_bytes(data_dir: Path) -> bytes:
    return (data_dir / "chain.jsonl").read_bytes()


def entries_of(data_dir: Path) -> list[dict[str, Any]]:
    """Every line of chain.jsonl parsed; fails on an unterminated last line."""
    raw = chain_bytes(data_dir)
    assert raw.endswith(b"\n"), "chain.jsonl ends with an unterminated line"
    return [orjson.loads(line) for line in raw.splitlines()]


def assert_verifies(ledger: Ledger) -> None:
    """The whole chain verifies with its blobs, and has no torn tail."""
    report = verify_lines(ledger.iter_lines(), blobs=ledger.store.raw)
    assert report.failure is None
    assert report.ok
    assert 0 == report.torn_tail


def assert_head_matches_chain(data_dir: Path) -> None:
    """head.json covers the whole chain and names its last line."""
    raw = chain_bytes(data_dir)
    lines = raw.splitlines()
    head = load_head(Ledger(data_dir).layout)
    assert head is not None
    expected = (len(lines), len(raw), b3(lines[-1]))
    assert expected == (head.size, head.offset, head.hash)


def contents(ledger: Ledger) -> list[bytes | None]:
    """The content blob of every entry, in order (None for genesis)."""
    out: list[bytes | None] = []
    for obj in ledger.entries():
        out.append(None if obj["content"] is None else ledger.store.get(obj["content"]))
    return out


def add_quietly(ledger: Ledger, content: bytes) -> None:
    """Add one entry; any TornTailWarning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TornTailWarning)
        ledger.add(NewEntry(content=content))


def read_acks(ack_file: Path) -> list[dict[str, Any]]:
    """Complete acknowledgement lines (a kill may cut the last one short)."""
    if not ack_file.exists():
        return []
    raw = ack_file.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    return [orjson.loads(line) for line in complete.splitlines()]


def check_acknowledged(ledger: Ledger, acks: list[dict[str, Any]]) -> None:
    """Every acknowledged entry is in the chain at its seq, with its hash and content."""
    lines = chain_bytes(ledger.layout.root).splitlines()
    for ack in acks:
        seq = ack["seq"]
        assert seq < len(lines), f"acknowledged seq {seq} is missing (chain has {len(lines)})"
        obj = orjson.loads(lines[seq])
        expected = (seq, ack["hash"], b3(ack["content"].encode()), ack["content"].encode())
        actual = (obj["seq"], b3(lines[seq]), obj["content"], ledger.store.get(obj["content"]))
        assert expected == actual


def check_batches(ledger: Ledger, batch_size: int) -> int:
    """Every batch in the chain is whole and contiguous; return how many there are."""
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for obj in ledger.entries():
        meta = obj["meta"]
        if "batch" in meta:
            groups[(meta["pid"], meta["batch"])].append(obj["seq"])
    for seqs in groups.values():
        assert list(range(seqs[0], seqs[0] + batch_size)) == seqs
    batched = sum(len(seqs) for seqs in groups.values())
    assert 0 == batched % batch_size
    return len(groups)


# -- the SIGKILL loop ----------------------------------------------------


@pytest.fixture
def crash_rng() -> random.Random:
    """A random.Random whose seed is printed (replay with MEMORY_CHAIN_CRASH_SEED)."""
    seed = int(os.environ.get("MEMORY_CHAIN_CRASH_SEED", "0") or 0) or random.randrange(1, 2**32)
    print(f"crash seed: MEMORY_CHAIN_CRASH_SEED={seed}")
    return random.Random(seed)


@dataclass
class Stats:
    """What the kills happened to leave behind (timing dependent, reported only)."""

    trials: int = 0
    acked: int = 0
    journal_left: int = 0
    head_behind: int = 0
    torn_tails: int = 0
    died_early: list[str] = field(default_factory=list)


def start_appender(data_dir: Path, ack_file: Path, *extra: str) -> subprocess.Popen[bytes]:
    """Start the child appender and wait until it has opened the ledger."""
    err = open(ack_file.with_suffix(".err"), "ab")  # noqa: SIM115 (the child owns it)
    proc = subprocess.Popen(
        [sys.executable, str(APPENDER), str(data_dir), str(ack_file), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
    )
    err.close()
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=60):
            proc.kill()
            proc.wait()
            pytest.fail("the appender did not start within 60 s")
    line = proc.stdout.readline()
    if line != b"ready\n":
        proc.wait()
        detail = ack_file.with_suffix(".err").read_text(errors="replace")
        pytest.fail(f"the appender failed to start: {line!r}\n{detail}")
    return proc


def kill_appender(data_dir: Path, ack_file: Path, delay: float, stats: Stats, *extra: str) -> None:
    """Run one appender, SIGKILL it ``delay`` seconds after it is ready, note what it left."""
    proc = start_appender(data_dir, ack_file, *extra)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.stdin is not None
    proc.stdin.close()
    if proc.returncode != -signal.SIGKILL:
        stats.died_early.append(ack_file.with_suffix(".err").read_text(errors="replace"))
    stats.trials += 1
    layout = Layout(data_dir)
    stats.journal_left += layout.journal.exists()
    head = load_head(layout)
    stats.head_behind += head is None or head.offset < layout.chain.stat().st_size


def reopen_and_add(data_dir: Path, stats: Stats) -> Ledger:
    """Open the chain after a crash and add one entry (this runs recovery)."""
    ledger = Ledger(data_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ledger.add(NewEntry(content=f"after kill {stats.trials}".encode()))
    stats.torn_tails += sum(issubclass(w.category, TornTailWarning) for w in caught)
    return ledger


def check_all(ledger: Ledger, ack_files: list[Path], batch: int) -> int:
    """Everything acknowledged is there, the chain verifies, batches are whole."""
    acks = [ack for ack_file in ack_files for ack in read_acks(ack_file)]
    check_acknowledged(ledger, acks)
    assert_verifies(ledger)
    assert_head_matches_chain(ledger.layout.root)
    if batch:
        check_batches(ledger, batch)
    return len(acks)


def run_kill_loop(
    data_dir: Path, rng: random.Random, trials: int, batch: int = 0
) -> tuple[Stats, Ledger]:
    """``trials`` kills of appenders on one chain, checking everything after each."""
    Ledger.init(data_dir, name="crash-agent").close()
    extra = ("--batch", str(batch)) if batch else ()
    stats = Stats()
    ledger: Ledger | None = None
    # One acknowledgement file per child: a kill may cut its last record short.
    ack_files: list[Path] = []
    for trial in range(trials):
        ack_files.append(data_dir.parent / f"acks-{trial}.jsonl")
        kill_appender(data_dir, ack_files[-1], rng.uniform(MIN_DELAY, MAX_DELAY), stats, *extra)
        ledger = reopen_and_add(data_dir, stats)
        try:
            stats.acked = check_all(ledger, ack_files, batch)
        except AssertionError as exc:
            raise AssertionError(f"after kill {trial + 1} of {trials}: {exc}") from exc
        ledger.close()
    assert [] == stats.died_early
    assert ledger is not None
    print(stats)
    return stats, ledger


@pytest.mark.slow
def test_sigkill_during_single_adds_loses_nothing(data_dir: Path, crash_rng: random.Random) -> None:
    """40 SIGKILLs of a single-add appender: every acknowledged entry survives, chain verifies."""
    stats, ledger = run_kill_loop(data_dir, crash_rng, trials=40)
    entries = list(ledger.entries())
    assert list(range(len(entries))) == [e["seq"] for e in entries]
    assert 40 == stats.trials
    assert stats.acked > 0, "no add returned before its kill: are adds slower than 80 ms?"


@pytest.mark.slow
@pytest.mark.parametrize("batch", [5, 32])
def test_sigkill_during_batches_is_all_or_nothing(
    data_dir: Path, crash_rng: random.Random, batch: int
) -> None:
    """15 SIGKILLs of a batch appender: batches are whole, acknowledged ones survive."""
    stats, ledger = run_kill_loop(data_dir, crash_rng, trials=15, batch=batch)
    assert 15 == stats.trials
    assert check_batches(ledger, batch) > 0, "no batch was written: are batches that slow?"


@pytest.mark.slow
def test_back_to_back_kills_recover_in_the_next_writer(
    data_dir: Path, crash_rng: random.Random
) -> None:
    """12 kills with no recovery between: each new child recovers (and may die doing so)."""
    Ledger.init(data_dir, name="crash-agent").close()
    ack_files = [data_dir.parent / f"acks-{n}.jsonl" for n in range(12)]
    stats = Stats()
    for ack_file in ack_files:
        extra = ("--batch", "6") if crash_rng.random() < 0.5 else ()
        kill_appender(data_dir, ack_file, crash_rng.uniform(0.0, 0.03), stats, *extra)
    assert [] == stats.died_early
    ledger = reopen_and_add(data_dir, stats)
    stats.acked = check_all(ledger, ack_files, batch=6)
    print(stats)
    assert 12 == stats.trials


# -- crash states built by hand --------------------------------------------


def test_torn_tail_is_quarantined(ledger: Ledger, data_dir: Path) -> None:
    """A partial last line is moved to quarantine/ byte for byte, with a warning; add works."""
    ledger.add(NewEntry(content=b"first"))
    ledger.add(NewEntry(content=b"second"))
    before = chain_bytes(data_dir)
    partial = b'{"content":"b3:0123","importance":50,"key":"ed25519:'
    with open(data_dir / "chain.jsonl", "ab") as f:
        f.write(partial)
    reopened = Ledger(data_dir)
    with pytest.warns(TornTailWarning):
        reopened.add(NewEntry(content=b"third"))
    quarantined = sorted((data_dir / "quarantine").iterdir())
    assert [partial] == [p.read_bytes() for p in quarantined]
    assert chain_bytes(data_dir).startswith(before)
    assert [None, b"first", b"second", b"third"] == contents(reopened)
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


def test_torn_tail_without_head_is_quarantined(ledger: Ledger, data_dir: Path) -> None:
    """A partial last line with head.json also lost is still quarantined, not fatal."""
    ledger.add(NewEntry(content=b"first"))
    partial = b'{"content":"b3:'
    with open(data_dir / "chain.jsonl", "ab") as f:
        f.write(partial)
    (data_dir / "head.json").unlink()
    reopened = Ledger(data_dir)
    with pytest.warns(TornTailWarning):
        reopened.add(NewEntry(content=b"second"))
    quarantined = sorted((data_dir / "quarantine").iterdir())
    assert [partial] == [p.read_bytes() for p in quarantined]
    assert [None, b"first", b"second"] == contents(reopened)
    assert_verifies(reopened)


def test_two_torn_tails_at_one_offset_are_both_kept(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two torn tails cut at the same offset in the same second keep two quarantine files."""
    frozen = time.gmtime(1_700_000_000)
    clock = SimpleNamespace(strftime=time.strftime, gmtime=lambda *_: frozen)
    monkeypatch.setattr(head_module, "time", clock)
    ledger.add(NewEntry(content=b"first"))
    torn = [b'{"content":"b3:aa', b'{"content":"b3:bbbb']
    for partial in torn:
        with open(data_dir / "chain.jsonl", "ab") as f:
            f.write(partial)
        with pytest.warns(TornTailWarning), Ledger(data_dir).locked():
            pass
    quarantined = sorted(p.read_bytes() for p in (data_dir / "quarantine").iterdir())
    assert sorted(torn) == quarantined


def test_lines_beyond_head_are_adopted(ledger: Ledger, data_dir: Path) -> None:
    """Complete lines past head.json's offset (crash before the head update) are adopted."""
    ledger.add(NewEntry(content=b"one"))
    old_head = (data_dir / "head.json").read_bytes()
    ledger.add(NewEntry(content=b"two"))
    ledger.add(NewEntry(content=b"three"))
    before = chain_bytes(data_dir)
    (data_dir / "head.json").write_bytes(old_head)
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"four")
    assert chain_bytes(data_dir).startswith(before)
    assert [None, b"one", b"two", b"three", b"four"] == contents(reopened)
    assert not (data_dir / "quarantine").exists()
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


@pytest.mark.parametrize("blob", ["deleted", "empty"])
@pytest.mark.parametrize("head", ["stale", "lost"])
def test_acknowledged_line_whose_blob_vanished_is_kept(
    ledger: Ledger, data_dir: Path, head: str, blob: str
) -> None:
    """A line whose blob was deleted after its add returned is kept; verify reports the blob."""
    ledger.add(NewEntry(content=b"one"))
    old_head = (data_dir / "head.json").read_bytes()
    lost = ledger.add(NewEntry(content=b"two"))
    assert lost.content is not None
    if head == "stale":
        (data_dir / "head.json").write_bytes(old_head)
    else:
        (data_dir / "head.json").unlink()
    if blob == "deleted":
        delete_blob(ledger.store, lost.content)
    else:
        alter_blob(ledger.store, lost.content, b"\0")  # its bytes lost: zeros
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"three")
    assert not (data_dir / "quarantine").exists()
    assert [2, 3] == [e["seq"] for e in entries_of(data_dir)[2:]]
    report = verify_lines(reopened.iter_lines(), blobs=reopened.store.raw)
    assert report.failure is not None
    expected = ("missing-content", 12) if blob == "deleted" else ("content-mismatch", 10)
    assert (2, *expected) == (report.failure.seq, report.failure.reason, report.failure.step)


def test_add_makes_the_blob_durable_before_writing_the_line(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blob and its folder are fsynced before the line is written; the chain after it."""
    events: list[str] = []
    chain_fds: set[int] = set()
    real_write, real_fsync, real_fdatasync = os.write, os.fsync, os.fdatasync
    real_open = os.open

    def open_(path: Any, flags: int, *args: Any) -> int:
        fd = real_open(path, flags, *args)
        if str(path).endswith("chain.jsonl"):
            chain_fds.add(fd)
        return fd

    def write(fd: int, data: Any) -> int:
        if fd in chain_fds:
            events.append("write chain")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        events.append("fsync chain" if fd in chain_fds else "fsync other")
        real_fsync(fd)

    def fdatasync(fd: int) -> None:
        events.append("fdatasync chain" if fd in chain_fds else "fdatasync other")
        real_fdatasync(fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    ledger.add(NewEntry(content=b"a new blob"))
    # The pack's bytes, the name of the new pack, the name of packs/: all before the line.
    expected = ["fdatasync other", "fsync other", "fsync other", "write chain", "fdatasync chain"]
    assert expected == events


def test_adopted_lines_keep_their_seq(ledger: Ledger, data_dir: Path) -> None:
    """After adopting lines beyond the head, the next add continues their sequence."""
    old_head = (data_dir / "head.json").read_bytes()  # genesis only
    ledger.add_batch([NewEntry(content=f"b{i}".encode()) for i in range(3)])
    (data_dir / "head.json").write_bytes(old_head)
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"next")
    assert [0, 1, 2, 3, 4] == [e["seq"] for e in entries_of(data_dir)]
    assert_verifies(reopened)


class Crash(BaseException):
    """Stands for the process dying at the point where it is raised."""


def crash_in_write_all(
    monkeypatch: pytest.MonkeyPatch, call: int, keep: Callable[[int], int]
) -> None:
    """Make journal.write_all's ``call``-th call (1-based) write ``keep(len)`` bytes and die."""
    real = journal.write_all
    calls = iter(range(1, 1_000_000))

    def write_all(fd: int, data: bytes) -> None:
        if next(calls) == call:
            real(fd, data[: keep(len(data))])
            raise Crash
        real(fd, data)

    monkeypatch.setattr(journal, "write_all", write_all)


BATCH = [NewEntry(content=f"batch item {i}".encode(), meta={"i": i}) for i in range(4)]


@pytest.mark.parametrize(
    "keep",
    [lambda n: 0, lambda n: 1, lambda n: n // 2, lambda n: n - 1, lambda n: n],
    ids=["none", "one-byte", "half", "all-but-newline", "all"],
)
def test_complete_journal_is_rolled_forward(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch, keep: Callable[[int], int]
) -> None:
    """A durable batch.journal whose batch the chain holds only in part is finished on open."""
    ledger.add(NewEntry(content=b"before"))
    before = chain_bytes(data_dir)
    crash_in_write_all(monkeypatch, call=2, keep=keep)  # call 1 writes the journal
    with pytest.raises(Crash):
        ledger.add_batch(BATCH)
    monkeypatch.undo()
    assert (data_dir / "batch.journal").exists()
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"after")
    assert not (data_dir / "batch.journal").exists()
    assert chain_bytes(data_dir).startswith(before)
    expected = [None, b"before", *(e.content for e in BATCH), b"after"]
    assert expected == contents(reopened)
    assert [0, 1, 2, 3, 4, 5, 6] == [e["seq"] for e in entries_of(data_dir)]
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


def test_journal_left_after_full_append_is_harmless(ledger: Ledger, data_dir: Path) -> None:
    """A crash after the batch's fsync but before the journal's removal adds nothing twice."""
    ledger.add(NewEntry(content=b"before"))
    offset = len(chain_bytes(data_dir))
    ledger.add_batch(BATCH)
    after_batch = chain_bytes(data_dir)
    data = after_batch[offset:]
    header = b"%s %d %d %s\n" % (journal.MAGIC, offset, len(data), b3(data).encode())
    (data_dir / "batch.journal").write_bytes(header + data)
    reopened = Ledger(data_dir)
    with reopened.locked():
        pass
    assert not (data_dir / "batch.journal").exists()
    assert after_batch == chain_bytes(data_dir)
    add_quietly(reopened, b"after")
    assert [None, b"before", *(e.content for e in BATCH), b"after"] == contents(reopened)
    assert_verifies(reopened)


@pytest.mark.parametrize(
    "keep",
    [lambda n: 0, lambda n: 10, lambda n: n // 2, lambda n: n - 1],
    ids=["empty", "partial-header", "partial-data", "all-but-last-byte"],
)
def test_incomplete_journal_is_dropped(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch, keep: Callable[[int], int]
) -> None:
    """A batch.journal cut short (crash while writing it) is dropped; the chain is untouched."""
    ledger.add(NewEntry(content=b"before"))
    before = chain_bytes(data_dir)
    crash_in_write_all(monkeypatch, call=1, keep=keep)
    with pytest.raises(Crash):
        ledger.add_batch(BATCH)
    monkeypatch.undo()
    assert (data_dir / "batch.journal").exists()
    assert before == chain_bytes(data_dir)
    reopened = Ledger(data_dir)
    with reopened.locked():
        pass
    assert not (data_dir / "batch.journal").exists()
    assert before == chain_bytes(data_dir)
    add_quietly(reopened, b"after")
    assert [None, b"before", b"after"] == contents(reopened)
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


def test_journal_with_wrong_hash_is_dropped(ledger: Ledger, data_dir: Path) -> None:
    """A journal of the right length whose bytes do not hash to its header is dropped."""
    ledger.add(NewEntry(content=b"before"))
    before = chain_bytes(data_dir)
    data = b'{"not":"a batch"}\n'
    header = b"%s %d %d %s\n" % (journal.MAGIC, len(before), len(data), b3(b"other").encode())
    (data_dir / "batch.journal").write_bytes(header + data)
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"after")
    assert not (data_dir / "batch.journal").exists()
    assert [None, b"before", b"after"] == contents(reopened)
    assert chain_bytes(data_dir).startswith(before)
    assert_verifies(reopened)


@pytest.mark.parametrize("damage", ["deleted", "empty", "garbage", "bad-check", "torn"])
def test_lost_head_is_rebuilt(ledger: Ledger, data_dir: Path, damage: str) -> None:
    """A deleted or damaged head.json is rebuilt from the chain; add works."""
    for word in (b"one", b"two", b"three"):
        ledger.add(NewEntry(content=word))
    head_file = data_dir / "head.json"
    raw = head_file.read_bytes()
    if damage == "deleted":
        head_file.unlink()
    elif damage == "empty":
        head_file.write_bytes(b"")
    elif damage == "garbage":
        head_file.write_bytes(b"\x00not json\xff")
    elif damage == "bad-check":
        head = orjson.loads(raw)
        head["size"] = 1
        head_file.write_bytes(orjson.dumps(head))
    else:
        head_file.write_bytes(raw[: len(raw) // 3])
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"four")
    assert [None, b"one", b"two", b"three", b"four"] == contents(reopened)
    assert [0, 1, 2, 3, 4] == [e["seq"] for e in entries_of(data_dir)]
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


# -- streamed batches (Ledger.add_stream: any length, bounded memory) ---------


def small_spool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spool a batch's lines to batch.spool after 200 bytes, and copy them 97 bytes at a time."""
    monkeypatch.setattr(journal, "SPOOL_MEMORY", 200)
    monkeypatch.setattr(journal, "PIECE", 97)


STREAM = [NewEntry(content=f"streamed item {i}".encode(), meta={"i": i}) for i in range(20)]


def test_a_streamed_batch_is_one_batch(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty items from a generator, three at a time, spooled to a file: one batch, whole."""
    small_spool(monkeypatch)
    ledger.add(NewEntry(content=b"before"))
    done = ledger.add_stream((item for item in STREAM), chunk=3)
    assert (2, 20) == (done.first, done.entries)
    raw = chain_bytes(data_dir)
    assert done.end == len(raw) and raw[done.start :].count(b"\n") == 20
    assert [None, b"before", *(e.content for e in STREAM)] == contents(ledger)
    assert len({e["ts"] for e in entries_of(data_dir)[2:]}) == 1  # one ts for the batch
    assert not (data_dir / "batch.spool").exists() and not (data_dir / "batch.journal").exists()
    assert_verifies(ledger)
    assert_head_matches_chain(data_dir)
    add_quietly(Ledger(data_dir), b"after")
    assert_verifies(Ledger(data_dir))


def test_a_streamed_batch_with_a_bad_item_writes_nothing(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 8 holds a secret: after two chunks were stored and signed, nothing is appended."""
    small_spool(monkeypatch)
    ledger.add(NewEntry(content=b"before"))
    before, head_before = chain_bytes(data_dir), (data_dir / "head.json").read_bytes()
    bad = [*STREAM[:7], NewEntry(content=b"the key is AKIAIOSFODNN7QWERTYZ"), *STREAM[7:]]
    with pytest.raises(SecretError, match="batch item 8"):
        ledger.add_stream(iter(bad), chunk=3)
    assert before == chain_bytes(data_dir)
    assert head_before == (data_dir / "head.json").read_bytes()
    assert not (data_dir / "batch.spool").exists() and not (data_dir / "batch.journal").exists()
    with pytest.raises(InputError, match="the batch is empty"):
        ledger.add_stream(iter([]))
    assert before == chain_bytes(data_dir)
    add_quietly(Ledger(data_dir), b"after")
    assert [None, b"before", b"after"] == contents(Ledger(data_dir))
    assert_verifies(Ledger(data_dir))


def crash_in_writes_to(
    monkeypatch: pytest.MonkeyPatch, name: str, call: int, keep: Callable[[int], int]
) -> None:
    """Make the ``call``-th journal.write_all to the file ``name`` write ``keep(len)`` bytes
    and die (writes to other files go through)."""
    real = journal.write_all
    calls = iter(range(1, 1_000_000))

    def write_all(fd: int, data: bytes) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(name) and next(calls) == call:
            real(fd, data[: keep(len(data))])
            raise Crash
        real(fd, data)

    monkeypatch.setattr(journal, "write_all", write_all)


@pytest.mark.parametrize("call", [1, 2, 5])
def test_a_spooled_batch_cut_short_in_the_chain_is_rolled_forward(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch, call: int
) -> None:
    """The process dies while a spooled batch is copied into the chain, a piece at a time
    (its journal complete): the next writer finishes it from the journal, read in pieces."""
    small_spool(monkeypatch)
    ledger.add(NewEntry(content=b"before"))
    before = chain_bytes(data_dir)
    crash_in_writes_to(monkeypatch, "chain.jsonl", call, lambda n: n // 2)
    with pytest.raises(Crash):
        ledger.add_stream(iter(STREAM), chunk=3)
    monkeypatch.undo()
    small_spool(monkeypatch)  # the journal is read back 97 bytes at a time too
    assert (data_dir / "batch.journal").exists()
    assert len(chain_bytes(data_dir)) > len(before) + 97 * (call - 1)
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"after")
    assert not (data_dir / "batch.journal").exists()
    assert chain_bytes(data_dir).startswith(before)
    assert [None, b"before", *(e.content for e in STREAM), b"after"] == contents(reopened)
    assert_verifies(reopened)
    assert_head_matches_chain(data_dir)


@pytest.mark.parametrize("call", [1, 3])
def test_a_spooled_journal_cut_short_is_dropped(
    ledger: Ledger, data_dir: Path, monkeypatch: pytest.MonkeyPatch, call: int
) -> None:
    """The process dies while writing a spooled batch's journal: the chain is untouched."""
    small_spool(monkeypatch)
    ledger.add(NewEntry(content=b"before"))
    before = chain_bytes(data_dir)
    crash_in_writes_to(monkeypatch, "batch.journal", call, lambda n: n // 2)
    with pytest.raises(Crash):
        ledger.add_stream(iter(STREAM), chunk=3)
    monkeypatch.undo()
    assert (data_dir / "batch.journal").exists()
    assert before == chain_bytes(data_dir)
    reopened = Ledger(data_dir)
    add_quietly(reopened, b"after")
    assert not (data_dir / "batch.journal").exists()
    assert [None, b"before", b"after"] == contents(reopened)
    assert_verifies(reopened)

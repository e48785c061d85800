"""Concurrent writers: the flock serialises them into one contiguous, verifying chain.

Each writer is a real process running tests/helpers/appender.py; all of them
open the ledger first and are then released together, so their adds contend
for the lock from the start.
"""

# The project's style is `assert expected == actual`, which SIM300 calls a Yoda condition.

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify.lines import verify_lines

APPENDER = Path(__file__).parent / "helpers" / "appender.py"
TIMEOUT = 120  # seconds for every writer to finish: longer means a deadlock


def spawn(data_dir: Path, ack_file: Path, tag: str, *extra: str) -> subprocess.Popen[bytes]:
    """Start one appender that waits on stdin before adding."""
    err = open(ack_file.with_suffix(".err"), "wb")  # noqa: SIM115 (the child owns it)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(APPENDER),
            str(data_dir),
            str(ack_file),
            "--tag",
            tag,
            "--wait",
            *extra,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
    )
    err.close()
    return proc


def wait_ready(procs: list[subprocess.Popen[bytes]]) -> None:
    """Block until every appender has printed "ready"."""
    with selectors.DefaultSelector() as sel:
        for proc in procs:
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ, proc)
        waiting = len(procs)
        deadline = time.monotonic() + TIMEOUT
        while waiting:
            events = sel.select(timeout=max(0.0, deadline - time.monotonic()))
            if not events:
                pytest.fail("appenders did not start in time")
            for key, _ in events:
                proc = key.data
                assert proc.stdout is not None
                assert b"ready\n" == proc.stdout.readline()
                sel.unregister(key.fileobj)
                waiting -= 1


def release_and_wait(
    procs: list[subprocess.Popen[bytes]], ack_files: list[Path], *, started: bool = False
) -> None:
    """Let every appender go at once; fail (and kill them) if any hangs or fails."""
    if not started:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            proc.stdin.close()
    deadline = time.monotonic() + TIMEOUT
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in procs:
                other.kill()
                other.wait()
            pytest.fail(f"appenders still running after {TIMEOUT} s: deadlock?")
    for proc, ack in zip(procs, ack_files, strict=True):
        assert proc.stdout is not None
        proc.stdout.close()
        err = ack.with_suffix(".err").read_text(errors="replace")
        assert (0, "") == (proc.returncode, err)


def read_acks(ack_file: Path) -> list[dict[str, Any]]:
    """Complete acknowledgement lines (a killed writer may leave the last one short)."""
    if not ack_file.exists():
        return []
    raw = ack_file.read_bytes()
    return [orjson.loads(line) for line in raw[: raw.rfind(b"\n") + 1].splitlines()]


def check_chain(ledger: Ledger, total: int) -> list[dict[str, Any]]:
    """The chain has ``total`` entries after genesis, seq 0..total, and verifies."""
    raw = ledger.layout.chain.read_bytes()
    assert raw.endswith(b"\n")
    entries = [orjson.loads(line) for line in raw.splitlines()]
    assert list(range(total + 1)) == [e["seq"] for e in entries]
    report = verify_lines(ledger.iter_lines(), blobs=ledger.store.raw)
    assert report.failure is None
    assert (True, total + 1, 0) == (report.ok, report.size, report.torn_tail)
    return entries


def check_writer(
    ledger: Ledger,
    entries: list[dict[str, Any]],
    tag: str,
    pid: int,
    count: int,
    ack_file: Path,
) -> None:
    """Each of the writer's contents is in the chain exactly once, at its acknowledged seq."""
    wanted = {f"{tag} pid={pid} n={n}".encode() for n in range(count)}
    found = Counter(ledger.store.get(e["content"]) for e in entries if e["content"] is not None)
    assert {c: 1 for c in wanted} == {c: found[c] for c in wanted}
    acks = read_acks(ack_file)
    assert count == len(acks)
    lines = ledger.layout.chain.read_bytes().splitlines()
    expected = [(a["hash"], b3(a["content"].encode())) for a in acks]
    actual = [(b3(lines[a["seq"]]), entries[a["seq"]]["content"]) for a in acks]
    assert expected == actual


@pytest.mark.slow
def test_eight_writers_make_one_contiguous_chain(ledger: Ledger, tmp_path: Path) -> None:
    """8 processes x 100 adds: 800 entries, seq 0..800, verifies, each content once."""
    data_dir = ledger.layout.root
    ack_files = [tmp_path / f"acks-{i}.jsonl" for i in range(8)]
    procs = [spawn(data_dir, ack, f"w{i}", "--count", "100") for i, ack in enumerate(ack_files)]
    wait_ready(procs)
    release_and_wait(procs, ack_files)
    entries = check_chain(ledger, 800)
    for i, (proc, ack) in enumerate(zip(procs, ack_files, strict=True)):
        check_writer(ledger, entries, f"w{i}", proc.pid, 100, ack)


@pytest.mark.slow
def test_single_and_batch_writers_interleave_whole_batches(ledger: Ledger, tmp_path: Path) -> None:
    """4 single-add and 4 batch writers (batches of 10): 800 entries, no batch split."""
    data_dir = ledger.layout.root
    ack_files = [tmp_path / f"acks-{i}.jsonl" for i in range(8)]
    procs = [
        spawn(data_dir, ack, f"w{i}", "--count", "100", *(["--batch", "10"] if i % 2 else []))
        for i, ack in enumerate(ack_files)
    ]
    wait_ready(procs)
    release_and_wait(procs, ack_files)
    entries = check_chain(ledger, 800)
    for i, (proc, ack) in enumerate(zip(procs, ack_files, strict=True)):
        check_writer(ledger, entries, f"w{i}", proc.pid, 100, ack)
    batches: dict[tuple[int, int], list[int]] = defaultdict(list)
    for e in entries:
        if "batch" in e["meta"]:
            batches[(e["meta"]["pid"], e["meta"]["batch"])].append(e["seq"])
    assert 40 == len(batches)
    for seqs in batches.values():
        assert list(range(seqs[0], seqs[0] + 10)) == seqs


@pytest.mark.slow
def test_writer_killed_mid_run_does_not_block_others(ledger: Ledger, tmp_path: Path) -> None:
    """SIGKILL of one batch writer amid 4 others: they finish, nothing acknowledged is lost."""
    data_dir = ledger.layout.root
    ack_files = [tmp_path / f"acks-{i}.jsonl" for i in range(4)]
    victim_ack = tmp_path / "acks-victim.jsonl"
    procs = [spawn(data_dir, ack, f"w{i}", "--count", "100") for i, ack in enumerate(ack_files)]
    victim = spawn(data_dir, victim_ack, "victim", "--batch", "7")
    wait_ready([*procs, victim])
    for proc in [victim, *procs]:
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
    time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    for proc in [victim, *procs]:
        assert proc.stdin is not None
        proc.stdin.close()
    assert victim.stdout is not None
    victim.stdout.close()
    assert -signal.SIGKILL == victim.returncode
    release_and_wait(procs, ack_files, started=True)
    ledger.add(NewEntry(content=b"after the kill"))
    size = len(ledger.layout.chain.read_bytes().splitlines())
    entries = check_chain(ledger, size - 1)
    for i, (proc, ack) in enumerate(zip(procs, ack_files, strict=True)):
        check_writer(ledger, entries, f"w{i}", proc.pid, 100, ack)
    victim_acks = read_acks(victim_ack)
    lines = ledger.layout.chain.read_bytes().splitlines()
    assert [a["hash"] for a in victim_acks] == [b3(lines[a["seq"]]) for a in victim_acks]
    victim_entries = [e for e in entries if e["meta"].get("pid") == victim.pid]
    assert 0 == len(victim_entries) % 7
    assert len(victim_entries) >= len(victim_acks)

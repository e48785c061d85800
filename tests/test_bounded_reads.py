"""Issue 22: every stream the program reads from a path it was given is bounded in bytes
and time, and a hook's time limit holds during reads.

A hook given transcript_path=/dev/zero grew to 24 GB and was killed: its time limit never
fired. Each case runs the real console script in a subprocess with a wall-clock bound.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from helpers import transcripts as cc
from helpers.cli import SCRIPT, Cli

from memory_chain.capture import transcripts
from memory_chain.capture.capture import capture
from memory_chain.workspace.scopes import Workspace

PAYLOADS = Path(__file__).resolve().parent / "fixtures" / "hook-payloads"


def _payload(name: str, **changes: object) -> bytes:
    data = json.loads((PAYLOADS / name).read_text())
    data.update(changes)
    return json.dumps(data).encode()


@pytest.mark.parametrize("what", ["/dev/zero", "fifo", "folder"])
def test_a_hook_refuses_a_transcript_that_is_not_a_regular_file(
    populated: Cli, tmp_path: Path, what: str
) -> None:
    """SessionEnd with transcript_path /dev/zero, a FIFO nobody writes, or a folder: exit 0
    at once with one line, logged, memory at most a few MB (it grew without end before)."""
    path = {"/dev/zero": Path("/dev/zero"), "fifo": tmp_path / "fifo", "folder": tmp_path}[what]
    if what == "fifo":
        os.mkfifo(path)
    started = time.monotonic()
    result = populated.run(
        "hook", "SessionEnd", stdin=_payload("SessionEnd-1.json", transcript_path=str(path))
    )
    assert time.monotonic() - started < 20
    assert 0 == result.code and "" == result.out
    assert "not a regular file" in result.err or "is a directory" in result.err
    log = (populated.root / "logs" / "hooks.log").read_text()
    assert "SessionEnd" in log.splitlines()[-1]


def test_the_time_limit_holds_while_stdin_is_read(populated: Cli) -> None:
    """A hook whose stdin stays open and silent is stopped by its time limit (exit 0)."""
    env = {**populated.env, "MEMORY_CHAIN_HOOK_TIMEOUT": "1"}
    started = time.monotonic()
    proc = subprocess.Popen(
        [SCRIPT, "hook", "SessionStart"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        out, err = _wait(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    assert time.monotonic() - started < 20
    assert 0 == proc.returncode
    assert b"time limit" in err and b"" == out


def _wait(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Wait for ``proc`` with its stdin held open (communicate would close it)."""
    assert proc.stdout is not None and proc.stderr is not None
    proc.wait(timeout=30)
    return proc.stdout.read(), proc.stderr.read()


def test_stdin_that_never_ends_is_cut_off(populated: Cli) -> None:
    """`hook` and `verify-proof -` given /dev/zero on stdin stop at their byte limit."""
    for args in (["hook", "SessionStart"], ["verify-proof", "-", "--chain-id", "b3:" + "0" * 64]):
        with open("/dev/zero", "rb") as zero:
            started = time.monotonic()
            done = subprocess.run(
                [SCRIPT, *args], stdin=zero, capture_output=True, env=populated.env, timeout=120
            )
        assert time.monotonic() - started < 60
        assert "MiB" in done.stderr.decode(), done.stderr
        assert done.returncode == (0 if args[0] == "hook" else 2)


def test_a_transcript_larger_than_a_window_is_read_window_by_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each capture reads at most one window of bytes; the next one goes on from there, and a
    "Remember that ..." in the last window is captured (nothing is skipped, nothing re-read)."""
    filler = cc.jsonl([cc.user(f"line number {i} with some words in it") for i in range(200)])
    last = cc.jsonl([cc.user("Remember that the staging database runs on port 5433.")])
    path = tmp_path / "s.jsonl"
    path.write_bytes(filler + last)
    monkeypatch.setattr(transcripts, "MAX_WINDOW_BYTES", len(filler) // 3)
    ws = Workspace(tmp_path / "user", None)
    reads = []
    for _ in range(5):
        report = capture(ws, path)
        reads.append(report.read["lines"])
        if any("5433" in d["text"] for d in report.captured):
            break
    else:
        raise AssertionError(f"never captured; lines read per run: {reads}")
    assert len(reads) >= 3 and sum(reads) == 201

"""Issue 22: kill -9 (of real processes) during capture, workspace writes and an index
rebuild loses nothing acknowledged, and MEMORY.md holds its old or its new bytes, never a
torn write. (Curation: tests/test_curate_crash.py; the ledger: tests/test_crash.py.)

Each trial starts the real command, kills it at a random point of its run, then checks the
files and runs the command again to completion. Each test requires that at least two kills
landed while the work was under way, or it proves nothing.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import transcripts as cc
from helpers.cli import SCRIPT, Cli
from helpers.words import made_up_words

from memory_chain.workspace.markdown import Document

TRIALS = 10


def _kill_after(proc: subprocess.Popen[bytes], delay: float) -> bool:
    """SIGKILL ``proc`` after ``delay`` s; True if it was still running."""
    time.sleep(delay)
    running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return running


def _texts(path: Path) -> list[str]:
    return [e.text for e in Document.parse(path.read_bytes()).entries()] if path.exists() else []


def _words(n: int, seed: int) -> list[str]:
    """``n`` made-up facts whose words barely overlap (none a duplicate of another)."""
    it = iter(made_up_words(3 * n, seed))
    return [f"{next(it)} keeps {next(it)} beside {next(it)}" for _ in range(n)]


FACTS = _words(400, 30)

_WRITER = """
import sys
from pathlib import Path
from memory_chain.workspace.ops import remember
from memory_chain.workspace.scopes import Scope
scope = Scope("user", Path(sys.argv[1]))
for i, text in enumerate(sys.argv[2:]):
    remember(scope, text, section="Notes")
    print(i, flush=True)
"""


@pytest.mark.slow
def test_killed_workspace_writes_lose_nothing_acknowledged(tmp_path: Path) -> None:
    """An agent writing entry after entry is killed: every entry whose write returned is in
    MEMORY.md, at most one more is, and the file parses and renders byte for byte."""
    rng = random.Random(31)
    landed = 0
    for trial in range(TRIALS):
        root = tmp_path / f"ws{trial}"
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(root), *FACTS], stdout=subprocess.PIPE
        )
        landed += _kill_after(proc, rng.uniform(0.3, 1.2))
        assert proc.stdout is not None
        acknowledged = len(proc.stdout.read().split())
        memory = root / "MEMORY.md"
        data = memory.read_bytes() if memory.exists() else b""
        assert Document.parse(data).render() == data
        texts = _texts(memory)
        assert texts == FACTS[: len(texts)], texts[-3:]
        assert acknowledged <= len(texts) <= acknowledged + 1
    assert landed >= 2, f"only {landed} kills landed mid-run"


@pytest.mark.slow
def test_a_killed_capture_captures_each_memory_once(raw: Cli, tmp_path: Path) -> None:
    """capture killed mid-transcript, then run again: every "Remember that ..." is in
    MEMORY.md exactly once."""
    facts = _words(300, 34)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(cc.jsonl([cc.user(f"Remember that {f}.") for f in facts]))
    template = tmp_path / "template"
    shutil.copytree(raw.root, template)
    rng = random.Random(32)
    started = time.monotonic()
    subprocess.run([SCRIPT, "capture", "--transcript", str(transcript)], env=raw.env, check=True)
    took = time.monotonic() - started
    landed = 0
    for trial in range(TRIALS):
        shutil.rmtree(raw.root)
        shutil.copytree(template, raw.root)
        proc = subprocess.Popen(
            [SCRIPT, "capture", "--transcript", str(transcript)],
            env=raw.env,
            stdout=subprocess.DEVNULL,
        )
        landed += _kill_after(proc, rng.uniform(0.6, 1.0) * took)
        memory = raw.root / "workspace" / "MEMORY.md"
        data = memory.read_bytes() if memory.exists() else b""
        assert Document.parse(data).render() == data
        raw.ok("capture", "--transcript", str(transcript))
        texts = " | ".join(_texts(memory)).casefold()
        for f in facts:
            assert texts.count(f.casefold()) == 1, (trial, f)
    assert landed >= 2, f"only {landed} kills landed mid-run"


@pytest.mark.slow
def test_a_killed_index_rebuild_is_rebuilt(raw: Cli, tmp_path: Path) -> None:
    """`reindex` killed: memory.db is a cache, the next search finds every entry."""
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(f'{{"content": "record {i} of the batch"}}\n' for i in range(4000)))
    raw.ok("add", "--batch", str(batch))
    raw.ok("search", "record")
    rng = random.Random(33)
    started = time.monotonic()
    subprocess.run([SCRIPT, "reindex"], env=raw.env, check=True, stdout=subprocess.DEVNULL)
    took = time.monotonic() - started
    landed = 0
    for _ in range(TRIALS):
        proc = subprocess.Popen([SCRIPT, "reindex"], env=raw.env, stdout=subprocess.DEVNULL)
        landed += _kill_after(proc, rng.uniform(0.3, 1.0) * took)
        for n in (0, 1999, 3999):
            hits = raw.ok("search", f"record {n} of the batch", "--json").json()
            assert any(h.get("text") == f"record {n} of the batch" for h in hits), n
    assert landed >= 2, f"only {landed} kills landed mid-run"

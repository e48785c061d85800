"""Issue 22: `curate` killed at any point (kill -9 of the real process), then run again,
promotes each captured line exactly once and commits each decision once.

Before, a kill between the MEMORY.md write and the pointer's save (1 in 20 random kills)
made the rerun promote everything again: the entries consolidation had moved into a topic
file were not seen, and each topic file gained a second copy of every line.
"""

from __future__ import annotations

import datetime
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest
from helpers.cli import SCRIPT, Cli
from helpers.words import made_up_words

from memory_chain.workspace.markdown import Document

LINES = 320  # over the 200-line cap: curation consolidates into a topic file


def _texts(n: int, seed: int) -> list[tuple[str, str]]:
    """(category, text) of ``n`` captured lines whose words barely overlap."""
    it = iter(made_up_words(3 * n, seed))
    out = []
    for i in range(n):
        a, b, c = next(it), next(it), next(it)
        if i % 16 == 0:
            out.append(("decision", f"Decided that {a} uses {b} with {c}"))
        else:
            out.append(("preference", f"Prefers {a} over {b} for {c}"))
    return out


def _template(cli: Cli) -> list[str]:
    cli.ok("init", "--name", "crash")
    day = datetime.date.today().isoformat()
    texts = _texts(LINES, 22)
    daily = cli.root / "workspace" / "memory" / f"{day}.md"
    daily.parent.mkdir(parents=True)
    body = "".join(
        f"- 10:00 {text} <!-- mc: conf=0.90 src=auto cat={cat} ref=s/{i} scope=user -->\n"
        for i, (cat, text) in enumerate(texts)
    )
    daily.write_text(f"# {day}\n\n## Captured\n{body}")
    return [t for _, t in texts]


def _workspace_texts(root: Path) -> Counter[str]:
    """Entries of MEMORY.md and the topic files (not consolidation's links to them)."""
    ws = root / "workspace"
    files = [ws / "MEMORY.md", *(p for p in (ws / "memory").glob("*.md") if p.stem[:1].isalpha())]
    return Counter(
        e.text
        for f in files
        if f.exists()
        for e in Document.parse(f.read_bytes()).entries()
        if not e.text.startswith("[")
    )


def _chain_contents(root: Path) -> Counter[str]:
    lines = (root / "chain.jsonl").read_bytes().splitlines()
    return Counter(o["content"] for o in map(orjson.loads, lines) if o["source"] == "curation")


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> float:
    """When ``path`` first exists (monotonic), or when ``proc`` ended without it."""
    while not path.exists() and proc.poll() is None:
        time.sleep(0.002)
    return time.monotonic()


@pytest.mark.slow
def test_a_killed_curation_promotes_nothing_twice(tmp_path: Path) -> None:
    template = Cli(tmp_path / "template", tmp_path / "home")
    texts = _template(template)
    started = time.monotonic()
    control = subprocess.Popen(
        [SCRIPT, "curate", "--review", "auto"], env=template.env, stdout=subprocess.DEVNULL
    )
    wrote_at = _wait_for(template.root / "workspace" / "MEMORY.md", control) - started
    assert control.wait(timeout=120) == 0
    took = time.monotonic() - started  # the whole process, start-up included
    tail = max(took - wrote_at, 0.01)  # from MEMORY.md's first write to the end
    assert _workspace_texts(template.root) == Counter(texts)  # control: a clean run
    shutil.rmtree(template.root)
    _template(template)
    rng = random.Random(20261125)
    mid_run = 0
    for trial in range(24):
        cli = Cli(tmp_path / f"trial{trial}", tmp_path / "home")
        shutil.copytree(template.root, cli.root)
        daily = sorted((cli.root / "workspace" / "memory").glob("2*.md"))[0].read_bytes()
        proc = subprocess.Popen(
            [SCRIPT, "curate", "--review", "auto"], env=cli.env, stdout=subprocess.DEVNULL
        )
        if trial % 2:  # anywhere in the run
            time.sleep(rng.uniform(0.2, 1.0) * took)
        else:  # after MEMORY.md was first written, however loaded the machine is
            _wait_for(cli.root / "workspace" / "MEMORY.md", proc)
            time.sleep(rng.uniform(0.0, 0.6) * tail)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        written = (cli.root / "workspace" / "MEMORY.md").exists()
        mid_run += proc.returncode == -signal.SIGKILL and written
        cli.ok("curate", "--review", "auto")
        seen = _workspace_texts(cli.root)
        assert seen == Counter(texts), [t for t, n in seen.items() if n > 1][:3]
        assert all(n == 1 for n in _chain_contents(cli.root).values())
        assert sum(_chain_contents(cli.root).values()) == LINES // 16
        assert cli.ok("verify").out.startswith("ok: ")
        assert sorted((cli.root / "workspace" / "memory").glob("2*.md"))[0].read_bytes() == daily
    assert mid_run >= 2, f"only {mid_run} kills landed after MEMORY.md was written"

#!/usr/bin/env python
"""Capture and curation benchmarks (issue 12).

Run from the repository root::

    python benchmarks/capture.py
    python benchmarks/capture.py --only curate

What is measured, each ratio against a baseline taken in the same run:

- capture10mb: ``capture.capture`` of a 10 MB Claude Code transcript (about
  3,600 records, as an agent session runs: 6 % user turns drawn from the
  labelled corpus, 24 % assistant text, 35 % tool calls, 35 % tool results
  of 1-16 KB, 5 % of them failures) into a fresh workspace, vs reading the
  same file and parsing every line with orjson, interleaved; target <= 2 x;
  with the lexical scorer, and again (for information) with the semantic
  scorer where the extra is installed, each run embedding its statements;
- unchanged: ``memory-chain capture --transcript FILE`` of an already
  captured transcript as a fresh process, interleaved with
  ``memory-chain --help``; absolute target 50 ms;
- curate: ``capture.curate`` of 30 daily files of 50 captured lines each
  (``--days 30``: all 1,500 lines; about a tenth decisions, committed to a
  fresh chain in one batch), on a fresh copy each run; target <= 1 s.

Prints a markdown table and writes benchmarks/results/capture.json.
Always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from common import REPO, git_state, log, median

sys.path.insert(0, str(REPO / "tests"))

RESULTS = REPO / "benchmarks" / "results"
SIZE = 10 * 1024 * 1024


def make_transcript(path: Path, size: int = SIZE) -> int:
    """A Claude Code session of about ``size`` bytes; returns its record count."""
    from capture_quality import load
    from helpers import transcripts as cc

    rng = random.Random(12)
    said = [t.text for s in load() for t in s.turns if t.role == "user"]
    out, total, n = [], 0, 0
    while total < size:
        kind = rng.random()
        if kind < 0.06:
            rec = cc.user(rng.choice(said))
        elif kind < 0.3:
            rec = cc.assistant(cc.text_block("Let me look at that. " * rng.randint(1, 20)))
        elif kind < 0.65:
            rec = cc.tool_use(rng.choice(["pnpm test", "git status", "make all", "ls -la"]))
        else:
            body = "".join(rng.choice("abcdefghij \n") for _ in range(rng.randint(1024, 16384)))
            rec = cc.tool_result(body, error=rng.random() < 0.05)
        line = orjson.dumps(rec) + b"\n"
        out.append(line)
        total += len(line)
        n += 1
    path.write_bytes(b"".join(out))
    return n


def forget_texts() -> None:
    """Empty memory_chain's caches of texts seen (the detector's sentences and commands,
    dedup's profiles, ...): a capture runs in a fresh process, so a run must not find
    the last run's sentences classified. The scorer's weights stay loaded (read once per
    process, like an import; ``scorer.load`` is the one cache kept)."""
    from memory_chain.capture import scorer

    for name, module in list(sys.modules.items()):
        if not name.startswith("memory_chain."):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and value is not scorer.load and not isinstance(value, type):
                clear()


def parse_jsonl(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if orjson.loads(line))


def bench_capture10mb(runs: int, embeddings: bool = False) -> dict[str, Any]:
    """The capture against parsing. By default with the lexical scorer (the capture's own
    machinery, the target's subject); with ``embeddings`` the semantic scorer, each run
    embedding its statements afresh (the model loaded before, as once per process)."""
    from memory_chain.capture import semantic
    from memory_chain.capture.capture import capture
    from memory_chain.workspace.scopes import Workspace

    before = os.environ.get("MEMORY_CHAIN_SEMANTIC")
    os.environ["MEMORY_CHAIN_SEMANTIC"] = "1" if embeddings else "0"
    tmp = Path(tempfile.mkdtemp(prefix="mc-cap-bench-"))
    try:
        t = tmp / "session.jsonl"
        records = make_transcript(t)
        if embeddings:
            semantic.vector("the model loaded")
        parse, cap, found, embedded = [], [], 0, 0
        for i in range(runs):
            t0 = time.perf_counter()
            parse_jsonl(t)
            parse.append((time.perf_counter() - t0) * 1000)
            ws = Workspace(tmp / f"user{i}", None)
            semantic.reset()  # no statement embedded before (the model stays loaded)
            forget_texts()
            t0 = time.perf_counter()
            report = capture(ws, t)
            cap.append((time.perf_counter() - t0) * 1000)
            found = len(report.captured) + len(report.candidates)
            embedded = semantic.spent()
        ratios = [c / p for c, p in zip(cap, parse, strict=True)]
        return {
            "bytes": t.stat().st_size,
            "records": records,
            "found": found,
            "embedded": embedded,
            "parse_ms": median(parse),
            "capture_ms": median(cap),
            "ratio_median": median(ratios),
            "samples": {"parse": parse, "capture": cap},
        }
    finally:
        if before is None:
            os.environ.pop("MEMORY_CHAIN_SEMANTIC", None)
        else:
            os.environ["MEMORY_CHAIN_SEMANTIC"] = before
        shutil.rmtree(tmp, ignore_errors=True)


def bench_unchanged(runs: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="mc-cap-bench-"))
    try:
        t = tmp / "session.jsonl"
        make_transcript(t, 256 * 1024)
        script = str(Path(sys.executable).with_name("memory-chain"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CHAIN_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(MEMORY_CHAIN_DIR=str(tmp / "data"), HOME=str(tmp / "home"))
        argv = [script, "capture", "--transcript", str(t), "--project", str(tmp / "project")]
        (tmp / "project" / ".git").mkdir(parents=True)
        subprocess.run(argv, env=env, capture_output=True, check=True, cwd=tmp)

        def run(args: list[str]) -> float:
            t0 = time.perf_counter()
            p = subprocess.run(args, env=env, capture_output=True, cwd=tmp)
            dt = (time.perf_counter() - t0) * 1000
            assert p.returncode == 0, p.stderr
            return dt

        check = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, cwd=tmp)
        assert "nothing new" in check.stdout, check.stdout
        helps, caps = [], []
        for _ in range(runs):
            helps.append(run([script, "--help"]))
            caps.append(run(argv))
        return {
            "help_ms": median(helps),
            "unchanged_ms": median(caps),
            "ratio_median": median([c / h for c, h in zip(caps, helps, strict=True)]),
            "samples": {"help": helps, "unchanged": caps},
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


CATEGORIES = [
    ("preference", "user", "Prefers {w} for {v}"),
    ("convention", "project", "The {w} folder holds the {v} files"),
    ("tool", "project", "Run {w} with `make {v}`"),
    ("correction", "project", "Use {w}, not {v}"),
    ("error-fix", "project", "`Error: {w} missing` -> fixed by `pip install {v}`"),
    ("decision", "project", "Decided to use {w} for the {v} service"),
]


def build_dailies(root: Path, today: date, files: int = 30, per_file: int = 50) -> None:
    memory = root / "memory"
    memory.mkdir(parents=True)
    n = 0
    for d in range(files):
        day = today - timedelta(days=d)
        lines = [f"# {day}\n\n## Captured\n"]
        for _ in range(per_file):
            cat, scope, tpl = CATEGORIES[n % len(CATEGORIES)]
            text = tpl.format(w=f"alpha{n:04d}", v=f"beta{n:04d}")
            meta = f"conf=0.90 src=auto cat={cat} ref=s/{n:08x} scope={scope}"
            lines.append(f"- 10:{n % 60:02d} {text} <!-- mc: {meta} -->\n")
            n += 1
        (memory / f"{day}.md").write_text("".join(lines))


def bench_curate(runs: int) -> dict[str, Any]:
    from memory_chain.capture.chaindoor import ChainDoor
    from memory_chain.capture.curate import curate
    from memory_chain.chain.store.ledger import Ledger
    from memory_chain.workspace.scopes import Workspace

    tmp = Path(tempfile.mkdtemp(prefix="mc-cur-bench-"))
    try:
        today = date.today()
        template = tmp / "template"
        build_dailies(template, today)
        times, curated, committed = [], 0, 0
        for i in range(runs):
            user = tmp / f"user{i}"
            shutil.copytree(template, user)
            data = tmp / f"chain{i}"
            Ledger.init(data, name="bench")
            door = ChainDoor.open(data)
            t0 = time.perf_counter()
            report = curate(
                Workspace(user, None),
                chain=door,
                days=30,
                now=datetime.combine(today, datetime.min.time()),
            )
            times.append((time.perf_counter() - t0) * 1000)
            curated, committed = len(report.curated), len(report.committed)
        return {
            "files": 30,
            "lines": 1500,
            "curated": curated,
            "committed": committed,
            "curate_ms": median(times),
            "samples": times,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(r: dict[str, Any]) -> str:
    rows = ["| what | measured | target | |", "|---|---|---|---|"]
    if "capture10mb" in r:
        c = r["capture10mb"]
        rows.append(
            f"| capture of a {c['bytes'] / 2**20:.1f} MB transcript ({c['records']} records) "
            f"| {c['capture_ms']:.0f} ms vs {c['parse_ms']:.0f} ms to parse it as JSON lines: "
            f"**{c['ratio_median']:.2f} x** (median of pairs) | <= 2 x | "
            f"{'PASS' if c['ratio_median'] <= 2 else 'FAIL'} |"
        )
    if "capture10mb_semantic" in r:
        c = r["capture10mb_semantic"]
        rows.append(
            f"| the same with the semantic scorer ({c['embedded']} statements embedded) "
            f"| {c['capture_ms']:.0f} ms vs {c['parse_ms']:.0f} ms: {c['ratio_median']:.1f} x "
            "| - | info |"
        )
    if "unchanged" in r:
        u = r["unchanged"]
        rows.append(
            f"| capture of an unchanged transcript, fresh process | **{u['unchanged_ms']:.0f} ms** "
            f"(`--help`: {u['help_ms']:.0f} ms; ratio {u['ratio_median']:.2f}) | <= 50 ms | "
            f"{'PASS' if u['unchanged_ms'] <= 50 else 'FAIL'} |"
        )
    if "curate" in r:
        c = r["curate"]
        rows.append(
            f"| curation of {c['files']} daily files x 50 lines ({c['curated']} promoted, "
            f"{c['committed']} committed) | **{c['curate_ms']:.0f} ms** | <= 1000 ms | "
            f"{'PASS' if c['curate_ms'] <= 1000 else 'FAIL'} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=["capture10mb", "unchanged", "curate"], default=None)
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    r: dict[str, Any] = {"git": git_state(), "date": time.strftime("%Y-%m-%d %H:%M")}
    todo = [args.only] if args.only else ["capture10mb", "unchanged", "curate"]
    if "capture10mb" in todo:
        log("capture of a 10 MB transcript")
        r["capture10mb"] = bench_capture10mb(args.runs)
        from memory_chain.index.vectors import available

        if available():
            log("the same with the semantic scorer")
            r["capture10mb_semantic"] = bench_capture10mb(args.runs, embeddings=True)
    if "unchanged" in todo:
        log("capture of an unchanged transcript")
        r["unchanged"] = bench_unchanged(max(15, args.runs))
    if "curate" in todo:
        log("curation")
        r["curate"] = bench_curate(args.runs)
    (RESULTS / "capture.json").write_text(json.dumps(r, indent=2, default=str))
    print(table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())

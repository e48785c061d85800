#!/usr/bin/env python
"""Workspace benchmarks (issue 11): context, remember, workspace sync, the secret gate.

Run from the repository root::

    python benchmarks/workspace.py            # 100k-entry chain (cached by benchmarks/index.py)
    python benchmarks/workspace.py --quick    # 10k-entry chain
    python benchmarks/workspace.py --only secrets

What is measured, each ratio against a baseline taken in the same run:

- context: ``memory-chain context`` as a fresh process on a 100k-entry chain
  with three scopes of 200-line MEMORY.md, 30 daily files and 100 topic
  files (absolute target 150 ms, and <= 1.6 x ``memory-chain --help``,
  interleaved run by run); with the incremental verify and with --no-verify;
- remember: ``workspace.ops.remember`` of one entry into a 200-line
  MEMORY.md (locked, fsynced, renamed) vs an atomic write of the same bytes
  (temp file, write, fsync, rename, fsync of the folder), interleaved,
  target <= 3 x;
- sync: ``sync_workspace`` of an unchanged workspace of 1,000 files
  (absolute target 20 ms);
- secrets: blocked share of the corpus's secrets and false-positive share
  of its non-secrets (tests/secrets_corpus.py), for chain/format/secrets.py and for
  detect-secrets (defaults, and without its two entropy plugins) when it is
  installed; scan time per string; import time of each as a fresh process.

Prints a markdown table and writes benchmarks/results/workspace.json.
Always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from common import REPO, git_state, log, median

sys.path.insert(0, str(REPO / "tests"))

RESULTS = REPO / "benchmarks" / "results"


def fill_scope(root: Path, name: str, lines: int = 200) -> None:
    """A MEMORY.md of about ``lines`` lines over the eight sections other than Links."""
    from memory_chain.workspace.ops import SECTIONS

    sections = [s for s in SECTIONS if s != "Links"]
    out = ["# Memory", ""]
    i = 0
    while len(out) < lines - 2:
        section = sections[i % len(sections)]
        out += ["", f"## {section}"]
        for _ in range(20):
            if len(out) >= lines - 2:
                break
            out.append(
                f"- {name} rule {i}: prefer tool{i % 37} over tool{i % 41} for module{i} "
                f"<!-- mc: added=2026-0{1 + i % 9}-1{i % 10} confirmed=2026-11-0{1 + i % 9} "
                "src=auto conf=0.80 -->"
            )
            i += 1
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("\n".join(out) + "\n")


def build_workspace(base: Path, today: date) -> tuple[Path, Path]:
    """User root and project root: 3 scopes of 200 lines, 30 daily files, 100 topic files."""
    user = base / "user"
    project = base / "project"
    fill_scope(user, "user")
    fill_scope(project / ".memory-chain", "project")
    fill_scope(project / ".memory-chain" / "local", "local")
    memory = user / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for d in range(30):
        day = today - timedelta(days=d)
        notes = "\n".join(f"- {h:02d}:15 worked on ticket {d * 10 + h}" for h in range(8, 18))
        (memory / f"{day.isoformat()}.md").write_text(f"# {day}\n\n## Notes\n{notes}\n")
    for t in range(100):
        entries = "\n".join(f"- topic {t} fact {k}: value {t * k}" for k in range(15))
        (memory / f"topic-{t:03d}.md").write_text(
            f"# Topic {t}\n\n> Summary: topic {t}, fifteen facts\n\n## Topic {t}\n{entries}\n"
        )
    return user, project


# -- context ----------------------------------------------------------------------


def bench_context(entries: int, runs: int) -> dict[str, Any]:
    from index import cached_chain, work_copy

    src = cached_chain(entries)
    tmp = Path(tempfile.mkdtemp(prefix="mc-ws-bench-"))
    try:
        work = work_copy(src, tmp / "chain")
        user, project = build_workspace(tmp / "ws", date.today())
        script = str(Path(sys.executable).with_name("memory-chain"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CHAIN_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(MEMORY_CHAIN_WORKSPACE=str(user), HOME=str(tmp / "home"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "compileall",
                "-q",
                str(REPO / "chain"),
                str(REPO / "index"),
                str(REPO / "workspace"),
                str(REPO / "cli"),
            ],
            check=False,
            capture_output=True,
        )
        ctx = [script, "--dir", str(work), "context", "--project", str(project)]
        log("context: first run (builds memory.db, the verify cache, the workspace tables)")
        first = time.perf_counter()
        out = subprocess.run(ctx, env=env, capture_output=True, text=True)
        first_s = time.perf_counter() - first
        assert out.returncode == 0, out.stderr
        tokens = -(-len(out.stdout) // 4)

        empty = tmp / "empty"
        empty.mkdir()
        chain_env = {**env, "MEMORY_CHAIN_WORKSPACE": str(empty)}
        chain_only = [script, "--dir", str(work), "context"]
        subprocess.run(chain_only, env=chain_env, capture_output=True, check=True)

        def run(argv: list[str], run_env: dict[str, str] = env) -> float:
            t0 = time.perf_counter()
            p = subprocess.run(argv, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = (time.perf_counter() - t0) * 1000
            assert p.returncode == 0, p.stderr
            return dt

        samples: dict[str, list[float]] = {
            "help": [],
            "context": [],
            "no_verify": [],
            "chain_only": [],
        }
        for i in range(runs):
            samples["help"].append(run([script, "--help"]))
            samples["context"].append(run(ctx))
            samples["no_verify"].append(run([*ctx, "--no-verify"]))
            samples["chain_only"].append(run(chain_only, chain_env))
            if i % 5 == 4:
                log(f"context: {i + 1}/{runs}")
        ratios = [c / h for c, h in zip(samples["context"], samples["help"], strict=True)]
        return {
            "entries": entries,
            "first_run_s": first_s,
            "tokens": tokens,
            "help_ms": median(samples["help"]),
            "context_ms": median(samples["context"]),
            "no_verify_ms": median(samples["no_verify"]),
            "chain_only_ms": median(samples["chain_only"]),
            "ratio_median": median(ratios),
            "ratio_of_medians": median(samples["context"]) / median(samples["help"]),
            "samples": samples,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- remember ---------------------------------------------------------------------


def bench_remember(reps: int) -> dict[str, Any]:
    from memory_chain.workspace import ops
    from memory_chain.workspace.files import write_atomic
    from memory_chain.workspace.scopes import Scope

    tmp = Path(tempfile.mkdtemp(prefix="mc-remember-", dir=str(RESULTS)))
    try:
        fill_scope(tmp / "ws", "user")
        scope = Scope("user", tmp / "ws")
        scope.prepare()
        original = scope.memory_md.read_bytes()
        other = tmp / "plain" / "MEMORY.md"
        other.parent.mkdir()
        ours: list[float] = []
        base: list[float] = []
        for i in range(reps):
            scope.memory_md.write_bytes(original)
            t0 = time.perf_counter()
            out = ops.remember(scope, f"Benchmark entry {i} about widget{i}", section="Workflow")
            ours.append((time.perf_counter() - t0) * 1000)
            assert out.action == "added", out
            data = scope.memory_md.read_bytes()
            t0 = time.perf_counter()
            write_atomic(other, data)
            base.append((time.perf_counter() - t0) * 1000)
        ratios = [a / b for a, b in zip(ours, base, strict=True)]
        return {
            "reps": reps,
            "lines": original.count(b"\n"),
            "remember_ms": median(ours),
            "atomic_write_ms": median(base),
            "ratio_median": median(ratios),
            "ratio_of_medians": median(ours) / median(base),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- sync -------------------------------------------------------------------------


def bench_sync(reps: int) -> dict[str, Any]:
    import sqlite3

    from memory_chain.index.schema import connect, migrate
    from memory_chain.workspace.indexing import sync_workspace
    from memory_chain.workspace.scopes import Workspace

    tmp = Path(tempfile.mkdtemp(prefix="mc-sync-", dir=str(RESULTS)))
    try:
        root = tmp / "ws"
        fill_scope(root, "user")
        for folder, count in (("memory", 700), ("facts", 150), ("episodes", 149)):
            (root / folder).mkdir(parents=True, exist_ok=True)
            for n in range(count):
                name = (
                    f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}-{n}.md"
                    if folder == "memory"
                    else f"f{n}.md"
                )
                (root / folder / name).write_text(
                    f"# {folder} {n}\n\n> Summary: {folder} {n}\n\n"
                    f"## S\n- item {n} one\n- item {n} two\n"
                )
        ws = Workspace(root, None)
        files = sum(1 for _ in ws.scope("user").files())
        conn: sqlite3.Connection = connect(tmp / "memory.db")
        migrate(conn)
        t0 = time.perf_counter()
        first = sync_workspace(conn, ws)
        first_ms = (time.perf_counter() - t0) * 1000
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter()
            again = sync_workspace(conn, ws)
            samples.append((time.perf_counter() - t0) * 1000)
            assert again.parsed == 0
        # One file edited: the cost of noticing and re-parsing it.
        target = root / "memory" / "2026-01-01-0.md"
        edited = []
        for k in range(reps):
            target.write_text(target.read_text() + f"- more {k}\n")
            t0 = time.perf_counter()
            r = sync_workspace(conn, ws)
            edited.append((time.perf_counter() - t0) * 1000)
            assert r.parsed == 1
        conn.close()
        return {
            "files": files,
            "first_sync_ms": first_ms,
            "first_parsed": first.parsed,
            "unchanged_ms": median(samples),
            "unchanged_max_ms": max(samples),
            "one_edited_ms": median(edited),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- secrets ----------------------------------------------------------------------


def _rates(flagged: list[bool], labels: list[bool]) -> tuple[float, float]:
    secrets = [f for f, s in zip(flagged, labels, strict=True) if s]
    plain = [f for f, s in zip(flagged, labels, strict=True) if not s]
    return sum(secrets) / len(secrets), sum(plain) / len(plain)


def _import_ms(module: str, runs: int = 7) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        samples.append((time.perf_counter() - t0) * 1000)
    base = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append((time.perf_counter() - t0) * 1000)
    return median(samples) - median(base)


def bench_secrets() -> dict[str, Any]:
    from secrets_corpus import CORPUS

    from memory_chain.chain.format.secrets import scan

    texts = [t for t, _, _ in CORPUS]
    labels = [s for _, s, _ in CORPUS]
    t0 = time.perf_counter()
    ours = [bool(scan(t)) for t in texts]
    ours_us = (time.perf_counter() - t0) * 1e6 / len(texts)
    recall, fp = _rates(ours, labels)
    out: dict[str, Any] = {
        "corpus": len(texts),
        "secrets": sum(labels),
        "ours": {
            "blocked": recall,
            "false_positives": fp,
            "scan_us_per_string": ours_us,
            "import_ms": _import_ms("memory_chain.chain.format.secrets"),
            "missed": [t[:60] for t, f, s in zip(texts, ours, labels, strict=True) if s and not f],
            "flagged": [t[:60] for t, f, s in zip(texts, ours, labels, strict=True) if f and not s],
        },
    }
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings, get_settings
    except ImportError:
        out["detect_secrets"] = None
        return out
    # Scanned as files (its normal use): one file per string, in a .txt file.
    folder = Path(tempfile.mkdtemp(prefix="mc-ds-", dir=str(RESULTS)))
    paths = []
    for n, t in enumerate(texts):
        path = folder / f"s{n:04d}.txt"
        path.write_text(t + "\n")
        paths.append(str(path))
    drops = {"defaults": (), "no_entropy": ("Base64HighEntropyString", "HexHighEntropyString")}
    for label, drop in drops.items():
        with default_settings():
            if drop:
                get_settings().disable_plugins(*drop)
            t0 = time.perf_counter()
            found = []
            for path in paths:
                collection = SecretsCollection()
                collection.scan_file(path)
                found.append(bool(list(collection)))
            per = (time.perf_counter() - t0) * 1e6 / len(texts)
        r, f = _rates(found, labels)
        out[f"detect_secrets_{label}"] = {
            "blocked": r,
            "false_positives": f,
            "scan_us_per_string": per,
            "missed": [t[:60] for t, x, s in zip(texts, found, labels, strict=True) if s and not x],
            "flagged": [
                t[:60] for t, x, s in zip(texts, found, labels, strict=True) if x and not s
            ],
        }
    shutil.rmtree(folder, ignore_errors=True)
    out["detect_secrets_import_ms"] = _import_ms("detect_secrets.core.scan")
    return out


# -- report -----------------------------------------------------------------------


def table(r: dict[str, Any]) -> str:
    rows = [
        "| Benchmark | Measured | Baseline (same run) | Ratio | Target | Result |",
        "|---|---|---|---|---|---|",
    ]

    def add(*cells: str) -> None:
        rows.append("| " + " | ".join(cells) + " |")

    c = r.get("context")
    if c:
        ok = c["context_ms"] <= 150 and c["ratio_median"] <= 1.6
        add(
            f"`context`, fresh process, {c['entries']:,}-entry chain + workspace",
            f"{c['context_ms']:.0f} ms",
            f"`--help` {c['help_ms']:.0f} ms",
            f"{c['ratio_median']:.2f}",
            "<= 150 ms and <= 1.6 x",
            "PASS" if ok else "FAIL",
        )
        add(
            "`context --no-verify`, same",
            f"{c['no_verify_ms']:.0f} ms",
            f"`--help` {c['help_ms']:.0f} ms",
            f"{c['no_verify_ms'] / c['help_ms']:.2f}",
            "-",
            "info",
        )
        add(
            "`context` with an empty workspace (the chain alone), same chain",
            f"{c['chain_only_ms']:.0f} ms",
            f"`--help` {c['help_ms']:.0f} ms",
            f"{c['chain_only_ms'] / c['help_ms']:.2f}",
            "-",
            "info",
        )
        add(
            "`context`, first run (builds the index)",
            f"{c['first_run_s']:.1f} s",
            "-",
            "-",
            "-",
            "info",
        )
    m = r.get("remember")
    if m:
        add(
            f"remember, one entry into a {m['lines']}-line MEMORY.md",
            f"{m['remember_ms']:.2f} ms",
            f"atomic write + fsync + rename {m['atomic_write_ms']:.2f} ms",
            f"{m['ratio_median']:.2f}",
            "<= 3 x",
            "PASS" if m["ratio_median"] <= 3 else "FAIL",
        )
    s = r.get("sync")
    if s:
        add(
            f"workspace sync, unchanged, {s['files']:,} files",
            f"{s['unchanged_ms']:.1f} ms (max {s['unchanged_max_ms']:.1f})",
            "-",
            "-",
            "<= 20 ms",
            "PASS" if s["unchanged_ms"] <= 20 else "FAIL",
        )
        add(
            "workspace sync, one file edited", f"{s['one_edited_ms']:.1f} ms", "-", "-", "-", "info"
        )
        add(
            f"workspace sync, first ({s['files']:,} files parsed)",
            f"{s['first_sync_ms']:.0f} ms",
            "-",
            "-",
            "-",
            "info",
        )
    x = r.get("secrets")
    if x:
        o = x["ours"]
        add(
            f"secret gate: secrets blocked ({x['secrets']} of {x['corpus']} strings)",
            f"{o['blocked']:.1%}",
            "-",
            "-",
            ">= 95 %",
            "PASS" if o["blocked"] >= 0.95 else "FAIL",
        )
        add(
            f"secret gate: false positives ({x['corpus'] - x['secrets']} non-secrets)",
            f"{o['false_positives']:.1%}",
            "-",
            "-",
            "<= 2 %",
            "PASS" if o["false_positives"] <= 0.02 else "FAIL",
        )
        add(
            "secret gate: scan per string",
            f"{o['scan_us_per_string']:.0f} µs",
            "-",
            "-",
            "-",
            "info",
        )
        add(
            "secret gate: import (fresh process, less `python -c pass`)",
            f"{o['import_ms']:.1f} ms",
            "-",
            "-",
            "-",
            "info",
        )
        for label in ("defaults", "no_entropy"):
            d = x.get(f"detect_secrets_{label}")
            if d:
                add(
                    f"detect-secrets 1.5 ({label.replace('_', ' ')}), same corpus",
                    f"blocked {d['blocked']:.1%}, false positives {d['false_positives']:.1%}",
                    "-",
                    "-",
                    "-",
                    f"info ({d['scan_us_per_string']:.0f} µs/string)",
                )
        if x.get("detect_secrets_import_ms") is not None:
            add(
                "detect-secrets import (fresh process, less `python -c pass`)",
                f"{x['detect_secrets_import_ms']:.0f} ms",
                "-",
                "-",
                "-",
                "info",
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="10k entries instead of 100k")
    p.add_argument("--only", choices=["context", "remember", "sync", "secrets"], default=None)
    p.add_argument("--runs", type=int, default=15, help="context runs (default 15)")
    args = p.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    r: dict[str, Any] = {"git": git_state(), "date": time.strftime("%Y-%m-%d %H:%M")}
    todo = [args.only] if args.only else ["secrets", "sync", "remember", "context"]
    if "secrets" in todo:
        log("secrets")
        r["secrets"] = bench_secrets()
    if "sync" in todo:
        log("sync")
        r["sync"] = bench_sync(50)
    if "remember" in todo:
        log("remember")
        r["remember"] = bench_remember(200)
    if "context" in todo:
        log("context")
        r["context"] = bench_context(10_000 if args.quick else 100_000, args.runs)
    (RESULTS / "workspace.json").write_text(json.dumps(r, indent=2, default=str))
    print(table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())

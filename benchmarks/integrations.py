"""Hooks and the MCP server (issue 13), against the limits in the same run.

1. The SessionStart hook as a fresh process (`memory-chain hook SessionStart`
   with Claude Code's payload on stdin) on a 100k-entry chain and a full
   workspace (3 scopes of 200 lines, 30 daily files, 100 topic files),
   against `memory-chain --help`: goal <= 1.8 x --help and <= 300 ms.
2. The UserPromptSubmit hook the same way (a prompt that asks nothing to be
   remembered but finds memories): goal <= 1.5 x --help.
3. `search` over MCP in a running `memory-chain mcp` (the official SDK's
   client over stdio) against the same search in-process
   (Memory.search): goal p50 <= 3 x.

Run: python benchmarks/integrations.py [--quick | --entries N] [--runs 15] [--calls 200]
(``--entries 1000000`` reuses the 1M chain benchmarks/index.py caches; its first hook
run verifies and indexes the whole chain, a few minutes, before anything is timed.)
Results: benchmarks/results/integrations.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from common import REPO, git_state, log, median, pct

RESULTS = REPO / "benchmarks" / "results"
QUERIES = [f"tool{n} module{n * 7}" for n in range(1, 41)]


def _setup(entries: int, tmp: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    from index import cached_chain, work_copy
    from workspace import build_workspace

    work = work_copy(cached_chain(entries), tmp / "chain")
    user, project = build_workspace(tmp / "ws", date.today())
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CHAIN_")}
    env.update(MEMORY_CHAIN_WORKSPACE=str(user), HOME=str(tmp / "home"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    return work, user, project, env


def bench_hooks(entries: int, runs: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="mc-hook-bench-"))
    try:
        work, _user, project, env = _setup(entries, tmp)
        script = str(Path(sys.executable).with_name("memory-chain"))
        start = json.dumps(
            {
                "session_id": "b" * 36,
                "hook_event_name": "SessionStart",
                "source": "startup",
                "cwd": str(project),
                "transcript_path": str(tmp / "none.jsonl"),
            }
        ).encode()
        prompt = json.dumps(
            {
                "session_id": "b" * 36,
                "hook_event_name": "UserPromptSubmit",
                "cwd": str(project),
                "prompt": "Which tool do we prefer for module84, and why tool12?",
            }
        ).encode()
        hook = [script, "--dir", str(work), "hook"]

        def run(argv: list[str], stdin: bytes = b"") -> tuple[float, bytes]:
            t0 = time.perf_counter()
            p = subprocess.run(argv, input=stdin, env=env, capture_output=True)
            dt = (time.perf_counter() - t0) * 1000
            assert p.returncode == 0 and not p.stderr, p.stderr
            return dt, p.stdout

        log("hooks: first runs (memory.db, the verify cache, the workspace tables)")
        # outside a hook's time limit: at 1M the first verify and index build take minutes,
        # and a hook stops at its limit (and is run again next session)
        subprocess.run([script, "--dir", str(work), "context"], env=env, capture_output=True)
        _, out = run([*hook, "SessionStart"], start)
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        _, out = run([*hook, "UserPromptSubmit"], prompt)
        added = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        samples: dict[str, list[float]] = {"help": [], "session_start": [], "prompt": []}
        for i in range(runs):
            samples["help"].append(run([script, "--help"])[0])
            samples["session_start"].append(run([*hook, "SessionStart"], start)[0])
            samples["prompt"].append(run([*hook, "UserPromptSubmit"], prompt)[0])
            if i % 5 == 4:
                log(f"hooks: {i + 1}/{runs}")
        ratios = {
            k: median([s / h for s, h in zip(samples[k], samples["help"], strict=True)])
            for k in ("session_start", "prompt")
        }
        context_argv = [script, "--dir", str(work), "context"]
        rss = {
            "help": peak_rss([script, "--help"], b"", env),
            "session_start": peak_rss([*hook, "SessionStart"], start, env),
            "context": peak_rss(context_argv, b"", env),
        }
        return {
            "entries": entries,
            "context_chars": len(context),
            "prompt_context_chars": len(added),
            "help_ms": median(samples["help"]),
            "session_start_ms": median(samples["session_start"]),
            "prompt_ms": median(samples["prompt"]),
            "session_start_ratio": ratios["session_start"],
            "prompt_ratio": ratios["prompt"],
            "peak_rss_kb": rss,
            "samples": samples,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: Runs a command and prints the peak resident memory of its process (KB, Linux).
_RSS = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), capture_output=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def peak_rss(argv: list[str], stdin: bytes, env: dict[str, str], runs: int = 3) -> int:
    """The median over ``runs`` of the command's peak resident memory, in KB."""
    out = []
    for _ in range(runs):
        p = subprocess.run(
            [sys.executable, "-c", _RSS, *argv], input=stdin, env=env, capture_output=True
        )
        out.append(int(p.stdout.split()[-1]))
    return int(median(out))


def bench_mcp(entries: int, calls: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from memory_chain.integrations import Memory

    tmp = Path(tempfile.mkdtemp(prefix="mc-mcp-bench-"))
    try:
        work, user, project, env = _setup(entries, tmp)
        inproc: list[float] = []
        with Memory(work, workspace=user, project=project) as memory:
            for q in QUERIES:  # warm: the index, the workspace tables
                memory.search(q)
            for i in range(calls):
                t0 = time.perf_counter()
                memory.search(QUERIES[i % len(QUERIES)])
                inproc.append((time.perf_counter() - t0) * 1000)
        script = str(Path(sys.executable).with_name("memory-chain"))
        params = StdioServerParameters(
            command=script, args=["--dir", str(work), "mcp"], env=env, cwd=str(project)
        )

        async def client() -> list[float]:
            out: list[float] = []
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                for q in QUERIES:
                    await s.call_tool("search", {"query": q})
                for i in range(calls):
                    t0 = time.perf_counter()
                    r = await s.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})
                    out.append((time.perf_counter() - t0) * 1000)
                    assert not r.is_error
            return out

        log(f"mcp: {calls} search calls over stdio")
        rt = asyncio.run(client())
        return {
            "entries": entries,
            "calls": calls,
            "inproc_p50_ms": median(inproc),
            "inproc_p95_ms": pct(inproc, 95),
            "mcp_p50_ms": median(rt),
            "mcp_p95_ms": pct(rt, 95),
            "ratio_p50": median(rt) / median(inproc),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(r: dict[str, Any]) -> str:
    h, m = r["hooks"], r["mcp"]
    verdict = lambda ok: "PASS" if ok else "FAIL"  # noqa: E731
    rows = [
        f"Hooks and MCP, {h['entries']:,}-entry chain and a full workspace ({r['date']})",
        "",
        "| metric | measured | limit in the same run | ratio | goal | verdict |",
        "|---|---|---|---|---|---|",
        f"| SessionStart hook, fresh process | {h['session_start_ms']:.0f} ms | --help "
        f"{h['help_ms']:.0f} ms | {h['session_start_ratio']:.2f} x | <= 1.8 x and <= 300 ms | "
        f"{verdict(h['session_start_ratio'] <= 1.8 and h['session_start_ms'] <= 300)} |",
        f"| UserPromptSubmit hook, fresh process | {h['prompt_ms']:.0f} ms | --help "
        f"{h['help_ms']:.0f} ms | {h['prompt_ratio']:.2f} x | <= 1.5 x | "
        f"{verdict(h['prompt_ratio'] <= 1.5)} |",
        f"| MCP search round trip, p50 ({m['calls']} calls) | {m['mcp_p50_ms']:.2f} ms | "
        f"in-process search {m['inproc_p50_ms']:.2f} ms | {m['ratio_p50']:.2f} x | <= 3 x | "
        f"{verdict(m['ratio_p50'] <= 3)} |",
        "",
        f"Peak memory, fresh process: SessionStart {h['peak_rss_kb']['session_start'] / 1024:.1f}"
        f" MiB, context {h['peak_rss_kb']['context'] / 1024:.1f} MiB, --help "
        f"{h['peak_rss_kb']['help'] / 1024:.1f} MiB (goal <= 50 MiB, flat from 10k to 1M).",
        "",
        f"(session-start block {h['context_chars']:,} characters; prompt context "
        f"{h['prompt_context_chars']:,}; MCP p95 {m['mcp_p95_ms']:.2f} ms, in-process p95 "
        f"{m['inproc_p95_ms']:.2f} ms)",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="10k entries instead of 100k")
    p.add_argument("--entries", type=int, help="chain size (default 100k; 10k with --quick)")
    p.add_argument("--runs", type=int, default=15, help="hook runs (default 15)")
    p.add_argument("--calls", type=int, default=200, help="MCP search calls (default 200)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "tests"))
    entries = args.entries or (10_000 if args.quick else 100_000)
    r: dict[str, Any] = {"git": git_state(), "date": time.strftime("%Y-%m-%d %H:%M")}
    r["hooks"] = bench_hooks(entries, args.runs)
    r["mcp"] = bench_mcp(entries, args.calls)
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "integrations.json" if entries == 100_000 else f"integrations-{entries}.json"
    (RESULTS / name).write_text(json.dumps(r, indent=2, default=str))
    print(table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())

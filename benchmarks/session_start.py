#!/usr/bin/env python
"""What the session-start block spends its tokens on (issue 26), before and after.

Run from the repository root::

    python benchmarks/session_start.py                  # before = 09ab2b4^ (issue 26 filed)
    python benchmarks/session_start.py --before REV --max-tokens 2000

Two data sets are built once with this checkout's command line, then each
version (the ``--before`` revision, installed into a temporary folder from a
git worktree, and this checkout) renders ``memory-chain context`` on its own
copy (the index deleted first, so each builds its own):

- demo: the agent half of .ci/demo: a Claude Code transcript captured, a
  PreCompact flush, a curation, a decision said in MEMORY.md, today's daily
  file and the chain, a memory replaced by ``--supersedes``, an agent's entry;
- larger: 400 chain memories (20 of them replaced), 120 MEMORY.md entries over
  three scopes (a third of them also chain memories), 14 daily files of notes,
  each with a compaction record.

For each block: its tokens (ceil(chars / 4), INDEX.md), its bullets, the
bullets that repeat a memory already shown, capture's bookkeeping
("Compaction (...)"), replaced memories, and the useful memories (distinct,
neither bookkeeping nor replaced). Tokens per useful memory is the figure.
Prints a markdown table and writes benchmarks/results/session_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import REPO, git_state, log

SCRIPT = str(Path(sys.executable).with_name("memory-chain"))
DEFAULT_BEFORE = "09ab2b4^"
RESULTS = REPO / "benchmarks" / "results" / "session_start.json"

SUBJECTS = [
    "billing service",
    "search index",
    "mobile app",
    "payments API",
    "staging cluster",
    "docs site",
    "auth gateway",
    "data pipeline",
    "CI runners",
    "feature flags",
]
VERBS = [
    "is owned by the platform team",
    "deploys from the main branch only",
    "keeps its secrets in the vault",
    "runs its tests with pytest -n 4",
    "pages the on-call person after 5 minutes",
    "logs in JSON lines",
    "is released every second Tuesday",
    "uses Postgres 16",
    "has a staging copy refreshed nightly",
    "needs a review from two people",
]


def run(env: dict[str, str], *args: str, stdin: str | None = None, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [SCRIPT, *args], env=env, input=stdin, capture_output=True, text=True, cwd=cwd
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])}: {proc.stderr.strip()}")
    return proc.stdout


def _env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(root / "home"),
        "MEMORY_CHAIN_DIR": str(root / "data"),
        "MEMORY_CHAIN_WORKSPACE": str(root / "workspace"),
        "MEMORY_CHAIN_SEMANTIC": "0",
        "MEMORY_CHAIN_NO_PROGRESS": "1",
    }


def _transcript(path: Path) -> None:
    lines = (REPO / ".ci" / "demo").read_text().split("<<'JSONL'\n", 1)[1].split("\nJSONL", 1)[0]
    path.write_text(lines + "\n")


def build_demo(root: Path) -> set[str]:
    """The demo's agent half; returns the texts that were replaced."""
    env, project = _env(root), root / "project"
    (project / ".git").mkdir(parents=True)
    run(env, "init", "--name", "demo")
    said = "We decided to ship the mobile app on Thursdays"
    run(env, "add", said, "--type", "decision", "--tier", "committed")
    run(env, "remember", said, "--section", "Decisions", "--project", str(project))
    run(env, "ws", "note", said, "--project", str(project))
    transcript = root / "session.jsonl"
    _transcript(transcript)
    run(env, "capture", "--transcript", str(transcript), "--project", str(project))
    hook = {
        "session_id": "5e55104d-demo",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
    }
    run(env, "hook", "PreCompact", stdin=json.dumps(hook))
    run(env, "curate", "--project", str(project))
    old = json.loads(run(env, "add", "Use npm for the web app", "--type", "decision", "--json"))
    run(env, "add", "Use pnpm, not npm", "--type", "decision", "--supersedes", str(old["seq"]))
    run(env, "remember", "Run the linter before each commit", "--section", "Workflow")
    return {"Use npm for the web app"}


def build_larger(root: Path) -> set[str]:
    env, project = _env(root), root / "project"
    (project / ".git").mkdir(parents=True)
    run(env, "init", "--name", "larger")
    facts = [f"The {s} {v}" for s in SUBJECTS for v in VERBS]  # 100
    memories = [f"Review {n}: {f}" if n else f for n in range(4) for f in facts]  # 400
    batch = "".join(json.dumps({"content": m, "type": "fact"}) + "\n" for m in memories)
    (root / "batch.jsonl").write_text(batch)
    run(env, "add", "--batch", str(root / "batch.jsonl"))
    replaced = set()
    for n in range(20):
        old = facts[n * 5]
        new = old.replace("The ", "Since May the ", 1)
        run(env, "add", new, "--type", "fact", "--supersedes", str(1 + n * 5))
        replaced.add(old)
    scopes = {
        "user": root / "workspace" / "MEMORY.md",
        "project": project / ".memory-chain" / "MEMORY.md",
        "local": project / ".memory-chain" / "local" / "MEMORY.md",
    }
    standing = [f for f in facts if f not in replaced]  # a person updates MEMORY.md too
    for k, (name, path) in enumerate(scopes.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        body = ["# Memory", ""]
        for section in ("Conventions", "Decisions", "Notes"):
            body += [f"## {section}"]
            for i in range(13 + k):
                fact = standing[(k * 40 + len(body) * 7 + i) % len(standing)]
                text = fact if i % 3 == 0 else f"{name} {section.lower()} entry {i}: {fact}"
                body.append(f"- {text}")
            body.append("")
        path.write_text("\n".join(body) + "\n")
    daily = root / "workspace" / "memory"
    daily.mkdir(parents=True, exist_ok=True)
    for d in range(14):
        day = f"2026-11-{25 - d:02d}"
        notes = [f"- 09:{i:02d} worked on the {SUBJECTS[(d + i) % 10]} ({i})" for i in range(10)]
        compaction = [
            "## Compactions",
            f"- 18:00 Compaction (auto) of session abcd{d:04d}: 0 captured, 0 candidates, "
            "2 already known <!-- mc: src=auto cat=compaction -->",
        ]
        text = "\n".join([f"# {day}", "", "## Notes", *notes, "", *compaction]) + "\n"
        (daily / f"{day}.md").write_text(text)
    return replaced


_TAIL = re.compile(r"\s+\((?:[^()]|\([^()]*\))*\)$")
_TIME = re.compile(r"^\d\d:\d\d\s+")


def _bullet_text(line: str) -> str:
    text = line[2:].strip()
    text = _TIME.sub("", _TAIL.sub("", text)).removeprefix("[?] ").strip()
    return " ".join(text.split()).casefold().rstrip(".")


def measure(block: str, replaced: set[str]) -> dict[str, Any]:
    gone = {" ".join(t.split()).casefold().rstrip(".") for t in replaced}
    bullets = [ln for ln in block.splitlines() if ln.startswith("- ")]
    seen: set[str] = set()
    repeats = bookkeeping = stale = 0
    for line in bullets:
        text = _bullet_text(line)
        if text.startswith("compaction ("):
            bookkeeping += 1
        elif text in gone:
            stale += 1
        elif text in seen:
            repeats += 1
        seen.add(text)
    useful = len(bullets) - repeats - bookkeeping - stale
    tokens = -(-len(block) // 4)
    return {
        "tokens": tokens,
        "bullets": len(bullets),
        "repeats": repeats,
        "bookkeeping": bookkeeping,
        "replaced": stale,
        "useful": useful,
        "tokens_per_useful": round(tokens / useful, 1) if useful else None,
        "says_what_was_left_out": "left out" in block,
    }


def install(rev: str, where: Path) -> Path:
    """``rev`` of this repository installed (no dependencies) into ``where``/site."""
    tree, site = where / "tree", where / "site"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-f", str(tree), rev],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), "."],
            cwd=tree,
            check=True,
            capture_output=True,
        )
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
    return site


def render(site: Path | None, data: Path, max_tokens: int) -> str:
    env = _env(data)
    args = ["context", "--project", str(data / "project"), "--max-tokens", str(max_tokens)]
    if site is None:
        return run(env, *args)
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); "
        "from memory_chain.cli.main import main; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"context (before): {proc.stderr.strip()}")
    return proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--before", default=DEFAULT_BEFORE, help="the revision to compare with")
    ap.add_argument("--max-tokens", type=int, default=2000)
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mc-session-start-") as tmp:
        base = Path(tmp)
        log(f"installing {args.before}")
        site = install(args.before, base / "before")
        for name, build in (("demo", build_demo), ("larger", build_larger)):
            log(f"building {name}")
            made = base / f"{name}-made"
            made.mkdir()
            replaced = build(made)
            for version, where in (("before", site), ("after", None)):
                copy = base / f"{name}-{version}"
                shutil.copytree(made, copy, symlinks=True)
                (copy / "data" / "memory.db").unlink(missing_ok=True)
                block = render(where, copy, args.max_tokens)
                rows.append({"data": name, "version": version, **measure(block, replaced)})
                (base / f"{name}-{version}.md").write_text(block)
                if os.environ.get("SESSION_START_SHOW"):
                    print(block, file=sys.stderr)
    columns = ["data", "version", "tokens", "bullets", "repeats", "bookkeeping", "replaced"]
    columns += ["useful", "tokens / useful", "says what it left out"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * 10)
    for r in rows:
        print(
            f"| {r['data']} | {r['version']} | {r['tokens']} | {r['bullets']} | {r['repeats']} "
            f"| {r['bookkeeping']} | {r['replaced']} | {r['useful']} | {r['tokens_per_useful']} "
            f"| {'yes' if r['says_what_was_left_out'] else 'no'} |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    out = {"before": args.before, "max_tokens": args.max_tokens, "rows": rows, **git_state()}
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

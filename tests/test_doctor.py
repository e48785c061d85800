"""`memory-chain doctor` (issue 13): each problem found, named, and given a fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import Cli


def _doctor(cli: Cli, env: dict[str, str] | None = None) -> tuple[int, dict[str, dict[str, Any]]]:
    result = cli.run("doctor", "--json", env=env)
    checks = {c["name"]: c for c in result.json()["checks"]}
    assert result.json()["ok"] is (result.code == 0)
    return result.code, checks


def test_a_set_up_agent_is_healthy(populated: Cli, tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "MEMORY_CHAIN_CRONTAB": "/bin/false"}
    populated.run("hooks", "install", "claude-code")
    populated.run("mcp", "install", "claude-code")
    populated.run("schedule", "install", "--systemd", env=env)
    code, checks = _doctor(populated, env)
    assert 0 == code
    statuses = {name: c["status"] for name, c in checks.items()}
    assert {
        "data directory": "ok",
        "config": "ok",
        "signing key": "warn",  # raw: a reminder, not a failure
        "chain": "ok",
        "index": "ok",
        "workspace": "ok",
        "semantic": "ok",  # switched off by the tests' environment
        "claude code hooks": "ok",
        "mcp server": "ok",
        "schedules": "ok",
        "anchors": "ok",
    } == statuses
    plain = populated.run("doctor", env=env)
    assert plain.out.startswith("ok    data directory:")


def test_missing_pieces_are_warnings_with_the_command_to_run(populated: Cli) -> None:
    code, checks = _doctor(populated)
    assert 0 == code
    assert "memory-chain hooks install claude-code" == checks["claude code hooks"]["fix"]
    assert "memory-chain mcp install claude-code" == checks["mcp server"]["fix"]
    assert checks["schedules"]["fix"].startswith("memory-chain schedule install")


def test_no_chain_fails(cli: Cli) -> None:
    code, checks = _doctor(cli)
    assert 1 == code
    assert "fail" == checks["data directory"]["status"]
    assert checks["data directory"]["fix"].startswith("memory-chain init")


def test_a_readable_key_and_a_tampered_chain_fail(populated: Cli) -> None:
    (populated.root / "agent.key").chmod(0o644)
    lines = populated.chain.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"tier":"relationship"', b'"tier":"committed"')
    populated.chain.write_bytes(b"".join(lines))
    code, checks = _doctor(populated)
    assert 1 == code
    assert "fail" == checks["signing key"]["status"]
    assert f"chmod 600 {populated.root / 'agent.key'}" == checks["signing key"]["fix"]
    assert "fail" == checks["chain"]["status"]
    assert "seq 3" in checks["chain"]["detail"]


def test_broken_settings_and_a_failed_job_fail(populated: Cli) -> None:
    settings = Path(populated.env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{broken")
    assert 2 == populated.run("job", "capture").code
    code, checks = _doctor(populated)
    assert 1 == code
    assert "fail" == checks["claude code settings"]["status"]
    assert "fail" == checks["job capture"]["status"]
    assert json.loads((populated.root / "jobs" / "capture.json").read_text())["ok"] is False


def test_a_bad_config_is_reported_and_the_other_checks_still_run(populated: Cli) -> None:
    """Issue 22: `doctor --json` on a config.json that is not JSON printed nothing and stopped.
    Now the config check fails with its file, and every other check still answers (the
    signing key, whose file the config names, is not guessed at)."""
    (populated.root / "config.json").write_text("{not json")
    result = populated.run("doctor", "--json")
    assert 1 == result.code
    checks = {c["name"]: c for c in result.json()["checks"]}
    assert "fail" == checks["config"]["status"]
    assert str(populated.root / "config.json") in checks["config"]["fix"]
    assert "warn" == checks["signing key"]["status"]
    assert "key mode is unknown" in checks["signing key"]["detail"]
    assert {"data directory", "chain", "workspace", "schedules"} <= set(checks)


def test_a_directory_broken_three_ways_reports_all_three(populated: Cli) -> None:
    """Group-writable data directory, a key others can read, a tampered line: three fails
    (two were reported), each fix naming the right file."""
    populated.root.chmod(0o775)
    (populated.root / "agent.key").chmod(0o644)
    lines = populated.chain.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"tier":"ephemeral"', b'"tier":"committed"')
    populated.chain.write_bytes(b"".join(lines))
    checks = {c["name"]: c for c in populated.run("doctor", "--json").json()["checks"]}
    assert "fail" == checks["data directory"]["status"]
    assert f"chmod go-w {populated.root}" == checks["data directory"]["fix"]
    assert "fail" == checks["signing key"]["status"]
    assert f"chmod 600 {populated.root / 'agent.key'}" == checks["signing key"]["fix"]
    assert "fail" == checks["chain"]["status"] and "seq 2" in checks["chain"]["detail"]


def test_semantic_says_whether_recall_reads_meaning_and_what_waits(
    populated: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On or off and why, and memories without a vector past what a search embeds first."""
    from memory_chain.index import db, vectors
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.doctor import diagnose

    def semantic() -> Any:
        with Memory.open(populated.root, project=False) as memory:
            return next(c for c in diagnose(memory) if c.name == "semantic")

    assert semantic().detail == "off: switched off by $MEMORY_CHAIN_SEMANTIC"
    monkeypatch.delenv(vectors.ENV)
    config = populated.root / "config.json"
    data = json.loads(config.read_text())
    config.write_text(json.dumps({**data, "index": {"semantic": False}}))
    assert "config.json" in semantic().detail
    config.write_text(json.dumps(data))
    if not vectors.available():
        assert semantic().detail.startswith("off: the semantic extra is not installed")
        return
    assert (semantic().status, semantic().detail.split(":")[0]) == ("ok", "on")
    monkeypatch.setattr(db, "CATCH_UP", 0)  # the 4 memories were never embedded
    waiting = semantic()
    assert waiting.status == "warn" and "4 memories have no vector" in waiting.detail
    assert waiting.fix is not None and waiting.fix.startswith("memory-chain reindex")
    populated.ok("reindex", env={vectors.ENV: "1"})
    assert semantic().status == "ok"

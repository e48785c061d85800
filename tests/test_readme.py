"""The README's commands are run, so they cannot go stale."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.anvil import Anvil

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
AMBIENT = (
    "MEMORY_CHAIN_DIR",
    "MEMORY_CHAIN_SIGNING_KEY",
    "MEMORY_CHAIN_NEW_SIGNING_KEY",
    "MEMORY_CHAIN_PASSPHRASE",
    "MEMORY_CHAIN_WORKSPACE",
    "CLAUDE_PROJECT_DIR",
)


def sh_blocks(markdown: str) -> list[str]:
    """The bodies of the ```sh fenced blocks, in order."""
    return re.findall(r"^```sh\n(.*?)^```$", markdown, flags=re.M | re.S)


def section(markdown: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = markdown.index(f"\n{heading}\n") + len(heading) + 2
    end = re.search(rf"^#{{1,{level}}} ", markdown[start:], flags=re.M)
    return markdown[start : start + end.start()] if end else markdown[start:]


def commands(block: str) -> list[str]:
    """Non-empty, non-comment lines of a shell block, with trailing comments removed."""
    lines = (re.sub(r"\s+#\s.*$", "", line).strip() for line in block.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


USE = [
    line
    for line in sh_blocks(section(README, "## Use"))[0].splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]


def test_use_section_has_commands() -> None:
    """The Use section has a sh block that starts with init."""
    assert "memory-chain init --name my-agent" == USE[0]
    assert len(USE) >= 5


def run_lines(
    lines: list[str], tmp_path: Path, changes: dict[str, str | None] | None = None
) -> tuple[Path, str]:
    """Run each line with bash in tmp_path/work on a fresh data directory, requiring exit 0;
    return the working folder and everything printed on stdout. ``changes`` sets (or, with
    None, removes) environment variables."""
    env = {k: v for k, v in os.environ.items() if k not in AMBIENT}
    env.update(
        HOME=str(tmp_path / "home"),
        MEMORY_CHAIN_DIR=str(tmp_path / "data"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    for name, value in (changes or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    work = tmp_path / "work"
    work.mkdir()
    out = []
    for line in lines:
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert 0 == result.returncode, f"{line}\n{result.stderr}"
        out.append(result.stdout)
    return work, "\n".join(out)


def test_use_commands_run(tmp_path: Path) -> None:
    """Every line of the Use block exits 0, in order, on a fresh data directory."""
    run_lines(USE, tmp_path)


def test_automatic_memory_section_runs(tmp_path: Path) -> None:
    """The Automatic memory block runs as written: capture, capture again, curate."""
    block = sh_blocks(section(README, "## Automatic memory"))[0]
    work, text = run_lines(commands(block), tmp_path)
    assert "committed: seq 1 decision: Decided to use Redis for the session cache" in text
    assert "nothing new" in text
    (daily,) = (work / ".memory-chain" / "local" / "memory").glob("*.md")
    assert "Prefers short answers" in daily.read_text()


def test_claude_code_section_runs(tmp_path: Path) -> None:
    """Use with Claude Code: hooks installed into ~/.claude/settings.json, and the two hook
    calls answer as Claude Code reads them."""
    block = sh_blocks(section(README, "## Use with Claude Code"))[0]
    _, text = run_lines(commands(block), tmp_path)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"} == set(
        settings["hooks"]
    )
    answers = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    start, prompt = (a["hookSpecificOutput"] for a in answers)
    assert "Use pnpm, not npm" in start["additionalContext"]
    assert "The staging server is staging.example.org" in prompt["additionalContext"]
    assert (
        "memory-chain" in json.loads((tmp_path / "home" / ".claude.json").read_text())["mcpServers"]
    )


def test_openclaw_section_runs(tmp_path: Path) -> None:
    block = sh_blocks(section(README, "## Use with OpenClaw"))[0]
    _, text = run_lines(commands(block), tmp_path)
    hooks = tmp_path / "home" / ".openclaw" / "hooks"
    assert (hooks / "memory-chain-bootstrap" / "HOOK.md").is_file()
    assert (hooks / "memory-chain-reset" / "handler.js").is_file()
    assert "Ana runs the Lisbon office" in text and "# Memory context" in text


def test_mcp_section_runs(tmp_path: Path) -> None:
    """Use over MCP: the Inspector's CLI (installed by npm ci) against `memory-chain mcp`, the
    memory-tool lines, and the Python block, each as written."""
    inspector = Path(__file__).resolve().parent.parent / "node_modules" / ".bin" / "mcp-inspector"
    blocks = sh_blocks(section(README, "## Use over MCP"))
    lines = [
        line.replace("npx @modelcontextprotocol/inspector", str(inspector))
        for line in commands(blocks[0]) + commands(blocks[1])
    ]
    # the Inspector hands the server HOME, not MEMORY_CHAIN_DIR: use the default directory
    work, text = run_lines(lines, tmp_path, {"MEMORY_CHAIN_DIR": None})
    assert '"name": "search"' in text and '"name": "prove"' in text
    assert "Deploys need a green CI run" in text.split('"name": "search"')[-1]
    assert "memory-chain" in json.loads((work / ".mcp.json").read_text())["mcpServers"]
    assert "File created successfully at: /memories/notes.md" in text
    assert "/memories/notes.md" in text.split("File created successfully")[1]
    (code,) = re.findall(r"^```python\n(.*?)^```$", section(README, "## Use over MCP"), re.M | re.S)
    script = tmp_path / "api.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env={
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "MEMORY_CHAIN_DIR": str(tmp_path / "home" / ".memory-chain"),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert 0 == out.returncode, out.stderr
    assert out.stdout.startswith("We deploy on Tuesdays\n# Memory context")


def test_mcp_over_http_block_runs(tmp_path: Path) -> None:
    """The HTTP block as one script (its server runs in the background and is stopped by
    the block's last line), on a free port instead of 8765."""
    import socket

    inspector = Path(__file__).resolve().parent.parent / "node_modules" / ".bin" / "mcp-inspector"
    block = sh_blocks(section(README, "## Use over MCP"))[2]
    assert "mcp --http --port 8765 &" in block and block.rstrip().endswith("kill -INT %1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    script = block.replace("npx @modelcontextprotocol/inspector", str(inspector))
    script = script.replace("8765", port)
    env = {k: v for k, v in os.environ.items() if k not in AMBIENT}
    env.update(
        HOME=str(tmp_path / "home"),
        MEMORY_CHAIN_DIR=str(tmp_path / "data"),
        MEMORY_CHAIN_SEMANTIC="0",
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    done = subprocess.run(
        ["bash", "-e", "-c", f"set -m\n{script}\nwait"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"name": "search"' in done.stdout and '"name": "redact"' in done.stdout


def test_schedule_section_runs(tmp_path: Path) -> None:
    block = sh_blocks(section(README, "## Schedule the jobs"))[0]
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_RUNTIME_DIR": str(runtime)}
    _, text = run_lines(commands(block), tmp_path, env)
    units = tmp_path / "config" / "systemd" / "user"
    assert 6 == len(list(units.glob("memory-chain-*")))
    assert "curate: ok" in text
    assert "systemd; last run" in text
    assert "ok    chain:" in text


@pytest.mark.parametrize("name", ["demo", "test", "run"])
def test_ci_scripts_exist(name: str) -> None:
    """The .ci scripts the README and CI name exist."""
    assert (REPO / ".ci" / name).is_file()


def test_first_block_runs_the_ci_scripts() -> None:
    """The README's first sh block starts with `bash .ci/demo` then `bash .ci/test`."""
    assert ["bash .ci/demo", "bash .ci/test"] == commands(sh_blocks(README)[0])[:2]


def test_ci_run_invokes_the_test_script() -> None:
    """.ci/run (the CI entry point) runs `bash .ci/test`."""
    lines = commands((REPO / ".ci" / "run").read_text())
    assert "bash .ci/test" in lines


def test_anchor_section_runs(tmp_path: Path, anvil: Anvil) -> None:
    """The Anchor section's local-node block runs as written, against the session's anvil.

    Its first line starts anvil on port 8545; here the session's node (on a
    free port) stands in for it, so that line is dropped and the URL swapped.
    """
    block = sh_blocks(section(README, "## Anchor on an EVM chain"))[0]
    lines = commands(block)
    assert lines[0].startswith("node_modules/.bin/anvil")
    script = "\n".join(
        [
            "set -euo pipefail",
            f"export MEMORY_CHAIN_RPC_ANVIL={anvil.url}",
            "memory-chain init --name my-agent",
            "memory-chain add 'Use pnpm, not npm' --type decision --tier committed",
            "memory-chain keys export-public -o agent.pub",
            *(line.replace("http://127.0.0.1:8545", anvil.url) for line in lines[1:]),
        ]
    )
    env = {k: v for k, v in os.environ.items() if k not in AMBIENT}
    env.update(
        HOME=str(tmp_path / "home"),
        MEMORY_CHAIN_DIR=str(tmp_path / "data"),
        MEMORY_CHAIN_STATE_DIR=str(tmp_path / "state"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert 0 == result.returncode, result.stderr
    assert "ok: 1 anchor(s) valid" in result.stdout
    assert "on anvil: valid" in result.stdout


def test_browser_section_runs(tmp_path: Path) -> None:
    """Check a proof in a browser: the block runs, and the page it writes passes in
    headless Chromium with the printed key in its address."""
    from test_auditor_page import visit

    block = sh_blocks(section(README, "## Check a proof in a browser"))[0]
    work, text = run_lines(commands(block), tmp_path)
    key = text.strip().splitlines()[-1]
    assert key.startswith("ed25519:")
    (shown,) = visit([{"url": (work / "decision.html").as_uri() + "#key=" + key}])
    assert ("pass", True) == (shown["verdict"], "Use pnpm, not npm" in shown["memory"])
    assert (work / "check-a-memory.html").read_bytes().startswith(b"<!doctype html>")


def test_publish_your_log_section_runs(tmp_path: Path) -> None:
    """The "Publish your log" commands: publish, a witness's key and cosignature, and both
    checks, each exiting 0; the witness is reported as having seen the log's size."""
    block = sh_blocks(section(README, "## Publish your log"))[0]
    work, out = run_lines(commands(block), tmp_path)
    assert (work / "log" / "checkpoint").is_file()
    assert "witness witness.example/w1: saw size 2" in out


def test_publish_your_log_with_a_witness_service(tmp_path: Path) -> None:
    """The second block: the witness as a service (started here on a free port in place of
    the README's 8770, and stopped after), publish asking it, and the check."""
    import signal
    import socket

    first = sh_blocks(section(README, "## Publish your log"))[0]
    second = commands(sh_blocks(section(README, "## Publish your log"))[1])
    serve, rest = second[0], second[1:]
    assert serve.startswith("memory-chain witness serve") and serve.endswith("&"), serve
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    work, _ = run_lines(commands(first), tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in AMBIENT}
    env.update(
        HOME=str(tmp_path / "home"),
        MEMORY_CHAIN_DIR=str(tmp_path / "data"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    argv = serve.rstrip("&").replace("8770", port).split()
    proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"http://127.0.0.1:{port}"
        for line in rest:
            result = subprocess.run(
                ["bash", "-o", "pipefail", "-c", line.replace("8770", port)],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert 0 == result.returncode, f"{line}\n{result.stderr}"
        assert "witness witness.example/w1: saw size 3" in result.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_run_a_fleet_section_runs(tmp_path: Path) -> None:
    """The "Run a fleet on PostgreSQL" commands against a real server (Debian's
    PostgreSQL, started here: its URL in place of the README's): the chain's memory
    reaches the database, and --list names the agent."""
    from helpers.postgres import fresh_database, server

    block = commands(sh_blocks(section(README, "## Run a fleet on PostgreSQL"))[0])
    written = "postgresql://mc@127.0.0.1:5432/fleet"
    assert all(
        written in line for line in block if any(f" {c} " in line for c in ("index", "search"))
    )
    with server() as pg:
        url = fresh_database(pg, "fleet")
        _, out = run_lines([line.replace(written, url) for line in block], tmp_path)
        import psycopg

        with psycopg.connect(url) as conn:
            held = conn.execute("SELECT content FROM mc_memories").fetchall()
    assert held == [("Staging runs on port 5433",)]
    assert "indexed 2 new entries of agent agent-a" in out  # the genesis and the fact
    assert "agent-a  b3:" in out and "2 entries  1 memory (1 shown, 0 approved in review)" in out
    assert "agent-a:1  " in out and "provable fact/relationship  Staging runs on port 5433" in out
    # the workspace's user scope went too, and a person's own words wait for no review
    assert "workspace: 1 entry of the user and project scopes there" in out
    assert "agent-a:user:MEMORY.md:" in out and "editable  Deploys wait for the staging" in out
    assert "nothing waits for review in the fleet" in out

"""Scheduled jobs (issue 13): generated systemd units checked by systemd-analyze, crontab
lines read by a real cron parser (croniter) through a crontab program, and the jobs
themselves run as the timers run them, with their recorded outcome."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from croniter import croniter
from helpers import transcripts as cc
from helpers.anvil import Anvil, deploy_registry, set_registry, use_node
from helpers.anvil import ok as anvil_ok
from helpers.cli import SCRIPT, Cli

from memory_chain.integrations import schedule as sched

SATURDAY = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
CRONTAB = """\
#!/bin/sh
# A stand-in for crontab(1) that keeps the table in $CRONTAB_FILE.
if [ "$1" = "-l" ]; then
  [ -f "$CRONTAB_FILE" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }
  cat "$CRONTAB_FILE"
elif [ "$1" = "-" ]; then
  cat > "$CRONTAB_FILE"
else
  exit 2
fi
"""


@pytest.fixture
def env(raw: Cli, tmp_path: Path) -> dict[str, str]:
    program = tmp_path / "bin" / "crontab"
    program.parent.mkdir()
    program.write_text(CRONTAB)
    program.chmod(0o755)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_RUNTIME_DIR": str(runtime),
        "MEMORY_CHAIN_CRONTAB": str(program),
        "CRONTAB_FILE": str(tmp_path / "crontab.txt"),
    }


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "-home-user-app"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_bytes(cc.jsonl([cc.user("We always use ruff for linting.")]))
    return folder.parent


def _units(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"


def test_systemd_units_are_written_once_and_verify(
    raw: Cli, env: dict[str, str], transcripts: Path
) -> None:
    first = raw.run(
        "schedule", "install", "--systemd", "--transcripts", str(transcripts), "--json", env=env
    )
    assert 0 == first.code, first.err
    folder = _units(env)
    names = sorted(p.name for p in folder.iterdir())
    assert [
        f"memory-chain-{j}.{k}"
        for j in ("capture", "curate", "maintain")
        for k in ("service", "timer")
    ] == names
    service = (folder / "memory-chain-capture.service").read_text()
    assert f'ExecStart="{SCRIPT}" "--dir" "{raw.root}" "job" "capture" "--transcripts"' in service
    again = raw.run(
        "schedule", "install", "--systemd", "--transcripts", str(transcripts), "--json", env=env
    )
    assert again.json()["unchanged"] is True
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here")
    proc = subprocess.run(
        [analyze, "verify", "--user", "--man=no", *sorted(str(p) for p in folder.iterdir())],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert 0 == proc.returncode, proc.stderr
    assert "" == proc.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not here")
@pytest.mark.parametrize("job", ["capture", "curate", "maintain"])
def test_the_timer_and_the_cron_line_agree(job: str) -> None:
    """systemd's OnCalendar and the cron expression name the same next moments (UTC)."""
    proc = subprocess.run(
        ["systemd-analyze", "calendar", "--iterations=3", sched.CALENDARS[job]],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TZ": "UTC"},
    )
    assert 0 == proc.returncode, proc.stderr
    assert croniter.is_valid(sched.CRON[job])
    start = datetime.now(UTC).replace(microsecond=0)
    it = croniter(sched.CRON[job], start)
    expected = [it.get_next(datetime).strftime("%Y-%m-%d %H:%M:%S") for _ in range(3)]
    shown = [line for line in proc.stdout.splitlines() if "UTC" in line and "-" in line]
    got = [w for line in shown for w in expected if w in line]
    assert expected == got, proc.stdout


def test_without_a_source_capture_is_not_scheduled_and_is_taken_out(
    raw: Cli, env: dict[str, str], transcripts: Path
) -> None:
    raw.run("schedule", "install", "--systemd", "--transcripts", str(transcripts), env=env)
    result = raw.run("schedule", "install", "--systemd", "--json", env=env).json()
    assert "capture" in result["skipped"]
    assert not (_units(env) / "memory-chain-capture.timer").exists()
    assert (_units(env) / "memory-chain-curate.timer").exists()


def test_cron_block_keeps_the_rest_and_parses(
    raw: Cli, env: dict[str, str], transcripts: Path
) -> None:
    theirs = "MAILTO=me@example.org\n15 3 * * * /usr/local/bin/backup --quiet\n"
    Path(env["CRONTAB_FILE"]).write_text(theirs)
    args = (
        "schedule",
        "install",
        "--cron",
        "--transcripts",
        str(transcripts),
        "--anchor",
        "base-sepolia",
    )
    assert 0 == raw.run(*args, env=env).code
    table = Path(env["CRONTAB_FILE"]).read_text()
    assert table.startswith(theirs)
    block = table[len(theirs) :]
    assert block.startswith(sched.BEGIN) and block.endswith(sched.END + "\n")
    jobs = {}
    for line in block.splitlines():
        if line.startswith("#") or "=" in line.split(" ")[0]:
            continue
        fields = line.split(" ", 5)
        expr = " ".join(fields[:5])
        assert croniter.is_valid(expr), line
        jobs[fields[5].split(" job ")[1].split()[0]] = (expr, fields[5])
    assert {"capture", "curate", "maintain"} == set(jobs)
    assert "2026-11-29 10:00" == croniter(jobs["curate"][0], SATURDAY).get_next(datetime).strftime(
        "%Y-%m-%d %H:%M"
    )
    assert "2026-11-29 11:00" == croniter(jobs["maintain"][0], SATURDAY).get_next(
        datetime
    ).strftime("%Y-%m-%d %H:%M")
    assert "2026-11-28 12:30" == croniter(jobs["capture"][0], SATURDAY).get_next(datetime).strftime(
        "%Y-%m-%d %H:%M"
    )
    assert "--anchor base-sepolia" in jobs["maintain"][1]
    before = Path(env["CRONTAB_FILE"]).read_bytes()
    assert raw.run(*args, "--json", env=env).json()["unchanged"] is True
    assert before == Path(env["CRONTAB_FILE"]).read_bytes()
    status = raw.run("schedule", "status", "--json", env=env).json()
    assert all(["cron"] == row["scheduled"] for row in status["jobs"].values())
    raw.run("schedule", "remove", env=env)
    assert theirs == Path(env["CRONTAB_FILE"]).read_text()


def test_cron_without_a_crontab_program_says_so(raw: Cli, env: dict[str, str]) -> None:
    result = raw.run(
        "schedule",
        "install",
        "--cron",
        env={**env, "MEMORY_CHAIN_CRONTAB": "", "PATH": "/nonexistent"},
    )
    assert 2 == result.code
    assert result.err.startswith("error: no crontab program here")


def test_jobs_run_record_their_outcome_and_fail_loudly(
    raw: Cli, env: dict[str, str], transcripts: Path
) -> None:
    done = raw.run("job", "capture", "--transcripts", str(transcripts), "--json", env=env)
    assert 0 == done.code, done.err
    assert 1 == done.json()["summary"]["captured"]
    assert raw.run("job", "curate", env=env).code == 0
    assert "Always use ruff for linting" in (raw.root / "workspace" / "MEMORY.md").read_text()
    assert 0 == raw.run("job", "maintain", env=env).code
    failed = raw.run("job", "capture", env=env)
    assert 2 == failed.code
    assert failed.err.startswith("error: job capture failed: nothing to capture")
    status = raw.run("schedule", "status", "--json", env=env).json()["jobs"]
    assert status["capture"]["last_run"]["ok"] is False
    assert status["curate"]["last_run"]["ok"] is True
    assert {"verify", "stats", "gc", "decay"} <= set(status["maintain"]["last_run"]["summary"])
    log = (raw.root / "logs" / "jobs.log").read_text().splitlines()
    assert 4 == len(log) and " capture FAILED: " in log[-1]


def test_maintenance_fails_on_a_tampered_chain(populated: Cli, env: dict[str, str]) -> None:
    lines = populated.chain.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"tier":"ephemeral"', b'"tier":"committed"')
    populated.chain.write_bytes(b"".join(lines))
    result = populated.run("job", "maintain", env=env)
    assert 2 == result.code
    assert "does not verify at seq 2" in result.err
    record = json.loads((populated.root / "jobs" / "maintain.json").read_text())
    assert record["ok"] is False


def test_maintenance_fails_after_the_packs_are_deleted(populated: Cli, env: dict[str, str]) -> None:
    """Issue 22: the weekly job passed with every content pack gone; it fails now, and its
    summary of a passing run says what was checked."""
    assert 0 == populated.run("job", "maintain", env=env).code
    record = json.loads((populated.root / "jobs" / "maintain.json").read_text())
    assert record["summary"]["verify"]["checked"].startswith("lines and signatures to seq ")
    for pack in (populated.root / "content" / "packs").glob("*.pack"):
        pack.unlink()
    result = populated.run("job", "maintain", env=env)
    assert 2 == result.code
    assert "missing and was not redacted" in result.err
    record = json.loads((populated.root / "jobs" / "maintain.json").read_text())
    assert record["ok"] is False


def test_maintenance_anchors_only_when_committed_entries_wait(
    anvil: Anvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_node(monkeypatch, anvil.url, state=tmp_path / "state")
    cli = Cli(tmp_path / "data", tmp_path / "home")
    anvil_ok(cli, "init", "--name", "scheduled")
    set_registry(cli.root, *deploy_registry(anvil))
    quiet = json.loads(anvil_ok(cli, "job", "maintain", "--anchor", "anvil", "--json").out)
    assert {"network": "anvil", "committed_since_last": 0} == quiet["summary"]["anchor"]
    anvil_ok(cli, "add", "We ship on Mondays", "--type", "decision", "--tier", "committed")
    first = json.loads(anvil_ok(cli, "job", "maintain", "--anchor", "anvil", "--json").out)
    assert 1 == first["summary"]["anchor"]["committed_since_last"]
    assert first["summary"]["anchor"]["tx"].startswith("0x")
    anvil_ok(cli, "add", "A passing thought", "--tier", "ephemeral")
    second = json.loads(anvil_ok(cli, "job", "maintain", "--anchor", "anvil", "--json").out)
    assert {"network": "anvil", "committed_since_last": 0} == second["summary"]["anchor"]
    anvil_ok(cli, "add", "We review on Fridays", "--type", "decision", "--tier", "committed")
    third = json.loads(anvil_ok(cli, "job", "maintain", "--anchor", "anvil", "--json").out)
    assert 1 == third["summary"]["anchor"]["committed_since_last"]
    assert third["summary"]["anchor"]["tx"] != first["summary"]["anchor"]["tx"]


def test_a_percent_sign_is_escaped_in_the_crontab(tmp_path: Path) -> None:
    """cron turns an unescaped % into a newline (the rest of the line becomes stdin): a folder
    named with one is written as \\% (issue 22: every value is quoted for its format)."""
    from memory_chain.integrations.schedule import crontab_block, plan

    folder = tmp_path / "100%done"
    folder.mkdir()
    block = crontab_block(plan(["memory-chain"], transcripts=folder))
    line = next(x for x in block.splitlines() if "job capture" in x)
    assert "100\\%done" in line and "100%done" not in line.replace("\\%", "")


@pytest.mark.parametrize(
    ("offset", "curate", "maintain"),
    [
        (0, "0 10 * * 0", "0 11 * * 0"),
        (60, "0 11 * * 0", "0 12 * * 0"),
        (-600, "0 0 * * 0", "0 1 * * 0"),
        (-660, "0 23 * * 6", "0 0 * * 0"),
        (840, "0 0 * * 1", "0 1 * * 1"),
        (330, "30 15 * * 0", "30 16 * * 0"),
    ],
)
def test_the_crontab_is_written_in_local_time(offset: int, curate: str, maintain: str) -> None:
    """Issue 22: the block relied on CRON_TZ=UTC, which Debian's cron ignores (the weekly jobs
    ran at 10:00 local). The UTC times are written in local time now, day included."""
    from memory_chain.integrations.schedule import crontab_block, local_cron, plan

    assert curate == local_cron("0 10 * * 0", offset)
    assert maintain == local_cron("0 11 * * 0", offset)
    assert "*/30 * * * *" == local_cron("*/30 * * * *", offset)
    block = crontab_block(plan(["memory-chain"]), offset)
    assert "CRON_TZ" not in block.replace("ignores CRON_TZ", "")
    assert f"{curate} memory-chain job curate" in block


def test_installing_pins_the_workspace_the_shell_uses(
    raw: Cli, env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 22: jobs and the MCP registration pinned only --dir, so a timer's captures went to
    <data dir>/workspace while this shell (and its hooks) used $MEMORY_CHAIN_WORKSPACE, and
    doctor did not notice. doctor warns now, and an install pins the workspace in
    config.json, which every door reads."""
    ws = tmp_path / "my-notes"
    shell = {**env, "MEMORY_CHAIN_WORKSPACE": str(ws)}
    warned = {c["name"]: c for c in raw.run("doctor", "--json", env=shell).json()["checks"]}
    assert (
        "warn" == warned["workspace pin"]["status"] and str(ws) in warned["workspace pin"]["detail"]
    )
    done = raw.run("schedule", "install", "--cron", env=shell)
    assert 0 == done.code and "pinned the workspace" in done.err
    config = json.loads((raw.root / "config.json").read_text())
    assert str(ws) == config["workspace"]
    checks = {c["name"]: c for c in raw.run("doctor", "--json", env=shell).json()["checks"]}
    assert "workspace pin" not in checks
    raw.ok("remember", "Kept where the timer reads too", env=env)  # no variable: a timer's view
    assert "Kept where the timer reads too" in (ws / "MEMORY.md").read_text()


def test_a_job_prints_its_summary_in_words(raw: Cli, tmp_path: Path) -> None:
    """Issue 26: `job curate` printed a Python dict ({'curated': 0, ...})."""
    out = raw.ok("job", "curate").out
    assert out.startswith("curate: ok, curated 0, committed 0, archived 0")
    assert "{" not in out and "'" not in out


def test_maintenance_publishes_the_chain_for_witnesses(
    populated: Cli, env: dict[str, str], tmp_path: Path
) -> None:
    """`job maintain --publish FOLDER` publishes after the chain verifies (FORMAT.md 19);
    a witness that cannot be reached fails the run (exit 2), the folder published without
    its cosignature; a --witness without --publish is a one-line error."""
    folder = tmp_path / "log"
    done = populated.run("job", "maintain", "--publish", str(folder), "--json", env=env)
    assert 0 == done.code, done.err
    assert {"where": str(folder), "size": 5, "new": True, "cosigned_by": []} == done.json()[
        "summary"
    ]["publish"]
    assert populated.run("verify", "--tiles", str(folder), env=env).code == 0
    vkey = populated.run(
        "witness", "keygen", "w.example/w1", "--out", str(tmp_path / "w1.key"), env=env
    ).out.strip()
    populated.run("add", "one more", env=env)
    failed = populated.run(
        "job",
        "maintain",
        "--publish",
        str(folder),
        "--witness",
        vkey,
        "--witness-url",
        "http://127.0.0.1:9",
        env=env,
    )
    assert 2 == failed.code and "cannot reach" in failed.err, failed.err
    record = json.loads((populated.root / "jobs" / "maintain.json").read_text())
    assert record["ok"] is False
    assert (
        6
        == json.loads(populated.run("verify", "--tiles", str(folder), "--json", env=env).out)[
            "size"
        ]
    )
    alone = populated.run("job", "maintain", "--witness", vkey, env=env)
    assert 2 == alone.code and alone.err.startswith("error: --witness and --witness-url go with")


def test_the_maintain_line_carries_where_to_publish(raw: Cli, env: dict[str, str]) -> None:
    vkey = raw.run(
        "witness", "keygen", "w.example/w1", "--out", str(raw.root.parent / "w.key"), env=env
    ).out.strip()
    printed = raw.run(
        "schedule",
        "install",
        "--cron",
        "--print",
        "--publish",
        "log",
        "--witness",
        vkey,
        "--witness-url",
        "http://127.0.0.1:8770",
        env=env,
    )
    assert 0 == printed.code, printed.err
    line = next(x for x in printed.out.splitlines() if " job maintain" in x)
    assert f"--publish {Path.cwd() / 'log'} --witness {vkey}" in line
    assert "--witness-url http://127.0.0.1:8770" in line

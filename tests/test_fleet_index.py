"""A fleet's chains indexed into PostgreSQL (issue 29; index/fleet.py, specs/INDEX.md 7).

Every test runs against a real server (Debian's postgresql, a temporary cluster on a
loopback port: tests/helpers/postgres.py), each in a database of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import SCRIPT, Cli
from helpers.postgres import rows as _rows

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import fleet
from memory_chain.index.db import Index


def _chain(root: Path, name: str, texts: list[str]) -> Ledger:
    led = Ledger.init(root, name=name)
    led.add_batch(
        [
            NewEntry(
                content=t.encode(),
                type=("memory", "decision", "fact")[i % 3],
                meta={"session": f"s{i // 2}", "date": "2026-05-0" + str(1 + i % 9)},
            )
            for i, t in enumerate(texts)
        ]
    )
    return led


#: The rows of one chain, by its id.
OF_CHAIN = "id >> 40 = (SELECT num FROM mc_chains WHERE chain_id = %s)"


def _lines(root: Path) -> list[bytes]:
    return (root / "chain.jsonl").read_bytes().splitlines()


def test_a_chain_in_the_fleet_holds_the_rows_memory_db_holds(tmp_path: Path, url: str) -> None:
    """The fleet's rows of a chain are memory.db's rows, column for column (both are made
    by index/sync.py's builder), keyed by the chain's id; a second sync reads nothing."""
    led = _chain(
        tmp_path / "a", "alpha", [f"note {n} about the staging database" for n in range(7)]
    )
    led.close()
    first = fleet.sync(url, Layout(tmp_path / "a"))
    assert (first.agent, first.added, first.memories) == ("alpha", 8, 7)
    assert first.chain_id == b3(_lines(tmp_path / "a")[0])
    assert fleet.sync(url, Layout(tmp_path / "a")).added == 0
    columns = [c for c in fleet.COLUMNS if c not in ("about_from", "about_to")]
    ours = _rows(
        url,
        f"SELECT {', '.join(columns)} FROM mc_memories WHERE {OF_CHAIN} ORDER BY seq",
        first.chain_id,
    )
    with Index.open(tmp_path / "a") as index:
        theirs = index.conn.execute(
            f"SELECT {', '.join(columns)} FROM memories ORDER BY seq"
        ).fetchall()
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    assert [c["agent"] for c in fleet.chains(url)] == ["alpha"]


def test_new_entries_and_redactions_follow(tmp_path: Path, url: str) -> None:
    root = tmp_path / "a"
    led = _chain(root, "alpha", ["the door code is 4711", "lunch is at noon"])
    synced = fleet.sync(url, Layout(root))
    led.add(NewEntry(content=b"a third memory"))
    redact(led, 1, reason="not for the fleet")
    after = fleet.sync(url, Layout(root))
    led.close()
    assert (after.added, after.memories, after.purged) == (2, 3, 1)
    rows = _rows(
        url,
        f"SELECT seq, content, status, redacted_by FROM mc_memories WHERE {OF_CHAIN} ORDER BY seq",
        synced.chain_id,
    )
    assert rows == [
        (1, None, "redacted", 4),
        (2, "lunch is at noon", "active", None),
        (3, "a third memory", "active", None),
    ]
    assert not _rows(url, "SELECT 1 FROM mc_memories WHERE content LIKE '%%4711%%'")


def test_a_redaction_read_with_its_target_withdraws_the_text_at_once(
    tmp_path: Path, url: str
) -> None:
    root = tmp_path / "a"
    led = _chain(root, "alpha", ["the door code is 4711"])
    redact(led, 1, reason="a secret")
    led.close()
    result = fleet.sync(url, Layout(root))
    assert result.purged == 0  # never written with its text
    assert _rows(url, "SELECT content, status FROM mc_memories") == [(None, "redacted")]


def test_two_agents_share_one_database_keyed_by_chain(tmp_path: Path, url: str) -> None:
    """Both listed, each with its own rows; a memory a person approved in review on
    alpha's host (signed with ``approved`` in its meta) is counted for alpha, wherever the
    list is read."""
    for name in ("alpha", "beta"):
        led = _chain(tmp_path / name, name, [f"{name} remembers {n}" for n in range(3)])
        if name == "alpha":
            led.add(
                NewEntry(
                    content=b"Deploys go out on Tuesdays",
                    type="decision",
                    meta={"origin": "agent", "approved": "2026-11-27"},
                )
            )
        led.close()
        fleet.sync(url, Layout(tmp_path / name))
    listed = fleet.chains(url)
    assert [(c["agent"], c["memories"], c["active"], c["approved"]) for c in listed] == [
        ("alpha", 4, 4, 1),
        ("beta", 3, 3, 0),
    ]
    per_chain = _rows(url, "SELECT id >> 40, count(*) FROM mc_memories GROUP BY id >> 40")
    assert sorted(n for _, n in per_chain) == [3, 4]
    assert len({c for c, _ in per_chain}) == 2


def test_a_rewritten_chain_is_read_again(tmp_path: Path, url: str) -> None:
    """A chain cut back (a restore from an older copy) no longer holds what the fleet
    read: its rows are dropped and read again, with a warning."""
    root = tmp_path / "a"
    _chain(root, "alpha", [f"memory {n}" for n in range(5)]).close()
    fleet.sync(url, Layout(root))
    chain = root / "chain.jsonl"
    kept = b"".join(line + b"\n" for line in _lines(root)[:3])
    chain.write_bytes(kept)
    (root / "head.json").unlink(missing_ok=True)
    with pytest.warns(UserWarning, match="no longer match chain.jsonl"):
        again = fleet.sync(url, Layout(root))
    assert again.rebuilt and again.memories == 2
    assert [r[0] for r in _rows(url, "SELECT seq FROM mc_memories ORDER BY seq")] == [1, 2]
    assert chain.read_bytes() == kept  # only read


def test_rebuild_reads_one_chain_again_and_leaves_the_others(tmp_path: Path, url: str) -> None:
    for name in ("alpha", "beta"):
        _chain(tmp_path / name, name, [f"{name} {n}" for n in range(4)]).close()
        fleet.sync(url, Layout(tmp_path / name))
    again = fleet.sync(url, Layout(tmp_path / "alpha"), rebuild=True)
    assert (again.rebuilt, again.added, again.memories) == (True, 5, 4)
    assert sorted(c["memories"] for c in fleet.chains(url)) == [4, 4]


def _count_content(root: Path) -> tuple[int, list[str]]:
    """How many content entries the chain holds, and the b3 of each line."""
    import orjson

    lines = _lines(root)
    content = sum(orjson.loads(line)["type"] != "genesis" for line in lines)
    return content, [b3(line) for line in lines]


def test_concurrent_syncs_while_agents_write_lose_and_double_nothing(
    tmp_path: Path, url: str
) -> None:
    """Two agents append to their chains while six processes (three a chain) sync them
    into one database over and over: afterwards each chain's rows are its entries,
    once each, none missing."""
    roots = [tmp_path / "alpha", tmp_path / "beta"]
    for root in roots:
        _chain(root, root.name, ["first memory"]).close()
    writer = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory_chain.chain.store.ledger import Ledger\n"
        "from memory_chain.chain.format.newentry import NewEntry\n"
        "led = Ledger(Path(sys.argv[1]))\n"
        "for b in range(20):\n"
        "    led.add_batch([NewEntry(content=f'batch {b} item {i}'.encode()) for i in range(10)])\n"
        "led.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_CHAIN_DIR"}
    writers = [subprocess.Popen([sys.executable, "-c", writer, str(r)]) for r in roots]
    syncers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, subprocess\n"
                "for _ in range(8):\n"
                "    subprocess.run([sys.argv[1], '--dir', sys.argv[2], 'index', '--url', "
                "sys.argv[3]], check=True, capture_output=True)\n",
                SCRIPT,
                str(root),
                url,
            ],
            env=env,
        )
        for root in roots
        for _ in range(3)
    ]
    deadline = time.monotonic() + 240
    for proc in writers + syncers:
        assert proc.wait(timeout=max(1, deadline - time.monotonic())) == 0
    for root in roots:
        final = fleet.sync(url, Layout(root))
        content, hashes = _count_content(root)
        assert content == 201
        rows = _rows(
            url,
            f"SELECT seq, hash FROM mc_memories WHERE {OF_CHAIN} ORDER BY seq",
            final.chain_id,
        )
        assert [r[0] for r in rows] == list(range(1, 202))  # each entry once, none missing
        assert [r[1] for r in rows] == hashes[1:]
        state = _rows(url, "SELECT size FROM mc_chains WHERE chain_id = %s", final.chain_id)
        assert state == [(202,)]


def test_the_command_line_syncs_and_lists(cli: Cli, url: str) -> None:
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "Use pnpm, not npm")
    first = cli.run("index", "--url", url)
    assert first.code == 0, first.err
    assert "indexed 2 new entries of agent alpha" in first.out
    assert "1 memory there" in first.out
    listed = cli.run("index", "--url", url, "--list", "--json").json()
    assert [(c["agent"], c["memories"]) for c in listed] == [("alpha", 1)]
    by_env = cli.run("index", env={"MEMORY_CHAIN_INDEX_URL": url})
    assert by_env.code == 0 and "indexed 0 new entries" in by_env.out


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("mysql://db/x", "--url takes a postgresql:// URL"),
        ("postgresql://mc:hunter2@127.0.0.1:1/x", "cannot connect to postgresql://mc:***@"),
    ],
)
def test_a_bad_url_is_one_line_and_changes_nothing(cli: Cli, given: str, message: str) -> None:
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "a memory")
    before = {p: p.read_bytes() for p in cli.root.rglob("*") if p.is_file()}
    result = cli.run("index", "--url", given)
    assert result.code == 2
    assert message in result.err and "hunter2" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    after = {p: p.read_bytes() for p in cli.root.rglob("*") if p.is_file()}
    assert {p: v for p, v in after.items() if p.name != "memory.db"} == {
        p: v for p, v in before.items() if p.name != "memory.db"
    }


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path, url: str) -> None:
    _chain(tmp_path / "a", "alpha", ["one"]).close()
    fleet.sync(url, Layout(tmp_path / "a"))
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE mc_schema SET version = 99")
    from memory_chain.chain.format.errors import OperationalError

    with pytest.raises(OperationalError, match="version 99"):
        fleet.sync(url, Layout(tmp_path / "a"))


def test_the_rows_hold_no_usage_of_the_host(tmp_path: Path, url: str) -> None:
    """Usage statistics are each host's own (memory.db's usage table): the fleet's rows
    have no such columns."""
    _chain(tmp_path / "a", "alpha", ["one"]).close()
    fleet.sync(url, Layout(tmp_path / "a"))
    names = {
        r[0]
        for r in _rows(
            url,
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'mc_memories'",
        )
    }
    assert names == {"id", "words", "lead", *fleet.COLUMNS}
    assert not names & {"access_count", "last_access", "restored_at"}


def _configure(cli: Cli, url: str | None) -> None:
    import json

    path = cli.root / "config.json"
    config = json.loads(path.read_text())
    config["index"] = {"url": url}
    path.write_text(json.dumps(config))


def test_the_url_in_config_json_is_where_index_and_the_maintain_job_sync(
    cli: Cli, url: str
) -> None:
    """config.json "index": {"url": ...} is the fleet's database for `index` without
    --url, and the maintain job syncs the chain there once it verifies."""
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "Use pnpm, not npm")
    missing = cli.run("index")
    assert missing.code == 2
    assert missing.err.startswith("error: no fleet database to index into")
    _configure(cli, url)
    assert "indexed 2 new entries" in cli.run("index").out
    cli.ok("add", "Staging runs on port 5433")
    done = cli.run("job", "maintain", "--json")
    assert done.code == 0, done.err
    assert done.json()["summary"]["fleet"] == {
        "url": url,
        "added": 1,
        "memories": 2,
        "vectors": 0,
        "entries": 0,
    }
    held = _rows(url, "SELECT content FROM mc_memories ORDER BY seq")
    assert held == [("Use pnpm, not npm",), ("Staging runs on port 5433",)]


def test_a_fleet_url_in_config_json_that_is_not_postgresql_is_refused(cli: Cli) -> None:
    cli.ok("init", "--name", "alpha")
    _configure(cli, "mysql://db/x")
    result = cli.run("index")
    assert result.code == 2
    assert "config.json: index.url must be a postgresql:// URL" in result.err


def test_a_maintain_job_whose_fleet_is_down_fails_and_says_so(cli: Cli) -> None:
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "a memory")
    _configure(cli, "postgresql://mc@127.0.0.1:1/fleet")
    done = cli.run("job", "maintain")
    assert done.code == 2 and "cannot connect to postgresql://mc@127.0.0.1:1/fleet" in done.err


def test_doctor_says_how_much_of_the_chain_the_fleet_holds(cli: Cli, url: str) -> None:
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "a memory")

    def fleet_check() -> dict[str, Any] | None:
        checks = cli.run("doctor", "--json").json()["checks"]
        return next((c for c in checks if c["name"] == "fleet"), None)

    assert fleet_check() is None  # no fleet configured: nothing said
    _configure(cli, url)
    first = fleet_check()
    assert first is not None and first["status"] == "warn"
    assert "holds none of this chain yet" in first["detail"]
    cli.ok("index")
    synced = fleet_check()
    assert synced is not None and synced["status"] == "ok"
    assert synced["detail"].endswith("holds all 2 entries")
    cli.ok("add", "another")
    behind = fleet_check()
    assert behind is not None and "holds 2 of 3 entries" in behind["detail"]
    _configure(cli, "postgresql://mc@127.0.0.1:1/fleet")
    down = fleet_check()
    assert down is not None and down["status"] == "warn"
    assert "cannot connect" in down["detail"]


def test_a_chain_that_does_not_verify_is_not_brought_into_the_fleet(cli: Cli, url: str) -> None:
    """A line edited after it was signed: `index` refuses (exit 1, one line), the fleet
    holds nothing of it; with --no-verify the rows are read as they are."""
    import json

    cli.ok("init", "--name", "alpha")
    cli.ok("add", "Deploys go out on Tuesdays")
    lines = cli.chain.read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[1])
    entry["importance"] = 99 if entry["importance"] != 99 else 98
    lines[1] = json.dumps(entry, separators=(",", ":"), sort_keys=True).encode() + b"\n"
    cli.chain.write_bytes(b"".join(lines))
    before = cli.chain.read_bytes()
    refused = cli.run("index", "--url", url)
    assert refused.code == 1
    assert refused.err.startswith("error: the chain does not verify at seq 1")
    assert "refusing to bring it into the fleet" in refused.err
    assert fleet.chains(url) == []
    assert cli.chain.read_bytes() == before
    forced = cli.run("index", "--url", url, "--no-verify")
    assert forced.code == 0, forced.err
    assert _rows(url, "SELECT importance FROM mc_memories") == [(entry["importance"],)]


def test_a_database_that_refuses_the_tables_is_a_one_line_error(cli: Cli, url: str) -> None:
    """A role that may connect but not create tables (PostgreSQL 15: only the database's
    owner creates in its public schema): one line, exit 2, nothing written anywhere."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS reader")
        conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "a memory")
    before = cli.chain.read_bytes()
    reader = url.replace("postgresql://mc@", "postgresql://reader@")
    result = cli.run("index", "--url", reader)
    assert result.code == 2
    assert result.err.startswith("error: the fleet database at postgresql://reader@")
    assert "permission denied" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert cli.chain.read_bytes() == before
    assert _rows(url, "SELECT to_regclass('mc_chains')") == [(None,)]

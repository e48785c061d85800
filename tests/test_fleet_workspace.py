"""An agent's workspace in a fleet's PostgreSQL (issue 29, workspace/fleet.py): the user
and project scopes' entries beside the chain, searched and reviewed with it; never the
local scope. Against Debian's PostgreSQL (tests/helpers/postgres.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import Cli
from helpers.postgres import rows as _rows

from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.errors import InputError, OperationalError
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index import fleet
from memory_chain.index.db import Index
from memory_chain.index.query import fts_query
from memory_chain.workspace import fleet as wsfleet
from memory_chain.workspace import ops
from memory_chain.workspace.indexing import sync_workspace
from memory_chain.workspace.scopes import Workspace


def _agent(tmp_path: Path, name: str) -> tuple[Path, Workspace]:
    """A data directory with a chain of agent ``name``, and its workspace: a user scope
    and a project with its project and local scopes."""
    root = tmp_path / name
    Ledger.init(root / "data", name=name).close()
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    return root / "data", Workspace(root / "user", repo)


def _sync(url: str, data: Path, ws: Workspace, **kw: bool) -> wsfleet.WsFleetSync:
    synced = fleet.sync(url, Layout(data))
    with Index.open(data) as index:
        return wsfleet.sync_entries(url, synced.chain_id, index.conn, ws, **kw)


def _texts(url: str) -> list[tuple[str, str]]:
    """(scope, text) of the fleet's entries, a daily note's time of day left out."""
    import re

    found = _rows(url, "SELECT scope, text FROM mc_ws_entries")
    return sorted((scope, re.sub(r"^\d\d:\d\d ", "", text)) for scope, text in found)


def test_the_user_and_project_scopes_are_mirrored_never_the_local(tmp_path: Path, url: str) -> None:
    data, ws = _agent(tmp_path, "alpha")
    ops.remember(ws.scope("user"), "Prefers short answers", section="User Preferences")
    ops.remember(ws.scope("project"), "Staging runs on port 5433", section="Project Facts")
    ops.remember(ws.scope("local"), "My laptop's VPN key is in the drawer", section="Notes")
    ops.note(ws.scope("project"), "Started the migration to PostgreSQL 16")
    done = _sync(url, data, ws)
    assert (done.files, done.parsed, done.removed, done.entries) == (3, 3, 0, 3)
    assert _texts(url) == [
        ("project", "Staging runs on port 5433"),
        ("project", "Started the migration to PostgreSQL 16"),
        ("user", "Prefers short answers"),
    ]
    assert not _rows(url, "SELECT 1 FROM mc_ws_files WHERE scope = 'local'")


def test_an_edited_file_is_read_again_and_a_deleted_one_goes(tmp_path: Path, url: str) -> None:
    data, ws = _agent(tmp_path, "alpha")
    user, project = ws.scope("user"), ws.scope("project")
    ops.remember(user, "Prefers short answers", section="User Preferences")
    ops.remember(project, "Staging runs on port 5433", section="Project Facts")
    ops.note(project, "Started the migration")
    _sync(url, data, ws)
    assert _sync(url, data, ws).parsed == 0  # nothing changed: nothing read
    user.memory_md.write_text(user.memory_md.read_text() + "- Typed by hand\n")
    (daily,) = (project.root / "memory").glob("*.md")
    daily.unlink()
    again = _sync(url, data, ws)
    assert (again.parsed, again.removed, again.entries) == (1, 1, 3)
    assert _texts(url) == [
        ("project", "Staging runs on port 5433"),
        ("user", "Prefers short answers"),
        ("user", "Typed by hand"),
    ]
    rebuilt = _sync(url, data, ws, rebuild=True)
    assert (rebuilt.parsed, rebuilt.entries) == (2, 3)


def test_a_workspace_needs_its_chain_in_the_fleet_first(tmp_path: Path, url: str) -> None:
    data, ws = _agent(tmp_path, "alpha")
    with Index.open(data) as index, pytest.raises(OperationalError, match="not in the fleet"):
        wsfleet.sync_entries(url, "b3:" + "0" * 64, index.conn, ws)


def test_the_fleets_bm25_of_entries_is_ws_fts_bm25(tmp_path: Path, url: str) -> None:
    """With only the mirrored scopes on the host, an entry's bm25 in the fleet is ws_fts's
    (FTS5's formula over two columns, text and section), to rounding."""
    data, ws = _agent(tmp_path, "alpha")
    user, project = ws.scope("user"), ws.scope("project")
    texts = [
        ("Staging runs on port 5433", "Project Facts"),
        ("Deploys go out on Tuesdays after the staging check", "Project Facts"),
        ("Use pnpm, not npm", "Conventions"),
        ("The staging database is PostgreSQL 16", "Infrastructure"),
        ("Prefers short answers", "User Preferences"),
        ("Prefers staging deploys in the morning", "Staging"),
    ]
    for i, (text, section) in enumerate(texts):
        ops.remember(user if i % 2 else project, text, section=section)
    _sync(url, data, ws)
    import psycopg

    with Index.open(data) as index, psycopg.connect(url) as conn:
        chosen = {1: ("b3:x", "alpha")}
        for query in ("staging", "staging deploys", "pnpm conventions", "project facts port"):
            match = fts_query(query)
            want = dict(
                index.conn.execute(
                    "SELECT e.text, -bm25(ws_fts) FROM ws_fts JOIN ws_entries e "
                    "ON e.id = ws_fts.rowid WHERE ws_fts MATCH ?",
                    (match,),
                ).fetchall()
            )
            got = _raw_bm25(conn, chosen, query)
            assert got.keys() == want.keys(), query
            for text, score in want.items():
                assert got[text] == pytest.approx(score, rel=1e-9), (query, text)


def _raw_bm25(conn: object, chosen: dict[int, tuple[str, str]], query: str) -> dict[str, float]:
    """text -> the fleet's bm25 of each entry holding a word of ``query``."""
    from memory_chain.index.query import query_terms
    from memory_chain.index.words import Words, term_id

    words = Words()
    phrases = [list(dict.fromkeys(term_id(w) for w in words.tokens(t))) for t in query_terms(query)]
    words.close()
    rows = conn.execute(  # type: ignore[attr-defined]
        "SELECT text, t_words, t_tf, t_len, s_words, s_tf, s_len FROM mc_ws_entries"
    ).fetchall()
    stats = conn.execute(  # type: ignore[attr-defined]
        "SELECT count(*), avg(t_len + s_len) FROM mc_ws_entries"
    ).fetchone()
    scored = wsfleet._bm25(
        [(i, *r[1:]) for i, r in enumerate(rows)],
        [p for p in phrases if p],
        int(stats[0]),
        float(stats[1]),
    )
    return {rows[i][0]: s for i, s in scored.items()}


def test_search_across_the_fleet_finds_both_halves_labelled(tmp_path: Path, url: str) -> None:
    a_data, a_ws = _agent(tmp_path, "alpha")
    b_data, b_ws = _agent(tmp_path, "beta")
    ops.remember(a_ws.scope("project"), "The staging database is on port 5433", section="Facts")
    ops.remember(a_ws.scope("local"), "The staging database password hint is blue", section="N")
    led = Ledger(b_data)
    from memory_chain.chain.format.newentry import NewEntry

    led.add_batch([NewEntry(content=b"The staging database moved to a new host", type="fact")])
    led.close()
    _sync(url, a_data, a_ws)
    _sync(url, b_data, b_ws)
    found = wsfleet.search(url, "staging database")
    kinds = sorted((type(f).__name__, f.agent) for f in found)
    assert kinds == [("FleetEntry", "alpha"), ("Hit", "beta")]
    entry = next(f for f in found if isinstance(f, wsfleet.FleetEntry))
    assert (entry.scope, entry.path, entry.role) == ("project", "MEMORY.md", "guidance")
    assert entry.text == "The staging database is on port 5433" and entry.line > 0
    assert entry.as_dict()["kind"] == "editable"
    only = wsfleet.search(url, "staging database", scope="project")
    assert [type(f).__name__ for f in only] == ["FleetEntry"]
    assert wsfleet.search(url, "staging database", agents=["beta"], type_="fact")[0].agent == "beta"
    assert wsfleet.search(url, "staging database", type_="fact", agents=["alpha"]) == []
    with pytest.raises(InputError, match="not 'local'"):
        wsfleet.search(url, "staging", scope="local")
    assert not any("password" in f.text for f in wsfleet.search(url, "password hint blue"))


def test_review_lists_the_memory_md_entries_waiting_and_approval_clears_them(
    tmp_path: Path, url: str
) -> None:
    data, ws = _agent(tmp_path, "alpha")
    project = ws.scope("project")
    ops.remember(project, "Written by a person", section="Facts")
    project.memory_md.write_text(
        project.memory_md.read_text()
        + "- Use spaces, not tabs <!-- mc: added=2026-01-01 src=auto -->\n"
    )
    _sync(url, data, ws)
    queue = wsfleet.waiting(url)
    assert [(w["agent"], w["text"], w["origin"]) for w in queue["waiting"]] == [
        ("alpha", "Use spaces, not tabs", "capture")
    ]
    assert queue["per_agent"] == {"alpha": 1}
    from memory_chain.capture.review import approve

    approve(ws, queue["waiting"][0]["id"], chain=None)  # a section no chain type maps to
    _sync(url, data, ws)
    assert wsfleet.waiting(url)["waiting"] == []


def test_the_commands_sync_search_and_review_the_workspace(tmp_path: Path, url: str) -> None:
    cli = Cli(tmp_path / "data", tmp_path / "home")
    cli.ok("init", "--name", "alpha")
    cli.ok("add", "Deploys need the staging check", "--type", "fact")
    user = tmp_path / "data" / "workspace"
    user.mkdir(parents=True, exist_ok=True)
    (user / "MEMORY.md").write_text(
        "# Memory\n\n## Conventions\n\n"
        "- Always run the staging check before a deploy <!-- mc: added=2026-01-01 src=auto -->\n"
    )
    out = cli.ok("index", "--url", url).out
    assert "workspace: 1 entry of the user and project scopes there" in out
    found = cli.ok("search", "staging check", "--url", url).out.splitlines()
    assert any(line.startswith("alpha:user:MEMORY.md:5  ") and "editable" in line for line in found)
    assert any(line.startswith("alpha:1  ") and "provable" in line for line in found)
    review = cli.ok("review", "--url", url).out
    assert "alpha:user:5" in review and "(capture, MEMORY.md)" in review
    assert "waiting, by agent: alpha 1" in review


def test_memory_db_keeps_the_local_scope_the_fleet_does_not(tmp_path: Path, url: str) -> None:
    """The host's own search still sees its local scope (memory.db); the fleet never had it."""
    data, ws = _agent(tmp_path, "alpha")
    ops.remember(ws.scope("local"), "The VPN key is in the drawer", section="Notes")
    _sync(url, data, ws)
    with Index.open(data) as index:
        sync_workspace(index.conn, ws)
        local = index.conn.execute("SELECT count(*) FROM ws_entries WHERE scope = 'local'")
        assert local.fetchone() == (1,)
    assert _rows(url, "SELECT count(*) FROM mc_ws_entries") == [(0,)]


def test_a_secret_typed_into_memory_md_stays_on_its_host(tmp_path: Path, url: str) -> None:
    """The workspace's writes refuse secrets, but a person can type one into a file by hand:
    memory.db indexes it on that host, and the fleet, which many read, does not take it."""
    data, ws = _agent(tmp_path, "alpha")
    project = ws.scope("project")
    ops.remember(project, "Deploys need the staging check", section="Facts")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    project.memory_md.write_text(
        project.memory_md.read_text() + f"- The deploy bot's token is {token}\n"
    )
    done = _sync(url, data, ws)
    assert (done.entries, done.withheld) == (1, 1)
    assert _texts(url) == [("project", "Deploys need the staging check")]
    assert not _rows(url, "SELECT 1 FROM mc_ws_entries WHERE text LIKE '%%ghp_%%'")


def test_concurrent_syncs_while_a_person_writes_lose_and_double_nothing(
    tmp_path: Path, url: str
) -> None:
    """Three processes run `index --url` over and over while another adds entries to
    MEMORY.md: afterwards the fleet holds the file's entries, once each, none missing
    (each sync's workspace half is one transaction under the chain's lock)."""
    import os
    import subprocess
    import sys
    import time

    from helpers.cli import SCRIPT

    data = tmp_path / "data"
    Ledger.init(data, name="alpha").close()
    user = Workspace(data / "workspace", None).scope("user")
    ops.remember(user, "first entry", section="Notes")
    writer = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory_chain.workspace import ops\n"
        "from memory_chain.workspace.scopes import Workspace\n"
        "user = Workspace(Path(sys.argv[1]), None).scope('user')\n"
        "for i in range(30):\n"
        "    ops.remember(user, f'entry number {i} of the writer', section='Notes')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORY_CHAIN_DIR",)}
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(data / "workspace")])]
    procs += [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, subprocess\n"
                "for _ in range(6):\n"
                "    subprocess.run([sys.argv[1], '--dir', sys.argv[2], 'index', '--url', "
                "sys.argv[3]], check=True, capture_output=True)\n",
                SCRIPT,
                str(data),
                url,
            ],
            env=env,
            cwd=tmp_path,  # no project here: the user scope only
        )
        for _ in range(3)
    ]
    deadline = time.monotonic() + 240
    for proc in procs:
        assert proc.wait(timeout=max(1, deadline - time.monotonic())) == 0
    synced = fleet.sync(url, Layout(data))
    with Index.open(data) as index:
        final = wsfleet.sync_entries(url, synced.chain_id, index.conn, Workspace(user.root, None))
    want = ["first entry"] + [f"entry number {i} of the writer" for i in range(30)]
    assert final.entries == 31
    assert sorted(t for _, t in _texts(url)) == sorted(want)

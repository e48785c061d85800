"""Issue 22, "Workspace and hooks": what a person writes into a markdown file, however odd,
is read, and nothing an agent writes is lost in it.

One test per finding: a non-UTF-8 byte in MEMORY.md, an unclosed code fence, and the
sub-bullets, numbered items and table rows a person writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.cli import Cli

from memory_chain.workspace.markdown import Document

PAYLOADS = Path(__file__).parent / "fixtures" / "hook-payloads"


@pytest.fixture
def agent(populated: Cli, tmp_path: Path) -> tuple[Cli, Path]:
    """A chain, a user MEMORY.md and a project one."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    populated.ok("remember", "Prefers short answers", "--section", "User Preferences")
    populated.ok(
        "remember", "Run the tests with pytest -q", "--scope", "project", "--project", str(project)
    )
    return populated, project


def _session_start(cli: Cli, project: Path) -> str:
    payload = json.loads((PAYLOADS / "SessionStart-1.json").read_text())
    payload["cwd"] = str(project)
    result = cli.run("hook", "SessionStart", stdin=json.dumps(payload).encode())
    assert 0 == result.code, result.err
    text: str = json.loads(result.out)["hookSpecificOutput"]["additionalContext"]
    return text


def test_a_non_utf8_byte_in_memory_md(agent: tuple[Cli, Path]) -> None:
    """One byte that is not UTF-8 in the user MEMORY.md: context and search exited 2 ("this is
    a bug") and the session start had nothing from any scope. Now the line reads with U+FFFD,
    every scope is injected, the file keeps its bytes, and verify --workspace names it."""
    cli, project = agent
    memory = cli.root / "workspace" / "MEMORY.md"
    memory.write_bytes(memory.read_bytes() + b"- caf\xe9 au lait\n")
    before = memory.read_bytes()
    context = cli.run("context", "--project", str(project))
    assert 0 == context.code, context.err
    assert "caf\ufffd au lait" in context.out and "Run the tests with pytest -q" in context.out
    found = cli.run("search", "lait", "--json")
    assert 0 == found.code and "caf\ufffd au lait" == found.json()[0]["text"]
    text = _session_start(cli, project)
    assert "Prefers short answers" in text and "Run the tests with pytest -q" in text
    assert memory.read_bytes() == before
    check = cli.run("verify", "--workspace")
    assert 1 == check.code and "not valid UTF-8" in check.out


def test_an_unclosed_code_fence_refuses_writes(agent: tuple[Cli, Path]) -> None:
    """`ws remember` said "added" into an unclosed fence (in no listing or context) and added a
    duplicate on each repeat. Now it refuses, naming the line, and writes nothing."""
    cli, _ = agent
    memory = cli.root / "workspace" / "MEMORY.md"
    memory.write_bytes(memory.read_bytes() + b"\n```sh\nmake deploy\n")
    before = memory.read_bytes()
    for _ in range(2):
        refused = cli.run("ws", "remember", "Deploys need a green CI run")
        assert 2 == refused.code
        assert "line 6 opens a code fence that never closes" in refused.err
        assert memory.read_bytes() == before
    memory.write_bytes(before + b"```\n")
    cli.ok("ws", "remember", "Deploys need a green CI run")
    assert "Deploys need a green CI run" in cli.ok("context").out


PERSON = """# Memory

## Workflow
- Deploy steps
  - tag the release first
  - then run make deploy
    with the staging profile

## Environments
1. Build the images with make
2) Push the tag

| env | port |
|---|:--:|
| staging | 5433 |
| prod | 5432 |

| loose | row |
"""


def test_sub_bullets_numbered_items_and_table_rows_are_found(raw: Cli) -> None:
    """A person's sub-bullets, numbered items and table rows were never searched or injected;
    now each is, and the file is not rewritten."""
    memory = raw.root / "workspace" / "MEMORY.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(PERSON)
    out = raw.ok("context").out
    for line in (
        "- tag the release first (user:5)",
        "- with the staging profile (user:7)",
        "- Build the images with make (user:10)",
        "- Push the tag (user:11)",
        "- env: staging; port: 5433 (user:15)",
        "- env: prod; port: 5432 (user:16)",
        "- loose | row (user:18)",
    ):
        assert line in out, out
    hits = raw.ok("search", "staging port", "--json").json()
    assert "env: staging; port: 5433" == hits[0]["text"]
    assert raw.ok("search", "tag release", "--json").json()[0]["line"] == 5
    assert memory.read_text() == PERSON


def test_items_are_not_read_inside_code() -> None:
    """Numbered lines and pipes inside a fenced block are code, not memories."""
    doc = Document.parse(b"## Notes\n```\n1. not an item\n| a | b |\n```\n3. an item\n")
    assert [(6, "Notes", "an item")] == [tuple(i) for i in doc.items]


def test_one_letter_names_are_not_duplicates(raw: Cli) -> None:
    """`remember "Team A uses pnpm"` then "Team B ..." answered duplicate (one-letter words
    were ignored); both are kept now."""
    raw.ok("remember", "Team A uses pnpm")
    assert raw.ok("remember", "Team B uses pnpm").out.startswith("added: Team B uses pnpm")
    texts = [
        e.text
        for e in Document.parse((raw.root / "workspace" / "MEMORY.md").read_bytes()).entries()
    ]
    assert ["Team A uses pnpm", "Team B uses pnpm"] == texts


def test_a_changed_fact_supersedes_and_the_old_one_is_archived(raw: Cli) -> None:
    """ "... every 30 days" then "... every 90 days" answered duplicate and kept 30; now 90
    takes its place and 30 goes to the archive with its reason, nothing lost."""
    raw.ok("remember", "The staging API token rotates every 30 days")
    out = raw.ok("remember", "The staging API token rotates every 90 days").out
    assert out.startswith("superseded: The staging API token rotates every 90 days")
    memory = (raw.root / "workspace" / "MEMORY.md").read_text()
    assert "every 90 days" in memory and "every 30 days" not in memory
    (archive,) = (raw.root / "workspace" / "memory" / "archive").glob("*.md")
    assert "every 30 days" in archive.read_text() and "the fact changed" in archive.read_text()


def test_an_agent_never_replaces_a_persons_changed_fact(tmp_path: Path) -> None:
    """The same change remembered by an agent (source auto) keeps the person's entry, adds its
    own and reports the contradiction."""
    from memory_chain.workspace.ops import remember
    from memory_chain.workspace.scopes import Scope

    scope = Scope("user", tmp_path / "ws")
    remember(scope, "Postgres runs on port 5432 on this laptop")
    out = remember(scope, "Postgres runs on port 5433 on this laptop", source="auto")
    assert "added" == out.action and out.detail["contradicts"] == [4]
    texts = [e.text for e in Document.parse(scope.memory_md.read_bytes()).entries()]
    assert len(texts) == 2


def test_a_read_only_data_directory_still_starts_a_session(
    agent: tuple[Cli, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data directory this process may not write: the session start is the full block
    (it was empty) from an in-memory copy of the index, and memory.db is neither written nor
    moved aside as damaged (it was renamed). Run in-process with the writability check
    answering no: as root, chmod does not make a directory read-only."""
    from memory_chain.index import db
    from memory_chain.integrations.api import Memory

    cli, project = agent
    cli.ok("context", "--project", str(project))  # memory.db exists and is healthy
    before = {p.name: p.read_bytes() for p in cli.root.iterdir() if p.name.startswith("memory.db")}
    monkeypatch.setattr(db, "_writable", lambda _root, _path: False)
    with Memory.open(cli.root, project=project) as memory:
        block = memory.context()["markdown"]
        hits = memory.search("pnpm")
    assert "Use pnpm, not npm" in block and "Prefers short answers" in block
    assert "Run the tests with pytest -q" in block
    assert hits and "Use pnpm, not npm" == hits[0]["text"]
    after = {p.name: p.read_bytes() for p in cli.root.iterdir() if p.name.startswith("memory.db")}
    assert before == after


def test_only_a_damaged_index_is_moved_aside() -> None:
    """A busy, locked or read-only memory.db is an error to report, never "damaged"."""
    import sqlite3

    from memory_chain.index.db import _damaged

    assert _damaged(sqlite3.DatabaseError("file is not a database"))
    assert _damaged(sqlite3.DatabaseError("database disk image is malformed"))
    for text in ("attempt to write a readonly database", "database is locked", "unable to open"):
        assert not _damaged(sqlite3.OperationalError(text))


def _big_memory(path: Path, n: int) -> list[str]:
    texts = [f"Service number {i:03d} is owned by team {chr(65 + i % 26)}{i}" for i in range(n)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Memory\n\n## Notes\n" + "".join(f"- {t}\n" for t in texts))
    return texts


def test_openclaw_bootstrap_injects_what_openclaw_would_and_says_what_it_left_out(
    populated: Cli, tmp_path: Path
) -> None:
    """OpenClaw's bootstrap injected 84 of 200 MEMORY.md lines (about 6 KB) and said nothing;
    OpenClaw itself injects MEMORY.md up to 20,000 characters. Now all 200 are in, the block
    stays under that, and a MEMORY.md too big for it ends with how many were left out."""
    ws = tmp_path / "openclaw-ws"
    texts = _big_memory(ws / "MEMORY.md", 200)
    payload = json.dumps({"workspaceDir": str(ws), "sessionId": "s", "agentId": "main"})
    block = populated.run("hook", "agent:bootstrap", stdin=payload.encode()).out
    assert all(t in block for t in texts) and len(block) <= 20_000
    assert "left out" not in block
    texts = _big_memory(ws / "MEMORY.md", 900)
    block = populated.run("hook", "agent:bootstrap", stdin=payload.encode()).out
    shown = sum(t in block for t in texts)
    assert 200 < shown < 900 and len(block) <= 20_000
    m = re.search(
        r"\n_([0-9,]+) more memories were left out by the token budget: "
        r"`memory-chain search` \(or the search tool\) finds them\._\n$",
        block,
    )
    assert m is not None, block[-300:]
    chain_left = 4 - sum(
        t in block for t in ("Use pnpm", "Temporary token", "Staging is on", "Check the port")
    )
    assert int(m.group(1).replace(",", "")) == 900 - shown + chain_left


def test_the_session_start_says_what_its_budget_left_out(raw: Cli) -> None:
    """The Claude Code block never said how many entries it left out."""
    texts = _big_memory(raw.root / "workspace" / "MEMORY.md", 400)
    out = raw.ok("context").out
    shown = sum(t in out for t in texts)
    assert 0 < shown < 400
    assert f"_{400 - shown:,} more memories were left out by the token budget" in out


def test_tools_read_a_file_with_a_byte_that_is_not_utf8(raw: Cli) -> None:
    """Found by the fuzz pass: `files read` (and the memory tool's view) of a file holding a
    byte that is not UTF-8 failed with "this is a bug"; the byte reads as U+FFFD. A section
    name with such a byte (or a secret) is refused, so an agent never writes one."""
    memory = raw.root / "workspace" / "MEMORY.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_bytes(b"# Memory\n\n## Notes\n- caf\xe9 au lait\n")
    assert "caf\ufffd au lait" in raw.ok("files", "read", "MEMORY.md").out
    viewed = raw.run("tool", "memory", stdin=b'{"command": "view", "path": "/memories/MEMORY.md"}')
    assert 0 == viewed.code and "caf\ufffd au lait" in viewed.out
    refused = raw.run("remember", "x", "--section", b"bad \xff section")
    assert 2 == refused.code and "not UTF-8" in refused.err
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert 2 == raw.run("remember", "x", "--section", token).code
    assert token not in memory.read_text(errors="replace")

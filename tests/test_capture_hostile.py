"""Issue 22, capture and curation: a wrong option or an odd daily line loses nothing.

One test per finding: a wrong --format moved the read position past what it skipped;
--workspace naming a file failed after writing the project scope; --project with a typo
created the folder; a daily line holding "<!--" or a byte that is not UTF-8 made every
curation fail (the second as "this is a bug").
"""

from __future__ import annotations

import datetime
from pathlib import Path

from helpers import transcripts as cc
from helpers.cli import Cli, file_bytes


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(cc.jsonl([cc.user("Remember that the staging database runs on port 5433.")]))
    return path


def test_a_wrong_format_moves_nothing(raw: Cli, tmp_path: Path) -> None:
    """`capture --format turns` of a Claude Code transcript is refused (it read every line as
    junk and saved the position after them); the next capture still finds the memory."""
    t = _transcript(tmp_path)
    before = file_bytes(raw.root)
    wrong = raw.run("capture", "--transcript", str(t), "--format", "turns")
    assert 2 == wrong.code
    assert wrong.err.startswith(f"error: {t} reads as a claude transcript, not turns")
    assert before == file_bytes(raw.root)
    raw.ok("capture", "--transcript", str(t))
    memory = (raw.root / "workspace" / "MEMORY.md").read_text()
    assert "port 5433" in memory


def test_a_workspace_that_is_a_file_is_refused_before_any_write(raw: Cli, tmp_path: Path) -> None:
    """`capture --workspace FILE` wrote the project MEMORY.md and a daily file, then failed."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("a file\n")
    t = _transcript(tmp_path)
    result = raw.run(
        "capture",
        "--transcript",
        str(t),
        "--workspace",
        str(not_a_folder),
        "--project",
        str(project),
    )
    assert 2 == result.code
    assert result.err.startswith(f"error: the workspace {not_a_folder} is not a folder")
    assert not (project / ".memory-chain").exists()
    assert not_a_folder.read_text() == "a file\n"


def test_a_missing_project_folder_is_not_created(raw: Cli, tmp_path: Path) -> None:
    """`ws remember --scope project --project /typo` created the folder."""
    typo = tmp_path / "no-such-project"
    result = raw.run(
        "ws", "remember", "Tests live in __tests__", "--scope", "project", "--project", str(typo)
    )
    assert 2 == result.code and result.err.startswith(f"error: no such project folder: {typo}")
    assert not typo.exists()


def test_curation_skips_daily_lines_it_cannot_promote(raw: Cli) -> None:
    """A daily line holding "<!--" or a byte that is not UTF-8 is skipped and named with its
    file and line; the rest is curated (every curation failed before)."""
    day = datetime.date.today().isoformat()
    daily = raw.root / "workspace" / "memory" / f"{day}.md"
    daily.parent.mkdir(parents=True)
    meta = "conf=0.90 src=auto cat=preference scope=user"
    daily.write_bytes(
        f"# {day}\n\n## Captured\n".encode()
        + f"- 10:00 Prefers <!-- tabs over spaces <!-- mc: {meta} ref=s/1 -->\n".encode()
        + b"- 10:01 Prefers caf\xe9 au lait <!-- mc: "
        + meta.encode()
        + b" ref=s/2 -->\n"
        + f"- 10:02 Prefers dark mode in every editor <!-- mc: {meta} ref=s/3 -->\n".encode()
    )
    before = daily.read_bytes()
    out = raw.ok("curate", "--json").json()
    assert ["Prefers dark mode in every editor"] == [d["text"] for d in out["curated"]]
    assert [(d["from"], d["why"]) for d in out["skipped"]] == [
        (f"user:memory/{day}.md:L4", "the entry may not hold an HTML comment (<!-- -->)"),
        (f"user:memory/{day}.md:L5", "the entry holds bytes that are not UTF-8"),
    ]
    assert daily.read_bytes() == before
    text = raw.ok("curate").out
    assert f"skipped user:memory/{day}.md:L4: " in text and str(daily) in text


def test_a_workspace_linked_to_a_system_folder_is_refused(raw: Cli, tmp_path: Path) -> None:
    """Issue 22: a --workspace that is a symbolic link to a system folder was followed and
    written into. It is refused, and nothing is written there; a link elsewhere still works."""
    link = tmp_path / "ws-link"
    link.symlink_to("/etc")
    result = raw.run("remember", "Prefers short answers", "--workspace", str(link))
    assert 2 == result.code and "a system folder" in result.err
    assert not Path("/etc/MEMORY.md").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    elsewhere = tmp_path / "ws-elsewhere"
    elsewhere.symlink_to(mine)
    raw.ok("remember", "Prefers short answers", "--workspace", str(elsewhere))
    assert "Prefers short answers" in (mine / "MEMORY.md").read_text()

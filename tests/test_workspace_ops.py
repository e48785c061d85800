"""Workspace operations: remember, dedup, update, remove, supersede, confirm, decay,
consolidate, trim, daily notes; scopes; and a human's edit never overwritten."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.secrets import SecretError
from memory_chain.workspace import files, housekeeping, ops
from memory_chain.workspace.markdown import Document
from memory_chain.workspace.scopes import LOCAL_GITIGNORE, Scope, Workspace, find_project

DAY = date(2026, 11, 25)


@pytest.fixture
def scope(tmp_path: Path) -> Scope:
    return Scope("user", tmp_path / "ws")


def _text(scope: Scope) -> str:
    return scope.memory_md.read_text()


def _entries(path: Path) -> list[str]:
    return [e.text for e in Document.parse(path.read_bytes()).entries()]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != files.LOCK_NAME
    }


def test_remember_creates_file_section_and_metadata(scope: Scope) -> None:
    """The first remember creates MEMORY.md with a title, the section and a dated entry."""
    out = ops.remember(scope, "Use pnpm, not npm", section="Project Conventions", today=DAY)
    assert "added" == out.action
    assert (
        "# Memory\n\n## Project Conventions\n"
        "- Use pnpm, not npm <!-- mc: added=2026-11-25 confirmed=2026-11-25 src=manual "
        "from=person h=a9c953b2 -->\n"
    ) == _text(scope)
    assert 4 == out.line


def test_remember_exact_and_keyword_duplicates_write_nothing(scope: Scope) -> None:
    """The same text (any case or punctuation) or the same keywords is a duplicate."""
    ops.remember(scope, "Always run pnpm lint before committing", section="Workflow", today=DAY)
    before = scope.memory_md.read_bytes()
    assert "duplicate" == ops.remember(scope, "always run PNPM lint before committing.").action
    assert "duplicate" == ops.remember(scope, "Run pnpm lint before committing, always").action
    assert before == scope.memory_md.read_bytes()


def test_remember_reports_a_contradiction(scope: Scope) -> None:
    """A new entry that flips an old one's polarity is added, and the clash is named."""
    ops.remember(scope, "Use pnpm, not npm", section="Tool Usage", today=DAY)
    out = ops.remember(scope, "Use npm, not pnpm", section="Tool Usage", today=DAY)
    assert "added" == out.action
    assert [4] == out.detail["contradicts"]


@pytest.mark.parametrize(
    "bad",
    ["", "two\nlines", "x" * 1001, "hidden <!-- comment -->", "key AKIAQ7W2E4R6T8Y1U3I5 here"],
)
def test_remember_refuses_bad_text_and_writes_nothing(scope: Scope, bad: str) -> None:
    """Empty, multi-line, oversize, comment-carrying or secret text: an error, no file change."""
    ops.remember(scope, "keep me", today=DAY)
    before = _tree(scope.root)
    with pytest.raises(InputError):
        ops.remember(scope, bad, today=DAY)
    assert before == _tree(scope.root)


def test_secret_in_remember_is_a_secret_error(scope: Scope) -> None:
    """The secret gate names the kind and does not echo the value."""
    with pytest.raises(SecretError) as info:
        ops.remember(scope, "GitHub: ghp_x7Yb2Qm9Lk4Tz8Rw1Vn6Hs3Jd5Fg0Pc2Ae7B", today=DAY)
    assert "GitHub token" in info.value.message
    assert "ghp_" not in info.value.message
    assert not scope.memory_md.exists()


def test_human_edit_during_write_is_kept(scope: Scope, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor saving between the agent's read and its rename: the write is redone on top."""
    ops.remember(scope, "first", today=DAY)
    real_temp = files._temp
    calls = []

    def human_saves_meanwhile(path: Path, data: bytes, mode: int) -> Path:
        if not calls:
            # The human adds a line while memory-chain prepares its write.
            path.write_text(path.read_text() + "- typed by a human\n")
        calls.append(path)
        return real_temp(path, data, mode)

    monkeypatch.setattr(files, "_temp", human_saves_meanwhile)
    out = ops.remember(scope, "second", today=DAY)
    assert out.merged
    assert ["first", "typed by a human", "second"] == _entries(scope.memory_md)
    assert 2 == len(calls)


def test_stale_base_is_merged_for_ops_and_refused_for_whole_writes(scope: Scope) -> None:
    """An op based on an old read is applied to the current file; a whole-file write is refused."""
    ops.remember(scope, "first", today=DAY)
    seen = scope.memory_md.read_bytes()  # the agent reads
    scope.memory_md.write_bytes(seen + b"- human line\n")  # the human edits
    out = ops.remember(scope, "agent line", today=DAY, base=seen)
    assert out.merged
    assert ["first", "human line", "agent line"] == _entries(scope.memory_md)
    current = scope.memory_md.read_bytes()
    with pytest.raises(files.ConflictError):
        files.replace_whole(scope.memory_md, b"# overwritten\n", lock_root=scope.root, base=seen)
    assert current == scope.memory_md.read_bytes()


def test_update_changes_one_line(scope: Scope) -> None:
    """update rewrites the entry's line only and records the confirmation date."""
    ops.remember(scope, "Staging DB on 5432", section="Workflow", today=DAY)
    ops.remember(scope, "Deploys on Tuesdays", section="Workflow", today=DAY)
    before = _text(scope).splitlines()
    ops.update(scope, "Staging DB", "Staging DB on 5433", today=date(2026, 12, 1))
    after = _text(scope).splitlines()
    assert [3] == [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert "confirmed=2026-12-01" in after[3]


def test_update_keeps_the_old_words_and_refuses_a_stale_edit(scope: Scope) -> None:
    """Issue 28: an edit archives what it replaced (WORKSPACE.md 4.4, revision 8); an
    editor that read other words than the file holds now gets EditConflict and writes
    nothing."""
    ops.remember(scope, "Staging DB on 5432", section="Workflow", today=DAY)
    ops.update(scope, "4", "Staging DB on 5433", today=date(2026, 12, 1))
    archive = scope.archive("2026-12").read_text()
    assert "## 2026-12-01 updated from Workflow\n> Reason: edited\n" in archive
    assert "> Replaced by: Staging DB on 5433\n\n- Staging DB on 5432 <!-- mc:" in archive
    before = (scope.memory_md.read_bytes(), scope.archive("2026-12").read_bytes())
    with pytest.raises(ops.EditConflict) as caught:
        ops.update(scope, "4", "Staging DB on 6000", expect="Staging DB on 5432")
    assert caught.value.current == "Staging DB on 5433"
    assert before == (scope.memory_md.read_bytes(), scope.archive("2026-12").read_bytes())


def test_ambiguous_and_missing_matches_are_errors(scope: Scope) -> None:
    """A match naming two entries, or none, is an error listing the lines; nothing is written."""
    ops.remember(scope, "Use pnpm for installs", today=DAY)
    ops.remember(scope, "Use pnpm workspaces for the monorepo", today=DAY)
    before = scope.memory_md.read_bytes()
    with pytest.raises(InputError, match=r"2 entries match 'pnpm' \(lines 4, 5\)"):
        ops.remove(scope, "pnpm", reason="x", today=DAY)
    with pytest.raises(InputError, match="no entry matches"):
        ops.remove(scope, "yarn", reason="x", today=DAY)
    assert before == scope.memory_md.read_bytes()


def test_supersede_keeps_the_old_text_in_the_archive(scope: Scope) -> None:
    """The contradicted entry is replaced; its lines, the date and reason go to the archive."""
    ops.remember(scope, "Prefers spaces", section="User Preferences", children=["since 2024"])
    out = ops.supersede(scope, "spaces", "Prefers tabs", reason="user said so", today=DAY)
    assert "superseded" == out.action
    assert ["Prefers tabs"] == _entries(scope.memory_md)
    archive = (scope.root / "memory/archive/2026-11.md").read_text()
    assert "## 2026-11-25 superseded from User Preferences" in archive
    assert "> Reason: user said so" in archive
    assert "> Replaced by: Prefers tabs" in archive
    assert "- Prefers spaces <!-- mc:" in archive
    assert "  - since 2024" in archive


def test_remove_archives(scope: Scope) -> None:
    """remove takes the entry out of MEMORY.md and into the archive with the reason."""
    ops.remember(scope, "Old fact", today=DAY)
    ops.remove(scope, "Old fact", reason="no longer true", today=DAY)
    assert [] == _entries(scope.memory_md)
    assert "> Reason: no longer true" in (scope.root / "memory/archive/2026-11.md").read_text()


def test_decay_marks_and_confirm_clears(scope: Scope) -> None:
    """Entries unconfirmed for more than 90 days get [?]; confirm clears it; undated are left."""
    ops.remember(scope, "Old habit", today=date(2026, 1, 1))
    ops.remember(scope, "Recent habit", today=date(2026, 11, 1))
    scope.memory_md.write_text(_text(scope) + "- Written by hand, undated\n")
    report = housekeeping.decay(scope, today=DAY)
    assert ["Old habit"] == [c["text"] for c in report.changed]
    doc = Document.parse(scope.memory_md.read_bytes())
    assert [True, False, False] == [e.stale for e in doc.entries()]
    assert "- [?] Old habit" in _text(scope)
    ops.confirm(scope, "Old habit", today=DAY)
    assert "[?]" not in _text(scope)
    assert "confirmed=2026-11-25" in _text(scope).splitlines()[3]
    assert [] == housekeeping.decay(scope, today=DAY).changed


def test_consolidate_keeps_every_entry(scope: Scope) -> None:
    """Over the cap, sections move to linked topic files until under it; no entry is lost."""
    lines = ["# Memory", ""]
    wanted: list[str] = []
    for section, n in (("Corrections", 20), ("Tool Usage", 90), ("Workflow", 70), ("Notes", 40)):
        lines += ["", f"## {section}"]
        for i in range(n):
            text = f"{section} rule number {i}"
            wanted.append(text)
            lines.append(f"- {text}")
            if i % 10 == 0:
                lines.append(f"  - detail for {i}")
    lines += ["- Corrections rule number 3"]  # an exact duplicate, at the end of Notes
    scope.prepare()
    scope.memory_md.write_text("\n".join(lines) + "\n")
    report = housekeeping.consolidate(scope, cap=200, today=DAY)
    assert report.lines_after <= 200 < report.lines_before
    main = _entries(scope.memory_md)
    topics = [t for p in sorted(scope.memory_dir.glob("*.md")) for t in _entries(p)]
    for text in wanted:
        assert text in main or text in topics, text
    assert "- [Tool Usage](memory/tool-usage.md)" in _text(scope)
    assert (scope.memory_dir / "tool-usage.md").read_text().startswith("# Tool Usage\n")
    assert "  - detail for 10" in (scope.memory_dir / "tool-usage.md").read_text()


def test_consolidate_under_cap_does_nothing(scope: Scope) -> None:
    ops.remember(scope, "one", today=DAY)
    before = scope.memory_md.read_bytes()
    assert not housekeeping.consolidate(scope, today=DAY).written
    assert before == scope.memory_md.read_bytes()


def test_trim_archives_the_oldest(scope: Scope) -> None:
    """The rolling window keeps the newest N and archives the rest."""
    for i, month in enumerate((3, 1, 2), 1):
        ops.remember(scope, f"entry {i}", today=date(2026, month, 1))
    housekeeping.trim(scope, max_entries=2, today=DAY)
    assert ["entry 1", "entry 3"] == _entries(scope.memory_md)
    assert "- entry 2" in (scope.root / "memory/archive/2026-11.md").read_text()


def test_note_appends_to_the_daily_file(scope: Scope) -> None:
    """note writes `- HH:MM text` under ## Notes of memory/YYYY-MM-DD.md."""
    ops.note(scope, "Started the migration", when=datetime(2026, 11, 25, 9, 30))
    ops.note(scope, "Finished it", when=datetime(2026, 11, 25, 17, 5), source="auto")
    text = (scope.root / "memory/2026-11-25.md").read_text()
    assert text.startswith("# 2026-11-25\n\n## Notes\n- 09:30 Started the migration")
    line = "- 17:05 Finished it <!-- mc: src=auto from=capture h=07226104 -->"
    assert line in text


def test_scopes_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """User root: flag > env > config > default; project: flag > $CLAUDE_PROJECT_DIR > marker."""
    data = tmp_path / "data"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    monkeypatch.delenv("MEMORY_CHAIN_WORKSPACE", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    ws = Workspace.resolve(data, cwd=repo / "src" / "deep")
    assert data / "workspace" == ws.scopes["user"].root
    assert repo / ".memory-chain" == ws.scopes["project"].root
    assert repo / ".memory-chain" / "local" == ws.scopes["local"].root
    ws = Workspace.resolve(data, config={"workspace": str(tmp_path / "conf")}, cwd=tmp_path)
    assert tmp_path / "conf" == ws.scopes["user"].root
    assert "project" not in ws.scopes
    monkeypatch.setenv("MEMORY_CHAIN_WORKSPACE", str(tmp_path / "env"))
    assert (
        tmp_path / "env" == Workspace.resolve(data, config={"workspace": "x"}).scopes["user"].root
    )
    assert (
        tmp_path / "flag"
        == Workspace.resolve(data, workspace=tmp_path / "flag").scopes["user"].root
    )
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "claude"))
    assert repo == find_project(cwd=repo)  # a $CLAUDE_PROJECT_DIR that is no folder: ignored
    (tmp_path / "claude").mkdir()
    assert (tmp_path / "claude").resolve() == find_project(cwd=repo)
    assert repo.resolve() == find_project(repo, cwd=tmp_path)


def test_local_scope_is_gitignored(tmp_path: Path) -> None:
    """Writing to the local scope creates its own .gitignore that ignores everything."""
    ws = Workspace(tmp_path / "user", tmp_path / "repo")
    ops.remember(ws.scope("local"), "Postgres runs on 5433 here", today=DAY)
    assert LOCAL_GITIGNORE == (tmp_path / "repo/.memory-chain/local/.gitignore").read_text()
    with pytest.raises(InputError, match="no project"):
        Workspace(tmp_path / "user", None).scope("project")


def test_openclaw_workspace_works_as_is(tmp_path: Path) -> None:
    """An OpenClaw workspace (MEMORY.md, memory/YYYY-MM-DD.md, AGENTS.md, ...) is used in place."""
    root = tmp_path / ".openclaw" / "workspace"
    (root / "memory").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Agents\n")
    (root / "MEMORY.md").write_text("# MEMORY\n\nLong-term notes.\n\n- loose bullet\n")
    (root / "memory" / "2026-11-24.md").write_text("# 2026-11-24\n- did things\n")
    scope = Workspace(root, None).scope("user")
    before = (root / "MEMORY.md").read_bytes()
    ops.remember(scope, "Prefers short answers", section="User Preferences", today=DAY)
    after = (root / "MEMORY.md").read_bytes()
    assert after.startswith(before)
    assert ["daily", "memory"] == sorted(k for k, _ in scope.files())
    assert b"# Agents\n" == (root / "AGENTS.md").read_bytes()

"""Sandboxed memory tools: every escape refused with nothing written; patch all-or-nothing;
summaries; the JSON door; the Anthropic memory tool's commands and result texts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from memory_chain.workspace import tools
from memory_chain.workspace.files import LOCK_NAME
from memory_chain.workspace.scopes import Workspace

FAKE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = Workspace(tmp_path / "user", tmp_path / "repo")
    w.scope("user").prepare()
    return w


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name != LOCK_NAME
    }


def call(ws: Workspace, **req: object) -> dict[str, object]:
    return tools.call(ws, json.dumps(req))


ESCAPES = [
    "/etc/passwd.md",
    "../outside.md",
    "facts/../../outside.md",
    "facts/..",
    "~/x.md",
    "C:/x.md",
    "facts\\x.md",
    "%2e%2e/x.md",
    "a%2fb.md",
    ".hidden.md",
    ".git/config.md",
    LOCK_NAME,
    "facts/x\x00.md",
    "facts/x\nb.md",
    "x" * 256 + ".md",
    "/".join(["d"] * 12) + "/x.md",
    "facts/user.exe",
    "facts/user",
    "",
    "bad\udcff.md",  # a non-UTF-8 byte from the command line (surrogateescape)
]


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("tool", ["read", "write", "append", "delete"])
def test_escapes_are_refused_and_nothing_written(ws: Workspace, path: str, tool: str) -> None:
    """Absolute, .., hidden, encoded, NUL, control, long, deep, non-.md, non-UTF-8: refused."""
    root = ws.scope("user").root
    before = _tree(root.parent)
    req: dict[str, object] = {"tool": tool, "path": path, "content": "x", "entry": "x"}
    reply = tools.call(ws, req)
    assert reply["ok"] is False
    assert "\n" not in str(reply["error"])
    assert before == _tree(root.parent)


def test_symlink_out_is_refused(ws: Workspace, tmp_path: Path) -> None:
    """A symlink below the root, to a file or a folder outside, is never followed."""
    root = ws.scope("user").root
    secret = tmp_path / "secret.md"
    secret.write_text("outside\n")
    (root / "facts").mkdir()
    os.symlink(secret, root / "facts" / "link.md")
    os.symlink(tmp_path, root / "out")
    for req in (
        {"tool": "read", "path": "facts/link.md"},
        {"tool": "write", "path": "facts/link.md", "content": "pwned"},
        {"tool": "read", "path": "out/secret.md"},
        {"tool": "write", "path": "out/new.md", "content": "pwned"},
        {"command": "view", "path": "/memories/facts/link.md"},
    ):
        reply = tools.call(ws, req)
        assert reply.get("ok") is False or reply.get("is_error") is True, req
    assert "outside\n" == secret.read_text()
    assert not (tmp_path / "new.md").exists()
    listed = [f["path"] for f in tools.list_files(ws.scope("user"))]
    assert "facts/link.md" not in listed


def test_root_may_be_a_symlink(tmp_path: Path) -> None:
    """A workspace root that is itself a link (kept elsewhere) works."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws", None)
    assert call(ws, tool="write", path="facts/user.md", content="# User\n- Name: Ada\n")["ok"]
    assert (real / "facts" / "user.md").exists()


def test_project_scope_cannot_reach_local(ws: Workspace) -> None:
    """local/ under the project root belongs to the local scope."""
    reply = call(ws, tool="write", scope="project", path="local/MEMORY.md", content="x")
    assert reply["ok"] is False
    assert "another scope" in str(reply["error"])


def test_write_read_list_with_summaries(ws: Workspace) -> None:
    """write gives a fact file its summary line; list shows path, summary and size."""
    reply = call(
        ws, tool="write", path="facts/user.md", content="# User Facts\n\n- Name: Ada\n- Role: SRE\n"
    )
    assert reply["ok"], reply
    text = call(ws, tool="read", path="facts/user.md")["result"]
    assert "# User Facts\n\n> Summary: name, role\n\n- Name: Ada\n- Role: SRE\n" == text
    assert "- Role: SRE\n" == call(ws, tool="read", path="facts/user.md", start=6, end=6)["result"]
    listed = call(ws, tool="list")["result"]
    assert [{"path": "facts/user.md", "summary": "name, role", "size": len(text)}] == listed


def test_append_episode_regenerates_summary(ws: Workspace) -> None:
    """append adds a block and rebuilds the file's summary from its blocks' Summary lines."""
    block1 = "## Logger fix\n- Summary: pino stdout leak -> custom transport\n- Date: 2026-11-24\n"
    block2 = "## Short ids\n- Summary: UUID -> 16-char hex\n"
    assert call(ws, tool="append", path="episodes/2026-11.md", entry=block1)["ok"]
    assert call(ws, tool="append", path="episodes/2026-11.md", entry=block2)["ok"]
    text = call(ws, tool="read", path="episodes/2026-11.md")["result"]
    assert text.startswith(
        "# 2026-11 Episodes\n\n"
        "> Summary: pino stdout leak -> custom transport, UUID -> 16-char hex\n"
    )
    assert text.count("## ") == 2
    call(ws, tool="append", path="episodes/2026-11.md", entry="## Third\n", summary="three things")
    assert (
        "> Summary: three things\n" in call(ws, tool="read", path="episodes/2026-11.md")["result"]
    )


def test_patch_all_or_nothing(ws: Workspace) -> None:
    """Each old text must occur exactly once; an ambiguous or missing one writes nothing."""
    call(ws, tool="write", path="memory/notes.md", content="a b a\nc\n")
    before = _tree(ws.scope("user").root)
    missing = call(
        ws,
        tool="patch",
        path="memory/notes.md",
        patches=[{"old": "c", "new": "C"}, {"old": "zz", "new": "y"}],
    )
    assert missing["ok"] is False and "patch 2" in str(missing["error"])
    ambiguous = call(ws, tool="patch", path="memory/notes.md", patches=[{"old": "a", "new": "A"}])
    assert ambiguous["ok"] is False and "occurs 2 times" in str(ambiguous["error"])
    assert before == _tree(ws.scope("user").root)
    ok = call(
        ws,
        tool="patch",
        path="memory/notes.md",
        patches=[{"old": "a b", "new": "A B"}, {"old": "c", "new": "C"}],
    )
    assert ok["ok"] and 2 == ok["result"]["applied"]
    assert "A B a\nC\n" == call(ws, tool="read", path="memory/notes.md")["result"]


def test_secret_in_write_patch_append_is_refused(ws: Workspace) -> None:
    """The secret gate covers every tool that writes; files stay byte-identical."""
    call(ws, tool="write", path="memory/notes.md", content="plain\n")
    before = _tree(ws.scope("user").root)
    for req in (
        {"tool": "write", "path": "memory/k.md", "content": f"stripe {FAKE_KEY}\n"},
        {
            "tool": "patch",
            "path": "memory/notes.md",
            "patches": [{"old": "plain", "new": FAKE_KEY}],
        },
        {"tool": "append", "path": "episodes/2026-11.md", "entry": f"## x\n- key {FAKE_KEY}\n"},
        {"command": "create", "path": "/memories/k.md", "file_text": FAKE_KEY},
        {
            "command": "str_replace",
            "path": "/memories/memory/notes.md",
            "old_str": "plain",
            "new_str": FAKE_KEY,
        },
    ):
        reply = tools.call(ws, req)
        text = str(reply.get("error", reply.get("content")))
        assert reply.get("ok") is False or reply.get("is_error") is True, req
        assert "Stripe key" in text
        assert FAKE_KEY not in text
    assert before == _tree(ws.scope("user").root)


def test_oversize_write_refused(ws: Workspace) -> None:
    reply = call(ws, tool="write", path="memory/big.md", content="x" * (256 * 1024 + 1))
    assert reply["ok"] is False and "limit" in str(reply["error"])
    assert not (ws.scope("user").root / "memory" / "big.md").exists()


def test_stale_base_write_refused(ws: Workspace) -> None:
    """write with base (what the agent read) refuses when a human changed the file since."""
    call(ws, tool="write", path="memory/notes.md", content="v1\n")
    (ws.scope("user").root / "memory" / "notes.md").write_text("v1 edited by a human\n")
    reply = call(ws, tool="write", path="memory/notes.md", content="v2\n", base="v1\n")
    assert reply["ok"] is False and "changed since it was read" in str(reply["error"])
    assert "v1 edited by a human\n" == call(ws, tool="read", path="memory/notes.md")["result"]


def test_delete_and_rename(ws: Workspace) -> None:
    call(ws, tool="write", path="memory/a.md", content="a\n")
    call(ws, tool="write", path="memory/b.md", content="b\n")
    assert call(ws, tool="rename", old="memory/a.md", new="memory/b.md")["ok"] is False
    assert call(ws, tool="rename", old="memory/a.md", new="memory/topic/c.md")["ok"]
    deleted = call(ws, tool="delete", path="memory/b.md")
    assert deleted["ok"]
    kept = deleted["result"]["kept"]
    assert re.fullmatch(r"memory/archive/removed/\d{8}T\d{6}Z-memory__b\.md", kept)
    assert [kept, "memory/topic/c.md"] == [f["path"] for f in call(ws, tool="list")["result"]]
    assert "b\n" == (ws.scope("user").root / kept).read_text()  # kept, as the tool says


@pytest.mark.parametrize(
    "request_text",
    [
        "not json",
        "[1, 2]",
        '{"tool": "nope"}',
        '{"tool": "read"}',
        '{"tool": "read", "path": 5}',
        '{"tool": "patch", "path": "memory/x.md", "patches": "no"}',
        '{"tool": "list", "scope": "galaxy"}',
    ],
)
def test_json_door_never_raises(ws: Workspace, request_text: str) -> None:
    """Malformed calls come back as {"ok": false, "error": ...}, never as an exception."""
    reply = tools.call(ws, request_text)
    assert reply["ok"] is False
    assert reply["error"]


def test_anthropic_commands_and_texts(ws: Workspace) -> None:
    """view/create/str_replace/insert/rename/delete answer in the SDK's wording."""

    def cmd(**req: object) -> dict[str, object]:
        return tools.call(ws, req)

    empty = cmd(command="view", path="/memories")
    assert str(empty["content"]).startswith(
        "Here're the files and directories up to 2 levels deep in /memories"
    )
    text = "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n"
    assert {
        "content": "File created successfully at: /memories/notes.md",
        "is_error": False,
    } == cmd(command="create", path="/memories/notes.md", file_text=text)
    again = cmd(command="create", path="/memories/notes.md", file_text="again")
    assert {"content": "File /memories/notes.md already exists", "is_error": True} == again
    listing = str(cmd(command="view", path="/memories")["content"])
    assert f"{len(text)}B\t/memories/notes.md" in listing
    view = cmd(command="view", path="/memories/notes.md")
    assert (
        "Here's the content of /memories/notes.md with line numbers:\n"
        "     1\tMeeting notes:\n     2\t- Discussed project timeline\n"
        "     3\t- Next steps defined\n     4\t"
    ) == view["content"]
    ranged = str(cmd(command="view", path="/memories/notes.md", view_range=[2, -1])["content"])
    assert ranged.endswith(
        "     2\t- Discussed project timeline\n     3\t- Next steps defined\n     4\t"
    )
    edited = str(
        cmd(
            command="str_replace",
            path="/memories/notes.md",
            old_str="Next steps defined",
            new_str="Next steps: ship v2",
        )["content"]
    )
    assert edited.startswith(
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):"
    )
    assert "     3\t- Next steps: ship v2" in edited
    missing = cmd(
        command="str_replace", path="/memories/notes.md", old_str="not there", new_str="x"
    )
    assert missing == {
        "content": "No replacement was performed, old_str `not there` did not appear "
        "verbatim in /memories/notes.md.",
        "is_error": True,
    }
    dup = cmd(command="str_replace", path="/memories/notes.md", old_str="-", new_str="*")
    assert "Multiple occurrences of old_str `-` in lines: 2, 3. Please ensure it is unique" in str(
        dup["content"]
    )
    assert {"content": "The file /memories/notes.md has been edited.", "is_error": False} == cmd(
        command="insert", path="/memories/notes.md", insert_line=1, insert_text="- inserted line\n"
    )
    bad_line = cmd(command="insert", path="/memories/notes.md", insert_line=99, insert_text="x\n")
    assert bad_line["is_error"] and "Invalid `insert_line` parameter: 99" in str(
        bad_line["content"]
    )
    assert (
        "Successfully renamed /memories/notes.md to /memories/archive/notes.md"
        == cmd(
            command="rename", old_path="/memories/notes.md", new_path="/memories/archive/notes.md"
        )["content"]
    )
    assert cmd(command="view", path="/memories/missing.md") == {
        "content": "The path /memories/missing.md does not exist. Please provide a valid path.",
        "is_error": True,
    }
    assert "would escape /memories" in str(
        cmd(command="view", path="/memories/../etc/passwd")["content"]
    )
    assert (
        "Path must start with /memories, got: /etc/passwd"
        == cmd(command="view", path="/etc/passwd")["content"]
    )
    assert (
        "Successfully deleted /memories/archive/notes.md"
        == cmd(command="delete", path="/memories/archive/notes.md")["content"]
    )
    assert (
        "Cannot delete the /memories directory itself"
        == cmd(command="delete", path="/memories")["content"]
    )
    assert cmd(command="create", path="/memories/notes.exe", file_text="x")["is_error"]
    # Issue 22: a .txt note is a memory file too (the SDK's own examples use one).
    assert not cmd(command="create", path="/memories/notes.txt", file_text="x")["is_error"]

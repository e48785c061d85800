"""The Anthropic memory tool's commands (``memory_20250818``) over a workspace scope.

Claude sends ``{"command": "view" | "create" | "str_replace" | "insert" |
"delete" | "rename", ...}`` with paths under ``/memories``; the reply is
``{"content": "<text>", "is_error": bool}``, the text in the wording of the
official SDK's local filesystem tool (shared/reference/anthropic-memory-tool.md)
so that Claude reads what it expects. ``/memories`` maps onto the scope
root (``"scope"`` in the request picks one; user by default); every path
then goes through the same sandbox, secret gate and locked writes as the
other tools: ``.md`` and ``.txt`` files (only ``.md`` files are indexed and
injected). A refusal names the path as Claude sent it.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError, MemoryChainError
from memory_chain.chain.format.secrets import check as check_secret

from .files import edit, keep_removed, locked
from .markdown import decode
from .markdown import shown as readable
from .provenance import claim_new, injected
from .sandbox import check_content, in_scope, read_file, reserved
from .scopes import Scope, Workspace

__all__ = ["COMMANDS", "run_command"]

COMMANDS: Final = ("view", "create", "str_replace", "insert", "delete", "rename")
PREFIX: Final = "/memories"
MAX_LINES: Final = 999_999


class ToolError(Exception):
    """A command that failed: its text goes back to Claude with is_error."""


def _size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    for unit in ("K", "M", "G"):
        n_f = n / 1024
        if n_f < 1024 or unit == "G":
            text = f"{n_f:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
        n = int(n_f)
    return f"{n}B"


def _rel(path: Any, *, root_ok: bool = False) -> str:
    """The scope-relative path of a /memories path ("" for the root itself)."""
    if not isinstance(path, str):
        raise ToolError("path must be a string")
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        raise ToolError(f"Path must start with {PREFIX}, got: {path}")
    rel = path[len(PREFIX) :].strip("/")
    if rel in ("", ".") and not root_ok:
        raise ToolError(f"Cannot modify the {PREFIX} directory itself")
    if any(p == ".." for p in rel.split("/")):
        raise ToolError(f"Path {path} would escape {PREFIX} directory")
    return rel


def _file(scope: Scope, path: str) -> Path:
    return in_scope(scope, _rel(path), shown=path)


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


_LISTING: Final = (
    "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items "
    "and node_modules:"
)


def _view(scope: Scope, req: dict[str, Any]) -> str:
    path = req.get("path", PREFIX)
    rel = _rel(path, root_ok=True)
    root = Path(os.path.realpath(scope.root))
    target = root if not rel else in_scope(scope, rel, folder=True, shown=path)
    if not rel and not target.exists():  # an empty store is not an error (nothing created)
        return f"{_LISTING.format(path=path)}\n0B\t{path}"
    if not target.exists():
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
    if target.is_dir():
        rows = [f"{_size(target.stat().st_size)}\t{path}"]
        for child in _walk(target, scope, depth=2):
            shown = f"{path.rstrip('/')}/{child.relative_to(target).as_posix()}"
            if child.is_dir():
                shown += "/"
            rows.append(f"{_size(child.stat().st_size)}\t{shown}")
        return _LISTING.format(path=path) + "\n" + "\n".join(rows)
    in_scope(scope, rel, shown=path)  # a file: the sandbox's own refusal
    lines = readable(decode(read_file(target, path))).split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {path} exceeds maximum line limit of {MAX_LINES:,} lines.")
    first, last = 1, len(lines)
    rng = req.get("view_range")
    if rng is not None:
        if not isinstance(rng, list) or len(rng) != 2 or not all(isinstance(x, int) for x in rng):
            raise ToolError("view_range must be [start_line, end_line]")
        first = max(1, rng[0])
        last = len(lines) if rng[1] == -1 else min(rng[1], len(lines))
    return f"Here's the content of {path} with line numbers:\n" + _numbered(
        lines[first - 1 : last], first
    )


def _walk(folder: Path, scope: Scope, depth: int) -> list[Path]:
    out: list[Path] = []
    root = Path(os.path.realpath(scope.root))
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".") or child.name == "node_modules" or child.is_symlink():
            continue
        if folder == root and child.name in reserved(scope):
            continue
        out.append(child)
        if child.is_dir() and depth > 1:
            out.extend(_walk(child, scope, depth - 1))
    return out


def _text(req: dict[str, Any], name: str, default: str | None = None) -> str:
    value = req.get(name, default)
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string")
    return value


def _create(scope: Scope, req: dict[str, Any]) -> str:
    path = _text(req, "path")
    target = _file(scope, path)
    data = check_content(_text(req, "file_text"), "file_text")

    def change(current: bytes | None) -> bytes:
        if current is not None:
            raise ToolError(f"File {path} already exists")
        return _agents(None, data, path)

    scope.prepare()
    edit(target, change, lock_root=scope.root)
    return f"File created successfully at: {path}"


def _agents(old: bytes | None, new: bytes, path: str) -> bytes:
    """Entries the agent adds to MEMORY.md or a daily file are marked as its own
    (provenance); the tool's reply is the one Anthropic's reference gives, from the text
    before the mark."""
    if not injected(path):
        return new
    return claim_new(old, new, "agent", date.today().isoformat())


def _str_replace(scope: Scope, req: dict[str, Any]) -> str:
    path = _text(req, "path")
    target = _file(scope, path)
    old = _text(req, "old_str")
    new = _text(req, "new_str", "")
    check_secret(new, what="new_str")
    box: list[str] = []

    def change(current: bytes | None) -> bytes:
        if current is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        text = decode(current)
        count = text.count(old) if old else 0
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
            )
        if count > 1:
            lines = [str(n) for n, line in enumerate(text.split("\n"), 1) if old in line]
            raise ToolError(
                "No replacement was performed. Multiple occurrences of old_str "
                f"`{old}` in lines: {', '.join(lines)}. Please ensure it is unique"
            )
        at = text.index(old)
        text = text.replace(old, new, 1)
        line = text.count("\n", 0, at)
        lines = text.split("\n")
        lo, hi = max(0, line - 4), min(len(lines), line + new.count("\n") + 5)
        box[:] = [_numbered(lines[lo:hi], lo + 1)]
        return _agents(current, check_content(text, path), path)

    if target.is_dir():
        raise ToolError(f"The path {path} is not a file.")
    edit(target, change, lock_root=scope.root)
    return (
        "The memory file has been edited. Here is the snippet showing the change "
        f"(with line numbers):\n{box[0]}"
    )


def _insert(scope: Scope, req: dict[str, Any]) -> str:
    path = _text(req, "path")
    target = _file(scope, path)
    at = req.get("insert_line")
    new = _text(req, "insert_text")
    check_secret(new, what="insert_text")
    if not isinstance(at, int) or isinstance(at, bool):
        raise ToolError("insert_line must be an integer")

    def change(current: bytes | None) -> bytes:
        if current is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        lines = decode(current).split("\n")
        count = len(lines) - 1 if lines[-1] == "" else len(lines)  # a final LF ends a line
        if not 0 <= at <= count:
            raise ToolError(
                f"Invalid `insert_line` parameter: {at}. It should be within the range "
                f"[0, {count}]."
            )
        lines[at:at] = new.rstrip("\n").split("\n")
        return _agents(current, check_content("\n".join(lines), path), path)

    if target.is_dir():
        raise ToolError(f"The path {path} is not a file.")
    edit(target, change, lock_root=scope.root)
    return f"The file {path} has been edited."


def _delete(scope: Scope, req: dict[str, Any]) -> str:
    path = _text(req, "path")
    rel = _rel(path, root_ok=True)
    if not rel:
        raise ToolError(f"Cannot delete the {PREFIX} directory itself")
    target = in_scope(scope, rel, folder=True, shown=path)
    missing = ToolError(f"The path {path} does not exist")
    if not target.exists():  # before the lock, which would create the scope's folder
        raise missing
    with locked(scope.root):
        if not target.exists():
            raise missing
        if target.is_dir():
            for child in target.rglob("*"):
                if child.is_symlink() or child.name.startswith("."):
                    raise ToolError(f"{path} holds links or hidden files; delete them one by one")
        else:
            in_scope(scope, rel, shown=path)  # a file: .md or .txt only
        _not_memory_md(scope, target, path)
        if _is_archive(scope, target):
            raise ToolError(f"{path} is the archive of removed files; it is kept")
        keep_removed(scope.root, rel, source=target)  # a person can bring it back
    return f"Successfully deleted {path}"


def _not_memory_md(scope: Scope, target: Path, path: str) -> None:
    """MEMORY.md changes entry by entry: a tool never deletes or moves it (tools.py)."""
    if target == Path(os.path.realpath(scope.root)) / "MEMORY.md":
        raise ToolError(
            f"{path} is not deleted or renamed by a tool: it holds what a person and "
            "curation wrote; edit it with str_replace or insert"
        )


def _is_archive(scope: Scope, target: Path) -> bool:
    archive = Path(os.path.realpath(scope.root)) / "memory" / "archive"
    return target == archive or archive in target.parents or target == archive.parent


def _rename(scope: Scope, req: dict[str, Any]) -> str:
    old_path, new_path = _text(req, "old_path"), _text(req, "new_path")
    src = in_scope(scope, _rel(old_path), folder=True, shown=old_path)
    dst = in_scope(scope, _rel(new_path), folder=src.is_dir(), shown=new_path)
    if src.is_file():
        in_scope(scope, _rel(old_path), shown=old_path)
    missing = ToolError(f"The path {old_path} does not exist")
    if not src.exists():  # before the lock, which would create the scope's folder
        raise missing
    _not_memory_md(scope, src, old_path)
    with locked(scope.root):
        if not src.exists():
            raise missing
        if dst.exists():
            raise ToolError(f"The destination {new_path} already exists")
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
    return f"Successfully renamed {old_path} to {new_path}"


_RUN: Final = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}


def run_command(workspace: Workspace, req: dict[str, Any]) -> dict[str, Any]:
    """One memory-tool command; the reply is {"content": text, "is_error": bool}."""
    command = req.get("command")
    try:
        if command not in _RUN:
            raise ToolError(f"Unknown command {command!r}; one of: {', '.join(COMMANDS)}")
        scope_name = req.get("scope", "user")
        if not isinstance(scope_name, str):
            raise InputError("scope must be a string")
        return {"content": _RUN[command](workspace.scope(scope_name), req), "is_error": False}
    except ToolError as exc:
        return {"content": str(exc), "is_error": True}
    except MemoryChainError as exc:
        return {"content": exc.message, "is_error": True}
    except OSError as exc:
        return {"content": f"{exc.strerror or exc}", "is_error": True}

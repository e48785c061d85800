"""Memory tools (seed 003 section 6): list, read, write, patch, append, delete, rename.

Paths are relative to one scope root and pass the sandbox (sandbox.py);
every text written passes the secret gate; every write goes through
files.edit under the scope's lock. ``call(workspace, request)`` takes one
tool call as a JSON object (or its text) and returns a JSON-able dict: it
never raises for bad input, so an MCP server or a hook can hand it anything.

Request: ``{"tool": "<name>", "scope": "user", ...arguments}``, or one of
the Anthropic memory tool's commands (``{"command": "view", "path":
"/memories/..."}``, see memorytool.py). Reply: ``{"ok": true, "result":
...}`` or ``{"ok": false, "error": "<one line>", "hint": ...}``.

A fact or episode file keeps a ``> Summary:`` line under its title: write
and append regenerate it (unless given), from the ``- Summary:`` lines of
its ``##`` blocks, else their titles, else its bullets.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, Final

import orjson

from memory_chain.chain.format.errors import InputError, MemoryChainError
from memory_chain.chain.format.secrets import check as check_secret

from .files import edit, keep_removed, locked, replace_whole
from .markdown import decode, encode, shown
from .provenance import claim_new, injected
from .sandbox import check_content, in_scope, read_file, relative, reserved
from .scopes import Scope, Workspace
from .summary import make_summary, summary_of, with_summary

__all__ = [
    "TOOLS",
    "append",
    "call",
    "delete",
    "list_files",
    "patch",
    "read",
    "rename",
    "write",
]

TOOLS: Final = ("list", "read", "write", "patch", "append", "delete", "rename")


def _summarised(rel: str) -> bool:
    return rel.startswith(("facts/", "episodes/"))


# -- the tools ----------------------------------------------------------------


def list_files(scope: Scope) -> list[dict[str, Any]]:
    """Every memory file of the scope: path, summary line (or a made one), size in bytes."""
    out: list[dict[str, Any]] = []
    root = Path(os.path.realpath(scope.root))
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and not (rel_dir == "." and d in reserved(scope))
            and not (here / d).is_symlink()
        )
        for name in sorted(filenames):
            path = here / name
            if name.startswith(".") or not name.endswith(".md") or path.is_symlink():
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            text = decode(data[:8192])
            rel = relative(root, path)
            out.append(
                {"path": rel, "summary": summary_of(text) or make_summary(text), "size": len(data)}
            )
    return sorted(out, key=lambda f: (f["path"] != "MEMORY.md", f["path"]))


def read(scope: Scope, rel: str, start: int | None = None, end: int | None = None) -> str:
    """The file's text, or lines ``start``..``end`` (1-based, inclusive; end -1 = to the end)."""
    path = in_scope(scope, rel)
    text = shown(decode(read_file(path, rel)))  # a byte that is not UTF-8 reads as U+FFFD
    if start is None and end is None:
        return text
    lines = text.splitlines(keepends=True)
    first = 1 if start is None else start
    last = len(lines) if end is None or end == -1 else end
    if first < 1 or last < first - 1 or first > len(lines) + 1:
        raise InputError(f"line range {first}..{last} is outside {rel} (1..{len(lines)})")
    return "".join(lines[first - 1 : last])


def write(
    scope: Scope, rel: str, content: str, *, base: str | None = None, summary: str | None = None
) -> dict[str, Any]:
    """Create or replace a file; a fact or episode file gets its summary line.

    ``base``: the text the caller read; if the file holds something else now,
    nothing is written (ConflictError).
    """
    path = in_scope(scope, rel)
    if _summarised(rel):
        content = with_summary(content, summary)
    data = check_content(content, f"the content for {rel}")
    _not_memory_md(scope, path, rel, "replaced whole")
    scope.prepare()
    kept = None
    with locked(scope.root):
        old = path.read_bytes() if path.is_file() else None
        if injected(rel):
            data = claim_new(old, data, "agent", date.today().isoformat())
        if old is not None and old != data:  # what is replaced stays in the archive
            kept = keep_removed(scope.root, rel, data=old)
    # Without a base, the bytes just kept are the base: an edit landing in between is a
    # conflict, never overwritten unkept.
    expect: bytes | str = encode(base) if base is not None else (old if old is not None else "")
    done = replace_whole(path, data, lock_root=scope.root, base=expect, shown=rel)
    out = {"path": rel, "size": len(data), "created": done.before is None, "written": done.written}
    if kept is not None:
        out["kept"] = kept
    return out


def _agents(old: bytes | None, new: bytes, rel: str) -> bytes:
    """What a tool call adds to a markdown file is marked as the agent's (provenance)."""
    return claim_new(old, new, "agent", date.today().isoformat()) if injected(rel) else new


def _not_memory_md(scope: Scope, path: Path, rel: str, how: str) -> None:
    """MEMORY.md changes entry by entry (remember, update, supersede, remove, patch), never
    whole: a tool that replaced, deleted or renamed it would drop what a person wrote."""
    if path == Path(os.path.realpath(scope.root)) / "MEMORY.md" and path.exists():
        raise InputError(
            f"{rel} is not {how} by a tool: it holds what a person and curation wrote",
            hint="change its entries with remember, update, supersede or remove, or patch "
            "one text; nothing was written",
        )


def patch(scope: Scope, rel: str, patches: Sequence[dict[str, str]]) -> dict[str, Any]:
    """Replace each ``old`` text by its ``new`` one; each old must occur exactly once.

    Patches apply in order to the file as it is now; if any old text is
    missing or ambiguous, nothing is written.
    """
    path = in_scope(scope, rel)
    if not patches:
        raise InputError("no patches given")
    pairs: list[tuple[str, str]] = []
    for i, p in enumerate(patches, 1):
        old, new = p.get("old"), p.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise InputError(f"patch {i}: want non-empty text 'old' and text 'new'")
        check_secret(new, what=f"patch {i}")
        pairs.append((old, new))

    def change(current: bytes | None) -> bytes:
        if current is None:
            raise InputError(f"{rel} does not exist")
        text = decode(current)
        for i, (old, new) in enumerate(pairs, 1):
            count = text.count(old)
            if count != 1:
                why = "does not occur" if count == 0 else f"occurs {count} times"
                raise InputError(
                    f"patch {i}: the old text {why} in {rel}; nothing was written",
                    hint="give an old text that occurs exactly once (add context around it)",
                )
            text = text.replace(old, new, 1)
        if _summarised(rel):
            text = with_summary(text, summary_of(text))
        return _agents(current, check_content(text, f"the patched {rel}"), rel)

    read_file(path, rel)  # a missing file, or a folder, is one clear error
    done = edit(path, change, lock_root=scope.root)
    return {"path": rel, "applied": len(pairs), "written": done.written}


def append(scope: Scope, rel: str, entry: str, *, summary: str | None = None) -> dict[str, Any]:
    """Append a markdown block (an episode) and regenerate the file's summary line."""
    path = in_scope(scope, rel)
    if not entry.strip():
        raise InputError("the entry is empty")
    check_secret(entry, what="the entry")
    block = entry.strip("\n") + "\n"

    def change(current: bytes | None) -> bytes:
        if current is None:
            title = Path(rel).stem
            kind = "Episodes" if rel.startswith("episodes/") else "Notes"
            text = f"# {title} {kind}\n\n"
        else:
            text = decode(current)
            if text and not text.endswith("\n"):
                text += "\n"
            if text and not text.endswith("\n\n"):
                text += "\n"
        text += block
        text = with_summary(text, summary)
        return _agents(current, check_content(text, f"{rel} with the entry"), rel)

    scope.prepare()
    done = edit(path, change, lock_root=scope.root)
    return {"path": rel, "size": len(done.after or b""), "created": done.before is None}


def delete(scope: Scope, rel: str) -> dict[str, Any]:
    """Delete one file (folders: only when empty); the file is kept in the archive.

    It moves to memory/archive/removed/<stamp>-<path> (a person can bring it
    back); MEMORY.md is never deleted by a tool.
    """
    path = in_scope(scope, rel, folder=True)
    if not path.exists():  # before the lock, which would create the scope's folder
        raise InputError(f"{rel} does not exist")
    _not_memory_md(scope, path, rel, "deleted")
    kept = None
    with locked(scope.root):
        try:
            if path.is_dir():
                path.rmdir()
            else:
                in_scope(scope, rel)  # a file: .md or .txt only
                kept = keep_removed(scope.root, rel, source=path)
        except FileNotFoundError:
            raise InputError(f"{rel} does not exist") from None
        except OSError as exc:
            raise InputError(f"cannot delete {rel}: {exc.strerror}") from None
    return {"path": rel, "deleted": True, "kept": kept}


def rename(scope: Scope, old: str, new: str) -> dict[str, Any]:
    """Rename a file; the new name must not exist."""
    src = in_scope(scope, old)
    dst = in_scope(scope, new)
    if not src.is_file():  # before the lock, which would create the scope's folder
        raise InputError(f"{old} does not exist")
    _not_memory_md(scope, src, old, "renamed")
    with locked(scope.root):
        if not src.is_file():
            raise InputError(f"{old} does not exist")
        if dst.exists():
            raise InputError(f"{new} already exists; nothing was renamed")
        dst.parent.mkdir(parents=True, exist_ok=True)
        # link + unlink: never replaces a file that appeared meanwhile.
        try:
            os.link(src, dst)
        except FileExistsError:
            raise InputError(f"{new} already exists; nothing was renamed") from None
        src.unlink()
    return {"old": old, "new": new}


# -- one call as JSON -----------------------------------------------------------


def _arg(args: dict[str, Any], name: str, kind: type, default: Any = ...) -> Any:
    value = args.get(name, default)
    if value is ...:
        raise InputError(f"missing argument {name!r}")
    if value is not None and not isinstance(value, kind):
        raise InputError(f"argument {name!r} must be {kind.__name__}")
    return value


def run_tool(workspace: Workspace, request: dict[str, Any]) -> Any:
    """Run one of TOOLS; raises MemoryChainError on bad input."""
    tool = request.get("tool")
    if tool not in TOOLS:
        raise InputError(f"unknown tool {tool!r}", hint=f"one of: {', '.join(TOOLS)}")
    scope = workspace.scope(_arg(request, "scope", str, "user"))
    if tool == "list":
        return list_files(scope)
    if tool == "read":
        return read(
            scope,
            _arg(request, "path", str),
            _arg(request, "start", int, None),
            _arg(request, "end", int, None),
        )
    if tool == "write":
        return write(
            scope,
            _arg(request, "path", str),
            _arg(request, "content", str),
            base=_arg(request, "base", str, None),
            summary=_arg(request, "summary", str, None),
        )
    if tool == "patch":
        patches = _arg(request, "patches", list)
        if not all(isinstance(p, dict) for p in patches):
            raise InputError('patches must be a list of {"old": ..., "new": ...} objects')
        return patch(scope, _arg(request, "path", str), patches)
    if tool == "append":
        return append(
            scope,
            _arg(request, "path", str),
            _arg(request, "entry", str),
            summary=_arg(request, "summary", str, None),
        )
    if tool == "delete":
        return delete(scope, _arg(request, "path", str))
    return rename(scope, _arg(request, "old", str), _arg(request, "new", str))


def call(workspace: Workspace, request: dict[str, Any] | str | bytes) -> dict[str, Any]:
    """One tool call in, one JSON-able reply out; never raises for bad input."""
    try:
        if isinstance(request, (str, bytes)):
            try:
                request = orjson.loads(request)
            except orjson.JSONDecodeError:
                raise InputError("the tool call is not valid JSON") from None
        if not isinstance(request, dict):
            raise InputError("a tool call is a JSON object")
        if "command" in request:
            from .memorytool import run_command

            return run_command(workspace, request)
        return {"ok": True, "result": run_tool(workspace, request)}
    except MemoryChainError as exc:
        return {"ok": False, "error": exc.message, "hint": exc.hint}
    except OSError as exc:
        return {"ok": False, "error": f"{exc.strerror or exc}", "hint": None}

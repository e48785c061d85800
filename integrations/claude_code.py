"""Claude Code's settings: our hook entries and MCP server registration, merged in place.

Hooks live in settings.json at three scopes (shared/reference/claude-code-hooks.md
section 1): user ``~/.claude/settings.json``, project ``.claude/settings.json``
and local ``.claude/settings.local.json``; each maps an event to matcher
groups holding handlers. MCP servers live in ``.mcp.json`` (project),
``~/.claude.json`` top-level ``mcpServers`` (user) or its
``projects.<path>.mcpServers`` (local). ``$CLAUDE_CONFIG_DIR`` moves
``~/.claude`` (and ``~/.claude.json`` into it).

Install merges: every key, event, group and handler that is not ours is
kept as it was, in its place; ours is recognised by its command (the
``memory-chain`` program followed by ``hook EVENT``) and updated in place,
so installing twice changes nothing. Before a file is changed its previous
bytes are kept in ``<file>.memory-chain.bak``; the new bytes replace it
atomically with its mode. A file that is not a JSON object is refused
(and left byte-identical).
"""

from __future__ import annotations

import copy
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError

__all__ = [
    "HOOKS",
    "SCOPES",
    "Change",
    "hooks_status",
    "install_hooks",
    "install_mcp",
    "mcp_status",
    "program",
    "uninstall_hooks",
    "uninstall_mcp",
    "with_hooks",
    "without_hooks",
]

SCOPES: Final = ("user", "project", "local")
SERVER_NAME: Final = "memory-chain"
BACKUP_SUFFIX: Final = ".memory-chain.bak"


@dataclass(frozen=True, slots=True)
class HookSpec:
    event: str
    matcher: str | None
    timeout: int  # seconds, above the handler's own limit (hooks.TIME_LIMIT)


#: What we install. SessionEnd's timeout also raises Claude Code's shared
#: SessionEnd budget (1.5 s by default) so that the capture can finish.
HOOKS: Final = (
    HookSpec("SessionStart", "startup|resume|clear|compact", 30),
    HookSpec("UserPromptSubmit", None, 10),
    HookSpec("PreCompact", None, 60),
    HookSpec("SessionEnd", None, 60),
)


@dataclass(slots=True)
class Change:
    """What an install or uninstall did to one file."""

    path: str
    changed: bool
    backup: str | None = None
    what: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def claude_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def claude_json() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def _project_of(scope: str, project: Path | None) -> Path:
    """The project a project or local scope needs (a one-line error without one)."""
    if scope not in SCOPES:
        raise InputError(f"unknown scope {scope!r}", hint=f"choose one of: {', '.join(SCOPES)}")
    if project is None:
        raise InputError(
            f"no project here for the {scope} scope",
            hint="run inside the project (a folder with .git), or pass --project DIR",
        )
    return project


def settings_path(scope: str, project: Path | None) -> Path:
    if scope == "user":
        return claude_dir() / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return _project_of(scope, project) / ".claude" / name


def program(data_dir: Path | None = None) -> list[str]:
    """The argv that runs this memory-chain (absolute, so the agent's PATH does not matter)."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "memory-chain" and argv0.is_file():
        base = [str(argv0.absolute())]
    else:
        found = shutil.which("memory-chain")
        base = [found] if found else [sys.executable, "-m", "memory_chain.cli"]
    if data_dir is not None:
        base += ["--dir", str(data_dir.expanduser().absolute())]
    return base


#: What a file committed for the whole team runs: each person's own memory-chain (PATH) and
#: own data directory ($MEMORY_CHAIN_DIR, else ~/.memory-chain); no personal absolute path.
SHARED_PROGRAM: Final = ("memory-chain",)


def program_for(scope: str, data_dir: Path | None) -> list[str]:
    """program() for a personal scope (user, local); SHARED_PROGRAM for the project scope."""
    return list(SHARED_PROGRAM) if scope == "project" else program(data_dir)


def _is_ours(handler: Any, event: str) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    ours = any(Path(w).name == "memory-chain" or w == "memory_chain.cli" for w in words[:3])
    return ours and any(words[i] == "hook" and words[i + 1] == event for i in range(len(words) - 1))


def _load(path: Path) -> tuple[dict[str, Any], bytes | None]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        import json  # the settings file keeps its own style (json.dumps); not on the hooks' path

        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path} is not valid JSON ({exc}); it was left as it is",
            hint="fix or move the file, then run this again",
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object; it was left as it is")
    return data, raw


def _style(before: bytes | None) -> dict[str, Any]:
    """json.dumps arguments that write a file as ``before`` was written (2 spaces if new).

    Its indent (spaces or a tab, or none), its separators, and whether it
    wrote non-ASCII characters as \\u escapes: a user's file changes in the
    keys installed and nowhere else (it was re-indented, its escapes rewritten).
    """
    if not before:
        return {"indent": 2, "ensure_ascii": False}
    m = re.search(rb"\n([ \t]+)\S", before)
    indent: int | str | None = None
    if m is not None:
        lead = m.group(1)
        indent = "\t" if lead.startswith(b"\t") else len(lead)
    colon = b": " if re.search(rb'":\s', before) or not re.search(rb'":\S', before) else b":"
    comma = b"," if indent is not None else (b", " if b", " in before else b",")
    escaped = before.isascii() and re.search(rb"\\u[0-9a-fA-F]{4}", before) is not None
    return {
        "indent": indent,
        "separators": (comma.decode(), colon.decode()),
        "ensure_ascii": escaped,
    }


def _save(path: Path, data: dict[str, Any], before: bytes | None) -> str | None:
    """Write ``data`` atomically in the file's own JSON style, keeping ``before`` as the backup.

    A settings file that is a symbolic link (dotfiles kept in a repository)
    stays one: its target is written.
    """
    from memory_chain.chain.format.fsutil import replace_file

    backup = None
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    # Keep the file's mode (~/.claude.json is private); a new file is 0600 or 0644.
    mode = 0o600 if path.name == ".claude.json" else 0o644
    if before is not None:
        mode = path.stat().st_mode & 0o777
        backup_path = path.with_name(path.name + BACKUP_SUFFIX)
        replace_file(backup_path, before, mode=mode)
        backup = str(backup_path)
    ending = "" if before is not None and before and not before.endswith(b"\n") else "\n"
    import json

    text = json.dumps(data, **_style(before)) + ending
    replace_file(path, text.encode("utf-8"), mode=mode)
    return backup


def _rewrite(
    path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], what: list[str]
) -> Change:
    """Load ``path``, apply ``change`` (to a copy), and save when it changed anything."""
    data, before = _load(path)
    new = change(data)
    done = Change(str(path), new != data, what=what)
    if done.changed:
        done.backup = _save(path, new, before)
    return done


def _in_force(project: Path | None) -> list[str]:
    """The scopes there are: project and local only with a project."""
    return [s for s in SCOPES if s == "user" or project is not None]


def _hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    table = data.get("hooks", {})
    if not isinstance(table, dict):
        raise InputError(f'"hooks" in {path} is not a JSON object; it was left as it is')
    return table


def with_hooks(
    data: dict[str, Any], prog: list[str], path: Path = Path("settings")
) -> dict[str, Any]:
    """``data`` with our hook handlers in place (a new object; ``data`` is not changed)."""
    out = copy.deepcopy(data)
    table = _hooks_table(out, path)
    for spec in HOOKS:
        handler = {
            "type": "command",
            "command": shlex.join([*prog, "hook", spec.event]),
            "timeout": spec.timeout,
        }
        groups = table.get(spec.event, [])
        if not isinstance(groups, list):
            raise InputError(f'"hooks.{spec.event}" in {path} is not a list; it was left as it is')
        placed = False
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            for i, h in enumerate(handlers):
                if _is_ours(h, spec.event):
                    if not placed:
                        handlers[i] = {**h, **handler}
                        placed = True
                    else:
                        handlers[i] = None  # a second copy of ours
            group["hooks"] = [h for h in handlers if h is not None]
        groups = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not placed:
            group_new: dict[str, Any] = {}
            if spec.matcher is not None:
                group_new["matcher"] = spec.matcher
            group_new["hooks"] = [handler]
            groups.append(group_new)
        table[spec.event] = groups
    out["hooks"] = table
    return out


def without_hooks(data: dict[str, Any], path: Path = Path("settings")) -> dict[str, Any]:
    """``data`` without our hook handlers (groups and events left empty by it go too)."""
    out = copy.deepcopy(data)
    if "hooks" not in out:
        return out
    table = _hooks_table(out, path)
    for spec in HOOKS:
        groups = table.get(spec.event)
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(_is_ours(h, spec.event) for h in handlers):
                rest = [h for h in handlers if not _is_ours(h, spec.event)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if kept:
            table[spec.event] = kept
        else:
            del table[spec.event]
    if not table:
        del out["hooks"]
    return out


def _installed_events(data: dict[str, Any]) -> dict[str, str]:
    """Our events in ``data`` and the command each runs."""
    found: dict[str, str] = {}
    table = data.get("hooks")
    if not isinstance(table, dict):
        return found
    for spec in HOOKS:
        for group in table.get(spec.event) or []:
            for h in (group.get("hooks") if isinstance(group, dict) else None) or []:
                if _is_ours(h, spec.event):
                    found[spec.event] = h["command"]
    return found


def install_hooks(scope: str, project: Path | None, data_dir: Path | None) -> Change:
    path = settings_path(scope, project)
    prog = program_for(scope, data_dir)
    return _rewrite(path, lambda d: with_hooks(d, prog, path), [s.event for s in HOOKS])


def uninstall_hooks(scope: str, project: Path | None) -> Change:
    path = settings_path(scope, project)
    return _rewrite(path, lambda d: without_hooks(d, path), [s.event for s in HOOKS])


def hooks_status(project: Path | None) -> list[dict[str, Any]]:
    """Per scope: the settings file, whether it parses, our events and their commands."""
    rows = []
    for scope in _in_force(project):
        path = settings_path(scope, project)
        row: dict[str, Any] = {"scope": scope, "path": str(path), "exists": path.is_file()}
        try:
            data, _ = _load(path)
        except InputError as exc:
            row.update(error=exc.message, events={})
        else:
            row["events"] = _installed_events(data)
        row["missing"] = [s.event for s in HOOKS if s.event not in row["events"]]
        rows.append(row)
    return rows


# -- MCP server registration -----------------------------------------------------


def _mcp_place(scope: str, project: Path | None) -> tuple[Path, list[str]]:
    """The file and the key path of the mcpServers table for ``scope``."""
    if scope == "user":
        return claude_json(), ["mcpServers"]
    project = _project_of(scope, project)
    if scope == "project":
        return project / ".mcp.json", ["mcpServers"]
    return claude_json(), ["projects", str(project.absolute()), "mcpServers"]


def _table_at(data: dict[str, Any], keys: list[str], path: Path, create: bool) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            raise InputError(f"{'.'.join(keys)} in {path} is not a JSON object; left as it is")
        if key not in node:
            if not create:
                return None
            node[key] = {}
        node = node[key]
    if not isinstance(node, dict):
        raise InputError(f"{'.'.join(keys)} in {path} is not a JSON object; left as it is")
    return node


def server_entry(data_dir: Path | None, scope: str = "user") -> dict[str, Any]:
    prog = program_for(scope, data_dir)
    return {"type": "stdio", "command": prog[0], "args": [*prog[1:], "mcp"]}


def install_mcp(scope: str, project: Path | None, data_dir: Path | None) -> Change:
    path, keys = _mcp_place(scope, project)
    entry = server_entry(data_dir, scope)

    def change(data: dict[str, Any]) -> dict[str, Any]:
        new = copy.deepcopy(data)
        table = _table_at(new, keys, path, create=True)
        table[SERVER_NAME] = {**(table.get(SERVER_NAME) or {}), **entry}
        return new

    return _rewrite(path, change, [SERVER_NAME])


def uninstall_mcp(scope: str, project: Path | None) -> Change:
    path, keys = _mcp_place(scope, project)

    def change(data: dict[str, Any]) -> dict[str, Any]:
        new = copy.deepcopy(data)
        table = _table_at(new, keys, path, create=False)
        if table is not None:
            table.pop(SERVER_NAME, None)
        return new

    return _rewrite(path, change, [SERVER_NAME])


def mcp_status(project: Path | None) -> list[dict[str, Any]]:
    rows = []
    for scope in _in_force(project):
        path, keys = _mcp_place(scope, project)
        row: dict[str, Any] = {"scope": scope, "path": str(path), "server": None}
        try:
            data, _ = _load(path)
            table = _table_at(data, keys, path, create=False)
        except InputError as exc:
            row["error"] = exc.message
        else:
            if table is not None and isinstance(table.get(SERVER_NAME), dict):
                row["server"] = table[SERVER_NAME]
        rows.append(row)
    return rows

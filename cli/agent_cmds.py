"""hooks, mcp, tool: connecting agents (memory_chain.integrations)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import CONTEXT_SETTINGS, data_dir, dir_option, emit_json, json_option, read_stdin

AGENTS = ("claude-code", "openclaw")


def _project(project: str | None) -> Path | None:
    from memory_chain.workspace.scopes import find_project

    return find_project(project)


def _dir_for_command() -> Path | None:
    """The data directory to name in installed commands (None: the default one)."""
    ddir = Path(data_dir()).expanduser().absolute()
    return None if ddir == Path.home() / ".memory-chain" else ddir


def _warn_no_chain() -> None:
    from memory_chain.chain.format.config import Layout

    if not Layout(data_dir()).chain.exists():
        click.echo(
            f"warning: no chain in {data_dir()} yet; run `memory-chain init` so that "
            "sessions start with memory",
            err=True,
        )
    pin_here()


def pin_here() -> None:
    """After an install: doors started without $MEMORY_CHAIN_WORKSPACE read the same one."""
    from memory_chain.integrations.files import pin_workspace

    pinned = pin_workspace(Path(data_dir()))
    if pinned is not None:
        click.echo(
            f"pinned the workspace {pinned} in config.json: timers, hooks and the MCP server "
            "read it even without $MEMORY_CHAIN_WORKSPACE",
            err=True,
        )


def _print_change(change: Any, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(change.as_dict())
        return
    if change.changed:
        click.echo(f"{verb} {', '.join(change.what)} in {change.path}")
        if change.backup:
            click.echo(f"previous version kept in {change.backup}")
    else:
        click.echo(f"{change.path}: nothing to change")


scope_choice = click.option(
    "--scope",
    type=click.Choice(("user", "project", "local")),
    default="user",
    show_default=True,
    help="Claude Code settings: user ~/.claude/settings.json, project .claude/settings.json, "
    "local .claude/settings.local.json.",
)
project_option = click.option(
    "--project", metavar="DIR", default=None, help="Project root (default: the git root here)."
)
openclaw_dir_option = click.option(
    "--openclaw-dir",
    metavar="DIR",
    default=None,
    help="OpenClaw's state directory (default: $OPENCLAW_STATE_DIR, else ~/.openclaw).",
)


@click.group(context_settings=CONTEXT_SETTINGS)
def hooks() -> None:
    """Install, remove and inspect the agent hooks (Claude Code, OpenClaw).

    \b
    Example:
        memory-chain hooks install claude-code
        memory-chain hooks install claude-code --scope project
        memory-chain hooks install openclaw
        memory-chain hooks status
    """


@hooks.command("install", context_settings=CONTEXT_SETTINGS)
@click.argument("agent", type=click.Choice(AGENTS))
@scope_choice
@project_option
@openclaw_dir_option
@dir_option
@json_option
def hooks_install(
    agent: str, scope: str, project: str | None, openclaw_dir: str | None, as_json: bool
) -> None:
    """Install our hooks into AGENT's settings (merged; idempotent; a backup is kept).

    Claude Code: SessionStart (the memory block), UserPromptSubmit
    ("remember this", relevant memories), PreCompact and SessionEnd
    (capture), each with a timeout, next to any hooks already there.
    OpenClaw: memory-chain-bootstrap (agent:bootstrap) and
    memory-chain-reset (command:new, command:reset, session:auto-reset) in
    <state dir>/hooks/, enabled with `openclaw hooks enable` when the
    openclaw CLI is found.

    \b
    Example:
        memory-chain hooks install claude-code --scope user
        memory-chain hooks install openclaw
    """
    from memory_chain.integrations import claude_code

    if agent == "claude-code":
        change = claude_code.install_hooks(scope, _project(project), _dir_for_command())
        _print_change(change, as_json, "installed")
    else:
        from memory_chain.integrations import openclaw

        base = Path(openclaw_dir).expanduser() if openclaw_dir else None
        result = openclaw.install(claude_code.program(_dir_for_command()), base)
        if as_json:
            emit_json(result.as_dict())
        else:
            state = "installed" if result.changed else "already installed"
            click.echo(f"{state}: {', '.join(result.installed)} in {result.hooks_dir}")
            if result.next_step:
                click.echo(f"next: {result.next_step}")
    _warn_no_chain()


@hooks.command("uninstall", context_settings=CONTEXT_SETTINGS)
@click.argument("agent", type=click.Choice(AGENTS))
@scope_choice
@project_option
@openclaw_dir_option
@json_option
def hooks_uninstall(
    agent: str, scope: str, project: str | None, openclaw_dir: str | None, as_json: bool
) -> None:
    """Remove our hooks from AGENT's settings; everything else stays as it is.

    \b
    Example:
        memory-chain hooks uninstall claude-code --scope user
    """
    if agent == "claude-code":
        from memory_chain.integrations import claude_code

        _print_change(claude_code.uninstall_hooks(scope, _project(project)), as_json, "removed")
        return
    from memory_chain.integrations import openclaw

    base = Path(openclaw_dir).expanduser() if openclaw_dir else None
    result = openclaw.uninstall(base)
    if as_json:
        emit_json(result.as_dict())
    elif result.changed:
        click.echo(f"removed {', '.join(result.installed)} from {result.hooks_dir}")
    else:
        click.echo(f"{result.hooks_dir}: nothing to remove")


@hooks.command("status", context_settings=CONTEXT_SETTINGS)
@project_option
@openclaw_dir_option
@json_option
def hooks_status(project: str | None, openclaw_dir: str | None, as_json: bool) -> None:
    """Which hooks are installed where, and the command each runs.

    \b
    Example:
        memory-chain hooks status --json
    """
    from memory_chain.integrations import claude_code, openclaw

    rows = claude_code.hooks_status(_project(project))
    oc = openclaw.status(Path(openclaw_dir).expanduser() if openclaw_dir else None)
    if as_json:
        emit_json({"claude-code": rows, "openclaw": oc})
        return
    for row in rows:
        if row.get("error"):
            click.echo(f"claude-code {row['scope']}: {row['path']}: {row['error']}")
            continue
        got = ", ".join(row["events"]) or "none"
        click.echo(f"claude-code {row['scope']}: {got} ({row['path']})")
    for name, h in oc["hooks"].items():
        state = "installed" if h["installed"] else "not installed"
        click.echo(f"openclaw {name}: {state} ({oc['hooks_dir']})")


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.option("--workspace", metavar="DIR", default=None, help="User workspace.")
@click.option("--project", metavar="DIR", default=None, help="Project root.")
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve the streamable HTTP transport on 127.0.0.1 instead of stdio.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="With --http: the port (0: a free one, printed).",
)
@dir_option
@click.pass_context
def mcp(
    ctx: click.Context, workspace: str | None, project: str | None, http: bool, port: int
) -> None:
    """Run the MCP server on stdio, or on HTTP on loopback (or register it with `mcp install`).

    Tools: search, get, recent, add, supersede, redact, remember,
    review_queue, context, list_files, read_file, write_file, patch_file,
    append_file, delete_file, rename_file, verify, prove. Resources:
    memory://<scope>/MEMORY.md, memory://context and templates for an
    entry, a proof and a workspace file. Prompts: recall, review,
    changes-since.

    With --http it answers at http://127.0.0.1:PORT/mcp, printed on stdout
    with the token every request must send (Authorization: Bearer TOKEN);
    $MEMORY_CHAIN_MCP_TOKEN sets the token (then it is not printed).
    Ctrl-C stops it.

    \b
    Example:
        memory-chain mcp
        memory-chain mcp --http --port 8765
        memory-chain mcp install claude-code --scope project
    """
    if ctx.invoked_subcommand is not None:
        return
    if port and not http:
        raise click.UsageError("--port needs --http")
    from memory_chain.integrations.api import Memory

    try:
        from memory_chain.integrations.mcp_server import serve
    except ImportError as exc:  # pragma: no cover - mcp is a dependency
        from memory_chain.chain.format.errors import OperationalError

        raise OperationalError(
            f"the MCP server needs the mcp package ({exc})", hint="pip install 'mcp>=2.3,<3'"
        ) from None
    memory = Memory(data_dir(), workspace=workspace, project=project)
    if not http:
        serve(memory)
        return
    from memory_chain.integrations.mcp_server import TOKEN_ENV, http_token, serve_http

    token, made = http_token()

    def ready(url: str) -> None:
        click.echo(f"url {url}")
        click.echo(f"token {token}" if made else f"token ${TOKEN_ENV}")
        sys.stdout.flush()
        click.echo("send Authorization: Bearer TOKEN with every request; Ctrl-C stops", err=True)

    serve_http(memory, port=port, token=token, ready=ready)


@mcp.command("install", context_settings=CONTEXT_SETTINGS)
@click.argument("agent", type=click.Choice(("claude-code",)))
@click.option(
    "--scope",
    type=click.Choice(("user", "project", "local")),
    default="user",
    show_default=True,
    help="user: ~/.claude.json; project: .mcp.json; local: ~/.claude.json for this project.",
)
@project_option
@dir_option
@json_option
def mcp_install(agent: str, scope: str, project: str | None, as_json: bool) -> None:
    """Register `memory-chain mcp` as the MCP server "memory-chain" of AGENT.

    \b
    Example:
        memory-chain mcp install claude-code --scope project
    """
    from memory_chain.integrations.claude_code import install_mcp

    _print_change(install_mcp(scope, _project(project), _dir_for_command()), as_json, "registered")
    _warn_no_chain()


@mcp.command("uninstall", context_settings=CONTEXT_SETTINGS)
@click.argument("agent", type=click.Choice(("claude-code",)))
@click.option("--scope", type=click.Choice(("user", "project", "local")), default="user")
@project_option
@json_option
def mcp_uninstall(agent: str, scope: str, project: str | None, as_json: bool) -> None:
    """Remove the "memory-chain" MCP server from AGENT's settings.

    \b
    Example:
        memory-chain mcp uninstall claude-code --scope project
    """
    from memory_chain.integrations.claude_code import uninstall_mcp

    _print_change(uninstall_mcp(scope, _project(project)), as_json, "removed")


@click.group(context_settings=CONTEXT_SETTINGS)
def tool() -> None:
    """Tool adapters for agents built on an LLM API.

    \b
    Example:
        echo '{"command": "view", "path": "/memories"}' | memory-chain tool memory
    """


@tool.command("memory", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--scope",
    type=click.Choice(("user", "project", "local")),
    default=None,
    help='The scope /memories maps onto (default: the input\'s "scope", else user).',
)
@click.option("--workspace", metavar="DIR", default=None, help="User workspace.")
@click.option("--project", metavar="DIR", default=None, help="Project root.")
@dir_option
@json_option
def tool_memory(
    scope: str | None, workspace: str | None, project: str | None, as_json: bool
) -> None:
    """Run one command of Anthropic's memory tool (JSON on stdin) on the workspace.

    The input is the tool_use input Claude sent ({"command": "view" |
    "create" | "str_replace" | "insert" | "delete" | "rename", "path":
    "/memories/...", ...}); /memories is a workspace scope, through the
    path sandbox and the secret gate. The result text is printed as the
    memory tool documents it; exit 0, or 1 when it is an error (send it
    back with is_error). --json prints {"content", "is_error"}.

    \b
    Example:
        echo '{"command": "view", "path": "/memories"}' | memory-chain tool memory
        echo '{"command": "create", "path": "/memories/notes.md", "file_text": "- hi\\n"}' \\
            | memory-chain tool memory --json
    """
    import orjson

    from memory_chain.integrations.api import Memory

    raw = read_stdin()
    try:
        command = orjson.loads(raw)
    except orjson.JSONDecodeError:
        reply: dict[str, Any] = {"content": "the input is not valid JSON", "is_error": True}
    else:
        if isinstance(command, dict) and scope is not None:
            command = {**command, "scope": scope}
        with Memory(data_dir(), workspace=workspace, project=project) as memory:
            reply = memory.memory_tool(command)
    if as_json:
        emit_json(reply)
    else:
        click.echo(reply["content"])
    if reply["is_error"]:
        sys.exit(1)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--workspace", metavar="DIR", default=None, help="User workspace.")
@click.option("--project", metavar="DIR", default=None, help="Project root.")
@dir_option
@json_option
def doctor(workspace: str | None, project: str | None, as_json: bool) -> None:
    """Check the data directory, key, chain, index, workspace, hooks, MCP, schedules and
    anchors, and say what to do about each problem. Exit 1 when something failed.

    \b
    Example:
        memory-chain doctor
        memory-chain doctor --json
    """
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.doctor import diagnose

    with Memory(data_dir(), workspace=workspace, project=project) as memory:
        checks = diagnose(memory)
    if as_json:
        emit_json(
            {"ok": all(c.status != "fail" for c in checks), "checks": [c.as_dict() for c in checks]}
        )
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
        for c in checks:
            click.echo(f"{marks[c.status]}  {c.name}: {c.detail}")
            if c.fix and c.status != "ok":
                click.echo(f"      fix: {c.fix}")
    if any(c.status == "fail" for c in checks):
        sys.exit(1)

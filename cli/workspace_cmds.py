"""ws and files: the markdown workspace (MEMORY.md operations) and the memory tools.

Each command resolves the workspace (--workspace, --project, --scope), calls
one function of memory_chain.workspace and prints the result.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .common import (
    CONTEXT_SETTINGS,
    data_dir,
    dir_option,
    emit_json,
    json_option,
    open_workspace,
    read_stdin,
    scope_option,
    workspace_options,
)


def _print_outcome(outcome: Any, as_json: bool) -> None:
    if as_json:
        emit_json(outcome.as_dict())
        return
    where = f"{outcome.path}:{outcome.line}" if outcome.line else str(outcome.path)
    extra = " (merged with an edit made meanwhile)" if outcome.merged else ""
    click.echo(f"{outcome.action}: {outcome.text} [{outcome.scope}] {where}{extra}")
    clash = outcome.detail.get("contradicts")
    if clash:
        lines = ", ".join(str(n) for n in clash)
        click.echo(
            f"note: it contradicts line {lines}; `memory-chain ws supersede` replaces an entry",
            err=True,
        )


@click.group(context_settings=CONTEXT_SETTINGS)
def ws() -> None:
    """The markdown workspace: MEMORY.md at user, project and local scope.

    Entries are bullets under `## Section` headings; metadata rides in an
    invisible `<!-- mc: ... -->` comment. Removed and superseded entries go to
    memory/archive/YYYY-MM.md, never lost. See specs/WORKSPACE.md.

    \b
    Example:
        memory-chain ws remember "Use pnpm, not npm" --section "Project Conventions" --scope project
        memory-chain ws show --all
    """


@ws.command("scopes", context_settings=CONTEXT_SETTINGS)
@workspace_options
@dir_option
@json_option
def ws_scopes(as_json: bool) -> None:
    """Where each scope's files are.

    \b
    Example:
        memory-chain ws scopes --json
    """
    w = open_workspace()
    info = {s.name: str(s.root) for s in w.in_order()}
    if as_json:
        emit_json(info)
        return
    for name, root in info.items():
        click.echo(f"{name:<8} {root}")


@ws.command("show", context_settings=CONTEXT_SETTINGS)
@scope_option
@click.option("--all", "all_", is_flag=True, help="Every scope, in merge order.")
@workspace_options
@dir_option
@json_option
def ws_show(scope: str, all_: bool, as_json: bool) -> None:
    """List MEMORY.md's entries with their line numbers ([?]: not confirmed for 90 days).

    \b
    Example:
        memory-chain ws show --all
    """
    from memory_chain.workspace.files import read_bytes
    from memory_chain.workspace.markdown import Document

    w = open_workspace()
    scopes = w.in_order() if all_ else [w.scope(scope)]
    out = []
    for s in scopes:
        doc = Document.parse(read_bytes(s.memory_md) or b"")
        for e in doc.entries():
            out.append(
                {
                    "scope": s.name,
                    "path": str(s.memory_md),
                    "line": e.line,
                    "section": e.section,
                    "text": e.text,
                    "stale": e.stale,
                    "meta": e.meta.as_dict(),
                }
            )
    if as_json:
        emit_json(out)
        return
    section = None
    for item in out:
        if (item["scope"], item["section"]) != section:
            section = (item["scope"], item["section"])
            click.echo(f"## {item['section'] or '(before any section)'}  [{item['scope']}]")
        mark = "[?] " if item["stale"] else ""
        click.echo(f"{item['line']:>5}  {mark}{item['text']}")


@click.command("remember", context_settings=CONTEXT_SETTINGS)
@click.argument("text")
@click.option("--section", default="Notes", show_default=True, help="The ## section.")
@scope_option
@click.option(
    "--source",
    type=click.Choice(["manual", "auto", "curation"]),
    default="manual",
    show_default=True,
)
@click.option("--confidence", type=click.FloatRange(0, 1), default=None, help="0..1.")
@click.option("--child", "children", multiple=True, metavar="TEXT", help="A sub-bullet.")
@click.option("--untrusted", is_flag=True, help="It came from a tool or the web: never injected.")
@click.option(
    "--origin",
    type=click.Choice(["person", "agent", "capture", "tool", "quoted"]),
    default=None,
    help="Where the words came from (default: person at a terminal, agent under an agent's "
    "shell, $MEMORY_CHAIN_ORIGIN when set). Only a person's, or an approved entry, is "
    "injected as guidance.",
)
@workspace_options
@dir_option
@json_option
def remember(
    text: str,
    section: str,
    scope: str,
    source: str,
    confidence: float | None,
    children: tuple[str, ...],
    untrusted: bool,
    origin: str | None,
    as_json: bool,
) -> None:
    """Add an entry to MEMORY.md (unless an entry already says the same).

    \b
    Example:
        memory-chain remember "Prefers short answers" --section "User Preferences"
        memory-chain ws remember "Postgres runs on 5433 here" --scope local --section Workflow
    """
    from memory_chain.workspace.ops import remember as do
    from memory_chain.workspace.provenance import terminal_origin

    out = do(
        open_workspace().scope(scope),
        text,
        section=section,
        source=source,
        confidence=confidence,
        children=children,
        untrusted=untrusted,
        origin=origin or ("tool" if untrusted else terminal_origin()),
    )
    _print_outcome(out, as_json)


ws.add_command(remember)


@ws.command("update", context_settings=CONTEXT_SETTINGS)
@click.argument("match")
@click.argument("text")
@click.option("--section", default=None, help="Only look in this section.")
@scope_option
@workspace_options
@dir_option
@json_option
def ws_update(match: str, text: str, section: str | None, scope: str, as_json: bool) -> None:
    """Change the text of the entry MATCH names (its line number, text or a unique part).

    \b
    Example:
        memory-chain ws update "port 5432" "Staging Postgres is on 5433"
    """
    from memory_chain.workspace.ops import update
    from memory_chain.workspace.provenance import terminal_origin

    done = update(
        open_workspace().scope(scope), match, text, section=section, origin=terminal_origin()
    )
    _print_outcome(done, as_json)


@ws.command("remove", context_settings=CONTEXT_SETTINGS)
@click.argument("match")
@click.option("--reason", required=True, help="Why (kept in the archive).")
@click.option("--section", default=None, help="Only look in this section.")
@scope_option
@workspace_options
@dir_option
@json_option
def ws_remove(match: str, reason: str, section: str | None, scope: str, as_json: bool) -> None:
    """Move an entry out of MEMORY.md into memory/archive/YYYY-MM.md.

    \b
    Example:
        memory-chain ws remove 12 --reason "the service was retired"
    """
    from memory_chain.workspace.ops import remove

    out = remove(open_workspace().scope(scope), match, reason=reason, section=section)
    _print_outcome(out, as_json)


@ws.command("supersede", context_settings=CONTEXT_SETTINGS)
@click.argument("match")
@click.argument("text")
@click.option("--reason", required=True, help="Why (kept in the archive).")
@click.option("--section", default=None, help="Only look in this section.")
@scope_option
@workspace_options
@dir_option
@json_option
def ws_supersede(
    match: str, text: str, reason: str, section: str | None, scope: str, as_json: bool
) -> None:
    """Replace a contradicted entry by TEXT; the old one is archived with the reason.

    \b
    Example:
        memory-chain ws supersede "Prefers spaces" "Prefers tabs" --reason "said so on 2026-11-25"
    """
    from memory_chain.workspace.ops import supersede

    out = supersede(open_workspace().scope(scope), match, text, reason=reason, section=section)
    _print_outcome(out, as_json)


@ws.command("confirm", context_settings=CONTEXT_SETTINGS)
@click.argument("match")
@click.option("--section", default=None, help="Only look in this section.")
@scope_option
@workspace_options
@dir_option
@json_option
def ws_confirm(match: str, section: str | None, scope: str, as_json: bool) -> None:
    """Mark an entry as still true today (clears [?]).

    \b
    Example:
        memory-chain ws confirm "dark mode"
    """
    from memory_chain.workspace.ops import confirm

    _print_outcome(confirm(open_workspace().scope(scope), match, section=section), as_json)


@ws.command("note", context_settings=CONTEXT_SETTINGS)
@click.argument("text")
@scope_option
@click.option(
    "--source",
    type=click.Choice(["manual", "auto", "curation"]),
    default="manual",
    show_default=True,
)
@workspace_options
@dir_option
@json_option
def ws_note(text: str, scope: str, source: str, as_json: bool) -> None:
    """Add a timestamped line to today's daily file memory/YYYY-MM-DD.md.

    \b
    Example:
        memory-chain ws note "Migrated the staging database"
    """
    from memory_chain.workspace.ops import note
    from memory_chain.workspace.provenance import terminal_origin

    done = note(open_workspace().scope(scope), text, source=source, origin=terminal_origin())
    _print_outcome(done, as_json)


def _print_report(report: Any, as_json: bool) -> None:
    if as_json:
        emit_json(report.as_dict())
        return
    for change in report.changed:
        click.echo("  " + ", ".join(f"{k}={v}" for k, v in change.items()))
    verb = "would change" if report.dry_run else "changed"
    click.echo(
        f"{report.action} [{report.scope}]: {verb} {len(report.changed)}; "
        f"lines {report.lines_before} -> {report.lines_after}"
    )


@ws.command("decay", context_settings=CONTEXT_SETTINGS)
@click.option("--days", type=click.IntRange(min=1), default=90, show_default=True)
@click.option("--dry-run", is_flag=True)
@scope_option
@workspace_options
@dir_option
@json_option
def ws_decay(days: int, dry_run: bool, scope: str, as_json: bool) -> None:
    """Mark [?] on entries not confirmed for DAYS days (undated hand-written ones are left).

    \b
    Example:
        memory-chain ws decay --dry-run
    """
    from memory_chain.workspace.housekeeping import decay

    _print_report(decay(open_workspace().scope(scope), days=days, dry_run=dry_run), as_json)


@ws.command("consolidate", context_settings=CONTEXT_SETTINGS)
@click.option("--cap", type=click.IntRange(min=10), default=200, show_default=True)
@click.option("--dry-run", is_flag=True)
@scope_option
@workspace_options
@dir_option
@json_option
def ws_consolidate(cap: int, dry_run: bool, scope: str, as_json: bool) -> None:
    """Bring MEMORY.md under CAP lines: merge duplicates, move big sections to topic files.

    \b
    Example:
        memory-chain ws consolidate --dry-run
    """
    from memory_chain.workspace.housekeeping import consolidate

    _print_report(consolidate(open_workspace().scope(scope), cap=cap, dry_run=dry_run), as_json)


@ws.command("trim", context_settings=CONTEXT_SETTINGS)
@click.option("--max", "max_entries", type=click.IntRange(min=1), required=True)
@scope_option
@workspace_options
@dir_option
@json_option
def ws_trim(max_entries: int, scope: str, as_json: bool) -> None:
    """The rolling window: keep the newest MAX entries, archive the rest.

    \b
    Example:
        memory-chain ws trim --max 150
    """
    from memory_chain.workspace.housekeeping import trim

    _print_report(trim(open_workspace().scope(scope), max_entries=max_entries), as_json)


def check_workspace_here() -> list[Any]:
    """The workspace findings for this invocation (reads the index for chain contents)."""
    from memory_chain.index.db import Index
    from memory_chain.workspace.integrity import check_workspace, index_lookup

    w = open_workspace()
    with Index.open(data_dir()) as index:
        return check_workspace(w, index_lookup(index.conn))


def print_findings(findings: list[Any]) -> None:
    errors = sum(1 for f in findings if f.error)
    for f in findings:
        where = f"{f.scope}:{f.path}" + (f":{f.line}" if f.line else "")
        level = "ERROR" if f.error else "warning"
        click.echo(f"{level}: {where}: {f.kind}: {f.message}")
    if errors:
        click.echo(f"workspace: {errors} error(s), {len(findings) - errors} warning(s)", err=True)
    else:
        click.echo(f"workspace: ok ({len(findings)} warning(s))")


@ws.command("verify", context_settings=CONTEXT_SETTINGS)
@workspace_options
@dir_option
@json_option
def ws_verify(as_json: bool) -> None:
    """Check the workspace against the chain; never edits anything.

    Errors (exit 1): a line that claims a chain seq whose content differs
    (edited after it was committed), a seq that is no memory, an unreadable
    file. Warnings: redacted entries, contradictions in a section, stale
    entries. `memory-chain verify --workspace` verifies the chain first.

    \b
    Example:
        memory-chain ws verify --json
    """
    findings = check_workspace_here()
    if as_json:
        emit_json(
            {
                "ok": not any(f.error for f in findings),
                "findings": [f.as_dict() for f in findings],
            }
        )
    else:
        print_findings(findings)
    if any(f.error for f in findings):
        sys.exit(1)


# -- files: the memory tools -------------------------------------------------------


@click.group(context_settings=CONTEXT_SETTINGS)
def files() -> None:
    """Memory tools over one scope's files (paths relative to its root, sandboxed).

    \b
    Example:
        memory-chain files list
        memory-chain files append episodes/2026-11.md - < episode.md
        memory-chain files call '{"tool": "read", "path": "facts/user.md"}'
    """


def _tool(request: dict[str, Any], as_json: bool) -> None:
    """Run one memory tool and print its result (text as is, a listing as lines)."""
    from memory_chain.workspace.tools import run_tool

    result = run_tool(open_workspace(), request)
    if as_json:
        emit_json(result)
    elif isinstance(result, str):
        click.echo(result, nl=False)
    elif isinstance(result, list):
        for f in result:
            click.echo(f"{f['path']} ({f['size']:,} B): {f['summary']}")
    else:
        emit_json(result)


def _text_arg(value: str) -> str:
    if value == "-":
        return read_stdin().decode("utf-8", "surrogateescape")
    return value


@files.command("list", context_settings=CONTEXT_SETTINGS)
@scope_option
@workspace_options
@dir_option
@json_option
def files_list(scope: str, as_json: bool) -> None:
    """Every memory file: path, size and its summary line.

    \b
    Example:
        memory-chain files list --scope project
    """
    _tool({"tool": "list", "scope": scope}, as_json)


@files.command("read", context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@click.option("--lines", default=None, metavar="START:END", help="1-based, inclusive.")
@scope_option
@workspace_options
@dir_option
@json_option
def files_read(path: str, lines: str | None, scope: str, as_json: bool) -> None:
    """Print a memory file (or some of its lines).

    \b
    Example:
        memory-chain files read facts/user.md --lines 1:20
    """
    from memory_chain.chain.format.errors import InputError

    req: dict[str, Any] = {"tool": "read", "scope": scope, "path": path}
    if lines is not None:
        a, sep, b = lines.partition(":")
        try:
            req["start"] = int(a) if a else None
            req["end"] = int(b) if sep and b else None
        except ValueError:
            raise InputError("--lines is START:END, e.g. 10:20") from None
    _tool(req, as_json)


@files.command("write", context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@click.argument("content")
@click.option("--summary", default=None, help="The > Summary: line (facts/ and episodes/).")
@scope_option
@workspace_options
@dir_option
@json_option
def files_write(path: str, content: str, summary: str | None, scope: str, as_json: bool) -> None:
    """Create or replace PATH with CONTENT (- for stdin).

    A fact or episode file gets a > Summary: line under its title.

    \b
    Example:
        memory-chain files write facts/user.md - < user.md
    """
    req = {"tool": "write", "scope": scope, "path": path, "content": _text_arg(content)}
    if summary is not None:
        req["summary"] = summary
    _tool(req, as_json)


@files.command("patch", context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@click.option("--old", "olds", multiple=True, required=True, help="Text to find (exactly once).")
@click.option("--new", "news", multiple=True, required=True, help="Its replacement.")
@scope_option
@workspace_options
@dir_option
@json_option
def files_patch(
    path: str, olds: tuple[str, ...], news: tuple[str, ...], scope: str, as_json: bool
) -> None:
    """Replace texts in PATH; each --old must occur exactly once, else nothing is written.

    \b
    Example:
        memory-chain files patch facts/user.md --old "Role: dev" --new "Role: SRE"
    """
    from memory_chain.chain.format.errors import InputError

    if len(olds) != len(news):
        raise InputError("give one --new for each --old")
    patches = [{"old": o, "new": n} for o, n in zip(olds, news, strict=True)]
    _tool({"tool": "patch", "scope": scope, "path": path, "patches": patches}, as_json)


@files.command("append", context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@click.argument("entry")
@click.option("--summary", default=None, help="Set the > Summary: line instead of rebuilding it.")
@scope_option
@workspace_options
@dir_option
@json_option
def files_append(path: str, entry: str, summary: str | None, scope: str, as_json: bool) -> None:
    """Append a markdown block (ENTRY, - for stdin) and rebuild the summary line.

    \b
    Example:
        memory-chain files append episodes/2026-11.md - < episode.md
    """
    req = {"tool": "append", "scope": scope, "path": path, "entry": _text_arg(entry)}
    if summary is not None:
        req["summary"] = summary
    _tool(req, as_json)


@files.command("delete", context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@scope_option
@workspace_options
@dir_option
@json_option
def files_delete(path: str, scope: str, as_json: bool) -> None:
    """Delete a memory file.

    \b
    Example:
        memory-chain files delete memory/old-topic.md
    """
    _tool({"tool": "delete", "scope": scope, "path": path}, as_json)


@files.command("rename", context_settings=CONTEXT_SETTINGS)
@click.argument("old")
@click.argument("new")
@scope_option
@workspace_options
@dir_option
@json_option
def files_rename(old: str, new: str, scope: str, as_json: bool) -> None:
    """Rename a memory file (never over an existing one).

    \b
    Example:
        memory-chain files rename memory/ts.md memory/typescript.md
    """
    _tool({"tool": "rename", "scope": scope, "old": old, "new": new}, as_json)


@files.command("call", context_settings=CONTEXT_SETTINGS)
@click.argument("request")
@workspace_options
@dir_option
def files_call(request: str) -> None:
    """Run one tool call given as JSON (- for stdin) and print the JSON reply.

    Our tools ({"tool": "read", "path": ...}) or the Anthropic memory tool's
    commands ({"command": "view", "path": "/memories"}). Exit 0 when the call
    succeeded, 2 when its reply is an error (the reply is printed either way).

    \b
    Example:
        memory-chain files call '{"command": "view", "path": "/memories"}'
    """
    from memory_chain.workspace.tools import call

    raw = read_stdin() if request == "-" else request
    reply = call(open_workspace(), raw)
    emit_json(reply)
    if reply.get("ok") is False or reply.get("is_error") is True:
        sys.exit(2)

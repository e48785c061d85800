"""capture and curate: automatic memory from agent transcripts (memory_chain.capture)."""

from __future__ import annotations

import os
from pathlib import Path
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
    workspace_options,
)

FORMATS = ("auto", "claude", "turns", "buffer")


def _chain() -> Any:
    from memory_chain.capture.chaindoor import ChainDoor

    from .common import passphrase_source

    return ChainDoor.open(data_dir(), passphrase=passphrase_source)


def _hook_payload() -> dict[str, Any]:
    """A Claude Code hook's stdin JSON (transcript_path, cwd, hook_event_name, ...)."""
    import orjson

    from memory_chain.chain.format.errors import InputError

    raw = read_stdin()
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"the hook input on stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("transcript_path"), str):
        raise InputError("the hook input has no transcript_path")
    return payload


def _print_capture(report: Any) -> None:
    r = report.read
    if report.unchanged:
        click.echo(f"nothing new in {report.transcript} (read up to byte {r['end']})")
        return
    skipped = ", ".join(f"{n} {k}" for k, n in r.get("skipped", {}).items())
    click.echo(
        f"read {r['lines']} lines of {report.transcript} from byte {r['start']}"
        + (f" (skipped: {skipped})" if skipped else "")
    )
    verb = "would write" if report.dry_run else "wrote"
    rows = [("+", d) for d in report.captured] + [("?", d) for d in report.candidates]
    click.echo(
        f"{verb} {len(report.captured)} captured, {len(report.candidates)} candidates "
        f"to the {report.daily_scope} daily file"
    )
    for mark, d in rows:
        click.echo(f"  {mark} [{d['category']} {d['confidence']:.2f} {d['scope']}] {d['text']}")
    for d in report.known:
        click.echo(f"  = [{d['category']}] {d['text']} ({d['why']})")
    for o in report.remembered:
        click.echo(f"remembered: {o['text']} -> {o['scope']} MEMORY.md ({o['action']})")
    for d in report.committed:
        click.echo(f"committed: seq {d['seq']} {d['kind']}: {d['text']}")
    if report.compaction:
        click.echo(f"compaction record: {report.compaction}")
    if report.model is not None and not report.model["used"]:
        click.echo(f"warning: the rules were used: {report.model['why']}", err=True)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--transcript",
    "-t",
    metavar="FILE",
    help="A Claude Code session JSONL, a turns JSONL or a session-buffer.md.",
)
@click.option(
    "--hook",
    is_flag=True,
    help="Read a Claude Code hook's JSON on stdin (transcript_path, cwd, hook_event_name). "
    "PreCompact flushes. Never fails the agent: an error is one line on stderr, exit 0.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option(
    "--threshold",
    type=float,
    default=0.6,
    show_default=True,
    help="Store from this confidence; from 0.3 a detection is kept as a candidate.",
)
@click.option(
    "--flush",
    is_flag=True,
    help="Pre-compaction flush: also write a compaction record of what was captured.",
)
@click.option(
    "--model",
    metavar="NAME",
    help="An `llm` model to find the memories (optional extra: pip install llm); the rules "
    "stand in when it cannot, and always find error-fix pairs.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@workspace_options
@dir_option
@json_option
def capture(
    transcript: str | None,
    hook: bool,
    fmt: str,
    threshold: float,
    flush: bool,
    model: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Capture what is worth remembering from an agent transcript into today's daily file.

    Reads the transcript from where the last capture of it stopped (twice
    adds nothing), detects preferences, corrections, conventions, tool
    usage, decisions, commitments, identity, error-fix pairs and explicit
    "remember this" requests (rules; see specs/WORKSPACE.md section 12),
    drops what MEMORY.md, the chain or a recent daily file already holds,
    and appends the rest to memory/YYYY-MM-DD.md (the local scope's when in
    a project). A "remember this" goes at once to MEMORY.md, and identity,
    decisions and commitments among them to the chain. Tool results and web
    pages never become memories.

    \b
    Example:
        memory-chain capture --transcript ~/.claude/projects/-home-me-app/0e26ec2f.jsonl
        memory-chain capture --hook < payload.json    # from a Claude Code hook
    """
    if hook:
        try:
            _capture_hook(fmt, threshold, model, dry_run, as_json)
        except Exception as exc:  # a hook never breaks the agent
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            click.echo(f"memory-chain capture: {message} (ignored)", err=True)
        return
    if not transcript:
        from memory_chain.chain.format.errors import InputError

        raise InputError(
            "name a transcript", hint="--transcript FILE, or --hook with JSON on stdin"
        )
    workspace = open_workspace()
    path = Path(os.path.expanduser(transcript)).absolute()
    if not flush and not dry_run and _nothing_new(workspace, path, as_json):
        return
    from memory_chain.capture.capture import capture as run
    from memory_chain.index.settings import semantic_setting

    report = run(
        workspace,
        path,
        fmt=fmt,
        chain=_chain(),
        threshold=threshold,
        flush="manual" if flush else None,
        model=model,
        dry_run=dry_run,
        embeddings=semantic_setting(data_dir()) is not False,
    )
    if as_json:
        emit_json(report.as_dict())
    else:
        _print_capture(report)


def _nothing_new(workspace: Any, path: Path, as_json: bool) -> bool:
    """The fast path (no detector, no chain): the transcript has not grown since last time."""
    from .plain import nothing_new

    text = nothing_new(workspace, path, as_json)
    if text is None:
        return False
    click.echo(text, nl=False)
    return True


def _capture_hook(
    fmt: str, threshold: float, model: str | None, dry_run: bool, as_json: bool
) -> None:
    from memory_chain.capture.capture import capture as run
    from memory_chain.index.settings import semantic_setting

    payload = _hook_payload()
    cwd = payload.get("cwd")
    here = Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else None
    event = payload.get("hook_event_name")
    trigger = payload.get("trigger") if isinstance(payload.get("trigger"), str) else "auto"
    report = run(
        open_workspace(cwd=here),
        Path(payload["transcript_path"]),
        fmt=fmt,
        chain=_chain(),
        threshold=threshold,
        flush=trigger if event == "PreCompact" else None,
        session=payload.get("session_id") if isinstance(payload.get("session_id"), str) else None,
        model=model,
        dry_run=dry_run,
        embeddings=semantic_setting(data_dir()) is not False,
    )
    if as_json:
        emit_json(report.as_dict())


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--days",
    type=click.IntRange(1, 3650),
    default=None,
    help="Read only the daily files of the last N days (default: every daily file "
    "not yet archived, whatever its age).",
)
@click.option(
    "--threshold",
    type=float,
    default=0.6,
    show_default=True,
    help="Promote captured lines from this confidence.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be curated; write nothing.")
@workspace_options
@dir_option
@json_option
@click.option(
    "--review",
    "review",
    type=click.Choice(["auto", "review", "off"]),
    default=None,
    help='What automatic finds may do: review (the default, or config.json\'s "review"): '
    "MEMORY.md as notes, the chain only after `memory-chain review` approves; auto: commit "
    "as before; off: promote only what the person said to remember.",
)
def curate(
    days: int | None, threshold: float, dry_run: bool, review: str | None, as_json: bool
) -> None:
    """Curate daily files into MEMORY.md and commit what matters to the chain.

    Promotes captured lines (and candidates seen twice) into their scope's
    MEMORY.md sections; a contradicted automatic entry is superseded, a
    person's entry always wins. Identity, decisions, commitments and
    lessons are committed to the chain (source curation, with the daily
    line they came from). Every daily line not yet curated is read, however
    old. MEMORY.md over its cap is consolidated; daily files older than 30
    days move to memory/archive/ once read. A second run right after
    changes nothing.

    \b
    Example:
        memory-chain curate --dry-run
        memory-chain curate --days 30 --json
    """
    from memory_chain.capture.curate import curate as run
    from memory_chain.capture.curate import review_mode

    report = run(
        open_workspace(),
        chain=_chain(),
        days=days,
        threshold=threshold,
        dry_run=dry_run,
        review=review_mode(data_dir(), review),
    )
    if as_json:
        emit_json(report.as_dict())
        return
    verb = "would curate" if dry_run else "curated"
    where = "every daily file" if days is None else f"the last {days} days of daily files"
    click.echo(f"{verb} {len(report.curated)} from {where}")
    for d in report.curated:
        click.echo(f"  + [{d['kind']} -> {d['scope']} {d['section']}] {d['text']}  ({d['from']})")
        if dry_run:
            click.echo(f"      why: {d['why']}")
    for d in report.superseded:
        click.echo(f"  superseded an automatic entry with: {d['text']}")
    for d in report.kept:
        click.echo(f"  = {d['text']} ({d['why']})")
    for d in report.skipped:
        click.echo(f"  skipped {d['from']}: {d['why']}; edit the line in {d['path']}")
    for d in report.committed:
        seq = "" if d["seq"] is None else f"seq {d['seq']} "
        click.echo(f"{'would commit' if dry_run else 'committed'}: {seq}{d['type']}: {d['text']}")
    for d in report.waiting:
        click.echo(f"  waits for review (then the chain): {d['text']}")
    if report.waiting and not dry_run:
        click.echo(f"{len(report.waiting)} wait for review: `memory-chain review` lists them")
    for r in report.consolidated:
        click.echo(f"consolidated {r['path']}: {r['lines_before']} -> {r['lines_after']} lines")
    for a in report.archived:
        state = "archived" if a.get("moved") or dry_run else f"not archived ({a.get('why')})"
        click.echo(f"{state}: {a['from']} -> {a['to']}")


@click.group("review", context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.option(
    "--fleet",
    is_flag=True,
    help="List what waits in every agent's chain in the fleet's PostgreSQL database instead "
    "(`memory-chain index`); its URL as `index` finds it.",
)
@click.option("--url", metavar="URL", default=None, help="That database (implies --fleet).")
@click.option(
    "--agent", "agents", multiple=True, metavar="NAME", help="With --fleet: only this agent."
)
@workspace_options
@dir_option
@json_option
@click.pass_context
def review(
    ctx: click.Context, fleet: bool, url: str | None, agents: tuple[str, ...], as_json: bool
) -> None:
    """List what was remembered automatically and waits for a person (issue 23).

    Entries an agent or capture wrote into a MEMORY.md are shown at session
    start as dated notes, not as guidance, and (in review mode, the default)
    reach the chain only once approved here. Approve, edit or reject them by
    the id this list prints; a rejected text is never captured again.

    With --fleet, list instead the memories in the chains of every agent
    (or --agent) in the fleet's database that an agent or capture wrote
    and no person approved; each is approved on its agent's host.

    \b
    Example:
        memory-chain review
        memory-chain review approve project:12
        memory-chain review edit user:7 "Prefers tabs in Go files only"
        memory-chain review reject user:9
    """
    if ctx.invoked_subcommand is not None:
        if fleet or url or agents:
            raise click.UsageError("--fleet, --url and --agent only list; approve on the host")
        return
    if fleet or url is not None:
        _fleet_review(url, list(agents) or None, as_json)
        return
    if agents:
        raise click.UsageError("--agent names a chain of the fleet: give --fleet too")
    from memory_chain.capture.review import pending

    waiting = pending(open_workspace())
    if as_json:
        emit_json([w.as_dict() for w in waiting])
        return
    if not waiting:
        click.echo("nothing waits for review")
        return
    for w in waiting:
        when = f", {w.added}" if w.added else ""
        ref = f", from {w.ref}" if w.ref else ""
        click.echo(f"{w.id:<12} [{w.section}] {w.text}  ({w.origin}{when}{ref})")
    click.echo(f"{len(waiting)} wait: `memory-chain review approve|edit|reject ID`")


def _fleet_review(url: str | None, agents: list[str] | None, as_json: bool) -> None:
    """``review --fleet``: the fleet's review queue: chain memories (index/fleet_store.py
    ``notes``) and MEMORY.md entries (workspace/fleet.py ``waiting``)."""
    from memory_chain.index import fleet, fleet_store
    from memory_chain.workspace.fleet import waiting

    url = url or fleet.configured_url(data_dir())
    found = fleet_store.notes(url, agents=agents)
    entries = waiting(url, agents=agents)
    if as_json:
        emit_json({**found, "workspace": entries})
        return
    if not found["per_agent"] and not entries["per_agent"]:
        click.echo("nothing waits for review in the fleet")
        return
    for w in found["waiting"]:
        text = " ".join(w["text"].split())
        click.echo(
            f"{w['agent']}:{w['seq']:<6} {w['ts'][:10]}  {w['type']} ({w['origin']})  {text}"
        )
    for e in entries["waiting"]:
        text = " ".join(e["text"].split())
        click.echo(
            f"{e['agent']}:{e['id']:<10} {(e['added'] or '')[:10]:10}  {e['section']} "
            f"({e['origin']}, MEMORY.md)  {text}"
        )
    counts: dict[str, int] = {}
    for per in (found["per_agent"], entries["per_agent"]):
        for a, n in per.items():
            counts[a] = counts.get(a, 0) + n
    listed = ", ".join(f"{a or '(unnamed)'} {n:,}" for a, n in sorted(counts.items()))
    click.echo(f"waiting, by agent: {listed}; approve each on its agent's host")


@review.command("approve", context_settings=CONTEXT_SETTINGS)
@click.argument("ids", nargs=-1, required=True)
@workspace_options
@dir_option
@json_option
def review_approve(ids: tuple[str, ...], as_json: bool) -> None:
    """Approve entries: guidance from now on (and committed, for decisions and the like).

    \b
    Example:
        memory-chain review approve project:12 user:7
    """
    from memory_chain.capture.review import approve

    w, chain = open_workspace(), _chain()
    done = [approve(w, i, chain=chain) for i in ids]
    _review_done(done, "approved", as_json)


@review.command("edit", context_settings=CONTEXT_SETTINGS)
@click.argument("ident")
@click.argument("text")
@workspace_options
@dir_option
@json_option
def review_edit(ident: str, text: str, as_json: bool) -> None:
    """Put your words in place of an entry's, and approve it.

    \b
    Example:
        memory-chain review edit user:7 "Prefers tabs in Go files only"
    """
    from memory_chain.capture.review import edit

    _review_done([edit(open_workspace(), ident, text, chain=_chain())], "approved", as_json)


@review.command("reject", context_settings=CONTEXT_SETTINGS)
@click.argument("ids", nargs=-1, required=True)
@workspace_options
@dir_option
@json_option
def review_reject(ids: tuple[str, ...], as_json: bool) -> None:
    """Move entries to the archive; their words are never captured again.

    \b
    Example:
        memory-chain review reject user:9
    """
    from memory_chain.capture.review import reject

    w = open_workspace()

    def order(ident: str) -> tuple[str, int]:  # bottom up: a removal moves the lines below
        scope, _, line = ident.partition(":")
        return scope, -int(line) if line.isdigit() else 0

    _review_done([reject(w, i) for i in sorted(ids, key=order)], "rejected", as_json)


def _review_done(done: list[dict[str, Any]], key: str, as_json: bool) -> None:
    if as_json:
        emit_json(done)
        return
    for d in done:
        seq = f" (chain seq {d['seq']})" if d.get("seq") is not None else ""
        click.echo(f"{key} {d[key]}: {d['text']}{seq}")

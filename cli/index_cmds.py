"""search, context, reindex, gc, restore: the index (memory.db) commands.

Each opens the index (which syncs it with the chain first), calls one
function of memory_chain.index and prints the result. None of them writes
chain.jsonl or content/.
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
    workspace_options,
)
from .ledger_cmds import TIERS, TYPES


def _open_index(*, chainless_ok: bool = False, durable: bool = True) -> Any:
    """The index; with ``chainless_ok`` a never-initialised directory gives a workspace-only one
    (search and context read the workspace before `init`)."""
    from memory_chain.index.db import Index

    if chainless_ok:
        return Index.open_or_empty(data_dir(), durable=durable)
    return Index.open(data_dir(), durable=durable)


def _weights(text: str | None) -> Any:
    if text is None:
        return None
    from memory_chain.index.settings import parse_weights

    return parse_weights(text)


def _fleet_search(
    query: str,
    url: str | None,
    agents: list[str] | None,
    as_json: bool,
    scope: str | None,
    since: Any,
    until: Any,
    given: dict[str, Any],
) -> None:
    """``search --fleet``: the fleet's chains and workspaces (workspace/fleet.py), not this
    directory's."""
    from memory_chain.index import fleet
    from memory_chain.workspace.fleet import search

    url = url or fleet.configured_url(data_dir())
    day = 86_400_000_000
    found = search(
        url,
        query,
        agents=agents,
        scope=scope,
        since=_micros(since) if since else None,
        until=_micros(until) + day if until else None,
        **given,
    )
    if as_json:
        emit_json([f.as_dict() for f in found])
        return
    from .plain import _preview

    for f in found:
        if getattr(f, "seq", None) is not None:
            mark = "" if f.status == "active" else f" [{f.status}]"
            click.echo(
                f"{f.agent or '(unnamed)'}:{f.seq}  {f.score:.3f}  provable {f.type}/{f.tier}"
                f"{mark}  {_preview(f.text)}"
            )
            continue
        kind = "untrusted" if f.untrusted else "editable"
        click.echo(
            f"{f.agent or '(unnamed)'}:{f.scope}:{f.path}:{f.line}  {f.score:.3f}  {kind}"
            f"{' [stale]' if f.stale else ''}  {_preview(f.text)}"
        )


def _micros(day: Any) -> int:
    """A --since or --until day (a datetime at midnight, UTC) in µs since the epoch."""
    from datetime import UTC

    return int(day.replace(tzinfo=UTC).timestamp()) * 1_000_000


def weights_option(f: Any) -> Any:
    return click.option(
        "--weights",
        metavar="T,R,I,A",
        default=None,
        help="Score weights: text, recency, importance, access (default 0.4,0.3,0.2,0.1, "
        'or config.json "index.weights").',
    )(f)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Token budget: skip memories that do not fit, keep filling with smaller ones.",
)
@click.option("--type", "type_", type=click.Choice(TYPES), default=None, help="Only this type.")
@click.option("--tier", type=click.Choice(TIERS), default=None, help="Only this tier.")
@click.option(
    "--include-archived",
    is_flag=True,
    help="Also search archived and expired memories (and the workspace's archive).",
)
@click.option(
    "--include-superseded", is_flag=True, help="Also chain entries a later entry superseded."
)
@click.option(
    "--source",
    type=click.Choice(["manual", "auto", "curation"]),
    default=None,
    help="Only chain memories added so (by a person, by a program, by curation).",
)
@click.option(
    "--scope",
    type=click.Choice(["user", "project", "local"]),
    default=None,
    help="Only workspace entries of this scope.",
)
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None, help="From this day.")
@click.option(
    "--until", type=click.DateTime(["%Y-%m-%d"]), default=None, help="To this day, included."
)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    help="Skip this many results first (the next page: --offset 10).",
)
@click.option(
    "--fleet",
    is_flag=True,
    help="Search the fleet's PostgreSQL database (every agent's chain synced there by "
    "`memory-chain index`) instead of this directory; its URL as `index` finds it.",
)
@click.option(
    "--url",
    metavar="URL",
    default=None,
    help="The fleet database to search (implies --fleet).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="NAME",
    help="With --fleet: only this agent's chain (a name, or a chain id of 8 characters or "
    "more); again for more.",
)
@weights_option
@workspace_options
@dir_option
@json_option
def search(
    query: str,
    limit: int,
    max_tokens: int | None,
    type_: str | None,
    tier: str | None,
    include_archived: bool,
    include_superseded: bool,
    source: str | None,
    scope: str | None,
    since: Any,
    until: Any,
    offset: int,
    fleet: bool,
    url: str | None,
    agents: tuple[str, ...],
    weights: str | None,
    as_json: bool,
) -> None:
    """Find memories matching QUERY in the chain and the workspace, best first.

    Chain memories are marked provable (with their seq), workspace entries
    editable (with their path and line), untrusted ones untrusted. The
    content words of QUERY are searched for (any of them may match; "the",
    "what", "did" are not); FTS syntax in QUERY is treated as plain words.
    Recency counts only when QUERY asks for what is recent ("latest"). A
    query that matches nothing prints nothing. The chain memories returned
    have their access count raised.
    --type, --tier and --source search the chain only, --scope the
    workspace only; --since and --until filter both by date.

    With --fleet, the chains of every agent (or of --agent) in the fleet's
    database are searched instead, ranked as each memory.db ranks, and each
    result names its agent; the workspace is not searched.

    \b
    Example:
        memory-chain search "package manager"
        memory-chain search deploy --type decision --max-tokens 500 --json
        memory-chain search release --since 2026-11-01 --offset 10
        memory-chain search "staging database" --fleet --agent reviewer
    """
    given = {
        "limit": limit,
        "max_tokens": max_tokens,
        "type_": type_,
        "tier": tier,
        "include_archived": include_archived,
        "include_superseded": include_superseded,
        "weights": _weights(weights),
        "source": source,
        "offset": offset,
    }
    if fleet or url is not None:
        _fleet_search(query, url, list(agents) or None, as_json, scope, since, until, given)
        return
    if agents:
        from memory_chain.chain.format.errors import InputError

        raise InputError("--agent names a chain of the fleet: give --fleet too")
    from .plain import search_text

    text, note = search_text(
        data_dir(),
        open_workspace(),
        query,
        as_json=as_json,
        scope=scope,
        since=since.date() if since else None,
        until=until.date() if until else None,
        **given,
    )
    if note:
        click.echo(note, err=True)
    click.echo(text, nl=False)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--query", default=None, metavar="TEXT", help="Also rank by relevance to TEXT.")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Token budget (estimated as characters / 4).",
)
@click.option(
    "--no-verify",
    is_flag=True,
    help="Skip verifying the chain (the block then says nothing is vouched for).",
)
@click.option(
    "--char-cap",
    type=click.IntRange(min=100),
    default=32000,
    show_default=True,
    help="At most this many characters, whatever the token budget.",
)
@weights_option
@workspace_options
@dir_option
@json_option
def context(
    query: str | None,
    max_tokens: int,
    no_verify: bool,
    char_cap: int,
    weights: str | None,
    as_json: bool,
) -> None:
    """Print the session-start memory block (markdown) for an agent.

    It opens with an integrity line (did the chain verify, its size and
    head), then the chain's identity, MEMORY.md of user, project and local
    scope merged (local overrides project overrides user), committed
    decisions, today's and yesterday's daily notes, the topic, fact and
    episode files with their summaries, and the best of the rest of the
    chain, within the token budget. Chain entries are labelled provable,
    workspace lines editable; untrusted entries are only listed. If the
    chain does not verify, that is said first, no entry from the failing
    seq on is shown, and the exit code is 1.

    \b
    Example:
        memory-chain context
        memory-chain context --query "deploy the web app" --max-tokens 1000
    """
    from .plain import context_block

    text, code = context_block(
        data_dir(),
        open_workspace(),
        query=query,
        max_tokens=max_tokens,
        no_verify=no_verify,
        char_cap=char_cap,
        weights=_weights(weights),
        as_json=as_json,
    )
    click.echo(text, nl=False)
    if code:
        sys.exit(code)


@click.command(context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def reindex(as_json: bool) -> None:
    """Rebuild memory.db from the chain (usage and archive state are kept).

    The index is a cache: this is always safe, and deleting memory.db loses
    only usage statistics and GC decisions. With the semantic extra, the
    memories and workspace entries without a vector are embedded (a
    progress bar on a terminal); vectors already computed are kept.

    \b
    Example:
        memory-chain reindex
    """
    import time

    from memory_chain.index.db import Index

    t0 = time.perf_counter()
    with Index.open(data_dir(), sync_now=False) as index:
        result = index.rebuild()
        counts = index.counts()
        embedded = index.embed()  # semantic recall: what has no vector yet (kept ones stay)
        semantic = index.semantic
    info = {"entries": result.added, **counts, "seconds": round(time.perf_counter() - t0, 3)}
    if semantic:
        info["embedded"] = embedded
    if as_json:
        emit_json(info)
        return
    vectors = f"; embedded {embedded:,} texts for semantic recall" if semantic else ""
    click.echo(
        f"rebuilt the index from {result.added:,} entries in {info['seconds']} s: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + vectors
    )


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--dry-run", is_flag=True, help="Only report what would change.")
@click.option(
    "--ttl-hours",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help='Lifetime of ephemeral memories (default 24, or config.json "index.ephemeral_ttl_hours").',
)
@dir_option
@json_option
def gc(dry_run: bool, ttl_hours: float | None, as_json: bool) -> None:
    """Archive memories that are no longer relevant; expire old ephemeral ones.

    Relevance = 0.30 x exp(-age_days/7) + 0.40 x normalised access + 0.30 x
    importance; a memory is archived when relevance < 0.2 and it is older
    than 30 days; the committed tier never is. Only the index changes: the
    chain and its content stay as they are, and `restore` undoes it.

    \b
    Example:
        memory-chain gc --dry-run
        memory-chain gc --json
    """
    from memory_chain.index.gc import collect

    with _open_index() as index:
        result = collect(index, dry_run=dry_run, ttl_hours=ttl_hours)
    if as_json:
        emit_json(
            {
                "dry_run": result.dry_run,
                "examined": result.examined,
                "archived": result.archived,
                "expired": result.expired,
                "decisions": [d.as_dict() for d in result.decisions],
            }
        )
        return
    verb = "would archive" if dry_run else "archived"
    verb2 = "would expire" if dry_run else "expired"
    for d in result.decisions:
        click.echo(
            f"{d.seq:>6}  {d.action:<7}  {d.type}/{d.tier}  age {d.age_days:.1f} d  "
            f"relevance {d.relevance:.3f}"
        )
    click.echo(
        f"{verb} {result.archived}, {verb2} {result.expired} of {result.examined} active memories"
    )


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("seq", type=int, required=False)
@click.option("--all", "all_", is_flag=True, help="Restore every archived or expired memory.")
@dir_option
@json_option
def restore(seq: int | None, all_: bool, as_json: bool) -> None:
    """Make an archived or expired memory (SEQ, or --all) active again.

    \b
    Example:
        memory-chain restore 42
        memory-chain restore --all
    """
    from memory_chain.chain.format.errors import InputError
    from memory_chain.index.gc import restore as do_restore

    if (seq is None) == (not all_):
        raise InputError("give SEQ or --all (one of them)", hint="memory-chain restore 42")
    with _open_index() as index:
        restored = do_restore(index, None if all_ else seq)
    if as_json:
        emit_json({"restored": restored})
        return
    if restored:
        click.echo(f"restored {len(restored)}: seq {', '.join(str(s) for s in restored)}")
    elif seq is not None:
        click.echo(f"seq {seq} is already active: nothing to restore")
    else:
        click.echo("nothing to restore")


@click.command("index", context_settings=CONTEXT_SETTINGS)
@workspace_options
@dir_option
@click.option(
    "--url",
    envvar="MEMORY_CHAIN_INDEX_URL",
    metavar="URL",
    help="The fleet's PostgreSQL database (postgresql://user@host:port/db; default: "
    '$MEMORY_CHAIN_INDEX_URL, else config.json "index": {"url": ...}). A password is best '
    "kept in ~/.pgpass or $PGPASSWORD.",
)
@click.option("--rebuild", is_flag=True, help="Drop this chain's rows there and read them again.")
@click.option(
    "--list", "list_", is_flag=True, help="Only list the chains the database holds, by agent."
)
@click.option(
    "--vector-index",
    is_flag=True,
    help="Only build the HNSW index of the fleet's vectors (pgvector): a search across more "
    "than 100,000 memories then finds the nearest by it, approximately, in milliseconds "
    "instead of a scan; syncs pay for keeping it.",
)
@click.option(
    "--no-verify",
    is_flag=True,
    help="Do not verify the chain first (by default what was added since the last verify "
    "is checked, and a chain that does not verify is not synced).",
)
@json_option
def index_cmd(
    url: str | None,
    rebuild: bool,
    list_: bool,
    vector_index: bool,
    no_verify: bool,
    as_json: bool,
) -> None:
    """Bring this chain into a fleet's index on PostgreSQL.

    Many agents, on many hosts, each sync their own chain into one database,
    every row keyed by its chain's id, with the entries of their workspace's
    user and project scopes (never the local scope: this machine only). Run
    it as often as you like (only what is new is read) and from several
    processes at once. The database is a cache, like memory.db: chain.jsonl,
    content/ and the markdown files are only read, and a chain that does not
    verify is not synced. With the URL in config.json, the maintain job
    syncs it too. `memory-chain search QUERY --fleet` then searches every
    agent's memories there, ranked as memory.db ranks (specs/INDEX.md
    section 7); with the semantic
    extra and a server with pgvector, memory.db's vectors are copied too,
    and rank there as here. Needs the postgres extra: pip install
    'memory-chain[postgres]'.

    \b
    Example:
        memory-chain index --url postgresql://mc@127.0.0.1:5432/fleet
        memory-chain index --url postgresql://mc@127.0.0.1:5432/fleet --list
        memory-chain index --url postgresql://mc@127.0.0.1:5432/fleet --vector-index
    """
    from memory_chain.index import fleet

    if url is None:
        url = fleet.configured_url(data_dir())
    where = fleet.safe_url(url)
    if vector_index:
        took = fleet.vector_index(url)
        if as_json:
            emit_json({"url": where, "vector_index": took is not None, "seconds": took})
        elif took is None:
            click.echo(f"{where} keeps no vectors (no pgvector, or none synced yet): no index")
        else:
            click.echo(f"the HNSW index of {where}'s vectors is there ({took:.1f} s)")
        return
    if list_:
        found = fleet.chains(url)
        if as_json:
            emit_json(found)
            return
        if not found:
            click.echo(f"no chains in {where} yet")
        for c in found:
            click.echo(
                f"{c['agent'] or '(unnamed)'}  {c['chain_id'][:19]}…  {c['entries']:,} entries  "
                f"{_memories(c['memories'])} ({c['active']:,} shown, "
                f"{c['approved']:,} approved in review)"
            )
        return
    from memory_chain.chain.format.config import Layout

    result = fleet.sync(url, Layout(data_dir()), rebuild=rebuild, verify=not no_verify)
    from memory_chain.index.db import Index
    from memory_chain.workspace.fleet import sync_entries

    with Index.open(data_dir()) as index:
        ws = sync_entries(url, result.chain_id, index.conn, open_workspace(), rebuild=rebuild)
    if as_json:
        emit_json({**result._fields(), "url": where, "workspace": ws._fields()})
        return
    what = "read again" if result.rebuilt else "indexed"
    click.echo(
        f"{what} {result.added:,} new entries of agent {result.agent or '(unnamed)'} "
        f"(chain {result.chain_id[:19]}…) into {where}: {_memories(result.memories)} there"
        + (f"; {result.purged:,} texts withdrawn by redactions" if result.purged else "")
        + (f"; {result.gc:,} GC decisions of this host mirrored" if result.gc else "")
        + (f"; {result.vectors:,} vectors copied" if result.vectors else "")
    )
    click.echo(
        f"workspace: {ws.entries:,} {'entry' if ws.entries == 1 else 'entries'} of the user "
        "and project scopes there"
        + (f"; {ws.parsed:,} files read again" if ws.parsed else "")
        + (f"; {ws.removed:,} files gone" if ws.removed else "")
        + (f"; {ws.withheld:,} entries holding a secret kept here" if ws.withheld else "")
    )
    if result.vectors is None:
        click.echo(
            "memory.db's vectors were not copied: the server has no pgvector (or this user "
            "may not CREATE EXTENSION vector), so the fleet's search is lexical"
        )
    elif result.unembedded:
        click.echo(
            f"{result.unembedded:,} memories have no vector yet: `memory-chain reindex` (or the "
            "maintain job) embeds them, and the next sync copies them"
        )


def _memories(n: int) -> str:
    return f"{n:,} memory" if n == 1 else f"{n:,} memories"

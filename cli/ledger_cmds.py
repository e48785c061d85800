"""init, add, show, log, stats, redact."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

import click

from .common import (
    CONTEXT_SETTINGS,
    MAX_INPUT_BYTES,
    arg_bytes,
    data_dir,
    dir_option,
    emit_json,
    json_option,
    open_ledger,
    passphrase_source,
    read_stdin,
)

# Copies of chain.entry's enums: importing chain here would slow --help (a test keeps
# them equal).
TYPES = ("memory", "identity", "decision", "commitment", "preference", "fact", "lesson", "episode")
TIERS = ("committed", "relationship", "ephemeral")
SOURCES = ("manual", "auto", "curation")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--name", default="agent", show_default=True, help="The agent's name (in genesis).")
@click.option(
    "--key-mode",
    type=click.Choice(["raw", "encrypted", "env"]),
    default="raw",
    show_default=True,
    help="raw: key file (0600); encrypted: passphrase; env: $MEMORY_CHAIN_SIGNING_KEY.",
)
@dir_option
@json_option
def init(name: str, key_mode: str, as_json: bool) -> None:
    """Create a data directory: a signing key, config and the genesis entry.

    \b
    Example:
        memory-chain init --name my-agent
        MEMORY_CHAIN_PASSPHRASE=... memory-chain init --key-mode encrypted
    """
    from memory_chain.chain.store.ledger import Ledger

    ledger = Ledger.init(data_dir(), name=name, key_mode=key_mode, passphrase=passphrase_source)
    info = {
        "dir": str(ledger.layout.root),
        "chain_id": ledger.config.chain_id,
        "key": ledger.signer().key_id,
        "key_mode": key_mode,
    }
    if as_json:
        emit_json(info)
    else:
        click.echo(f"initialised {info['dir']}\nchain id {info['chain_id']}\nkey {info['key']}")


def _parse_meta(pairs: tuple[str, ...]) -> dict[str, Any]:
    import orjson

    from memory_chain.chain.format.errors import InputError

    meta: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--meta {pair!r} is not KEY=VALUE")
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = raw  # plain text
        if isinstance(value, float) and raw.strip().lstrip("-").isdigit():
            raise InputError(
                f"--meta {key}={raw}: integers in signed data are within +-(2**53 - 1)",
                hint=f"store it as text: --meta '{key}=\"{raw}\"'",
            )
        if isinstance(value, float):
            raise InputError(
                f"--meta {key}={raw}: floats are not allowed in signed data",
                hint=f"store it as text: --meta '{key}=\"{raw}\"'",
            )
        meta[key] = value
    return meta


def _stdin(limit: int = MAX_INPUT_BYTES) -> bytes:
    return read_stdin(limit)


def _read_source(text: str) -> bytes:
    """TEXT as given, or stdin for "-" without its trailing newline(s)."""
    if text == "-":
        return _stdin().rstrip(b"\r\n")
    return arg_bytes(text)


def _batch_items(lines: Iterable[bytes]) -> Iterator[Any]:
    """The NewEntry of each batch line, as they are read (a bad line: a one-line InputError)."""
    import orjson

    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.store.ledger import NewEntry

    allowed = {"content", "type", "tier", "source", "importance", "meta"}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise InputError(f"batch line {n}: not valid UTF-8 JSON") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("content"), str):
            raise InputError(f'batch line {n}: want an object with a "content" string')
        unknown = obj.keys() - allowed
        if unknown:
            raise InputError(f"batch line {n}: unknown field(s) {', '.join(sorted(unknown))}")
        try:
            content = obj["content"].encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"batch line {n}: content is not valid Unicode") from None
        yield NewEntry(
            content=content,
            type=obj.get("type", "memory"),
            tier=obj.get("tier", "relationship"),
            source=obj.get("source", "manual"),
            importance=obj.get("importance"),
            meta=obj.get("meta", {}),
        )


def _batch_lines(path: str) -> Iterator[bytes]:
    """The lines of a batch file ("-": stdin), read a piece at a time (any size, in bounded
    memory); a file that cannot be read is a one-line InputError."""
    from memory_chain.chain.format.errors import InputError

    shown = "stdin" if path == "-" else path
    try:
        f = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        yield from f
    except OSError as exc:
        raise InputError(f"cannot read {shown}: {exc.strerror}") from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _emit_appended(ledger: Any, start: int, end: int) -> None:
    """What `add --batch --json` prints: the appended entries, read back from the chain,
    as emit_json prints a list, one entry at a time."""
    import orjson

    from memory_chain.chain.format.canonical import b3

    click.echo("[")
    first = True
    for line in ledger.iter_lines(start, end):
        e = orjson.loads(line)
        one = {
            "seq": e["seq"],
            "hash": b3(line.rstrip(b"\n")),
            "ts": e["ts"],
            "content": e["content"],
        }
        text = orjson.dumps(one, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n  ")
        click.echo(("  " if first else ",\n  ") + text, nl=False)
        first = False
    click.echo("\n]")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("text", required=False)
@click.option(
    "--type",
    "type_",
    default="memory",
    show_default=True,
    metavar="TYPE",
    help=f"One of: {', '.join(TYPES)}.",
)
@click.option(
    "--tier",
    default="relationship",
    show_default=True,
    metavar="TIER",
    help=f"One of: {', '.join(TIERS)}.",
)
@click.option(
    "--source",
    default="manual",
    show_default=True,
    metavar="SOURCE",
    help=f"One of: {', '.join(SOURCES)}.",
)
@click.option(
    "--importance",
    type=int,
    default=None,
    metavar="0..100",
    help="Importance (default: by type and tier).",
)
@click.option(
    "--meta",
    multiple=True,
    metavar="KEY=VALUE",
    help="Metadata; VALUE is JSON (integer, string, list, object) or plain text.",
)
@click.option(
    "--batch",
    "batch",
    metavar="FILE|-",
    help="Add JSON lines from FILE (- for stdin), all or nothing.",
)
@click.option(
    "--supersedes",
    type=click.IntRange(min=1),
    default=None,
    metavar="SEQ",
    help="This memory replaces entry SEQ (kept in the chain, no longer injected).",
)
@click.option(
    "--allow-secret",
    is_flag=True,
    help="Commit content that looks like a secret anyway (permanently; warns on stderr).",
)
@click.option(
    "--origin",
    type=click.Choice(["person", "agent", "capture", "tool", "quoted"]),
    default=None,
    help="Where the words came from, signed as metadata (default: person at a terminal, "
    "agent under an agent's shell, $MEMORY_CHAIN_ORIGIN when set).",
)
@dir_option
@json_option
def add(
    text: str | None,
    type_: str,
    tier: str,
    source: str,
    importance: int | None,
    meta: tuple[str, ...],
    batch: str | None,
    supersedes: int | None,
    allow_secret: bool,
    origin: str | None,
    as_json: bool,
) -> None:
    """Add a memory (TEXT, or - for stdin) as a signed entry.

    Content from stdin loses its trailing newline(s), so that piped and
    quoted text of the same words are the same memory. Content or metadata
    that looks like a secret (an API key, a private key, a password) is
    refused with exit 2 and nothing is written, unless --allow-secret.

    \b
    Example:
        memory-chain add "Use pnpm, not npm" --type decision --tier committed
        echo "Deploys go out on Tuesdays" | memory-chain add - --type fact
        memory-chain add --batch memories.jsonl
    Batch lines look like {"content": "...", "type": "fact", "meta": {"k": 1}}.
    """
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.store.ledger import NewEntry
    from memory_chain.workspace.provenance import terminal_origin

    if batch is not None:
        if text is not None:
            raise InputError("give TEXT or --batch, not both")
        items: Iterable[Any] = (_with_origin(i, origin) for i in _batch_items(_batch_lines(batch)))
        if allow_secret:
            items = _warned(items)
        ledger = open_ledger()
        done = ledger.add_stream(items, allow_secret=allow_secret)
        if as_json:
            _emit_appended(ledger, done.start, done.end)
        else:
            last = done.first + done.entries - 1
            click.echo(f"added {done.entries} entries: seq {done.first}..{last}")
        _note_unembedded(done.entries)
        return
    if text is None:
        raise InputError("nothing to add", hint="give TEXT, - for stdin, or --batch FILE")
    meta_obj = _parse_meta(meta)
    meta_obj.setdefault("origin", origin or terminal_origin())
    if supersedes is not None:
        _check_supersedes(supersedes)
        meta_obj["supersedes"] = supersedes
    item = NewEntry(
        content=_read_source(text),
        type=type_,
        tier=tier,
        source=source,
        importance=importance,
        meta=meta_obj,
    )
    if allow_secret:
        _warn_secret(item)
    r = open_ledger().add(item, allow_secret=allow_secret)
    if as_json:
        emit_json({"seq": r.seq, "hash": r.hash, "ts": r.ts, "content": r.content})
    else:
        click.echo(f"added seq {r.seq} {r.hash}")


def _note_unembedded(added: int) -> None:
    """After a batch larger than a search embeds first (index.db.CATCH_UP), with recall
    by meaning on: say on stderr that search stays lexical until `reindex` embeds them
    (index/vectors.py; the batch is not embedded here: add stays fast)."""
    from memory_chain.index.db import CATCH_UP

    if added <= CATCH_UP:
        return
    from memory_chain.index import vectors
    from memory_chain.index.settings import semantic_setting

    if vectors.enabled(semantic_setting(data_dir())):
        click.echo(
            f"note: search embeds at most {CATCH_UP:,} new memories first; until "
            f"`memory-chain reindex` (or the maintain job) embeds these {added:,}, "
            "recall is lexical",
            err=True,
        )


def _with_origin(item: Any, origin: str | None) -> Any:
    """A batch item with the origin its line or --origin gives (else the terminal's)."""
    from dataclasses import replace

    from memory_chain.workspace.provenance import terminal_origin

    if "origin" in item.meta:
        return item
    return replace(item, meta={**item.meta, "origin": origin or terminal_origin()})


def _check_supersedes(seq: int) -> None:
    """--supersedes names an existing memory (asked of the index: no chain scan)."""
    from memory_chain.index.db import Index

    with Index.open(data_dir()) as index:  # synced with the chain on open
        index.require_memory(seq, "--supersedes")


def _warned(items: Iterable[Any]) -> Iterator[Any]:
    """Batch items as they come, each warned about by _warn_secret."""
    for n, item in enumerate(items, 1):
        _warn_secret(item, f"item {n}, ")
        yield item


def _warn_secret(item: Any, where: str = "") -> None:
    """--allow-secret is loud: name what the gate would have refused."""
    from memory_chain.chain.format.canonical import canonical
    from memory_chain.chain.format.secrets import scan

    for text in (item.content.decode("utf-8", "replace"), canonical(item.meta).decode()):
        for f in scan(text):
            click.echo(
                f"warning: --allow-secret: committing a {f.kind} ({where}{f.where(text)}) "
                "to the chain, permanently",
                err=True,
            )


def _preview(view: Any, width: int = 72) -> str:
    if view.redacted_by is not None:
        return f"[redacted by seq {view.redacted_by}]"
    e = view.entry
    if e["type"] == "genesis":
        return f"genesis of {e['meta']['name']}"
    if e["type"] == "redaction":
        return f"redacts seq {e['meta']['target']}: {e['meta']['reason']}"
    if e["type"] == "key-rotation":
        return f"rotates to {e['meta']['new_key']}"
    if view.text is None:
        return "[content missing]"
    flat = " ".join(view.text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("seq", type=int)
@click.option("--content", "with_content", is_flag=True, help="Also print the content.")
@dir_option
@json_option
def show(seq: int, with_content: bool, as_json: bool) -> None:
    """Show the entry at SEQ.

    \b
    Example:
        memory-chain show 3 --content
    """
    from memory_chain.chain.store.views import entry_view

    view = entry_view(open_ledger(), seq, with_content=with_content)
    if as_json:
        emit_json(view.as_dict())
        return
    import orjson

    for key, value in view.entry.items():
        shown = orjson.dumps(value).decode() if isinstance(value, (dict, list)) else value
        click.echo(f"{key:>10}  {shown}")
    if view.redacted_by is not None:
        click.echo(f"{'redacted':>10}  by seq {view.redacted_by}")
    if with_content and view.text is not None:
        click.echo("")
        click.echo(view.text)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "--type",
    "type_",
    type=click.Choice((*TYPES, "genesis", "redaction", "key-rotation")),
    default=None,
    help="Only this type.",
)
@click.option("--tier", type=click.Choice(TIERS), default=None, help="Only this tier.")
@dir_option
@json_option
def log(limit: int, type_: str | None, tier: str | None, as_json: bool) -> None:
    """List the newest entries, newest first.

    \b
    Example:
        memory-chain log --limit 5 --type decision
    """
    from memory_chain.chain.store.views import recent

    views = recent(open_ledger(), limit=limit, type_=type_, tier=tier)
    if as_json:
        emit_json([v.as_dict() for v in views])
        return
    for v in views:
        e = v.entry
        click.echo(f"{e['seq']:>6}  {e['ts'][:19]}Z  {e['type']}/{e['tier']}  {_preview(v)}")


@click.command(context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def stats(as_json: bool) -> None:
    """Count entries by type, tier and source; show sizes, head and key.

    "index" counts the memories of the index (memory.db) by status: active,
    archived, expired and redacted.

    \b
    Example:
        memory-chain stats --json
    """
    from memory_chain.chain.store.views import chain_stats

    ledger = open_ledger()
    info = chain_stats(ledger)
    info["index"] = _index_info(ledger.layout.root)
    if as_json:
        emit_json(info)
        return
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
        click.echo(f"{key:>12}  {value}")


def _index_info(root: Any) -> dict[str, Any]:
    from memory_chain.index.db import Index

    with Index.open(root) as index:
        return index.info()


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("seq", type=int)
@click.option("--reason", required=True, help="Why (stored in the chain in clear text).")
@dir_option
@json_option
def redact(seq: int, reason: str, as_json: bool) -> None:
    """Withdraw the content of entry SEQ; the chain still verifies.

    A redaction entry is appended, then the content's record in its pack is
    erased (zeroed in place) unless another live entry shares it.
    Committed-tier content cannot be redacted.

    \b
    Example:
        memory-chain redact 7 --reason "contained a password"
    """
    from memory_chain.chain.lifecycle.redact import redact as do_redact

    ledger = open_ledger()
    r = do_redact(ledger, seq, reason)
    from memory_chain.index.db import purge_redacted

    purge_redacted(ledger.layout.root)  # the index's copy of the text goes at once
    erased_in = [f"content/{where}" for where in r.erased_in]
    info = {
        "target": r.target,
        "seq": r.entry.seq if r.entry else None,
        "content": r.content,
        "blob_removed": r.blob_removed,
        "erased_in": erased_in,
        "blob_shared": r.blob_shared,
    }
    if as_json:
        emit_json(info)
        return
    done = "finished an earlier redaction of" if r.entry is None else "redacted"
    blob = (
        f"its record erased (zeroed) in {' and '.join(erased_in)}"
        if r.blob_removed
        else (
            "its content kept: another entry holds the same content"
            if r.blob_shared
            else "its content was already gone"
        )
    )
    click.echo(f"{done} seq {r.target}; {blob}")

"""publish, witness, verify --tiles: the chain as a C2SP tlog-tiles log, and its witnesses."""

from __future__ import annotations

import base64
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import CONTEXT_SETTINGS, dir_option, emit_json, json_option, open_ledger

if TYPE_CHECKING:
    from memory_chain.chain.audit.publishing import Checked
    from memory_chain.chain.log.cosignature import VerifierKey


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode() if data is not None else None


def _when(timestamp: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def witness_keys(values: tuple[str, ...]) -> list[VerifierKey]:
    """--witness values as cosignature verifier keys (a one-line error for a bad one)."""
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.cosignature import COSIGNATURE, parse_vkey

    out = []
    for value in values:
        try:
            out.append(parse_vkey(_key_text(value), COSIGNATURE))
        except ValueError as exc:
            raise InputError(
                str(exc), hint="give name+hash+key, as `memory-chain witness keygen` prints it"
            ) from None
    return out


def _key_text(value: str) -> str:
    """A verifier key given as its text or as a file holding it."""
    if "+" not in value and Path(value).is_file():
        return Path(value).read_text(encoding="utf-8").strip()
    return value


def _log_key(value: str | None) -> VerifierKey | None:
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.cosignature import NOTE_ED25519, parse_vkey

    if value is None:
        return None
    try:
        return parse_vkey(_key_text(value), NOTE_ED25519)
    except ValueError as exc:
        raise InputError(str(exc), hint="give the log key `memory-chain publish` printed") from None


def witness_options(f: Any) -> Any:
    f = click.option(
        "--quorum",
        type=click.IntRange(min=0),
        default=None,
        help="How many of the --witness keys must have cosigned (default: all).",
    )(f)
    return click.option(
        "--witness",
        "witnesses",
        multiple=True,
        metavar="VKEY|FILE",
        help="A witness's cosignature key (name+hash+key); repeat for several.",
    )(f)


def checked_json(c: Checked) -> dict[str, Any]:
    return {
        "ok": c.ok,
        "folder": str(c.folder),
        "origin": c.origin or None,
        "size": c.size,
        "root": _b64(c.root) if c.root else None,
        "blake3_root": _b64(c.blake3_root),
        "key": c.key,
        "witnesses": [
            {
                "name": name,
                "cosigned": size == c.size,
                "size": size,
                "time": _when(t) if t is not None else None,
            }
            for name, size, t in c.witnesses
        ],
        "failure": None if c.ok else {"reason": c.reason, "message": c.failure},
    }


def print_checked(c: Checked) -> None:
    """The human report of a published folder (verify --tiles, verify --published)."""
    if c.size:
        click.echo(
            f"published: {c.folder}: {c.origin} at size {c.size}, SHA-256 root {_b64(c.root)}"
        )
    if c.key is not None:
        click.echo(f"  signed by the chain's key {c.key}; the entries verify as the chain")
    for name, size, t in c.witnesses:
        if size is None or t is None:
            click.echo(f"  witness {name}: has not cosigned this log")
        elif size == c.size:
            click.echo(f"  witness {name}: saw size {size}, cosigned {_when(t)}")
        else:
            click.echo(f"  witness {name}: saw size {size} of {c.size}, cosigned {_when(t)}")
    if not c.ok:
        click.echo(f"FAILED: {c.failure} ({c.reason})", err=True)


def where_of(text: str, *, existing: bool = True) -> Any:
    """A published log's place: a folder, or s3://bucket/prefix (the `s3` extra). A folder
    to read must exist (a one-line error, exit 2, rather than a log that fails)."""
    from memory_chain.chain.format.errors import InputError
    from memory_chain.integrations.s3_store import place_of

    folder = place_of(text)
    if not isinstance(folder, Path):
        return folder
    if existing and not folder.is_dir():
        raise InputError(f"{text} is not a folder", hint="give the folder `publish` wrote")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{text} exists and is not a folder")
    return folder


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("folder")
@click.option(
    "--key-out",
    metavar="FILE",
    default=None,
    help="Also write the log's verifier key to FILE, to hand to witnesses and auditors.",
)
@click.option(
    "--witness",
    "witnesses",
    multiple=True,
    metavar="VKEY|FILE",
    help="A witness to ask for a cosignature (its key); one per --witness-url, in order.",
)
@click.option(
    "--witness-url",
    "witness_urls",
    multiple=True,
    metavar="URL",
    help="That witness's submission prefix (tlog-witness add-checkpoint).",
)
@dir_option
@json_option
def publish(
    folder: str,
    key_out: str | None,
    witnesses: tuple[str, ...],
    witness_urls: tuple[str, ...],
    as_json: bool,
) -> None:
    """Publish the chain as a C2SP tlog-tiles log in FOLDER, for witnesses and monitors.

    Verifies the chain, writes the tiles and entry bundles of its SHA-256
    companion tree (the same entries as the chain's own BLAKE3 tree) and a
    checkpoint signed by the chain's key. Serve FOLDER as static files, or
    copy it to any object store. Publishing again adds what is new; a folder
    holding a larger log, or one that is not a prefix of this chain, is
    refused. Prints the log's verifier key, for witnesses and other tools.

    \b
    With --witness and --witness-url, the new checkpoint is sent to each
    witness (c2sp.org/tlog-witness) with a consistency proof, and each
    cosignature that comes back is added to it; a witness that refuses (the
    log rolled back or forked, or a key it does not know) makes the command
    exit 1, the folder published without that cosignature.

    \b
    FOLDER may be s3://bucket/prefix (the `s3` extra; AWS_ENDPOINT_URL for a
    store that is not AWS): the same objects, the checkpoint put last.

    \b
    Example:
        memory-chain publish ./log --key-out log.vkey
        memory-chain publish s3://agent-logs/alice
        memory-chain publish ./log --witness w1.vkey --witness-url http://127.0.0.1:8770
        memory-chain verify --tiles ./log --log-key log.vkey
    """
    from memory_chain.chain.audit.publishing import ask_witnesses
    from memory_chain.chain.audit.publishing import publish as run
    from memory_chain.chain.format.errors import InputError

    if len(witnesses) != len(witness_urls):
        raise InputError("give one --witness-url for each --witness, in the same order")
    keys = witness_keys(witnesses)
    where = where_of(folder, existing=False)
    done = run(open_ledger(), where)
    if key_out is not None:
        Path(key_out).write_text(done.vkey + "\n", encoding="utf-8")
    asked = []
    if keys:
        from memory_chain.integrations.witness_http import submitter

        asked = ask_witnesses(
            where, [(k, submitter(url)) for k, url in zip(keys, witness_urls, strict=True)]
        )
    cp = done.checkpoint
    refused = [a for a in asked if not a.ok]
    if as_json:
        emit_json(
            {
                "folder": done.folder,
                "origin": cp.origin,
                "size": cp.size,
                "root": _b64(cp.root),
                "new": done.new,
                "written": done.written,
                "log_key": done.vkey,
                "witnesses": [{"name": a.witness, "ok": a.ok, "message": a.message} for a in asked],
            }
        )
    else:
        state = "new checkpoint" if done.new else "unchanged since the last publish"
        click.echo(f"{state}: {cp.origin} at size {cp.size} ({done.written} files written)")
        click.echo(f"log key: {done.vkey}")
        for a in asked:
            click.echo(f"  witness {a.witness}: {a.message}", err=not a.ok)
    if refused:
        sys.exit(1)


def verify_folder(
    folder: str,
    log_key: str | None,
    witnesses: tuple[str, ...],
    quorum: int | None,
    as_json: bool,
) -> None:
    """`verify --tiles FOLDER`: a published log checked with nothing else (exit 1 if not)."""
    from memory_chain.chain.audit.publishing import check_published

    checked = check_published(
        where_of(folder),
        log_key=_log_key(log_key),
        witnesses=witness_keys(witnesses),
        quorum=quorum,
    )
    if as_json:
        emit_json(checked_json(checked))
    else:
        print_checked(checked)
    if not checked.ok:
        sys.exit(1)


@click.group(context_settings=CONTEXT_SETTINGS)
def witness() -> None:
    """Act as a witness for someone else's published log (c2sp.org/tlog-witness).

    A witness remembers the largest checkpoint it cosigned for each log and
    cosigns a new one only if it extends it: a log rolled back or forked is
    refused, so its checkpoint lacks the witness's cosignature.

    \b
    Example:
        memory-chain witness keygen witness.example/w1 --out w1.key > w1.vkey
        memory-chain witness cosign ./log --key w1.key --log-key log.vkey
        memory-chain witness serve --key w1.key --log log.vkey
    """


@witness.command("keygen", context_settings=CONTEXT_SETTINGS)
@click.argument("name")
@click.option("--out", "out", required=True, metavar="FILE", help="Where to write the private key.")
def keygen(name: str, out: str) -> None:
    """Make a witness key named NAME (a URL-like name such as witness.example/w1).

    Writes the private key to FILE (mode 0600, never overwritten) and prints
    the verifier key that log owners and auditors pass as --witness.

    \b
    Example:
        memory-chain witness keygen witness.example/w1 --out w1.key > w1.vkey
    """
    import os

    from nacl import utils

    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.cosignature import COSIGNATURE, private_key_text, vkey_text

    seed = utils.random(32)
    try:
        text = private_key_text(name, COSIGNATURE, seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise InputError(f"{out} exists; a witness key is never overwritten") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    from nacl.signing import SigningKey

    click.echo(vkey_text(name, COSIGNATURE, bytes(SigningKey(seed).verify_key)))


@witness.command("serve", context_settings=CONTEXT_SETTINGS)
@click.option("--key", "key_file", required=True, metavar="FILE", help="The witness's key file.")
@click.option(
    "--log",
    "logs",
    multiple=True,
    required=True,
    metavar="VKEY|FILE",
    help="A log this witness follows (its key, as `publish` printed it); repeat for several.",
)
@click.option(
    "--state",
    metavar="FILE",
    default=None,
    help="What this witness cosigned before (default: the key file's name + .state.json).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8770, help="The port on 127.0.0.1 (0: free)."
)
def serve(key_file: str, logs: tuple[str, ...], state: str | None, port: int) -> None:
    """Serve c2sp.org/tlog-witness's add-checkpoint on 127.0.0.1 until Ctrl-C.

    Prints the submission prefix (the URL a log passes as --witness-url) on
    its first line. A checkpoint of a log not given with --log is answered
    404; one that does not extend what this witness cosigned before, 409 or
    422: it is never cosigned.

    \b
    Example:
        memory-chain witness serve --key w1.key --log log.vkey --port 8770
    """
    from memory_chain.chain.log.cosigner import Cosigner
    from memory_chain.integrations.witness_http import serve as run

    name, seed = _witness_key(key_file)
    followed = [k for k in (_log_key(v) for v in logs) if k is not None]
    cosigner = Cosigner(name, seed, followed, _state_path(key_file, state))

    def ready(url: str) -> None:
        click.echo(url)
        sys.stdout.flush()
        click.echo(f"witness {name}: add-checkpoint at {url}; Ctrl-C stops", err=True)

    run(cosigner, port=port, ready=ready)


def _witness_key(key_file: str) -> tuple[str, bytes]:
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.cosignature import COSIGNATURE, parse_private_key

    try:
        return parse_private_key(Path(key_file).read_text(encoding="utf-8"), COSIGNATURE)
    except OSError as exc:
        raise InputError(f"cannot read {key_file}: {exc.strerror}") from None
    except ValueError as exc:
        raise InputError(f"{key_file}: {exc}") from None


def _state_path(key_file: str, state: str | None) -> Path:
    return Path(state) if state else Path(key_file + ".state.json")


@witness.command("cosign", context_settings=CONTEXT_SETTINGS)
@click.argument("folder")
@click.option("--key", "key_file", required=True, metavar="FILE", help="The witness's key file.")
@click.option(
    "--log-key", required=True, metavar="VKEY|FILE", help="The log's key, as `publish` printed it."
)
@click.option(
    "--state",
    metavar="FILE",
    default=None,
    help="What this witness cosigned before (default: the key file's name + .state.json).",
)
@json_option
def cosign(folder: str, key_file: str, log_key: str, state: str | None, as_json: bool) -> None:
    """Cosign FOLDER's checkpoint if it extends what this witness cosigned before.

    Exit 0 when cosigned, 1 when refused (the log was rolled back or forked,
    or the checkpoint is not signed by the log key), 2 on bad input.

    \b
    Example:
        memory-chain witness cosign ./log --key w1.key --log-key log.vkey
    """
    from memory_chain.chain.audit.publishing import cosign as run

    name, seed = _witness_key(key_file)
    log = _log_key(log_key)
    assert log is not None
    done = run(
        where_of(folder), name=name, seed=seed, log_key=log, state=_state_path(key_file, state)
    )
    cp = done.checkpoint
    if as_json:
        emit_json(
            {
                "origin": cp.origin,
                "size": cp.size,
                "previous": done.previous,
                "time": _when(done.timestamp),
                "witness": name,
            }
        )
        return
    since = "first sight" if done.previous is None else f"extends size {done.previous}"
    click.echo(f"cosigned {cp.origin} at size {cp.size} as {name} ({since})")

"""export, import, and `verify --bundle` (verify_bundle_file)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .common import (
    CONTEXT_SETTINGS,
    data_dir,
    dir_option,
    emit_json,
    json_option,
    open_ledger,
    trusted_key_arg,
)

if TYPE_CHECKING:
    from memory_chain.chain.lifecycle.archive import ArchiveReport

NO_CONTENT_NOTE = "content not included: blobs not checked"


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--no-content",
    is_flag=True,
    help="Leave the blobs out (verifying the archive then skips the content checks).",
)
@click.option(
    "--from",
    "from_seq",
    type=click.IntRange(min=0),
    default=None,
    metavar="SEQ",
    help="First entry to export (default: 0).",
)
@click.option(
    "--to",
    "to_seq",
    type=click.IntRange(min=0),
    default=None,
    metavar="SEQ",
    help="Last entry to export (default: the last one).",
)
@dir_option
@json_option
def export(
    file: str, no_content: bool, from_seq: int | None, to_seq: int | None, as_json: bool
) -> None:
    """Write the chain to one archive FILE: lines, blobs, checkpoints, keys, anchors.

    The archive is a tar file (gzip when FILE ends in .gz or .tgz) that
    `memory-chain verify --bundle FILE` checks with no data directory and
    `memory-chain import` turns into a new one. With --from/--to only those
    entries are exported, with inclusion proofs in a signed checkpoint that
    covers them (one is made if none does; that needs the signing key). The
    archive is verified before it is written; FILE is never overwritten.

    \b
    Example:
        memory-chain export backup.tar.gz
        memory-chain export audit.tar --from 100 --to 180 --no-content
    """
    from memory_chain.chain.lifecycle.archive_export import export_archive

    from .output import output_target

    output_target(file)  # the checks every output gets (export itself never overwrites)
    s = export_archive(
        open_ledger(), file, content=not no_content, from_seq=from_seq, to_seq=to_seq
    )
    if as_json:
        emit_json(
            {
                "path": str(s.path),
                "chain_id": s.chain_id,
                "from": s.first,
                "to": s.last,
                "entries": s.entries,
                "chain_size": s.chain_size,
                "complete": s.complete,
                "content": s.content,
                "blobs": s.blobs,
                "redacted_blobs": s.redacted_blobs,
                "checkpoints": s.checkpoints,
                "anchors": s.anchors,
                "bytes": s.bytes,
            }
        )
        return
    scope = "the whole chain" if s.complete else f"seq {s.first}..{s.last} of {s.chain_size}"
    click.echo(
        f"exported {s.entries} entries ({scope}), {s.blobs} blobs, "
        f"{s.checkpoints} checkpoint(s) to {s.path}"
    )
    if not s.content:
        click.echo("content not included (--no-content)")


@click.command("import", context_settings=CONTEXT_SETTINGS)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--trusted-key",
    metavar="KEY|FILE",
    help="Also require the chain to be pinned to this key (ed25519:<hex>, or a .pub file).",
)
@click.option("--chain-id", metavar="ID", help="Also require this chain id (b3:<hex>).")
@dir_option
@json_option
def import_(file: str, trusted_key: str | None, chain_id: str | None, as_json: bool) -> None:
    """Make a new data directory (--dir) from a whole export FILE, after verifying all of it.

    Nothing is written unless every line, blob and checkpoint verifies; the
    first failure is reported. The directory must not exist or be empty.
    The imported chain has no secret key: it is read-only until one is
    added by hand (the error of a write says how).

    \b
    Example:
        memory-chain import backup.tar.gz --dir ./restored
        memory-chain verify --dir ./restored
    """
    from memory_chain.chain.lifecycle.archive_import import import_archive

    dest = data_dir()
    report = import_archive(file, dest, trusted_key=trusted_key_arg(trusted_key), chain_id=chain_id)
    if as_json:
        emit_json(
            {
                "dir": str(dest),
                "chain_id": report.chain_id,
                "entries": report.size,
                "head": report.head,
                "key": report.key,
                "blobs": report.blobs,
                "checkpoints": report.checkpoints,
                "read_only": True,
            }
        )
        return
    click.echo(
        f"imported {report.size} entries into {dest} (chain {report.chain_id}); "
        "read-only: no secret key"
    )


def _report_json(report: ArchiveReport) -> dict[str, Any]:
    from memory_chain.chain.lifecycle.archive import STEP_ARCHIVE

    f = report.failure
    return {
        "ok": report.ok,
        "entries": report.size - report.first if report.ok else None,
        "from": report.first,
        "to": report.last,
        "complete": report.complete,
        "content_checked": report.content_checked,
        "head": report.head,
        "chain_id": report.chain_id,
        "key": report.key,
        "root": report.root.hex() if report.root is not None else None,
        "checkpoints": report.checkpoints,
        "blobs": report.blobs,
        "failure": None
        if f is None
        else {
            "seq": None if f.step == STEP_ARCHIVE else f.seq,
            "step": f.step,
            "reason": f.reason,
            "message": f.message,
        },
    }


def verify_bundle_file(
    path: str, trusted_key: str | None, chain_id: str | None, as_json: bool
) -> None:
    """`verify --bundle FILE`: verify an export with nothing else; exit 0, 1 or 2.

    ``trusted_key`` is the --trusted-key value as given (a key or a .pub file).
    """
    from memory_chain.chain.lifecycle.archive import STEP_ARCHIVE
    from memory_chain.chain.lifecycle.archive_check import verify_archive

    report = verify_archive(path, trusted_key=trusted_key_arg(trusted_key), chain_id=chain_id)
    f = report.failure
    if as_json:
        emit_json(_report_json(report))
    if report.ok and not report.content_checked:
        click.echo(NO_CONTENT_NOTE, err=True)
    if f is not None:
        if not as_json:
            where = "" if f.step == STEP_ARCHIVE else f" at seq {f.seq}"
            click.echo(f"FAILED{where}: {f.message} (step {f.step}, {f.reason})", err=True)
        sys.exit(1)
    if not as_json:
        scope = (
            "the whole chain"
            if report.complete
            else f"seq {report.first}..{report.last}, proven in a checkpoint"
        )
        click.echo(
            f"ok: export of {report.size - report.first} entries verified ({scope}); "
            f"head {report.head}"
        )

"""verify."""

from __future__ import annotations

import sys

import click

from .anchor_cmds import anchor_json, print_anchor_report
from .common import (
    CONTEXT_SETTINGS,
    dir_option,
    emit_json,
    json_option,
    open_ledger,
    trusted_key_arg,
)
from .publish_cmds import checked_json, print_checked, witness_keys, witness_options


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--from",
    "from_seq",
    type=click.IntRange(min=0),
    default=0,
    help="Trust entries before SEQ; fully check from SEQ on.",
    metavar="SEQ",
)
@click.option(
    "--trusted-key",
    metavar="KEY|FILE",
    help="Pin the chain to this key (ed25519:<hex>, or a .pub file): the genesis key "
    "or any key the chain rotated to.",
)
@click.option("--chain-id", metavar="ID", help="The chain id (b3:<hex>) must be this.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes to verify with (default: all cores for a large chain).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Check every entry and blob again, ignoring the verification cache.",
)
@click.option(
    "--bundle",
    metavar="FILE",
    default=None,
    help="Verify an export archive (memory-chain export) instead of a data directory.",
)
@click.option(
    "--anchors",
    "with_anchors",
    is_flag=True,
    help="Then check every EVM anchor too, as `memory-chain anchor verify` does.",
)
@click.option(
    "--workspace",
    "with_workspace",
    is_flag=True,
    help="Then check the workspace against the chain (edited committed lines, unreadable "
    "files, contradictions, stale entries).",
)
@click.option(
    "--tiles",
    metavar="FOLDER",
    default=None,
    help="Verify a published log (memory-chain publish) instead of a data directory.",
)
@click.option(
    "--log-key",
    metavar="VKEY|FILE",
    default=None,
    help="With --tiles: the log's key, as `memory-chain publish` printed it.",
)
@click.option(
    "--published",
    metavar="FOLDER",
    default=None,
    help="Then check the log published in FOLDER (memory-chain publish) against this chain, "
    "and which witnesses cosigned it.",
)
@witness_options
@click.option("--network", metavar="NAME", help="With --anchors: only this network.")
@click.option("--rpc", "rpc_url", metavar="URL", help="With --anchors: the node's JSON-RPC URL.")
@dir_option
@json_option
def verify(
    from_seq: int,
    trusted_key: str | None,
    chain_id: str | None,
    workers: int | None,
    full: bool,
    bundle: str | None,
    with_anchors: bool,
    with_workspace: bool,
    tiles: str | None,
    log_key: str | None,
    published: str | None,
    witnesses: tuple[str, ...],
    quorum: int | None,
    network: str | None,
    rpc_url: str | None,
    as_json: bool,
) -> None:
    """Check every entry's format, link, signature, key and content, and every checkpoint.

    The chain must also be consistent with each stored checkpoint and with
    the largest one the local witness has seen (a chain cut below it, or
    rewritten, fails). After a first full run, only entries added since
    the last successful verify are checked, once the bytes verified before
    are found unchanged: the chain's by their hash, the content packs' by
    their hash or, for a pack not written since, its file identity (a pack
    changed since is read again record by record). The "checked:" line
    says what the verdict rests on; --full hashes everything again.

    Exit 0 when the chain verifies, 1 when it does not (the first failing
    seq and the reason are printed), 2 when it cannot be read.

    \b
    Example:
        memory-chain verify
        memory-chain verify --full --workers 2
        memory-chain verify --trusted-key ed25519:3b6a27bc... --json
        memory-chain verify --bundle backup.tar.gz --chain-id b3:5f10d0db...
        memory-chain verify --anchors --network base-sepolia
        memory-chain verify --workspace
        memory-chain verify --published ./log --witness witness.example/w1+1c2d3e4f+BF...
        memory-chain verify --tiles ./log --log-key log.vkey --witness w1.vkey
    """
    from memory_chain.chain.format.errors import InputError

    if not with_anchors and (network or rpc_url):
        raise InputError("--network and --rpc go with --anchors")
    if published is None and tiles is None and (witnesses or quorum is not None):
        raise InputError("--witness and --quorum go with --published or --tiles")
    if tiles is None and log_key is not None:
        raise InputError("--log-key goes with --tiles")
    if tiles is not None:
        from .publish_cmds import verify_folder

        verify_folder(tiles, log_key, witnesses, quorum, as_json)
        return
    if bundle is not None:
        from .archive_cmds import verify_bundle_file

        verify_bundle_file(bundle, trusted_key, chain_id, as_json)
        return
    from memory_chain.chain.audit.verify_ledger import verify_ledger
    from memory_chain.chain.format.errors import IntegrityError

    try:
        report = verify_ledger(
            open_ledger(),
            from_seq=from_seq,
            trusted_key=trusted_key_arg(trusted_key),
            chain_id=chain_id,
            workers=workers,
            incremental=not full,
        )
    except IntegrityError as exc:
        if not as_json:
            raise
        # Refused before the scan (FORMAT.md 5.2: a stored checkpoint that does not parse):
        # --json still answers, with the reason (it printed nothing).
        emit_json(
            {
                "ok": False,
                "entries": None,
                "checked": None,
                "failure": {
                    "seq": exc.seq,
                    "step": None,
                    "reason": exc.reason,
                    "message": exc.message,
                },
            }
        )
        sys.exit(1)
    f = report.failure
    audit = None
    if with_anchors and f is None:
        from .anchor_cmds import run_anchor_audit

        audit = run_anchor_audit(network, rpc_url, None)
    findings = None
    if with_workspace and f is None:
        from .workspace_cmds import check_workspace_here

        findings = check_workspace_here()
    ws_ok = findings is None or not any(x.error for x in findings)
    checked = None
    if published is not None and f is None:
        from memory_chain.chain.audit.publishing import check_published

        from .publish_cmds import where_of

        checked = check_published(
            where_of(published),
            witnesses=witness_keys(witnesses),
            quorum=quorum,
            ledger=open_ledger(),
        )
    pub_ok = checked is None or checked.ok
    if as_json:
        emit_json(
            {
                **({"anchors": anchor_json(audit)} if audit is not None else {}),
                **({"workspace": [x.as_dict() for x in findings]} if findings is not None else {}),
                **({"published": checked_json(checked)} if checked is not None else {}),
                **report.as_dict(),
                "ok": report.ok and (audit is None or audit.ok) and ws_ok and pub_ok,
            }
        )
    if report.torn_tail:
        click.echo(
            f"warning: chain.jsonl ends with an unterminated line of {report.torn_tail} "
            "bytes (an interrupted write); the next add moves it to quarantine/",
            err=True,
        )
    if f is not None:
        if not as_json:
            click.echo(f"FAILED at seq {f.seq}: {f.message} (step {f.step}, {f.reason})", err=True)
        sys.exit(1)
    if not as_json:
        click.echo(f"ok: {report.size} entries verified; head {report.head}")
        click.echo(f"checked: {report.checked()}")
    if audit is not None:
        if not as_json:
            print_anchor_report(audit, False)
        if not audit.ok:
            sys.exit(1)
    if findings is not None:
        if not as_json:
            from .workspace_cmds import print_findings

            print_findings(findings)
        if not ws_ok:
            sys.exit(1)
    if checked is not None:
        if not as_json:
            print_checked(checked)
        if not checked.ok:
            sys.exit(1)

"""checkpoint, prove, verify-proof, consistency."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, NoReturn

import click

from .common import (
    CONTEXT_SETTINGS,
    dir_option,
    emit_json,
    json_option,
    open_ledger,
    read_input_file,
    trusted_key_arg,
)
from .output import force_option, output_target

if TYPE_CHECKING:
    from memory_chain.anchor.audit import Finding
    from memory_chain.chain.log.bundle import BundleError, Proved
    from memory_chain.chain.log.checkpoint import Checkpoint
    from memory_chain.chain.store.ledger import Ledger


@click.command(context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def checkpoint(as_json: bool) -> None:
    """Sign a checkpoint of the chain (a C2SP signed note) after verifying it.

    The checkpoint is kept in checkpoints/ and as the file `checkpoint`, and
    the local witness remembers it: from then on, a chain cut below it or
    rewritten fails verify, and adds are refused.

    \b
    Example:
        memory-chain checkpoint
        memory-chain checkpoint --json
    """
    from memory_chain.chain.audit.checkpointing import checkpoint as make

    made = make(open_ledger())
    cp = made.checkpoint
    if as_json:
        emit_json(
            {
                "size": cp.size,
                "root": cp.root.hex(),
                "origin": cp.origin,
                "path": str(made.path),
                "new": made.new,
                "witnessed": made.witnessed,
                "note": cp.text.decode(),
            }
        )
        return
    state = "new checkpoint" if made.new else "unchanged since the last checkpoint"
    click.echo(f"{state}: size {cp.size}, root {base64.b64encode(cp.root).decode()}")
    click.echo(f"  {made.path}")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("seq", type=click.IntRange(min=0))
@click.option("--content", "with_content", is_flag=True, help="Include the memory's content.")
@click.option(
    "--html",
    "as_html",
    is_flag=True,
    help="Write a self-verifying HTML page holding the bundle (opens in any browser).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the bundle here (default: stdout).")
@force_option
@click.option(
    "--checkpoint",
    "against",
    metavar="SIZE|FILE",
    help="Prove against this checkpoint (a stored size or a file) instead of the latest.",
)
@dir_option
def prove(
    seq: int,
    with_content: bool,
    as_html: bool,
    output: str | None,
    force: bool,
    against: str | None,
) -> None:
    """Write a proof bundle for entry SEQ that an auditor verifies offline.

    The bundle holds the entry, its inclusion proof in the latest signed
    checkpoint (one is made if none covers SEQ), the genesis and key-rotation
    lines with theirs, and the public key. Check it with `verify-proof`, or
    write it with --html as one page that checks itself in a browser (the
    auditor pins the key or chain id in the page, or with #key=... or
    #chain=... after its address).

    \b
    Example:
        memory-chain prove 12 --content -o entry12.proof.json
        memory-chain prove 12 --content --html -o entry12.html
        memory-chain prove 12 --checkpoint 40 -o entry12-at-40.proof.json
    """
    from memory_chain.chain.audit.proofs import prove_entry

    target = output_target(output, force=force)  # before a checkpoint may be made
    ledger = open_ledger()
    cp = _checkpoint_arg(ledger, against) if against is not None else None
    bundle = prove_entry(ledger, seq, with_content=with_content, checkpoint=cp)
    if as_html:
        from memory_chain.auditor import page

        bundle = page(bundle, name=f"entry {seq}")
    target.write(bundle)
    if target.path is not None:
        click.echo(f"wrote {output}", err=True)


@click.command("verify-page", context_settings=CONTEXT_SETTINGS)
@click.option("-o", "--output", metavar="FILE", help="Write the page here (default: stdout).")
@force_option
def verify_page(output: str | None, force: bool) -> None:
    """Write the auditor's page alone: drop a proof or an export archive on it.

    One static HTML file with the verifier inside (nothing is fetched): it
    checks a bundle from `prove` or an archive from `export` against the
    key or chain id the auditor types in.

    \b
    Example:
        memory-chain verify-page -o check-a-memory.html
    """
    from memory_chain.auditor import page

    target = output_target(output, force=force)
    target.write(page())
    if target.path is not None:
        click.echo(f"wrote {output}", err=True)


@click.command("verify-proof", context_settings=CONTEXT_SETTINGS)
@click.argument("file", metavar="FILE")
@click.option(
    "--trusted-key",
    metavar="KEY|FILE",
    help="The chain's genesis key or a key it rotated to (ed25519:<hex> or a .pub file).",
)
@click.option("--chain-id", metavar="ID", help="The chain id (b3:<hex>) the proof must be for.")
@click.option(
    "--rpc",
    "rpc_url",
    metavar="URL",
    help="Also check the bundle's anchor references against this EVM node.",
)
@click.option(
    "--confirmations",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="K",
    help="With --rpc: confirmations each anchor needs.",
)
@json_option
def verify_proof(
    file: str,
    trusted_key: str | None,
    chain_id: str | None,
    rpc_url: str | None,
    confirmations: int,
    as_json: bool,
) -> None:
    """Verify a proof bundle (from `prove`) or a consistency proof, offline.

    Needs nothing but FILE and a pin: --trusted-key or --chain-id for a
    bundle, --trusted-key for a consistency proof. Exit 0 when it verifies,
    1 when it does not, 2 when it cannot be read.

    \b
    Example:
        memory-chain verify-proof entry12.proof.json --trusted-key agent.pub
        memory-chain verify-proof entry12.proof.json --chain-id b3:1abc6b34...
        memory-chain verify-proof entry12.proof.json --trusted-key agent.pub \\
            --rpc https://sepolia.base.org
    """
    from memory_chain.chain.format.entry import HASH_RE
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.bundle import BundleError, verify_bundle

    data = read_input_file(file)
    key = trusted_key_arg(trusted_key)
    if chain_id is not None and HASH_RE.fullmatch(chain_id) is None:
        raise InputError(f"not a chain id: {chain_id!r}", hint="a chain id is b3:<64 hex>")
    if _format_of(data) == "memory-chain-consistency/1":
        if rpc_url is not None:
            raise InputError("--rpc checks a proof bundle's anchors; this is a consistency proof")
        _verify_consistency_file(file, data, key, as_json)
        return
    try:
        proved = verify_bundle(data, trusted_key=key, chain_id=chain_id)
    except BundleError as exc:
        _proof_failed(file, exc, as_json, "the proof does not verify: ")
    findings = None
    if rpc_url is not None:
        findings = _check_anchor_references(proved, rpc_url, confirmations)
    anchors_ok = findings is None or (bool(findings) and all(f.status == "valid" for f in findings))
    if as_json:
        emit_json(
            {
                "ok": anchors_ok,
                "anchors_checked": None if findings is None else [f.as_dict() for f in findings],
                "chain_id": proved.chain_id,
                "seq": proved.seq,
                "entry": proved.entry,
                "key": proved.key,
                "tree_size": proved.checkpoint.size,
                "root": proved.checkpoint.root.hex(),
                "content": proved.content.decode("utf-8", "replace")
                if proved.content is not None
                else None,
                "anchors": proved.anchors,
            }
        )
        if not anchors_ok:
            raise SystemExit(1)
        return
    e = proved.entry
    click.echo(
        f"ok: entry {proved.seq} ({e['type']}, {e['ts']}) is in chain {proved.chain_id}, "
        f"signed by {proved.key}, included in the checkpoint of size {proved.checkpoint.size}"
    )
    if proved.content is not None:
        click.echo("content matches the entry's hash")
    if findings is not None:
        _print_anchor_findings(findings)
    elif proved.anchors:
        click.echo(
            f"{len(proved.anchors)} anchor reference(s) carried "
            "(not checked offline; --rpc URL checks them)"
        )


def _check_anchor_references(proved: Proved, url: str, confirmations: int) -> list[Finding]:
    from memory_chain.anchor.audit import check_references
    from memory_chain.anchor.payload import payload_of

    return check_references(url, payload_of(proved.checkpoint), proved.anchors, confirmations)


def _print_anchor_findings(findings: list[Finding]) -> None:
    from memory_chain.chain.format.errors import IntegrityError

    if not findings:
        raise IntegrityError(
            "the bundle carries no anchor reference to check",
            reason="unanchored",
            hint="anchor the chain (`memory-chain anchor`), then prove again",
        )
    for f in findings:
        line = f"anchor {f.tx} on {f.network}: {f.status}"
        if f.status == "valid":
            click.echo(f"{line} (block {f.block}, {f.confirmations} confirmation(s))")
        else:
            click.echo(f"{line}: {f.detail} ({f.reason})", err=True)
    if any(f.status != "valid" for f in findings):
        raise SystemExit(1)


#: Reasons that mean bad input (exit 2), not a proof that failed (exit 1).
_BAD_INPUT = {
    "unpinned": "pass --trusted-key or --chain-id",
    "not-a-bundle": "`memory-chain prove SEQ -o FILE` writes one",
    "not-a-consistency-proof": "`memory-chain consistency OLD NEW -o FILE` writes one",
    "bad-sizes": "the old checkpoint must not be larger than the new one",
}


def _proof_failed(file: str, exc: BundleError, as_json: bool, prefix: str = "") -> NoReturn:
    """Report a proof file that failed: JSON on stdout with --json, else one error line."""
    from memory_chain.chain.format.errors import InputError, IntegrityError

    bad_input = exc.reason in _BAD_INPUT
    if as_json:
        emit_json(exc.as_dict())
        raise SystemExit(2 if bad_input else 1)
    if bad_input:
        raise InputError(f"{file}: {exc.message}", hint=_BAD_INPUT[exc.reason]) from None
    raise IntegrityError(f"{prefix}{exc.message}", reason=exc.reason, seq=exc.seq) from None


def _format_of(data: bytes) -> object:
    from memory_chain.chain.log.bundle import load_json

    obj = load_json(data)
    return obj.get("format") if isinstance(obj, dict) else None


def _verify_consistency_file(file: str, data: bytes, key: str | None, as_json: bool) -> None:
    from memory_chain.chain.audit.proofs import check_consistency_file
    from memory_chain.chain.log.bundle import BundleError

    try:
        c = check_consistency_file(data, trusted_key=key)
    except BundleError as exc:
        _proof_failed(file, exc, as_json)
    if as_json:
        emit_json({"ok": True, "old_size": c.old.size, "new_size": c.new.size})
        return
    click.echo(f"ok: the checkpoint of size {c.new.size} extends the one of size {c.old.size}")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("-o", "--output", metavar="FILE", help="Also write the proof file here.")
@force_option
@dir_option
@json_option
def consistency(old: str, new: str, output: str | None, force: bool, as_json: bool) -> None:
    """Prove and check that checkpoint NEW extends checkpoint OLD.

    OLD and NEW are checkpoint files, or tree sizes of checkpoints stored
    in this chain's checkpoints/. The proof is made from the local chain
    and checked; -o writes it for `verify-proof --trusted-key`.

    \b
    Example:
        memory-chain consistency 120 250
        memory-chain consistency old.checkpoint checkpoint -o 120-250.proof.json
    """
    from memory_chain.chain.audit.proofs import prove_consistency

    target = output_target(output, force=force) if output is not None else None
    ledger = open_ledger()
    c = prove_consistency(ledger, _checkpoint_arg(ledger, old), _checkpoint_arg(ledger, new))
    if target is not None:
        target.write(c.to_json())
    if as_json:
        emit_json(
            {
                "ok": True,
                "old_size": c.old.size,
                "new_size": c.new.size,
                "proof": [h.hex() for h in c.proof],
            }
        )
        return
    click.echo(
        f"ok: the checkpoint of size {c.new.size} extends the one of size {c.old.size} "
        f"({len(c.proof)} hashes)"
    )


def _checkpoint_arg(ledger: Ledger, value: str) -> Checkpoint:
    from pathlib import Path

    from memory_chain.chain.audit.proofs import load_checkpoint_file
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.log.checkpoint_store import note_path

    path = Path(value)
    if value.isdecimal() and not path.exists():
        path = note_path(ledger.layout, int(value))
        if not path.exists():
            raise InputError(
                f"no stored checkpoint of size {value}",
                hint="`ls checkpoints/` in the data directory lists them",
            )
    return load_checkpoint_file(read_input_file(str(path)), str(path))

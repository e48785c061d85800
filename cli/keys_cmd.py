"""keys show | rotate | export-public."""

from __future__ import annotations

import click

from .common import CONTEXT_SETTINGS, dir_option, emit_json, json_option, open_ledger
from .output import force_option, output_target


@click.group(context_settings=CONTEXT_SETTINGS)
def keys() -> None:
    """Show, rotate or export the signing key (the secret is never printed).

    \b
    Example:
        memory-chain keys show
        memory-chain keys rotate
        memory-chain keys export-public -o agent.pub
    """


def _key_info() -> dict[str, str | None]:
    from memory_chain.chain.format.keys import key_file, read_public_key_file

    ledger = open_ledger()
    path = key_file(ledger.layout.root, ledger.config.key_mode)
    return {
        "key": read_public_key_file(ledger.layout.public_key),
        "key_mode": ledger.config.key_mode,
        "key_file": str(path) if path else None,
        "chain_id": ledger.config.chain_id,
    }


@keys.command(context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def show(as_json: bool) -> None:
    """Show the current public key, key mode and key file.

    \b
    Example:
        memory-chain keys show --json
    """
    info = _key_info()
    if as_json:
        emit_json(info)
        return
    for k, v in info.items():
        click.echo(f"{k:>9}  {v if v is not None else '-'}")


@keys.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--key-mode",
    type=click.Choice(["raw", "encrypted", "env"]),
    default=None,
    help="Mode of the new key (default: keep the current mode). env mode reads "
    "the new seed from $MEMORY_CHAIN_NEW_SIGNING_KEY.",
)
@dir_option
@json_option
def rotate(key_mode: str | None, as_json: bool) -> None:
    """Hand the chain over to a new key, signed by the old and the new key.

    \b
    Example:
        memory-chain keys rotate
        memory-chain keys rotate --key-mode encrypted
    """
    from memory_chain.chain.lifecycle.rotate import rotate as do_rotate

    ledger = open_ledger()
    old = ledger.signer().key_id
    r = do_rotate(ledger, key_mode)
    new = ledger.signer().key_id
    if as_json:
        emit_json({"seq": r.seq, "hash": r.hash, "old_key": old, "new_key": new})
    else:
        click.echo(f"rotated at seq {r.seq}: {old} -> {new}")


@keys.command("export-public", context_settings=CONTEXT_SETTINGS)
@click.option("-o", "--output", metavar="FILE", help="Write to this file instead of stdout.")
@force_option
@dir_option
@json_option
def export_public(output: str | None, force: bool, as_json: bool) -> None:
    """Print the current public key, which auditors can pin with `verify --trusted-key`.

    \b
    Example:
        memory-chain keys export-public -o agent.pub
    """
    target = output_target(output, force=force) if output else None
    info = _key_info()
    if as_json:
        emit_json({"key": info["key"], "chain_id": info["chain_id"]})
        return
    if target is not None and target.path is not None:
        target.write(f"{info['key']}\n".encode("ascii"))
        click.echo(f"wrote {output}", err=True)  # stdout carries data; -o puts it in FILE
    else:
        click.echo(info["key"])

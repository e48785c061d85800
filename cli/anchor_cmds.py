"""anchor, anchor deploy, anchor status, anchor verify.

web3 is imported only inside these commands' bodies (through
memory_chain.anchor.rpc), and `anchor status` needs no node at all.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .common import CONTEXT_SETTINGS, data_dir, dir_option, emit_json, json_option, open_ledger

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

    from memory_chain.anchor.audit import AnchorReport, Finding
    from memory_chain.anchor.networks import Network


def network_option(f: Any) -> Any:
    f = click.option(
        "--network",
        "--chain",
        "network",
        metavar="NAME",
        help="anvil, base-sepolia, sepolia, base, or one from config.json "
        "(default: config's anchor.network, else anvil). --chain is an alias.",
    )(f)
    f = click.option("--rpc", "rpc_url", metavar="URL", help="The node's JSON-RPC URL.")(f)
    return click.option(
        "--confirmations",
        type=click.IntRange(min=0),
        default=None,
        metavar="K",
        help="Confirmations to wait for and require; 1 = the block that holds the anchor.",
    )(f)


def _network(name: str | None, rpc_url: str | None, confirmations: int | None) -> Network:
    from memory_chain.anchor.networks import resolve_network
    from memory_chain.chain.format.config import Config, Layout

    config = Config.load(Layout(data_dir()))
    return resolve_network(config, name, rpc_url=rpc_url, confirmations=confirmations)


def _account() -> LocalAccount:
    from memory_chain.anchor.account import load_account

    def prompt(text: str) -> str:
        return str(click.prompt(text, hide_input=True))

    return load_account(prompt if sys.stdin.isatty() else None)


@click.group("anchor", invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@network_option
@click.option(
    "--mode",
    type=click.Choice(["event", "calldata"]),
    default=None,
    help="event: call the registry contract (default when one is known); "
    "calldata: a zero-value transaction to yourself carrying the payload.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=120.0,
    show_default=True,
    help="Seconds to wait for the receipt and confirmations.",
)
@dir_option
@json_option
@click.pass_context
def anchor(
    ctx: click.Context,
    network: str | None,
    rpc_url: str | None,
    confirmations: int | None,
    mode: str | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Post the latest checkpoint to an EVM chain (making one if the chain grew).

    The transaction is signed locally with the account from
    $MEMORY_CHAIN_EVM_KEY, or from the keystore $MEMORY_CHAIN_EVM_KEYSTORE
    (passphrase: $MEMORY_CHAIN_EVM_PASSPHRASE or a prompt). It is recorded
    as sent in anchors.jsonl before it is broadcast, so an interrupted run
    loses nothing: the next run completes the same transaction. The RPC
    URL is --rpc, else $MEMORY_CHAIN_RPC_<NETWORK>, else config.json.

    \b
    Example:
        memory-chain anchor deploy --network anvil
        memory-chain anchor --network anvil
        MEMORY_CHAIN_RPC_BASE_SEPOLIA=https://sepolia.base.org \\
            memory-chain anchor --chain base-sepolia --mode calldata
        memory-chain anchor status
        memory-chain anchor verify
    """
    if ctx.invoked_subcommand is not None:
        ctx.ensure_object(dict)["network"] = (network, rpc_url, confirmations)
        return
    from memory_chain.anchor.post import anchor as post

    net = _network(network, rpc_url, confirmations)
    posted = post(open_ledger(), net, _account, mode=mode, timeout=timeout)
    rec = posted.record
    if as_json:
        emit_json(
            {
                **{k: v for k, v in rec.items() if k != "raw_tx"},
                "already_anchored": posted.already,
                "new_checkpoint": posted.new_checkpoint,
                "settled": [r["tx"] for r in posted.settled],
            }
        )
        return
    for r in posted.settled:
        click.echo(f"settled earlier transaction {r['tx']}: {r['state']}")
    what = f"checkpoint of size {rec['tree_size']}"
    if posted.already:
        click.echo(f"already anchored: {what} on {net.name} in transaction {rec['tx']}")
        return
    click.echo(
        f"anchored {what} on {net.describe()} ({rec['mode']} mode): "
        f"transaction {rec['tx']}, block {rec['block_number']}, gas {rec['gas_used']}, "
        f"{rec['confirmations']} confirmation(s)"
    )


def _inherited(
    ctx: click.Context, network: str | None, rpc_url: str | None, conf: int | None
) -> tuple[str | None, str | None, int | None]:
    parent = (ctx.find_object(dict) or {}).get("network", (None, None, None))
    return network or parent[0], rpc_url or parent[1], conf if conf is not None else parent[2]


@anchor.command(context_settings=CONTEXT_SETTINGS)
@network_option
@dir_option
@json_option
@click.pass_context
def deploy(
    ctx: click.Context,
    network: str | None,
    rpc_url: str | None,
    confirmations: int | None,
    as_json: bool,
) -> None:
    """Deploy the anchor registry contract and record its address in config.json.

    \b
    Example:
        memory-chain anchor deploy --network anvil
    """
    from memory_chain.anchor.post import deploy as run
    from memory_chain.chain.format.config import Config, Layout

    network, rpc_url, confirmations = _inherited(ctx, network, rpc_url, confirmations)
    layout = Layout(data_dir())
    config = Config.load(layout)
    net = _network(network, rpc_url, confirmations)
    done = run(layout, config, net, _account)
    if as_json:
        emit_json(
            {
                "network": net.name,
                "registry": done.address,
                "block": done.block,
                "tx": done.tx,
                "gas_used": done.gas_used,
            }
        )
        return
    click.echo(
        f"deployed the registry on {net.describe()} at {done.address} "
        f"(block {done.block}, transaction {done.tx}, gas {done.gas_used}); "
        "recorded in config.json"
    )


@anchor.command(context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def status(as_json: bool) -> None:
    """List the anchors recorded in anchors.jsonl (no node is asked).

    \b
    Example:
        memory-chain anchor status --json
    """
    from memory_chain.chain.format.config import Layout
    from memory_chain.chain.log.anchors import read_anchors
    from memory_chain.chain.store.head import load_head

    layout = Layout(data_dir())
    open_ledger()  # the same checks as every command: a data directory with a chain
    anchors = read_anchors(layout)
    head = load_head(layout)
    size = head.size if head is not None else None
    confirmed = [r for r in anchors.records if r["state"] == "confirmed"]
    latest = max((r["tree_size"] for r in confirmed), default=None)
    rows = [{k: v for k, v in r.items() if k != "raw_tx"} for r in anchors.records]
    if as_json:
        emit_json(
            {
                "chain_size": size,
                "anchored_size": latest,
                "anchors": rows,
                "skipped_lines": anchors.skipped,
            }
        )
        return
    for why in anchors.skipped:
        click.echo(f"warning: anchors.jsonl {why}; ignored", err=True)
    if not rows:
        click.echo("no anchors yet; run `memory-chain anchor`")
        return
    for r in rows:
        where = f"block {r['block_number']}" if "block_number" in r else "no block yet"
        click.echo(
            f"{r['state']:<9} {r['network']:<12} {r['mode']:<8} size {r['tree_size']:<6} "
            f"{r['tx']} {where}"
        )
    behind = "" if size is None or latest == size else f"; the chain has {size} entries"
    click.echo(f"latest confirmed anchor covers {latest or 0} entries{behind}")


@anchor.command("verify", context_settings=CONTEXT_SETTINGS)
@network_option
@click.option(
    "--sender",
    "senders",
    multiple=True,
    metavar="ADDRESS",
    help="Only count anchors found in the registry's log from these senders "
    "(default: every sender).",
)
@dir_option
@json_option
@click.pass_context
def verify_(
    ctx: click.Context,
    network: str | None,
    rpc_url: str | None,
    confirmations: int | None,
    senders: tuple[str, ...],
    as_json: bool,
) -> None:
    """Check every anchor again against the node, and the chain against every anchor.

    Each recorded transaction is fetched again (chain id, status, contract
    and event or sender and calldata, payload, canonical block,
    confirmations); then the registry's event log is scanned for every
    anchor of this chain, recorded or not, and the local chain must hold
    each anchored size with the anchored root. Exit 0 when all are valid,
    1 when one is not (unconfirmed, or a chain cut or rewritten: the
    transaction is named), 2 when the node cannot be asked.

    \b
    Example:
        memory-chain anchor verify
        memory-chain anchor verify --network base-sepolia --json
    """
    network, rpc_url, confirmations = _inherited(ctx, network, rpc_url, confirmations)
    report = run_anchor_audit(network, rpc_url, confirmations, senders)
    print_anchor_report(report, as_json)
    if not report.ok:
        sys.exit(1)


def run_anchor_audit(
    network: str | None,
    rpc_url: str | None,
    confirmations: int | None,
    senders: tuple[str, ...] = (),
) -> AnchorReport:
    """The networks to ask: --network, else every one recorded or with a registry."""
    from memory_chain.anchor.audit import verify_anchors
    from memory_chain.anchor.networks import anchor_config, resolve_network
    from memory_chain.anchor.rpc import connect
    from memory_chain.chain.format.config import Config
    from memory_chain.chain.log.anchors import read_anchors

    ledger = open_ledger()
    config = Config.load(ledger.layout)
    if network is not None:
        names = [network]
    else:
        recorded = {r["network"] for r in read_anchors(ledger.layout).records}
        configured = {
            name
            for name, own in anchor_config(config).get("networks", {}).items()
            if isinstance(own, dict) and own.get("registry")
        }
        names = sorted(recorded | configured)
    records = read_anchors(ledger.layout).records
    nets = [
        _with_recorded_registry(
            resolve_network(config, n, rpc_url=rpc_url, confirmations=confirmations), records
        )
        for n in names
    ]
    return verify_anchors(ledger, [connect(n) for n in nets], senders=senders)


def _with_recorded_registry(net: Network, records: list[dict[str, Any]]) -> Network:
    """A network with no registry in config (an imported chain) takes it from the records.

    The log scan then starts at the earliest recorded anchor's block: the
    deployment block is not known (FORMAT 18.7).
    """
    from dataclasses import replace

    if net.registry is not None:
        return net
    mine = [r for r in records if r["network"] == net.name and r["mode"] == "event"]
    registries = {r.get("to") for r in mine if r.get("to")}
    if len(registries) != 1:
        return net
    blocks = [r["block_number"] for r in mine if isinstance(r.get("block_number"), int)]
    return replace(net, registry=registries.pop(), registry_block=min(blocks, default=0))


def anchor_json(report: AnchorReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "chain_size": report.chain_size,
        "anchors": [f.as_dict() for f in report.findings],
        "scanned": {k: list(v) for k, v in report.scanned.items()},
        "skipped_lines": report.skipped_lines,
    }


def print_anchor_report(report: AnchorReport, as_json: bool) -> None:
    if as_json:
        emit_json(anchor_json(report))
        return
    for why in report.skipped_lines:
        click.echo(f"warning: anchors.jsonl {why}; ignored", err=True)
    for f in report.findings:
        click.echo(_line(f), err=f.status != "valid")
    for name, (lo, hi) in report.scanned.items():
        click.echo(f"scanned {name} blocks {lo}..{hi} for this chain's Anchored events")
    bad = report.failure
    if bad is not None:
        click.echo(f"FAILED: {bad.detail} ({bad.reason})", err=True)
    elif not report.findings:
        click.echo("no anchors to check")
    else:
        click.echo(
            f"ok: {len(report.findings)} anchor(s) valid; the chain of {report.chain_size} "
            "entries is consistent with each"
        )


def _line(f: Finding) -> str:
    size = f.payload.tree_size if f.payload else "?"
    where = f"block {f.block}, {f.confirmations} conf" if f.block is not None else "no block"
    text = f"{f.status:<11} {f.network} size {size} {f.tx} ({where})"
    if f.detail:
        text += f": {f.detail}"
    for note in f.notes:
        text += f"; {note}"
    return text

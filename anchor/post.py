"""Post a checkpoint to an EVM chain, and deploy the registry.

The order of one anchor (specs/FORMAT.md section 18.5):

1. checkpoint the chain if it grew (verify, sign; chain/audit/checkpointing.py);
2. settle transactions an earlier run left ``sent`` on this network: wait for
   them, re-broadcast their signed bytes if the node lost them, or record
   them ``dropped`` when their nonce went to another transaction;
3. stop if the checkpoint is already anchored there, in a block that is
   still canonical (a reorg that dropped it is recorded ``dropped``);
4. event mode: check that the registry address holds the registry's code;
5. sign the transaction locally, append a ``sent`` record (with the signed
   bytes) and fsync it, and only then broadcast;
6. wait for the receipt and the confirmations, and append ``confirmed``
   (or ``failed``).

(The spec numbers the same order 1-8, with the node's chain id check as
step 2.) A crash or a dead node anywhere after step 5 loses nothing: the next run
finds the ``sent`` record and completes that same transaction.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

from memory_chain.chain.audit.checkpointing import checkpoint
from memory_chain.chain.format.config import Config, Layout
from memory_chain.chain.format.errors import InputError, IntegrityError, OperationalError
from memory_chain.chain.format.fsutil import flocked
from memory_chain.chain.format.progress import track
from memory_chain.chain.log.anchors import RECORD_FORMAT, append_record, read_anchors
from memory_chain.chain.log.checkpoint import Checkpoint
from memory_chain.chain.store.ledger import Ledger

from .artifact import load_artifact
from .networks import Network, record_registry
from .payload import Payload, payload_of
from .rpc import Rpc, checksum_address, connect, hex0x

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

__all__ = ["MODES", "Posted", "anchor", "deploy"]

MODES: Final = ("event", "calldata")
DEFAULT_TIMEOUT: Final = 120.0
GAS_MARGIN: Final = 1.25  # over eth_estimateGas, for a state that moves under us

AccountLoader = Callable[[], "LocalAccount"]


@dataclass(frozen=True, slots=True)
class Posted:
    record: dict[str, Any]  # the merged record of the anchoring transaction
    checkpoint: Checkpoint
    new_checkpoint: bool
    already: bool  # the checkpoint was anchored before this run
    settled: list[dict[str, Any]]  # earlier pending transactions settled by this run


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def anchor_lock(layout: Layout) -> contextlib.AbstractContextManager[None]:
    """One `anchor` run at a time per data directory (writers of the chain are not held)."""
    return flocked(layout.anchor_lock)


def pick_mode(net: Network, mode: str | None) -> str:
    if mode is None:
        return "event" if net.registry else "calldata"
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "event" and not net.registry:
        raise InputError(
            f"network {net.name} has no registry contract",
            hint=f"run `memory-chain anchor deploy --network {net.name}`, or use --mode calldata",
        )
    return mode


class Waiter:
    """Polls the node for a receipt and confirmations, within one deadline."""

    def __init__(self, rpc: Rpc, timeout: float) -> None:
        self.rpc = rpc
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout

    def _sleep(self, delay: float) -> float:
        if time.monotonic() + delay > self.deadline:
            return -1.0
        time.sleep(delay)
        return min(delay * 1.5, 2.0)

    def settle(self, tx: str, confirmations: int) -> dict[str, Any] | None:
        """The canonical receipt with enough confirmations; None if the node forgot tx."""
        delay = 0.05
        waited = track("waiting for the receipt", round(self.timeout), "s")
        start, shown = time.monotonic(), 0
        while True:
            now = int(time.monotonic() - start)
            waited(now - shown)
            shown = now
            receipt = self.rpc.receipt(tx)
            if receipt is None:
                if self.rpc.transaction(tx) is None:
                    return None
            else:
                number = int(receipt["blockNumber"])
                canonical = self.rpc.block_hash(number) == hex0x(receipt["blockHash"])
                depth = self.rpc.block_number() - number + 1
                if canonical and depth >= confirmations:
                    receipt["confirmations"] = depth
                    return receipt
            delay = self._sleep(delay)
            if delay < 0:
                seen = "mined, too few confirmations" if receipt else "not mined"
                raise OperationalError(
                    f"transaction {tx} still {seen} after {self.timeout:g} s; "
                    "it is recorded as sent in anchors.jsonl",
                    hint="run `memory-chain anchor` again to keep waiting for it",
                )


def _outcome(sent: dict[str, Any], receipt: dict[str, Any]) -> dict[str, Any]:
    ok = int(receipt["status"]) == 1
    rec: dict[str, Any] = {
        **{k: sent[k] for k in _CARRIED if k in sent},
        "state": "confirmed" if ok else "failed",
        "block_number": int(receipt["blockNumber"]),
        "block_hash": hex0x(receipt["blockHash"]),
        "gas_used": int(receipt["gasUsed"]),
        "confirmations": int(receipt["confirmations"]),
        "time": now(),
    }
    if ok and sent["mode"] == "event":
        rec["log_index"] = int(receipt["logs"][0]["logIndex"]) if receipt["logs"] else None
    return rec


_CARRIED: Final = (
    "format",
    "tx",
    "network",
    "evm_chain_id",
    "mode",
    "chain_id",
    "tree_size",
    "root",
    "checkpoint_hash",
)


def _settle_pending(
    rpc: Rpc, layout: Layout, net: Network, waiter: Waiter, confirmations: int
) -> list[dict[str, Any]]:
    """Finish every transaction a previous run left ``sent`` on ``net``."""
    done = []
    for sent in read_anchors(layout).pending(net.name):
        tx = sent["tx"]
        if rpc.receipt(tx) is None and rpc.transaction(tx) is None:
            if rpc.nonce(sent["from"], pending=False) > int(sent["nonce"]):
                rec = {k: sent[k] for k in _CARRIED}
                rec.update(state="dropped", time=now(), reason="its nonce was used by another tx")
                append_record(layout, rec)
                done.append(rec)
                continue
            rpc.send_raw(bytes.fromhex(sent["raw_tx"].removeprefix("0x")))
        receipt = waiter.settle(tx, confirmations)
        if receipt is None:
            raise OperationalError(
                f"transaction {tx} vanished from the node while waiting",
                hint="run `memory-chain anchor` again",
            )
        rec = _outcome(sent, receipt)
        append_record(layout, rec)
        done.append(rec)
    return done


def _recheck(
    rpc: Rpc, layout: Layout, rec: dict[str, Any], waiter: Waiter, confirmations: int
) -> dict[str, Any] | None:
    """A confirmed anchor as the node sees it now, after any reorg.

    The record as it is while its block is canonical; updated (a new
    ``confirmed`` record) when a reorg mined the transaction again in
    another block; None, recorded ``dropped``, when a reorg dropped it, so
    that the checkpoint gets anchored again.
    """
    tx = rec["tx"]
    number = rec.get("block_number")
    if isinstance(number, int) and rpc.block_hash(number) == rec.get("block_hash"):
        return rec  # its block is still canonical (asked by number: any node can answer)
    moved = None
    if rpc.receipt(tx) is not None or rpc.transaction(tx) is not None:
        moved = waiter.settle(tx, confirmations)  # mined again elsewhere, or back in the pool
    if moved is None:
        dropped = {k: rec[k] for k in _CARRIED}
        dropped.update(state="dropped", time=now(), reason="no longer on the chain (a reorg)")
        append_record(layout, dropped)
        return None
    again = _outcome(rec, moved)
    append_record(layout, again)
    if again["state"] != "confirmed":
        raise IntegrityError(
            f"anchor transaction {tx} reverted in block {again['block_number']} after a reorg",
            reason="anchor-reverted",
        )
    return {**rec, **again}


def _check_registry(rpc: Rpc, net: Network) -> None:
    """The registry address holds the registry's code (a call to an empty address succeeds)."""
    assert net.registry is not None
    if rpc.code(net.registry) != load_artifact().deployed_bytecode:
        raise OperationalError(
            f"there is no registry contract at {net.registry} on {net.describe()}",
            hint=f"run `memory-chain anchor deploy --network {net.name}`, or use --mode calldata",
        )


def _same(rec: dict[str, Any], payload: Payload, mode: str | None) -> bool:
    return bool(
        (mode is None or rec["mode"] == mode)
        and rec["tree_size"] == payload.tree_size
        and rec["root"] == payload.root.hex()
        and rec["chain_id"] == payload.chain_id.hex()
    )


def _sign(
    rpc: Rpc, account: LocalAccount, to: str, data: bytes, gas: int | None = None
) -> tuple[Any, int]:
    to = checksum_address(to) if to else ""  # eth-account refuses other spellings
    base = {"from": account.address, "to": to, "value": 0, "data": "0x" + data.hex()}
    if gas is None:
        gas = int(rpc.estimate_gas(base) * GAS_MARGIN)
    max_fee, tip = rpc.fees()
    nonce = rpc.nonce(account.address)
    tx = {
        "type": 2,
        "chainId": rpc.net.evm_chain_id,
        "nonce": nonce,
        "to": to,
        "value": 0,
        "data": base["data"],
        "gas": gas,
        "maxFeePerGas": max_fee,
        "maxPriorityFeePerGas": tip,
    }
    if not to:
        del tx["to"]
    return account.sign_transaction(cast(Any, tx)), nonce


def anchor(
    ledger: Ledger,
    net: Network,
    load_account: AccountLoader,
    *,
    mode: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Posted:
    """Anchor the chain's latest checkpoint (made first if the chain grew) on ``net``.

    Without an explicit ``mode``, an anchor of the checkpoint in either mode
    counts as done; with one, only an anchor in that mode does.
    """
    any_mode = mode is None
    mode = pick_mode(net, mode)
    made = checkpoint(ledger)
    cp = made.checkpoint
    payload = payload_of(cp)
    layout = ledger.layout
    with anchor_lock(layout):
        rpc = connect(net, wait=timeout)
        waiter = Waiter(rpc, timeout)
        settled = _settle_pending(rpc, layout, net, waiter, net.confirmations)
        for rec in read_anchors(layout).records:
            if (
                rec["network"] == net.name
                and rec["state"] == "confirmed"
                and _same(rec, payload, None if any_mode else mode)
            ):
                still = _recheck(rpc, layout, rec, waiter, net.confirmations)
                if still is not None:
                    return Posted(still, cp, made.new, True, settled)
        if mode == "event":
            _check_registry(rpc, net)
        account = load_account()
        to = net.registry if mode == "event" else account.address
        assert to is not None
        signed, nonce = _sign(rpc, account, to, payload.calldata())
        tx = hex0x(signed.hash)
        sent = {
            "format": RECORD_FORMAT,
            "state": "sent",
            "tx": tx,
            "network": net.name,
            "evm_chain_id": net.evm_chain_id,
            "mode": mode,
            "chain_id": payload.chain_id.hex(),
            "tree_size": payload.tree_size,
            "root": payload.root.hex(),
            "checkpoint_hash": payload.checkpoint_hash.hex(),
            "from": account.address.lower(),
            "to": to.lower(),
            "nonce": nonce,
            "raw_tx": hex0x(signed.raw_transaction),
            "time": now(),
        }
        append_record(layout, sent)  # before the broadcast: the hash survives a crash
        try:
            rpc.send_raw(bytes(signed.raw_transaction))
        except OperationalError as exc:
            if "cannot reach" in exc.message:
                raise OperationalError(
                    f"{exc.message}; transaction {tx} is recorded as sent",
                    hint="run `memory-chain anchor` again: it re-broadcasts the same transaction",
                ) from None
            dropped = {k: sent[k] for k in _CARRIED}
            dropped.update(state="dropped", time=now(), reason=exc.message)
            append_record(layout, dropped)
            raise
        try:
            receipt = waiter.settle(tx, net.confirmations)
        except OperationalError as exc:
            if tx in exc.message:
                raise  # the waiter's own timeout, which names the transaction already
            raise OperationalError(
                f"{exc.message} while waiting for transaction {tx}, which is recorded as sent",
                hint="run `memory-chain anchor` again when the node is back: it completes "
                "the same transaction",
            ) from None
        if receipt is None:
            raise OperationalError(
                f"the node accepted transaction {tx}, then forgot it",
                hint="run `memory-chain anchor` again: it re-broadcasts the same transaction",
            )
        rec = _outcome(sent, receipt)
        append_record(layout, rec)
        if rec["state"] != "confirmed":
            raise IntegrityError(
                f"anchor transaction {tx} reverted in block {rec['block_number']}",
                reason="anchor-reverted",
                hint="check the registry address for this network",
            )
        return Posted({**sent, **rec}, cp, made.new, False, settled)


@dataclass(frozen=True, slots=True)
class Deployed:
    address: str
    block: int
    tx: str
    gas_used: int


def deploy(
    layout: Layout,
    config: Config,
    net: Network,
    load_account: AccountLoader,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> Deployed:
    """Deploy the registry on ``net`` and record its address in config.json."""
    art = load_artifact()
    rpc = connect(net, wait=timeout)
    account = load_account()
    signed, _nonce = _sign(rpc, account, "", art.bytecode)
    tx = hex0x(signed.hash)
    rpc.send_raw(bytes(signed.raw_transaction))
    receipt = Waiter(rpc, timeout).settle(tx, net.confirmations)
    if receipt is None or int(receipt["status"]) != 1 or not receipt.get("contractAddress"):
        raise OperationalError(f"deployment transaction {tx} did not create the registry")
    address = str(receipt["contractAddress"])
    if rpc.code(address) != art.deployed_bytecode:
        raise IntegrityError(
            f"the code at {address} is not the registry's", reason="anchor-registry"
        )
    block = int(receipt["blockNumber"])
    record_registry(config, net.name, address, block)
    config.save(layout)
    return Deployed(address, block, tx, int(receipt["gasUsed"]))

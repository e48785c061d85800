"""The auditor's check of anchors (specs/FORMAT.md section 18.7).

For every anchor, recorded in anchors.jsonl or found in the registry's event
log, ask the node again and check, in order:

  A1  the transaction exists                               (else unconfirmed)
  A2  it was signed for the network's EVM chain id         (wrong-chain)
  A3  it has a receipt                                     (else unconfirmed)
  A4  the receipt's status is success                      (anchor-reverted)
  A5  its block is still canonical                         (else unconfirmed)
  A6  event mode: the registry emitted Anchored with this payload, and the
      input is the same call; calldata mode: a zero-value transaction to its
      own sender whose input is the payload                (anchor-payload)
  A6r event mode: the emitting address holds the registry's code
                                                           (anchor-registry)
  A7  the record agrees with the chain: payload, sender, target, block
      number and hash, gas used                            (receipt-mismatch)
  A8  enough confirmations                                 (else unconfirmed)

then against the local chain:

  C1  the payload names this chain                         (anchor-chain-id)
  C2  the chain holds at least tree_size entries           (truncated)
  C3  the root of its first tree_size entries is the anchored root, so the
      chain is consistent with the anchored history       (rewritten)
  C4  a checkpoint note stored for that size hashes to checkpoint_hash
      (anchors found only in the log may have no note)     (checkpoint-mismatch)

Every problem names the transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import blake3

from memory_chain.chain.log.anchors import read_anchors
from memory_chain.chain.log.checkpoint_store import load_checkpoints
from memory_chain.chain.log.merkle import BLAKE3, Frontier
from memory_chain.chain.store.ledger import Ledger

from .networks import Network
from .payload import ANCHORED_TOPIC, Payload, PayloadError, decode_calldata, decode_event
from .rpc import Rpc, hex0x

__all__ = ["AnchorReport", "Finding", "check_anchor", "prefix_roots", "verify_anchors"]

VALID: Final = "valid"
UNCONFIRMED: Final = "unconfirmed"
INVALID: Final = "invalid"


@dataclass(slots=True)
class Finding:
    """The verdict on one anchor."""

    tx: str
    network: str
    status: str = VALID  # valid | unconfirmed | invalid
    reason: str = ""  # a reason code when not valid
    detail: str = ""
    payload: Payload | None = None
    mode: str | None = None
    sender: str | None = None
    block: int | None = None
    confirmations: int | None = None
    recorded: bool = False  # in anchors.jsonl
    logged: bool = False  # found in the registry's event log
    notes: list[str] = field(default_factory=list)

    def fail(self, status: str, reason: str, detail: str) -> Finding:
        if self.status == VALID or (self.status == UNCONFIRMED and status == INVALID):
            self.status, self.reason, self.detail = status, reason, detail
        return self

    def as_dict(self) -> dict[str, Any]:
        p = self.payload
        return {
            "tx": self.tx,
            "network": self.network,
            "status": self.status,
            "reason": self.reason or None,
            "detail": self.detail or None,
            "mode": self.mode,
            "tree_size": p.tree_size if p else None,
            "root": p.root.hex() if p else None,
            "sender": self.sender,
            "block": self.block,
            "confirmations": self.confirmations,
            "recorded": self.recorded,
            "logged": self.logged,
            "notes": self.notes,
        }


@dataclass(slots=True)
class AnchorReport:
    chain_size: int
    findings: list[Finding]
    scanned: dict[str, tuple[int, int]]  # network -> (from block, to block) of the log scan
    skipped_lines: list[str]

    @property
    def ok(self) -> bool:
        return all(f.status == VALID for f in self.findings)

    @property
    def failure(self) -> Finding | None:
        bad = [f for f in self.findings if f.status == INVALID]
        bad = bad or [f for f in self.findings if f.status != VALID]
        return bad[0] if bad else None


def _bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return bytes.fromhex(str(value).removeprefix("0x"))


def _payload_of_record(rec: dict[str, Any]) -> Payload:
    return Payload(
        bytes.fromhex(rec["chain_id"]),
        rec["tree_size"],
        bytes.fromhex(rec["root"]),
        bytes.fromhex(rec["checkpoint_hash"]),
    )


def check_anchor(
    rpc: Rpc,
    tx_hash: str,
    *,
    mode: str,
    expect: Payload | None,
    registry: str | None,
    confirmations: int,
    record: dict[str, Any] | None = None,
    log_index: int | None = None,
) -> Finding:
    """Steps A1-A8 for one transaction (the node is asked again for everything)."""
    net = rpc.net
    f = Finding(tx_hash, net.name, mode=mode, payload=expect, recorded=record is not None)
    tx = rpc.transaction(tx_hash)  # A1
    if tx is None:
        return f.fail(
            UNCONFIRMED,
            "anchor-missing",
            f"transaction {tx_hash} is not on {net.describe()}: never mined, or dropped by a reorg",
        )
    f.sender = hex0x(tx["from"])
    chain_id = tx.get("chainId")  # A2
    if chain_id is None or int(chain_id) != net.evm_chain_id:
        return f.fail(
            INVALID,
            "wrong-chain",
            f"transaction {tx_hash} was signed for EVM chain id {chain_id}, not {net.describe()}",
        )
    receipt = rpc.receipt(tx_hash)  # A3
    if receipt is None:
        return f.fail(UNCONFIRMED, "anchor-pending", f"transaction {tx_hash} is not mined yet")
    if int(receipt["status"]) != 1:  # A4
        return f.fail(INVALID, "anchor-reverted", f"transaction {tx_hash} reverted")
    number = int(receipt["blockNumber"])
    f.block = number
    block_hash = hex0x(receipt["blockHash"])
    if rpc.block_hash(number) != block_hash:  # A5
        return f.fail(
            UNCONFIRMED,
            "anchor-reorged",
            f"transaction {tx_hash}'s block {number} is no longer canonical",
        )
    try:  # A6
        found = _payload_in(tx, receipt, mode, registry, log_index)
    except PayloadError as exc:
        return f.fail(INVALID, "anchor-payload", f"transaction {tx_hash}: {exc}")
    if mode == "event" and registry is not None and not _is_registry(rpc, registry):
        return f.fail(
            INVALID,
            "anchor-registry",
            f"transaction {tx_hash}'s event comes from {registry.lower()}, "
            "which does not hold the registry contract's code",
        )
    if expect is not None and found != expect:
        return f.fail(
            INVALID,
            "anchor-payload",
            f"transaction {tx_hash} carries {found.describe()}, "
            f"not the checkpoint's {expect.describe()}",
        )
    f.payload = found
    if record is not None:  # A7
        wrong = _record_mismatch(record, tx, receipt, found)
        if wrong:
            return f.fail(
                INVALID,
                "receipt-mismatch",
                f"anchors.jsonl disagrees with the chain about transaction {tx_hash}: {wrong}",
            )
    f.confirmations = rpc.block_number() - number + 1  # A8
    if f.confirmations < confirmations:
        return f.fail(
            UNCONFIRMED,
            "anchor-unconfirmed",
            f"transaction {tx_hash} has {f.confirmations} of {confirmations} confirmations",
        )
    return f


def _is_registry(rpc: Rpc, address: str) -> bool:
    """Whether ``address`` holds the registry's code (asked once per address and node)."""
    from .artifact import load_artifact

    key = address.lower()
    known = rpc.memo.get(("registry", key))
    if known is None:
        known = rpc.code(address) == load_artifact().deployed_bytecode
        rpc.memo[("registry", key)] = known
    return bool(known)


def _payload_in(
    tx: dict[str, Any],
    receipt: dict[str, Any],
    mode: str,
    registry: str | None,
    log_index: int | None,
) -> Payload:
    data = _bytes(tx["input"])
    sender = hex0x(tx["from"])
    to = hex0x(tx["to"]) if tx.get("to") else None
    if mode == "calldata":
        if to != sender:
            raise PayloadError(f"a calldata anchor goes to its sender, this one to {to}")
        if int(tx["value"]) != 0:
            raise PayloadError("a calldata anchor carries no value")
        return decode_calldata(data)
    if registry is None:
        raise PayloadError("no registry address to check the event against")
    registry = registry.lower()
    logs = [
        log
        for log in receipt["logs"]
        if hex0x(log["address"]) == registry
        and log["topics"]
        and _bytes(log["topics"][0]) == ANCHORED_TOPIC
        and (log_index is None or int(log["logIndex"]) == log_index)
    ]
    if len(logs) != 1:
        raise PayloadError(f"{len(logs)} Anchored events from registry {registry}, expected 1")
    payload, emitter = decode_event([_bytes(t) for t in logs[0]["topics"]], _bytes(logs[0]["data"]))
    if log_index is None:
        # Recorded by us: the transaction itself is the call to the registry.
        if to != registry:
            raise PayloadError(f"sent to {to}, not to the registry {registry}")
        if decode_calldata(data) != payload:
            raise PayloadError("the input and the event carry different payloads")
        if "0x" + emitter.hex() != sender:
            raise PayloadError("the event names another sender")
    return payload


def _record_mismatch(
    rec: dict[str, Any], tx: dict[str, Any], receipt: dict[str, Any], found: Payload
) -> str | None:
    checks: list[tuple[str, Any, Any]] = [
        ("evm_chain_id", rec.get("evm_chain_id"), int(tx["chainId"])),
        ("chain_id", rec["chain_id"], found.chain_id.hex()),
        ("tree_size", rec["tree_size"], found.tree_size),
        ("root", rec["root"], found.root.hex()),
        ("checkpoint_hash", rec["checkpoint_hash"], found.checkpoint_hash.hex()),
    ]
    if "from" in rec:
        checks.append(("from", rec["from"], hex0x(tx["from"])))
    if "to" in rec:
        checks.append(("to", rec["to"], hex0x(tx["to"]) if tx.get("to") else None))
    if "block_number" in rec:
        checks.append(("block_number", rec["block_number"], int(receipt["blockNumber"])))
    if "block_hash" in rec:
        checks.append(("block_hash", rec["block_hash"], hex0x(receipt["blockHash"])))
    if "gas_used" in rec:
        checks.append(("gas_used", rec["gas_used"], int(receipt["gasUsed"])))
    for name, mine, theirs in checks:
        if isinstance(mine, str) and isinstance(theirs, str):
            mine, theirs = mine.lower(), theirs.lower()
        if mine != theirs:
            return f"{name} is {mine} in the record, {theirs} on chain"
    return None


def prefix_roots(ledger: Ledger, sizes: Iterable[int]) -> tuple[bytes, int, dict[int, bytes]]:
    """(chain id, size, {size: root of the first size entries}) in one pass.

    Leaves are the complete lines without their newline (FORMAT 10.1); an
    unterminated last line is not an entry.
    """
    want = sorted(set(sizes))
    frontier = Frontier(BLAKE3)
    roots: dict[int, bytes] = {}
    chain_id = bytes(32)
    i = n = 0
    leaf = BLAKE3.leaf
    for raw in ledger.iter_lines():
        if not raw.endswith(b"\n"):
            break
        line = raw[:-1]
        if n == 0:
            chain_id = blake3.blake3(line).digest()
        frontier.append(leaf(line))
        n += 1
        while i < len(want) and want[i] == n:
            roots[n] = frontier.root()
            i += 1
    return chain_id, n, roots


def scan_registry(rpc: Rpc, chain_id: bytes, start: int) -> tuple[list[dict[str, Any]], int]:
    """Every Anchored log for ``chain_id`` from block ``start`` to the head; (logs, head)."""
    net = rpc.net
    assert net.registry is not None
    head = rpc.block_number()
    topics: list[str | None] = ["0x" + ANCHORED_TOPIC.hex(), "0x" + chain_id.hex()]
    logs: list[dict[str, Any]] = []
    lo = start
    while lo <= head:
        hi = min(head, lo + net.scan_step - 1)
        logs.extend(rpc.logs(net.registry, topics, lo, hi))
        lo = hi + 1
    return logs, head


def verify_anchors(
    ledger: Ledger,
    rpcs: Sequence[Rpc],
    *,
    senders: Sequence[str] = (),
) -> AnchorReport:
    """Check every recorded anchor on these networks, and every logged one; then C1-C4."""
    chain_id = _genesis_hash(ledger)
    anchors = read_anchors(ledger.layout)
    findings: list[Finding] = []
    scanned: dict[str, tuple[int, int]] = {}
    want_senders = {s.lower() for s in senders}
    for rpc in rpcs:
        net = rpc.net
        mine = [r for r in anchors.records if r["network"] == net.name]
        seen: dict[str, Finding] = {}
        for rec in mine:
            if rec["state"] in ("dropped", "failed"):
                continue  # never anchored anything: nothing to check
            registry = rec.get("to") if rec["mode"] == "event" else None
            if rec.get("evm_chain_id") != net.evm_chain_id:
                f = Finding(rec["tx"], net.name, recorded=True, mode=rec["mode"])
                f.payload = _payload_of_record(rec)
                findings.append(
                    f.fail(
                        INVALID,
                        "wrong-chain",
                        f"anchors.jsonl says transaction {rec['tx']} is on EVM chain id "
                        f"{rec.get('evm_chain_id')}, but {net.describe()} is checked",
                    )
                )
                seen[rec["tx"]] = f  # so that the log scan does not list it a second time
                continue
            f = check_anchor(
                rpc,
                rec["tx"],
                mode=rec["mode"],
                expect=_payload_of_record(rec),
                registry=registry,
                confirmations=net.confirmations,
                record=rec,
            )
            seen[rec["tx"]] = f
            findings.append(f)
        if net.registry is None:
            continue
        logs, head = scan_registry(rpc, chain_id, net.registry_block)
        scanned[net.name] = (net.registry_block, head)
        for log in logs:
            tx = hex0x(log["transactionHash"])
            if tx in seen:
                seen[tx].logged = True
                continue
            topics = [_bytes(t) for t in log["topics"]]
            try:
                _payload, emitter = decode_event(topics, _bytes(log["data"]))
            except PayloadError:
                continue  # not an Anchored log after all: nothing it could commit to
            if want_senders and "0x" + emitter.hex() not in want_senders:
                continue
            f = check_anchor(
                rpc,
                tx,
                mode="event",
                expect=None,
                registry=net.registry,
                confirmations=net.confirmations,
                log_index=int(log["logIndex"]),
            )
            f.logged = True
            f.notes.append("found in the registry's log; not in anchors.jsonl")
            seen[tx] = f
            findings.append(f)
    size = _check_local(ledger, findings)
    return AnchorReport(size, findings, scanned, anchors.skipped)


def _genesis_hash(ledger: Ledger) -> bytes:
    """The chain id's 32 bytes: BLAKE3 of line 0 without its newline (zeros if none)."""
    try:
        with open(ledger.layout.chain, "rb") as f:
            first = f.readline()
    except OSError:
        return bytes(32)
    return blake3.blake3(first[:-1]).digest() if first.endswith(b"\n") else bytes(32)


def _check_local(ledger: Ledger, findings: list[Finding]) -> int:
    """C1-C4: every anchored payload against the local chain; returns the chain's size."""
    sizes = [f.payload.tree_size for f in findings if f.payload is not None]
    chain_id, size, roots = prefix_roots(ledger, sizes)
    notes = {cp.size: blake3.blake3(cp.text).digest() for cp in load_checkpoints(ledger.layout)}
    for f in findings:
        p = f.payload
        if p is None or f.status == INVALID:
            continue
        where = f"anchor {f.tx} on {f.network}"
        if p.chain_id != chain_id:  # C1
            f.fail(INVALID, "anchor-chain-id", f"{where} is for chain b3:{p.chain_id.hex()}")
        elif p.tree_size > size:  # C2
            f.fail(
                INVALID,
                "truncated",
                f"chain has {size} entries; {where} commits to {p.tree_size}",
            )
        elif roots[p.tree_size] != p.root:  # C3
            f.fail(
                INVALID,
                "rewritten",
                f"the first {p.tree_size} entries do not hash to the root of {where}: "
                "history was rewritten after it was anchored",
            )
        elif p.tree_size in notes and notes[p.tree_size] != p.checkpoint_hash:  # C4
            f.fail(
                INVALID,
                "checkpoint-mismatch",
                f"checkpoints/ holds another note for size {p.tree_size} than {where} hashes",
            )
        elif p.tree_size not in notes:
            f.notes.append("no local checkpoint note for this size; the root matches")
    return size


def check_references(
    url: str, checkpoint_payload: Payload, references: Sequence[dict[str, Any]], confirmations: int
) -> list[Finding]:
    """A1-A8 for the anchor references a proof bundle carries, against the node at ``url``.

    Each reference must commit to the bundle's checkpoint (``checkpoint_payload``);
    the node must serve the EVM chain id the reference names.
    """
    from .rpc import Rpc

    out = []
    for ref in references:
        try:
            net = Network(
                str(ref["network"]),
                int(ref["evm_chain_id"]),
                url,
                str(ref["to"]) if ref.get("mode") == "event" else None,
                0,
                confirmations,
            )
            tx = str(ref["tx"])
            mode = str(ref["mode"])
        except (KeyError, TypeError, ValueError):
            f = Finding(str(ref.get("tx", "?")), str(ref.get("network", "?")))
            out.append(f.fail(INVALID, "anchor-payload", "an anchor reference is malformed"))
            continue
        rpc = Rpc(net, url)
        served = rpc.chain_id()
        if served != net.evm_chain_id:
            f = Finding(tx, net.name, mode=mode)
            out.append(
                f.fail(
                    INVALID,
                    "wrong-chain",
                    f"anchor {tx} is on EVM chain id {net.evm_chain_id}, "
                    f"but the node at {url} serves {served}",
                )
            )
            continue
        out.append(
            check_anchor(
                rpc,
                tx,
                mode=mode,
                expect=checkpoint_payload,
                registry=net.registry,
                confirmations=confirmations,
                record=ref,
            )
        )
    return out

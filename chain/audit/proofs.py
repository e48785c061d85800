"""Proofs from a data directory: inclusion bundles and consistency proofs.

Making a proof reads the chain's first n lines once and hashes them: O(n)
leaf hashes plus O(n) node hashes for a tree of size n (about 6 µs per
entry on a 2-core test machine, reading included); the proof itself is
O(log n) hashes. Every proof is
checked with the offline verifier before it is handed out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from ..format.canonical import strict_hex
from ..format.errors import InputError, IntegrityError
from ..log.anchors import read_anchors
from ..log.bundle import BundleError, ProvedLine, key_at, load_json, make_bundle, verify_bundle
from ..log.checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from ..log.checkpoint_store import latest_checkpoint
from ..log.merkle import BLAKE3, ProofError, consistency_proof, inclusion_proof, verify_consistency
from ..store.head import load_head
from ..store.ledger import Ledger

__all__ = [
    "CONSISTENCY_FORMAT",
    "Consistency",
    "check_consistency_file",
    "load_checkpoint_file",
    "prove_consistency",
    "prove_entry",
    "read_anchor_records",
]

CONSISTENCY_FORMAT: Final = "memory-chain-consistency/1"


@dataclass(slots=True)
class _Tree:
    leaves: list[bytes]
    genesis: bytes
    rotations: list[tuple[int, bytes]]
    lines: dict[int, bytes]


def _read_tree(ledger: Ledger, size: int, want: set[int]) -> _Tree:
    """The leaf hashes of the first ``size`` lines, and the lines a bundle needs."""
    leaves: list[bytes] = []
    rotations: list[tuple[int, bytes]] = []
    lines: dict[int, bytes] = {}
    genesis = b""
    for raw in ledger.iter_lines():
        if len(leaves) == size:
            break
        if not raw.endswith(b"\n"):
            break
        line = raw[:-1]
        seq = len(leaves)
        leaves.append(BLAKE3.leaf(line))
        if seq == 0:
            genesis = line
        if b'"type":"key-rotation"' in line and orjson.loads(line)["type"] == "key-rotation":
            rotations.append((seq, line))
        if seq in want:
            lines[seq] = line
    if len(leaves) < size:
        raise IntegrityError(
            f"chain has {len(leaves)} entries; the checkpoint commits to {size}",
            reason="truncated",
            seq=len(leaves),
            hint="run `memory-chain verify`",
        )
    return _Tree(leaves, genesis, rotations, lines)


def read_anchor_records(ledger: Ledger, cp: Checkpoint) -> list[dict[str, Any]]:
    """Anchor records (anchors.jsonl, merged per transaction) for ``cp``'s size and root.

    The signed raw transaction is left out: a bundle needs the reference, not
    the bytes that were broadcast.
    """
    found = read_anchors(ledger.layout).for_checkpoint(cp.size, cp.root)
    return [{k: v for k, v in rec.items() if k != "raw_tx"} for rec in found]


def prove_entry(
    ledger: Ledger, seq: int, *, with_content: bool = False, checkpoint: Checkpoint | None = None
) -> bytes:
    """A proof bundle for entry ``seq`` against the latest checkpoint (made if needed)."""
    if seq < 0:
        raise InputError(f"seq must be >= 0, not {seq}")
    if checkpoint is not None and checkpoint.size <= seq:
        raise InputError(f"entry {seq} is not in {checkpoint.describe()} (size {checkpoint.size})")
    cp = checkpoint or latest_checkpoint(ledger.layout)
    if cp is None or cp.size <= seq:
        head = load_head(ledger.layout)
        if head is not None and seq >= head.size:  # before writing a checkpoint
            raise InputError(
                f"no entry with seq {seq} (the chain has {head.size})",
                hint="`memory-chain log` lists the entries",
            )
        if with_content:  # a proof that cannot be made leaves no checkpoint behind
            _content_of(ledger, seq, ledger.entry(seq).get("content"))
        from .checkpointing import checkpoint as make

        cp = make(ledger).checkpoint
        if cp.size <= seq:
            raise InputError(
                f"no entry with seq {seq} (the chain has {cp.size})",
                hint="`memory-chain log` lists the entries",
            )
    tree = _read_tree(ledger, cp.size, {seq})
    entry_line = tree.lines[seq]
    content = None
    if with_content:
        content = _content_of(ledger, seq, orjson.loads(entry_line)["content"])

    def proved(s: int, line: bytes) -> ProvedLine:
        return ProvedLine(line, inclusion_proof(BLAKE3, tree.leaves, s))

    data = make_bundle(
        checkpoint=cp,
        entry=proved(seq, entry_line),
        genesis=proved(0, tree.genesis),
        rotations=[proved(s, line) for s, line in tree.rotations],
        content=content,
        anchors=read_anchor_records(ledger, cp),
    )
    # Hand out only what an auditor will accept.
    cid = ledger.config.chain_id
    try:
        verify_bundle(data, chain_id=cid, trusted_key=None if cid else _genesis_key(tree))
    except BundleError as exc:
        raise IntegrityError(
            f"the proof for seq {seq} does not verify against {cp.describe()}: {exc.message}",
            reason=exc.reason,
            seq=seq,
            hint="run `memory-chain verify`",
        ) from None
    return data


def _content_of(ledger: Ledger, seq: int, content_hash: str | None) -> bytes:
    """The blob of entry ``seq`` for a bundle, or InputError when there is none."""
    if content_hash is None:
        raise InputError(f"entry {seq} has no content")
    content = ledger.store.get(content_hash)
    if content is None:
        raise InputError(f"the content of entry {seq} was redacted (its blob is gone)")
    return content


def _genesis_key(tree: _Tree) -> str:
    return str(orjson.loads(tree.genesis)["key"])


@dataclass(frozen=True, slots=True)
class Consistency:
    old: Checkpoint
    new: Checkpoint
    proof: list[bytes]

    def to_json(self) -> bytes:
        obj = {
            "format": CONSISTENCY_FORMAT,
            "old": self.old.text.decode(),
            "new": self.new.text.decode(),
            "proof": [h.hex() for h in self.proof],
        }
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _checked(old: Checkpoint, new: Checkpoint, proof: list[bytes]) -> None:
    if old.origin != new.origin:
        raise IntegrityError(
            f"the checkpoints are of different logs: {old.origin} and {new.origin}",
            reason="wrong-origin",
        )
    if old.size > new.size:
        raise InputError(
            f"the old checkpoint ({old.size}) is larger than the new one ({new.size})",
            hint="give the smaller checkpoint first",
        )
    try:
        verify_consistency(BLAKE3, old.size, new.size, proof, old.root, new.root)
    except ProofError as exc:
        raise IntegrityError(
            f"{new.describe()} (size {new.size}) does not extend {old.describe()} "
            f"(size {old.size}): {exc}",
            reason="inconsistent",
        ) from None


def prove_consistency(ledger: Ledger, old: Checkpoint, new: Checkpoint) -> Consistency:
    """Prove from the local chain that ``new`` extends ``old``, and check the proof.

    Both checkpoints must be signed by the chain's key in force at their
    size and be roots of the local chain's prefixes.
    """
    if old.size < 1:
        raise InputError("a consistency proof from an empty tree proves nothing")
    if old.size > new.size:
        raise InputError(
            f"the old checkpoint ({old.size}) is larger than the new one ({new.size})",
            hint="give the smaller checkpoint first",
        )
    tree = _read_tree(ledger, new.size, set())
    keys = _keys_at(tree)
    for cp in (old, new):
        if not cp.signed_by(keys(cp.size)):
            raise IntegrityError(
                f"{cp.describe()} is not signed by {keys(cp.size)}, this chain's key "
                f"at size {cp.size}",
                reason="checkpoint-signature",
            )
    proof = consistency_proof(BLAKE3, tree.leaves, old.size, new.size)
    _checked(old, new, proof)
    return Consistency(old, new, proof)


def _keys_at(tree: _Tree) -> Callable[[int], str]:
    """seq -> the key in force there (for a checkpoint of size n: ``key(n)``)."""
    genesis_key = _genesis_key(tree)
    rotations = [(s, str(orjson.loads(line)["meta"]["new_key"])) for s, line in tree.rotations]
    return lambda seq: key_at(seq, genesis_key, rotations)


def load_checkpoint_file(data: bytes, label: str) -> Checkpoint:
    try:
        return parse_checkpoint(data).with_label(label)
    except CheckpointError as exc:
        raise InputError(f"{label} is not a checkpoint: {exc}") from None


def check_consistency_file(data: bytes, *, trusted_key: str | None) -> Consistency:
    """Verify a consistency proof file offline (FORMAT.md section 15).

    Raises BundleError with the step of section 15 that failed: 1
    ``not-a-consistency-proof`` and 4 ``bad-sizes`` are bad input, 2
    ``checkpoint-signature``, 3 ``wrong-origin`` and 5 ``inconsistent`` a
    failed proof. Both checkpoints must be signed by ``trusted_key``.
    """
    obj = load_json(data)
    bad = f"not a {CONSISTENCY_FORMAT} file"
    if not isinstance(obj, dict) or obj.get("format") != CONSISTENCY_FORMAT:
        raise BundleError("not-a-consistency-proof", bad, step=1)
    old_text, new_text, hashes = obj.get("old"), obj.get("new"), obj.get("proof")
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        raise BundleError("not-a-consistency-proof", bad, step=1)
    if not isinstance(hashes, list):
        raise BundleError("not-a-consistency-proof", bad, step=1)
    try:
        old = parse_checkpoint(old_text.encode()).with_label("the old checkpoint")
        new = parse_checkpoint(new_text.encode()).with_label("the new checkpoint")
    except CheckpointError as exc:
        raise BundleError("not-a-consistency-proof", f"a checkpoint: {exc}", step=1) from None
    decoded = [strict_hex(h) for h in hashes]
    proof = [h for h in decoded if h is not None]
    if len(proof) != len(decoded):
        raise BundleError("not-a-consistency-proof", "proof hashes must be hex", step=1)
    if trusted_key is None:
        raise BundleError("unpinned", "a consistency proof is checked against a key", step=1)
    for cp in (old, new):
        if not cp.signed_by(trusted_key):
            raise BundleError(
                "checkpoint-signature",
                f"{cp.describe()} is not signed by the trusted key {trusted_key}",
                step=2,
            )
    try:
        _checked(old, new, proof)
    except IntegrityError as exc:
        raise BundleError(exc.reason, exc.message, step=_STEP_OF[exc.reason]) from None
    except InputError as exc:
        raise BundleError("bad-sizes", exc.message, step=4) from None
    return Consistency(old, new, proof)


_STEP_OF: Final = {"wrong-origin": 3, "inconsistent": 5}

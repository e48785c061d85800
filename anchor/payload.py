"""The anchor payload: what a transaction commits to, byte for byte.

Both modes carry the same 132 bytes (specs/FORMAT.md section 18.2): the
ABI-encoded call ``anchor(bytes32 chainId, uint64 treeSize, bytes32 root,
bytes32 checkpointHash)``. In ``event`` mode they are sent to the registry,
which logs ``Anchored``; in ``calldata`` mode they are sent to the sender's
own address, with no value, and the transaction input is the record.

Pure functions over bytes: no web3 here, so checking a payload costs nothing
to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import blake3

from memory_chain.chain.log.checkpoint import Checkpoint

__all__ = [
    "ANCHORED_TOPIC",
    "ANCHOR_SELECTOR",
    "CALLDATA_SIZE",
    "Payload",
    "PayloadError",
    "decode_calldata",
    "decode_event",
    "payload_of",
]

# keccak256("anchor(bytes32,uint64,bytes32,bytes32)")[:4]; a test recomputes it.
ANCHOR_SELECTOR: Final = bytes.fromhex("7f00e393")
# keccak256("Anchored(bytes32,uint64,bytes32,bytes32,address)"); a test recomputes it.
ANCHORED_TOPIC: Final = bytes.fromhex(
    "a5a075337b25e826b34aaec08938fe05a4c35aca3e469eb0debb58759e5a0b5b"
)
CALLDATA_SIZE: Final = 4 + 4 * 32
_U64_MAX: Final = 2**64 - 1


class PayloadError(ValueError):
    """Bytes that are not an anchor payload."""


@dataclass(frozen=True, slots=True)
class Payload:
    """One anchor: a checkpoint's chain id, tree size, root and note hash."""

    chain_id: bytes  # 32 bytes: the chain id's hash (FORMAT 3.3) without "b3:"
    tree_size: int
    root: bytes  # 32 bytes: the checkpoint's Merkle root
    checkpoint_hash: bytes  # 32 bytes: BLAKE3-256 of the signed note's bytes

    def __post_init__(self) -> None:
        for name in ("chain_id", "root", "checkpoint_hash"):
            if len(getattr(self, name)) != 32:
                raise PayloadError(f"{name} must be 32 bytes")
        if not 0 < self.tree_size <= _U64_MAX:
            raise PayloadError(f"tree size {self.tree_size} is out of range")

    def calldata(self) -> bytes:
        """The 132-byte input of the transaction, in either mode."""
        return (
            ANCHOR_SELECTOR
            + self.chain_id
            + self.tree_size.to_bytes(32, "big")
            + self.root
            + self.checkpoint_hash
        )

    def event_data(self) -> bytes:
        """The data of the Anchored log (the non-indexed fields)."""
        return self.tree_size.to_bytes(32, "big") + self.root + self.checkpoint_hash

    def describe(self) -> str:
        return f"size {self.tree_size}, root {self.root.hex()[:16]}…"


def payload_of(cp: Checkpoint) -> Payload:
    """The payload that anchors checkpoint ``cp``."""
    cid = cp.chain_id
    if cid is None:
        raise PayloadError(f"{cp.describe()} does not name a memory chain")
    return Payload(
        bytes.fromhex(cid.removeprefix("b3:")),
        cp.size,
        cp.root,
        blake3.blake3(cp.text).digest(),
    )


def _size(word: bytes) -> int:
    if word[:24] != bytes(24):
        raise PayloadError("tree size does not fit in uint64")
    return int.from_bytes(word, "big")


def decode_calldata(data: bytes) -> Payload:
    """The payload of a transaction input; raises PayloadError if it is not one."""
    if len(data) != CALLDATA_SIZE:
        raise PayloadError(f"input is {len(data)} bytes, an anchor is {CALLDATA_SIZE}")
    if data[:4] != ANCHOR_SELECTOR:
        raise PayloadError(f"input starts with 0x{data[:4].hex()}, not the anchor selector")
    words = [data[4 + 32 * i : 36 + 32 * i] for i in range(4)]
    return Payload(words[0], _size(words[1]), words[2], words[3])


def decode_event(topics: list[bytes], data: bytes) -> tuple[Payload, bytes]:
    """(payload, sender address) of an Anchored log; raises PayloadError if it is not one."""
    if len(topics) != 3 or topics[0] != ANCHORED_TOPIC:
        raise PayloadError("the log is not an Anchored event")
    if len(data) != 96:
        raise PayloadError(f"Anchored data is {len(data)} bytes, not 96")
    if topics[2][:12] != bytes(12):
        raise PayloadError("the sender topic is not an address")
    payload = Payload(topics[1], _size(data[:32]), data[32:64], data[64:96])
    return payload, topics[2][12:]

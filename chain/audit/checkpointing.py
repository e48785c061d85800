"""Make a checkpoint: verify, sign the verified root, store it, tell the witness.

The root that gets signed is the one verify computed from the chain's own
bytes (resumed from the verification cache, so O(new entries)), never the
cached head's frontier alone: head.json is a cache in the data directory,
and a checkpoint commits the key holder to its root. The head's frontier
must agree with it; if it does not, the head was tampered with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..format.config import resolve_state_dir
from ..format.errors import IntegrityError, KeyAccessError
from ..log.checkpoint import Checkpoint, make_checkpoint
from ..log.checkpoint_store import latest_checkpoint, note_path, save_checkpoint
from ..log.witness import Witness
from ..store.ledger import Ledger
from ..verify.lines import Report
from .verify_ledger import verify_ledger

__all__ = ["Made", "checkpoint", "refusal"]


@dataclass(frozen=True, slots=True)
class Made:
    checkpoint: Checkpoint
    path: Path
    new: bool  # False when the latest checkpoint already covered the chain
    witnessed: bool  # the witness learned it


def refusal(report: Report, what: str) -> IntegrityError:
    """Why a chain that did not verify is not signed for (checkpointed, published)."""
    return IntegrityError(
        f"the chain does not verify, so it cannot be {what}: {report.failure}",
        reason=report.failure.reason if report.failure else "unverified",
        seq=report.failure.seq if report.failure else None,
        hint="run `memory-chain verify` for the full report",
    )


def checkpoint(ledger: Ledger, *, witness: Witness | None = None) -> Made:
    """Sign a checkpoint of the whole (verified) chain, unless one exists for its size."""
    if witness is None:
        witness = Witness.in_state_dir(resolve_state_dir())
    signer = ledger.signer()
    with ledger.locked() as (_fd, head):
        report = verify_ledger(ledger, witness=witness)
        if not report.ok or report.root is None or report.chain_id is None:
            raise refusal(report, "checkpointed")
        if report.size == head.size and report.root != head.root():
            raise IntegrityError(
                "head.json's Merkle frontier disagrees with the chain: it was tampered with",
                reason="bad-head",
                hint="remove head.json (it is rebuilt from the chain) and try again",
            )
        latest = latest_checkpoint(ledger.layout)
        if latest is not None and latest.size == report.size and latest.root == report.root:
            return Made(latest, note_path(ledger.layout, latest.size), False, False)
        if signer.key_id != report.key:
            raise KeyAccessError(
                f"the signing key {signer.key_id} is not the chain's current key {report.key}",
                hint="use the key named by the last key rotation",
            )
        cp = make_checkpoint(report.chain_id, report.size, report.root, signer)
        path = save_checkpoint(ledger.layout, cp)
        return Made(cp, path, True, witness.record(cp))

"""Verify a data directory: the pure verifier fed from disk, plus local pins.

Beyond verify.verify_lines this checks the chain against what this
directory itself remembers: the chain id pinned in config.json and the
cached head (a chain shorter than the head was truncated).
"""

from __future__ import annotations

import os
from pathlib import Path

from .entry import HASH_RE
from .errors import InputError
from .head import load_head
from .ledger import Ledger
from .parallel import verify_parallel
from .verify import Failure, Report, verify_lines

__all__ = ["AUTO_PARALLEL_BYTES", "default_workers", "verify_ledger"]

#: Below this chain size, starting worker processes costs more than it saves.
AUTO_PARALLEL_BYTES = 4 << 20


def default_workers(chain: Path) -> int:
    """All cores for a large chain, one process for a small one."""
    try:
        size = chain.stat().st_size
    except OSError:
        return 1
    return (os.cpu_count() or 1) if size >= AUTO_PARALLEL_BYTES else 1


def verify_ledger(
    ledger: Ledger,
    *,
    from_seq: int = 0,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    workers: int | None = None,
) -> Report:
    """Verify the chain in ``ledger``'s directory with its blobs and pins.

    ``chain_id`` is pinned in addition to the one in config.json.
    """
    if chain_id is not None and HASH_RE.fullmatch(chain_id) is None:
        raise InputError(f"not a chain id: {chain_id!r}", hint="a chain id is b3:<64 hex>")
    # Read the cached head before the chain: the chain only grows, so a
    # write landing in between cannot look like a truncation.
    head = load_head(ledger.layout)
    n = workers if workers is not None else default_workers(ledger.layout.chain)
    if n > 1:
        report = verify_parallel(
            ledger.iter_lines(),
            content_root=ledger.layout.content,
            workers=n,
            trusted_key=trusted_key,
            chain_id=chain_id,
            from_seq=from_seq,
        )
    else:
        report = verify_lines(
            ledger.iter_lines(),
            blobs=ledger.store.get,
            trusted_key=trusted_key,
            chain_id=chain_id,
            from_seq=from_seq,
        )
    if report.ok and from_seq >= report.size > 0:
        raise InputError(
            f"--from {from_seq} is beyond the last entry (seq {report.size - 1}): nothing checked"
        )
    failure = None
    pinned = ledger.config.chain_id
    if report.ok and pinned is not None and report.chain_id != pinned:
        failure = Failure(
            0,
            11,
            "chain-id-mismatch",
            f"chain id {report.chain_id} is not {pinned}, pinned in config.json",
        )
    elif (
        report.ok
        and head is not None
        and head.chain_id == report.chain_id
        and head.size > report.size
    ):
        failure = Failure(
            report.size,
            12,
            "truncated",
            f"chain has {report.size} entries; the cached head of this directory "
            f"recorded {head.size}",
        )
    if failure is None:
        return report
    return Report(
        False,
        report.size,
        report.head,
        report.chain_id,
        report.key,
        failure,
        report.torn_tail,
        from_seq,
    )

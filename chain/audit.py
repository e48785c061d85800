"""Verify a data directory: the pure verifier fed from disk, plus local pins.

Beyond verify.verify_lines this checks the chain against what this
directory itself remembers: the chain id pinned in config.json and the
cached head (a chain shorter than the head was truncated).
"""

from __future__ import annotations

import os
from pathlib import Path

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
    """Verify the chain in ``ledger``'s directory with its blobs and pins."""
    pinned = chain_id or ledger.config.chain_id
    n = workers if workers is not None else default_workers(ledger.layout.chain)
    if n > 1:
        report = verify_parallel(
            ledger.iter_lines(),
            content_root=ledger.layout.content,
            workers=n,
            trusted_key=trusted_key,
            chain_id=pinned,
            from_seq=from_seq,
        )
    else:
        report = verify_lines(
            ledger.iter_lines(),
            blobs=ledger.store.get,
            trusted_key=trusted_key,
            chain_id=pinned,
            from_seq=from_seq,
        )
    if report.ok:
        head = load_head(ledger.layout)
        if head is not None and head.chain_id == report.chain_id and head.size > report.size:
            failure = Failure(
                report.size,
                12,
                "truncated",
                f"chain has {report.size} entries; the cached head of this directory "
                f"recorded {head.size}",
            )
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
    return report

"""Verification across processes: stateless steps in workers, the rest here.

The main process reads chain.jsonl in chunks of lines and keeps at most
two chunks per worker in flight, so memory stays flat however long the
chain is. Workers run the per-line steps (1-3, 8, 9's signature, 10's
hashing: verify.check_lines); results come back in order and the main
process applies the stateful steps (4-7, 9, 10-12: ChainState.apply).
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from .content import ContentStore
from .verify import ChainState, Failure, LineResult, Report, check_chunk, chunks, report_of

__all__ = ["WORKER_CHUNK_LINES", "verify_parallel"]

#: Lines per unit of work sent to a worker (larger than verify.CHUNK_LINES,
#: which only groups lines for the two-phase check, to amortise pickling).
WORKER_CHUNK_LINES = 2000

_store: ContentStore | None = None


def _init_worker(content_root: str | None) -> None:
    global _store
    _store = ContentStore(Path(content_root)) if content_root else None


def _work(lines: list[bytes], start: int, from_seq: int) -> list[LineResult]:
    return check_chunk(lines, start, from_seq, _store.get if _store is not None else None)


def verify_parallel(
    lines: Iterable[bytes],
    *,
    content_root: Path | None,
    workers: int,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    from_seq: int = 0,
    chunk_lines: int = WORKER_CHUNK_LINES,
    state: ChainState | None = None,
) -> Report:
    """verify.verify_lines with the per-line work spread over ``workers`` processes.

    Same verdict as verify_lines; ``lines`` must be an iterator of raw lines
    as read from the file (the last may lack its newline).
    """
    if state is None:
        state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
    torn = 0
    ctx = multiprocessing.get_context("fork")
    root = str(content_root) if content_root is not None else None
    window: deque[Future[list[LineResult]]] = deque()
    failure: Failure | None = None
    seen = state.size
    with ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_init_worker, initargs=(root,)
    ) as pool:

        def drain_one() -> Failure | None:
            for result in window.popleft().result():
                f = state.apply(result)
                if f is not None:
                    return f
            return None

        for chunk, tail in chunks(lines, chunk_lines):
            if tail is not None:
                torn = len(tail)
            if chunk:
                window.append(pool.submit(_work, chunk, seen, from_seq))
                seen += len(chunk)
            while len(window) > 2 * workers:
                failure = drain_one()
                if failure is not None:
                    break
            if failure is not None:
                break
        while window and failure is None:
            failure = drain_one()
        for pending in window:
            pending.cancel()
    if failure is not None:
        torn = 0
    return report_of(state, state.finish(failure), torn, from_seq)

"""Verification across processes: stateless steps in workers, the rest here.

The chain is cut into chunks of whole lines. The main process keeps each
of ``workers - 1`` worker processes two chunks ahead, checks the chunks in
between itself, and applies the stateful steps (4-7, 9, 10-13:
ChainState.apply) to every result in order; the per-line steps (1-3, 8,
9's signature, 10's hashing: verify.check_chunk) run wherever the chunk
went. At most a few chunks are in flight or waiting to be applied, so
memory stays flat however long the chain is.

What crosses between processes is kept small, as every microsecond spent
on it is taken from the two cores doing the work: a worker is sent where
its chunk is in the chain file (it reads the bytes itself), or, for an
iterable of lines, the chunk's lines joined into one bytes object; it
sends back its results packed by column (see _pack), not as namedtuples.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from ..content.store import ContentStore
from ..format.errors import ChainStateError, OperationalError
from .lines import ChainState, Failure, LineResult, Report, Run, check_chunk, report_of

__all__ = ["WORKER_CHUNK_BYTES", "WORKER_CHUNK_LINES", "verify_parallel"]

#: Lines per unit of work cut from an iterable of lines (larger than
#: verify.CHUNK_LINES, which only groups lines for the two-phase check, to
#: amortise the hand-over).
WORKER_CHUNK_LINES = 512

#: Bytes per unit of work read from a chain file, at most (about 1,900
#: lines of the usual ~550 bytes): each chunk sent to a worker costs the
#: main process a fraction of a millisecond. Chunks shrink towards the end of the
#: file (to a quarter of what is left per worker, down to
#: _MIN_CHUNK_BYTES), so that the last ones leave a core idle only briefly.
#: A line longer than a chunk is carried on to its newline.
WORKER_CHUNK_BYTES = 1 << 20
_MIN_CHUNK_BYTES = 32 << 10

# Indexes of LineResult fields that _pack treats specially.
_HASH, _SEQ, _TYPE, _TIER, _PREV = (
    LineResult._fields.index(f) for f in ("hash", "seq", "type", "tier", "prev")
)

_store: ContentStore | None = None
_fd = -1  # the chain file, open in the main process before the workers were forked

#: Consecutive LineResults as _pack sends them: (line count, the LineResult
#: columns, whether the seq column was dropped, whether the prev column was).
Packed = tuple[int, list[Any], bool, bool]
#: A chunk's results as a worker sends them: its Runs as they are, the lines between packed.
Pieces = list["Run | Packed"]


def _init_worker(content_root: str | None, fd: int) -> None:
    global _store, _fd
    _store = ContentStore(Path(content_root)) if content_root else None
    _fd = fd


def _lines_of(chunk: bytes | list[bytes]) -> list[bytes]:
    """The lines of a chunk: newline-terminated lines joined, or a list of lines."""
    if isinstance(chunk, list):
        return chunk
    lines = chunk.split(b"\n")
    lines.pop()  # the empty piece after the last newline
    return lines


def _work(chunk: bytes | list[bytes] | Range, start: int, from_seq: int) -> Pieces:
    """In a worker process: the stateless steps for ``chunk``, packed.

    A Range is read from the chain file here (rather than sent through a
    pipe), and must hold what the main process found there: its length
    in bytes and its number of lines.
    """
    if isinstance(chunk, Range):
        data = os.pread(_fd, chunk.length, chunk.offset)
        lines = data.split(b"\n")
        if len(data) != chunk.length or lines.pop() or len(lines) != chunk.lines:
            raise OperationalError("the chain file changed while it was being verified")
    else:
        lines = _lines_of(chunk)
    return _pack_pieces(check_chunk(lines, start, from_seq, _store), start)


def _pack_pieces(pieces: Sequence[LineResult | Run], start: int) -> Pieces:
    """check_chunk's pieces for the pipe: Runs as they are, each group of LineResults packed."""
    out: Pieces = []
    group: list[LineResult] = []
    at = start  # the position of the next piece
    for piece in pieces:
        if type(piece) is Run:
            if group:
                out.append(_pack(group, at - len(group)))
                group = []
            out.append(piece)
            at += piece.entries
        else:
            assert type(piece) is LineResult
            group.append(piece)
            at += 1
    if group:
        out.append(_pack(group, at - len(group)))
    return out


def _pack(results: Sequence[LineResult], start: int) -> Packed:
    """Results by column, with the usual redundancy left out.

    Pickling 17-field namedtuples line by line costs both sides several
    microseconds a line; columns pickle as flat tuples. A column whose
    values are all equal (error None, sig_ok True, the key, ...) is sent
    as a 1-tuple. The seq column is dropped when it counts up from
    ``start``, the prev column (all but its first value) when it is the
    hash column shifted by one, as both are in a chain that verifies.
    """
    n = len(results)
    cols: list[Any] = list(zip(*results, strict=True))
    for i, col in enumerate(cols):
        if col.count(col[0]) == n:
            cols[i] = col[:1]
    cols[_TYPE] = tuple(map(sys.intern, cols[_TYPE]))
    cols[_TIER] = tuple(map(sys.intern, cols[_TIER]))
    counted = cols[_SEQ] == tuple(range(start, start + n))
    if counted:
        cols[_SEQ] = ()
    prevs, hashes = cols[_PREV], cols[_HASH]
    linked = n > 1 and len(hashes) == n and prevs[1:] == hashes[:-1]
    if linked:
        cols[_PREV] = prevs[:1]
    return n, cols, counted, linked


class Range(NamedTuple):
    """Where a chunk of whole lines is in the chain file."""

    offset: int
    length: int
    lines: int


_new_result = partial(tuple.__new__, LineResult)


def _unpack_pieces(pieces: Pieces, start: int) -> Iterator[LineResult | Run]:
    """The inverse of _pack_pieces, for a chunk that starts at line ``start``."""
    at = start
    for piece in pieces:
        if isinstance(piece, Run):
            yield piece
            at += piece.entries
        else:
            yield from _unpack(piece, at)
            at += piece[0]


def _unpack(packed: Packed, start: int) -> Iterator[LineResult]:
    """The LineResults of a chunk that starts at line ``start``, from _pack."""
    n, cols, counted, linked = packed
    if counted:
        cols[_SEQ] = range(start, start + n)
    if linked:
        cols[_PREV] = cols[_PREV] + cols[_HASH][:-1]
    columns = [col if len(col) == n else repeat(col[0], n) for col in cols]
    return map(_new_result, zip(*columns, strict=True))


def _chunks_of_lines(
    lines: Iterable[bytes], size: int
) -> Iterator[tuple[bytes | list[bytes], int, int, int]]:
    """(chunk, line count, torn tail bytes, -1) from raw lines, as verify.chunks cuts them.

    Complete lines are joined into one bytes object. Only the last line may
    lack its newline (the torn tail). An unterminated line with more after
    it (possible only from a caller's own iterable) goes alone, as a
    one-line list marked with a leading "\\n" that fails step 1, exactly as
    verify.chunks passes it on.
    """
    batch: list[bytes] = []
    tail: bytes | None = None
    for raw in lines:
        if tail is not None:
            if batch:
                yield _joined(batch), len(batch), 0, -1
                batch = []
            yield [b"\n" + tail], 1, 0, -1
            tail = None
        if not raw.endswith(b"\n"):
            tail = raw
            continue
        batch.append(raw)
        if len(batch) >= size:
            yield _joined(batch), len(batch), 0, -1
            batch = []
    if batch:
        yield _joined(batch), len(batch), 0, -1
    if tail is not None:
        yield b"", 0, len(tail), -1


def _joined(batch: list[bytes]) -> bytes | list[bytes]:
    """The newline-terminated lines of ``batch`` as one bytes object.

    A caller's iterable could hold a line with a newline inside it, which
    the worker would split in two: such a batch goes as a list of lines.
    """
    data = b"".join(batch)
    if data.count(b"\n") == len(batch):
        return data
    return [raw[:-1] for raw in batch]


def _open(path: Path) -> BinaryIO:
    """The chain file, open for reading, with Ledger.iter_lines' errors."""
    try:
        return open(path, "rb", buffering=0)
    except FileNotFoundError:
        raise ChainStateError(f"{path} is missing") from None
    except OSError as exc:
        raise OperationalError(f"cannot read {path}: {exc.strerror}") from None


def _chunks_of_file(
    f: BinaryIO, size: int, workers: int, end: int | None = None
) -> Iterator[tuple[bytes | list[bytes], int, int, int]]:
    """(chunk, line count, torn tail bytes, offset) from the chain file.

    Blocks of up to ``size`` bytes, read up to the size the file had when
    this starts (as Ledger.iter_lines does), so that a line being appended
    meanwhile is not split. Each block is cut after its last newline; the
    rest is carried into the next one. A line longer than a block is
    carried on until its newline.
    """
    remaining = os.fstat(f.fileno()).st_size if end is None else end
    offset = 0
    rest: list[bytes] = []
    while remaining > 0:
        want = min(size, max(_MIN_CHUNK_BYTES, remaining // (4 * workers)))
        block = f.read(min(remaining, want))
        if not block:
            break
        remaining -= len(block)
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            rest.append(block)
            continue
        if rest:
            rest.append(block[:cut])
            chunk = b"".join(rest)
        else:
            chunk = block[:cut] if cut < len(block) else block
        rest = [block[cut:]] if cut < len(block) else []
        yield chunk, chunk.count(b"\n"), 0, offset
        offset += len(chunk)
    torn = sum(map(len, rest))
    if torn:
        yield b"", 0, torn, offset


def verify_parallel(
    lines: Iterable[bytes] | Path,
    *,
    content_root: Path | None,
    workers: int,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    from_seq: int = 0,
    chunk_lines: int = WORKER_CHUNK_LINES,
    chunk_bytes: int = WORKER_CHUNK_BYTES,
    state: ChainState | None = None,
    end: int | None = None,
    advance: Callable[[int], None] | None = None,
) -> Report:
    """verify.verify_lines with the per-line work spread over ``workers`` processes.

    Same verdict as verify_lines. ``lines`` is either an iterator of raw
    lines as read from the file (the last may lack its newline), cut into
    chunks of ``chunk_lines``, or the path of chain.jsonl itself, read in
    chunks of up to ``chunk_bytes`` (faster: the main process then does no
    work per line but applying the results).

    The main process is one of the ``workers``: it starts ``workers - 1``
    worker processes, keeps each of them two chunks ahead, and checks the
    chunks in between itself (which saves sending them and their results,
    and keeps the processes to the number of cores they are meant for).
    ``state`` resumes from a verified prefix (with ``lines`` after it);
    ``end`` bounds how much of a path is read.
    """
    if state is None:
        state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
    if isinstance(lines, Path) and state.size:
        raise ValueError("a path is read from its first line: resume with lines, not a path")
    blobs = ContentStore(content_root) if content_root is not None else None
    helpers = max(0, workers - 1)
    ahead = 2 * helpers  # chunks queued or running in the worker processes, at most
    limit = 2 * workers + 2  # chunks checked or in flight but not applied yet, at most
    window: deque[tuple[Future[Pieces] | list[LineResult | Run], int]] = deque()
    failure: Failure | None = None
    torn = 0
    seen = state.size
    apply = state.apply

    def apply_head() -> Failure | None:
        done, start = window.popleft()
        results = _unpack_pieces(done.result(), start) if isinstance(done, Future) else done
        for result in results:
            f = apply(result)
            if f is not None:
                return f
        return None

    def running() -> int:
        return sum(1 for done, _ in window if isinstance(done, Future) and not done.done())

    with contextlib.ExitStack() as stack:
        fd = -1
        if isinstance(lines, Path):
            f = stack.enter_context(_open(lines))
            fd = f.fileno()
            source = _chunks_of_file(f, chunk_bytes, workers, end)
        else:
            source = _chunks_of_lines(lines, chunk_lines)
        pool: ProcessPoolExecutor | None = None
        for chunk, count, tail, offset in source:
            torn = tail
            if not count:
                continue
            if helpers and running() < ahead:
                if pool is None:
                    pool = stack.enter_context(
                        ProcessPoolExecutor(
                            helpers,
                            mp_context=multiprocessing.get_context("fork"),
                            initializer=_init_worker,
                            initargs=(str(content_root) if content_root else None, fd),
                        )
                    )
                    stack.callback(_cancel, window)
                work: bytes | list[bytes] | Range = chunk
                if offset >= 0:  # from the file: the worker reads it there
                    work = Range(offset, len(chunk), count)
                window.append((pool.submit(_work, work, seen, from_seq), seen))
            else:
                window.append((check_chunk(_lines_of(chunk), seen, from_seq, blobs), seen))
            seen += count
            if advance is not None:
                advance(len(chunk) if isinstance(chunk, bytes) else sum(map(len, chunk)))
            while window and (len(window) > limit or _ready(window[0][0])):
                failure = apply_head()
                if failure is not None:
                    break
            if failure is not None:
                break
        while window and failure is None:
            failure = apply_head()
    if failure is not None:
        torn = 0
    return report_of(state, state.finish(failure), torn, from_seq, blobs is not None)


def _ready(done: Future[Pieces] | list[LineResult | Run]) -> bool:
    return not isinstance(done, Future) or done.done()


def _cancel(window: deque[tuple[Future[Pieces] | list[LineResult | Run], int]]) -> None:
    """Drop the chunks not applied (after a failure): no need to finish them."""
    for done, _ in window:
        if isinstance(done, Future):
            done.cancel()

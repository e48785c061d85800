"""Verify a data directory: the pure verifier fed from disk, plus local pins.

Beyond verify.verify_lines this checks the chain against what this
directory and this user remember:

- the chain id pinned in config.json;
- the cached head (a chain shorter than the head was truncated);
- every checkpoint stored beside the chain and the one the local witness
  holds (step 13: a chain cut below one, or whose root at its size
  differs, fails);

and it resumes from the verification cache (chain/verify/incremental.py) when the
bytes it covered are unchanged, so a verify after k new entries checks k.
The blobs of the entries it skips are vouched for by the content packs
being unchanged since they were hashed (chain/verify/packs.py); when a pack
changed, its records are read again and a blob lost or altered since is
reported at its seq, as a full verify reports it. A successful verify
teaches the witness the largest stored checkpoint.

Verify only reads: it takes no lock and writes nothing in the data
directory (its cache and the witness live in the user's state folder).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from pathlib import Path

from ..content.store import ContentStore
from ..format.canonical import b3
from ..format.config import resolve_state_dir
from ..format.entry import HASH_RE, MAX_LINE_BYTES
from ..format.errors import ChainStateError, InputError, IntegrityError, OperationalError
from ..format.progress import track
from ..log.checkpoint import Checkpoint, origin_of
from ..log.checkpoint_store import latest_checkpoint, load_checkpoints
from ..log.witness import Witness
from ..store.head import Head, load_head
from ..store.ledger import Ledger
from ..verify.incremental import (
    CHUNK,
    Verified,
    appends_path,
    cache_path,
    clear_failure,
    failure_path,
    identity,
    load_verified,
    only_appended,
    record_failure,
    save_verified,
    trim_appends,
)
from ..verify.lines import ChainState, Failure, Report, verify_chunks
from ..verify.packs import Comparison, compare, rescan, snapshot

__all__ = ["AUTO_PARALLEL_BYTES", "default_workers", "require_verified", "verify_ledger"]

#: Below this chain size, starting worker processes costs more than it saves.
AUTO_PARALLEL_BYTES = 4 << 20


def default_workers(chain: Path) -> int:
    """All cores for a large chain, one process for a small one."""
    try:
        size = chain.stat().st_size
    except OSError:
        return 1
    return (os.cpu_count() or 1) if size >= AUTO_PARALLEL_BYTES else 1


class _Prefix:
    """chain.jsonl's first ``end`` bytes, hashed in chunks (13.1) on demand, from one
    mapping; ``hashed`` counts the bytes read."""

    def __init__(self, chain: Path, end: int) -> None:
        self.end = end
        self.hashed = 0
        self._known: dict[int, tuple[int, str]] = {}  # chunk -> (its end, its hash)
        self._map: mmap.mmap | None = None
        if end:
            try:
                with open(chain, "rb") as f:
                    self._map = mmap.mmap(f.fileno(), end, prot=mmap.PROT_READ)
            except (OSError, ValueError) as exc:
                raise OperationalError(f"cannot map {chain}: {exc}") from None

    def chunks(self, offset: int, reuse: list[str] | None = None, trusted: int = 0) -> list[str]:
        """b3 of each CHUNK of bytes [0, offset), the last one partial; a whole chunk that
        ends at or below ``trusted`` bytes is taken from ``reuse`` (known unchanged)."""
        out = []
        for i, start in enumerate(range(0, offset, CHUNK)):
            stop = min(start + CHUNK, offset)
            if reuse is not None and stop == start + CHUNK <= trusted and i < len(reuse):
                out.append(reuse[i])
                continue
            known = self._known.get(i)
            if known is None or known[0] != stop:
                assert self._map is not None
                known = (stop, b3(memoryview(self._map)[start:stop]))
                self.hashed += stop - start
                self._known[i] = known
            out.append(known[1])
        return out

    def line_before(self, offset: int) -> str | None:
        """b3 of the line that ends (with its newline) at byte ``offset``, or None."""
        if self._map is None or offset < 1 or self._map[offset - 1] != 0x0A:
            return None
        start = self._map.rfind(b"\n", max(0, offset - MAX_LINE_BYTES - 2), offset - 1) + 1
        self.hashed += offset - start
        return b3(memoryview(self._map)[start : offset - 1])

    def whole(self, offset: int) -> str:
        """b3 of bytes [0, offset) in one (a revision 2 cache's ``prefix``)."""
        assert self._map is not None
        self.hashed += offset
        return b3(memoryview(self._map)[:offset])

    def close(self) -> None:
        if self._map is not None:
            self._map.close()


def _resume(
    cached: Verified | None,
    prefix: _Prefix,
    checkpoints: list[Checkpoint],
    trusted_key: str | None,
    chain_id: str | None,
    appended: Callable[[list[int]], bool],
) -> Verified | None:
    """The cached verification if it still describes this chain's first bytes:
    ``appended(identity)`` says whether only this program's appends happened since the
    file had that identity (13.5); else the bytes are hashed."""
    if cached is None or cached.offset > prefix.end or cached.state.size == 0:
        return None
    s = cached.state
    if chain_id is not None and s.chain_id != chain_id:
        return None  # a full verify reports the mismatch at seq 0
    # A checkpoint at or below the cached size that was not checked then
    # needs the tree at its size: only a full verify has that.
    for cp in checkpoints:
        if cp.size == s.size:
            # The cached frontier is the tree at exactly this size.
            if (
                cp.root != s.frontier.root()
                or cp.origin != origin_of(s.chain_id or "")
                or not cp.signed_by(s.key or "")
            ):
                return None
        elif cp.size < s.size and b3(cp.text) not in cached.checked:
            return None
    if cached.chain is not None and appended(cached.chain):
        # the bytes verified then are unchanged: only the last verified line is read, to
        # see that the cache's offset and head agree (a damaged header)
        if prefix.line_before(cached.offset) != s.head:
            return None
    elif len(cached.chunks) == 1 and cached.offset > CHUNK:  # revision 2: one hash
        if prefix.whole(cached.offset) != cached.chunks[0]:
            return None
        cached.chunks = []  # not chunk hashes: the save hashes the prefix again
    elif prefix.chunks(cached.offset) != cached.chunks:
        return None
    s.trusted_key = trusted_key
    s.trusted_seen = trusted_key is not None and trusted_key in s.keys
    s.pinned_chain_id = chain_id
    return cached


def verify_ledger(
    ledger: Ledger,
    *,
    from_seq: int = 0,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    workers: int | None = None,
    incremental: bool = True,
    witness: Witness | None = None,
) -> Report:
    """Verify the chain in ``ledger``'s directory with its blobs and pins.

    ``chain_id`` is pinned in addition to the one in config.json. With
    ``incremental`` (the default), a verification cache that still matches
    the chain's first bytes is resumed; the report's ``verified_from`` says
    from which seq entries were checked. ``witness`` defaults to the one in
    the user's state folder.
    """
    if chain_id is not None and HASH_RE.fullmatch(chain_id) is None:
        raise InputError(f"not a chain id: {chain_id!r}", hint="a chain id is b3:<64 hex>")
    layout = ledger.layout
    state_dir = resolve_state_dir()
    if witness is None:
        witness = Witness.in_state_dir(state_dir)
    pinned = ledger.config.chain_id
    # Read the cached head before the chain: the chain only grows, so a
    # write landing in between cannot look like a truncation.
    head = load_head(layout)
    checkpoints = load_checkpoints(layout)
    latest = latest_checkpoint(layout)
    if latest is not None and all(cp.text != latest.text for cp in checkpoints):
        checkpoints.append(latest)
    # The chain's own id (the hash of its first line) finds the witness and
    # the cache: config.json is in the data directory, so whoever cuts the
    # chain can also edit it.
    genesis_id = _genesis_id(layout.chain) or pinned
    witnessed = witness.get(genesis_id) if genesis_id is not None else None
    if witnessed is not None:
        checkpoints.append(witnessed.checkpoint)
    try:
        now = identity(layout.chain.stat())  # before any byte is read (13.5)
    except FileNotFoundError:
        raise ChainStateError(f"{layout.chain} is missing") from None
    end = now[1]
    prefix = _Prefix(layout.chain, end)
    try:
        cache = cache_path(state_dir, genesis_id) if genesis_id is not None else None
        appends = appends_path(state_dir, genesis_id) if genesis_id is not None else None
        resumed = None
        resumed_checked: set[str] = set()
        if incremental and from_seq == 0 and cache is not None and appends is not None:
            resumed = _resume(
                load_verified(cache),
                prefix,
                checkpoints,
                trusted_key,
                chain_id,
                lambda since: only_appended(appends, since, now),
            )
        packs: Comparison | None = None
        if resumed is not None:
            packs = compare(ledger.store, resumed.packs)
            if not packs.intact and not _recheck_content(ledger.store, resumed.state):
                resumed = packs = None  # a blob was altered: a full verify reports it exactly
        if resumed is not None:
            state, start, checked = resumed.state, resumed.offset, set(resumed.checked)
            resumed_checked = set(checked)
        else:
            state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
            start, checked = 0, set()
        resumed_at = state.size
        for cp in checkpoints:
            if cp.size > state.size:
                state.add_checkpoint(cp)
        report = _run(ledger, state, start, end, from_seq, workers)
        if resumed is not None:
            report = report.replace(verified_from=resumed_at, content_from=resumed_at, resumed=True)
        report = _local_pins(report, head, pinned, from_seq)
        if genesis_id is not None:
            _remember_verdict(failure_path(state_dir, genesis_id), report, trusted_key, chain_id)
        if report.ok and cache is not None and report.chain_id == genesis_id and from_seq == 0:
            checked.update(b3(cp.text) for cp in checkpoints if cp.size <= report.size)
            covered = end - report.torn_tail
            state.trusted_key = state.pinned_chain_id = None
            # After the lines: every blob a verified line names was written before it.
            seen = snapshot(ledger.store, packs)
            unchanged = resumed is not None and (
                resumed.offset == covered
                and checked == resumed_checked
                and seen == resumed.packs
                and resumed.chain == now
            )
            if not unchanged:  # nothing new: skip rewriting megabytes of cache
                reuse, trusted = (resumed.chunks, resumed.offset) if resumed else (None, 0)
                chunks = prefix.chunks(covered, reuse, trusted)
                files = resumed.files if resumed is not None else None
                save_verified(cache, Verified(covered, chunks, state, checked, seen, now, files))
                if appends is not None:
                    trim_appends(appends, now[1])
            largest = max(checkpoints, key=lambda cp: cp.size, default=None)
            if largest is not None and largest.size <= report.size:
                witness.record(largest)
    finally:
        prefix.close()
    return report


def require_verified(ledger: Ledger) -> Report:
    """Verify incrementally before a write; IntegrityError when the chain does not verify.

    The doors that write on an agent's behalf (the Memory facade, hence MCP,
    and curation's commits) call it, so that nothing is signed on top of a
    chain edited since the last verify. The failure is also recorded, so
    that every writer refuses until a verify passes again.
    """
    report = verify_ledger(ledger, incremental=True)
    f = report.failure
    if f is not None:
        raise IntegrityError(
            f"the chain does not verify at seq {f.seq} ({f.reason}): refusing to append "
            "to a broken chain",
            reason=f.reason,
            seq=f.seq,
            hint="run `memory-chain verify`; restore chain.jsonl and content/ from a backup "
            "or an export; nothing was written",
        )
    return report


def _remember_verdict(
    path: Path, report: Report, trusted_key: str | None, chain_id: str | None
) -> None:
    """Leave the failure for writers to see (ledger.py refuses to append); a pass clears it.

    A failure that comes from the caller's own pins (a trusted key or chain
    id given for this run) says nothing about the chain itself.
    """
    if report.ok:
        if report.verified_from == 0 or report.resumed:
            clear_failure(path)
    elif report.failure is not None:
        pinned = trusted_key is not None or chain_id is not None
        if not (pinned and report.failure.reason in _PIN_REASONS):
            record_failure(path, report.failure)


#: Failures a pin given for one run causes (they are not recorded for writers).
_PIN_REASONS = frozenset({"untrusted-key", "chain-id-mismatch"})


def _recheck_content(store: ContentStore, state: ChainState) -> bool:
    """Read every record again for the entries verified before (a pack changed since).

    False when a blob an entry needs is stored only as altered bytes (the
    caller then verifies in full, which reports it at its seq). A blob no
    longer stored anywhere is marked missing in ``state``: a redaction among
    the new entries may account for it, else step 12 reports it.
    """
    sound, altered = rescan(store)
    for seq, digest in state.blobs_kept():
        if digest in sound:
            continue
        if digest in altered:
            return False
        state.pending[seq] = "b3:" + digest.hex()
    return True


def _genesis_id(chain: Path) -> str | None:
    """The hash of the chain's first line, or None when there is no complete one."""
    try:
        with open(chain, "rb") as f:
            first = f.readline(MAX_LINE_BYTES + 1)
    except OSError:
        return None
    return b3(first[:-1]) if first.endswith(b"\n") else None


def _run(
    ledger: Ledger, state: ChainState, start: int, end: int, from_seq: int, workers: int | None
) -> Report:
    n = workers if workers is not None else default_workers(ledger.layout.chain)
    advance = track("verify", end - start)
    if n > 1 and end - start >= AUTO_PARALLEL_BYTES // 4:
        from ..verify.parallel import verify_parallel  # multiprocessing: ~40 ms to import

        return verify_parallel(
            # From the start, workers read the file themselves (faster).
            ledger.layout.chain if start == 0 else ledger.iter_lines(start, end),
            content_root=ledger.layout.content,
            workers=n,
            from_seq=from_seq,
            state=state,
            end=end,
            advance=advance,
        )
    return verify_chunks(
        ledger.line_chunks(start, end, advance),
        blobs=ledger.store,
        from_seq=from_seq,
        state=state,
    )


def _local_pins(report: Report, head: Head | None, pinned: str | None, from_seq: int) -> Report:
    if report.ok and from_seq >= report.size > 0:
        raise InputError(
            f"--from {from_seq} is beyond the last entry (seq {report.size - 1}): nothing checked"
        )
    failure = None
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
    return report.replace(ok=False, failure=failure)

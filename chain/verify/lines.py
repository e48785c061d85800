"""Chain verification: a pure function over bytes, in numbered steps.

The steps below are the ones in specs/FORMAT.md section 5; the code labels
each with the same number. For every line, in order:

 1. Framing: the line ends with "\\n", is at most 8192 bytes, and is one
    UTF-8 JSON object. A last line without "\\n" is a torn tail: a warning,
    not a failure (it was never acknowledged).
 2. Fields: exactly the v1 field set, with the types, enums and ranges of
    FORMAT.md section 2; system entries carry their defined meta.
 3. Canonical form: the line is byte-equal to the JCS encoding of itself.
 4. Sequence: seq equals the line's position (first line seq 0, no gaps).
 5. Link: prev is the hash of the previous line (null at seq 0).
 6. Time: ts is not earlier than the previous entry's ts.
 7. Key: the entry is signed by the chain's current key: the genesis key,
    or the new_key of the latest key-rotation entry before it. A trusted
    key, when given, must be the genesis key or a rotation's new_key (the
    new key's own signature on the rotation commits its holder to all the
    history before it); this is checked once the whole chain is read and
    reported at seq 0.
 8. Signature: sig is a valid Ed25519 signature by key over the entry tag
    and the canonical entry without sig.
 9. System entries: a key-rotation's new_sig is valid by new_key over the
    rotation tag and statement; a redaction targets an earlier,
    unredacted, non-committed content entry and names its content hash.
10. Content: a present blob hashes to the content hash and has the entry's
    size; a missing blob is allowed only if a redaction (at any later seq)
    names the entry.
11. Chain id: with a chain id pinned, the hash of the genesis line equals it.
12. End: a missing blob that no redaction named fails at its seq; an empty
    chain fails. A failure at steps 1-11 ends the scan and is the one
    reported, even if an earlier blob is missing and unredacted so far:
    it marks where the chain was tampered with.
13. Checkpoints (given ones only): when the chain reaches a checkpoint's
    size, the checkpoint is signed by the key in force, names this chain,
    and its root is the Merkle root of the entries so far; at the end, a
    checkpoint larger than the chain fails as a truncation.

Steps 1-3, 8, 9 (signatures) and 10 (hashing) look at one line alone
("stateless", run in parallel by parallel.py); the others follow the chain
("stateful"). The first failure, in seq order, is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from blake3 import blake3 as _blake3

from ..content.store import ABSENT, ALTERED
from ..format.canonical import b3
from ..format.entry import (
    Malformed,
    OrdinaryBytes,
    OrdinaryColumns,
    ordinary_bytes,
    ordinary_columns,
    parse_line,
    rotation_message,
    signing_message_of_line,
)
from ..format.keys import failed_signatures, failed_with_key
from ..format.values import Record, Value
from ..log.checkpoint import Checkpoint, origin_of
from ..log.merkle import BLAKE3, Frontier, perfect_subtrees

if TYPE_CHECKING:
    from .column import Column

__all__ = [
    "BLOB_ABSENT",
    "BLOB_MISMATCH",
    "BLOB_NONE",
    "BLOB_OK",
    "BLOB_SIZE",
    "CHUNK_LINES",
    "BlobCheck",
    "BlobGetter",
    "ChainState",
    "Failure",
    "LineResult",
    "Report",
    "blob_check",
    "check_chunk",
    "check_line",
    "check_lines",
    "chunks",
    "report_of",
    "verify_chunks",
    "verify_lines",
]

#: Returns a blob's bytes by content hash, or None when it is absent.
BlobGetter = Callable[[str], "bytes | None"]
#: Returns, for each 32-byte digest in order, the size of a sound stored copy of its blob,
#: or ABSENT or ALTERED (content.store); given the sizes the entries name, or None.
BlobCheck = Callable[[Sequence[bytes], "Sequence[int] | None"], "list[int]"]


if TYPE_CHECKING:  # for the type checker only: a Protocol class costs a session start 0.5 ms

    class BlobSource(Protocol):
        """A store that checks blobs itself, hashing each once (ContentStore)."""

        def check_digests(
            self, digests: Sequence[bytes], sizes: Sequence[int] | None = None
        ) -> list[int]: ...

    #: Where verify reads content from: a store, or a function that returns a blob's bytes.
    Blobs = BlobSource | BlobGetter

BLOB_NONE, BLOB_OK, BLOB_ABSENT, BLOB_MISMATCH, BLOB_SIZE = range(5)


class Failure(Value):
    """The first thing that did not verify."""

    __slots__ = ("message", "reason", "seq", "step")
    seq: int
    step: int
    reason: str
    message: str

    def __init__(self, seq: int, step: int, reason: str, message: str) -> None:
        set_ = object.__setattr__
        set_(self, "seq", seq)
        set_(self, "step", step)
        set_(self, "reason", reason)
        set_(self, "message", message)

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.message} (step {self.step}, {self.reason})"


class LineResult(NamedTuple):
    """What the stateless steps learned about one line (small, picklable)."""

    hash: str
    error: tuple[int, str, str] | None  # (step, reason, message) of steps 1-3
    seq: int
    ts: str
    type: str
    tier: str
    content: str | None
    size: int
    prev: str | None
    key: str
    target: int  # redaction target seq, else -1
    target_content: str | None
    new_key: str | None
    sig_ok: bool
    rotation_ok: bool
    blob: int  # BLOB_* code
    leaf: bytes  # the Merkle leaf hash of the line (RFC 9162, BLAKE3)


class Run(NamedTuple):
    """Ordinary entries, one after the other, that passed every per-line step.

    What check_chunk gives for a stretch of ordinary lines (entry.ordinary)
    whose signatures verify, whose blobs are stored sound or absent, and
    that already follow one another: seq counting up, each prev the hash of
    the line before, ts not going back, one key. Only how the first one
    follows the chain before it is left to check (ChainState.apply), and
    the rest is taken in bulk: a run of 2,000 entries crosses between
    processes as a few byte strings, and the main process merges a few
    Merkle subtrees rather than 2,000 leaves.
    """

    start: int  # the seq of the first
    entries: int
    prev: str  # the first one's prev
    ts: str  # the first one's ts
    last_ts: str
    key: str
    hashes: bytes  # 32 bytes an entry: the hash of each line
    leaves: bytes  # 32 bytes an entry: the Merkle leaf hash of each line
    digests: bytes  # 32 bytes an entry: each content hash
    flags: bytes  # one byte an entry: _CONTENT, and _COMMITTED for the committed tier
    absent: tuple[tuple[int, str], ...]  # (seq, content hash) of blobs not stored
    subtrees: tuple[tuple[int, bytes], ...]  # merkle.perfect_subtrees of the leaves


_COMMITTED, _CONTENT, _REDACTED = 1, 2, 4
_ZERO32 = bytes(32)


def _line_hashes(lines: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Each line's hash, and its RFC 9162 leaf hash BLAKE3(0x00 || line).

    One hasher, reset after each digest: making a new hasher for each hash
    cost about 0.2 us more a hash (a 550-byte line hashes in about 0.5 us).
    """
    h = _blake3()
    update, digest, reset = h.update, h.digest, h.reset
    hashes: list[bytes] = []
    leaves: list[bytes] = []
    line_hash, leaf = hashes.append, leaves.append
    for line in lines:
        update(line)
        line_hash(digest())
        reset()
        update(b"\x00")
        update(line)
        leaf(digest())
        reset()
    return hashes, leaves


def blob_check(blobs: Blobs | None) -> BlobCheck | None:
    """How the content of entries is checked: a store's own check, or a getter's bytes hashed."""
    if blobs is None:
        return None
    check: BlobCheck | None = getattr(blobs, "check_digests", None)
    if check is not None:  # a BlobSource
        return check
    getter = cast("BlobGetter", blobs)

    def hashed(digests: Sequence[bytes], sizes: Sequence[int] | None = None) -> list[int]:
        out = []
        for digest in digests:
            data = getter("b3:" + digest.hex())
            if data is None:
                out.append(ABSENT)
            else:
                out.append(len(data) if _blake3(data).digest() == digest else ALTERED)
        return out

    return hashed


def check_line(line: bytes, blobs: Blobs | None, signatures: bool = True) -> LineResult:
    """Run the stateless steps (1-3, 8, 9 signatures, 10 hashing) on one line.

    ``line`` excludes its newline. With ``signatures`` False, steps 8 and 9's
    signature checks are skipped (used only to rebuild state for a prefix
    that was verified before).
    """
    return check_lines([line], blobs, signatures)[0]


def check_lines(
    lines: Sequence[bytes], blobs: Blobs | None, signatures: bool = True
) -> list[LineResult]:
    """check_line over a chunk of lines, in two phases.

    First the Python steps for every line, then all signatures in one tight
    loop: interleaving the two per line measurably slows both (caches).
    """
    return _check_lines(lines, blob_check(blobs), signatures)


def _check_lines(
    lines: Sequence[bytes], check: BlobCheck | None, signatures: bool
) -> list[LineResult]:
    results: list[LineResult] = []
    jobs: list[tuple[bytes, bytes, bytes]] = []  # (public key, message, signature)
    queued: list[tuple[int, bool]] = []  # (index, rotation?) of each job
    for line in lines:
        results.append(_check_fields(line, check, signatures, len(results), jobs, queued))
    for i in failed_signatures(jobs):
        index, rotation = queued[i]
        r = results[index]
        results[index] = r._replace(rotation_ok=False) if rotation else r._replace(sig_ok=False)
    return results


def check_chunk(
    lines: Sequence[bytes], start: int, from_seq: int, blobs: Blobs | None
) -> list[LineResult | Run]:
    """Stateless steps for lines at positions start, start+1, ...

    Lines before ``from_seq`` are trusted: no signature or blob checks.
    Stretches of ordinary lines that pass come as Runs, every other line
    (and every line of a stretch where anything did not pass) as its
    LineResult, in order.
    """
    split = max(0, min(len(lines), from_seq - start))
    if split == 0:
        return _pieces(lines, start, blob_check(blobs), True)
    return _pieces(lines[:split], start, None, False) + _pieces(
        lines[split:], start + split, blob_check(blobs), True
    )


def _pieces(
    lines: Sequence[bytes], start: int, check: BlobCheck | None, signatures: bool
) -> list[LineResult | Run]:
    out: list[LineResult | Run] = []
    columns = ordinary_columns(lines)  # the common chunk: every line ordinary, read at once
    if columns is not None:
        run = _run(lines, columns, start, check, signatures)
        if run is not None:
            return [run]
    read = list(map(ordinary_bytes, lines))
    i, n = 0, len(lines)
    while i < n:
        # lines i .. j-1 are ordinary, line j (if any) is not
        try:
            j = read.index(None, i)
        except ValueError:
            j = n
        if j > i:
            fields = cast("list[OrdinaryBytes]", read[i:j])  # none of them None
            columns = cast("OrdinaryColumns", tuple(zip(*fields, strict=True)))
            run = _run(lines[i:j], columns, start + i, check, signatures)
            out.extend(_check_lines(lines[i:j], check, signatures) if run is None else (run,))
        if j < n:
            out.extend(_check_lines(lines[j : j + 1], check, signatures))
        i = j + 1
    return out


def _run(
    lines: Sequence[bytes],
    columns: OrdinaryColumns,
    start: int,
    check: BlobCheck | None,
    signatures: bool,
) -> Run | None:
    """The Run of ordinary lines at positions start, ...; None if any does not pass.

    ``columns``: what ordinary_bytes read from each line, by column. Column
    by column rather than line by line: each check is one operation in C
    over the whole stretch (a comparison of tuples, a sort, a join), which
    is what a run is for. Only the hashes, the blob checks and the
    signatures are a call a line.
    """
    seqs, stamps, _, tiers, digests, sizes, prevs, keys, signed = columns
    n = len(seqs)
    key = keys[0]
    # Steps 4, 6 and 7 inside the run: seq counts up, ts never goes back, one key.
    if (
        seqs != tuple(range(start, start + n))
        or keys.count(key) != n
        or sorted(stamps) != list(stamps)
    ):
        return None
    hashes, leaves = _line_hashes(lines)
    joined = b"".join(hashes)
    # Step 5 inside the run: each prev is the hash of the line before.
    if n > 1 and bytes.fromhex(b"".join(prevs[1:]).decode()) != joined[:-32]:
        return None
    absent: list[tuple[int, str]] = []
    if check is not None:
        found = check(digests, sizes)
        if found != list(sizes):
            for seq, digest, size, got in zip(seqs, digests, sizes, found, strict=True):
                if got != size:
                    if got != ABSENT:
                        return None
                    absent.append((seq, "b3:" + digest.hex()))
    if signatures and failed_with_key(bytes.fromhex(key.decode()), signed):
        return None
    return Run(
        start,
        n,
        "b3:" + prevs[0].decode(),
        stamps[0].decode(),
        stamps[-1].decode(),
        "ed25519:" + key.decode(),
        joined,
        b"".join(leaves),
        b"".join(digests),
        bytes(map(_FLAG_OF_TIER.get, tiers, repeat(_CONTENT))),
        tuple(absent),
        tuple(perfect_subtrees(BLAKE3, leaves, start)),
    )


#: Run.flags of a tier (every other tier: _CONTENT).
_FLAG_OF_TIER = {b"committed": _CONTENT | _COMMITTED}

_KEY_HEX = len("ed25519:")


def _blob(check: BlobCheck, content: str, size: int) -> int:
    """Step 10, the hashing half: the BLOB_* code of an entry's content."""
    found = check((bytes.fromhex(content[3:]),), None)[0]
    if found == size:
        return BLOB_OK
    return BLOB_ABSENT if found == ABSENT else BLOB_MISMATCH if found == ALTERED else BLOB_SIZE


def _check_fields(
    line: bytes,
    check: BlobCheck | None,
    signatures: bool,
    index: int,
    jobs: list[tuple[bytes, bytes, bytes]],
    queued: list[tuple[int, bool]],
) -> LineResult:
    """Steps 1-3 and 10 of one line; queue its signatures (8, 9)."""
    digest = b3(line)
    leaf = BLAKE3.leaf(line)
    try:
        if line.startswith(_UNTERMINATED):
            raise Malformed(1, "line is not newline-terminated")
        entry = parse_line(line)  # steps 1-3
    except Malformed as exc:
        reason = "not-canonical" if exc.step == 3 else "malformed"
        error = (exc.step, reason, exc.message)
        return LineResult(
            digest,
            error,
            -1,
            "",
            "",
            "",
            None,
            0,
            None,
            "",
            -1,
            None,
            None,
            False,
            False,
            BLOB_NONE,
            leaf,
        )
    obj = entry.obj
    key: str = obj["key"]
    target, target_content, new_key = -1, None, None
    meta = obj["meta"]
    kind = obj["type"]
    if signatures:
        # Step 8, queued.
        jobs.append(
            (
                bytes.fromhex(key[_KEY_HEX:]),
                signing_message_of_line(entry),
                bytes.fromhex(obj["sig"]),
            )
        )
        queued.append((index, False))
    if kind == "key-rotation":
        new_key = meta["new_key"]
        if signatures:
            # Step 9, the new key's signature, queued.
            jobs.append(
                (
                    bytes.fromhex(new_key[_KEY_HEX:]),
                    rotation_message(obj),
                    bytes.fromhex(meta["new_sig"]),
                )
            )
            queued.append((index, True))
    elif kind == "redaction":
        target, target_content = meta["target"], meta["content"]
    content = obj["content"]
    blob = BLOB_NONE if content is None or check is None else _blob(check, content, obj["size"])
    return LineResult(
        digest,
        None,
        obj["seq"],
        obj["ts"],
        kind,
        obj["tier"],
        content,
        obj["size"],
        obj["prev"],
        key,
        target,
        target_content,
        new_key,
        True,
        True,
        blob,
        leaf,
    )


_UNTERMINATED = b"\n"


def chunks(lines: Iterable[bytes], size: int) -> Iterator[tuple[list[bytes], bytes | None]]:
    """Group raw lines into chunks: (complete lines without "\\n", torn tail or None).

    Only the last line may lack its newline (it is the torn tail). An
    unterminated line with more after it (possible only from a caller's
    own iterable, never from a file split on newlines) is passed on marked
    with a leading "\\n", which no real line can hold, and fails step 1.
    """
    chunk: list[bytes] = []
    tail: bytes | None = None
    for raw in lines:
        if tail is not None:
            chunk.append(_UNTERMINATED + tail)
            tail = None
        if not raw.endswith(b"\n"):
            tail = raw
            continue
        chunk.append(raw[:-1])
        if len(chunk) >= size:
            yield chunk, None
            chunk = []
    yield chunk, tail


class ChainState(Record):
    """What the stateful steps carry from one entry to the next.

    Memory is 33 bytes per entry (a content digest and a flag byte), so
    that redactions of any earlier entry can be checked.
    """

    __slots__ = (
        "chain_id",
        "checkpoints",
        "digests",
        "flags",
        "frontier",
        "genesis_key",
        "head",
        "key",
        "keys",
        "pending",
        "pinned_chain_id",
        "size",
        "trusted_key",
        "trusted_seen",
        "ts",
    )
    size: int
    head: str | None  # hash of the last line
    ts: str
    key: str | None  # the current signing key
    chain_id: str | None
    #: bytearray, or a Column read from the verification cache (column.py)
    digests: bytearray | Column
    flags: bytearray | Column
    pending: dict[int, str]  # seq -> missing blob
    trusted_key: str | None  # pin: the genesis key or a rotated-to key
    pinned_chain_id: str | None
    genesis_key: str | None
    trusted_seen: bool
    keys: list[str]  # the genesis key, then each rotated-to key
    frontier: Frontier
    # Step 13: tree size -> the checkpoint that commits to the root of that size.
    checkpoints: dict[int, list[Checkpoint]]

    def __init__(
        self,
        size: int = 0,
        head: str | None = None,
        ts: str = "",
        key: str | None = None,
        chain_id: str | None = None,
        digests: bytearray | Column | None = None,
        flags: bytearray | Column | None = None,
        pending: dict[int, str] | None = None,
        trusted_key: str | None = None,
        pinned_chain_id: str | None = None,
        genesis_key: str | None = None,
        trusted_seen: bool = False,
        keys: list[str] | None = None,
        frontier: Frontier | None = None,
        checkpoints: dict[int, list[Checkpoint]] | None = None,
    ) -> None:
        self.size = size
        self.head = head
        self.ts = ts
        self.key = key
        self.chain_id = chain_id
        self.digests = bytearray() if digests is None else digests
        self.flags = bytearray() if flags is None else flags
        self.pending = {} if pending is None else pending
        self.trusted_key = trusted_key
        self.pinned_chain_id = pinned_chain_id
        self.genesis_key = genesis_key
        self.trusted_seen = trusted_seen
        self.keys = [] if keys is None else keys
        self.frontier = Frontier(BLAKE3) if frontier is None else frontier
        self.checkpoints = {} if checkpoints is None else checkpoints

    def apply(self, r: LineResult | Run) -> Failure | None:
        """Apply steps 4-11 (and 13) for the line at position ``self.size``, or a Run from it."""
        if type(r) is Run:
            return self._apply_run(r)
        assert type(r) is LineResult
        pos = self.size
        if r.error is not None:
            step, reason, message = r.error
            return Failure(pos, step, reason, message)
        failure = self._follows(r.seq, r.prev, r.ts, r.key)  # steps 4-7
        if failure is not None:
            return failure
        # Step 8.
        if not r.sig_ok:
            return Failure(pos, 8, "bad-signature", "signature does not verify")
        # Step 9.
        failure = self._system_rules(pos, r)
        if failure is not None:
            return failure
        # Step 10, the stateful half.
        if r.blob == BLOB_MISMATCH:
            return Failure(
                pos, 10, "content-mismatch", f"blob {r.content} does not hash to its name"
            )
        if r.blob == BLOB_SIZE:
            return Failure(
                pos, 10, "content-mismatch", f"blob {r.content} is not {r.size} bytes long"
            )
        if r.blob == BLOB_ABSENT:
            self.pending[pos] = r.content or ""
        # Step 11.
        pinned_chain_id = self.pinned_chain_id
        if pos == 0 and pinned_chain_id is not None and r.hash != pinned_chain_id:
            return Failure(
                0, 11, "chain-id-mismatch", f"chain id {r.hash} is not the pinned {pinned_chain_id}"
            )
        self._advance(r)
        # Step 13.
        if self.checkpoints and self.size in self.checkpoints:
            for cp in self.checkpoints[self.size]:
                failure = self._check_checkpoint(cp)
                if failure is not None:
                    return failure
        return None

    def _follows(self, seq: int, prev: str | None, ts: str, key: str) -> Failure | None:
        """Steps 4-7 for an entry at position ``self.size``: how it follows the one before."""
        pos = self.size
        # Step 4.
        if seq != pos:
            return Failure(pos, 4, "seq-gap", f"expected seq {pos}, found seq {seq}")
        # Step 5.
        if prev != self.head:
            return Failure(
                pos,
                5,
                "broken-link",
                f"prev {prev} does not match the previous line's hash {self.head}",
            )
        # Step 6.
        if ts < self.ts:
            return Failure(
                pos, 6, "time-backwards", f"ts {ts} is earlier than the previous entry's {self.ts}"
            )
        # Step 7 (a trusted key is checked once the chain is read: finish()).
        if pos > 0 and key != self.key:
            return Failure(
                pos, 7, "unknown-key", f"signed by {key}, not the chain's current key {self.key}"
            )
        return None

    def _apply_run(self, run: Run) -> Failure | None:
        """apply() for a Run: its first entry is checked as apply() checks a line, the rest were.

        The same verdict, failure and state as applying its lines one by
        one (the Merkle leaves are merged as the run's subtrees, or leaf by
        leaf where a checkpoint falls inside the run or the frontier is not
        at the state's size, as in a range of an archive checked alone).
        """
        pos = self.size
        failure = self._follows(run.start, run.prev, run.ts, run.key)  # steps 4-7
        if failure is not None:
            return failure
        if self.key == self.trusted_key:
            self.trusted_seen = True
        n = run.entries
        inside = sorted(size for size in self.checkpoints if pos < size <= pos + n)
        if not inside and self.frontier.size == pos:
            self._grow(run, 0, n)
            for height, root in run.subtrees:
                self.frontier.append_subtree(root, height)
            self.ts = run.last_ts
            return None
        # leaf by leaf, stopping at each checkpoint's size inside the run, then at its end
        done = 0
        append = self.frontier.append
        for size in sorted({*inside, pos + n}):
            self._grow(run, done, size - pos)
            for at in range(32 * done, 32 * (size - pos), 32):
                append(run.leaves[at : at + 32])
            done = size - pos
            for cp in self.checkpoints.get(size, ()):
                failure = self._check_checkpoint(cp)
                if failure is not None:
                    return failure
        self.ts = run.last_ts
        return None

    def _grow(self, run: Run, lo: int, hi: int) -> None:
        """Entries lo..hi-1 of ``run`` join the state (all but the Merkle frontier and ts)."""
        if hi <= lo:
            return
        self.digests.extend(run.digests[32 * lo : 32 * hi])
        self.flags.extend(run.flags[lo:hi])
        start = run.start
        for seq, content in run.absent:
            if start + lo <= seq < start + hi:
                self.pending[seq] = content
        self.head = "b3:" + run.hashes[32 * hi - 32 : 32 * hi].hex()
        self.size = start + hi

    def blobs_kept(self) -> Iterator[tuple[int, bytes]]:
        """(seq, content digest) of every entry so far whose blob must be stored (not redacted)."""
        flags, digests = self.flags, self.digests
        for seq in range(self.size):
            if flags[seq] & _CONTENT and not flags[seq] & _REDACTED:
                yield seq, bytes(digests[32 * seq : 32 * seq + 32])

    def add_checkpoint(self, cp: Checkpoint) -> None:
        """Check the chain against ``cp`` when it reaches cp.size (step 13)."""
        self.checkpoints.setdefault(cp.size, []).append(cp)

    def _check_checkpoint(self, cp: Checkpoint) -> Failure | None:
        pos = self.size - 1
        if not cp.signed_by(self.key or ""):
            return Failure(
                pos,
                13,
                "checkpoint-signature",
                f"{cp.describe()} is not signed by {self.key}, the chain's key at size {cp.size}",
            )
        if cp.origin != origin_of(self.chain_id or ""):
            return Failure(
                pos,
                13,
                "checkpoint-origin",
                f"{cp.describe()} is for {cp.origin}, not this chain",
            )
        if cp.root != self.frontier.root():
            return Failure(
                pos,
                13,
                "rewritten",
                f"the first {cp.size} entries do not have the Merkle root that {cp.describe()} "
                "commits to: the chain was rewritten after it",
            )
        return None

    def _system_rules(self, pos: int, r: LineResult) -> Failure | None:
        if r.type == "key-rotation":
            if not r.rotation_ok:
                return Failure(
                    pos, 9, "invalid-rotation", "new_sig is not a valid signature by new_key"
                )
            if r.new_key == self.key:
                return Failure(pos, 9, "invalid-rotation", "new_key is already the current key")
        elif r.type == "redaction":
            t = r.target
            if t >= pos:
                return Failure(
                    pos, 9, "invalid-redaction", f"redaction targets seq {t}, not an earlier entry"
                )
            flags = self.flags[t]
            if not flags & _CONTENT:
                return Failure(
                    pos, 9, "invalid-redaction", f"redaction targets seq {t}, which has no content"
                )
            if flags & _COMMITTED:
                return Failure(
                    pos,
                    9,
                    "invalid-redaction",
                    f"redaction targets seq {t}, which is in the committed tier",
                )
            if flags & _REDACTED:
                return Failure(pos, 9, "invalid-redaction", f"seq {t} is already redacted")
            want = bytes(self.digests[32 * t : 32 * t + 32]).hex()
            if r.target_content != "b3:" + want:
                return Failure(
                    pos,
                    9,
                    "invalid-redaction",
                    f"redaction names {r.target_content}, but seq {t} holds b3:{want}",
                )
        return None

    def _advance(self, r: LineResult) -> None:
        flag = 0
        if r.content is not None:
            self.digests.extend(bytes.fromhex(r.content[3:]))
            flag |= _CONTENT
        else:
            self.digests.extend(_ZERO32)
        if r.tier == "committed":
            flag |= _COMMITTED
        self.flags.append(flag)
        if r.type == "redaction":
            self.flags[r.target] |= _REDACTED
            self.pending.pop(r.target, None)
        if r.seq == 0:
            self.chain_id = r.hash
            self.key = self.genesis_key = r.key
            self.keys.append(r.key)
        elif r.type == "key-rotation" and r.new_key is not None:
            self.key = r.new_key
            self.keys.append(r.new_key)
        self.frontier.append(r.leaf)
        if self.key == self.trusted_key:
            self.trusted_seen = True
        self.head = r.hash
        self.ts = r.ts
        self.size += 1

    def finish(self, failure: Failure | None = None) -> Failure | None:
        """Step 12, at the end of the chain or at the first hard ``failure``.

        A hard failure (steps 1-11) is reported even when an earlier blob is
        missing: it marks where the chain was tampered with, and whether a
        redaction would have followed can no longer be known.
        """
        if failure is not None:
            return failure
        if self.trusted_key is not None and self.size and not self.trusted_seen:
            return Failure(
                0,
                7,
                "untrusted-key",
                f"the trusted key {self.trusted_key} is neither the genesis key "
                f"{self.genesis_key} nor a key this chain rotated to",
            )
        beyond = [size for size in self.checkpoints if size > self.size]
        if beyond and self.size:
            cp = self.checkpoints[max(beyond)][0]
            return Failure(
                self.size,
                13,
                "truncated",
                f"chain has {self.size} entries; {cp.describe()} commits to {cp.size}",
            )
        if self.pending:
            seq = min(self.pending)
            return Failure(
                seq,
                12,
                "missing-content",
                f"blob {self.pending[seq]} is missing and was not redacted",
            )
        if self.size == 0:
            return Failure(0, 12, "empty-chain", "the chain has no entries")
        return None


class Report(Value):
    """The verdict on a chain."""

    __slots__ = (
        "chain_id",
        "content_from",
        "failure",
        "head",
        "key",
        "ok",
        "resumed",
        "root",
        "size",
        "torn_tail",
        "verified_from",
    )
    ok: bool
    size: int  # entries that verified (the whole chain when ok)
    head: str | None
    chain_id: str | None
    key: str | None
    failure: Failure | None
    torn_tail: int  # bytes of an unterminated last line (0 if none)
    verified_from: int
    root: bytes | None  # the Merkle root of the verified entries (when ok)
    # Blobs of entries from this seq on were hashed in this run; None: no blob was read.
    content_from: int | None
    # True: the entries before verified_from were verified by an earlier run
    # and found unchanged (their lines by the hash of the chain's first bytes,
    # their blobs in pack bytes unchanged since they were hashed).
    resumed: bool

    def __init__(
        self,
        ok: bool,
        size: int,
        head: str | None,
        chain_id: str | None,
        key: str | None,
        failure: Failure | None,
        torn_tail: int,
        verified_from: int = 0,
        root: bytes | None = None,
        content_from: int | None = None,
        resumed: bool = False,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "ok", ok)
        set_(self, "size", size)
        set_(self, "head", head)
        set_(self, "chain_id", chain_id)
        set_(self, "key", key)
        set_(self, "failure", failure)
        set_(self, "torn_tail", torn_tail)
        set_(self, "verified_from", verified_from)
        set_(self, "root", root)
        set_(self, "content_from", content_from)
        set_(self, "resumed", resumed)

    def checked(self) -> str:
        """What this verdict rests on, in one clause (verify, doctor, jobs, session start).

        "lines and signatures to seq N" (every entry's framing, fields, link,
        key and signature; those of an earlier verify by their unchanged
        bytes), then the content: "present and hashed to seq N" when every
        blob was hashed in this run or sits in pack bytes unchanged since it
        was, else what was left out.
        """
        last = self.size - 1
        if self.size == 0:
            return "nothing checked: no entries"
        lines = f"lines and signatures to seq {last}"
        if self.verified_from and not self.resumed:
            lines = f"lines and signatures from seq {self.verified_from} to seq {last}"
        start = self.content_from
        if start is None:
            return f"{lines}; content not checked"
        if start == 0:
            return f"{lines}; content present and hashed to seq {last}"
        if self.resumed:
            if start >= self.size:
                return (
                    f"{lines}; content present and hashed to seq {last} "
                    "(packs unchanged since the last verify)"
                )
            return (
                f"{lines}; content present and hashed to seq {last} "
                f"(from seq {start} in this run, earlier blobs in packs unchanged since)"
            )
        return f"{lines}; content hashed from seq {start} to seq {last}, earlier not checked"

    def level(self) -> str:
        """checked() in a few words, for the session-start line."""
        last = self.size - 1
        if self.content_from is None:
            return f"lines and signatures to seq {last}; content not checked"
        if self.content_from == 0 or self.resumed:
            return f"lines, signatures and content to seq {last}"
        return f"lines, signatures and content from seq {self.content_from} to seq {last}"

    def as_dict(self) -> dict[str, Any]:
        """What `verify --json` prints of it."""
        f = self.failure
        return {
            "ok": self.ok,
            "entries": self.size,
            "head": self.head,
            "chain_id": self.chain_id,
            "key": self.key,
            "verified_from": self.verified_from,
            "content_from": self.content_from,
            "resumed": self.resumed,
            "checked": self.checked() if self.ok else None,
            "root": self.root.hex() if self.root is not None else None,
            "torn_tail_bytes": self.torn_tail,
            "failure": None
            if f is None
            else {"seq": f.seq, "step": f.step, "reason": f.reason, "message": f.message},
        }


CHUNK_LINES = 256


def verify_lines(
    lines: Iterable[bytes],
    *,
    blobs: Blobs | None = None,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    from_seq: int = 0,
    state: ChainState | None = None,
) -> Report:
    """Verify a chain given as lines (each with its "\\n"; the last may lack it).

    Entries before ``from_seq`` are trusted: only their links, sequence and
    keys are followed (steps 1-7 without 8-10), to rebuild the state that
    the entries from ``from_seq`` on are checked against. With ``state``
    (the state after a verified prefix), ``lines`` are the lines after that
    prefix.
    """
    return verify_chunks(
        chunks(lines, CHUNK_LINES),
        blobs=blobs,
        trusted_key=trusted_key,
        chain_id=chain_id,
        from_seq=from_seq,
        state=state,
    )


def verify_chunks(
    line_chunks: Iterable[tuple[list[bytes], bytes | None]],
    *,
    blobs: Blobs | None = None,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    from_seq: int = 0,
    state: ChainState | None = None,
) -> Report:
    """verify_lines() of lines given as chunks() gives them: (lines without "\\n", tail).

    Only the last chunk may have a tail, and no line may hold a newline
    (Ledger.line_chunks: the lines of a file split on newlines).
    """
    if state is None:
        state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
    torn = 0
    seen = state.size
    for chunk, tail in line_chunks:
        for result in check_chunk(chunk, seen, from_seq, blobs):
            failure = state.apply(result)
            if failure is not None:
                return report_of(state, state.finish(failure), 0, from_seq, blobs is not None)
        seen += len(chunk)
        if tail is not None:
            torn = len(tail)
    return report_of(state, state.finish(), torn, from_seq, blobs is not None)


def report_of(
    state: ChainState, failure: Failure | None, torn: int, from_seq: int, content: bool
) -> Report:
    """The Report for ``state`` with its final ``failure`` (or None); ``content``: blobs read."""
    return Report(
        ok=failure is None,
        size=state.size,
        head=state.head,
        chain_id=state.chain_id,
        key=state.key,
        failure=failure,
        torn_tail=torn,
        verified_from=from_seq,
        root=state.frontier.root() if failure is None else None,
        content_from=from_seq if content else None,
    )

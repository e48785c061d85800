"""A chain's log published as C2SP tlog-tiles, checked, and cosigned by a witness.

- ``publish``: verify the chain, write the tiles and entry bundles of its
  SHA-256 companion tree (log/tiles.py) to a folder, and sign the companion
  checkpoint with the chain's key (FORMAT.md 19). A folder that already
  holds a larger log, or a log that is not a prefix of this chain, is
  refused: a log never signs two histories.
- ``check_published``: what an auditor runs on a folder (no data directory
  needed): the checkpoint, every tile against it, every entry against its
  leaf hash, the entries as a chain (FORMAT.md 5: its signatures, links and
  BLAKE3 tree), the checkpoint signed by the key in force at its size, and
  which configured witnesses cosigned which size.
- ``cosign``: what a witness runs (c2sp.org/tlog-witness, over a folder
  rather than HTTP): the log's signature, then consistency with the largest
  checkpoint it cosigned before; a log rolled back or forked is refused.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..format.errors import IntegrityError, KeyAccessError, OperationalError
from ..format.fsutil import flocked
from ..format.keys import Signer
from ..log.checkpoint import (
    Checkpoint,
    CheckpointError,
    parse_checkpoint,
    sign_checkpoint,
    verifier_key,
)
from ..log.cosignature import (
    VerifierKey,
    cosigned_at,
    note_signed_by,
)
from ..log.cosigner import SIZE_TYPE, Cosigner, Refused, Request, add_checkpoint_body
from ..log.merkle import SHA256, Frontier, consistency_proof
from ..log.tiles import (
    HASHES_PER_TILE,
    Store,
    TileError,
    as_store,
    build_tiles,
    companion_origin,
    entry_bundle,
    iter_entries,
    leaf_hashes_of,
    read_leaf_hashes,
    tile_path,
    tiles_for,
)
from ..store.ledger import Ledger
from ..verify.lines import verify_lines
from ..verify.parallel import verify_parallel
from .checkpointing import refusal
from .verify_ledger import verify_ledger

__all__ = [
    "Asked",
    "Checked",
    "Cosigned",
    "Published",
    "Submit",
    "ask_witnesses",
    "check_published",
    "cosign",
    "publish",
]

CHECKPOINT = "checkpoint"
#: From this many entries a published folder's entries are verified by all cores.
PARALLEL_ENTRIES = 8192
#: Earlier checkpoints that carried cosignatures, by size (FORMAT.md 19.1): what each
#: witness saw before the log grew past it.
COSIGNED = "cosigned"


def _root(leaves: list[bytes]) -> bytes:
    f = Frontier(SHA256)
    for h in leaves:
        f.append(h)
    return f.root()


def _read_checkpoint(store: Store) -> Checkpoint | None:
    data = store.read(CHECKPOINT)
    if data is None:
        return None
    try:
        return parse_checkpoint(data)
    except CheckpointError as exc:
        raise IntegrityError(f"{store.where(CHECKPOINT)}: {exc}", reason="bad-checkpoint") from None


@dataclass(frozen=True, slots=True)
class Published:
    checkpoint: Checkpoint
    folder: str  # where it was published
    written: int  # tiles and bundles written (missing or different before)
    new: bool  # False: the folder already held a checkpoint of this size
    vkey: str  # the log's verifier key, for witnesses and other tools


def publish(ledger: Ledger, where: Store | Path) -> Published:
    """Publish the verified chain as tiles in a folder or a Store; sign its companion
    checkpoint."""
    store = as_store(where)
    signer = ledger.signer()
    with _publish_lock(ledger):
        with ledger.locked():
            report = verify_ledger(ledger)
            if not report.ok or report.chain_id is None or report.key is None:
                raise refusal(report, "published")
            if signer.key_id != report.key:
                raise KeyAccessError(
                    f"the signing key {signer.key_id} is not the chain's current key {report.key}",
                    hint="use the key named by the last key rotation",
                )
            # The leaves of the verified lines, a tile's worth at a time (memory holds only
            # their hashes, 32 bytes an entry), under the writer's lock with the verdict.
            leaves: list[bytes] = []
            for group in _groups(ledger, report.size):
                leaves.extend(leaf_hashes_of(group))
        # Writers go on from here: only the first len(leaves) lines are read again.
        return _publish(ledger, store, signer, report.chain_id, leaves)


def _publish(
    ledger: Ledger, store: Store, signer: Signer, chain_id: str, leaves: list[bytes]
) -> Published:
    origin = companion_origin(chain_id)
    old = _read_checkpoint(store)
    if old is not None:
        _check_extends(old, origin, leaves, store)
    kept = 0 if old is None else old.size // HASHES_PER_TILE  # full bundles published
    written = 0
    for index, group in enumerate(_groups(ledger, len(leaves))):
        first = index * HASHES_PER_TILE
        if leaf_hashes_of(group) != leaves[first : first + len(group)]:
            raise IntegrityError(
                f"chain.jsonl changed below seq {first + len(group)} while it was published",
                reason="rewritten",
                hint="run `memory-chain verify`",
            )
        rel = tile_path(None, index, len(group))
        if index < kept and store.size(rel) == sum(len(x) + 2 for x in group):
            continue  # immutable once published: `verify --tiles` reads it, not this
        written += _write(store, rel, entry_bundle(group))
    full_before = _full_tiles(old.size) if old is not None else {}
    for (level, index, width), (rel, data) in zip(
        tiles_for(len(leaves)), build_tiles(leaves).items(), strict=True
    ):
        full = width == HASHES_PER_TILE and index < full_before.get(level, 0)
        if full and store.size(rel) == len(data):
            continue  # immutable, as the bundles
        written += _write(store, rel, data)
    vkey = verifier_key(origin, signer.key_id)
    if old is not None and old.size == len(leaves):
        return Published(old, store.where(), written, False, vkey)
    if old is not None and len(old.signatures) > 1:  # cosigned: kept, as a witness saw it
        store.write(f"{COSIGNED}/{old.size}", old.text)
    store.sync()  # the tiles are durable before a checkpoint names them
    cp = sign_checkpoint(origin, len(leaves), _root(leaves), signer)
    store.write(CHECKPOINT, cp.text, last=True)
    return Published(cp, store.where(), written, True, vkey)


def _full_tiles(size: int) -> dict[int, int]:
    """Per level, how many full hash tiles a tree of ``size`` has."""
    out: dict[int, int] = {}
    for level, index, width in tiles_for(size):
        if width == HASHES_PER_TILE:
            out[level] = index + 1
    return out


def _publish_lock(ledger: Ledger) -> contextlib.AbstractContextManager[None]:
    """One publish at a time per data directory (FORMAT.md 7, 19.4)."""
    return flocked(ledger.layout.publish_lock)


def _groups(ledger: Ledger, size: int) -> Iterator[list[bytes]]:
    """The first ``size`` lines of the chain (without their newlines), 256 at a time."""
    group: list[bytes] = []
    seen = 0
    for lines, _tail in ledger.line_chunks():
        for line in lines:
            if seen == size:
                if group:
                    yield group
                return
            group.append(line)
            seen += 1
            if len(group) == HASHES_PER_TILE:
                yield group
                group = []
    if group:
        yield group


def _write(store: Store, rel: str, data: bytes) -> int:
    """Write ``rel`` unless it holds ``data`` already; 1 if written, else 0."""
    if store.size(rel) == len(data) and store.read(rel) == data:
        return 0
    store.write(rel, data)
    return 1


def _check_extends(old: Checkpoint, origin: str, leaves: list[bytes], store: Store) -> None:
    """Refuse to publish over a folder whose log this chain does not extend."""
    where = store.where(CHECKPOINT)
    if old.origin != origin:
        raise IntegrityError(
            f"{where} is the log {old.origin}, not this chain's ({origin})",
            reason="other-log",
            hint="publish each chain to a folder of its own",
        )
    if old.size > len(leaves):
        raise IntegrityError(
            f"{where} is at size {old.size}, larger than this chain ({len(leaves)} entries): "
            "publishing would roll the log back",
            reason="rollback",
        )
    if _root(leaves[: old.size]) != old.root:
        raise IntegrityError(
            f"{where} at size {old.size} is not a prefix of this chain: publishing would fork "
            "the log",
            reason="fork",
        )


@dataclass(frozen=True, slots=True)
class Checked:
    """What check_published found. ``failure`` None: the folder verifies."""

    folder: str
    size: int = 0
    root: bytes = b""
    origin: str = ""
    key: str | None = None  # the chain key that signed the checkpoint
    blake3_root: bytes | None = None
    # (name, the largest size it cosigned here or None, when): this checkpoint's size, or
    # an earlier one kept in cosigned/
    witnesses: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    failure: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def check_published(
    where: Store | Path,
    *,
    log_key: VerifierKey | None = None,
    witnesses: list[VerifierKey] | None = None,
    quorum: int | None = None,
    ledger: Ledger | None = None,
) -> Checked:
    """Check a published folder end to end (see the module's docstring).

    ``log_key``: the checkpoint must be signed by it (else by the chain's own
    key in force, which the entries name). ``quorum``: how many of
    ``witnesses`` must have cosigned (all of them by default). ``ledger``: the
    published log must also be a prefix of this local chain.
    """
    store = as_store(where)
    witnesses = witnesses or []
    need = len(witnesses) if quorum is None else quorum
    seen = Checked(store.where())

    def failed(message: str, reason: str) -> Checked:
        return replace(seen, failure=message, reason=reason)

    try:
        cp = _read_checkpoint(store)
    except IntegrityError as exc:
        return failed(exc.message, exc.reason)
    if cp is None:
        return failed(f"{store.where(CHECKPOINT)} is missing", "missing")
    seen = replace(seen, size=cp.size, root=cp.root, origin=cp.origin)
    head, _, tail = cp.origin.rpartition("/")
    chain_id = "b3:" + head.removeprefix("memory-chain/")
    if tail != "sha256" or companion_origin(chain_id) != cp.origin or len(chain_id) != 67:
        return failed(f"{cp.origin} is not a memory-chain companion log", "other-log")
    try:
        leaves = read_leaf_hashes(store, cp.size, cp.root)
        lines = (entry + b"\n" for entry in iter_entries(store, cp.size, leaves))
        if cp.size >= PARALLEL_ENTRIES and (os.cpu_count() or 1) > 1:
            report = verify_parallel(
                lines, content_root=None, workers=os.cpu_count() or 1, chain_id=chain_id
            )
        else:
            report = verify_lines(lines, chain_id=chain_id)
    except TileError as exc:
        return failed(str(exc), "bad-tiles")
    if not report.ok or report.key is None:
        return failed(
            f"the published entries do not verify as a chain: {report.failure}", "bad-entries"
        )
    seen = replace(seen, blake3_root=report.root)
    if not cp.signed_by(report.key):
        return failed(
            f"the checkpoint is not signed by the chain's key at size {cp.size} ({report.key})",
            "checkpoint-signature",
        )
    seen = replace(seen, key=report.key)
    if log_key is not None and not note_signed_by(cp, log_key):
        return failed(
            f"the checkpoint is not signed by the log key given ({log_key.name})", "log-key"
        )
    if ledger is not None:
        local: list[bytes] = []
        for group in _groups(ledger, cp.size):
            local.extend(leaf_hashes_of(group))
        if len(local) < cp.size:
            return failed(
                f"the published log has {cp.size} entries, the local chain {len(local)}: "
                "the local chain was cut",
                "rollback",
            )
        if _root(local) != cp.root:
            return failed(
                f"the published log at size {cp.size} is not a prefix of the local chain", "fork"
            )
    cosigned: list[tuple[str, int | None, int | None]] = []
    earlier = _earlier_cosigned(store, cp)
    for w in witnesses:
        t = cosigned_at(cp, w)
        if t is not None:
            cosigned.append((w.name, cp.size, t))
            continue
        saw = [(old.size, at) for old in earlier if (at := cosigned_at(old, w)) is not None]
        cosigned.append((w.name, *max(saw)) if saw else (w.name, None, None))
    seen = replace(seen, witnesses=cosigned)
    for old in earlier:
        seen_by = [w for w in witnesses if cosigned_at(old, w) is not None]
        if seen_by and old.root != _root(leaves[: old.size]):
            return failed(
                f"{store.where(f'{COSIGNED}/{old.size}')} was cosigned with another root at size "
                f"{old.size}: the log forked after a witness saw it",
                "fork",
            )
    count = sum(1 for _, size, _ in cosigned if size == cp.size)
    if count < need:
        missing = ", ".join(name for name, size, _ in cosigned if size != cp.size)
        return failed(
            f"{count} of {len(witnesses)} witnesses cosigned size {cp.size} ({need} needed); "
            f"not cosigned by {missing}",
            "witnesses",
        )
    return seen


def _earlier_cosigned(store: Store, cp: Checkpoint) -> list[Checkpoint]:
    """The checkpoints of this log kept in cosigned/, smaller than ``cp`` (unreadable: skipped)."""
    out: list[Checkpoint] = []
    for name in store.names(COSIGNED):
        try:
            data = store.read(f"{COSIGNED}/{name}")
            if data is None:
                continue
            old = parse_checkpoint(data)
        except (OperationalError, CheckpointError):
            continue
        if old.origin == cp.origin and 0 < old.size < cp.size and name == str(old.size):
            out.append(old)
    return out


@dataclass(frozen=True, slots=True)
class Cosigned:
    checkpoint: Checkpoint
    previous: int | None  # the size this witness had cosigned before, None at first sight
    timestamp: int


def cosign(
    where: Store | Path,
    *,
    name: str,
    seed: bytes,
    log_key: VerifierKey,
    state: Path,
    now: int | None = None,
) -> Cosigned:
    """Cosign ``folder``'s checkpoint as the witness ``name`` (c2sp.org/tlog-witness rules).

    The checkpoint must be signed by ``log_key`` under its origin, and
    consistent with the largest checkpoint of that origin this witness
    cosigned before (kept in ``state``): a smaller size (a rollback), the same
    size with another root, or a tree the tiles cannot prove to extend the
    old one (a fork) raise IntegrityError, and nothing is signed. The rules are
    log/cosigner.py's, as the witness's HTTP server applies them; here the
    witness computes the consistency proof from the folder's tiles itself.
    """
    store = as_store(where)
    cp = _read_checkpoint(store)
    if cp is None:
        raise OperationalError(f"{store.where(CHECKPOINT)} is missing")
    if cp.origin != log_key.name or not note_signed_by(cp, log_key):
        raise IntegrityError(
            f"the checkpoint of {cp.origin} is not signed by the log key given ({log_key.name})",
            reason="checkpoint-signature",
        )
    witness = Cosigner(name, seed, [log_key], state)
    previous, _ = witness.seen(cp.origin)
    if cp.size < previous:
        raise IntegrityError(
            f"{cp.origin} is at size {cp.size}, but this witness cosigned size {previous}: "
            "the log was rolled back",
            reason="rollback",
        )
    proof: list[bytes] = []
    try:
        if 0 < previous < cp.size:
            leaves = read_leaf_hashes(store, cp.size, cp.root)
            proof = consistency_proof(SHA256, leaves, previous)
        line = witness.add(Request(previous, proof, cp), now)
    except (TileError, Refused) as exc:
        raise IntegrityError(
            f"{cp.origin} at size {cp.size} does not extend the size {previous} this witness "
            f"cosigned: the log forked ({exc})",
            reason="fork",
        ) from None
    timestamp = cosigned_at(cp, witness.key)
    if timestamp is not None:  # this checkpoint already carries this witness's cosignature
        return Cosigned(cp, previous or None, timestamp)
    text = cp.text + line.encode()
    _replace_if_unchanged(store, cp, text)
    done = parse_checkpoint(text)
    return Cosigned(done, previous or None, cosigned_at(done, witness.key) or 0)


def _replace_if_unchanged(store: Store, cp: Checkpoint, text: bytes) -> None:
    if store.read(CHECKPOINT) != cp.text:
        raise OperationalError(
            f"{store.where(CHECKPOINT)} changed while it was being cosigned", hint="run it again"
        )
    store.write(CHECKPOINT, text, last=True)


#: Sends an add-checkpoint request body to a witness: (HTTP status, content type, body).
Submit = Callable[[bytes], tuple[int, str, bytes]]


@dataclass(frozen=True, slots=True)
class Asked:
    """A witness's answer to a published checkpoint."""

    witness: str
    ok: bool
    message: str


def ask_witnesses(
    where: Store | Path, witnesses: Sequence[tuple[VerifierKey, Submit]]
) -> list[Asked]:
    """Send ``folder``'s checkpoint to each witness (c2sp.org/tlog-witness add-checkpoint),
    with a consistency proof from the size it cosigned last, and add each valid
    cosignature that comes back to the checkpoint.

    The old size sent is the largest this folder shows the witness cosigned (0 if
    none); a witness that remembers another answers 409 with its size, and the
    request is sent once more from that size. A witness that saw a larger size, or
    refuses, is reported, and the checkpoint goes without its cosignature.
    """
    store = as_store(where)
    cp = _read_checkpoint(store)
    if cp is None:
        raise OperationalError(f"{store.where(CHECKPOINT)} is missing")
    leaves: list[bytes] = []
    earlier = _earlier_cosigned(store, cp)
    added: list[str] = []
    out: list[Asked] = []
    for key, submit in witnesses:
        if cosigned_at(cp, key) is not None:
            out.append(Asked(key.name, True, f"cosigned size {cp.size} before"))
            continue
        old = max((e.size for e in earlier if cosigned_at(e, key) is not None), default=0)
        answer = None
        for _attempt in range(2):
            if old > cp.size:
                answer = Asked(key.name, False, f"it cosigned size {old}: the log was rolled back")
                break
            proof: list[bytes] = []
            if 0 < old < cp.size:
                if not leaves:
                    leaves = read_leaf_hashes(store, cp.size, cp.root)
                proof = consistency_proof(SHA256, leaves, old)
            status, kind, body = submit(add_checkpoint_body(old, proof, cp.text))
            if status == 409 and kind.startswith(SIZE_TYPE) and body.strip().isdigit():
                old = int(body.strip())
                continue
            if status != 200:
                reason = body.decode("utf-8", "replace").strip()[:200]
                answer = Asked(key.name, False, f"refused ({status}): {reason}")
                break
            valid = [
                line + "\n"
                for line in body.decode("utf-8", "replace").splitlines()
                if _cosigns(cp, key, line)
            ]
            if not valid:
                answer = Asked(key.name, False, "answered without a valid cosignature")
                break
            added.append(valid[0])
            answer = Asked(key.name, True, f"cosigned size {cp.size}")
            break
        out.append(answer or Asked(key.name, False, "its size kept changing; try again"))
    if added:
        _replace_if_unchanged(store, cp, cp.text + "".join(added).encode())
    return out


def _cosigns(cp: Checkpoint, key: VerifierKey, line: str) -> bool:
    """Whether signature ``line`` is a valid cosignature of ``cp`` by ``key``."""
    try:
        return cosigned_at(parse_checkpoint(cp.text + (line + "\n").encode()), key) is not None
    except CheckpointError:
        return False

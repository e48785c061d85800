"""Writing an export archive: whole, or a range with its inclusion proofs."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import blake3
import orjson

from ..format.canonical import b3
from ..format.config import Layout
from ..format.errors import (
    ChainStateError,
    InputError,
    IntegrityError,
    KeyAccessError,
    OperationalError,
)
from ..format.fsutil import fsync_dir
from ..format.progress import track
from ..log.checkpoint import (
    Checkpoint,
)
from ..log.checkpoint_store import latest_checkpoint, load_checkpoints
from ..log.merkle import BLAKE3, inclusion_proof
from ..store.ledger import Ledger
from .archive import ARCHIVE_FORMAT, PROOF_FORMAT
from .archive_check import verify_archive
from .archive_import import _refuse

__all__ = ["ExportSummary", "export_archive"]

# -- export ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What an export wrote."""

    path: Path
    chain_id: str
    first: int
    last: int
    entries: int
    chain_size: int  # entries the chain had when exported
    complete: bool
    content: bool
    blobs: int
    redacted_blobs: int  # blobs left out because their entry was redacted and the blob is gone
    checkpoints: int
    anchors: bool
    bytes: int


@dataclass(slots=True)
class _Scan:
    count: int = 0
    offsets: list[int] = field(default_factory=list)  # start of each line, then the end
    leaves: list[bytes] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    rotations: list[tuple[int, bytes]] = field(default_factory=list)
    redactions: list[tuple[int, int, bytes]] = field(default_factory=list)  # (seq, target, line)
    contents: dict[int, str] = field(default_factory=dict)  # seq -> content, from first on
    lines: dict[int, bytes] = field(default_factory=dict)


def _scan(ledger: Ledger, first: int, leaves: bool) -> _Scan:
    """One pass over the chain's complete lines (up to its size when the pass starts)."""
    s = _Scan()
    offset = 0
    for raw in ledger.iter_lines():
        if not raw.endswith(b"\n"):
            break  # a torn tail: never acknowledged, never exported
        line = raw[:-1]
        seq = s.count
        s.offsets.append(offset)
        offset += len(raw)
        if leaves:
            s.leaves.append(BLAKE3.leaf(line))
        try:
            obj = orjson.loads(line)
            kind, content = obj["type"], obj["content"]
            if seq == 0:
                s.keys.append(obj["key"])
            elif kind == "key-rotation":
                s.keys.append(obj["meta"]["new_key"])
                s.rotations.append((seq, line))
            elif kind == "redaction":
                s.redactions.append((seq, int(obj["meta"]["target"]), line))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise IntegrityError(
                f"line {seq + 1} of chain.jsonl is not an entry",
                seq=seq,
                reason="malformed",
                hint="run `memory-chain verify` for the full report",
            ) from None
        if seq >= first and isinstance(content, str):
            s.contents[seq] = content
        if seq == 0:
            s.lines[0] = line
        s.count += 1
    s.offsets.append(offset)
    return s


def _member_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    info.mtime = 0
    info.type = tarfile.REGTYPE
    return info


def _covering_checkpoint(ledger: Ledger, last: int) -> Checkpoint:
    cp = latest_checkpoint(ledger.layout)
    if cp is not None and cp.size > last:
        return cp
    from ..audit.checkpointing import checkpoint as make

    try:
        return make(ledger).checkpoint
    except KeyAccessError as exc:
        covered = f" (the latest covers seq {cp.size - 1})" if cp is not None else ""
        raise KeyAccessError(
            f"a partial export needs a checkpoint that covers seq {last}{covered}, and "
            f"none can be made: {exc.message}",
            hint="export a range the latest checkpoint covers, or run `memory-chain "
            "checkpoint` with the signing key",
        ) from None


def export_archive(
    ledger: Ledger,
    path: str | os.PathLike[str],
    *,
    content: bool = True,
    from_seq: int | None = None,
    to_seq: int | None = None,
) -> ExportSummary:
    """Write an export archive of seq ``from_seq``..``to_seq`` (default: the whole chain).

    A partial export needs a checkpoint that covers ``to_seq``: the latest,
    else one is made (which needs the signing key). The archive is written
    under a temporary name, verified with ``verify_archive`` and only then
    linked to ``path``; an existing ``path`` is never overwritten, and a
    chain that does not verify is not exported.
    """
    dest = Path(path).absolute()
    if dest.exists() or dest.is_symlink():
        raise InputError(
            f"{dest} exists", hint="choose a new file name; an export never overwrites"
        )
    first = from_seq or 0
    if first < 0 or (to_seq is not None and to_seq < first):
        raise InputError(f"no entries from seq {first} to {to_seq}")
    # The directory first, with its checkpoints and the witness: an archive
    # verifies only against what it carries, so a chain cut below a
    # checkpoint it leaves out must be refused here.
    from ..audit.verify_ledger import verify_ledger

    report = verify_ledger(ledger)
    if not report.ok:
        raise IntegrityError(
            f"the chain does not verify, so it is not exported: {report.failure}",
            reason=report.failure.reason if report.failure else "unverified",
            seq=report.failure.seq if report.failure else None,
            hint="run `memory-chain verify` for the full report",
        )
    maybe_partial = first > 0 or to_seq is not None
    scan = _scan(ledger, first, maybe_partial)
    size = scan.count
    last = size - 1 if to_seq is None else to_seq
    if size == 0:
        raise ChainStateError(f"{ledger.layout.chain} holds no entry")
    if first >= size:
        raise InputError(
            f"no entry with seq {first} (the chain has {size})",
            hint="`memory-chain log` lists the entries",
        )
    if last >= size:
        raise InputError(
            f"no entry with seq {last} (the chain has {size})",
            hint="`memory-chain log` lists the entries",
        )
    complete = first == 0 and last == size - 1
    layout = ledger.layout
    members: list[tuple[str, bytes]] = []
    cp: Checkpoint | None
    notes: list[Checkpoint] = []
    proof = b""
    if complete:
        notes = [n for n in load_checkpoints(layout) if n.size <= size]
        cp = latest_checkpoint(layout)
        if cp is not None and cp.size > size:
            cp = notes[-1] if notes else None
        keys = scan.keys
    else:
        cp = _covering_checkpoint(ledger, last)
        if cp.size > size:  # made just now, over entries added since the scan
            scan = _scan(ledger, first, True)
            size = scan.count
        if cp.size > size:
            raise IntegrityError(
                f"chain has {size} entries; {cp.describe()} commits to {cp.size}",
                reason="truncated",
                seq=size,
                hint="run `memory-chain verify`",
            )
        keys, proof = _range_proof(ledger, scan, cp, first, last)
    members.append(("keys", "".join(k + "\n" for k in keys).encode()))
    if cp is not None:
        members.append(("checkpoint", cp.text))
    members.extend((f"checkpoints/{n.size:020d}.note", n.text) for n in notes)
    try:
        members.append(("anchors.jsonl", layout.anchors.read_bytes()))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OperationalError(f"cannot read {layout.anchors}: {exc.strerror}") from None
    if not complete:
        members.append(("proof.json", proof))

    wanted = sorted({h for s, h in scan.contents.items() if s <= last}) if content else []
    blobs: list[tuple[str, int]] = []
    gone = 0
    for h in wanted:
        # As stored: altered bytes are exported, and the archive's check refuses them.
        stored = ledger.store.raw(h)
        if stored is None:
            gone += 1  # redacted (else the archive's verification refuses it)
        else:
            blobs.append((h, len(stored)))
    start, end = scan.offsets[first], scan.offsets[last + 1]
    hasher = blake3.blake3()
    with _chain_file(layout) as cf:
        cf.seek(start)
        remaining = end - start
        while remaining:
            block = cf.read(min(remaining, 1 << 20))
            if not block:
                raise OperationalError(f"{layout.chain} changed during the export")
            hasher.update(block)
            remaining -= len(block)
    listed = {name: {"size": len(data), "b3": b3(data)} for name, data in members}
    listed["chain.jsonl"] = {"size": end - start, "b3": "b3:" + hasher.hexdigest()}
    manifest = {
        "format": ARCHIVE_FORMAT,
        "chain_id": b3(scan.lines[0]),
        "from": first,
        "to": last,
        "entries": last - first + 1,
        "chain_size": size,
        "complete": complete,
        "content": content,
        "members": listed,
        "blobs": {"count": len(blobs), "bytes": sum(n for _, n in blobs)},
    }
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    members.insert(0, ("manifest.json", data))

    tmp = dest.with_name(f".{dest.name}.{os.urandom(4).hex()}.tmp")
    try:
        _write_tar(tmp, dest.name.endswith((".gz", ".tgz")), ledger, members, blobs, start, end)
        report = verify_archive(tmp, chain_id=ledger.config.chain_id)
        _refuse(report, "the export")
        try:
            os.link(tmp, dest)
        except FileExistsError:
            raise InputError(f"{dest} exists", hint="choose a new file name") from None
        except OSError as exc:
            raise OperationalError(f"cannot write {dest}: {exc.strerror}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(dest.parent)
    return ExportSummary(
        path=dest,
        chain_id=str(manifest["chain_id"]),
        first=first,
        last=last,
        entries=last - first + 1,
        chain_size=size,
        complete=complete,
        content=content,
        blobs=len(blobs),
        redacted_blobs=gone,
        checkpoints=report.checkpoints,
        anchors=any(name == "anchors.jsonl" for name, _ in members),
        bytes=dest.stat().st_size,
    )


def _chain_file(layout: Layout) -> IO[bytes]:
    try:
        return open(layout.chain, "rb")
    except OSError as exc:
        raise OperationalError(f"cannot read {layout.chain}: {exc.strerror}") from None


def _range_proof(
    ledger: Ledger, scan: _Scan, cp: Checkpoint, first: int, last: int
) -> tuple[list[str], bytes]:
    """The key history below the checkpoint, and proof.json for lines first..last."""
    leaves = scan.leaves[: cp.size]
    context: dict[int, bytes] = {0: scan.lines[0]}
    keys = [scan.keys[0]]
    for seq, line in scan.rotations:
        if seq < cp.size:
            context[seq] = line
            keys.append(orjson.loads(line)["meta"]["new_key"])
    targets: set[int] = set()
    for seq, target, line in scan.redactions:
        if last < seq < cp.size and first <= target <= last:
            context[seq] = line  # justifies a blob missing in the range
        elif first <= seq <= last and target < first:
            targets.add(target)  # the verifier checks the redaction against its target
    if targets:
        for seq, line in _lines_at(ledger, targets).items():
            context[seq] = line
    proof = {
        "format": PROOF_FORMAT,
        "checkpoint_size": cp.size,
        "last": [h.hex() for h in inclusion_proof(BLAKE3, leaves, last)],
        "context": [
            {
                "line": context[seq].decode(),
                "inclusion": [h.hex() for h in inclusion_proof(BLAKE3, leaves, seq)],
            }
            for seq in sorted(context)
        ],
    }
    return keys, orjson.dumps(proof, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _lines_at(ledger: Ledger, seqs: set[int]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    top = max(seqs)
    for seq, raw in enumerate(ledger.iter_lines()):
        if seq in seqs:
            out[seq] = raw.rstrip(b"\n")
        if seq >= top:
            break
    return out


class _Counting:
    """A file read through, advancing a progress count by what is read."""

    def __init__(self, f: IO[bytes], advance: Callable[[int], None]) -> None:
        self.f, self.advance = f, advance

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.advance(len(data))
        return data


def _write_tar(
    tmp: Path,
    gz: bool,
    ledger: Ledger,
    members: list[tuple[str, bytes]],
    blobs: list[tuple[str, int]],
    start: int,
    end: int,
) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as raw:
        zipped = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if gz else None
        out: Any = zipped if zipped is not None else raw
        advance = track("export", sum(n for _, n in blobs) + end - start)
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for name, data in members:
                tf.addfile(_member_info(name, len(data)), io.BytesIO(data))
            for h, size in blobs:
                blob = ledger.store.raw(h)
                if blob is None or len(blob) != size:
                    raise OperationalError(f"blob {h} changed during the export")
                tf.addfile(_member_info(f"content/{h[3:5]}/{h[5:]}", size), io.BytesIO(blob))
                advance(size)
            with _chain_file(ledger.layout) as cf:
                cf.seek(start)
                tf.addfile(_member_info("chain.jsonl", end - start), _Counting(cf, advance))
        if zipped is not None:
            zipped.close()
        raw.flush()
        os.fsync(raw.fileno())

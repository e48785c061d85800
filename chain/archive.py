"""Export archives: a chain in one file, verified offline, importable as a data directory.

An export (specs/FORMAT.md, export archives) is a POSIX tar file, gzip
compressed when its name ends in .gz or .tgz, whose members are, in this
order:

    manifest.json              first: what the archive claims (format
                               memory-chain-export/1), with the size and
                               BLAKE3 of every other member but the blobs
    keys                       the chain's public keys, one key id a line:
                               the genesis key, then each rotated-to key
    checkpoint                 the latest signed checkpoint (a C2SP note)
    checkpoints/<20 digits>.note   every stored checkpoint (whole exports)
    anchors.jsonl              the anchor records, carried as they are
    proof.json                 partial exports only: the inclusion proofs
    content/<2 hex>/<62 hex>   the blobs of the exported entries
    chain.jsonl                last: the exported lines, byte for byte

A **whole** export (seq 0 to the last entry) is verified exactly as a data
directory is: ``verify_lines`` over its lines, its blobs as the content
store, every checkpoint it carries checked (step 13). A **partial** export
(``--from``/``--to``) carries a checkpoint that covers its last line and,
in proof.json, that line's inclusion proof plus *context* lines with
theirs: the genesis line, every key rotation below the checkpoint's size,
the redactions after the range that target an exported entry, and the
targets before the range of the exported redactions. The exported lines
are linked to each other by their ``prev`` hashes, so the last line's
inclusion proves them all.

Reading is defensive: only regular files with the names above, no
duplicates, size limits per member, manifest first and chain.jsonl last.
``verify_archive`` reads nothing but the archive. ``import_archive``
verifies everything before it creates anything, then reads the archive
again into a temporary directory beside the destination (checking it the
same way) and renames it into place: an imported chain has key mode
``none`` (no secret key) and is read-only until a key is added by hand.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import shutil
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Final

import blake3
import orjson

from .canonical import b3
from .checkpoint import MAX_NOTE_BYTES, Checkpoint, CheckpointError, origin_of, parse_checkpoint
from .checkpoint_store import latest_checkpoint, load_checkpoints
from .config import Config, Layout
from .entry import HASH_RE, MAX_LINE_BYTES, Malformed, parse_line, rotation_message
from .entry import signing_message_of_line as _signing_message
from .errors import ChainStateError, InputError, IntegrityError, KeyAccessError, OperationalError
from .fsutil import fsync_dir, write_all
from .keys import NO_KEY_MODE, verify_sig, write_public_key_file
from .ledger import Ledger
from .merkle import BLAKE3, ProofError, inclusion_proof, verify_inclusion
from .verify import _COMMITTED, _CONTENT, BlobGetter, ChainState, Failure, Report, verify_lines

__all__ = [
    "ARCHIVE_FORMAT",
    "LIMITS",
    "PROOF_FORMAT",
    "STEP_ARCHIVE",
    "ArchiveReport",
    "ExportSummary",
    "Limits",
    "export_archive",
    "import_archive",
    "verify_archive",
]

ARCHIVE_FORMAT: Final = "memory-chain-export/1"
PROOF_FORMAT: Final = "memory-chain-export-proof/1"
#: The step number of failures of the container itself (members, manifest).
STEP_ARCHIVE: Final = 0
#: Failures of a partial export's proofs are checkpoint failures (step 13).
STEP_PROOF: Final = 13
_MAX_INT: Final = 2**53 - 1


@dataclass(frozen=True, slots=True)
class Limits:
    """What a reader accepts (bytes, unless said otherwise)."""

    manifest: int = 1 << 20
    keys: int = 1 << 20
    note: int = MAX_NOTE_BYTES
    anchors: int = 64 << 20
    proof: int = 256 << 20
    blob: int = 64 << 20
    blobs_total: int = 4 << 30  # the reference verifier holds the blobs in memory
    chain: int = 1 << 40
    members: int = 1 << 24  # number of members


LIMITS: Final = Limits()

_NOTE_RE: Final = re.compile(r"checkpoints/([0-9]{20})\.note")
_BLOB_RE: Final = re.compile(r"content/([0-9a-f]{2})/([0-9a-f]{62})")
_SMALL: Final = ("keys", "checkpoint", "anchors.jsonl", "proof.json")


@dataclass(frozen=True, slots=True)
class ArchiveReport(Report):
    """The verdict on an export: a Report plus what the archive covered."""

    first: int = 0  # the first exported seq
    last: int = -1  # the last exported seq
    complete: bool = False  # seq 0 to the chain's end when exported
    content_checked: bool = False  # False: exported with --no-content, step 10 skipped
    checkpoints: int = 0  # checkpoints checked
    blobs: int = 0  # blobs carried


class _Bad(Exception):
    """The first failure found while reading an archive."""

    def __init__(self, reason: str, message: str, seq: int = 0, step: int = STEP_ARCHIVE) -> None:
        super().__init__(message)
        self.failure = Failure(seq, step, reason, message)


# -- reading ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Manifest:
    chain_id: str
    first: int
    last: int
    entries: int
    chain_size: int
    complete: bool
    content: bool
    members: dict[str, tuple[int, str]]  # name -> (size, b3), every member but blobs
    blob_count: int
    blob_bytes: int


def _uint(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if type(value) is not int or not 0 <= value <= _MAX_INT:
        raise _Bad("bad-manifest", f"manifest.json: {name!r} is not an integer >= 0")
    return value


def _flag(obj: dict[str, Any], name: str) -> bool:
    value = obj.get(name)
    if type(value) is not bool:
        raise _Bad("bad-manifest", f"manifest.json: {name!r} is not true or false")
    return value


def _parse_manifest(data: bytes) -> _Manifest:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise _Bad("bad-manifest", "manifest.json is not JSON") from None
    if not isinstance(obj, dict) or obj.get("format") != ARCHIVE_FORMAT:
        raise _Bad("bad-manifest", f"not a {ARCHIVE_FORMAT} archive")
    chain_id = obj.get("chain_id")
    if not isinstance(chain_id, str) or HASH_RE.fullmatch(chain_id) is None:
        raise _Bad("bad-manifest", "manifest.json: 'chain_id' is not a chain id")
    first, last, entries = _uint(obj, "from"), _uint(obj, "to"), _uint(obj, "entries")
    if first > last or entries != last - first + 1:
        raise _Bad("bad-manifest", f"manifest.json: from {first}, to {last}, entries {entries}")
    complete, content = _flag(obj, "complete"), _flag(obj, "content")
    if complete and first != 0:
        raise _Bad("bad-manifest", "manifest.json: a complete export starts at seq 0")
    listed = obj.get("members")
    blobs = obj.get("blobs")
    if not isinstance(listed, dict) or not isinstance(blobs, dict):
        raise _Bad("bad-manifest", "manifest.json: 'members' and 'blobs' must be objects")
    members: dict[str, tuple[int, str]] = {}
    for name, info in listed.items():
        if _kind(name) in (None, "blob", "manifest.json") or not isinstance(info, dict):
            raise _Bad("bad-manifest", f"manifest.json lists an unexpected member {name!r}")
        digest = info.get("b3")
        if not isinstance(digest, str) or HASH_RE.fullmatch(digest) is None:
            raise _Bad("bad-manifest", f"manifest.json: the b3 of {name!r} is not a hash")
        members[name] = (_uint(info, "size"), digest)
    for name in ("chain.jsonl", "keys"):
        if name not in members:
            raise _Bad("bad-manifest", f"manifest.json does not list {name}")
    if not complete:
        for name in ("checkpoint", "proof.json"):
            if name not in members:
                raise _Bad("bad-manifest", f"a partial export needs {name}; the manifest has none")
        if any(_kind(name) == "note" for name in members):
            raise _Bad("bad-manifest", "a partial export carries no checkpoints/ notes")
    elif "proof.json" in members:
        raise _Bad("bad-manifest", "a complete export carries no proof.json")
    return _Manifest(
        chain_id,
        first,
        last,
        entries,
        _uint(obj, "chain_size"),
        complete,
        content,
        members,
        _uint(blobs, "count"),
        _uint(blobs, "bytes"),
    )


def _kind(name: str) -> str | None:
    """What a member name is: a fixed name, "note", "blob", or None (not allowed)."""
    if name in ("manifest.json", "chain.jsonl", *_SMALL):
        return name
    if _NOTE_RE.fullmatch(name):
        return "note"
    if _BLOB_RE.fullmatch(name):
        return "blob"
    return None


def _unsafe(m: tarfile.TarInfo) -> str | None:
    name = m.name
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or "\0" in name or ".." in parts:
        return f"member {name!r} has an absolute or parent-relative path"
    if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or m.issparse():
        what = (
            "a symbolic link"
            if m.issym()
            else "a hard link"
            if m.islnk()
            else "a directory"
            if m.isdir()
            else "a device or fifo"
            if m.isdev()
            else "not a regular file"
        )
        return f"member {name!r} is {what}"
    return None


def _limit_of(kind: str, limits: Limits) -> int:
    return {
        "manifest.json": limits.manifest,
        "keys": limits.keys,
        "checkpoint": limits.note,
        "note": limits.note,
        "anchors.jsonl": limits.anchors,
        "proof.json": limits.proof,
        "blob": limits.blob,
        "chain.jsonl": limits.chain,
    }[kind]


def _admit(m: tarfile.TarInfo, seen: set[str], limits: Limits) -> str:
    """Check one member header; return its kind."""
    why = _unsafe(m)
    if why is not None:
        raise _Bad("unsafe-member", why)
    kind = _kind(m.name)
    if kind is None:
        raise _Bad("unexpected-member", f"member {m.name!r} is not part of an export")
    if m.name in seen:
        raise _Bad("duplicate-member", f"member {m.name!r} appears twice")
    seen.add(m.name)
    if m.size > _limit_of(kind, limits):
        raise _Bad("too-large", f"member {m.name!r} is {m.size} bytes, over the limit")
    return kind


def _read_member(tf: tarfile.TarFile, m: tarfile.TarInfo) -> bytes:
    f = tf.extractfile(m)
    if f is None:  # not a regular file: refused before
        raise _Bad("unsafe-member", f"member {m.name!r} has no data")
    data = f.read()
    if len(data) != m.size:
        raise _Bad("bad-archive", f"member {m.name!r} is cut short")
    return data


class _Sink:
    """Where import writes what it reads (a new directory, not yet in place).

    Its write errors are OperationalErrors, never mistaken for a damaged archive.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: set[Path] = {root, root / "content"}
        try:
            (root / "content").mkdir()
            self._chain = open(root / "chain.jsonl", "xb")  # noqa: SIM115 (closed in close)
        except OSError as exc:
            raise OperationalError(f"cannot write in {root}: {exc.strerror}") from None

    def member(self, name: str, data: bytes) -> None:
        if name in ("keys", "proof.json"):
            return  # agent.pub is written from the verified chain instead
        path = self.root / name  # a name _kind accepted: no traversal possible
        try:
            path.parent.mkdir(exist_ok=True)
            self.folders.add(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise OperationalError(f"cannot write {path}: {exc.strerror}") from None

    def chain(self, block: bytes) -> None:
        try:
            self._chain.write(block)
        except OSError as exc:
            raise OperationalError(f"cannot write chain.jsonl: {exc.strerror}") from None

    def close(self) -> None:
        if not self._chain.closed:
            try:
                self._chain.flush()
                os.fsync(self._chain.fileno())
            except OSError as exc:
                raise OperationalError(f"cannot write chain.jsonl: {exc.strerror}") from None
            finally:
                self._chain.close()

    def sync(self) -> None:
        for folder in sorted(self.folders, key=lambda p: len(p.parts), reverse=True):
            fsync_dir(folder)


class _Lines:
    """The lines of chain.jsonl as they stream out of the archive."""

    def __init__(self, stream: IO[bytes], sink: _Sink | None, first: int, keep: set[int]) -> None:
        self.stream = stream
        self.sink = sink
        self.hasher = blake3.blake3()
        self.total = 0
        self.count = 0
        self.pos = first
        self.keep = keep  # positions whose lines are kept
        self.kept: dict[int, bytes] = {}
        self.first_line = b""
        self.last_line = b""

    def _line(self, line: bytes) -> bytes:
        if self.count == 0:
            self.first_line = line
        self.last_line = line
        if self.pos in self.keep:
            self.kept[self.pos] = line
        self.count += 1
        self.pos += 1
        return line + b"\n"

    def __iter__(self) -> Iterator[bytes]:
        rest = b""
        while True:
            block = self.stream.read(1 << 20)
            if not block:
                break
            self.hasher.update(block)
            self.total += len(block)
            if self.sink is not None:
                self.sink.chain(block)
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            for part in parts:
                yield self._line(part)
            if len(rest) >= MAX_LINE_BYTES:
                # Too long to be a line: fails step 1 where it stands.
                yield self._line(rest[:MAX_LINE_BYTES])
                return
        if rest:
            yield rest  # a torn tail: an export never has one

    def digest(self) -> str:
        return "b3:" + self.hasher.hexdigest()


@dataclass(slots=True)
class _Contents:
    manifest: _Manifest | None = None
    keys: bytes = b""
    latest: Checkpoint | None = None
    notes: list[Checkpoint] = field(default_factory=list)
    proof: bytes = b""
    blobs: dict[str, bytes] = field(default_factory=dict)
    blob_bytes: int = 0
    genesis_name: str = ""


def _note(data: bytes, label: str) -> Checkpoint:
    try:
        return parse_checkpoint(data).with_label(label)
    except CheckpointError as exc:
        raise _Bad("bad-checkpoint", f"{label} is not a valid checkpoint: {exc}", 0, 13) from None


def _check(
    path: Path,
    trusted_key: str | None,
    chain_id: str | None,
    sink: _Sink | None,
    limits: Limits,
) -> tuple[ArchiveReport, _Contents]:
    if chain_id is not None and HASH_RE.fullmatch(chain_id) is None:
        raise InputError(f"not a chain id: {chain_id!r}", hint="a chain id is b3:<64 hex>")
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    c = _Contents()
    with f:
        try:
            return _check_open(f, trusted_key, chain_id, sink, limits, c), c
        except _Bad as bad:
            failure = bad.failure
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            failure = Failure(
                0, STEP_ARCHIVE, "bad-archive", f"the archive is damaged or not a tar file: {exc}"
            )
    m = c.manifest
    report = ArchiveReport(
        ok=False,
        size=0,
        head=None,
        chain_id=m.chain_id if m else None,
        key=None,
        failure=failure,
        torn_tail=0,
        verified_from=m.first if m else 0,
        first=m.first if m else 0,
        last=m.last if m else -1,
        complete=m.complete if m else False,
        content_checked=m.content if m else False,
    )
    return report, c


def _check_open(
    f: IO[bytes],
    trusted_key: str | None,
    chain_id: str | None,
    sink: _Sink | None,
    limits: Limits,
    c: _Contents,
) -> ArchiveReport:
    gz = f.read(2) == b"\x1f\x8b"
    f.seek(0)
    with tarfile.open(fileobj=f, mode="r|gz" if gz else "r|") as tf:
        return _walk(tf, trusted_key, chain_id, sink, limits, c)


def _walk(
    tf: tarfile.TarFile,
    trusted_key: str | None,
    chain_id: str | None,
    sink: _Sink | None,
    limits: Limits,
    c: _Contents,
) -> ArchiveReport:
    m = tf.next()
    if m is None:
        raise _Bad("bad-archive", "the archive is empty")
    seen: set[str] = set()
    if _admit(m, seen, limits) != "manifest.json":
        raise _Bad("bad-archive", f"the first member is {m.name!r}, not manifest.json")
    c.manifest = man = _parse_manifest(_read_member(tf, m))
    count = 1
    while True:
        m = tf.next()
        if m is None:
            raise _Bad("missing-member", "the archive has no chain.jsonl")
        count += 1
        if count > limits.members:
            raise _Bad("too-large", "the archive has too many members")
        kind = _admit(m, seen, limits)
        if kind == "chain.jsonl":
            break
        if kind == "manifest.json":
            raise _Bad("duplicate-member", "member 'manifest.json' appears twice")
        data = _read_member(tf, m)
        if kind == "blob":
            if not man.content:
                raise _Bad("unexpected-member", f"{m.name!r} in an export without content")
            c.blob_bytes += len(data)
            if c.blob_bytes > limits.blobs_total:
                raise _Bad("too-large", "the archive's blobs are over the size limit")
            c.blobs["b3:" + m.name[8:10] + m.name[11:]] = data
        else:
            listed = man.members.get(m.name)
            if listed is None:
                raise _Bad("unexpected-member", f"member {m.name!r} is not in the manifest")
            if listed != (len(data), b3(data)):
                raise _Bad("manifest-mismatch", f"member {m.name!r} does not match the manifest")
            if kind == "keys":
                c.keys = data
            elif kind == "proof.json":
                c.proof = data
            elif kind == "checkpoint":
                c.latest = _note(data, "the archive's checkpoint")
            elif kind == "note":
                cp = _note(data, f"the checkpoint in {m.name}")
                if m.name != f"checkpoints/{cp.size:020d}.note":
                    raise _Bad("bad-checkpoint", f"{m.name} holds a checkpoint of size {cp.size}")
                c.notes.append(cp)
        if sink is not None:
            sink.member(m.name, data)
    missing = sorted(set(man.members) - seen)
    if missing:
        raise _Bad(
            "missing-member",
            f"the manifest lists {missing[0]!r}, which is not among the members before "
            "chain.jsonl (the last one)",
        )
    stream = tf.extractfile(m)
    if stream is None:
        raise _Bad("unsafe-member", "chain.jsonl has no data")
    if man.complete:
        report = _check_whole(man, c, stream, trusted_key, chain_id, sink)
    else:
        report = _check_range(man, c, stream, trusted_key, chain_id, sink)
    if report.ok:
        extra = tf.next()
        if extra is not None:
            raise _Bad("unexpected-member", f"member {extra.name!r} follows chain.jsonl")
    return report


def _blob_getter(c: _Contents, man: _Manifest, requested: set[str]) -> BlobGetter | None:
    if not man.content:
        return None

    def get(content_hash: str) -> bytes | None:
        requested.add(content_hash)
        return c.blobs.get(content_hash)

    return get


def _after_lines(
    report: Report,
    lines: _Lines,
    man: _Manifest,
    c: _Contents,
    keys: list[str],
    requested: set[str],
) -> None:
    """The checks that follow a successful run over the lines."""
    if report.torn_tail:
        raise _Bad("malformed", "chain.jsonl ends with an unterminated line", report.size, 1)
    if report.chain_id != man.chain_id:
        raise _Bad("manifest-mismatch", f"the manifest names chain {man.chain_id}")
    if lines.count != man.entries:
        raise _Bad(
            "manifest-mismatch",
            f"chain.jsonl has {lines.count} lines; the manifest says {man.entries}",
        )
    if man.members["chain.jsonl"] != (lines.total, lines.digest()):
        raise _Bad("manifest-mismatch", "member 'chain.jsonl' does not match the manifest")
    want = "".join(k + "\n" for k in keys).encode()
    if c.keys != want:
        raise _Bad("bad-keys", "member 'keys' is not the chain's key history")
    if (len(c.blobs), c.blob_bytes) != (man.blob_count, man.blob_bytes):
        raise _Bad("manifest-mismatch", "the blobs do not match the manifest's count and bytes")
    unused = sorted(set(c.blobs) - requested)
    if unused:
        raise _Bad("unexpected-member", f"blob {unused[0]} belongs to no exported entry")
    try:
        genesis = orjson.loads(lines.first_line)
        c.genesis_name = str(genesis["meta"]["name"]) if genesis["seq"] == 0 else ""
    except (orjson.JSONDecodeError, KeyError, TypeError):
        c.genesis_name = ""


def _check_whole(
    man: _Manifest,
    c: _Contents,
    stream: IO[bytes],
    trusted_key: str | None,
    chain_id: str | None,
    sink: _Sink | None,
) -> ArchiveReport:
    state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
    checkpoints = list(c.notes)
    if c.latest is not None and all(cp.text != c.latest.text for cp in checkpoints):
        checkpoints.append(c.latest)
    for cp in checkpoints:
        state.add_checkpoint(cp)
    requested: set[str] = set()
    lines = _Lines(stream, sink, 0, set())
    report = verify_lines(lines, blobs=_blob_getter(c, man, requested), state=state)
    if report.ok:
        _after_lines(report, lines, man, c, state.keys, requested)
    return _extend(report, man, c, len(checkpoints))


def _extend(report: Report, man: _Manifest, c: _Contents, checkpoints: int) -> ArchiveReport:
    return ArchiveReport(
        ok=report.ok,
        size=report.size,
        head=report.head,
        chain_id=report.chain_id,
        key=report.key,
        failure=report.failure,
        torn_tail=report.torn_tail,
        verified_from=report.verified_from,
        root=report.root,
        first=man.first,
        last=man.last,
        complete=man.complete,
        content_checked=man.content,
        checkpoints=checkpoints,
        blobs=len(c.blobs),
    )


# -- partial exports ----------------------------------------------------------


@dataclass(slots=True)
class _RangeState(ChainState):
    """ChainState for lines first..last, given what the proofs established before first."""

    # target seq -> content hash, named by a proven redaction after the range
    later: dict[int, str] = field(default_factory=dict)

    def finish(self, failure: Failure | None = None) -> Failure | None:
        if failure is None:
            for target, content in self.later.items():
                flags = self.flags[target] if target < len(self.flags) else 0
                if self.pending.get(target) == content and not flags & _COMMITTED:
                    del self.pending[target]
        return ChainState.finish(self, failure)


@dataclass(slots=True)
class _Context:
    chain_id: str
    keys: list[str]  # the genesis key, then each rotated-to key (below the checkpoint)
    rotations: list[tuple[int, str]]  # (seq, new key)
    lines: dict[int, bytes]
    objs: dict[int, dict[str, Any]]


def _hexes(value: Any, what: str) -> list[bytes]:
    if not isinstance(value, list):
        raise _Bad("bad-proof", f"proof.json: {what} is not a list")
    try:
        return [bytes.fromhex(h) for h in value]
    except (TypeError, ValueError):
        raise _Bad("bad-proof", f"proof.json: {what} holds a hash that is not hex") from None


def _key_at(seq: int, keys: list[str], rotations: list[tuple[int, str]]) -> str:
    key = keys[0]
    for r_seq, new_key in rotations:
        if r_seq < seq:
            key = new_key
    return key


def _check_context(man: _Manifest, c: _Contents, items: Any) -> _Context:
    """The proven lines of proof.json: genesis, rotations, redaction context."""
    cp = c.latest
    assert cp is not None  # the manifest of a partial export lists it
    if not isinstance(items, list) or not items:
        raise _Bad("bad-proof", "proof.json: 'context' must list the genesis line first")
    keys: list[str] = []
    rotations: list[tuple[int, str]] = []
    lines: dict[int, bytes] = {}
    objs: dict[int, dict[str, Any]] = {}
    last_seq = -1
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("line"), str):
            raise _Bad("bad-proof", f"proof.json: context item {i} has no line")
        line = item["line"].encode()
        try:
            obj = parse_line(line).obj
        except Malformed as exc:
            raise _Bad(
                "malformed-entry", f"context line {i}: {exc.message}", 0, STEP_PROOF
            ) from None
        seq = obj["seq"]
        if seq <= last_seq or (i == 0) != (seq == 0):
            raise _Bad("bad-proof", "proof.json: context lines must start at seq 0, in seq order")
        last_seq = seq
        if seq >= cp.size:
            raise _Bad(
                "beyond-checkpoint",
                f"context line at seq {seq} is not in a checkpoint of size {cp.size}",
                seq,
                STEP_PROOF,
            )
        try:
            proof = _hexes(item.get("inclusion"), f"the inclusion of seq {seq}")
            verify_inclusion(BLAKE3, seq, cp.size, BLAKE3.leaf(line), proof, cp.root)
        except ProofError as exc:
            raise _Bad(
                "bad-inclusion",
                f"context line at seq {seq} is not in the checkpoint's tree: {exc}",
                seq,
                STEP_PROOF,
            ) from None
        key = obj["key"] if seq == 0 else keys[-1]
        if obj["key"] != key or not verify_sig(key, _signing_message(parse_line(line)), obj["sig"]):
            raise _Bad("bad-signature", f"context line at seq {seq} is not signed by {key}", seq, 8)
        if seq == 0:
            keys.append(key)
        elif obj["type"] == "key-rotation":
            new_key = obj["meta"]["new_key"]
            if new_key == key or not verify_sig(
                new_key, rotation_message(obj), obj["meta"]["new_sig"]
            ):
                raise _Bad("invalid-rotation", f"the rotation at seq {seq} is not valid", seq, 9)
            keys.append(new_key)
            rotations.append((seq, new_key))
        lines[seq] = line
        objs[seq] = obj
    chain_id = b3(lines[0])
    if cp.origin != origin_of(chain_id):
        raise _Bad("checkpoint-origin", f"the checkpoint is for {cp.origin}, not chain {chain_id}")
    if not cp.signed_by(keys[-1]):
        raise _Bad(
            "checkpoint-signature",
            f"the checkpoint is not signed by {keys[-1]}, the key in force at size {cp.size}",
            cp.size - 1,
            STEP_PROOF,
        )
    if man.chain_id != chain_id:
        raise _Bad("manifest-mismatch", f"the manifest names chain {man.chain_id}, not {chain_id}")
    if cp.size <= man.last:
        raise _Bad(
            "beyond-checkpoint",
            f"the checkpoint (size {cp.size}) does not cover seq {man.last}",
            man.last,
            STEP_PROOF,
        )
    return _Context(chain_id, keys, rotations, lines, objs)


def _check_range(
    man: _Manifest,
    c: _Contents,
    stream: IO[bytes],
    trusted_key: str | None,
    chain_id: str | None,
    sink: _Sink | None,
) -> ArchiveReport:
    try:
        proof = orjson.loads(c.proof)
    except orjson.JSONDecodeError:
        raise _Bad("bad-proof", "proof.json is not JSON") from None
    cp = c.latest
    assert cp is not None
    if not isinstance(proof, dict) or proof.get("format") != PROOF_FORMAT:
        raise _Bad("bad-proof", f"proof.json is not a {PROOF_FORMAT} object")
    if proof.get("checkpoint_size") != cp.size:
        raise _Bad("bad-proof", "proof.json is not for the archive's checkpoint")
    last_proof = _hexes(proof.get("last"), "'last'")
    ctx = _check_context(man, c, proof.get("context"))
    if chain_id is not None and ctx.chain_id != chain_id:
        raise _Bad(
            "chain-id-mismatch", f"chain id {ctx.chain_id} is not the pinned {chain_id}", 0, 11
        )
    if trusted_key is not None and trusted_key not in ctx.keys:
        raise _Bad(
            "untrusted-key",
            f"the trusted key {trusted_key} is neither the genesis key {ctx.keys[0]} "
            "nor a key this chain rotated to",
            0,
            7,
        )
    first, last = man.first, man.last
    # What the verifier knows of the entries before the range: the context.
    digests, flags = bytearray(32 * first), bytearray(first)
    later: dict[int, str] = {}
    ts = ""
    for seq, obj in ctx.objs.items():
        if seq < first:
            ts = max(ts, obj["ts"])
            if obj["content"] is not None:
                digests[32 * seq : 32 * seq + 32] = bytes.fromhex(obj["content"][3:])
                flags[seq] = _CONTENT | (_COMMITTED if obj["tier"] == "committed" else 0)
        elif seq > last and obj["type"] == "redaction":
            target = obj["meta"]["target"]
            if first <= target <= last:
                later[target] = obj["meta"]["content"]
    lines = _Lines(stream, sink, first, set(ctx.lines))
    it = iter(lines)
    head_line = next(it, b"")
    try:
        prev = orjson.loads(head_line)["prev"] if first else None
    except (orjson.JSONDecodeError, KeyError, TypeError):
        prev = None
    state = _RangeState(
        size=first,
        head=prev if isinstance(prev, str) else None,
        ts=ts,
        key=_key_at(first, ctx.keys, ctx.rotations),
        chain_id=ctx.chain_id if first else None,
        digests=digests,
        flags=flags,
        genesis_key=ctx.keys[0],
        later=later,
    )

    def all_lines() -> Iterator[bytes]:
        if head_line:
            yield head_line
        yield from it

    requested: set[str] = set()
    report = verify_lines(all_lines(), blobs=_blob_getter(c, man, requested), state=state)
    report = replace(report, verified_from=first, root=None)
    if not report.ok:
        return _extend(report, man, c, 1)
    if state.size != last + 1:
        raise _Bad(
            "manifest-mismatch", f"chain.jsonl ends at seq {state.size - 1}, not {last}", state.size
        )
    for seq in sorted(lines.kept):
        if lines.kept[seq] != ctx.lines[seq]:
            raise _Bad(
                "inconsistent",
                f"the line at seq {seq} differs from the proven context line",
                seq,
                STEP_PROOF,
            )
    in_range = [k for s, k in ctx.rotations if first <= s <= last]
    if state.keys != ([ctx.keys[0]] if first == 0 else []) + in_range:
        raise _Bad(
            "inconsistent",
            "the key rotations in the range are not the proven ones",
            last,
            STEP_PROOF,
        )
    try:
        verify_inclusion(BLAKE3, last, cp.size, BLAKE3.leaf(lines.last_line), last_proof, cp.root)
    except ProofError as exc:
        raise _Bad(
            "bad-inclusion",
            f"the line at seq {last} is not in {cp.describe()}'s tree: {exc}",
            last,
            STEP_PROOF,
        ) from None
    _after_lines(report, lines, man, c, ctx.keys, requested)
    return _extend(report, man, c, 1)


# -- the public functions -------------------------------------------------------


def verify_archive(
    path: str | os.PathLike[str],
    *,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    limits: Limits = LIMITS,
) -> ArchiveReport:
    """Verify an export with nothing but the archive; the first failure is reported.

    Raises InputError only when the file cannot be read (or ``chain_id`` is
    not a chain id); everything wrong inside the archive is a failure in
    the report. With ``content_checked`` False (an export made with
    --no-content) step 10 was skipped.
    """
    return _check(Path(path), trusted_key, chain_id, None, limits)[0]


def _refuse(report: ArchiveReport, what: str) -> None:
    f = report.failure
    if f is None:
        return
    at = f"seq {f.seq}: " if f.step != STEP_ARCHIVE else ""
    raise IntegrityError(
        f"{what} does not verify: {at}{f.message} (step {f.step}, {f.reason})",
        seq=f.seq if f.step != STEP_ARCHIVE else None,
        reason=f.reason,
        hint="nothing was written",
    )


def _check_dest(dest: Path) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise ChainStateError(f"{dest} exists and is not a directory", hint="import into a new one")
    if dest.is_dir() and any(dest.iterdir()):
        raise ChainStateError(
            f"{dest} is not empty", hint="import into a new directory; nothing was written"
        )


def import_archive(
    path: str | os.PathLike[str],
    dest_dir: str | os.PathLike[str],
    *,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    limits: Limits = LIMITS,
) -> ArchiveReport:
    """Make a data directory from a whole export; refuse anything that does not verify.

    Nothing is created unless the archive verifies. The directory is built
    under a temporary name beside ``dest_dir`` (the archive read and checked
    again as it is written) and renamed into place, so a crash leaves no
    half directory. The new chain has key mode ``none``: read-only.
    """
    dest = Path(dest_dir).absolute()
    _check_dest(dest)
    report, _ = _check(Path(path), trusted_key, chain_id, None, limits)
    _refuse(report, "the archive")
    if not report.complete:
        raise InputError(
            f"this is a partial export (seq {report.first}..{report.last}): a data "
            "directory needs the whole chain",
            hint="import an export made without --from/--to; nothing was written",
        )
    if not report.content_checked:
        raise InputError(
            "this export has no content (made with --no-content): a data directory needs its blobs",
            hint="import an export made without --no-content; nothing was written",
        )
    parent = dest.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".{dest.name}.import-{os.urandom(4).hex()}"
        tmp.mkdir(mode=0o700)
    except OSError as exc:
        raise OperationalError(f"cannot create {dest}: {exc.strerror}") from None
    try:
        sink = _Sink(tmp)
        try:
            again, contents = _check(Path(path), trusted_key, chain_id, sink, limits)
        finally:
            sink.close()
        _refuse(again, "the archive (read again)")
        if (again.head, again.size, again.root) != (report.head, report.size, report.root):
            raise IntegrityError(
                "the archive changed while it was imported",
                reason="changed",
                hint="nothing was written",
            )
        layout = Layout(tmp)
        assert report.key is not None and report.chain_id is not None
        write_public_key_file(layout.public_key, report.key)
        config = Config.new(contents.genesis_name or "imported", NO_KEY_MODE, report.chain_id)
        config.save(layout)
        sink.sync()
        _check_dest(dest)
        try:
            os.rename(tmp, dest)  # replaces an empty directory
        except OSError as exc:
            raise OperationalError(f"cannot move the import to {dest}: {exc.strerror}") from None
        fsync_dir(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report


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
    from .checkpointing import checkpoint as make

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
    from .audit import verify_ledger

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
        try:
            blobs.append((h, os.stat(ledger.store.file(h)).st_size))
        except FileNotFoundError:
            gone += 1  # redacted (else the archive's verification refuses it)
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
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for name, data in members:
                tf.addfile(_member_info(name, len(data)), io.BytesIO(data))
            for h, size in blobs:
                blob = ledger.store.get(h)
                if blob is None or len(blob) != size:
                    raise OperationalError(f"blob {h} changed during the export")
                tf.addfile(_member_info(f"content/{h[3:5]}/{h[5:]}", size), io.BytesIO(blob))
            with _chain_file(ledger.layout) as cf:
                cf.seek(start)
                tf.addfile(_member_info("chain.jsonl", end - start), cf)
        if zipped is not None:
            zipped.close()
        raw.flush()
        os.fsync(raw.fileno())

"""Checking an export archive with nothing but the archive: whole and partial exports.

``verify_archive`` walks the members once (manifest first, chain.jsonl last) and
reports the first failure; the import reads through the same walk with a Sink.
"""

from __future__ import annotations

import os
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import blake3
import orjson

from ..format.canonical import b3
from ..format.entry import HASH_RE, MAX_LINE_BYTES, Malformed, parse_line, rotation_message
from ..format.entry import signing_message_of_line as _signing_message
from ..format.errors import (
    InputError,
)
from ..format.keys import verify_sig
from ..format.progress import counted, track
from ..log.checkpoint import (
    Checkpoint,
    CheckpointError,
    origin_of,
    parse_checkpoint,
)
from ..log.merkle import BLAKE3, ProofError, verify_inclusion
from ..verify.lines import (
    _COMMITTED,
    _CONTENT,
    BlobGetter,
    ChainState,
    Failure,
    Report,
    verify_lines,
)
from .archive import (
    LIMITS,
    PROOF_FORMAT,
    STEP_ARCHIVE,
    STEP_PROOF,
    ArchiveReport,
    Bad,
    GzipMember,
    Limits,
    Manifest,
    Sink,
    StrictHeader,
    admit_member,
    drain_tar,
    parse_manifest,
    read_member,
)

__all__ = ["check_archive", "verify_archive"]


class _Lines:
    """The lines of chain.jsonl as they stream out of the archive."""

    def __init__(self, stream: IO[bytes], sink: Sink | None, first: int, keep: set[int]) -> None:
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
    manifest: Manifest | None = None
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
        raise Bad("bad-checkpoint", f"{label} is not a valid checkpoint: {exc}", 0, 13) from None


def check_archive(
    path: Path,
    trusted_key: str | None,
    chain_id: str | None,
    sink: Sink | None,
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
        except Bad as bad:
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
    sink: Sink | None,
    limits: Limits,
    c: _Contents,
) -> ArchiveReport:
    gz = f.read(2) == b"\x1f\x8b"
    f.seek(0)
    stream = GzipMember(f) if gz else f
    try:
        reader = cast("IO[bytes]", stream)  # a stream reader needs only read()
        with tarfile.open(fileobj=reader, mode="r|", tarinfo=StrictHeader) as tf:
            report = _walk(tf, trusted_key, chain_id, sink, limits, c)
            if report.ok:
                drain_tar(tf)
    finally:
        # A damaged gzip stream is bad-archive whatever the lines say (16.5):
        # read it to its trailer even when the walk stopped early.
        if isinstance(stream, GzipMember):
            stream.finish()
    return report


def _walk(
    tf: tarfile.TarFile,
    trusted_key: str | None,
    chain_id: str | None,
    sink: Sink | None,
    limits: Limits,
    c: _Contents,
) -> ArchiveReport:
    m = tf.next()
    if m is None:
        raise Bad("bad-archive", "the archive is empty")
    seen: set[str] = set()
    if admit_member(m, seen, limits) != "manifest.json":
        raise Bad("bad-archive", f"the first member is {m.name!r}, not manifest.json")
    c.manifest = man = parse_manifest(read_member(tf, m))
    count = 1
    while True:
        m = tf.next()
        if m is None:
            raise Bad("missing-member", "the archive has no chain.jsonl")
        count += 1
        if count > limits.members:
            raise Bad("too-large", "the archive has too many members")
        kind = admit_member(m, seen, limits)
        if kind == "chain.jsonl":
            break
        if kind == "manifest.json":
            raise Bad("duplicate-member", "member 'manifest.json' appears twice")
        data = read_member(tf, m)
        if kind == "blob":
            if not man.content:
                raise Bad("unexpected-member", f"{m.name!r} in an export without content")
            c.blob_bytes += len(data)
            if c.blob_bytes > limits.blobs_total:
                raise Bad("too-large", "the archive's blobs are over the size limit")
            c.blobs["b3:" + m.name[8:10] + m.name[11:]] = data
        else:
            listed = man.members.get(m.name)
            if listed is None:
                raise Bad("unexpected-member", f"member {m.name!r} is not in the manifest")
            if listed != (len(data), b3(data)):
                raise Bad("manifest-mismatch", f"member {m.name!r} does not match the manifest")
            if kind == "keys":
                c.keys = data
            elif kind == "proof.json":
                c.proof = data
            elif kind == "checkpoint":
                c.latest = _note(data, "the archive's checkpoint")
            elif kind == "note":
                cp = _note(data, f"the checkpoint in {m.name}")
                if m.name != f"checkpoints/{cp.size:020d}.note":
                    raise Bad("bad-checkpoint", f"{m.name} holds a checkpoint of size {cp.size}")
                c.notes.append(cp)
        if sink is not None:
            sink.member(m.name, data)
    missing = sorted(set(man.members) - seen)
    if missing:
        raise Bad(
            "missing-member",
            f"the manifest lists {missing[0]!r}, which is not among the members before "
            "chain.jsonl (the last one)",
        )
    stream = tf.extractfile(m)
    if stream is None:
        raise Bad("unsafe-member", "chain.jsonl has no data")
    if man.complete:
        report = _check_whole(man, c, stream, trusted_key, chain_id, sink)
    else:
        report = _check_range(man, c, stream, trusted_key, chain_id, sink)
    if report.ok:
        extra = tf.next()
        if extra is not None:
            raise Bad("unexpected-member", f"member {extra.name!r} follows chain.jsonl")
    return report


def _blob_getter(c: _Contents, man: Manifest, requested: set[str]) -> BlobGetter | None:
    if not man.content:
        return None

    def get(content_hash: str) -> bytes | None:
        requested.add(content_hash)
        return c.blobs.get(content_hash)

    return get


def _after_lines(
    report: Report,
    lines: _Lines,
    man: Manifest,
    c: _Contents,
    keys: list[str],
    requested: set[str],
) -> None:
    """The checks that follow a successful run over the lines."""
    if report.torn_tail:
        raise Bad("malformed", "chain.jsonl ends with an unterminated line", report.size, 1)
    if report.chain_id != man.chain_id:
        raise Bad("manifest-mismatch", f"the manifest names chain {man.chain_id}")
    if lines.count != man.entries:
        raise Bad(
            "manifest-mismatch",
            f"chain.jsonl has {lines.count} lines; the manifest says {man.entries}",
        )
    if man.members["chain.jsonl"] != (lines.total, lines.digest()):
        raise Bad("manifest-mismatch", "member 'chain.jsonl' does not match the manifest")
    want = "".join(k + "\n" for k in keys).encode()
    if c.keys != want:
        raise Bad("bad-keys", "member 'keys' is not the chain's key history")
    if (len(c.blobs), c.blob_bytes) != (man.blob_count, man.blob_bytes):
        raise Bad("manifest-mismatch", "the blobs do not match the manifest's count and bytes")
    unused = sorted(set(c.blobs) - requested)
    if unused:
        raise Bad("unexpected-member", f"blob {unused[0]} belongs to no exported entry")
    try:
        genesis = orjson.loads(lines.first_line)
        c.genesis_name = str(genesis["meta"]["name"]) if genesis["seq"] == 0 else ""
    except (orjson.JSONDecodeError, KeyError, TypeError):
        c.genesis_name = ""


def _check_whole(
    man: Manifest,
    c: _Contents,
    stream: IO[bytes],
    trusted_key: str | None,
    chain_id: str | None,
    sink: Sink | None,
) -> ArchiveReport:
    state = ChainState(trusted_key=trusted_key, pinned_chain_id=chain_id)
    checkpoints = list(c.notes)
    if c.latest is not None and all(cp.text != c.latest.text for cp in checkpoints):
        checkpoints.append(c.latest)
    for cp in checkpoints:
        state.add_checkpoint(cp)
    requested: set[str] = set()
    lines = _Lines(stream, sink, 0, set())
    advance = track("import" if sink is not None else "check", man.chain_size)
    report = verify_lines(
        counted(lines, advance), blobs=_blob_getter(c, man, requested), state=state
    )
    if report.ok:
        _after_lines(report, lines, man, c, state.keys, requested)
    return _extend(report, man, c, len(checkpoints))


def _extend(report: Report, man: Manifest, c: _Contents, checkpoints: int) -> ArchiveReport:
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


class _RangeState(ChainState):
    """ChainState for lines first..last, given what the proofs established before first."""

    __slots__ = ("later",)
    # target seq -> content hash, named by a proven redaction after the range
    later: dict[int, str]

    def __init__(self, *, later: dict[int, str] | None = None, **state: Any) -> None:
        super().__init__(**state)
        self.later = {} if later is None else later

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
        raise Bad("bad-proof", f"proof.json: {what} is not a list")
    try:
        return [bytes.fromhex(h) for h in value]
    except (TypeError, ValueError):
        raise Bad("bad-proof", f"proof.json: {what} holds a hash that is not hex") from None


def _key_at(seq: int, keys: list[str], rotations: list[tuple[int, str]]) -> str:
    key = keys[0]
    for r_seq, new_key in rotations:
        if r_seq < seq:
            key = new_key
    return key


def _check_context(man: Manifest, c: _Contents, items: Any) -> _Context:
    """The proven lines of proof.json: genesis, rotations, redaction context."""
    cp = c.latest
    assert cp is not None  # the manifest of a partial export lists it
    if not isinstance(items, list) or not items:
        raise Bad("bad-proof", "proof.json: 'context' must list the genesis line first")
    keys: list[str] = []
    rotations: list[tuple[int, str]] = []
    lines: dict[int, bytes] = {}
    objs: dict[int, dict[str, Any]] = {}
    last_seq = -1
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("line"), str):
            raise Bad("bad-proof", f"proof.json: context item {i} has no line")
        line = item["line"].encode()
        try:
            obj = parse_line(line).obj
        except Malformed as exc:
            raise Bad(
                "malformed-entry", f"context line {i}: {exc.message}", 0, STEP_PROOF
            ) from None
        seq = obj["seq"]
        if seq <= last_seq or (i == 0) != (seq == 0):
            raise Bad("bad-proof", "proof.json: context lines must start at seq 0, in seq order")
        last_seq = seq
        if seq >= cp.size:
            raise Bad(
                "beyond-checkpoint",
                f"context line at seq {seq} is not in a checkpoint of size {cp.size}",
                seq,
                STEP_PROOF,
            )
        try:
            proof = _hexes(item.get("inclusion"), f"the inclusion of seq {seq}")
            verify_inclusion(BLAKE3, seq, cp.size, BLAKE3.leaf(line), proof, cp.root)
        except ProofError as exc:
            raise Bad(
                "bad-inclusion",
                f"context line at seq {seq} is not in the checkpoint's tree: {exc}",
                seq,
                STEP_PROOF,
            ) from None
        key = obj["key"] if seq == 0 else keys[-1]
        if obj["key"] != key or not verify_sig(key, _signing_message(parse_line(line)), obj["sig"]):
            raise Bad("bad-signature", f"context line at seq {seq} is not signed by {key}", seq, 8)
        if seq == 0:
            keys.append(key)
        elif obj["type"] == "key-rotation":
            new_key = obj["meta"]["new_key"]
            if new_key == key or not verify_sig(
                new_key, rotation_message(obj), obj["meta"]["new_sig"]
            ):
                raise Bad("invalid-rotation", f"the rotation at seq {seq} is not valid", seq, 9)
            keys.append(new_key)
            rotations.append((seq, new_key))
        lines[seq] = line
        objs[seq] = obj
    chain_id = b3(lines[0])
    if cp.origin != origin_of(chain_id):
        raise Bad("checkpoint-origin", f"the checkpoint is for {cp.origin}, not chain {chain_id}")
    if not cp.signed_by(keys[-1]):
        raise Bad(
            "checkpoint-signature",
            f"the checkpoint is not signed by {keys[-1]}, the key in force at size {cp.size}",
            cp.size - 1,
            STEP_PROOF,
        )
    if man.chain_id != chain_id:
        raise Bad("manifest-mismatch", f"the manifest names chain {man.chain_id}, not {chain_id}")
    if cp.size <= man.last:
        raise Bad(
            "beyond-checkpoint",
            f"the checkpoint (size {cp.size}) does not cover seq {man.last}",
            man.last,
            STEP_PROOF,
        )
    return _Context(chain_id, keys, rotations, lines, objs)


def _check_range(
    man: Manifest,
    c: _Contents,
    stream: IO[bytes],
    trusted_key: str | None,
    chain_id: str | None,
    sink: Sink | None,
) -> ArchiveReport:
    try:
        proof = orjson.loads(c.proof)
    except orjson.JSONDecodeError:
        raise Bad("bad-proof", "proof.json is not JSON") from None
    cp = c.latest
    assert cp is not None
    if not isinstance(proof, dict) or proof.get("format") != PROOF_FORMAT:
        raise Bad("bad-proof", f"proof.json is not a {PROOF_FORMAT} object")
    if proof.get("checkpoint_size") != cp.size:
        raise Bad("bad-proof", "proof.json is not for the archive's checkpoint")
    last_proof = _hexes(proof.get("last"), "'last'")
    ctx = _check_context(man, c, proof.get("context"))
    if chain_id is not None and ctx.chain_id != chain_id:
        raise Bad(
            "chain-id-mismatch", f"chain id {ctx.chain_id} is not the pinned {chain_id}", 0, 11
        )
    if trusted_key is not None and trusted_key not in ctx.keys:
        raise Bad(
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
    report = report.replace(verified_from=first, root=None)
    if not report.ok:
        return _extend(report, man, c, 1)
    if state.size != last + 1:
        raise Bad(
            "manifest-mismatch", f"chain.jsonl ends at seq {state.size - 1}, not {last}", state.size
        )
    for seq in sorted(lines.kept):
        if lines.kept[seq] != ctx.lines[seq]:
            raise Bad(
                "inconsistent",
                f"the line at seq {seq} differs from the proven context line",
                seq,
                STEP_PROOF,
            )
    in_range = [k for s, k in ctx.rotations if first <= s <= last]
    if state.keys != ([ctx.keys[0]] if first == 0 else []) + in_range:
        raise Bad(
            "inconsistent",
            "the key rotations in the range are not the proven ones",
            last,
            STEP_PROOF,
        )
    try:
        verify_inclusion(BLAKE3, last, cp.size, BLAKE3.leaf(lines.last_line), last_proof, cp.root)
    except ProofError as exc:
        raise Bad(
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
    return check_archive(Path(path), trusted_key, chain_id, None, limits)[0]

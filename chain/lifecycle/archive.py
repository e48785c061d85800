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

import os
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Self

import orjson

from ..content.store import ContentStore
from ..format.entry import HASH_RE
from ..format.errors import (
    OperationalError,
)
from ..format.fsutil import fsync_dir, write_all
from ..log.checkpoint import (
    MAX_NOTE_BYTES,
)
from ..verify.lines import (
    Failure,
    Report,
)

__all__ = [
    "ARCHIVE_FORMAT",
    "LIMITS",
    "PROOF_FORMAT",
    "STEP_ARCHIVE",
    "ArchiveReport",
    "Bad",
    "GzipMember",
    "Limits",
    "Manifest",
    "Sink",
    "StrictHeader",
    "drain_tar",
    "parse_manifest",
]

ARCHIVE_FORMAT: Final = "memory-chain-export/1"
PROOF_FORMAT: Final = "memory-chain-export-proof/1"
#: The step number of failures of the container itself (members, manifest).
STEP_ARCHIVE: Final = 0
#: Failures of a partial export's proofs are checkpoint failures (step 13).
STEP_PROOF: Final = 13
MAX_INT: Final = 2**53 - 1


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

NOTE_RE: Final = re.compile(r"checkpoints/([0-9]{20})\.note")
BLOB_RE: Final = re.compile(r"content/([0-9a-f]{2})/([0-9a-f]{62})")
SMALL_MEMBERS: Final = ("keys", "checkpoint", "anchors.jsonl", "proof.json")


class ArchiveReport(Report):
    """The verdict on an export: a Report plus what the archive covered."""

    __slots__ = ("blobs", "checkpoints", "complete", "content_checked", "first", "last")
    first: int  # the first exported seq
    last: int  # the last exported seq
    complete: bool  # seq 0 to the chain's end when exported
    content_checked: bool  # False: exported with --no-content, step 10 skipped
    checkpoints: int  # checkpoints checked
    blobs: int  # blobs carried

    def __init__(
        self,
        *,
        first: int = 0,
        last: int = -1,
        complete: bool = False,
        content_checked: bool = False,
        checkpoints: int = 0,
        blobs: int = 0,
        **report: Any,
    ) -> None:
        super().__init__(**report)
        set_ = object.__setattr__
        set_(self, "first", first)
        set_(self, "last", last)
        set_(self, "complete", complete)
        set_(self, "content_checked", content_checked)
        set_(self, "checkpoints", checkpoints)
        set_(self, "blobs", blobs)


class Bad(Exception):
    """The first failure found while reading an archive."""

    def __init__(self, reason: str, message: str, seq: int = 0, step: int = STEP_ARCHIVE) -> None:
        super().__init__(message)
        self.failure = Failure(seq, step, reason, message)


# -- reading ----------------------------------------------------------------

#: Compressed bytes read at a time, and the most decompressed bytes one step makes.
_CHUNK: Final = 1 << 16


class GzipMember:
    """A file-like reader of exactly one gzip member (FORMAT.md 16.1), nothing after it.

    zlib checks the member's CRC-32 and length (ISIZE) when it reaches the
    trailer; a stream that ends before the trailer, or any byte after it,
    raises Bad. Decompression is bounded per step (no bomb fills memory).
    """

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._d = zlib.decompressobj(wbits=31)  # gzip wrapper: header, CRC-32, ISIZE
        self._buf = bytearray()
        self._done = False  # the trailer was read and checked, or a step failed

    def _step(self) -> None:
        try:
            self._inflate()
        except BaseException:
            self._done = True  # the error that stopped it is the one reported
            raise

    def _inflate(self) -> None:
        data = self._d.unconsumed_tail or self._f.read(_CHUNK)
        if not data:
            raise Bad("bad-archive", "the gzip stream ends before its trailer (cut short)")
        self._buf += self._d.decompress(data, _CHUNK)
        if self._d.eof:
            self._done = True
            if self._d.unused_data or self._f.read(1):
                raise Bad("bad-archive", "bytes follow the end of the gzip stream")

    def read(self, n: int = -1) -> bytes:
        while not self._done and (n < 0 or len(self._buf) < n):
            self._step()
        if n < 0 or n >= len(self._buf):
            out = bytes(self._buf)
            self._buf.clear()
        else:
            out = bytes(self._buf[:n])
            del self._buf[:n]
        return out

    def finish(self) -> None:
        """Read to the trailer, checking it (the tar reader may stop before it)."""
        while not self._done:
            self._step()
            self._buf.clear()


class StrictHeader(tarfile.TarInfo):
    """A tar header read as FORMAT.md 16.1 says: a zero block ends the archive, damage is damage.

    Python's reader takes a damaged header after the first member (a bad
    checksum, a bad number, a block cut short, no block at all) for the end
    of the archive; here each is Bad("bad-archive").
    """

    @classmethod
    def fromtarfile(cls, tf: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(tf)
        except _EOFHeader:
            raise  # a block of zeros: the end of the archive
        except _EmptyHeader:
            raise Bad(
                "bad-archive", "the tar stream ends without an end-of-archive block"
            ) from None
        except _HeaderError as exc:
            raise Bad("bad-archive", f"a damaged tar header at byte {tf.offset}: {exc}") from None


# Not in typeshed's tarfile: its reader's own header errors.
_EOFHeader: type[Exception] = tarfile.__dict__["EOFHeaderError"]
_EmptyHeader: type[Exception] = tarfile.__dict__["EmptyHeaderError"]
_HeaderError: type[Exception] = tarfile.HeaderError


def drain_tar(tf: tarfile.TarFile) -> None:
    """After the end-of-archive block: every byte left in the tar stream is zero (16.1)."""
    stream = tf.fileobj
    assert stream is not None
    while True:
        block = stream.read(_CHUNK)
        if not block:
            return
        if block.count(0) != len(block):
            raise Bad("bad-archive", "non-zero bytes follow the end of the tar archive")


@dataclass(frozen=True, slots=True)
class Manifest:
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


def manifest_uint(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if type(value) is not int or not 0 <= value <= MAX_INT:
        raise Bad("bad-manifest", f"manifest.json: {name!r} is not an integer >= 0")
    return value


def manifest_flag(obj: dict[str, Any], name: str) -> bool:
    value = obj.get(name)
    if type(value) is not bool:
        raise Bad("bad-manifest", f"manifest.json: {name!r} is not true or false")
    return value


def parse_manifest(data: bytes) -> Manifest:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise Bad("bad-manifest", "manifest.json is not JSON") from None
    if not isinstance(obj, dict) or obj.get("format") != ARCHIVE_FORMAT:
        raise Bad("bad-manifest", f"not a {ARCHIVE_FORMAT} archive")
    chain_id = obj.get("chain_id")
    if not isinstance(chain_id, str) or HASH_RE.fullmatch(chain_id) is None:
        raise Bad("bad-manifest", "manifest.json: 'chain_id' is not a chain id")
    first, last, entries = (
        manifest_uint(obj, "from"),
        manifest_uint(obj, "to"),
        manifest_uint(obj, "entries"),
    )
    if first > last or entries != last - first + 1:
        raise Bad("bad-manifest", f"manifest.json: from {first}, to {last}, entries {entries}")
    complete, content = manifest_flag(obj, "complete"), manifest_flag(obj, "content")
    if complete and first != 0:
        raise Bad("bad-manifest", "manifest.json: a complete export starts at seq 0")
    listed = obj.get("members")
    blobs = obj.get("blobs")
    if not isinstance(listed, dict) or not isinstance(blobs, dict):
        raise Bad("bad-manifest", "manifest.json: 'members' and 'blobs' must be objects")
    members: dict[str, tuple[int, str]] = {}
    for name, info in listed.items():
        if member_kind(name) in (None, "blob", "manifest.json") or not isinstance(info, dict):
            raise Bad("bad-manifest", f"manifest.json lists an unexpected member {name!r}")
        digest = info.get("b3")
        if not isinstance(digest, str) or HASH_RE.fullmatch(digest) is None:
            raise Bad("bad-manifest", f"manifest.json: the b3 of {name!r} is not a hash")
        members[name] = (manifest_uint(info, "size"), digest)
    for name in ("chain.jsonl", "keys"):
        if name not in members:
            raise Bad("bad-manifest", f"manifest.json does not list {name}")
    if not complete:
        for name in ("checkpoint", "proof.json"):
            if name not in members:
                raise Bad("bad-manifest", f"a partial export needs {name}; the manifest has none")
        if any(member_kind(name) == "note" for name in members):
            raise Bad("bad-manifest", "a partial export carries no checkpoints/ notes")
    elif "proof.json" in members:
        raise Bad("bad-manifest", "a complete export carries no proof.json")
    return Manifest(
        chain_id,
        first,
        last,
        entries,
        manifest_uint(obj, "chain_size"),
        complete,
        content,
        members,
        manifest_uint(blobs, "count"),
        manifest_uint(blobs, "bytes"),
    )


def member_kind(name: str) -> str | None:
    """What a member name is: a fixed name, "note", "blob", or None (not allowed)."""
    if name in ("manifest.json", "chain.jsonl", *SMALL_MEMBERS):
        return name
    if NOTE_RE.fullmatch(name):
        return "note"
    if BLOB_RE.fullmatch(name):
        return "blob"
    return None


def unsafe_member(m: tarfile.TarInfo) -> str | None:
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


def limit_of(kind: str, limits: Limits) -> int:
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


def admit_member(m: tarfile.TarInfo, seen: set[str], limits: Limits) -> str:
    """Check one member header; return its kind."""
    why = unsafe_member(m)
    if why is not None:
        raise Bad("unsafe-member", why)
    kind = member_kind(m.name)
    if kind is None:
        raise Bad("unexpected-member", f"member {m.name!r} is not part of an export")
    if m.name in seen:
        raise Bad("duplicate-member", f"member {m.name!r} appears twice")
    seen.add(m.name)
    if m.size > limit_of(kind, limits):
        raise Bad("too-large", f"member {m.name!r} is {m.size} bytes, over the limit")
    return kind


def read_member(tf: tarfile.TarFile, m: tarfile.TarInfo) -> bytes:
    f = tf.extractfile(m)
    if f is None:  # not a regular file: refused before
        raise Bad("unsafe-member", f"member {m.name!r} has no data")
    data = f.read()
    if len(data) != m.size:
        raise Bad("bad-archive", f"member {m.name!r} is cut short")
    return data


class Sink:
    """Where import writes what it reads (a new directory, not yet in place).

    Its write errors are OperationalErrors, never mistaken for a damaged archive.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: set[Path] = {root, root / "content"}
        self.store = ContentStore(root / "content")
        try:
            (root / "content").mkdir()
            self._chain = open(root / "chain.jsonl", "xb")  # noqa: SIM115 (closed in close)
        except OSError as exc:
            raise OperationalError(f"cannot write in {root}: {exc.strerror}") from None

    def member(self, name: str, data: bytes) -> None:
        if name in ("keys", "proof.json"):
            return  # agent.pub is written from the verified chain instead
        if name.startswith("content/"):
            try:
                self.store.put(data)  # into a pack, like every data directory's content
            except OSError as exc:
                raise OperationalError(f"cannot write a blob: {exc.strerror}") from None
            return
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
        try:
            self.store.sync()
        except OSError as exc:
            raise OperationalError(f"cannot write a blob: {exc.strerror}") from None
        finally:
            self.store.close()
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

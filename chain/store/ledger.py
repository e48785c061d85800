"""The write path: init, add, batch add. O(1) in chain length.

One add: validate input -> take the locks (thread lock, flock) -> recover
the head -> write the content blob (temp file, rename) and make it durable
(fsync the file and its folder) -> append the signed line and fdatasync
(cut back out if that fails) -> update the cached head -> unlock -> return.
Nothing reads the chain beyond its last line, so the cost does not grow
with the chain, and no line on disk ever names a blob a crash could lose.

A batch add validates every item first, writes all blobs and syncs the
filesystem once, writes the lines to batch.journal (fsync), appends them to
the chain in one write (fdatasync) and removes the journal. A crash after
the journal is durable rolls the batch forward on the next open; a crash
before leaves nothing: a batch is all or nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson
from blake3 import blake3

from ..content.store import ContentStore
from ..format.canonical import HASH_PREFIX, b3, canonical
from ..format.config import Config, Layout, resolve_state_dir
from ..format.entry import (
    ENTRY_TAG,
    FORMAT_VERSION,
    HASH_RE,
    Malformed,
    default_importance,
    format_ts,
    ordinary_bytes,
    parse_line,
    signing_message,
)
from ..format.errors import (
    ChainStateError,
    InputError,
    IntegrityError,
    KeyAccessError,
    OperationalError,
)
from ..format.fsutil import fsync_dir, write_all
from ..format.keys import (
    KEY_MODES,
    PassphraseSource,
    Signer,
    key_file,
    load_signer,
    store_signer,
    write_public_key_file,
)
from ..format.newentry import NewEntry, check_secrets
from ..format.values import Value
from ..log.merkle import BLAKE3
from ..log.witness import Witness
from ..verify.incremental import (
    appends_path,
    failure_path,
    identity,
    load_failure,
    record_append,
)
from .head import Head, recover, save_head
from .journal import Spool, append_spool, roll_forward
from .keyfiles import finish_rotation

if TYPE_CHECKING:  # the screen (pickle, signal) is imported only for a long batch
    from .screen import Failed, Screen

_T = TypeVar("_T")

__all__ = ["Appended", "Clock", "Ledger", "NewEntry"]

#: Returns the current time in microseconds since the Unix epoch.
Clock = Callable[[], int]


def system_clock() -> int:
    return time.time_ns() // 1000


class Appended(Value):
    """What an add returns: the entry as written."""

    __slots__ = ("content", "hash", "line", "seq", "ts")
    seq: int
    hash: str
    ts: str
    content: str | None
    line: bytes

    def __init__(self, seq: int, hash: str, ts: str, content: str | None, line: bytes) -> None:
        set_ = object.__setattr__
        set_(self, "seq", seq)
        set_(self, "hash", hash)
        set_(self, "ts", ts)
        set_(self, "content", content)
        set_(self, "line", line)


def self_checked(obj: dict[str, Any], signer: Signer) -> bytes:
    """Sign ``obj`` and return its line, checked against verification steps 1-3.

    A line that verify would reject is never written: a failure here is a
    bug or bad input that slipped through, reported as InputError.
    """
    obj["sig"] = signer.sign(signing_message(obj))
    line = canonical(obj)
    if ordinary_bytes(line) is not None:  # the common line, checked by its pattern
        return line
    try:
        parse_line(line)
    except Malformed as exc:
        raise InputError(f"refusing to write an invalid entry: {exc.message}") from None
    return line


def signed_line(obj: dict[str, Any], signer: Signer, meta_bytes: bytes) -> bytes:
    """self_checked() for an ordinary entry (no sig yet) whose meta, checked, has the
    canonical bytes ``meta_bytes``: the body is encoded once, signed, and the sig member
    put in its sorted place (after seq, before size: the members after it are numbers
    and enum or fixed-format strings, so the last ``,"size":`` is its key); the line is
    then checked by the ordinary pattern with meta compared, not decoded. Anything
    else goes the general way (and obj gets its sig either way)."""
    body = canonical(obj)
    sig = obj["sig"] = signer.sign(ENTRY_TAG + body)
    cut = body.rfind(b',"size":')
    line = body[:cut] + b',"sig":"' + sig.encode() + b'"' + body[cut:]
    if ordinary_bytes(line, meta_bytes) is not None:
        return line
    return self_checked(obj, signer)


#: Items add_stream checks, stores and signs at a time (its memory is about 3 KB an item).
STREAM_CHUNK = 4096
#: A chunk of at least this many items is screened for secrets by a forked child while it
#: is signed (chain/store/screen.py): a fork costs a few ms, the screen 27 us an item.
SCREEN_BESIDE = 512


class Streamed(NamedTuple):
    """What add_stream appended: ``entries`` entries from seq ``first``, chain bytes start..end."""

    first: int
    entries: int
    start: int
    end: int


def _check_item(item: NewEntry, i: int, limit: int, allow_secret: bool) -> None:
    try:
        item.check(limit)
        check_secrets(item, allow=allow_secret)
    except InputError as exc:
        raise type(exc)(f"batch item {i}: {exc.message}", hint=exc.hint) from None


def _check_chunk(
    batch: list[NewEntry],
    first: int,
    limit: int,
    allow_secret: bool,
    screen: Screen | None,
    checks: str,
) -> None:
    """_check_item of each item, numbered from ``first`` (only its secret screen with
    ``checks`` "secrets"); with ``screen`` (which screens the chunk for secrets meanwhile)
    every check but the screen's, and an item that fails one is reported unless the
    screen finds a secret in an item before it."""
    if checks == "secrets":
        if screen is None and not allow_secret:
            for i, item in enumerate(batch, first):
                try:
                    check_secrets(item, allow=False)
                except InputError as exc:
                    raise type(exc)(f"batch item {i}: {exc.message}", hint=exc.hint) from None
        return
    if screen is None:
        for i, item in enumerate(batch, first):
            _check_item(item, i, limit, allow_secret)
        return
    i = first
    try:
        for i, item in enumerate(batch, first):
            _check_item(item, i, limit, True)
    except InputError:
        failed = screen.verdict()
        if failed is not None and first + failed[0] < i:
            raise _secret(first, failed) from None
        raise


def _raise_secret(screen: Screen | None, first: int) -> None:
    """Raise the SecretError of the chunk's first item the screen found a secret in."""
    failed = screen.verdict() if screen is not None else None
    if failed is not None:
        raise _secret(first, failed)


def _secret(first: int, failed: Failed) -> InputError:
    """The error _check_item raises for a chunk's item the screen found a secret in."""
    from ..format.secrets import SecretError  # its patterns: only when adding

    return SecretError(f"batch item {first + failed[0]}: {failed[1]}", hint=failed[2])


def _past(head: Head, line: bytes, digest: str, ts: str) -> None:
    """Move ``head`` past ``line`` (hash ``digest``, time ``ts``), appended at its end."""
    head.last_offset = head.offset
    head.offset += len(line) + 1
    head.size += 1
    head.hash = digest
    head.frontier.append(BLAKE3.leaf(line))
    head.ts = ts


def _is_unicode(text: str) -> bool:
    """False for strings holding lone surrogates (undecodable bytes from argv)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def rollback(fd: int, offset: int) -> None:
    """Cut the chain open at ``fd`` back to ``offset`` after a failed append (best effort)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, offset)
        os.fdatasync(fd)


class Ledger:
    """One data directory: read helpers and the locked write path."""

    def __init__(
        self,
        root: Path,
        *,
        passphrase: PassphraseSource | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.layout = Layout(root)
        self.config = Config.load(self.layout, reader=True)
        self.store = ContentStore(self.layout.content)
        self.passphrase = passphrase
        self.clock = clock
        self._signer: Signer | None = None
        self._lock_fd: int | None = None
        self._thread_lock = threading.RLock()
        self._head: Head | None = None  # the head this object saved last
        self._witness: Witness | None = None
        self._loose_checked = False  # the write path looked for blobs of the old layout

    def recover(self) -> None:
        """Do now what the next write would do first, under the lock (FORMAT.md 8.4).

        A batch whose journal is durable is rolled forward, a torn tail is
        moved to quarantine/, blobs of the layout before packs are moved into
        a pack (6.4). A reader never does any of this (verify and search write
        nothing); a writer that must see the chain as the next write will
        (curation's dedup against the chain) calls this first.
        """
        with self.locked():
            pass

    def _migrate_content(self) -> None:
        """Under the writer's lock: move loose blobs into a pack, once per Ledger."""
        from ..content.migrate import migrate_loose

        def order() -> Iterator[str]:
            for line in self.iter_lines():
                try:
                    content = orjson.loads(line).get("content")
                except (orjson.JSONDecodeError, AttributeError):
                    continue
                if isinstance(content, str) and HASH_RE.fullmatch(content):
                    yield content

        self._loose_checked = True
        if self.store.has_loose():
            migrate_loose(self.store, order())

    # -- creation -------------------------------------------------------

    @classmethod
    def init(
        cls,
        root: Path,
        *,
        name: str,
        key_mode: str = "raw",
        passphrase: PassphraseSource | None = None,
        clock: Clock = system_clock,
        signer: Signer | None = None,
    ) -> Ledger:
        """Create a data directory with its key, config and genesis entry.

        chain.jsonl, linked into place last under the lock with its genesis
        line already durable, is the commit point: it never exists half
        written and is never overwritten. A directory with config.json but
        no chain.jsonl (an interrupted init, or a lost chain) is refused
        rather than guessed at.
        """
        layout = Layout(root)
        if key_mode not in KEY_MODES:
            raise InputError(f"unknown key mode {key_mode!r}", hint="use raw, encrypted or env")
        if not name or len(name) > 200 or not _is_unicode(name):
            raise InputError("the agent name must be 1-200 characters of valid Unicode")
        exists = ChainStateError(
            f"a chain already exists in {root}", hint="use another --dir, or keep using this one"
        )
        if layout.chain.exists():
            raise exists
        if layout.config.exists():
            raise ChainStateError(
                f"{root} has config.json but no chain.jsonl: an interrupted init, or a lost chain",
                hint="restore chain.jsonl from a backup; if init was interrupted, "
                "remove config.json and run init again",
            )
        if signer is None:
            signer = load_signer(None, "env", None) if key_mode == "env" else Signer.generate()
        try:
            if not root.is_dir():
                root.mkdir(parents=True, mode=0o700)
                fsync_dir(root.parent)
            layout.content.mkdir(exist_ok=True)
            lock_fd = os.open(layout.lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise OperationalError(f"cannot create {root}: {exc.strerror}") from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            if layout.chain.exists():
                raise exists
            ts = format_ts(clock())
            obj: dict[str, Any] = {
                "v": FORMAT_VERSION,
                "seq": 0,
                "ts": ts,
                "type": "genesis",
                "tier": "committed",
                "source": "manual",
                "importance": 100,
                "content": None,
                "size": 0,
                "prev": None,
                "key": signer.key_id,
                "meta": {"name": name},
            }
            line = self_checked(obj, signer)
            chain_id = b3(line)
            store_signer(signer, key_file(root, key_mode), key_mode, passphrase)
            write_public_key_file(layout.public_key, signer.key_id)
            Config.new(name, key_mode, chain_id).save(layout)
            tmp = layout.root / "chain.jsonl.init"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                write_all(fd, line + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, layout.chain)  # fails if chain.jsonl exists
            except FileExistsError:
                raise exists from None
            finally:
                os.unlink(tmp)
            fsync_dir(root)
            head = Head(
                size=1,
                offset=len(line) + 1,
                last_offset=0,
                hash=chain_id,
                ts=ts,
                key=signer.key_id,
                chain_id=chain_id,
            )
            head.frontier.append(BLAKE3.leaf(line))
            save_head(layout, head)
        finally:
            os.close(lock_fd)
        ledger = cls(root, passphrase=passphrase, clock=clock)
        ledger._signer = signer
        return ledger

    # -- keys -----------------------------------------------------------

    def adopt_signer(self, signer: Signer) -> None:
        """Use ``signer`` from now on (after a rotation)."""
        self._signer = signer

    def signer(self) -> Signer:
        """The current signing key (loaded once, prompting if encrypted)."""
        if self._signer is None:
            mode = self.config.key_mode
            self._signer = load_signer(key_file(self.layout.root, mode), mode, self.passphrase)
        return self._signer

    # -- the lock -------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[tuple[int, Head]]:
        """Hold the writer lock; yield the chain's fd and its recovered head.

        flock excludes other processes (and other open file descriptions);
        the thread lock excludes other threads sharing this Ledger, which
        share its file descriptor and so would all "hold" the flock.
        """
        with self._thread_lock, self._flocked() as held:
            yield held

    @contextlib.contextmanager
    def _flocked(self) -> Iterator[tuple[int, Head]]:
        if self.config.missing:
            raise ChainStateError(
                f"{self.layout.config} is missing: this chain can be read and verified, "
                "not written",
                hint="restore config.json from a backup; nothing was written",
            )
        if self._lock_fd is None:
            try:
                self._lock_fd = os.open(self.layout.lock, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise OperationalError(f"cannot open {self.layout.lock}: {exc.strerror}") from None
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            try:
                fd = os.open(self.layout.chain, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                raise ChainStateError(
                    f"{self.layout.chain} is missing",
                    hint="restore it from a backup or an export",
                ) from None
            except OSError as exc:
                raise OperationalError(f"cannot open {self.layout.chain}: {exc.strerror}") from None
            try:
                roll_forward(self.layout, fd)
                head = recover(self.layout, fd, known=self._head)
                self._check_witness(head)
                self._check_verdict(head)
                if not self._loose_checked:
                    self._migrate_content()
                self._head = None  # until this write completes
                finish_rotation(self, head)
                before = os.fstat(fd)
                yield fd, head
                self._head = head
                self._note_append(head, before, os.fstat(fd))
            finally:
                self.store.end_write()
                os.close(fd)
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _note_append(self, head: Head, before: os.stat_result, after: os.stat_result) -> None:
        """Tell the verifier that this write only appended (FORMAT.md 13.5): the file grew
        to exactly the head's end, so no byte before ``before``'s length was written."""
        if head.chain_id is None or not before.st_size < after.st_size == head.offset:
            return
        path = appends_path(resolve_state_dir(), head.chain_id)
        record_append(path, identity(before), identity(after))

    def _check_witness(self, head: Head) -> None:
        """Refuse to extend a chain cut below, or rewritten at, the witnessed checkpoint.

        O(1): only the size, and the root when the sizes are equal; verify
        does the full consistency check.
        """
        if head.chain_id is None:
            return
        if self._witness is None:
            self._witness = Witness.in_state_dir(resolve_state_dir())
        seen = self._witness.get(head.chain_id)
        if seen is None:
            return
        cp = seen.checkpoint
        if cp.size > head.size:
            raise IntegrityError(
                f"chain has {head.size} entries; {cp.describe()} commits to {cp.size}: "
                "the chain was cut",
                reason="truncated",
                seq=head.size,
                hint="restore the chain from a backup or an export; nothing was written",
            )
        if cp.size == head.size and cp.root != head.root():
            raise IntegrityError(
                f"the chain's {head.size} entries do not have the root {cp.describe()} "
                "commits to: the chain was rewritten",
                reason="rewritten",
                seq=head.size - 1,
                hint="run `memory-chain verify`; nothing was written",
            )

    def _check_verdict(self, head: Head) -> None:
        """Refuse to extend a chain the last verify found broken (one stat).

        verify_ledger records a failure in the user's state folder and
        clears it when a verify passes again (chain/verify/incremental.py).
        """
        if head.chain_id is None:
            return
        failure = load_failure(failure_path(resolve_state_dir(), head.chain_id))
        if failure is not None:
            raise IntegrityError(
                f"the last verify of this chain failed at seq {failure.seq} "
                f"({failure.reason}): refusing to append to a broken chain",
                reason=failure.reason,
                seq=failure.seq,
                hint="run `memory-chain verify`; restore chain.jsonl and content/ from a "
                "backup or an export; nothing was written",
            )

    def close(self) -> None:
        """Release file descriptors (also done at garbage collection)."""
        self.store.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __del__(self) -> None:
        if hasattr(self, "store"):  # __init__ may have failed before setting it
            self.close()

    # -- adding ---------------------------------------------------------

    def _entry(self, head: Head, item: NewEntry, content_hash: str, ts: str) -> dict[str, Any]:
        importance = item.importance
        if importance is None:
            importance = default_importance(item.type, item.tier)
        return {
            "v": FORMAT_VERSION,
            "seq": head.size,
            "ts": ts,
            "type": item.type,
            "tier": item.tier,
            "source": item.source,
            "importance": importance,
            "content": content_hash,
            "size": len(item.content),
            "prev": head.hash,
            "key": head.key,
            "meta": item.meta,
        }

    def next_ts(self, head: Head) -> str:
        """Now, or the head's ts if the clock went backwards (ts never decreases)."""
        return max(format_ts(self.clock()), head.ts)

    def check_signer(self, signer: Signer, head: Head) -> Signer:
        """Return the signer for ``head``'s current key (under the lock).

        If another process rotated the key since ``signer`` was loaded, the
        config and key are loaded again once.
        """
        if signer.key_id != head.key:
            self.config = Config.load(self.layout)
            self._signer = None
            signer = self.signer()
        if signer.key_id != head.key:
            raise KeyAccessError(
                f"the signing key {signer.key_id} is not the chain's current key {head.key}",
                hint="use the key named by the last key rotation",
            )
        return signer

    def append_line(self, fd: int, head: Head, line: bytes, blob: str | None = None) -> Appended:
        """Append one signed line durably; advance the head.

        ``blob``, if given, is made durable first, so that no line on disk
        ever names a blob that a crash could lose. If the append fails, the
        chain is cut back to where it was (the command failed: nothing of
        it may stay).
        """
        if blob is not None:
            self._content(self.store.sync)
        try:
            write_all(fd, line + b"\n")
            os.fdatasync(fd)
        except OSError as exc:
            rollback(fd, head.offset)
            raise OperationalError(
                f"cannot append to {self.layout.chain}: {exc.strerror}"
            ) from None
        return self._advance(head, [line])[0]

    def _sign(
        self, shadow: Head, batch: list[NewEntry], hashes: list[str], ts: str, signer: Any
    ) -> Iterator[Appended]:
        """Each item's signed line and what add_batch returns of it, ``shadow`` moved past
        each as it is yielded."""
        for item, content_hash in zip(batch, hashes, strict=True):
            obj = self._entry(shadow, item, content_hash, ts)
            line = signed_line(obj, signer, canonical(item.meta))
            digest = b3(line)
            _past(shadow, line, digest, obj["ts"])
            yield Appended(obj["seq"], digest, obj["ts"], obj["content"], line)

    def _content(self, write: Callable[..., _T], *args: Any) -> _T:
        """Run a content store write; its OSError becomes an OperationalError."""
        try:
            return write(*args)
        except OSError as exc:
            raise OperationalError(
                f"cannot write the content to {self.layout.content}: {exc.strerror}"
            ) from None

    def _advance(self, head: Head, lines: Sequence[bytes]) -> list[Appended]:
        out = []
        for line in lines:
            obj = orjson.loads(line)
            digest = b3(line)
            _past(head, line, digest, obj["ts"])
            if obj["type"] == "key-rotation":
                head.key = obj["meta"]["new_key"]
            out.append(Appended(obj["seq"], digest, obj["ts"], obj["content"], line))
        save_head(self.layout, head)
        return out

    def add(self, item: NewEntry, *, allow_secret: bool = False) -> Appended:
        """Add one memory durably; return when it is on disk.

        Content or metadata that looks like a secret is refused (SecretError)
        unless ``allow_secret``: the chain cannot forget it.
        """
        item.check(self.config.max_content_bytes)
        check_secrets(item, allow=allow_secret)
        signer = self.signer()
        with self.locked() as (fd, head):
            signer = self.check_signer(signer, head)
            content_hash = self._content(self.store.put, item.content)
            obj = self._entry(head, item, content_hash, self.next_ts(head))
            return self.append_line(fd, head, self_checked(obj, signer), content_hash)

    def add_batch(self, items: Sequence[NewEntry], *, allow_secret: bool = False) -> list[Appended]:
        """Add many memories with one lock and one chain fsync; all or nothing."""
        if not items:
            raise InputError("the batch is empty")
        limit = self.config.max_content_bytes
        if allow_secret or len(items) < SCREEN_BESIDE:
            for i, item in enumerate(items, 1):
                _check_item(item, i, limit, allow_secret)
            checks = "none"
        else:
            # a long batch: every check but the secret screen now, before the lock; the
            # screen runs beside the signing (chain/store/screen.py), and nothing is
            # written before its verdict on every item
            for i, item in enumerate(items, 1):
                try:
                    _check_item(item, i, limit, True)
                except InputError:
                    for j, earlier in enumerate(items[: i - 1], 1):
                        _check_item(earlier, j, limit, False)  # an earlier item's secret
                    raise
            checks = "secrets"
        out: list[Appended] = []
        self._append_stream(items, allow_secret, len(items), out, checks=checks)
        return out

    def add_stream(
        self, items: Iterable[NewEntry], *, allow_secret: bool = False, chunk: int = STREAM_CHUNK
    ) -> Streamed:
        """add_batch for a batch of any length, in memory bounded by ``chunk`` items.

        All or nothing as add_batch is (FORMAT.md 8.2): the items are
        checked ``chunk`` at a time as they come, each chunk's blobs stored,
        its entries signed and their lines kept aside (a file beside the
        journal once they pass SPOOL_MEMORY bytes); the chain is written
        once every item has passed, through the journal. An item that fails
        leaves the chain as it was; blobs of the chunks before it stay in
        the packs as records no entry names, as after a crash.
        """
        return self._append_stream(items, allow_secret, chunk, None, checks="all")

    def _append_stream(
        self,
        items: Iterable[NewEntry],
        allow_secret: bool,
        chunk: int,
        out: list[Appended] | None,
        *,
        checks: str,
    ) -> Streamed:
        """Append ``items`` through the journal, all or nothing. ``checks``: which of
        _check_item's checks are still to be made here: "all", "secrets" (the screen
        only) or "none"."""
        limit = self.config.max_content_bytes
        signer = self.signer()
        with self.locked() as (fd, head):
            signer = self.check_signer(signer, head)
            ts = self.next_ts(head)
            shadow = Head(
                size=head.size,
                offset=head.offset,
                last_offset=head.last_offset,
                hash=head.hash,
                ts=head.ts,
                key=head.key,
                chain_id=head.chain_id,
                frontier=head.frontier.copy(),
            )
            spool = Spool(self.layout.spool)
            screen: Screen | None = None
            try:
                it = iter(items)
                while batch := list(itertools.islice(it, chunk)):
                    first = shadow.size - head.size + 1
                    screen = None
                    if checks != "none":
                        if not allow_secret and len(batch) >= SCREEN_BESIDE:
                            # a long batch: its secret screen runs beside (chain/store/screen.py)
                            from .screen import Screen

                            screen = Screen.fork(batch)
                        _check_chunk(batch, first, limit, allow_secret, screen, checks)
                    contents = [i.content for i in batch]
                    signed: Iterable[Appended]
                    if screen is not None:
                        # sign while the child screens; write nothing before its verdict
                        digests = [blake3(c).digest() for c in contents]
                        hashes = [HASH_PREFIX + d.hex() for d in digests]
                        signed = list(self._sign(shadow, batch, hashes, ts, signer))
                        _raise_secret(screen, first)
                        self._content(self.store.put_batch, contents, digests)
                    else:
                        hashes = self._content(self.store.put_batch, contents)
                        signed = self._sign(shadow, batch, hashes, ts, signer)
                    for appended in signed:
                        spool.write(appended.line + b"\n")
                        if out is not None:
                            out.append(appended)
                    # the next chunk is read without this one's held (memory flat in the batch)
                    del batch, contents, hashes, signed
                if shadow.size == head.size:
                    raise InputError("the batch is empty")
                self._content(self.store.sync)
                append_spool(self.layout, fd, head.offset, spool)
            finally:
                if screen is not None:
                    screen.close()
                spool.close()
            done = Streamed(head.size, shadow.size - head.size, head.offset, shadow.offset)
            for name in ("size", "offset", "last_offset", "hash", "ts", "frontier"):
                setattr(head, name, getattr(shadow, name))
            save_head(self.layout, head)
            return done

    # -- reading --------------------------------------------------------

    def iter_lines(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Raw lines of chain.jsonl, each with its newline (the last may lack it).

        Reads bytes ``start`` (a line start) to ``end``, by default up to the
        size the file had when opened, so a line a writer is appending
        meanwhile is never split into two pieces.
        """
        for lines, tail in self.line_chunks(start, end):
            for line in lines:
                yield line + b"\n"
            if tail is not None:
                yield tail

    def line_chunks(
        self, start: int = 0, end: int | None = None, advance: Callable[[int], None] | None = None
    ) -> Iterator[tuple[list[bytes], bytes | None]]:
        """iter_lines() a block at a time: (whole lines without their newline, torn tail or None).

        A block is the lines of about 1 MiB read; only the last chunk has a
        tail (a last line without its newline). verify.chunks() gives its
        lines in the same form, without handling each line in Python twice
        (verify reads a chain this way). ``advance`` is given the bytes of
        each block as it is read (a progress bar).
        """
        try:
            f = open(self.layout.chain, "rb")  # noqa: SIM115 (closed below)
        except FileNotFoundError:
            raise ChainStateError(f"{self.layout.chain} is missing") from None
        except OSError as exc:
            raise OperationalError(f"cannot read {self.layout.chain}: {exc.strerror}") from None
        with f:
            if end is None:
                end = os.fstat(f.fileno()).st_size
            remaining = end - start
            f.seek(start)
            rest = b""
            while remaining > 0:
                block = f.read(min(remaining, 1 << 20))
                if not block:
                    break
                remaining -= len(block)
                if advance is not None:
                    advance(len(block))
                lines = (rest + block).split(b"\n")
                rest = lines.pop()
                if lines:
                    yield lines, None
            if rest:
                yield [], rest

    def entries(self) -> Iterator[dict[str, Any]]:
        """Parsed entries in order (complete lines only; no verification).

        A line that is not a JSON object stops the reading with an
        IntegrityError that points at `verify`.
        """
        for n, raw in enumerate(self.iter_lines()):
            if not raw.endswith(b"\n"):
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                obj = None
            if not isinstance(obj, dict):
                raise IntegrityError(
                    f"line {n + 1} of chain.jsonl is not a JSON object",
                    seq=n,
                    reason="malformed",
                    hint="run `memory-chain verify` for the full report",
                )
            yield obj

    def entry(self, seq: int) -> dict[str, Any]:
        """The entry at ``seq`` (no verification)."""
        if seq < 0:
            raise InputError(f"seq must be >= 0, not {seq}")
        for obj in self.entries():
            if obj.get("seq") == seq:
                return obj
        raise InputError(f"no entry with seq {seq}", hint="`memory-chain log` lists the entries")

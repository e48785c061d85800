"""Incremental verify: resume from the verification cache only when that is sound.

verify_ledger saves, after a successful verify, the state it ended in and
the hash of the chain bytes it covered (chain/verify/incremental.py). The next
verify resumes from it when those bytes are unchanged, and reports from
which seq it checked (Report.verified_from). Anything else (an edited,
truncated or regrown chain, a damaged or foreign cache, a checkpoint the
cache never checked) must fall back to a full verify with the full verdict.

Blobs of entries verified before are vouched for by the content packs
being unchanged since they were hashed (chain/verify/packs.py): a blob
deleted, erased or altered after its entry was verified is found by the
next incremental verify, with the full verdict (tested below, and in the
property at the end).

Each test gets its own state folder (MEMORY_CHAIN_STATE_DIR); chains made
per hypothesis example use their own tempfile folders.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.blobs import alter_blob, delete_blob
from helpers.cli import Cli
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from memory_chain.chain.audit.checkpointing import checkpoint
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.content.store import ContentStore
from memory_chain.chain.format.canonical import b3, canonical
from memory_chain.chain.format.config import ENV_STATE_DIR
from memory_chain.chain.format.entry import signing_message
from memory_chain.chain.format.errors import MemoryChainError
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.log.checkpoint import make_checkpoint
from memory_chain.chain.log.checkpoint_store import save_checkpoint
from memory_chain.chain.log.merkle import BLAKE3, root_of
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify import lines as verify_module
from memory_chain.chain.verify.incremental import cache_path, load_verified
from memory_chain.chain.verify.lines import Report

OWNER_SEED = bytes([7]) * 32  # test-only
START_MICROS = 1_735_689_600_000_000


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test's witness and verification cache live in its own state folder."""
    path = tmp_path / "state"
    monkeypatch.setenv(ENV_STATE_DIR, str(path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return path


def make_chain(root: Path, entries: int, name: str = "inc") -> Ledger:
    clock = itertools.count(START_MICROS, 1_000_000).__next__
    ledger = Ledger.init(root, name=name, signer=Signer(OWNER_SEED), clock=clock)
    for i in range(entries - 1):
        ledger.add(NewEntry(f"entry {i}".encode(), tier="relationship"))
    return ledger


@pytest.fixture
def chain(tmp_path: Path) -> Ledger:
    """Genesis plus nine entries, verified once (so the cache covers all ten)."""
    ledger = make_chain(tmp_path / "chain", 10)
    report = verify_ledger(ledger)
    assert (True, 10, 0) == (report.ok, report.size, report.verified_from)
    return ledger


def fresh(ledger: Ledger) -> Ledger:
    """A new handle on the same directory, as a new process would open it."""
    return Ledger(ledger.layout.root)


def lines_of(ledger: Ledger) -> list[bytes]:
    return ledger.layout.chain.read_bytes().splitlines()


def write_lines(ledger: Ledger, lines: list[bytes]) -> None:
    ledger.layout.chain.write_bytes(b"".join(line + b"\n" for line in lines))


def verdict(report: Report) -> tuple[Any, ...]:
    """What must not depend on the cache: ok, size (if ok), root, and the failure."""
    f = report.failure
    return (
        report.ok,
        report.size if report.ok else None,
        report.root,
        None if f is None else (f.seq, f.step, f.reason),
    )


def the_cache(ledger: Ledger, state_dir: Path) -> Path:
    return cache_path(state_dir, ledger.config.chain_id or "")


@pytest.fixture
def count_signatures(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the Ed25519 signature checks verify makes (single process)."""
    calls = [0]
    real = verify_module.failed_signatures

    def counting(jobs: Sequence[tuple[bytes, bytes, bytes]]) -> list[int]:
        calls[0] += len(jobs)
        return real(jobs)

    real_with_key = verify_module.failed_with_key

    def counting_with_key(public: bytes, signed: Sequence[bytes]) -> bool:
        calls[0] += len(signed)
        return real_with_key(public, signed)

    monkeypatch.setattr(verify_module, "failed_signatures", counting)
    monkeypatch.setattr(verify_module, "failed_with_key", counting_with_key)
    return calls


# -- resuming ---------------------------------------------------------------------


def test_k_new_entries_checks_k(chain: Ledger, count_signatures: list[int]) -> None:
    """After 3 new entries, verify resumes at seq 10 and checks exactly 3 signatures;
    with nothing new it checks none; `incremental=False` checks all 13."""
    for i in range(3):
        chain.add(NewEntry(f"new {i}".encode()))
    report = verify_ledger(fresh(chain))
    assert (True, 13, 10, 3) == (report.ok, report.size, report.verified_from, count_signatures[0])
    again = verify_ledger(fresh(chain))
    assert (True, 13, 13, 3) == (again.ok, again.size, again.verified_from, count_signatures[0])
    full = verify_ledger(fresh(chain), incremental=False)
    assert (True, 13, 0, 16) == (full.ok, full.size, full.verified_from, count_signatures[0])
    assert report.root == again.root == full.root


def test_resumed_verify_catches_new_tampering(chain: Ledger) -> None:
    """An entry added after the cached prefix and then edited fails where it was edited."""
    chain.add(NewEntry(b"new"))
    lines = lines_of(chain)
    obj = orjson.loads(lines[10])
    obj["importance"] = 99
    lines[10] = canonical(obj)
    write_lines(chain, lines)
    report = verify_ledger(fresh(chain))
    assert (10, (10, 8, "bad-signature")) == (report.verified_from, verdict(report)[3])


def fields(out: dict[str, Any]) -> tuple[Any, ...]:
    return (out["ok"], out["entries"], out["verified_from"])


def test_cli_reports_what_it_checked(populated: Cli) -> None:
    """`verify` says what it checked (lines, signatures, content) and from which seq;
    `verify --full` checks all (verified_from 0) even with a usable cache."""
    populated.ok("verify")
    populated.ok("add", "one more")
    out = populated.ok("verify").out.splitlines()
    assert out[0].startswith("ok: 6 entries verified; head b3:")
    assert out[1] == (
        "checked: lines and signatures to seq 5; content present and hashed to seq 5 "
        "(from seq 5 in this run, earlier blobs in packs unchanged since)"
    )
    populated.ok("add", "one more again")
    assert (True, 7, 6) == fields(populated.ok("verify", "--json").json())
    populated.ok("add", "and another")
    full = populated.ok("verify", "--full", "--json").json()
    assert (True, 8, 0) == fields(full)
    assert (True, 8, 8) == fields(populated.ok("verify", "--json").json())


# -- falling back to a full verify --------------------------------------------------


def test_edited_old_line(chain: Ledger) -> None:
    """An edit inside the cached prefix: a full verify, failing at the edited entry."""
    lines = lines_of(chain)
    obj = orjson.loads(lines[3])
    obj["meta"] = {"edited": True}
    lines[3] = canonical(obj)
    write_lines(chain, lines)
    report = verify_ledger(fresh(chain))
    assert (0, (3, 8, "bad-signature")) == (report.verified_from, verdict(report)[3])


def test_same_length_edit(chain: Ledger) -> None:
    """A one-byte edit that keeps every offset (a digit of a signature) is still found."""
    data = bytearray(chain.layout.chain.read_bytes())
    at = data.index(b'"sig":"', len(lines_of(chain)[0]) + 1) + 7
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    chain.layout.chain.write_bytes(bytes(data))
    report = verify_ledger(fresh(chain))
    assert (0, (1, 8, "bad-signature")) == (report.verified_from, verdict(report)[3])


def test_truncated_and_regrown(chain: Ledger) -> None:
    """Cut to 6 entries and regrown to 12 by the key holder (head.json removed): the cached
    prefix no longer matches, so a full verify runs, and the regrown chain verifies."""
    write_lines(chain, lines_of(chain)[:6])
    chain.layout.head.unlink()
    regrow = fresh(chain)
    for i in range(6):
        regrow.add(NewEntry(f"regrown {i}".encode()))
    report = verify_ledger(fresh(chain))
    full = verify_ledger(fresh(chain), incremental=False)
    assert (True, 12, 0) == (report.ok, report.size, report.verified_from)
    assert verdict(full) == verdict(report)


def test_cut_back_to_the_cached_prefix(chain: Ledger) -> None:
    """Entries added after the cache, then cut off again (head.json kept): the resumed
    verify reports the truncation the cached head shows, like a full verify."""
    chain.add(NewEntry(b"will be cut"))
    write_lines(chain, lines_of(chain)[:10])
    report = verify_ledger(fresh(chain))
    full = verify_ledger(fresh(chain), incremental=False)
    assert (10, (10, 12, "truncated")) == (report.verified_from, verdict(report)[3])
    assert verdict(full) == verdict(report)


def test_replaced_cache_file(chain: Ledger, state_dir: Path, tmp_path: Path) -> None:
    """The cache replaced by the cache of a diverged copy of this chain (same chain id,
    other entries after seq 5): a full verify, with the right verdict for this chain."""
    copy_root = tmp_path / "copy"
    shutil.copytree(chain.layout.root, copy_root)
    copy = Ledger(copy_root)
    write_lines(copy, lines_of(copy)[:6])
    copy.layout.head.unlink()
    copy = Ledger(copy_root)
    for i in range(8):
        copy.add(NewEntry(f"the copy's own {i}".encode()))
    assert verify_ledger(copy, incremental=False).ok  # the cache is now the copy's
    report = verify_ledger(fresh(chain))
    assert (True, 10, 0) == (report.ok, report.size, report.verified_from)
    # ... and a tampering of this chain inside the copy's covered range is found.
    assert verify_ledger(Ledger(copy_root), incremental=False).ok
    alter_blob(chain.store, orjson.loads(lines_of(chain)[2])["content"], b"edited")
    report = verify_ledger(fresh(chain))
    assert (0, (2, 10, "content-mismatch")) == (report.verified_from, verdict(report)[3])


def test_cache_of_another_chain(chain: Ledger, state_dir: Path, tmp_path: Path) -> None:
    """Another chain's cache copied over this chain's: a full verify with this chain's verdict."""
    other = make_chain(tmp_path / "other", 14, name="other")
    assert verify_ledger(other).ok
    shutil.copyfile(the_cache(other, state_dir), the_cache(chain, state_dir))
    report = verify_ledger(fresh(chain))
    assert (True, 10, 0) == (report.ok, report.size, report.verified_from)
    assert report.chain_id == chain.config.chain_id


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    header, _, body = data.partition(b"\n")
    h = orjson.loads(header)
    if how == "garbage":
        path.write_bytes(b"\x00garbage" * 10)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "body-flipped":  # the digests file (13.1), one byte in place
        digests = path.with_suffix(".digests")
        raw = digests.read_bytes()
        with open(digests, "r+b") as f:
            f.write(bytes([raw[0] ^ 1]))
    elif how == "body-cut":
        digests = path.with_suffix(".digests")
        digests.write_bytes(digests.read_bytes()[:-5])
    elif how == "header-not-object":
        path.write_bytes(b"[1, 2]\n" + body)
    elif how == "frontier-short":
        h["frontier"] = h["frontier"][:-1]
        path.write_bytes(orjson.dumps(h) + b"\n" + body)
    elif how == "format":
        h["format"] = "memory-chain-verified/999"
        path.write_bytes(orjson.dumps(h) + b"\n" + body)
    elif how == "offset-beyond":
        h["offset"] = 10**9
        path.write_bytes(orjson.dumps(h) + b"\n" + body)
    elif how == "offset-shifted":
        h["offset"] -= 1
        path.write_bytes(orjson.dumps(h) + b"\n" + body)
    elif how == "no-newline":
        path.write_bytes(header)
    else:
        raise AssertionError(how)


DAMAGES = [
    "garbage",
    "empty",
    "body-flipped",
    "body-cut",
    "header-not-object",
    "frontier-short",
    "format",
    "offset-beyond",
    "offset-shifted",
    "no-newline",
]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_cache(how: str, chain: Ledger, state_dir: Path) -> None:
    """A damaged cache is ignored (it is a cache): a full verify with the full verdict, both
    for a good chain and for one with a bad entry; the next success rewrites the cache."""
    cache = the_cache(chain, state_dir)
    damage(cache, how)
    report = verify_ledger(fresh(chain))
    assert (True, 10, 0) == (report.ok, report.size, report.verified_from)
    loaded = load_verified(cache)
    assert loaded is not None and 10 == loaded.state.size
    damage(cache, how)
    lines = lines_of(chain)
    lines[4] = lines[4].replace(b'"tier":"relationship"', b'"tier":"ephemeral"')
    write_lines(chain, lines)
    bad = verify_ledger(fresh(chain))
    assert (0, (4, 8, "bad-signature")) == (bad.verified_from, verdict(bad)[3])


def test_full_ignores_the_cache(chain: Ledger, count_signatures: list[int]) -> None:
    """incremental=False (`verify --full`) re-checks every signature and every blob."""
    verify_ledger(fresh(chain), incremental=False)
    assert 10 == count_signatures[0]


# -- checkpoints below the cached size ------------------------------------------------


def checkpoint_of(ledger: Ledger, size: int, lines: list[bytes] | None = None) -> Any:
    lines = lines if lines is not None else lines_of(ledger)
    root = root_of(BLAKE3, [BLAKE3.leaf(line) for line in lines[:size]])
    return make_checkpoint(b3(lines[0]), size, root, Signer(OWNER_SEED))


def test_unchecked_checkpoint_below_the_cache(chain: Ledger, count_signatures: list[int]) -> None:
    """A checkpoint of size 5 stored after the cache was made (so never checked against):
    the next verify is a full one; once checked, verifies resume again."""
    save_checkpoint(chain.layout, checkpoint_of(chain, 5))
    report = verify_ledger(fresh(chain))
    assert (True, 10, 0, 10) == (report.ok, report.size, report.verified_from, count_signatures[0])
    again = verify_ledger(fresh(chain))
    assert (True, 10, 10, 10) == (again.ok, again.size, again.verified_from, count_signatures[0])


def test_unchecked_forked_checkpoint_below_the_cache(chain: Ledger) -> None:
    """A checkpoint of size 5 for another history (signed by the owner: an equivocation)
    stored after the cache was made: the full verify fails it as rewritten at seq 4."""
    other = lines_of(chain)
    other[4] = other[3]
    save_checkpoint(chain.layout, checkpoint_of(chain, 5, other))
    report = verify_ledger(fresh(chain))
    assert (0, (4, 13, "rewritten")) == (report.verified_from, verdict(report)[3])


def test_forked_checkpoint_at_the_cached_size(chain: Ledger) -> None:
    """A checkpoint at exactly the cached size with another root: not resumed, rewritten."""
    other = lines_of(chain)
    other[4] = other[3]
    save_checkpoint(chain.layout, checkpoint_of(chain, 10, other))
    report = verify_ledger(fresh(chain))
    assert (0, (9, 13, "rewritten")) == (report.verified_from, verdict(report)[3])


def test_checked_checkpoint_re_signed_by_another_key(chain: Ledger) -> None:
    """A checked checkpoint of size 5 replaced by the same size and root signed by another
    key: incremental and full verify must agree (full: checkpoint-signature at seq 4)."""
    good = checkpoint_of(chain, 5)
    save_checkpoint(chain.layout, good)
    assert verify_ledger(fresh(chain)).ok  # checked, and recorded in the cache
    forged = make_checkpoint(chain.config.chain_id or "", 5, good.root, Signer(bytes([9]) * 32))
    (chain.layout.checkpoints / "00000000000000000005.note").write_bytes(forged.text)
    full = verify_ledger(fresh(chain), incremental=False)
    assert (4, 13, "checkpoint-signature") == verdict(full)[3]
    assert verdict(full) == verdict(verify_ledger(fresh(chain)))


# -- blobs of entries verified before ---------------------------------------------------


@pytest.mark.parametrize("how", ["deleted", "edited"])
def test_blob_changed_after_it_was_verified(how: str, chain: Ledger) -> None:
    """A blob deleted or edited after its entry was verified is found by the next
    incremental verify, with the verdict of a full verify (was: only --full saw it)."""
    blob = orjson.loads(lines_of(chain)[3])["content"]
    if how == "deleted":
        delete_blob(chain.store, blob)
    else:
        alter_blob(chain.store, blob, b"edited after it was verified")
    report = verify_ledger(fresh(chain))
    expected = {"deleted": (3, 12, "missing-content"), "edited": (3, 10, "content-mismatch")}
    assert expected[how] == verdict(report)[3]
    assert verdict(report) == verdict(verify_ledger(fresh(chain), incremental=False))


def test_pack_deleted_after_verify(chain: Ledger) -> None:
    """Every pack file removed: the incremental verify fails at the first entry with content."""
    for pack in (chain.layout.content / "packs").glob("*.pack"):
        pack.unlink()
    report = verify_ledger(fresh(chain))
    assert (1, 12, "missing-content") == verdict(report)[3]


def test_pack_cut_after_verify(chain: Ledger) -> None:
    """A pack cut short: the entries whose records were cut off are missing."""
    (pack,) = (chain.layout.content / "packs").glob("*.pack")
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) - 10])
    assert (9, 12, "missing-content") == verdict(verify_ledger(fresh(chain)))[3]


@pytest.mark.parametrize("where", [0, 8, 9, 37, 40, 45, -9, -5, -1])
def test_flipped_pack_byte_after_verify(chain: Ledger, where: int) -> None:
    """One byte flipped anywhere in a pack (magic, a record's state, digest, length, bytes,
    trailing length) after a verify: the incremental verify fails as the full one does."""
    (pack,) = (chain.layout.content / "packs").glob("*.pack")
    data = bytearray(pack.read_bytes())
    data[where] ^= 0x01
    pack.write_bytes(bytes(data))
    report = verify_ledger(fresh(chain))
    assert not report.ok
    assert verdict(report) == verdict(verify_ledger(fresh(chain), incremental=False))


def test_redaction_after_verify_stays_incremental(chain: Ledger) -> None:
    """A redaction erases a record in place: the pack is read again, the erased blob is
    accounted for by the redaction entry, and only the new entry's line is verified."""
    redact(chain, 4, "test")
    report = verify_ledger(fresh(chain))
    assert (True, 11, 10) == (report.ok, report.size, report.verified_from)
    assert report.resumed


def test_unchanged_packs_are_not_read(chain: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    """A verify with nothing new reads no pack: their identity is unchanged."""
    from memory_chain.chain.verify import packs

    def refuse(*_args: object) -> None:
        raise AssertionError("a pack was read")

    monkeypatch.setattr(packs, "_hash", refuse)
    report = verify_ledger(fresh(chain))
    assert (True, 10, True) == (report.ok, report.verified_from, report.resumed)
    assert "content present and hashed to seq 9" in report.checked()


def test_blob_deleted_after_verify_cli(populated: Cli) -> None:
    """The same through the CLI: `verify` (no --full) exits 1 at the entry."""
    populated.ok("verify")
    shown = populated.ok("show", "3", "--json").json()
    delete_blob(ContentStore(populated.root / "content"), shown["content"])
    result = populated.run("verify")
    assert 1 == result.code
    assert result.err.startswith("FAILED at seq 3: blob ")
    assert "(step 12, missing-content)" in result.err


# -- the property: incremental verdict == full verdict -----------------------------------


@contextlib.contextmanager
def state_in(path: Path) -> Iterator[None]:
    old = os.environ.get(ENV_STATE_DIR)
    os.environ[ENV_STATE_DIR] = str(path)
    try:
        yield
    finally:
        if old is None:
            del os.environ[ENV_STATE_DIR]
        else:
            os.environ[ENV_STATE_DIR] = old


class World:
    """One chain, an incremental state folder and a separate one for full verifies."""

    def __init__(self, base: Path) -> None:
        self.root = base / "chain"
        self.inc = base / "inc-state"
        self.full = base / "full-state"
        self.n = itertools.count()
        self.blobs: dict[str, bytes] = {}  # every content added: hash -> bytes
        with state_in(self.inc):
            Ledger.init(self.root, name="prop", signer=Signer(OWNER_SEED)).close()

    def ledger(self) -> Ledger:
        return Ledger(self.root)

    @property
    def chain(self) -> Path:
        return self.root / "chain.jsonl"

    def lines(self) -> list[bytes]:
        return self.chain.read_bytes().split(b"\n")[:-1]

    def attempt(self, fn: Callable[[], Any]) -> None:
        """Writes to a tampered chain may be refused; that is fine here."""
        with state_in(self.inc), contextlib.suppress(MemoryChainError), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a torn tail moved to quarantine
            fn()

    def add(self) -> None:
        content = f"p {next(self.n)}".encode()
        self.blobs[b3(content)] = content
        self.attempt(lambda: self.ledger().add(NewEntry(content)))

    def full_verdict(self) -> tuple[Any, ...]:
        with state_in(self.full):
            return verdict(verify_ledger(self.ledger(), incremental=False))

    def compare(self) -> None:
        with state_in(self.inc):
            inc = verify_ledger(self.ledger())
        full = self.full_verdict()
        assert full == verdict(inc), (inc, full)
        event(f"verdict: {'ok' if full[3] is None else full[3][2]}")
        event(f"resumed: {inc.verified_from > 0}")


OPS = st.one_of(
    st.tuples(st.just("add"), st.integers(1, 3)),
    st.tuples(st.just("verify"), st.just(0)),
    st.tuples(st.just("checkpoint"), st.just(0)),
    st.tuples(st.just("edit"), st.integers(0, 1000)),
    st.tuples(st.just("truncate"), st.integers(1, 3)),
    st.tuples(st.just("truncate-keep-head"), st.integers(1, 3)),
    st.tuples(st.just("delete-blob"), st.integers(0, 1000)),
    st.tuples(st.just("edit-blob"), st.integers(0, 1000)),
    st.tuples(st.just("redact"), st.integers(0, 1000)),
    st.tuples(st.just("torn"), st.just(0)),
    st.tuples(st.just("rewrite"), st.integers(0, 1000)),
)


def rewritten(lines: list[bytes], i: int, arg: int) -> list[bytes]:
    """The key holder edits line i, then re-links and re-signs every line after it."""
    signer = Signer(OWNER_SEED)
    out = list(lines[:i])
    for n, line in enumerate(lines[i:]):
        obj = orjson.loads(line)
        if n == 0:
            obj["meta"] = {"rewritten": arg}
        if out:
            obj["prev"] = b3(out[-1])
        obj.pop("sig")
        obj["sig"] = signer.sign(signing_message(obj))
        out.append(canonical(obj))
    return out


def apply(world: World, op: str, arg: int) -> None:
    lines = world.lines()
    if op == "add":
        for _ in range(arg):
            world.add()
    elif op == "verify":
        world.compare()
    elif op == "checkpoint":
        world.attempt(lambda: checkpoint(world.ledger()))
    elif op == "edit" and lines:
        i = arg % len(lines)
        with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError):
            obj = orjson.loads(lines[i])
            obj["meta"] = {"tampered": arg}
            lines[i] = canonical(obj)
            world.chain.write_bytes(b"".join(line + b"\n" for line in lines))
    elif op.startswith("truncate") and len(lines) > 1:
        keep = max(1, len(lines) - arg)
        world.chain.write_bytes(b"".join(line + b"\n" for line in lines[:keep]))
        if op == "truncate":
            (world.root / "head.json").unlink(missing_ok=True)
    elif op in ("delete-blob", "edit-blob"):
        targets = []
        for line in lines:
            with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError):
                if orjson.loads(line)["content"] is not None:
                    targets.append(orjson.loads(line)["content"])
        if targets:
            store = world.ledger().store
            target = targets[arg % len(targets)]
            if op == "delete-blob":
                store.remove(target)
            elif store.get(target) is not None:
                alter_blob(store, target, b"edited")
    elif op == "redact" and len(lines) > 1:
        world.attempt(lambda: redact(world.ledger(), 1 + arg % (len(lines) - 1), "prop"))
    elif op == "rewrite" and len(lines) > 1:
        with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            new = rewritten(lines, 1 + arg % (len(lines) - 1), arg)
            world.chain.write_bytes(b"".join(line + b"\n" for line in new))
            (world.root / "head.json").unlink(missing_ok=True)
    elif op == "torn":
        with open(world.chain, "ab") as f:
            f.write(b'{"v":1,"seq":')


@settings(
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(OPS, min_size=1, max_size=12))
# A verified entry is redacted (its blob erased), then the redaction is cut off.
@example(ops=[("add", 1), ("verify", 0), ("redact", 0), ("truncate", 1)])
def test_incremental_equals_full(ops: list[tuple[str, int]]) -> None:
    """For random adds, verifies, checkpoints, redactions and tamperings (edited lines,
    truncations with or without head.json, re-signed rewrites, deleted or edited blobs of
    any entry, torn tails), the incremental verdict (ok, size, root,
    failure seq/step/reason) always equals the full verdict."""
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        for op, arg in ops:
            apply(world, op, arg)
        world.compare()

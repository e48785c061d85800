"""Content packs (specs/FORMAT.md 6, specs/adr/0001-content-packs.md).

Blobs live in append-only pack files, still named by BLAKE3 and checked on
read; redaction zeroes one record; a data directory of the release before
packs (tests/fixtures/release-0.1-datadir, written by that release's code)
is migrated on the first write (never by a reader), also when the migration is killed
midway.
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from blake3 import blake3
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.content.store import PACK_MAGIC, ContentStore, scan_pack
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.lifecycle.archive_export import export_archive
from memory_chain.chain.lifecycle.archive_import import import_archive
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry

RELEASE_0_1 = Path(__file__).resolve().parent / "fixtures" / "release-0.1-datadir"


def _b3(data: bytes) -> str:
    return "b3:" + blake3(data).hexdigest()


def _loose_files(content: Path) -> list[Path]:
    return sorted(p for p in content.glob("??/*") if p.is_file())


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.init(tmp_path / "chain", name="packs", signer=Signer(bytes(32)))


def test_a_record_is_laid_out_as_the_spec_says(ledger: Ledger) -> None:
    text = b"Use pnpm, not npm"
    ledger.add(NewEntry(text))
    pack = (ledger.layout.content / "packs" / "00000000.pack").read_bytes()
    n = struct.pack(">I", len(text))
    assert pack == PACK_MAGIC + b"L" + blake3(text).digest() + n + text + n
    hint = (ledger.layout.content / "packs" / "index" / blake3(text).hexdigest()[:2]).read_bytes()
    assert hint == blake3(text).digest() + struct.pack(">IQ", 0, len(PACK_MAGIC))


def test_equal_content_is_stored_once(ledger: Ledger) -> None:
    for _ in range(3):
        ledger.add(NewEntry(b"said three times"))
    ledger.add_batch([NewEntry(b"said three times"), NewEntry(b"new"), NewEntry(b"new")])
    records = list(ledger.store.records())
    assert sorted(r.size for r in records) == [3, 16]
    assert ledger.store.count() == (2, 19)


def test_redaction_erases_the_bytes_and_keeps_the_chain_valid(ledger: Ledger) -> None:
    secret_ish = b"the office door code changed on Monday"
    done = ledger.add(NewEntry(secret_ish))
    ledger.add(NewEntry(b"something else"))
    result = redact(ledger, done.seq, "no longer true")
    assert result.blob_removed
    pack = (ledger.layout.content / "packs" / "00000000.pack").read_bytes()
    assert secret_ish not in pack
    assert ledger.store.get(_b3(secret_ish)) is None
    assert ledger.store.get(_b3(b"something else")) == b"something else"
    assert verify_ledger(ledger, incremental=False).ok
    # The same words added again get a fresh, live record.
    again = ledger.add(NewEntry(secret_ish))
    assert ledger.store.get(again.content or "") == secret_ish
    assert verify_ledger(ledger, incremental=False).ok


def test_hints_are_only_hints(ledger: Ledger) -> None:
    """Lost or lying hints never lose a blob nor return another one."""
    texts = [f"memory number {i}".encode() for i in range(40)]
    ledger.add_batch([NewEntry(t) for t in texts])
    hints = ledger.layout.content / "packs" / "index"
    shutil.rmtree(hints)  # a crash can lose them: they are never fsynced
    store = ContentStore(ledger.layout.content)
    assert [store.get(_b3(t)) for t in reversed(texts)] == list(reversed(texts))
    assert len(list(hints.iterdir())) > 0  # the rescan wrote them back
    # A hint for text 0 that points at text 1's record is ignored.
    first = blake3(texts[0]).digest()
    records = {r.digest: r for r in store.records()}
    lie = first + struct.pack(">IQ", 0, records[blake3(texts[1]).digest()].offset)
    (hints / f"{first[0]:02x}").write_bytes(lie)
    assert ContentStore(ledger.layout.content).get(_b3(texts[0])) == texts[0]
    assert verify_ledger(Ledger(ledger.layout.root), incremental=False).ok


def _verdict(root: Path) -> tuple[bool, str | None, int | None]:
    report = verify_ledger(Ledger(root), incremental=False)
    f = report.failure
    return report.ok, f.reason if f else None, f.seq if f else None


@pytest.mark.parametrize("hints", ["kept", "deleted"])
def test_a_sound_copy_wins_over_an_altered_one(ledger: Ledger, hints: str) -> None:
    """FORMAT.md 6.1 (issue 22): with two copies of a record, the first in pack order altered
    and the second sound, the sound one is read, whatever the hints say (the code took the
    first live copy in pack order)."""
    ledger.add(NewEntry(b"read first: the next read starts after it"))
    ledger.add(NewEntry(b"one memory, stored twice"))
    store = ledger.store
    digest = blake3(b"one memory, stored twice").digest()
    store.put_many([(digest, b"one memory, stored twice")])  # a second copy, after the first
    store.sync()
    store.end_write()
    pack = ledger.layout.content / "packs" / "00000000.pack"
    data = bytearray(pack.read_bytes())
    first = data.find(b"one memory")
    data[first] ^= 0x20  # alter the first copy's bytes
    pack.write_bytes(bytes(data))
    if hints == "deleted":
        shutil.rmtree(ledger.layout.content / "packs" / "index")
    assert (True, None, None) == _verdict(ledger.layout.root)
    fresh = ContentStore(ledger.layout.content)
    assert fresh.get(_b3(b"one memory, stored twice")) == b"one memory, stored twice"


@pytest.mark.parametrize("hints", ["kept", "deleted"])
def test_an_altered_record_is_found_with_or_without_hints(ledger: Ledger, hints: str) -> None:
    """FORMAT.md 6.2: deleting the hints changes no verdict; an altered record reads as
    content-mismatch either way (without hints the rescan skipped it: missing-content)."""
    ledger.add(NewEntry(b"altered in place"))
    pack = ledger.layout.content / "packs" / "00000000.pack"
    data = bytearray(pack.read_bytes())
    data[data.find(b"altered")] ^= 0x01
    pack.write_bytes(bytes(data))
    if hints == "deleted":
        shutil.rmtree(ledger.layout.content / "packs" / "index")
    assert (False, "content-mismatch", 1) == _verdict(ledger.layout.root)


@pytest.mark.parametrize("hints", ["kept", "deleted"])
def test_a_pack_with_a_damaged_magic_holds_nothing(ledger: Ledger, hints: str) -> None:
    """FORMAT.md 6.1 (issue 22): a file that does not start with MCPACK1\\n is not a pack; its
    records are absent through the hints as by a scan (the hints used to read them), and the
    next write starts a new pack."""
    ledger.add(NewEntry(b"behind a damaged magic"))
    pack = ledger.layout.content / "packs" / "00000000.pack"
    data = bytearray(pack.read_bytes())
    data[3] ^= 0x01
    pack.write_bytes(bytes(data))
    if hints == "deleted":
        shutil.rmtree(ledger.layout.content / "packs" / "index")
    assert (False, "missing-content", 1) == _verdict(ledger.layout.root)
    assert ContentStore(ledger.layout.content).get(_b3(b"behind a damaged magic")) is None
    writer = Ledger(ledger.layout.root)
    writer.store.put(b"a new record")
    writer.store.sync()
    writer.store.end_write()
    assert (ledger.layout.content / "packs" / "00000001.pack").exists()


def test_a_torn_pack_tail_is_never_appended_to(ledger: Ledger) -> None:
    ledger.add(NewEntry(b"before the crash"))
    pack = ledger.layout.content / "packs" / "00000000.pack"
    with open(pack, "ab") as f:
        f.write(b"L" + bytes(20))  # a record cut short by a crash
    torn = pack.read_bytes()
    fresh = Ledger(ledger.layout.root)
    fresh.add(NewEntry(b"after the crash"))
    assert pack.read_bytes() == torn  # nothing moved, nothing cut
    assert (ledger.layout.content / "packs" / "00000001.pack").exists()
    assert fresh.store.get(_b3(b"before the crash")) == b"before the crash"
    assert fresh.store.get(_b3(b"after the crash")) == b"after the crash"
    assert verify_ledger(fresh, incremental=False).ok


@settings(max_examples=60, deadline=None)
@given(
    blobs=st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=12),
    junk=st.binary(max_size=40),
    at=st.integers(0, 11),
)
def test_a_scan_finds_every_record_around_junk(blobs: list[bytes], junk: bytes, at: int) -> None:
    """Junk between records (a torn batch after a power loss) hides no sound record."""
    parts = [PACK_MAGIC]
    for i, data in enumerate(blobs):
        if i == at % len(blobs):
            parts.append(junk)
        n = struct.pack(">I", len(data))
        parts.append(b"L" + blake3(data).digest() + n + data + n)
    found = [r.digest for r in scan_pack(b"".join(parts)) if r.live]
    expected = [blake3(d).digest() for d in blobs]
    # Junk may itself parse as a record only if it hashes: then it is a real record.
    assert [d for d in found if d in expected] == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=2000), min_size=1, max_size=20))
def test_put_get_round_trip(tmp_path_factory: pytest.TempPathFactory, blobs: list[bytes]) -> None:
    root = tmp_path_factory.mktemp("store")
    store = ContentStore(root)
    names = store.put_batch(blobs[: len(blobs) // 2])
    names += [store.put(b) for b in blobs[len(blobs) // 2 :]]
    store.sync()
    store.close()
    again = ContentStore(root)
    assert [again.get(h) for h in names] == blobs
    assert again.count() == (len(set(blobs)), sum(len(b) for b in set(blobs)))


# -- migration from the release before packs --------------------------------------


def _copy_release(tmp_path: Path) -> Path:
    root = tmp_path / "old"
    shutil.copytree(RELEASE_0_1, root)
    # git keeps no 0600: restore the mode the release gave its key file.
    (root / "agent.key").chmod(0o600)
    return root


def test_the_fixture_is_the_old_layout() -> None:
    """Control: the fixture holds loose blobs and no pack, or the migration tests prove nothing."""
    content = RELEASE_0_1 / "content"
    assert len(_loose_files(content)) == 9 and not (content / "packs").exists()  # 8 + a .tmp-


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder)."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def test_a_reader_never_migrates(tmp_path: Path) -> None:
    """Issue 22 ("a reader writes"): verify, log and search of a release-0.1 directory read
    its loose blobs where they are and change no byte of it (no lock, no head.json)."""
    root = _copy_release(tmp_path)
    before = _tree(root)
    report = verify_ledger(Ledger(root), incremental=False)
    assert report.ok and report.size == 14
    assert not (root / "content" / "packs").exists()
    assert _tree(root) == before


def test_a_release_0_1_directory_is_migrated_on_first_write(tmp_path: Path) -> None:
    root = _copy_release(tmp_path)
    chain = (root / "chain.jsonl").read_bytes()
    blobs = {f"b3:{p.parent.name}{p.name}": p.read_bytes() for p in _loose_files(root / "content")}
    ledger = Ledger(root)
    ledger.recover()
    assert (root / "content" / "packs" / "00000000.pack").exists()
    assert [p for p in (root / "content").iterdir() if p.name != "packs"] == []
    assert (root / "chain.jsonl").read_bytes() == chain
    for h, data in blobs.items():
        if h != "b3:" + blake3(data).hexdigest():
            continue  # the temp file of an interrupted write is not a blob
        assert ledger.store.get(h) == data
    report = verify_ledger(ledger, incremental=False)
    assert report.ok and report.size == 14
    # The migrated directory takes new entries and redactions as any other.
    ledger.add(NewEntry(b"written by this release"))
    shared = [e for e in ledger.entries() if e.get("content") == _b3(b"same words twice")]
    done = redact(ledger, shared[1]["seq"], "the last holder")
    assert done.blob_removed and ledger.store.get(_b3(b"same words twice")) is None
    assert verify_ledger(Ledger(root), incremental=False).ok


def test_migration_leaves_an_altered_blob_for_verify_to_report(tmp_path: Path) -> None:
    root = _copy_release(tmp_path)
    target = next(e for e in map(_entry, (root / "chain.jsonl").read_bytes().splitlines()) if e)
    path = root / "content" / target[3:5] / target[5:]
    path.write_bytes(b"edited before the upgrade")
    report = verify_ledger(Ledger(root), incremental=False)
    assert path.exists()  # not moved into a pack
    assert report.failure is not None and report.failure.reason == "content-mismatch"


def _entry(line: bytes) -> str | None:
    import orjson

    content = orjson.loads(line).get("content")
    return content if isinstance(content, str) else None


_MIGRATE = """
import sys
from pathlib import Path
from memory_chain.chain.store.ledger import Ledger
print("ready", flush=True)
Ledger(Path(sys.argv[1])).recover()
print("done", flush=True)
"""


def _many_loose_blobs(root: Path, n: int) -> list[bytes]:
    texts = [f"loose memory {i} ".encode() * 20 for i in range(n)]
    ledger = Ledger.init(root, name="many", signer=Signer(bytes(32)))
    ledger.add_batch([NewEntry(t) for t in texts])
    ledger.close()
    # Turn the directory back into the old layout: one file per blob, no pack.
    store = ContentStore(root / "content")
    for t in texts:
        h = blake3(t).hexdigest()
        (root / "content" / h[:2]).mkdir(exist_ok=True)
        (root / "content" / h[:2] / h[2:]).write_bytes(t)
    store.close()
    shutil.rmtree(root / "content" / "packs")
    return texts


@pytest.mark.slow
def test_a_killed_migration_loses_no_blob(tmp_path: Path) -> None:
    """kill -9 at random points of a migration: every reopen reads every blob and verifies."""
    template = tmp_path / "template"
    texts = _many_loose_blobs(template, 3000)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    delays = [0.0, 0.02, 0.05, 0.08, 0.12, 0.18, 0.25, 0.35]
    killed = 0
    for i, delay in enumerate(delays):
        root = tmp_path / f"trial{i}"
        shutil.copytree(template, root)
        proc = subprocess.Popen(
            [sys.executable, "-c", _MIGRATE, str(root)], stdout=subprocess.PIPE, env=env
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        out = proc.communicate(timeout=60)[0]
        killed += b"done" not in out
        ledger = Ledger(root)
        ledger.recover()  # finishes the migration
        assert _loose_files(root / "content") == []
        assert all(ledger.store.get(_b3(t)) == t for t in texts)
        assert verify_ledger(ledger, incremental=False).ok
    assert killed >= 2, "no kill landed inside a migration: the trial proves nothing"


def test_export_and_import_carry_content_into_packs(ledger: Ledger, tmp_path: Path) -> None:
    for i in range(5):
        ledger.add(NewEntry(f"exported memory {i}".encode()))
    archive = tmp_path / "out.tar.gz"
    export_archive(ledger, archive)
    dest = tmp_path / "imported"
    import_archive(archive, dest)
    assert (dest / "content" / "packs" / "00000000.pack").exists()
    assert _loose_files(dest / "content") == []
    imported = Ledger(dest)
    assert [imported.store.get(_b3(f"exported memory {i}".encode())) for i in range(5)] == [
        f"exported memory {i}".encode() for i in range(5)
    ]
    assert verify_ledger(imported, incremental=False).ok

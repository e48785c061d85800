"""Export archives: `export`, `verify --bundle`, `import`, with real files.

Named fixtures of issue 4: a tampered export (a line edited, a blob swapped,
a checkpoint edited, a manifest that does not match) and an export with a
missing blob (allowed only if the entry was redacted). Import refuses each
invalid archive with the first reason and creates nothing; hostile tar
members (path traversal, links) are refused.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from helpers.blobs import alter_blob
from helpers.cli import SCRIPT, Cli, assert_rejected

from memory_chain.chain.audit.checkpointing import checkpoint
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.errors import (
    ChainStateError,
    InputError,
    IntegrityError,
    KeyAccessError,
)
from memory_chain.chain.lifecycle.archive import ARCHIVE_FORMAT, Limits
from memory_chain.chain.lifecycle.archive_check import verify_archive
from memory_chain.chain.lifecycle.archive_export import export_archive
from memory_chain.chain.lifecycle.archive_import import import_archive
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.lifecycle.rotate import rotate
from memory_chain.chain.store.ledger import Ledger, NewEntry

Members = list[tuple[str, bytes]]


# -- helpers ------------------------------------------------------------------


def read_members(path: Path) -> Members:
    with tarfile.open(path, "r:*") as tf:
        out = []
        for m in tf.getmembers():
            f = tf.extractfile(m)
            out.append((m.name, f.read() if f is not None else b""))
        return out


def fix_manifest(members: Members) -> Members:
    """Recompute the manifest's digests and blob totals (what a careful forger does)."""
    manifest = json.loads(dict(members)["manifest.json"])
    listed = {}
    count = total = 0
    for name, data in members:
        if name.startswith("content/"):
            count += 1
            total += len(data)
        elif name != "manifest.json":
            listed[name] = {"size": len(data), "b3": b3(data)}
    manifest["members"] = listed
    manifest["blobs"] = {"count": count, "bytes": total}
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    return [(n, data if n == "manifest.json" else d) for n, d in members]


def write_members(path: Path, members: Members, *, fix: bool = True) -> Path:
    if fix:
        members = fix_manifest(members)
    with tarfile.open(path, "w") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def tampered(src: Path, dst: Path, edit: Callable[[Members], Members], fix: bool = True) -> Path:
    return write_members(dst, edit(read_members(src)), fix=fix)


def chain_lines(members: Members) -> list[bytes]:
    return dict(members)["chain.jsonl"].splitlines(keepends=True)


def with_chain(members: Members, lines: list[bytes]) -> Members:
    return [(n, b"".join(lines) if n == "chain.jsonl" else d) for n, d in members]


def failure_of(path: Path, **pins: str) -> tuple[int, str]:
    report = verify_archive(path, **pins)
    assert not report.ok
    assert report.failure is not None
    return report.failure.seq, report.failure.reason


def assert_import_refused(path: Path, tmp_path: Path, reason: str) -> None:
    dest = tmp_path / "imported"
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(IntegrityError) as exc:
        import_archive(path, dest)
    assert exc.value.reason == reason
    assert not dest.exists()
    assert before == sorted(p.name for p in tmp_path.iterdir())  # no temp dir left


def blob_name(content_hash: str) -> str:
    return f"content/{content_hash[3:5]}/{content_hash[5:]}"


# -- fixtures -----------------------------------------------------------------


@pytest.fixture
def rich(ledger: Ledger) -> Ledger:
    """Seq 1-9 memories (1 committed), checkpoint at 10, seq 10 redacts 3,
    seq 11 rotates the key, seq 12-15 memories, checkpoint at 16."""
    for i in range(1, 10):
        tier = "committed" if i == 1 else "relationship"
        ledger.add(NewEntry(content=f"memory number {i}".encode(), tier=tier))
    checkpoint(ledger)
    redact(ledger, 3, "a secret slipped in")
    rotate(ledger)
    for i in range(12, 16):
        ledger.add(NewEntry(content=f"memory number {i}".encode()))
    checkpoint(ledger)
    return ledger


@pytest.fixture
def full(rich: Ledger, tmp_path: Path) -> Path:
    path = tmp_path / "full.tar"
    export_archive(rich, path)
    return path


# -- whole exports --------------------------------------------------------------


def test_whole_export_verifies_and_imports(rich: Ledger, full: Path, tmp_path: Path) -> None:
    report = verify_archive(full, chain_id=rich.config.chain_id)
    assert report.ok, report.failure
    assert (report.size, report.first, report.last) == (16, 0, 15)
    assert report.complete and report.content_checked
    assert report.checkpoints == 2
    names = [n for n, _ in read_members(full)]
    assert names[0] == "manifest.json" and names[-1] == "chain.jsonl"
    # seq 3 was redacted: its blob is not carried, the others are.
    assert report.blobs == 12
    assert blob_name(rich.entry(3)["content"]) not in names

    dest = tmp_path / "restored"
    imported = import_archive(full, dest)
    assert imported.head == report.head
    assert (dest / "chain.jsonl").read_bytes() == rich.layout.chain.read_bytes()
    config = json.loads((dest / "config.json").read_text())
    assert config["key_mode"] == "none" and config["chain_id"] == rich.config.chain_id
    assert config["name"] == "test-agent"
    assert (dest / "agent.pub").read_text().strip() == report.key
    assert sorted(p.name for p in (dest / "checkpoints").iterdir()) == sorted(
        p.name for p in rich.layout.checkpoints.iterdir()
    )
    assert not list(dest.glob("agent.key*"))


def test_imported_chain_is_read_only(full: Path, tmp_path: Path) -> None:
    dest = tmp_path / "restored"
    import_archive(full, dest)
    ledger = Ledger(dest)
    with pytest.raises(KeyAccessError) as exc:
        ledger.add(NewEntry(content=b"one more"))
    assert "imported without a secret key" in exc.value.message
    assert exc.value.hint is not None and "agent.key" in exc.value.hint
    assert "key_mode" in exc.value.hint


def test_export_is_deterministic_and_gzip_works(rich: Ledger, full: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.tar"
    export_archive(rich, again)
    assert again.read_bytes() == full.read_bytes()
    gz = tmp_path / "full.tar.gz"
    export_archive(rich, gz)
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    assert verify_archive(gz).ok
    assert import_archive(gz, tmp_path / "from-gz").ok


def test_export_never_overwrites(rich: Ledger, full: Path) -> None:
    before = full.read_bytes()
    with pytest.raises(InputError):
        export_archive(rich, full)
    assert full.read_bytes() == before


def test_export_refuses_a_chain_that_does_not_verify(rich: Ledger, tmp_path: Path) -> None:
    alter_blob(rich.store, rich.entry(5)["content"], b"not the memory")
    path = tmp_path / "bad.tar"
    with pytest.raises(IntegrityError) as exc:
        export_archive(rich, path)
    assert (exc.value.seq, exc.value.reason) == (5, "content-mismatch")
    assert not path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain", "home"]


def test_no_content_export(rich: Ledger, tmp_path: Path) -> None:
    path = tmp_path / "bare.tar"
    summary = export_archive(rich, path, content=False)
    assert summary.blobs == 0
    assert not any(n.startswith("content/") for n, _ in read_members(path))
    report = verify_archive(path)
    assert report.ok and not report.content_checked
    with pytest.raises(InputError, match="no content"):
        import_archive(path, tmp_path / "restored")
    assert not (tmp_path / "restored").exists()
    # A blob slipped into a --no-content export is refused.
    blob = rich.store.get(rich.entry(5)["content"])
    assert blob is not None
    extra = tampered(
        path, tmp_path / "extra.tar", lambda ms: [*ms[:-1], (blob_name(b3(blob)), blob), ms[-1]]
    )
    assert failure_of(extra) == (0, "unexpected-member")


def test_pins(rich: Ledger, full: Path) -> None:
    genesis_key = rich.entry(0)["key"]
    current = rich.entry(11)["meta"]["new_key"]
    assert verify_archive(full, trusted_key=genesis_key).ok
    assert verify_archive(full, trusted_key=current).ok
    other = "ed25519:" + "3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29"
    assert failure_of(full, trusted_key=other) == (0, "untrusted-key")
    assert failure_of(full, chain_id="b3:" + "0" * 64) == (0, "chain-id-mismatch")


# -- partial exports -----------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "last"),
    [(0, 3), (2, 5), (4, 12), (11, 11), (12, None), (1, 15), (10, 14)],
)
def test_partial_exports_verify(rich: Ledger, tmp_path: Path, first: int, last: int | None) -> None:
    path = tmp_path / f"part-{first}-{last}.tar"
    summary = export_archive(rich, path, from_seq=first, to_seq=last)
    assert not summary.complete
    report = verify_archive(path, chain_id=rich.config.chain_id)
    assert report.ok, report.failure
    end = 15 if last is None else last
    assert (report.first, report.last, report.size) == (first, end, end + 1)
    names = [n for n, _ in read_members(path)]
    assert "proof.json" in names and "checkpoint" in names
    assert not any(n.startswith("checkpoints/") for n in names)
    # A partial chain cannot be a data directory.
    with pytest.raises(InputError, match="partial export"):
        import_archive(path, tmp_path / "restored")
    assert not (tmp_path / "restored").exists()


def test_partial_export_makes_a_checkpoint_when_none_covers(ledger: Ledger, tmp_path: Path) -> None:
    for i in range(5):
        ledger.add(NewEntry(content=f"m{i}".encode()))
    path = tmp_path / "part.tar"
    export_archive(ledger, path, from_seq=2, to_seq=4)
    assert verify_archive(path).ok
    assert (ledger.layout.checkpoints / f"{6:020d}.note").exists()


def test_partial_export_of_a_read_only_chain_needs_a_covering_checkpoint(
    rich: Ledger, full: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "restored"
    import_archive(full, dest)
    imported = Ledger(dest)
    path = tmp_path / "part.tar"
    export_archive(imported, path, from_seq=3, to_seq=9)  # the checkpoint at 16 covers it
    assert verify_archive(path).ok


def test_partial_export_with_the_redaction_outside_the_range(rich: Ledger, tmp_path: Path) -> None:
    """Seq 3's blob is gone; the redaction (seq 10) is proven by the context."""
    path = tmp_path / "part.tar"
    export_archive(rich, path, from_seq=2, to_seq=5)
    assert verify_archive(path).ok
    proof = json.loads(dict(read_members(path))["proof.json"])
    seqs = [json.loads(item["line"])["seq"] for item in proof["context"]]
    assert seqs == [0, 10, 11]  # genesis, the redaction, the rotation

    def drop_redaction(ms: Members) -> Members:
        p = json.loads(dict(ms)["proof.json"])
        p["context"] = [i for i in p["context"] if json.loads(i["line"])["seq"] != 10]
        data = json.dumps(p).encode()
        return [(n, data if n == "proof.json" else d) for n, d in ms]

    bad = tampered(path, tmp_path / "bad.tar", drop_redaction)
    assert failure_of(bad) == (3, "missing-content")
    # A blob of an unredacted entry left out of a partial export.
    name4 = blob_name(rich.entry(4)["content"])
    bad = tampered(path, tmp_path / "bad4.tar", lambda ms: [m for m in ms if m[0] != name4])
    assert failure_of(bad) == (4, "missing-content")


def test_partial_export_pins(rich: Ledger, tmp_path: Path) -> None:
    path = tmp_path / "part.tar"
    export_archive(rich, path, from_seq=5, to_seq=13)
    assert verify_archive(path, trusted_key=rich.entry(11)["meta"]["new_key"]).ok
    assert verify_archive(path, trusted_key=rich.entry(0)["key"]).ok
    other = "ed25519:" + "3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29"
    assert failure_of(path, trusted_key=other) == (0, "untrusted-key")
    assert failure_of(path, chain_id="b3:" + "1" * 64) == (0, "chain-id-mismatch")


def test_partial_export_line_edited_or_proof_forged(rich: Ledger, tmp_path: Path) -> None:
    path = tmp_path / "part.tar"
    export_archive(rich, path, from_seq=4, to_seq=8)

    def swap_last(ms: Members) -> Members:
        lines = chain_lines(ms)
        return with_chain(ms, [*lines[:-1], rich_line(rich, 9)])

    # A valid line of the same chain, but not at seq 8.
    assert failure_of(tampered(path, tmp_path / "a.tar", swap_last))[1] == "seq-gap"

    def cut_first(ms: Members) -> Members:
        return with_chain(ms, chain_lines(ms)[1:])

    assert failure_of(tampered(path, tmp_path / "b.tar", cut_first)) == (4, "seq-gap")

    def bad_last_proof(ms: Members) -> Members:
        p = json.loads(dict(ms)["proof.json"])
        p["last"][0] = "00" * 32
        data = json.dumps(p).encode()
        return [(n, data if n == "proof.json" else d) for n, d in ms]

    assert failure_of(tampered(path, tmp_path / "c.tar", bad_last_proof)) == (8, "bad-inclusion")


def rich_line(ledger: Ledger, seq: int) -> bytes:
    return ledger.layout.chain.read_bytes().splitlines(keepends=True)[seq]


# -- the named fixtures: a tampered export ---------------------------------------


def test_tampered_export_line_edited(full: Path, tmp_path: Path) -> None:
    def edit(ms: Members) -> Members:
        lines = chain_lines(ms)
        lines[6] = lines[6].replace(b'"importance":50', b'"importance":99')
        return with_chain(ms, lines)

    for fix in (True, False):  # with or without a manifest made to match
        bad = tampered(full, tmp_path / f"line-{fix}.tar", edit, fix=fix)
        assert failure_of(bad) == (6, "bad-signature")
        assert_import_refused(bad, tmp_path, "bad-signature")


def test_tampered_export_blob_swapped(rich: Ledger, full: Path, tmp_path: Path) -> None:
    name5 = blob_name(rich.entry(5)["content"])
    other = rich.store.get(rich.entry(6)["content"])

    def swap(ms: Members) -> Members:
        return [(n, other if n == name5 else d) for n, d in ms]

    bad = tampered(full, tmp_path / "blob.tar", swap)
    assert failure_of(bad) == (5, "content-mismatch")
    assert_import_refused(bad, tmp_path, "content-mismatch")


def test_tampered_export_checkpoint_edited(full: Path, tmp_path: Path) -> None:
    def resize(ms: Members) -> Members:
        out = []
        for n, d in ms:
            if n == "checkpoints/00000000000000000010.note":
                d = d.replace(b"\n10\n", b"\n9\n")
                n = "checkpoints/00000000000000000009.note"
            out.append((n, d))
        return out

    bad = tampered(full, tmp_path / "cp.tar", resize)
    seq, reason = failure_of(bad)
    assert (seq, reason) == (8, "checkpoint-signature")
    assert_import_refused(bad, tmp_path, "checkpoint-signature")

    def garble(ms: Members) -> Members:
        return [(n, b"not a note\n" if n == "checkpoint" else d) for n, d in ms]

    bad = tampered(full, tmp_path / "cp2.tar", garble)
    assert failure_of(bad)[1] == "bad-checkpoint"
    assert_import_refused(bad, tmp_path, "bad-checkpoint")


def test_tampered_export_checkpoint_beyond_the_chain(full: Path, tmp_path: Path) -> None:
    """A chain cut below a checkpoint it carries: truncated."""

    def cut(ms: Members) -> Members:
        return with_chain(ms, chain_lines(ms)[:14])

    bad = tampered(full, tmp_path / "cut.tar", cut)
    assert failure_of(bad) == (14, "truncated")
    assert_import_refused(bad, tmp_path, "truncated")


def test_tampered_export_manifest_mismatch(full: Path, tmp_path: Path) -> None:
    def lie(ms: Members) -> Members:
        manifest = json.loads(dict(ms)["manifest.json"])
        manifest["members"]["keys"]["size"] += 1
        data = json.dumps(manifest).encode()
        return [(n, data if n == "manifest.json" else d) for n, d in ms]

    bad = tampered(full, tmp_path / "manifest.tar", lie, fix=False)
    assert failure_of(bad) == (0, "manifest-mismatch")
    assert_import_refused(bad, tmp_path, "manifest-mismatch")

    def fewer(ms: Members) -> Members:
        manifest = json.loads(dict(ms)["manifest.json"])
        manifest["to"] -= 1
        manifest["entries"] -= 1
        data = json.dumps(manifest).encode()
        return [(n, data if n == "manifest.json" else d) for n, d in ms]

    # Every line verifies, but the manifest claims one entry fewer.
    bad = tampered(full, tmp_path / "short.tar", fewer, fix=False)
    assert failure_of(bad) == (0, "manifest-mismatch")
    assert_import_refused(bad, tmp_path, "manifest-mismatch")

    def other_keys(ms: Members) -> Members:
        keys = dict(ms)["keys"].splitlines(keepends=True)
        return [(n, b"".join(keys[:1]) if n == "keys" else d) for n, d in ms]

    bad = tampered(full, tmp_path / "keys.tar", other_keys)
    assert failure_of(bad) == (0, "bad-keys")


# -- the named fixture: an export with a missing blob ---------------------------


def test_export_with_a_missing_blob_is_refused_unless_redacted(
    rich: Ledger, full: Path, tmp_path: Path
) -> None:
    name7 = blob_name(rich.entry(7)["content"])
    bad = tampered(full, tmp_path / "missing.tar", lambda ms: [m for m in ms if m[0] != name7])
    assert failure_of(bad) == (7, "missing-content")
    assert_import_refused(bad, tmp_path, "missing-content")
    # Seq 3 was redacted: the export lacks its blob and verifies, and imports.
    assert blob_name(rich.entry(3)["content"]) not in dict(read_members(full))
    assert verify_archive(full).ok
    dest = tmp_path / "restored"
    import_archive(full, dest)
    assert not (dest / blob_name(rich.entry(3)["content"])).exists()


# -- hostile archives ---------------------------------------------------------------


def _hostile(path: Path, full: Path, extra: tarfile.TarInfo, data: bytes = b"") -> Path:
    members = fix_manifest(read_members(full))
    with tarfile.open(path, "w") as tf:
        for name, blob in members[:-1]:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tf.addfile(info, io.BytesIO(blob))
        extra.size = len(data) if extra.isreg() else 0
        tf.addfile(extra, io.BytesIO(data) if extra.isreg() else None)
        name, blob = members[-1]
        info = tarfile.TarInfo(name)
        info.size = len(blob)
        tf.addfile(info, io.BytesIO(blob))
    return path


@pytest.mark.parametrize(
    ("name", "kind", "reason"),
    [
        ("../evil", tarfile.REGTYPE, "unsafe-member"),
        ("content/../../evil", tarfile.REGTYPE, "unsafe-member"),
        ("/tmp/evil", tarfile.REGTYPE, "unsafe-member"),
        ("content/ab/" + "c" * 62, tarfile.SYMTYPE, "unsafe-member"),
        ("checkpoint", tarfile.LNKTYPE, "unsafe-member"),
        ("content/ab", tarfile.DIRTYPE, "unsafe-member"),
        ("content/ab/" + "c" * 62, tarfile.CHRTYPE, "unsafe-member"),
        ("evil.sh", tarfile.REGTYPE, "unexpected-member"),
        ("keys", tarfile.REGTYPE, "duplicate-member"),
    ],
)
def test_hostile_members_are_refused(
    full: Path, tmp_path: Path, name: str, kind: bytes, reason: str
) -> None:
    extra = tarfile.TarInfo(name)
    extra.type = kind
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        extra.linkname = "/etc/passwd"
    bad = _hostile(tmp_path / "hostile.tar", full, extra, b"#!/bin/sh\n")
    assert failure_of(bad) == (0, reason)
    assert_import_refused(bad, tmp_path, reason)
    assert not (tmp_path.parent / "evil").exists()
    assert not Path("/tmp/evil").exists()


def test_structure_is_enforced(full: Path, tmp_path: Path) -> None:
    members = read_members(full)
    # manifest.json must come first, chain.jsonl last.
    bad = write_members(tmp_path / "order.tar", [members[1], members[0], *members[2:]])
    assert failure_of(bad) == (0, "bad-archive")
    bad = write_members(tmp_path / "tail.tar", [*members[:1], members[-1], *members[1:-1]])
    assert failure_of(bad) == (0, "missing-member")
    # Nothing may follow chain.jsonl.
    bad = write_members(tmp_path / "after.tar", [*members, ("anchors.jsonl", b"{}\n")], fix=False)
    assert failure_of(bad) == (0, "unexpected-member")
    # Not a tar at all, or a cut one.
    (tmp_path / "junk.tar").write_bytes(b"hello")
    assert failure_of(tmp_path / "junk.tar")[1] == "bad-archive"
    raw = full.read_bytes()
    (tmp_path / "cut.tar").write_bytes(raw[: len(raw) // 2])
    assert failure_of(tmp_path / "cut.tar")[1] == "bad-archive"
    other = dict(members)
    manifest = json.loads(other["manifest.json"])
    assert manifest["format"] == ARCHIVE_FORMAT
    manifest["format"] = "something-else/1"
    data = json.dumps(manifest).encode()
    bad = write_members(
        tmp_path / "format.tar",
        [(n, data if n == "manifest.json" else d) for n, d in members],
        fix=False,
    )
    assert failure_of(bad) == (0, "bad-manifest")


def _flipped(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    b[at] ^= 0x01
    return bytes(b)


GZIP_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "crc changed": lambda z: _flipped(z, len(z) - 8),
    "size changed": lambda z: _flipped(z, len(z) - 4),
    "trailer missing": lambda z: z[:-8],
    "trailing garbage": lambda z: z + b"garbage",
    "a second member": lambda z: z + z,
}


@pytest.mark.parametrize("damage", sorted(GZIP_DAMAGE))
def test_a_damaged_gzip_export_does_not_verify(rich: Ledger, tmp_path: Path, damage: str) -> None:
    """Issue 22 ("a damaged export verifies"): a changed gzip CRC or size, a missing trailer,
    bytes after it or a second member verified ok; each is bad-archive now, and import
    refuses it, creating nothing."""
    gz = tmp_path / "full.tar.gz"
    export_archive(rich, gz)
    assert verify_archive(gz).ok
    bad = tmp_path / "damaged.tar.gz"
    bad.write_bytes(GZIP_DAMAGE[damage](gz.read_bytes()))
    assert failure_of(bad) == (0, "bad-archive")
    assert_import_refused(bad, tmp_path, "bad-archive")


def test_gzip_damage_wins_over_a_failing_line(rich: Ledger, tmp_path: Path) -> None:
    """FORMAT.md 16.5: gzip damage is reported whatever the lines give (the JavaScript
    verifier, which decompresses first, says the same)."""
    path = tmp_path / "edited.tar"
    export_archive(rich, path)
    members = read_members(path)
    lines = chain_lines(members)
    lines[4] = lines[4].replace(b'"importance":', b'"importance": ')
    edited = write_members(tmp_path / "edited2.tar", with_chain(members, lines))
    assert failure_of(edited)[1] == "not-canonical"
    gz = tmp_path / "edited.tar.gz"
    gz.write_bytes(gzip.compress(edited.read_bytes(), mtime=0) + b"x")
    assert failure_of(gz) == (0, "bad-archive")


def test_a_damaged_tar_header_after_the_first_member(full: Path, tmp_path: Path) -> None:
    """Issue 22: a damaged header after the first member read as the end of the archive
    (missing-member); it is bad-archive. So is a non-zero byte after the end block, and an
    archive cut at a member boundary without its end block."""
    data = full.read_bytes()
    with tarfile.open(full) as tf:
        members = tf.getmembers()
    bad = tmp_path / "header.tar"
    bad.write_bytes(_flipped(data, members[2].offset + 148))
    assert failure_of(bad) == (0, "bad-archive")
    assert "a damaged tar header at byte" in str(verify_archive(bad).failure)
    padding = tmp_path / "padding.tar"
    padding.write_bytes(_flipped(data, len(data) - 1))
    assert failure_of(padding) == (0, "bad-archive")
    last = members[-1]
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: last.offset_data + -(-last.size // 512) * 512])
    assert failure_of(cut) == (0, "bad-archive")


def test_size_limits(full: Path) -> None:
    report = verify_archive(full, limits=Limits(blob=4))
    assert report.failure is not None and report.failure.reason == "too-large"
    report = verify_archive(full, limits=Limits(blobs_total=40))
    assert report.failure is not None and report.failure.reason == "too-large"


def test_import_refuses_a_non_empty_directory(full: Path, tmp_path: Path) -> None:
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "something").write_text("x")
    with pytest.raises(ChainStateError, match="not empty"):
        import_archive(full, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["something"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert import_archive(full, empty).ok
    assert (empty / "chain.jsonl").exists()


# -- the command line ------------------------------------------------------------------


def test_cli_round_trip_with_an_auditor_in_an_empty_process(raw: Cli, tmp_path: Path) -> None:
    raw.ok("add", "Use pnpm, not npm", "--type", "decision", "--tier", "committed")
    raw.ok("add", "Temporary token", "--tier", "ephemeral")
    raw.ok("add", "Staging is on 5433", "--type", "fact")
    raw.ok("checkpoint")
    raw.ok("redact", "2", "--reason", "leaked")
    raw.ok("keys", "rotate")
    raw.ok("add", "Check the port first", "--type", "lesson")
    chain_id = raw.ok("verify", "--json").json()["chain_id"]
    archive = tmp_path / "out" / "export.tar.gz"
    archive.parent.mkdir()
    out = raw.ok("export", str(archive), "--json").json()
    assert out["complete"] and out["entries"] == 7 and out["redacted_blobs"] == 1

    # The auditor: a fresh process, no data directory, an empty HOME.
    home = tmp_path / "auditor-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CHAIN_")}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [SCRIPT, "verify", "--bundle", str(archive), "--chain-id", chain_id, "--json"],
        env=env,
        cwd=home,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["ok"] and verdict["entries"] == 7 and verdict["content_checked"]
    assert list(home.iterdir()) == []  # nothing read or written beside the archive

    dest = tmp_path / "restored"
    result = raw.run("import", str(archive), "--dir", str(dest))
    assert result.code == 0, result.err
    assert "read-only" in result.out
    check = raw.run("verify", "--dir", str(dest), "--full")
    assert check.code == 0, check.err
    refused = assert_rejected(
        raw, "add", "one more", "--dir", str(dest), watch=dest / "chain.jsonl"
    )
    assert "imported without a secret key" in refused.err
    assert "hint:" in refused.err


def test_cli_no_content_and_failures(populated: Cli, tmp_path: Path) -> None:
    archive = tmp_path / "bare.tar"
    populated.ok("export", str(archive), "--no-content")
    result = populated.run("verify", "--bundle", str(archive))
    assert result.code == 0, result.err
    assert "content not included: blobs not checked" in result.err
    refused = assert_rejected(
        populated, "import", str(archive), "--dir", str(tmp_path / "x"), watch=archive
    )
    assert "no content" in refused.err
    assert not (tmp_path / "x").exists()

    # A tampered archive: exit 1 with the seq and reason; import exit 1, nothing made.
    full = tmp_path / "full.tar"
    populated.ok("export", str(full))

    def edit(ms: Members) -> Members:
        lines = chain_lines(ms)
        lines[2] = lines[2].replace(b'"importance":30', b'"importance":31')
        return with_chain(ms, lines)

    bad = tampered(full, tmp_path / "bad.tar", edit)
    result = populated.run("verify", "--bundle", str(bad))
    assert result.code == 1
    assert "FAILED at seq 2" in result.err and "bad-signature" in result.err
    result = populated.run("import", str(bad), "--dir", str(tmp_path / "y"))
    assert result.code == 1 and "bad-signature" in result.err
    assert not (tmp_path / "y").exists()
    # Partial exports verify and are refused by import.
    part = tmp_path / "part.tar"
    populated.ok("export", str(part), "--from", "2", "--to", "3")
    assert populated.run("verify", "--bundle", str(part)).code == 0
    result = populated.run("import", str(part), "--dir", str(tmp_path / "z"))
    assert result.code == 2 and "partial export" in result.err
    assert not (tmp_path / "z").exists()
    # A missing file is exit 2.
    assert populated.run("verify", "--bundle", str(tmp_path / "nope.tar")).code == 2

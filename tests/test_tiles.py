"""A chain published as C2SP tlog-tiles (issue 29, FORMAT.md 19): the format, publish,
the auditor's check, the witness's cosignature, and one fixture per attack.

The independent client (Go's sumdb/tlog and note) is tests/test_tiles_independent.py.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from helpers.cli import Cli, assert_rejected
from helpers.tiles import (
    OTHER_WITNESS_SEED,
    OWNER_SEED,
    WITNESS_SEED,
    grow,
    log_key_of,
    owned_ledger,
    public_of,
    rolled_back_pair,
    snapshot,
    witness_key,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.audit.publishing import check_published, cosign, publish
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.errors import IntegrityError
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.log.checkpoint import parse_checkpoint, sign_checkpoint
from memory_chain.chain.log.cosignature import (
    COSIGNATURE,
    NOTE_ED25519,
    VerifierKey,
    cosigned_at,
    parse_private_key,
    parse_vkey,
    private_key_text,
    vkey_text,
)
from memory_chain.chain.log.merkle import SHA256, root_of
from memory_chain.chain.log.tiles import (
    FolderStore,
    Store,
    TileError,
    build_tiles,
    entry_bundle,
    leaf_hashes_of,
    read_entries,
    read_leaf_hashes,
    tile_path,
    tiles_for,
)
from memory_chain.chain.store.ledger import Ledger, NewEntry


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    return path


@pytest.fixture
def owned(tmp_path: Path) -> Ledger:
    """Genesis plus 299 entries (a full tile and a partial one) by the fixed owner key."""
    return owned_ledger(tmp_path / "chain")


# -- the format ---------------------------------------------------------------------------


def test_tile_paths_are_the_specs() -> None:
    """c2sp.org/tlog-tiles' examples: 3-digit elements, x before all but the last, .p/W."""
    assert "tile/0/x001/x234/067" == tile_path(0, 1234067)
    assert "tile/1/000" == tile_path(1, 0)
    assert "tile/0/999" == tile_path(0, 999)
    assert "tile/0/x001/000" == tile_path(0, 1000)
    assert "tile/2/000.p/1" == tile_path(2, 0, 1)
    assert "tile/entries/x001/x234/067.p/255" == tile_path(None, 1234067, 255)
    with pytest.raises(ValueError):
        tile_path(0, 0, 0)
    with pytest.raises(ValueError):
        tile_path(0, 0, 257)


def test_tiles_of_a_tree_are_the_specs_examples() -> None:
    """70,000 leaves: 273 full and one of 112 at level 0, one full and one of 17 at level
    1, one of 1 at level 2; 256 leaves: a full tile and a partial of width 1 above it."""
    tiles = list(tiles_for(70_000))
    level0 = [t for t in tiles if t[0] == 0]
    assert 274 == len(level0) and (0, 273, 112) == level0[-1]
    assert [(1, 0, 256), (1, 1, 17), (2, 0, 1)] == [t for t in tiles if t[0] > 0]
    assert [(0, 0, 256), (1, 0, 1)] == list(tiles_for(256))
    assert [(0, 0, 1)] == list(tiles_for(1))


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=1100))
def test_tiles_round_trip_and_hold_the_rfc6962_root(
    tmp_path_factory: pytest.TempPathFactory, size: int
) -> None:
    """Built tiles read back as the leaves, whose tree root is the RFC 6962 SHA-256 root,
    and every hash above level 0 is the root of the full tile below it."""
    lines = [f"line {i}".encode() * (i % 5 + 1) for i in range(size)]
    leaves = leaf_hashes_of(lines)
    assert leaves[0] == hashlib.sha256(b"\x00" + lines[0]).digest()
    folder = tmp_path_factory.mktemp("tiles")
    # build_tiles gives the tiles in tiles_for's order (publish walks the two together)
    assert [tile_path(*t) for t in tiles_for(size)] == list(build_tiles(leaves))
    for rel, data in build_tiles(leaves).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    for index in range(0, size, 256):
        chunk = lines[index : index + 256]
        path = folder / tile_path(None, index // 256, len(chunk))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(entry_bundle(chunk))
    root = root_of(SHA256, leaves)
    assert leaves == read_leaf_hashes(folder, size, root)
    assert lines == read_entries(folder, size, leaves)
    with pytest.raises(TileError, match="root"):
        read_leaf_hashes(folder, size, bytes(32))


def test_a_smaller_tree_reads_from_a_full_tile(tmp_path: Path) -> None:
    """A client of an older checkpoint finds its partial tile gone once the tile is full:
    the first hashes of the full tile serve."""
    lines = [b"x%d" % i for i in range(300)]
    leaves = leaf_hashes_of(lines)
    for rel, data in build_tiles(leaves).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    assert leaves[:100] == read_leaf_hashes(tmp_path, 100, root_of(SHA256, leaves[:100]))


# -- keys and cosignatures ------------------------------------------------------------------


def test_verifier_keys_round_trip_and_refuse_what_is_wrong() -> None:
    text = vkey_text("witness.example/w1", COSIGNATURE, public_of(WITNESS_SEED))
    key = parse_vkey(text, COSIGNATURE)
    assert text == str(key)
    assert (
        key.key_hash
        == hashlib.sha256(b"witness.example/w1\n\x04" + public_of(WITNESS_SEED)).digest()[:4]
    )
    with pytest.raises(ValueError, match="algorithm"):
        parse_vkey(text, NOTE_ED25519)
    name, _, encoded = text.split("+")
    with pytest.raises(ValueError, match="hash"):
        parse_vkey(f"{name}+{'0' * 8}+{encoded}", COSIGNATURE)
    with pytest.raises(ValueError):
        parse_vkey("no plus signs", COSIGNATURE)
    private = private_key_text("witness.example/w1", COSIGNATURE, WITNESS_SEED)
    assert ("witness.example/w1", WITNESS_SEED) == parse_private_key(private, COSIGNATURE)


def test_a_cosignature_is_the_specs_message(owned: Ledger, tmp_path: Path) -> None:
    """cosignature/v1: key hash, 8-byte big-endian time, Ed25519 over the header, the time
    line and the checkpoint body; checked here with PyNaCl alone."""
    from nacl.signing import VerifyKey

    folder = tmp_path / "log"
    key = log_key_of(owned, folder)
    cosign(
        folder,
        name="witness.example/w1",
        seed=WITNESS_SEED,
        log_key=key,
        state=tmp_path / "w.json",
        now=1_700_000_000,
    )
    cp = parse_checkpoint((folder / "checkpoint").read_bytes())
    name, khash, sig = cp.signatures[1]
    assert "witness.example/w1" == name and witness_key().key_hash == khash
    assert 1_700_000_000 == int.from_bytes(sig[:8], "big")
    message = b"cosignature/v1\ntime 1700000000\n" + cp.body
    VerifyKey(public_of(WITNESS_SEED)).verify(message, sig[8:])
    assert 1_700_000_000 == cosigned_at(cp, witness_key())
    assert cosigned_at(cp, witness_key(OTHER_WITNESS_SEED)) is None


# -- publish and check ----------------------------------------------------------------------


def test_publish_writes_the_tiles_of_the_chains_lines(owned: Ledger, tmp_path: Path) -> None:
    folder = tmp_path / "log"
    done = publish(owned, folder)
    lines = owned.layout.chain.read_bytes().splitlines()
    assert 300 == done.checkpoint.size == len(lines)
    assert root_of(SHA256, leaf_hashes_of(lines)) == done.checkpoint.root
    assert {
        "checkpoint",
        "tile/0/000",
        "tile/0/001.p/44",
        "tile/1/000.p/1",
        "tile/entries/000",
        "tile/entries/001.p/44",
    } == set(snapshot(folder))
    assert done.checkpoint.signed_by("ed25519:" + public_of(OWNER_SEED).hex())
    assert done.checkpoint.origin.endswith("/sha256")
    checked = check_published(folder)
    assert checked.ok, checked.failure
    assert checked.blake3_root == verify_ledger(owned).root


def test_publishing_again_writes_nothing_and_keeps_cosignatures(
    owned: Ledger, tmp_path: Path
) -> None:
    folder = tmp_path / "log"
    key = log_key_of(owned, folder)
    cosign(
        folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=tmp_path / "w.json"
    )
    before = snapshot(folder)
    again = publish(owned, folder)
    assert not again.new and 0 == again.written
    assert before == snapshot(folder)


def test_a_grown_log_keeps_what_witnesses_saw(owned: Ledger, tmp_path: Path) -> None:
    """After the log grows, the witness that cosigned size 300 is reported as having seen
    300 of 556 (cosigned/300 keeps that note), and a quorum needs a new cosignature."""
    folder, state = tmp_path / "log", tmp_path / "w.json"
    key = log_key_of(owned, folder)
    cosign(folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=state)
    publish(grow(owned, 256), folder)
    checked = check_published(folder, witnesses=[witness_key()])
    assert not checked.ok and "witnesses" == checked.reason
    assert [("witness.example/w1", 300)] == [(n, s) for n, s, _ in checked.witnesses]
    assert (folder / "cosigned" / "300").is_file()
    assert check_published(folder, witnesses=[witness_key()], quorum=0).ok
    done = cosign(folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=state)
    assert 300 == done.previous
    checked = check_published(folder, witnesses=[witness_key()], ledger=owned)
    assert checked.ok, checked.failure
    assert [("witness.example/w1", 556)] == [(n, s) for n, s, _ in checked.witnesses]


def test_a_second_cosign_of_the_same_checkpoint_adds_nothing(owned: Ledger, tmp_path: Path) -> None:
    folder, state = tmp_path / "log", tmp_path / "w.json"
    key = log_key_of(owned, folder)
    cosign(folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=state)
    before = (folder / "checkpoint").read_bytes()
    cosign(folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=state)
    assert before == (folder / "checkpoint").read_bytes()


# -- attacks: one fixture each ----------------------------------------------------------------


@pytest.fixture
def published(owned: Ledger, tmp_path: Path) -> tuple[Ledger, Path, VerifierKey]:
    """The owner's chain published to log/ and cosigned at size 300 by witness w1."""
    folder = tmp_path / "log"
    key = log_key_of(owned, folder)
    cosign(
        folder, name="witness.example/w1", seed=WITNESS_SEED, log_key=key, state=tmp_path / "w.json"
    )
    return owned, folder, key


@pytest.fixture
def rolled_back(owned: Ledger, tmp_path: Path) -> Ledger:
    """A copy of the owner's data directory taken at size 200 (before 100 more entries)."""
    shutil.rmtree(owned.layout.root)
    return rolled_back_pair(owned.layout.root, tmp_path / "rolled-back")


@pytest.fixture
def forked(rolled_back: Ledger) -> Ledger:
    """The copy at size 200 grown by 100 other entries: the same genesis and key, another
    history from 200 on."""
    return grow(rolled_back, 100, word="other")


def flip_signature(line: bytes) -> bytes:
    """The line with one hex digit of its signature changed (still canonical JSON)."""
    at = line.index(b'"sig":"') + 7
    return line[:at] + (b"1" if line[at : at + 1] == b"0" else b"0") + line[at + 1 :]


def test_attack_tampered_tile(published: tuple[Ledger, Path, VerifierKey]) -> None:
    _, folder, _ = published
    tile = folder / "tile/0/000"
    data = bytearray(tile.read_bytes())
    data[40] ^= 1
    tile.write_bytes(bytes(data))
    checked = check_published(folder)
    assert "bad-tiles" == checked.reason, checked.failure


def test_attack_tampered_entry(published: tuple[Ledger, Path, VerifierKey]) -> None:
    """An entry changed in its bundle (its length kept) no longer hashes to its leaf."""
    _, folder, _ = published
    bundle = folder / "tile/entries/000"
    data = bundle.read_bytes()
    at = data.index(b'"sig":"', 2000) + 7
    bundle.write_bytes(data[:at] + (b"1" if data[at : at + 1] == b"0" else b"0") + data[at + 1 :])
    checked = check_published(folder)
    assert "bad-tiles" == checked.reason and "entry" in (checked.failure or "")


def test_attack_checkpoint_signed_by_another_key(
    published: tuple[Ledger, Path, VerifierKey],
) -> None:
    """Tiles and entries intact, the checkpoint re-signed by a key the chain never named."""
    _, folder, _ = published
    cp = parse_checkpoint((folder / "checkpoint").read_bytes())
    forged = sign_checkpoint(cp.origin, cp.size, cp.root, Signer(bytes([11]) * 32))
    (folder / "checkpoint").write_bytes(forged.text)
    checked = check_published(folder)
    assert "checkpoint-signature" == checked.reason, checked.failure


def test_attack_entries_not_signed_by_the_chain(
    published: tuple[Ledger, Path, VerifierKey], tmp_path: Path
) -> None:
    """A log whose tiles, entries and checkpoint are all consistent, built from lines whose
    signatures do not verify: caught by reading the entries as a chain."""
    _, folder, _ = published
    chain = (tmp_path / "chain" / "chain.jsonl").read_bytes().splitlines()
    edited = [chain[0]] + [flip_signature(line) for line in chain[1:]]
    fake = tmp_path / "fake"
    leaves = leaf_hashes_of(edited)
    for rel, data in build_tiles(leaves).items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_bytes(data)
    for index in range(0, len(edited), 256):
        chunk = edited[index : index + 256]
        path = fake / tile_path(None, index // 256, len(chunk))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(entry_bundle(chunk))
    cp = parse_checkpoint((folder / "checkpoint").read_bytes())
    note = sign_checkpoint(cp.origin, len(edited), root_of(SHA256, leaves), Signer(OWNER_SEED))
    (fake / "checkpoint").write_bytes(note.text)
    checked = check_published(fake)
    assert "bad-entries" == checked.reason, checked.failure


def test_attack_rollback_publish_refuses(
    published: tuple[Ledger, Path, VerifierKey], rolled_back: Ledger
) -> None:
    _, folder, _ = published
    before = snapshot(folder)
    with pytest.raises(IntegrityError) as caught:
        publish(rolled_back, folder)
    assert "rollback" == caught.value.reason
    assert before == snapshot(folder)


def test_attack_fork_publish_refuses(
    published: tuple[Ledger, Path, VerifierKey], forked: Ledger
) -> None:
    _, folder, _ = published
    before = snapshot(folder)
    with pytest.raises(IntegrityError) as caught:
        publish(forked, folder)
    assert "fork" == caught.value.reason
    assert before == snapshot(folder)


def test_attack_rollback_witness_refuses(
    published: tuple[Ledger, Path, VerifierKey], rolled_back: Ledger, tmp_path: Path
) -> None:
    """The operator publishes the cut chain to a fresh folder: the witness that saw 300
    refuses size 200, so the folder lacks its cosignature and the check fails."""
    _, _, key = published
    fresh = tmp_path / "fresh"
    publish(rolled_back, fresh)
    before = snapshot(fresh)
    with pytest.raises(IntegrityError) as caught:
        cosign(
            fresh,
            name="witness.example/w1",
            seed=WITNESS_SEED,
            log_key=key,
            state=tmp_path / "w.json",
        )
    assert "rollback" == caught.value.reason
    assert before == snapshot(fresh)
    checked = check_published(fresh, witnesses=[witness_key()])
    assert "witnesses" == checked.reason


def test_attack_fork_witness_refuses(
    published: tuple[Ledger, Path, VerifierKey], forked: Ledger, tmp_path: Path
) -> None:
    _, _, key = published
    fresh = tmp_path / "fresh"
    publish(forked, fresh)
    with pytest.raises(IntegrityError) as caught:
        cosign(
            fresh,
            name="witness.example/w1",
            seed=WITNESS_SEED,
            log_key=key,
            state=tmp_path / "w.json",
        )
    assert "fork" == caught.value.reason
    assert check_published(fresh).ok  # a fork is a valid log on its own: only witnesses tell
    assert "witnesses" == check_published(fresh, witnesses=[witness_key()]).reason


def test_attack_fork_shown_with_an_old_cosigned_note(
    published: tuple[Ledger, Path, VerifierKey], forked: Ledger, tmp_path: Path
) -> None:
    """The forked log carries the note the witness cosigned at 300 for the old history:
    its root is not the fork's at 300, which is reported as a fork."""
    _, folder, _ = published
    fresh = tmp_path / "fresh"
    publish(grow(forked, 10, word="more"), fresh)
    (fresh / "cosigned").mkdir()
    shutil.copy(folder / "checkpoint", fresh / "cosigned" / "300")
    checked = check_published(fresh, witnesses=[witness_key()], quorum=0)
    assert "fork" == checked.reason, checked.failure


def test_attack_local_chain_is_not_what_was_published(
    published: tuple[Ledger, Path, VerifierKey], forked: Ledger
) -> None:
    """verify --published: the published log is not a prefix of the local (forked) chain."""
    _, folder, _ = published
    checked = check_published(folder, ledger=forked)
    assert "fork" == checked.reason, checked.failure


# -- the command line ---------------------------------------------------------------------


def test_cli_publish_cosign_and_verify(raw: Cli, tmp_path: Path) -> None:
    for i in range(3):
        raw.ok("add", f"note {i}")
    folder = str(tmp_path / "log")
    out = raw.ok("publish", folder, "--json").json()
    assert 4 == out["size"] and out["new"]
    key_file = str(tmp_path / "w1.key")
    witness = raw.ok("witness", "keygen", "witness.example/w1", "--out", key_file).out.strip()
    assert 0o600 == Path(key_file).stat().st_mode & 0o777
    done = raw.ok(
        "witness", "cosign", folder, "--key", key_file, "--log-key", out["log_key"], "--json"
    ).json()
    assert done["previous"] is None and 4 == done["size"]
    result = raw.run("verify", "--tiles", folder, "--witness", witness, "--log-key", out["log_key"])
    assert 0 == result.code, result.err
    assert "witness witness.example/w1: saw size 4" in result.out
    result = raw.run("verify", "--published", folder, "--witness", witness)
    assert 0 == result.code, result.err
    assert "saw size 4" in result.out
    raw.ok("add", "note 4")
    raw.ok("publish", folder)
    result = raw.run("verify", "--tiles", folder, "--witness", witness, "--json")
    assert 1 == result.code
    assert [{"name": "witness.example/w1", "cosigned": False, "size": 4}] == [
        {k: w[k] for k in ("name", "cosigned", "size")} for w in result.json()["witnesses"]
    ]


def test_cli_bad_input_is_one_line_and_changes_nothing(raw: Cli, tmp_path: Path) -> None:
    folder = str(tmp_path / "log")
    raw.ok("publish", folder)
    assert_rejected(raw, "verify", "--tiles", folder, "--witness", "not-a-key")
    assert_rejected(raw, "verify", "--witness", "a+b+c")
    before = snapshot(Path(folder))
    assert_rejected(raw, "publish", folder, "--witness", "x+y+z", "--witness-url", "http://h")
    assert_rejected(raw, "publish", folder, "--witness-url", "http://127.0.0.1:9")
    assert_rejected(raw, "publish", "s3://")
    assert_rejected(raw, "verify", "--tiles", str(tmp_path / "nowhere"))
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert_rejected(raw, "publish", str(a_file))
    assert "x" == a_file.read_text()
    assert before == snapshot(Path(folder))
    key_file = tmp_path / "w1.key"
    raw.ok("witness", "keygen", "witness.example/w1", "--out", str(key_file))
    before = key_file.read_bytes()
    assert_rejected(raw, "witness", "keygen", "w2", "--out", str(key_file))
    assert before == key_file.read_bytes()
    assert_rejected(
        raw,
        "witness",
        "cosign",
        folder,
        "--key",
        str(key_file),
        "--log-key",
        "x+y+z",
        watch=Path(folder) / "checkpoint",
    )


def test_cli_witness_refusal_exits_1(raw: Cli, tmp_path: Path) -> None:
    """A witness asked to cosign a log whose checkpoint another key signed: exit 1."""
    folder = tmp_path / "log"
    raw.ok("publish", str(folder))
    cp = parse_checkpoint((folder / "checkpoint").read_bytes())
    other = Signer(bytes([12]) * 32)
    vkey = vkey_text(cp.origin, NOTE_ED25519, other.public)
    key_file = str(tmp_path / "w1.key")
    raw.ok("witness", "keygen", "witness.example/w1", "--out", key_file)
    before = (folder / "checkpoint").read_bytes()
    result = raw.run("witness", "cosign", str(folder), "--key", key_file, "--log-key", vkey)
    assert 1 == result.code and "not signed by the log key" in result.err
    assert before == (folder / "checkpoint").read_bytes()


def test_cli_a_rotated_key_signs_the_next_checkpoint(raw: Cli, tmp_path: Path) -> None:
    """After a key rotation the log is signed by the new key, which the published entries
    name; a witness still configured with the old log key refuses it (exit 1) until given
    the new one."""
    folder = str(tmp_path / "log")
    first = raw.ok("publish", folder, "--json").json()
    key_file = str(tmp_path / "w1.key")
    raw.ok("witness", "keygen", "witness.example/w1", "--out", key_file)
    raw.ok("witness", "cosign", folder, "--key", key_file, "--log-key", first["log_key"])
    rotated = raw.ok("keys", "rotate", "--json").json()
    raw.ok("add", "after the rotation")
    second = raw.ok("publish", folder, "--json").json()
    assert second["log_key"] != first["log_key"]
    checked = raw.ok("verify", "--tiles", folder, "--log-key", second["log_key"], "--json").json()
    assert rotated["new_key"] == checked["key"] and 3 == checked["size"]
    refused = raw.run("witness", "cosign", folder, "--key", key_file, "--log-key", first["log_key"])
    assert 1 == refused.code, refused.err
    raw.ok("witness", "cosign", folder, "--key", key_file, "--log-key", second["log_key"])


class _DuringWrites:
    """A folder store that runs ``during`` at its first write (while publish writes), or
    with ``at_read`` at its first read (publish reads the old checkpoint once the leaves
    are hashed, before it reads the lines again)."""

    def __init__(self, root: Path, during: Callable[[], None], at_read: bool = False) -> None:
        self.inner = FolderStore(root)
        self.during: Callable[[], None] | None = during
        self.at_read = at_read

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _now(self) -> None:
        during, self.during = self.during, None
        if during is not None:
            during()

    def read(self, rel: str) -> bytes | None:
        if self.at_read:
            self._now()
        return self.inner.read(rel)

    def write(self, rel: str, data: bytes, *, last: bool = False) -> None:
        self._now()
        self.inner.write(rel, data, last=last)


def test_writers_go_on_while_a_log_is_published(owned: Ledger, tmp_path: Path) -> None:
    """FORMAT.md 19.4: the writer's lock is held for the verdict and the leaves only; an
    add while the tiles are written goes through (another process's lock: its own open
    file), and the checkpoint is of the lines verified before it."""
    added: list[int] = []

    def add() -> None:
        worker = threading.Thread(
            target=lambda: added.append(Ledger(owned.layout.root).add(NewEntry(b"during")).seq)
        )
        worker.start()
        worker.join(timeout=30)

    done = publish(owned, cast(Store, _DuringWrites(tmp_path / "log", add)))
    assert [300] == added
    assert 300 == done.checkpoint.size
    assert check_published(tmp_path / "log").ok


def test_attack_rewrite_while_publishing(owned: Ledger, tmp_path: Path) -> None:
    """A line changed between the leaves' pass and the writing pass is caught: nothing
    is signed."""
    chain = owned.layout.chain

    def rewrite() -> None:
        lines = chain.read_bytes().splitlines(keepends=True)
        lines[5] = flip_signature(lines[5].rstrip(b"\n")) + b"\n"
        chain.write_bytes(b"".join(lines))

    with pytest.raises(IntegrityError) as caught:
        publish(owned, cast(Store, _DuringWrites(tmp_path / "log", rewrite, at_read=True)))
    assert "rewritten" == caught.value.reason
    assert not (tmp_path / "log" / "checkpoint").exists()

"""The local witness: where it lives, that it only grows, and that verify and add obey it.

The witness file (chain/log/witness.py) remembers the largest checkpoint seen
per chain id, in the per-user state folder (config.resolve_state_dir). Every
test here gets its own state folder through MEMORY_CHAIN_STATE_DIR, except
the location tests, which set each source of the location themselves.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from helpers.cli import Cli, assert_rejected

from memory_chain.chain.audit.checkpointing import checkpoint
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import resolve_state_dir
from memory_chain.chain.format.errors import IntegrityError, OperationalError
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.log.checkpoint import Checkpoint, make_checkpoint
from memory_chain.chain.log.merkle import BLAKE3, root_of
from memory_chain.chain.log.witness import WITNESS_FORMAT, Witness
from memory_chain.chain.store.ledger import Ledger, NewEntry

OWNER_SEED = bytes([7]) * 32  # test-only
START_MICROS = 1_735_689_600_000_000


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test's witness and verification cache live in its own state folder."""
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return path


@pytest.fixture
def owned(tmp_path: Path) -> Ledger:
    """A chain of genesis plus five entries by the fixed owner key."""
    clock = itertools.count(START_MICROS, 1_000_000).__next__
    ledger = Ledger.init(tmp_path / "chain", name="w", signer=Signer(OWNER_SEED), clock=clock)
    for i in range(5):
        ledger.add(NewEntry(f"entry {i}".encode()))
    return ledger


def lines_of(ledger: Ledger) -> list[bytes]:
    return ledger.layout.chain.read_bytes().splitlines()


def note(ledger: Ledger, size: int, lines: list[bytes] | None = None) -> Checkpoint:
    """The owner's checkpoint of the first ``size`` of ``lines`` (default: the chain's)."""
    lines = lines if lines is not None else lines_of(ledger)
    root = root_of(BLAKE3, [BLAKE3.leaf(line) for line in lines[:size]])
    return make_checkpoint(b3(lines[0]), size, root, Signer(OWNER_SEED))


# -- where the witness lives ----------------------------------------------------


def test_location_env_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$MEMORY_CHAIN_STATE_DIR wins over $XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(tmp_path / "from-env"))
    checkpoint(Ledger.init(tmp_path / "c", name="w"))
    assert (tmp_path / "from-env" / "witness.json").is_file()
    assert not (tmp_path / "xdg").exists()


def test_location_not_from_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A "state_dir" in config.json is ignored: whoever writes the data directory must not
    be able to point the witness (or the cache) elsewhere."""
    monkeypatch.delenv("MEMORY_CHAIN_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    ledger = Ledger.init(tmp_path / "c", name="w")
    ledger.config.data["state_dir"] = str(tmp_path / "elsewhere")
    ledger.config.save(ledger.layout)
    checkpoint(Ledger(ledger.layout.root))
    assert (tmp_path / "xdg" / "memory-chain" / "witness.json").is_file()
    assert not (tmp_path / "elsewhere").exists()


def test_location_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With neither, $XDG_STATE_HOME/memory-chain holds the witness."""
    monkeypatch.delenv("MEMORY_CHAIN_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    checkpoint(Ledger.init(tmp_path / "c", name="w"))
    assert (tmp_path / "xdg" / "memory-chain" / "witness.json").is_file()


def test_location_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With nothing configured, ~/.local/state/memory-chain holds the witness; none of the
    state (witness or verification cache) is written in the data directory."""
    monkeypatch.delenv("MEMORY_CHAIN_STATE_DIR")
    root = tmp_path / "c"
    checkpoint(Ledger.init(root, name="w"))
    state = tmp_path / "home" / ".local" / "state" / "memory-chain"
    assert state == resolve_state_dir()
    assert (state / "witness.json").is_file()
    assert [] != list((state / "verified").iterdir())
    assert [] == [p for p in root.rglob("*") if "witness" in p.name or p.suffix == ".state"]


def test_location_cli(raw: Cli, tmp_path: Path) -> None:
    """`memory-chain checkpoint` writes the witness where MEMORY_CHAIN_STATE_DIR says."""
    elsewhere = tmp_path / "elsewhere"
    out = raw.run("checkpoint", "--json", env={"MEMORY_CHAIN_STATE_DIR": str(elsewhere)})
    assert (0, True) == (out.code, out.json()["witnessed"])
    chains = json.loads((elsewhere / "witness.json").read_bytes())["chains"]
    assert [1] == [record["size"] for record in chains.values()]


# -- a damaged witness is an error, never an empty witness -------------------------

DAMAGED = {
    "not-json": b"{ this is not json",
    "empty": b"",
    "wrong-format": json.dumps({"format": "other/1", "chains": {}}).encode(),
    "chains-not-object": json.dumps({"format": WITNESS_FORMAT, "chains": []}).encode(),
    "a-list": b"[]",
}


@pytest.mark.parametrize("name", list(DAMAGED))
def test_damaged_witness_file(name: str, owned: Ledger, state_dir: Path) -> None:
    """A damaged witness file stops verify, checkpoint and add with an OperationalError
    naming the file (it is not read as "nothing witnessed")."""
    checkpoint(owned)
    (state_dir / "witness.json").write_bytes(DAMAGED[name])
    for action in (
        lambda: verify_ledger(Ledger(owned.layout.root)),
        lambda: checkpoint(Ledger(owned.layout.root)),
        lambda: Ledger(owned.layout.root).add(NewEntry(b"x")),
    ):
        with pytest.raises(OperationalError) as caught:
            action()
        assert f"the witness file {state_dir / 'witness.json'} is damaged" == caught.value.message
    assert 6 == len(lines_of(owned))


def test_damaged_witness_record(owned: Ledger, state_dir: Path) -> None:
    """A record whose checkpoint note is damaged, or filed under another chain id, is an
    OperationalError too."""
    checkpoint(owned)
    path = state_dir / "witness.json"
    data = json.loads(path.read_bytes())
    chain_id = owned.config.chain_id or ""
    data["chains"][chain_id]["checkpoint"] = "not a note"
    path.write_text(json.dumps(data))
    with pytest.raises(OperationalError) as caught:
        verify_ledger(owned)
    assert f"holds a damaged record for {chain_id}" in caught.value.message
    other = "b3:" + "ab" * 32
    data["chains"] = {
        other: {**data["chains"][chain_id], "checkpoint": note(owned, 6).text.decode()}
    }
    data["chains"][chain_id] = data["chains"][other]
    path.write_text(json.dumps(data))
    with pytest.raises(OperationalError) as caught:
        Witness(path).get(other)
    assert f"files a checkpoint for memory-chain/{chain_id[3:]} under {other}" in (
        caught.value.message
    )


def test_damaged_witness_cli(populated: Cli, tmp_path: Path) -> None:
    """In the CLI a damaged witness is exit 2 with one error line and a hint, for verify
    and add alike; the chain is untouched."""
    state = tmp_path / "state"
    populated.ok("checkpoint")
    (state / "witness.json").write_text("garbage")
    for args in (("verify",), ("add", "more")):
        result = assert_rejected(populated, *args)
        assert result.err.startswith(f"error: the witness file {state / 'witness.json'}")
        assert "hint: restore it, or move it aside" in result.err


# -- what the witness records ---------------------------------------------------------


def test_fork_at_equal_size_refused(owned: Ledger, tmp_path: Path) -> None:
    """Two checkpoints of the same size with different roots: the second is a fork
    (IntegrityError "forked"), and the witness keeps the first."""
    witness = Witness(tmp_path / "w.json")
    first = note(owned, 4)
    other = list(lines_of(owned))
    other[3] = other[4]  # any other tree of size 4
    forked = note(owned, 4, other)
    assert witness.record(first)
    with pytest.raises(IntegrityError) as caught:
        witness.record(forked)
    assert ("forked", 3) == (caught.value.reason, caught.value.seq)
    assert "a checkpoint of size 4 with another root was witnessed" in caught.value.message
    kept = witness.get(owned.config.chain_id or "")
    assert kept is not None and first.root == kept.checkpoint.root


def test_record_only_grows(owned: Ledger, tmp_path: Path) -> None:
    """record() keeps the largest checkpoint: a smaller one (or the same again) is ignored."""
    witness = Witness(tmp_path / "w.json")
    chain_id = owned.config.chain_id or ""
    steps = [(4, True), (2, False), (4, False), (6, True), (5, False)]
    sizes = []
    for size, grows in steps:
        assert grows == witness.record(note(owned, size))
        seen = witness.get(chain_id)
        assert seen is not None
        sizes.append(seen.size)
    assert [4, 4, 4, 6, 6] == sizes


def test_witness_keeps_chains_apart(owned: Ledger, tmp_path: Path) -> None:
    """Records are per chain id: another chain's checkpoint neither replaces nor forks ours."""
    witness = Witness(tmp_path / "w.json")
    witness.record(note(owned, 6))
    stranger = Ledger.init(tmp_path / "stranger", name="s", signer=Signer(OWNER_SEED))
    lines = lines_of(stranger)
    theirs = make_checkpoint(
        b3(lines[0]), 1, root_of(BLAKE3, [BLAKE3.leaf(lines[0])]), Signer(OWNER_SEED)
    )
    assert witness.record(theirs)
    ours = witness.get(owned.config.chain_id or "")
    assert ours is not None and 6 == ours.size


def test_verify_teaches_the_witness(owned: Ledger, state_dir: Path, tmp_path: Path) -> None:
    """Checkpoints made with another witness are stored beside the chain; a verify then
    records the largest stored one in the user's witness."""
    aside = Witness(tmp_path / "aside.json")
    checkpoint(owned, witness=aside)
    owned.add(NewEntry(b"more"))
    checkpoint(owned, witness=aside)
    owned.add(NewEntry(b"and more"))
    shutil.rmtree(state_dir)
    report = verify_ledger(Ledger(owned.layout.root))
    assert (True, 8) == (report.ok, report.size)
    seen = Witness.in_state_dir(state_dir).get(owned.config.chain_id or "")
    assert seen is not None and 7 == seen.size


def test_failed_verify_teaches_nothing(owned: Ledger, state_dir: Path, tmp_path: Path) -> None:
    """A chain that does not verify does not move the witness."""
    checkpoint(owned, witness=Witness(tmp_path / "aside.json"))
    shutil.rmtree(state_dir)
    with open(owned.layout.chain, "ab") as f:
        f.write(b'{"not": "an entry"}\n')
    assert not verify_ledger(Ledger(owned.layout.root)).ok
    assert not (state_dir / "witness.json").exists()


# -- adds check the witness --------------------------------------------------------------


def test_add_checks_the_witness(owned: Ledger) -> None:
    """After a checkpoint of 6, the chain cut to 4 (head.json gone): add is refused, with
    the sizes in the message, and nothing is written."""
    checkpoint(owned)
    root = owned.layout.root
    owned.layout.chain.write_bytes(b"".join(line + b"\n" for line in lines_of(owned)[:4]))
    (root / "head.json").unlink()
    before = owned.layout.chain.read_bytes()
    with pytest.raises(IntegrityError) as caught:
        Ledger(root).add(NewEntry(b"after the cut"))
    assert ("truncated", 4) == (caught.value.reason, caught.value.seq)
    assert caught.value.message.startswith("chain has 4 entries; checkpoint from ")
    assert caught.value.message.endswith("(witness) commits to 6: the chain was cut")
    assert before == owned.layout.chain.read_bytes()


def test_add_checks_the_witness_cli(populated: Cli) -> None:
    """The same refusal from `memory-chain add`: exit 1, one error line and a hint."""
    populated.ok("checkpoint")
    lines = populated.chain.read_bytes().splitlines(keepends=True)
    populated.chain.write_bytes(b"".join(lines[:3]))
    (populated.root / "head.json").unlink()
    before = populated.chain.read_bytes()
    result = populated.run("add", "after the cut")
    assert 1 == result.code
    assert result.err.startswith("error: chain has 3 entries; checkpoint from ")
    assert "hint: restore the chain from a backup or an export; nothing was written" in result.err
    assert before == populated.chain.read_bytes()


def test_add_beyond_the_witness(owned: Ledger) -> None:
    """A chain longer than the witnessed checkpoint is extended as usual."""
    checkpoint(owned)
    appended = Ledger(owned.layout.root).add(NewEntry(b"next"))
    assert 6 == appended.seq

"""A published log verified by code no one here wrote (issue 29): Go's transparency-log
packages golang.org/x/mod/sumdb/tlog and sumdb/note, from Debian's golang-golang-x-mod-dev
(CI installs it with golang-go, as it installs chromium).

tests/independent/tlogcheck.go drives them: the checkpoint's note signature, every tile
against the root, every entry by an inclusion proof, consistency with an older checkpoint,
and the witnesses' cosignatures (the cosignature check is the one part written here, from
c2sp.org/tlog-cosignature, as x/mod predates it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.tiles import (
    WITNESS,
    WITNESS_SEED,
    grow,
    log_key_of,
    owned_ledger,
    rolled_back_pair,
    witness_key,
)

from memory_chain.chain.audit.publishing import cosign, publish
from memory_chain.chain.log.checkpoint import parse_checkpoint
from memory_chain.chain.log.cosignature import VerifierKey
from memory_chain.chain.store.ledger import Ledger

SOURCE = Path(__file__).parent / "independent" / "tlogcheck.go"
GOPATH = "/usr/share/gocode"  # where Debian's golang-*-dev packages put their sources


@pytest.fixture(scope="session")
def tlogcheck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None or not Path(GOPATH, "src/golang.org/x/mod/sumdb/tlog").is_dir():
        pytest.skip(
            "Go's sumdb/tlog is not installed: apt-get install golang-go "
            "golang-golang-x-mod-dev (CI does)"
        )
    out = tmp_path_factory.mktemp("go") / "tlogcheck"
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": GOPATH,
        "GOCACHE": str(out.parent / "cache"),
        "GOFLAGS": "",
    }
    subprocess.run([go, "build", "-o", str(out), str(SOURCE)], check=True, env=env)
    return out


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    return path


def check(binary: Path, folder: Path, log: VerifierKey, *extra: str) -> tuple[int, str]:
    done = subprocess.run(
        [str(binary), str(folder), str(log), *extra], capture_output=True, text=True
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def cosigned(folder: Path, log: VerifierKey, state: Path) -> None:
    cosign(folder, name=WITNESS, seed=WITNESS_SEED, log_key=log, state=state)


@pytest.fixture
def owned(tmp_path: Path) -> Ledger:
    return owned_ledger(tmp_path / "chain")


def test_go_verifies_every_entry_and_the_witness(
    tlogcheck: Path, owned: Ledger, tmp_path: Path
) -> None:
    folder = tmp_path / "log"
    log = log_key_of(owned, folder)
    cosigned(folder, log, tmp_path / "w.json")
    code, out = check(tlogcheck, folder, log, "-witness", str(witness_key()))
    assert (0, "ok size=300 entries=300 cosigned-by=1") == (code, out)


def test_go_verifies_consistency_across_tile_boundaries(
    tlogcheck: Path, owned: Ledger, tmp_path: Path
) -> None:
    """300 -> 556 -> 70,000 would be slow to build; 300 -> 556 -> 1,000 crosses full tiles
    at level 0 and a partial tile at level 1 each time."""
    folder, state = tmp_path / "log", tmp_path / "w.json"
    log = log_key_of(owned, folder)
    cosigned(folder, log, state)
    old = tmp_path / "checkpoint.300"
    shutil.copy(folder / "checkpoint", old)
    publish(grow(owned, 256), folder)
    cosigned(folder, log, state)
    code, out = check(tlogcheck, folder, log, "-old", str(old), "-witness", str(witness_key()))
    assert (0, "ok size=556 entries=556 consistent-from=300 cosigned-by=1") == (code, out)
    old = tmp_path / "checkpoint.556"
    shutil.copy(folder / "checkpoint", old)
    publish(grow(owned, 444), folder)
    code, out = check(tlogcheck, folder, log, "-old", str(old))
    assert (0, "ok size=1000 entries=1000 consistent-from=556") == (code, out)


def test_go_refuses_a_tampered_tile(tlogcheck: Path, owned: Ledger, tmp_path: Path) -> None:
    folder = tmp_path / "log"
    log = log_key_of(owned, folder)
    tile = folder / "tile/0/000"
    data = bytearray(tile.read_bytes())
    data[100] ^= 0x01
    tile.write_bytes(bytes(data))
    code, out = check(tlogcheck, folder, log)
    assert 1 == code and out.startswith("FAIL:"), out


def test_go_refuses_a_fork_and_a_rollback(tlogcheck: Path, tmp_path: Path) -> None:
    """The log at 300 and a copy of the chain at 200 grown otherwise (a fork), published
    to a fresh folder: not consistent with the checkpoint at 300; the copy at 200 alone
    (a rollback) cannot extend it either."""
    copy = rolled_back_pair(tmp_path / "chain", tmp_path / "copy")
    owner = Ledger(tmp_path / "chain")
    folder = tmp_path / "log"
    log = log_key_of(owner, folder)
    old = tmp_path / "checkpoint.300"
    shutil.copy(folder / "checkpoint", old)
    assert 300 == parse_checkpoint(old.read_bytes()).size
    rolled = tmp_path / "rolled"
    publish(copy, rolled)
    code, out = check(tlogcheck, rolled, log, "-old", str(old))
    assert 1 == code and "FAIL" in out, out
    forked = tmp_path / "forked"
    publish(grow(copy, 150, word="other"), forked)
    code, out = check(tlogcheck, forked, log)
    assert 0 == code, out  # a fork is a well-formed log on its own ...
    code, out = check(tlogcheck, forked, log, "-old", str(old))
    assert 1 == code and "does not extend" in out, out  # ... that does not extend what was seen


def test_go_refuses_a_missing_cosignature(tlogcheck: Path, owned: Ledger, tmp_path: Path) -> None:
    folder = tmp_path / "log"
    log = log_key_of(owned, folder)
    code, out = check(tlogcheck, folder, log, "-witness", str(witness_key()))
    assert 1 == code and "not cosigned" in out, out

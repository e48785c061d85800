"""The auditor: a proof file and a pinned key, in a fresh process, with nothing else.

The operator makes a proof bundle (`memory-chain prove`) and hands it over
with the chain's public key (agent.pub). The auditor runs `verify-proof` in
a new process whose working directory and HOME are an empty folder, with no
MEMORY_CHAIN_* variable and no data directory anywhere it could find one.
Nothing may be read from, or written to, anywhere but the two files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.cli import SCRIPT, Cli

from memory_chain.chain.format.keys import Signer, write_public_key_file

ATTACKER_SEED = bytes([0xA7]) * 32  # test-only


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The operator's witness and verification cache live in this test's own state folder."""
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    return path


@dataclass
class Handed:
    """What the auditor received, in an otherwise empty folder."""

    folder: Path
    proof: str
    key: str
    chain_id: str
    seq: int


@pytest.fixture
def handed(populated: Cli, tmp_path: Path) -> Handed:
    """A bundle for seq 3 (with its content, against the checkpoint of size 5) and
    agent.pub, copied to an empty folder."""
    populated.ok("checkpoint")
    populated.ok("add", "after the checkpoint")
    folder = tmp_path / "auditor"
    folder.mkdir()
    populated.ok("prove", "3", "--content", "-o", str(folder / "entry3.proof.json"))
    shutil.copyfile(populated.root / "agent.pub", folder / "agent.pub")
    chain_id = populated.ok("keys", "show", "--json").json()["chain_id"]
    assert ["agent.pub", "entry3.proof.json"] == sorted(p.name for p in folder.iterdir())
    return Handed(folder, "entry3.proof.json", "agent.pub", chain_id, 3)


def audit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run memory-chain in a fresh process: cwd and HOME are ``folder``, no MEMORY_CHAIN_*."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_CHAIN_", "XDG_")) and k not in ("HOME", "PWD")
    }
    env["HOME"] = str(folder)
    before = sorted(p.name for p in folder.rglob("*"))
    done = subprocess.run(
        [SCRIPT, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert before == sorted(p.name for p in folder.rglob("*")), "the auditor's folder changed"
    return done


def test_auditor_with_the_pinned_key(handed: Handed) -> None:
    """Proof file + agent.pub only: exit 0 and the ok line naming the entry, chain and key."""
    done = audit(handed.folder, "verify-proof", handed.proof, "--trusted-key", handed.key)
    assert (0, "") == (done.returncode, done.stderr)
    lines = done.stdout.splitlines()
    key = (handed.folder / handed.key).read_text().strip()
    assert lines[0].startswith("ok: entry 3 (fact, ")
    assert f"is in chain {handed.chain_id}, signed by {key}" in lines[0]
    assert lines[0].endswith("included in the checkpoint of size 5")
    assert "content matches the entry's hash" == lines[1]


def test_auditor_with_the_chain_id(handed: Handed) -> None:
    """The same with the chain id pinned (alone, and with the key): exit 0."""
    for pins in (
        ("--chain-id", handed.chain_id),
        ("--chain-id", handed.chain_id, "--trusted-key", handed.key),
    ):
        done = audit(handed.folder, "verify-proof", handed.proof, *pins)
        assert (0, "") == (done.returncode, done.stderr)
        assert done.stdout.startswith("ok: entry 3 ")


def test_auditor_with_the_wrong_key(handed: Handed) -> None:
    """Another key's .pub file pinned: exit 1, one error line saying the key is not trusted."""
    write_public_key_file(handed.folder / "other.pub", Signer(ATTACKER_SEED).key_id)
    done = audit(handed.folder, "verify-proof", handed.proof, "--trusted-key", "other.pub")
    assert (1, "") == (done.returncode, done.stdout)
    assert done.stderr.startswith("error: the proof does not verify: the trusted key ")
    assert 1 == len(done.stderr.splitlines())


def test_auditor_with_the_wrong_chain_id(handed: Handed) -> None:
    """Another chain id pinned: exit 1."""
    done = audit(handed.folder, "verify-proof", handed.proof, "--chain-id", "b3:" + "0" * 64)
    assert (1, "") == (done.returncode, done.stdout)
    assert "is not the pinned b3:" + "0" * 64 in done.stderr


def test_auditor_as_a_module(handed: Handed) -> None:
    """`python -m memory_chain.cli.main` behaves as the console script: the ok line and exit 0
    with the right key, exit 1 with another key."""
    write_public_key_file(handed.folder / "other.pub", Signer(ATTACKER_SEED).key_id)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CHAIN_", "XDG_"))}
    env["HOME"] = str(handed.folder)
    module = [sys.executable, "-m", "memory_chain.cli.main", "verify-proof", handed.proof]
    codes = []
    for key in (handed.key, "other.pub"):
        done = subprocess.run(
            [*module, "--trusted-key", key],
            cwd=handed.folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        codes.append((done.returncode, done.stdout.startswith("ok: entry 3 ")))
    assert [(0, True), (1, False)] == codes

"""Proof bundles, consistency proofs and checkpoints under attack: one named fixture per attack.

The base chain (``chain``) is a genesis entry plus seven content entries,
signed by a fixed owner key with fixed timestamps, and a checkpoint of all
eight entries made through ``checkpointing.checkpoint`` (so the local
witness, in this test's own state folder, knows it too). Each attack
fixture builds what the attacker hands over; its test asserts the exact
reason the verifier gives.

Proof bundles are verified with ``bundle.verify_bundle`` (the function
behind `memory-chain verify-proof`), consistency files with
``proofs.check_consistency_file``, chains with ``audit.verify_ledger``.
"""

from __future__ import annotations

import itertools
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.cli import Cli, assert_rejected

from memory_chain.chain.audit.checkpointing import checkpoint
from memory_chain.chain.audit.proofs import check_consistency_file, prove_consistency, prove_entry
from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.canonical import b3, canonical
from memory_chain.chain.format.entry import signing_message
from memory_chain.chain.format.errors import IntegrityError
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.lifecycle.rotate import rotate
from memory_chain.chain.log.bundle import BundleError, verify_bundle
from memory_chain.chain.log.checkpoint import Checkpoint, make_checkpoint
from memory_chain.chain.log.merkle import (
    BLAKE3,
    consistency_proof,
    inclusion_proof,
    root_of,
    verify_inclusion,
)
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify.lines import Report

# Test-only seeds: fixed so that failures reproduce, worthless outside tests.
OWNER_SEED = bytes([7]) * 32
ATTACKER_SEED = bytes([0xA7]) * 32
START_MICROS = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
TEXTS = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta"]


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test's witness and verification cache live in its own state folder."""
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return path


@dataclass
class Chain:
    """A valid chain on disk, its owner's key and its checkpoint of every entry."""

    ledger: Ledger
    owner: Signer
    checkpoint: Checkpoint

    @property
    def root(self) -> Path:
        return self.ledger.layout.root

    @property
    def lines(self) -> list[bytes]:
        """The chain's lines without their newlines."""
        return self.ledger.layout.chain.read_bytes().splitlines()

    @property
    def chain_id(self) -> str:
        return b3(self.lines[0])

    def bundle(self, seq: int, **kwargs: Any) -> dict[str, Any]:
        obj: dict[str, Any] = orjson.loads(prove_entry(self.ledger, seq, **kwargs))
        return obj

    def write_lines(self, lines: list[bytes]) -> None:
        self.ledger.layout.chain.write_bytes(b"".join(line + b"\n" for line in lines))


def clock() -> Any:
    return itertools.count(START_MICROS, 1_000_000).__next__


def make_chain(root: Path, signer: Signer, texts: list[bytes] = TEXTS) -> Ledger:
    ledger = Ledger.init(root, name="victim", signer=signer, clock=clock())
    for i, text in enumerate(texts):
        ledger.add(NewEntry(text, type="memory", tier="relationship", meta={"n": i}))
    return ledger


@pytest.fixture
def chain(tmp_path: Path) -> Chain:
    """Genesis plus seven entries by the owner, checkpointed at size 8."""
    owner = Signer(OWNER_SEED)
    ledger = make_chain(tmp_path / "chain", owner)
    return Chain(ledger, owner, checkpoint(ledger).checkpoint)


def resigned(obj: dict[str, Any], signer: Signer) -> bytes:
    """``obj`` with its key set to ``signer``'s and signed by it (a line, no newline)."""
    obj = {k: v for k, v in obj.items() if k != "sig"}
    obj["key"] = signer.key_id
    obj["sig"] = signer.sign(signing_message(obj))
    line: bytes = canonical(obj)
    return line


def relinked(lines: list[bytes], start: int, signer: Signer) -> list[bytes]:
    """``lines`` with every line from ``start`` on re-linked to the one before and re-signed."""
    out = list(lines[:start])
    for line in lines[start:]:
        obj = orjson.loads(line)
        obj["prev"] = b3(out[-1])
        out.append(resigned(obj, signer))
    return out


def leaves(lines: list[bytes]) -> list[bytes]:
    return [BLAKE3.leaf(line) for line in lines]


def proved(lines: list[bytes], seq: int, size: int | None = None) -> dict[str, Any]:
    """A bundle's {"line", "inclusion"} for ``lines[seq]`` in the tree of the first ``size``."""
    tree = leaves(lines[: size if size is not None else len(lines)])
    return {
        "line": lines[seq].decode(),
        "inclusion": [h.hex() for h in inclusion_proof(BLAKE3, tree, seq)],
    }


def dumps(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj)


def assert_bundle_rejected(data: bytes, reason: str, text: str, **pins: str) -> None:
    """verify_bundle refuses ``data`` with ``reason``, saying ``text``."""
    with pytest.raises(BundleError) as caught:
        verify_bundle(data, **pins)
    assert (reason, True) == (caught.value.reason, text in caught.value.message), (
        caught.value.reason,
        caught.value.message,
    )


def assert_failure(report: Report, seq: int, step: int, reason: str, text: str) -> None:
    """The report fails first at ``seq``, in ``step``, for ``reason``, saying ``text``."""
    failure = report.failure
    assert failure is not None, "the tampered chain verified"
    assert (False, seq, step, reason) == (report.ok, failure.seq, failure.step, failure.reason)
    assert text in failure.message, failure.message


def test_base_bundle_verifies(chain: Chain) -> None:
    """An honest bundle verifies with the owner's key pinned and with the chain id pinned."""
    data = prove_entry(chain.ledger, 3, with_content=True)
    by_key = verify_bundle(data, trusted_key=chain.owner.key_id)
    by_id = verify_bundle(data, chain_id=chain.chain_id)
    assert (3, b"gamma", 8) == (by_key.seq, by_key.content, by_key.checkpoint.size)
    assert (by_key.chain_id, by_key.key) == (by_id.chain_id, by_id.key)


def test_unpinned_bundle_proves_nothing(chain: Chain) -> None:
    """A bundle checked with neither a key nor a chain id pinned is refused as unpinned."""
    assert_bundle_rejected(prove_entry(chain.ledger, 1), "unpinned", "pin a key or a chain id")


# -- a forged entry with a valid-looking proof ----------------------------------


@pytest.fixture
def forged_entry_with_proof(chain: Chain) -> bytes:
    """Seq 3 replaced by a line signed by the attacker, with its inclusion proof recomputed
    over the forged tree, next to the owner's real signed checkpoint of the real tree."""
    attacker = Signer(ATTACKER_SEED)
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["meta"] = {"n": 2, "forged": True}
    lines[3] = resigned(obj, attacker)
    bundle = chain.bundle(3)
    bundle["entry"] = proved(lines, 3)
    return dumps(bundle)


def test_forged_entry_with_proof(forged_entry_with_proof: bytes, chain: Chain) -> None:
    """The recomputed proof leads to the forged tree's root, not the signed one: bad-inclusion."""
    assert_bundle_rejected(
        forged_entry_with_proof,
        "bad-inclusion",
        "entry (seq 3) is not in the checkpoint's tree: the proof does not lead to the root",
        trusted_key=chain.owner.key_id,
    )


@pytest.fixture
def forged_entry_with_forged_checkpoint(chain: Chain, tmp_path: Path) -> bytes:
    """The attacker forges the whole history: the owner's entries re-signed by the
    attacker's key from genesis on, seq 3 changed, and a checkpoint the attacker signs."""
    attacker = Signer(ATTACKER_SEED)
    texts = list(TEXTS)
    texts[2] = b"the attacker's version"
    ledger = make_chain(tmp_path / "forged", attacker, texts)
    checkpoint(ledger)
    return prove_entry(ledger, 3, with_content=True)


def test_forged_entry_with_forged_checkpoint(
    forged_entry_with_forged_checkpoint: bytes, chain: Chain
) -> None:
    """Internally consistent, so only the pins reject it: untrusted-key, chain-id-mismatch."""
    data = forged_entry_with_forged_checkpoint
    attacker = Signer(ATTACKER_SEED).key_id
    assert b"the attacker's version" == verify_bundle(data, trusted_key=attacker).content
    assert_bundle_rejected(
        data,
        "untrusted-key",
        f"the trusted key {chain.owner.key_id} is neither the genesis key {attacker}",
        trusted_key=chain.owner.key_id,
    )
    assert_bundle_rejected(
        data, "chain-id-mismatch", f"is not the pinned {chain.chain_id}", chain_id=chain.chain_id
    )


@pytest.fixture
def real_history_forged_checkpoint(chain: Chain) -> bytes:
    """The owner's real genesis with a forged seq 3 and a checkpoint of the forged tree
    signed by the attacker (the only key the attacker holds)."""
    attacker = Signer(ATTACKER_SEED)
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["meta"] = {"forged": True}
    lines[3] = resigned(obj, attacker)
    forged_cp = make_checkpoint(
        chain.chain_id, len(lines), root_of(BLAKE3, leaves(lines)), attacker
    )
    bundle = chain.bundle(3)
    bundle.update(
        checkpoint=forged_cp.text.decode(), genesis=proved(lines, 0), entry=proved(lines, 3)
    )
    return dumps(bundle)


def test_real_history_forged_checkpoint(
    real_history_forged_checkpoint: bytes, chain: Chain
) -> None:
    """The checkpoint must be signed by the chain's own key in force at its size."""
    for pins in ({"trusted_key": chain.owner.key_id}, {"chain_id": chain.chain_id}):
        assert_bundle_rejected(
            real_history_forged_checkpoint,
            "bad-checkpoint-signature",
            f"the checkpoint is not signed by {chain.owner.key_id}",
            **pins,
        )


# -- a proof for a different tree size ------------------------------------------


SIZES = {"same-path-length": (5, 8), "longer-path": (8, 13)}


@pytest.fixture(params=list(SIZES))
def proof_for_other_size(request: pytest.FixtureRequest, chain: Chain) -> tuple[bytes, int, int]:
    """A valid inclusion proof of seq 2 in the tree of size n, presented in a bundle with
    the owner's checkpoint of size m (5 -> 8: both paths have 3 hashes; 8 -> 13: 3 vs 4).
    Everything else in the bundle is honest for size m: only the entry's proof is stale."""
    n, m = SIZES[request.param]
    tree = leaves(chain.lines[:n])
    stale = proved(chain.lines, 2, n)
    proof = [bytes.fromhex(h) for h in stale["inclusion"]]
    verify_inclusion(BLAKE3, 2, n, tree[2], proof, root_of(BLAKE3, tree))  # valid for n
    for i in range(m - 8):
        chain.ledger.add(NewEntry(f"later {i}".encode()))
    assert m == checkpoint(chain.ledger).checkpoint.size
    bundle = chain.bundle(2)
    assert bundle["entry"]["inclusion"] != stale["inclusion"]
    bundle["entry"] = stale
    return dumps(bundle), n, m


def test_proof_for_other_size(proof_for_other_size: tuple[bytes, int, int], chain: Chain) -> None:
    """Checked against the checkpoint it came with, a size-n proof fails: bad-inclusion."""
    data, _n, m = proof_for_other_size
    text = {
        8: "the proof does not lead to the root",
        13: "proof has 3 hashes; leaf 2 of 13 needs 4",
    }
    assert_bundle_rejected(
        data,
        "bad-inclusion",
        f"entry (seq 2) is not in the checkpoint's tree: {text[m]}",
        trusted_key=chain.owner.key_id,
    )


def test_whole_bundle_with_a_later_checkpoint(chain: Chain) -> None:
    """A whole size-8 bundle with the size-10 checkpoint swapped in fails at the genesis proof."""
    bundle = chain.bundle(2)
    chain.ledger.add(NewEntry(b"later 1"))
    chain.ledger.add(NewEntry(b"later 2"))
    bundle["checkpoint"] = checkpoint(chain.ledger).checkpoint.text.decode()
    assert_bundle_rejected(
        dumps(bundle),
        "bad-inclusion",
        "genesis (seq 0) is not in the checkpoint's tree",
        trusted_key=chain.owner.key_id,
    )


# -- a checkpoint signed by another key --------------------------------------------


@pytest.fixture
def bundle_checkpoint_by_another_key(chain: Chain) -> bytes:
    """An honest bundle whose checkpoint (same size, same root) is re-signed by the attacker."""
    cp = chain.checkpoint
    bundle = chain.bundle(4)
    forged = make_checkpoint(chain.chain_id, cp.size, cp.root, Signer(ATTACKER_SEED))
    bundle["checkpoint"] = forged.text.decode()
    return dumps(bundle)


def test_bundle_checkpoint_by_another_key(
    bundle_checkpoint_by_another_key: bytes, chain: Chain
) -> None:
    """The right tree and the right entry, but the checkpoint is not the owner's: refused."""
    assert_bundle_rejected(
        bundle_checkpoint_by_another_key,
        "bad-checkpoint-signature",
        f"the checkpoint is not signed by {chain.owner.key_id}, the key in force at size 8",
        chain_id=chain.chain_id,
    )


@pytest.fixture
def consistency_by_another_key(chain: Chain) -> bytes:
    """An honest consistency file from size 8 to 11 whose new checkpoint (same size and
    root) is re-signed by the attacker."""
    old = chain.checkpoint
    for i in range(3):
        chain.ledger.add(NewEntry(f"more {i}".encode()))
    new = checkpoint(chain.ledger).checkpoint
    obj = orjson.loads(prove_consistency(chain.ledger, old, new).to_json())
    obj["new"] = make_checkpoint(
        chain.chain_id, new.size, new.root, Signer(ATTACKER_SEED)
    ).text.decode()
    return dumps(obj)


def test_consistency_by_another_key(
    consistency_by_another_key: bytes, chain: Chain, tmp_path: Path
) -> None:
    """check_consistency_file and `verify-proof` refuse it: checkpoint-signature, exit 1."""
    with pytest.raises(BundleError) as caught:
        check_consistency_file(consistency_by_another_key, trusted_key=chain.owner.key_id)
    assert ("checkpoint-signature", 2) == (caught.value.reason, caught.value.step)
    assert (
        f"the new checkpoint is not signed by the trusted key {chain.owner.key_id}"
        == caught.value.message
    )
    path = tmp_path / "c.json"
    path.write_bytes(consistency_by_another_key)
    cli = Cli(chain.root, tmp_path / "home")
    result = cli.run("verify-proof", str(path), "--trusted-key", chain.owner.key_id)
    assert (1, "") == (result.code, result.out)
    assert result.err.startswith("error: the new checkpoint is not signed by the trusted key")


# -- a consistency proof between forked histories -----------------------------------


@dataclass
class Fork:
    """Two chains of one owner and one chain id, sharing their first four entries."""

    left: Ledger
    right: Ledger
    old: Checkpoint  # the left chain at size 6
    new: Checkpoint  # the right chain at size 7
    owner: Signer


def signed_checkpoint(ledger: Ledger, signer: Signer) -> Checkpoint:
    lines = ledger.layout.chain.read_bytes().splitlines()
    return make_checkpoint(b3(lines[0]), len(lines), root_of(BLAKE3, leaves(lines)), signer)


@pytest.fixture
def forked_histories(tmp_path: Path) -> Fork:
    """Genesis plus three shared entries, then two different continuations, each
    checkpointed by the owner's key (the key holder equivocates)."""
    owner = Signer(OWNER_SEED)
    left = make_chain(tmp_path / "left", owner, TEXTS[:3])
    shutil.copytree(left.layout.root, tmp_path / "right")
    right = Ledger(tmp_path / "right", clock=clock())
    for text in (b"left 4", b"left 5"):
        left.add(NewEntry(text))
    for text in (b"right 4", b"right 5", b"right 6"):
        right.add(NewEntry(text))
    old, new = signed_checkpoint(left, owner), signed_checkpoint(right, owner)
    assert (6, 7, old.origin) == (old.size, new.size, new.origin)
    return Fork(left, right, old, new, owner)


def test_forked_histories_cli(forked_histories: Fork, tmp_path: Path) -> None:
    """`consistency OLD NEW` in the right chain refuses the left checkpoint: exit 1."""
    fork = forked_histories
    (tmp_path / "old.note").write_bytes(fork.old.text)
    (tmp_path / "new.note").write_bytes(fork.new.text)
    cli = Cli(fork.right.layout.root, tmp_path / "home")
    result = cli.run(
        "consistency",
        str(tmp_path / "old.note"),
        str(tmp_path / "new.note"),
        "-o",
        str(tmp_path / "c.json"),
    )
    assert (1, "") == (result.code, result.out)
    assert "does not extend" in result.err and "the proof does not lead to root1" in result.err
    assert not (tmp_path / "c.json").exists()


def test_forked_histories_file(forked_histories: Fork) -> None:
    """A consistency file with a proof made from the right tree fails check_consistency_file;
    so does the same-size fork (both histories at size 6)."""
    fork = forked_histories
    right_lines = fork.right.layout.chain.read_bytes().splitlines()
    proof = consistency_proof(BLAKE3, leaves(right_lines), 6, 7)
    data = dumps(
        {
            "format": "memory-chain-consistency/1",
            "old": fork.old.text.decode(),
            "new": fork.new.text.decode(),
            "proof": [h.hex() for h in proof],
        }
    )
    with pytest.raises(BundleError) as caught:
        check_consistency_file(data, trusted_key=fork.owner.key_id)
    assert ("inconsistent", 5, True) == (
        caught.value.reason,
        caught.value.step,
        "does not lead to root1" in caught.value.message,
    )
    same_size = make_checkpoint(
        fork.old.chain_id or "", 6, root_of(BLAKE3, leaves(right_lines[:6])), fork.owner
    )
    data = dumps(
        {
            "format": "memory-chain-consistency/1",
            "old": fork.old.text.decode(),
            "new": same_size.text.decode(),
            "proof": [],
        }
    )
    with pytest.raises(BundleError) as caught:
        check_consistency_file(data, trusted_key=fork.owner.key_id)
    assert ("inconsistent", 5, True) == (
        caught.value.reason,
        caught.value.step,
        "equal sizes with different roots" in caught.value.message,
    )


def test_forked_histories_prove(forked_histories: Fork) -> None:
    """prove_consistency on either chain refuses the other's checkpoint."""
    fork = forked_histories
    with pytest.raises(IntegrityError) as caught:
        prove_consistency(fork.right, fork.old, fork.new)
    assert "inconsistent" == caught.value.reason
    left_old = signed_checkpoint(fork.left, fork.owner)
    fork.left.add(NewEntry(b"left 6"))
    with pytest.raises(IntegrityError) as caught:
        prove_consistency(fork.left, left_old, fork.new)
    assert "inconsistent" == caught.value.reason


# -- a truncated chain ----------------------------------------------------------


@pytest.fixture
def truncated_chain(chain: Chain) -> Chain:
    """Two entries added after the checkpoint of size 8, then the chain cut to 6 entries."""
    chain.ledger.add(NewEntry(b"after 1"))
    chain.ledger.add(NewEntry(b"after 2"))
    assert verify_ledger(chain.ledger).ok  # the verification cache now covers 10 entries
    chain.write_lines(chain.lines[:6])
    return chain


def test_truncated_chain(truncated_chain: Chain) -> None:
    """verify fails at step 13, truncated, naming the stored checkpoint and both sizes."""
    for incremental in (True, False):
        report = verify_ledger(Ledger(truncated_chain.root), incremental=incremental)
        assert_failure(
            report,
            6,
            13,
            "truncated",
            "chain has 6 entries; the checkpoint in checkpoints/00000000000000000008.note "
            "commits to 8",
        )


def test_truncated_chain_witness_only(truncated_chain: Chain) -> None:
    """With checkpoints/, the checkpoint file and head.json deleted too, the witness still
    catches it (verify: step 13; add: refused with nothing written)."""
    root = truncated_chain.root
    shutil.rmtree(root / "checkpoints")
    (root / "checkpoint").unlink()
    (root / "head.json").unlink()
    report = verify_ledger(Ledger(root))
    assert_failure(report, 6, 13, "truncated", "chain has 6 entries; checkpoint from ")
    assert report.failure is not None
    assert report.failure.message.endswith("(witness) commits to 8")
    before = truncated_chain.ledger.layout.chain.read_bytes()
    with pytest.raises(IntegrityError) as caught:
        Ledger(root).add(NewEntry(b"regrow"))
    assert ("truncated", 6) == (caught.value.reason, caught.value.seq)
    assert "chain has 6 entries; checkpoint from " in caught.value.message
    assert before == truncated_chain.ledger.layout.chain.read_bytes()


def test_truncated_chain_cli(truncated_chain: Chain, tmp_path: Path) -> None:
    """`memory-chain verify` exits 1 and prints the failure with its seq, step and sizes."""
    result = Cli(truncated_chain.root, tmp_path / "home").run("verify")
    assert 1 == result.code
    assert result.err.startswith("FAILED at seq 6: chain has 6 entries; ")
    assert "commits to 8 (step 13, truncated)" in result.err


# -- a chain rewritten after a checkpoint ---------------------------------------------


def rewrite(chain: Chain, size: int) -> None:
    """The key holder edits seq 2 and re-signs and re-links every entry after it,
    keeping the first ``size`` entries; head.json goes too (it would give it away)."""
    lines = chain.lines
    obj = orjson.loads(lines[2])
    obj["meta"] = {"n": 1, "rewritten": True}
    lines[2] = resigned(obj, chain.owner)
    chain.write_lines(relinked(lines, 3, chain.owner)[:size])
    (chain.root / "head.json").unlink()


@pytest.fixture
def rewritten_chain(chain: Chain) -> Chain:
    """Seq 2 rewritten below the checkpoint of size 8, everything re-signed, two entries
    added after it: a chain that verifies on its own, except against the checkpoint."""
    chain.ledger.add(NewEntry(b"after 1"))
    chain.ledger.add(NewEntry(b"after 2"))
    rewrite(chain, 10)
    return chain


def test_rewritten_chain(rewritten_chain: Chain) -> None:
    """verify fails at the checkpoint's size (seq 7), step 13, rewritten, with or without
    the cache; the witness alone catches it when the stored checkpoints are gone."""
    root = rewritten_chain.root
    text = "the first 8 entries do not have the Merkle root that"
    for incremental in (True, False):
        report = verify_ledger(Ledger(root), incremental=incremental)
        assert_failure(report, 7, 13, "rewritten", text)
    # Without the checkpoint, the rewritten chain is a valid chain of its own.
    shutil.rmtree(root / "checkpoints")
    (root / "checkpoint").unlink()
    report = verify_ledger(Ledger(root))
    assert_failure(report, 7, 13, "rewritten", text)
    assert report.failure is not None and "(witness)" in report.failure.message


@pytest.fixture
def rewritten_at_checkpoint_size(chain: Chain) -> Chain:
    """Seq 2 rewritten and the chain re-signed at exactly the checkpoint's size (8)."""
    rewrite(chain, 8)
    return chain


def test_rewritten_at_checkpoint_size(rewritten_at_checkpoint_size: Chain) -> None:
    """An add to a chain of the witnessed size with another root is refused: rewritten."""
    chain = rewritten_at_checkpoint_size
    before = chain.ledger.layout.chain.read_bytes()
    with pytest.raises(IntegrityError) as caught:
        Ledger(chain.root).add(NewEntry(b"on top of the rewrite"))
    assert ("rewritten", 7) == (caught.value.reason, caught.value.seq)
    assert "the chain's 8 entries do not have the root" in caught.value.message
    assert before == chain.ledger.layout.chain.read_bytes()
    assert_failure(verify_ledger(Ledger(chain.root)), 7, 13, "rewritten", "the first 8 entries")


# -- prove: refusals ------------------------------------------------------------


def test_prove_content_of_redacted_entry(populated: Cli) -> None:
    """`prove 2 --content` for a redacted entry exits 2 saying the content was redacted;
    without --content the entry is still proved."""
    populated.ok("redact", "2", "--reason", "expired")
    result = assert_rejected(populated, "prove", "2", "--content")
    assert (
        "error: the content of entry 2 was redacted (its blob is gone)"
        == result.err.splitlines()[0]
    )
    bundle = orjson.loads(populated.ok("prove", "2").out)
    assert "content" not in bundle
    assert 2 == orjson.loads(bundle["entry"]["line"])["seq"]


def test_prove_content_of_entry_without_content(populated: Cli) -> None:
    """`prove 0 --content` (the genesis entry has none) exits 2 with one clear line."""
    result = assert_rejected(populated, "prove", "0", "--content")
    assert "error: entry 0 has no content" == result.err.splitlines()[0]


def test_prove_beyond_the_chain(populated: Cli) -> None:
    """`prove 99` on a five-entry chain exits 2 naming the seq and the chain's size."""
    result = assert_rejected(populated, "prove", "99")
    assert "error: no entry with seq 99 (the chain has 5)" == result.err.splitlines()[0]


# -- verify-proof: unreadable input -------------------------------------------------

NOT_A_BUNDLE = {
    "missing-file": None,
    "binary-garbage": bytes(range(256)),
    "empty": b"",
    "not-json": b"this is not a proof\n",
    "json-list": b"[1, 2, 3]\n",
    "wrong-format": b'{"format": "memory-chain-proof/999", "entry": {}}\n',
    "no-format": b'{"checkpoint": "x"}\n',
}


@pytest.mark.parametrize("name", list(NOT_A_BUNDLE))
def test_verify_proof_unreadable(name: str, populated: Cli, tmp_path: Path) -> None:
    """verify-proof on a missing, garbage, non-JSON or non-bundle file exits 2 with one
    error line (its help: "2 when it cannot be read")."""
    path = tmp_path / f"{name}.json"
    data = NOT_A_BUNDLE[name]
    if data is not None:
        path.write_bytes(data)
    key = (populated.root / "agent.pub").read_text().strip()
    assert_rejected(populated, "verify-proof", str(path), "--trusted-key", key)


def test_verify_proof_unpinned(populated: Cli, tmp_path: Path) -> None:
    """verify-proof without --trusted-key or --chain-id exits 2: a bundle alone proves nothing."""
    path = tmp_path / "p.json"
    populated.ok("prove", "1", "-o", str(path))
    result = assert_rejected(populated, "verify-proof", str(path))
    assert "hint: pass --trusted-key or --chain-id" == result.err.splitlines()[1]


# -- proof size -----------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 100, 257, 1000, 1025, 4097])
def test_inclusion_proof_size(size: int) -> None:
    """An inclusion proof in a tree of n leaves has at most ceil(log2 n) hashes (so at most
    32 * ceil(log2 n) bytes of hashes), for first, middle and last leaves."""
    tree = [BLAKE3.leaf(i.to_bytes(4, "big")) for i in range(size)]
    bound = math.ceil(math.log2(size))
    lengths = {i: len(inclusion_proof(BLAKE3, tree, i)) for i in {0, size // 2, size - 1}}
    assert {i: True for i in lengths} == {i: n <= bound for i, n in lengths.items()}, (
        bound,
        lengths,
    )
    if size & (size - 1) == 0:  # a perfect tree: every path is exactly log2 n
        assert {bound} == set(lengths.values())


def test_bundle_proof_sizes(tmp_path: Path) -> None:
    """In real bundles at sizes 2..40, every inclusion list has <= ceil(log2 n) hashes."""
    ledger = make_chain(tmp_path / "c", Signer(OWNER_SEED), [])
    seen = {}
    for size in range(2, 41):
        ledger.add(NewEntry(f"entry {size}".encode()))
        cp = make_checkpoint(
            ledger.config.chain_id or "", size, ledger_root(ledger), Signer(OWNER_SEED)
        )
        seq = (size * 7) % size
        bundle = orjson.loads(prove_entry(ledger, seq, checkpoint=cp))
        seen[size] = max(len(bundle["entry"]["inclusion"]), len(bundle["genesis"]["inclusion"]))
    assert {n: True for n in seen} == {n: k <= math.ceil(math.log2(n)) for n, k in seen.items()}


def ledger_root(ledger: Ledger) -> bytes:
    lines = ledger.layout.chain.read_bytes().splitlines()
    return root_of(BLAKE3, leaves(lines))


# -- key rotations ------------------------------------------------------------------


@pytest.fixture
def rotated(chain: Chain) -> tuple[Chain, Signer]:
    """The base chain, a key rotation at seq 8, then two entries by the new key."""
    rotate(chain.ledger)
    new = chain.ledger.signer()
    chain.ledger.add(NewEntry(b"after the rotation 1"))
    chain.ledger.add(NewEntry(b"after the rotation 2"))
    checkpoint(chain.ledger)
    return chain, new


def test_bundle_after_rotation(rotated: tuple[Chain, Signer], tmp_path: Path) -> None:
    """A bundle for seq 10 verifies with the genesis key pinned and with the new key pinned
    (library and `verify-proof`); it names the new key as the entry's signer."""
    chain, new = rotated
    data = prove_entry(chain.ledger, 10)
    for key in (chain.owner.key_id, new.key_id):
        done = verify_bundle(data, trusted_key=key)
        assert (10, new.key_id, [chain.owner.key_id, new.key_id]) == (done.seq, done.key, done.keys)
    path = tmp_path / "p.json"
    path.write_bytes(data)
    cli = Cli(chain.root, tmp_path / "home")
    for key in (chain.owner.key_id, new.key_id):
        result = cli.run("verify-proof", str(path), "--trusted-key", key)
        assert (0, "") == (result.code, result.err)
        assert result.out.startswith("ok: entry 10 (memory, ")
    # An entry from before the rotation is proved signed by the genesis key.
    assert (
        chain.owner.key_id
        == verify_bundle(prove_entry(chain.ledger, 3), trusted_key=new.key_id).key
    )


def test_bundle_with_rotation_removed(rotated: tuple[Chain, Signer]) -> None:
    """Without its rotation line the key history stops at the genesis key, which did not
    sign the checkpoint: bad-checkpoint-signature, whichever key is pinned."""
    chain, new = rotated
    bundle = orjson.loads(prove_entry(chain.ledger, 10))
    assert 1 == len(bundle["rotations"])
    bundle["rotations"] = []
    for key in (chain.owner.key_id, new.key_id):
        assert_bundle_rejected(
            dumps(bundle),
            "bad-checkpoint-signature",
            f"the checkpoint is not signed by {chain.owner.key_id}",
            trusted_key=key,
        )


def test_verify_proof_json_names_the_failed_step(raw: Cli, tmp_path: Path) -> None:
    """verify-proof --json prints ok, step, reason, seq and message on a failure too,
    for bundles and consistency proofs (exit 1; 2 for bad input such as no pin)."""
    raw.ok("add", "Deploys go out on Tuesdays", "--type", "fact")
    key = raw.ok("keys", "export-public").out.strip()
    good = raw.ok("prove", "1", "--content").out.encode()
    bundle = orjson.loads(good)
    bundle["content"] = "QW5vdGhlciBtZW1vcnk="
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(bundle))
    result = raw.run("verify-proof", str(bad), "--trusted-key", key, "--json")
    shown = orjson.loads(result.out)
    assert (1, False, 13, "content-mismatch", 1) == (
        result.code,
        shown["ok"],
        shown["step"],
        shown["reason"],
        shown["seq"],
    )
    assert "does not hash" in shown["message"]
    unpinned = raw.run("verify-proof", str(bad), "--json")
    assert (2, {"ok": False, "step": 1, "reason": "unpinned", "seq": None}) == (
        unpinned.code,
        {k: v for k, v in orjson.loads(unpinned.out).items() if k != "message"},
    )
    raw.ok("checkpoint")
    raw.ok("add", "A second memory")
    raw.ok("checkpoint")
    made = tmp_path / "c.json"
    raw.ok("consistency", "2", "3", "-o", str(made))
    other = Signer(bytes([9]) * 32).key_id
    result = raw.run("verify-proof", str(made), "--trusted-key", other, "--json")
    assert (1, "checkpoint-signature", 2, None) == (
        result.code,
        orjson.loads(result.out)["reason"],
        orjson.loads(result.out)["step"],
        orjson.loads(result.out)["seq"],
    )

"""One fixture per attack on a small valid chain, each test asserting the exact failure.

The base chain (``chain``) is genesis plus four content entries:

    seq 1  memory      relationship  "alpha"
    seq 2  decision    committed     "beta"
    seq 3  fact        ephemeral     "gamma"
    seq 4  lesson      relationship  "delta"

Each attack fixture returns a ``Tampered`` copy (lines, blobs, pins) and
its test runs verify_lines on it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.blobs import alter_blob, delete_blob

from memory_chain.chain.format.canonical import b3, canonical
from memory_chain.chain.format.entry import rotation_message, signing_message
from memory_chain.chain.format.errors import IntegrityError
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify.lines import BlobGetter, Report, verify_lines

# Test-only seeds: fixed so that failures reproduce, worthless outside tests.
OWNER_SEED = bytes([7]) * 32
ATTACKER_SEED = bytes([0xA7]) * 32
START_MICROS = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z


@dataclass
class Chain:
    """A valid chain on disk and what its owner knows about it."""

    ledger: Ledger
    owner: Signer

    @property
    def lines(self) -> list[bytes]:
        with open(self.ledger.layout.chain, "rb") as f:
            return f.readlines()  # split on b"\n" only, as Ledger.iter_lines does

    def entry(self, seq: int) -> dict[str, Any]:
        obj: dict[str, Any] = orjson.loads(self.lines[seq])
        return obj

    def alter_blob(self, seq: int, data: bytes) -> None:
        alter_blob(self.ledger.store, self.entry(seq)["content"], data)

    def delete_blob(self, seq: int) -> None:
        delete_blob(self.ledger.store, self.entry(seq)["content"])

    def stored_blob(self, seq: int) -> bytes | None:
        return self.ledger.store.raw(self.entry(seq)["content"])

    def tampered(self, lines: list[bytes] | None = None) -> Tampered:
        """A Tampered view: ``lines`` (default: the file as it is) with this chain's blobs."""
        first = self.lines[0]
        return Tampered(
            lines=self.lines if lines is None else lines,
            blobs=self.ledger.store.raw,
            trusted_key=self.owner.key_id,
            chain_id=b3(first[:-1]),
        )


@dataclass
class Tampered:
    """What an auditor is handed, plus the pins the auditor holds from before."""

    lines: list[bytes]
    blobs: BlobGetter
    trusted_key: str
    chain_id: str

    def verify(self, *, pin_key: bool = False, pin_chain_id: bool = False) -> Report:
        return verify_lines(
            self.lines,
            blobs=self.blobs,
            trusted_key=self.trusted_key if pin_key else None,
            chain_id=self.chain_id if pin_chain_id else None,
        )


def signed(obj: dict[str, Any], signer: Signer) -> bytes:
    """``obj`` signed by ``signer`` as a chain line (with its newline)."""
    obj = {k: v for k, v in obj.items() if k != "sig"}
    obj["sig"] = signer.sign(signing_message(obj))
    line: bytes = canonical(obj) + b"\n"
    return line


def line_hash(line: bytes) -> str:
    digest: str = b3(line.rstrip(b"\n"))
    return digest


def assert_failure(report: Report, seq: int, step: int, reason: str, text: str) -> None:
    """The report fails first at ``seq``, in ``step``, for ``reason``, saying ``text``."""
    failure = report.failure
    assert failure is not None, "the tampered chain verified"
    assert (False, seq, step, reason) == (report.ok, failure.seq, failure.step, failure.reason)
    assert text in failure.message


@pytest.fixture
def chain(tmp_path: Path) -> Chain:
    """A valid five-entry chain with fixed keys and timestamps."""
    owner = Signer(OWNER_SEED)
    clock = itertools.count(START_MICROS, 1_000_000).__next__
    ledger = Ledger.init(tmp_path / "chain", name="victim", signer=owner, clock=clock)
    ledger.add(NewEntry(b"alpha", type="memory", tier="relationship", meta={"n": 1}))
    ledger.add(NewEntry(b"beta", type="decision", tier="committed", source="curation"))
    ledger.add(NewEntry(b"gamma", type="fact", tier="ephemeral", source="auto"))
    ledger.add(NewEntry(b"delta", type="lesson", tier="relationship"))
    return Chain(ledger, owner)


def test_base_chain_verifies(chain: Chain) -> None:
    """The untampered chain verifies with every pin."""
    report = chain.tampered().verify(pin_key=True, pin_chain_id=True)
    expected = (True, 5, None, 0)
    assert expected == (report.ok, report.size, report.failure, report.torn_tail)


# -- content ----------------------------------------------------------------


@pytest.fixture
def edited_content(chain: Chain) -> Tampered:
    """Seq 1's blob rewritten in place."""
    chain.alter_blob(1, b"alpha, but edited")
    return chain.tampered()


def test_edited_content(edited_content: Tampered) -> None:
    """Edited blob bytes fail at their entry, step 10."""
    assert_failure(edited_content.verify(), 1, 10, "content-mismatch", "does not hash to its name")


@pytest.fixture
def swapped_blob(chain: Chain) -> Tampered:
    """Seq 1's blob bytes replaced by seq 3's (cut or repeated to the record's length)."""
    other = chain.stored_blob(3)
    assert other is not None
    chain.alter_blob(1, other)
    return chain.tampered()


def test_swapped_blob(swapped_blob: Tampered) -> None:
    """Another entry's blob under this entry's name fails at step 10."""
    assert_failure(swapped_blob.verify(), 1, 10, "content-mismatch", "does not hash to its name")


@pytest.fixture
def deleted_blob(chain: Chain) -> Tampered:
    """Seq 3's blob deleted, with no redaction entry."""
    chain.delete_blob(3)
    return chain.tampered()


def test_deleted_blob(deleted_blob: Tampered) -> None:
    """A blob deleted without a redaction fails at its seq in step 12, after the whole pass."""
    report = deleted_blob.verify()
    assert_failure(report, 3, 12, "missing-content", "is missing and was not redacted")
    size = len(deleted_blob.lines)
    assert size == report.size


@pytest.fixture
def deleted_blob_then_edited_line(chain: Chain) -> Tampered:
    """Seq 1's blob deleted without a redaction, and seq 3's meta edited (not re-signed)."""
    chain.delete_blob(1)
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["meta"] = {"edited": True}
    lines[3] = canonical(obj) + b"\n"
    return chain.tampered(lines)


def test_deleted_blob_then_edited_line(deleted_blob_then_edited_line: Tampered) -> None:
    """A later hard failure is reported over an earlier missing blob: it marks the tampering."""
    report = deleted_blob_then_edited_line.verify()
    assert_failure(report, 3, 8, "bad-signature", "signature does not verify")


@pytest.fixture
def redacted_blob(chain: Chain) -> Tampered:
    """Seq 3 redacted through the write path, which deletes its blob."""
    done = redact(chain.ledger, 3, "no longer needed")
    assert done.blob_removed
    assert chain.stored_blob(3) is None
    return chain.tampered()


def test_redacted_blob(redacted_blob: Tampered) -> None:
    """A blob deleted by a redaction entry leaves the chain verifiable."""
    report = redacted_blob.verify(pin_key=True, pin_chain_id=True)
    expected = (True, 6, None)
    assert expected == (report.ok, report.size, report.failure)


# -- fields ----------------------------------------------------------------


@pytest.fixture
def edited_tier(chain: Chain) -> Tampered:
    """Seq 3 moved from ephemeral to committed, re-canonicalised but not re-signed."""
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["tier"] = "committed"
    lines[3] = canonical(obj) + b"\n"
    return chain.tampered(lines)


def test_edited_tier(edited_tier: Tampered) -> None:
    """A changed field breaks the entry's signature (step 8)."""
    assert_failure(edited_tier.verify(), 3, 8, "bad-signature", "signature does not verify")


@pytest.fixture
def edited_meta(chain: Chain) -> Tampered:
    """Seq 1's meta value changed, re-canonicalised but not re-signed."""
    lines = chain.lines
    obj = orjson.loads(lines[1])
    obj["meta"] = {"n": 2}
    lines[1] = canonical(obj) + b"\n"
    return chain.tampered(lines)


def test_edited_meta(edited_meta: Tampered) -> None:
    """Changed metadata breaks the entry's signature (step 8)."""
    assert_failure(edited_meta.verify(), 1, 8, "bad-signature", "signature does not verify")


@pytest.fixture
def non_canonical_line(chain: Chain) -> Tampered:
    """Seq 2 with one extra space after its first comma (same JSON value)."""
    lines = chain.lines
    lines[2] = lines[2].replace(b",", b", ", 1)
    return chain.tampered(lines)


def test_non_canonical_line(non_canonical_line: Tampered) -> None:
    """A line that is not its own JCS encoding fails at step 3."""
    assert_failure(non_canonical_line.verify(), 2, 3, "not-canonical", "not in canonical form")


# -- order -----------------------------------------------------------------


@pytest.fixture
def reordered_lines(chain: Chain) -> Tampered:
    """Seq 2 and seq 3 swapped."""
    lines = chain.lines
    lines[2], lines[3] = lines[3], lines[2]
    return chain.tampered(lines)


def test_reordered_lines(reordered_lines: Tampered) -> None:
    """Swapped lines fail at the first moved position, step 4."""
    assert_failure(reordered_lines.verify(), 2, 4, "seq-gap", "expected seq 2, found seq 3")


@pytest.fixture
def deleted_line(chain: Chain) -> Tampered:
    """Seq 2 removed."""
    lines = chain.lines
    del lines[2]
    return chain.tampered(lines)


def test_deleted_line(deleted_line: Tampered) -> None:
    """A deleted line fails where it was, step 4."""
    assert_failure(deleted_line.verify(), 2, 4, "seq-gap", "expected seq 2, found seq 3")


@pytest.fixture
def duplicated_line(chain: Chain) -> Tampered:
    """Seq 2 appears twice in a row."""
    lines = chain.lines
    lines.insert(3, lines[2])
    return chain.tampered(lines)


def test_duplicated_line(duplicated_line: Tampered) -> None:
    """A replayed line fails at the copy, step 4."""
    assert_failure(duplicated_line.verify(), 3, 4, "seq-gap", "expected seq 3, found seq 2")


@pytest.fixture
def forked_prev(chain: Chain) -> Tampered:
    """Seq 3 re-signed by the owner's own key, but linked to seq 1 (a fork)."""
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["prev"] = line_hash(lines[1])
    lines[3] = signed(obj, chain.owner)
    return chain.tampered(lines)


def test_forked_prev(forked_prev: Tampered) -> None:
    """Even the key holder cannot fork: a prev that skips a line fails at step 5."""
    assert_failure(
        forked_prev.verify(), 3, 5, "broken-link", "does not match the previous line's hash"
    )


@pytest.fixture
def backdated_line(chain: Chain) -> Tampered:
    """Seq 3 re-signed by the owner with a ts before seq 2's (links kept consistent)."""
    lines = chain.lines
    obj = orjson.loads(lines[3])
    obj["ts"] = orjson.loads(lines[1])["ts"]
    lines[3] = signed(obj, chain.owner)
    obj = orjson.loads(lines[4])
    obj["prev"] = line_hash(lines[3])
    lines[4] = signed(obj, chain.owner)
    return chain.tampered(lines)


def test_backdated_line(backdated_line: Tampered) -> None:
    """A ts earlier than the previous entry's fails at step 6."""
    assert_failure(backdated_line.verify(), 3, 6, "time-backwards", "is earlier than")


# -- forgery ---------------------------------------------------------------


@pytest.fixture
def inserted_forged_line(chain: Chain) -> Tampered:
    """An attacker-signed seq 2 with a consistent prev (and its blob) inserted after seq 1."""
    attacker = Signer(ATTACKER_SEED)
    lines = chain.lines
    content = chain.ledger.store.put(b"forged memory")
    forged = dict(orjson.loads(lines[2]))
    forged.update(
        content=content,
        size=len(b"forged memory"),
        prev=line_hash(lines[1]),
        key=attacker.key_id,
        ts=orjson.loads(lines[1])["ts"],
    )
    lines.insert(2, signed(forged, attacker))
    return chain.tampered(lines)


def test_inserted_forged_line(inserted_forged_line: Tampered) -> None:
    """A well-linked line signed by a stranger fails at step 7."""
    attacker = Signer(ATTACKER_SEED).key_id
    assert_failure(inserted_forged_line.verify(), 2, 7, "unknown-key", f"signed by {attacker}")


@pytest.fixture
def substituted_key(chain: Chain) -> Tampered:
    """The whole chain re-signed and re-linked by an attacker's key (blobs unchanged)."""
    attacker = Signer(ATTACKER_SEED)
    out: list[bytes] = []
    for line in chain.lines:
        obj = orjson.loads(line)
        obj["key"] = attacker.key_id
        obj["prev"] = line_hash(out[-1]) if out else None
        out.append(signed(obj, attacker))
    return chain.tampered(out)


def test_substituted_key_alone_verifies(substituted_key: Tampered) -> None:
    """Without a pin, a consistently re-signed chain is indistinguishable from a real one."""
    report = substituted_key.verify()
    assert (True, 5, Signer(ATTACKER_SEED).key_id) == (report.ok, report.size, report.key)


def test_substituted_key_fails_trusted_key(substituted_key: Tampered) -> None:
    """With the owner's key pinned, the re-signed chain fails at genesis, step 7."""
    assert_failure(
        substituted_key.verify(pin_key=True), 0, 7, "untrusted-key", "is neither the genesis key"
    )


def test_substituted_key_fails_chain_id(substituted_key: Tampered) -> None:
    """With the chain id pinned, the re-signed chain fails at genesis, step 11."""
    assert_failure(
        substituted_key.verify(pin_chain_id=True), 0, 11, "chain-id-mismatch", "is not the pinned"
    )


def _appended(chain: Chain, obj: dict[str, Any], signer: Signer) -> list[bytes]:
    """The chain's lines plus ``obj`` as seq 5, linked to seq 4 and signed by ``signer``."""
    lines = chain.lines
    last = orjson.loads(lines[-1])
    base = {
        "v": 1,
        "seq": len(lines),
        "ts": last["ts"],
        "tier": "committed",
        "source": "manual",
        "importance": 50,
        "content": None,
        "size": 0,
        "prev": line_hash(lines[-1]),
        "key": signer.key_id,
    }
    return [*lines, signed({**base, **obj}, signer)]


@pytest.fixture
def committed_redaction(chain: Chain) -> Tampered:
    """An owner-signed redaction of committed seq 2 forged into the chain, its blob deleted."""
    target = chain.entry(2)
    lines = _appended(
        chain,
        {
            "type": "redaction",
            "meta": {"target": 2, "content": target["content"], "reason": "rewrite history"},
        },
        chain.owner,
    )
    chain.delete_blob(2)
    return chain.tampered(lines)


def test_committed_redaction(committed_redaction: Tampered) -> None:
    """Committed content cannot be redacted, even by the key holder: step 9."""
    assert_failure(committed_redaction.verify(), 5, 9, "invalid-redaction", "committed tier")


@pytest.fixture
def misnamed_redaction(chain: Chain) -> Tampered:
    """An owner-signed redaction of seq 1 that names seq 3's content hash."""
    lines = _appended(
        chain,
        {
            "type": "redaction",
            "meta": {"target": 1, "content": chain.entry(3)["content"], "reason": "wrong blob"},
        },
        chain.owner,
    )
    return chain.tampered(lines)


def test_misnamed_redaction(misnamed_redaction: Tampered) -> None:
    """A redaction must name its target's own content hash: step 9."""
    assert_failure(misnamed_redaction.verify(), 5, 9, "invalid-redaction", "but seq 1 holds")


@pytest.fixture
def forged_rotation(chain: Chain) -> Tampered:
    """An owner-signed rotation to the attacker's key whose new_sig is by a third key."""
    attacker = Signer(ATTACKER_SEED)
    other = Signer(bytes(32))
    lines = chain.lines
    obj: dict[str, Any] = {"type": "key-rotation", "meta": {"new_key": attacker.key_id}}
    draft = orjson.loads(_appended(chain, obj, chain.owner)[-1])
    draft["meta"]["new_sig"] = other.sign(rotation_message(draft))
    return chain.tampered([*lines, signed(draft, chain.owner)])


def test_forged_rotation(forged_rotation: Tampered) -> None:
    """A rotation needs the new key's own signature: step 9."""
    assert_failure(
        forged_rotation.verify(), 5, 9, "invalid-rotation", "not a valid signature by new_key"
    )


# -- torn tail -------------------------------------------------------------


@pytest.fixture
def torn_last_line(chain: Chain) -> Tampered:
    """An interrupted append: the first 40 bytes of a seq 5 line, without its newline."""
    partial = _appended(chain, {"type": "fact", "meta": {}}, chain.owner)[-1][:40]
    return chain.tampered([*chain.lines, partial])


def test_torn_last_line(torn_last_line: Tampered) -> None:
    """An unterminated last line is a warning (never acknowledged), not a failure."""
    report = torn_last_line.verify(pin_key=True, pin_chain_id=True)
    expected = (True, 5, None, 40)
    assert expected == (report.ok, report.size, report.failure, report.torn_tail)


# -- the write path --------------------------------------------------------


def test_add_refuses_truncated_chain(chain: Chain) -> None:
    """A chain cut below the cached head makes add raise IntegrityError(truncated)."""
    path = chain.ledger.layout.chain
    cut = b"".join(chain.lines[:-1])
    path.write_bytes(cut)
    with pytest.raises(IntegrityError) as caught:
        chain.ledger.add(NewEntry(b"after the cut"))
    expected = "truncated"
    assert expected == caught.value.reason
    assert cut == path.read_bytes()


def test_add_refuses_rewritten_last_line(chain: Chain) -> None:
    """A last line rewritten in place (same length) makes add raise IntegrityError(rewritten)."""
    path = chain.ledger.layout.chain
    lines = chain.lines
    obj = orjson.loads(lines[-1])
    obj["sig"] = ("0" if obj["sig"][0] != "0" else "1") + obj["sig"][1:]
    lines[-1] = canonical(obj) + b"\n"
    data = b"".join(lines)
    assert len(data) == path.stat().st_size
    path.write_bytes(data)
    with pytest.raises(IntegrityError) as caught:
        chain.ledger.add(NewEntry(b"after the rewrite"))
    expected = "rewritten"
    assert expected == caught.value.reason
    assert data == path.read_bytes()

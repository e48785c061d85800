"""Build the golden chain vector: fixed keys, fixed timestamps, same bytes every run.

Usage::

    python tests/vectors/make_golden.py [OUTDIR]     # default: tests/vectors/golden

The chain is built through the real write path (Ledger.init, add, add_batch,
redact, rotate) in a temporary data directory, then only the parts that make
up the vector are copied to OUTDIR:

    chain.jsonl     the entries
    content/        the blobs, one file each, content/<2 hex>/<62 hex> (the
                    layout before packs, FORMAT.md 6.4, which every reader
                    still reads; the redacted entry's blob is absent)
    genesis.pub     the trusted key (the genesis key), as agent.pub holds it
    expected.json   size, head, chain_id and the current key after rotation

head.json, config.json, lock and the key files are not part of the vector.
Nothing here is random or reads the wall clock: tests/test_golden.py
regenerates the vector and requires it to be byte-identical.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from memory_chain.chain.content.store import ContentStore
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.lifecycle.rotate import rotate

# TEST-ONLY secret seeds. They sign nothing but this public test vector; they
# are committed on purpose so that anyone can regenerate it. Never use them
# for a real chain.
GENESIS_SEED = bytes(range(32))
ROTATED_SEED = bytes(range(32, 64))

AGENT_NAME = "golden-agent"
# 2025-01-01T00:00:00.123456Z, then one tick of 1.000001 s per clock reading.
START_MICROS = 1_735_689_600_123_456
TICK_MICROS = 1_000_001

VECTOR_FILES = ("chain.jsonl", "content", "genesis.pub", "expected.json")
DEFAULT_OUT = Path(__file__).resolve().parent / "golden"


def counter_clock(start: int = START_MICROS, tick: int = TICK_MICROS) -> Iterator[int]:
    """Readings start, start + tick, start + 2 * tick, ..."""
    now = start
    while True:
        yield now
        now += tick


@contextmanager
def fixed_rotation_key(signer: Signer) -> Iterator[None]:
    """Make rotate() hand over to ``signer`` instead of a freshly generated key.

    rotate() draws its new key from Signer.generate(); patching that one
    call keeps the real rotation code path (both signatures, key install)
    while making its output deterministic.
    """
    with mock.patch.object(Signer, "generate", return_value=signer):
        yield


def build(root: Path) -> dict[str, object]:
    """Write the golden chain into the new data directory ``root``; return expected.json."""
    ticks = counter_clock()
    genesis = Signer(GENESIS_SEED)
    rotated = Signer(ROTATED_SEED)
    ledger = Ledger.init(root, name=AGENT_NAME, signer=genesis, clock=lambda: next(ticks))
    # seq 1..3: single adds across types, tiers and sources.
    ledger.add(
        NewEntry(
            b"I am golden-agent, a fixture that proves memory-chain's byte format.",
            type="identity",
            tier="committed",
            source="manual",
            meta={"scope": "user"},
        )
    )
    ledger.add(
        NewEntry(
            b"Decision: store content outside the line, addressed by its BLAKE3 hash.",
            type="decision",
            tier="relationship",
            source="curation",
            importance=75,
            meta={
                "context": {
                    "ticket": "MC-42",
                    "refs": [1, 2, 3],
                    "flags": {"urgent": False, "owner": None},
                },
                "max": 9_007_199_254_740_991,
                "min": -9_007_199_254_740_991,
                "zero": 0,
            },
        )
    )
    ledger.add(
        NewEntry(
            "Prefers tea \u2615 over coffee; greets with \u00abGr\u00fc\u00df Gott\u00bb, "
            "\u65e5\u672c\u8a9e too \U0001f9e0".encode(),
            type="preference",
            tier="ephemeral",
            source="auto",
            meta={
                "lang": "de-AT",
                "note": "\u00fcn\u00efc\u00f6d\u00e9 \u2713 \U0001f600",
                "escapes": 'tab\there, newline\nhere, "quoted", back\\slash, bell\u0007, del\u007f',
                "separators": "\u2028\u2029",
            },
        )
    )
    # seq 4..6: one batch (one shared ts).
    ledger.add_batch(
        [
            NewEntry(
                b"The build server is ci-01.",
                type="fact",
                tier="relationship",
                source="auto",
                meta={"host": "ci-01", "port": 8443},
            ),
            NewEntry(
                b"Lesson: run the golden test after touching canonical.py.",
                type="lesson",
                tier="committed",
                source="curation",
                importance=95,
                meta={"tags": ["format", "tests"], "weight": -3},
            ),
            NewEntry(
                b"Episode: the nightly job ran in 42 s.",
                type="episode",
                tier="ephemeral",
                source="auto",
                meta={},
            ),
        ]
    )
    # seq 7, redacted by seq 8: its blob is deleted.
    secret = ledger.add(
        NewEntry(
            b"A hint that must not be kept: the staging password starts with 'x'.",
            type="memory",
            tier="ephemeral",
            source="auto",
            meta={"sensitive": True},
        )
    )
    done = redact(ledger, secret.seq, "contained a credential hint")
    assert done.blob_removed, "the redacted blob should be deleted"
    # seq 9: hand over to the second fixed key.
    with fixed_rotation_key(rotated):
        rotate(ledger)
    # seq 10..11: signed by the new key; seq 11 shares seq 4's blob.
    ledger.add(
        NewEntry(
            b"Commitment: keep the golden vector byte-identical across releases.",
            type="commitment",
            tier="committed",
            source="manual",
            meta={"due": "2025-12-31", "priority": 1},
        )
    )
    ledger.add(
        NewEntry(
            b"The build server is ci-01.",
            type="memory",
            tier="relationship",
            source="manual",
            meta={"seen_again": True},
        )
    )
    ledger.close()
    lines = (root / "chain.jsonl").read_bytes().splitlines()
    return {
        "size": len(lines),
        "head": b3(lines[-1]),
        "chain_id": b3(lines[0]),
        "key": rotated.key_id,
    }


def export(root: Path, out: Path, expected: dict[str, object]) -> None:
    """Copy the vector's files (only those) from data directory ``root`` to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name in VECTOR_FILES:
        stale = out / name
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    shutil.copyfile(root / "chain.jsonl", out / "chain.jsonl")
    store = ContentStore(root / "content")
    for rec in store.records():
        if rec.live:
            hex_digest = rec.digest.hex()
            data = store.get("b3:" + hex_digest)
            assert data is not None
            dest = out / "content" / hex_digest[:2] / hex_digest[2:]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
    store.close()
    (out / "genesis.pub").write_text(Signer(GENESIS_SEED).key_id + "\n", encoding="ascii")
    text = json.dumps(expected, indent=2, sort_keys=True) + "\n"
    (out / "expected.json").write_text(text, encoding="ascii")


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print("usage: make_golden.py [OUTDIR]", file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) == 2 else DEFAULT_OUT
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "chain"
        expected = build(root)
        export(root, out, expected)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

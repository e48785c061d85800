"""Shared support for the published-log tests (tests/test_tiles*.py): fixed keys, a chain
by the owner key, and copies of it rolled back or forked."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

from memory_chain.chain.audit.publishing import publish
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.log.cosignature import (
    COSIGNATURE,
    NOTE_ED25519,
    VerifierKey,
    parse_vkey,
    vkey_text,
)
from memory_chain.chain.store.ledger import Ledger, NewEntry

OWNER_SEED = bytes([7]) * 32  # test-only
WITNESS_SEED = bytes([9]) * 32  # test-only
OTHER_WITNESS_SEED = bytes([10]) * 32  # test-only
START_MICROS = 1_735_689_600_000_000
WITNESS = "witness.example/w1"


def public_of(seed: bytes) -> bytes:
    from nacl.signing import SigningKey

    return bytes(SigningKey(seed).verify_key)


def witness_key(seed: bytes = WITNESS_SEED, name: str = WITNESS) -> VerifierKey:
    return parse_vkey(vkey_text(name, COSIGNATURE, public_of(seed)), COSIGNATURE)


def size_of(ledger: Ledger) -> int:
    return sum(1 for _ in ledger.iter_lines())


def grow(ledger: Ledger, n: int, word: str = "entry") -> Ledger:
    start = size_of(ledger)
    for i in range(n):
        ledger.add(NewEntry(f"{word} {start + i}".encode()))
    return ledger


def owned_ledger(root: Path, size: int = 300) -> Ledger:
    """Genesis plus size - 1 entries by the fixed owner key, one second apart."""
    clock = itertools.count(START_MICROS, 1_000_000).__next__
    ledger = Ledger.init(root, name="w", signer=Signer(OWNER_SEED), clock=clock)
    return grow(ledger, size - 1)


def rolled_back_pair(root: Path, copy: Path, at: int = 200, size: int = 300) -> Ledger:
    """Build the owner's chain at ``root`` to ``size`` entries, keeping a copy of its data
    directory at ``copy`` as it was at ``at`` entries; returns the copy, opened."""
    ledger = owned_ledger(root, at)
    shutil.copytree(root, copy)
    grow(ledger, size - at)
    later = itertools.count(START_MICROS + 10**12, 1_000_000).__next__
    return Ledger(copy, clock=later)


def log_key_of(ledger: Ledger, folder: Path) -> VerifierKey:
    """Publish ``ledger`` to ``folder``; the log's verifier key."""
    return parse_vkey(publish(ledger, folder).vkey, NOTE_ED25519)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

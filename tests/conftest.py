"""Shared fixtures: every test gets its own data directory and no ambient keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_chain.chain.ledger import Ledger

_AMBIENT = (
    "MEMORY_CHAIN_DIR",
    "MEMORY_CHAIN_SIGNING_KEY",
    "MEMORY_CHAIN_NEW_SIGNING_KEY",
    "MEMORY_CHAIN_PASSPHRASE",
)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads the user's real chain or keys: HOME and the env point at tmp."""
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A path for a new data directory (not created)."""
    return tmp_path / "chain"


@pytest.fixture
def ledger(data_dir: Path) -> Ledger:
    """A fresh chain with a raw key and only its genesis entry."""
    return Ledger.init(data_dir, name="test-agent")

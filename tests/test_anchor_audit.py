"""`memory-chain anchor verify` catches each lie with a precise reason naming the transaction.

Wrong EVM chain id, a tampered record, an anchor of another memory chain, a
local chain cut below or rewritten after an anchored size. All against the
session's anvil and one registry for the module.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.anvil import Anvil, deploy_registry, invoke, ok, read_jsonl, set_registry, use_node
from helpers.cli import Cli


@pytest.fixture(scope="module")
def registry(anvil: Anvil) -> tuple[str, int]:
    return deploy_registry(anvil)


@pytest.fixture
def node(anvil: Anvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Anvil:
    use_node(monkeypatch, anvil.url, state=tmp_path / "state")
    return anvil


def new_chain(root: Path, home: Path, registry: tuple[str, int], texts: list[str]) -> Cli:
    """A chain at ``root``: genesis, ``texts``, the module's registry in config.json."""
    cli = Cli(root, home)
    ok(cli, "init", "--name", root.name)
    set_registry(root, *registry)
    for text in texts:
        ok(cli, "add", text)
    return cli


@pytest.fixture
def mc(node: Anvil, tmp_path: Path, registry: tuple[str, int]) -> Cli:
    """Genesis plus three entries, with the registry."""
    return new_chain(tmp_path / "data", tmp_path / "home", registry, ["a", "b", "c"])


def anchored(cli: Cli, *args: str) -> str:
    tx: str = ok(cli, "anchor", "--json", *args).json()["tx"]
    return tx


def audit(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> dict[str, Any]:
    """anchor verify --json, which must exit 1; the report."""
    result = invoke(cli, "anchor", "verify", "--json", *args, env=env)
    assert result.code == 1, (result.out, result.err)
    report: dict[str, Any] = result.json()
    assert report["ok"] is False
    return report


def finding(report: dict[str, Any], tx: str) -> dict[str, Any]:
    (found,) = [a for a in report["anchors"] if a["tx"] == tx]
    return found


def failed_line(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> str:
    """The FAILED line of the text report (exit 1)."""
    result = invoke(cli, "anchor", "verify", *args, env=env)
    assert result.code == 1, (result.out, result.err)
    last = result.err.splitlines()[-1]
    assert last.startswith("FAILED: "), result.err
    return last


def edit_records(path: Path, tx: str, **fields: Any) -> None:
    """Change ``fields`` in every line of ``tx`` in anchors.jsonl (a consistent forgery)."""
    lines = []
    for rec in read_jsonl(path):
        if rec["tx"] == tx:
            rec.update({k: v for k, v in fields.items() if k in rec or rec["state"] != "sent"})
        lines.append(json.dumps(rec, sort_keys=True))
    path.write_text("\n".join(lines) + "\n")


# -- wrong EVM chain id ----------------------------------------------------


def test_a_node_of_another_chain_is_refused(mc: Cli, node: Anvil) -> None:
    """--network base-sepolia pointed at anvil: exit 2 naming both chain ids, nothing sent."""
    chain, block = mc.chain.read_bytes(), node.block_number()
    for args in (("anchor",), ("anchor", "deploy"), ("anchor", "verify")):
        result = invoke(mc, *args, "--network", "base-sepolia", "--rpc", node.url)
        assert result.code == 2
        assert result.err == (
            f"error: the node at {node.url} serves EVM chain id 31337, "
            "but network base-sepolia is chain id 84532\n"
            "hint: point the network at the right RPC URL\n"
        )
    assert mc.chain.read_bytes() == chain
    assert node.block_number() == block
    assert not (mc.root / "anchors.jsonl").exists()


def test_a_record_claiming_another_evm_chain_is_wrong_chain(mc: Cli) -> None:
    """A record whose evm_chain_id was edited fails as wrong-chain, exit 1, naming the tx."""
    tx = anchored(mc)
    edit_records(mc.root / "anchors.jsonl", tx, evm_chain_id=84532)
    report = audit(mc)
    f = finding(report, tx)
    assert (f["status"], f["reason"]) == ("invalid", "wrong-chain")
    assert (f["recorded"], f["logged"]) == (True, True)  # one finding, not a second from the log
    assert f["detail"] == (
        f"anchors.jsonl says transaction {tx} is on EVM chain id 84532, "
        "but anvil (chain id 31337) is checked"
    )
    assert failed_line(mc) == f"FAILED: {f['detail']} (wrong-chain)"


# -- a tampered record -----------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("block_hash", "0x" + "ab" * 32, "receipt-mismatch"),
        ("gas_used", 21_000, "receipt-mismatch"),
        ("block_number", 1, "receipt-mismatch"),
        ("from", "0x" + "ab" * 20, "receipt-mismatch"),
        ("root", "00" * 32, "anchor-payload"),
        ("checkpoint_hash", "00" * 32, "anchor-payload"),
        ("tree_size", 3, "anchor-payload"),
    ],
)
def test_a_tampered_receipt_is_caught(mc: Cli, field: str, value: Any, reason: str) -> None:
    """Editing what the chain says (block, gas, sender) or the payload fails, naming the tx."""
    tx = anchored(mc)
    assert ok(mc, "anchor", "verify").code == 0
    edit_records(mc.root / "anchors.jsonl", tx, **{field: value})
    report = audit(mc)
    f = finding(report, tx)
    assert (f["status"], f["reason"]) == ("invalid", reason)
    assert tx in f["detail"]
    if reason == "receipt-mismatch":
        assert f["detail"].startswith(
            f"anchors.jsonl disagrees with the chain about transaction {tx}: {field} is "
        )
    else:
        assert f["detail"].startswith(f"transaction {tx} carries size 4, root ")
        assert ", not the checkpoint's size " in f["detail"]
    assert failed_line(mc) == f"FAILED: {f['detail']} ({reason})"


def test_a_calldata_anchor_edited_to_event_mode_is_caught(mc: Cli) -> None:
    """A calldata anchor passed off as an event anchor has no Anchored log: anchor-payload."""
    tx = anchored(mc, "--mode", "calldata")
    edit_records(mc.root / "anchors.jsonl", tx, mode="event")
    f = finding(audit(mc), tx)
    assert (f["status"], f["reason"]) == ("invalid", "anchor-payload")
    assert f["detail"].startswith(f"transaction {tx}: 0 Anchored events from registry 0x")


# -- another memory chain's anchors ----------------------------------------


def test_an_anchor_of_another_chain_is_anchor_chain_id(
    mc: Cli, tmp_path: Path, registry: tuple[str, int]
) -> None:
    """B's records pasted into A's anchors.jsonl fail as anchor-chain-id; A's log scan skips B's."""
    other = new_chain(tmp_path / "other", tmp_path / "home", registry, ["x", "y"])
    theirs = [anchored(other), anchored(other, "--mode", "calldata")]
    mine = anchored(mc)
    b_id = json.loads((other.root / "config.json").read_text())["chain_id"]
    with (mc.root / "anchors.jsonl").open("a") as f:
        f.write((other.root / "anchors.jsonl").read_text())

    report = audit(mc)
    assert finding(report, mine)["status"] == "valid"
    for tx in theirs:
        f = finding(report, tx)
        assert (f["status"], f["reason"]) == ("invalid", "anchor-chain-id")
        assert (f["recorded"], f["logged"]) == (True, False)
        assert f["detail"] == f"anchor {tx} on anvil is for chain {b_id}"
    assert failed_line(mc) == f"FAILED: anchor {theirs[0]} on anvil is for chain {b_id} " + (
        "(anchor-chain-id)"
    )

    # Without the pasted records, A's scan of the shared registry finds only A's anchor.
    (mc.root / "anchors.jsonl").unlink()
    clean = ok(mc, "anchor", "verify", "--json").json()
    assert [(a["tx"], a["recorded"], a["logged"]) for a in clean["anchors"]] == [
        (mine, False, True)
    ]


# -- the local chain cut or rewritten --------------------------------------


def cut(cli: Cli, entries: int) -> None:
    """Keep the first ``entries`` lines of chain.jsonl; drop head.json (a cache of the end)."""
    lines = cli.chain.read_bytes().splitlines(keepends=True)
    cli.chain.write_bytes(b"".join(lines[:entries]))
    (cli.root / "head.json").unlink(missing_ok=True)


@pytest.mark.parametrize("records", ["kept", "deleted"])
def test_a_chain_cut_below_an_anchored_size_is_truncated(mc: Cli, records: str) -> None:
    """Cut to 2 entries after anchoring 4: truncated, naming the tx (even from the log alone)."""
    tx = anchored(mc)
    cut(mc, 2)
    if records == "deleted":
        (mc.root / "anchors.jsonl").unlink()
    report = audit(mc, "--network", "anvil")
    assert report["chain_size"] == 2
    f = finding(report, tx)
    assert (f["status"], f["reason"], f["tree_size"]) == ("invalid", "truncated", 4)
    assert (f["recorded"], f["logged"]) == (records == "kept", True)
    assert f["detail"] == f"chain has 2 entries; anchor {tx} on anvil commits to 4"
    assert failed_line(mc, "--network", "anvil") == f"FAILED: {f['detail']} (truncated)"


def test_a_torn_last_line_does_not_count_as_an_entry(mc: Cli) -> None:
    """A chain whose 4th line lost its newline holds 3 entries: the size-4 anchor is truncated."""
    tx = anchored(mc)
    mc.chain.write_bytes(mc.chain.read_bytes()[:-1])
    (mc.root / "head.json").unlink()
    f = finding(audit(mc), tx)
    assert (f["reason"], f["detail"]) == (
        "truncated",
        f"chain has 3 entries; anchor {tx} on anvil commits to 4",
    )


@pytest.mark.parametrize("records", ["copied", "log only"])
def test_a_chain_rewritten_after_an_anchor_is_rewritten(
    mc: Cli, tmp_path: Path, records: str
) -> None:
    """A copy sharing the genesis but with other entries fails as rewritten, naming the tx."""
    fork_root = tmp_path / "fork"
    shutil.copytree(mc.root, fork_root)
    cut(Cli(fork_root, tmp_path / "home"), 1)  # back to the genesis: same chain id
    fork = Cli(fork_root, tmp_path / "home")
    fork_env: dict[str, str | None] = {"MEMORY_CHAIN_STATE_DIR": str(tmp_path / "fork-state")}
    for text in ("A", "B", "C", "D"):
        ok(fork, "add", text, env=fork_env)
    tx = anchored(mc)
    if records == "copied":
        shutil.copy(mc.root / "anchors.jsonl", fork_root / "anchors.jsonl")
    report = audit(fork, env=fork_env)
    assert report["chain_size"] == 5
    f = finding(report, tx)
    assert (f["status"], f["reason"], f["tree_size"]) == ("invalid", "rewritten", 4)
    assert (f["recorded"], f["logged"]) == (records == "copied", True)
    assert f["detail"] == (
        f"the first 4 entries do not hash to the root of anchor {tx} on anvil: "
        "history was rewritten after it was anchored"
    )
    assert failed_line(fork, env=fork_env) == f"FAILED: {f['detail']} (rewritten)"
    # The original, which the anchor commits to, still verifies.
    assert ok(mc, "anchor", "verify").code == 0


# -- an event from a contract that is not the registry ---------------------


def test_an_event_from_another_contract_is_anchor_registry(node: Anvil, tmp_path: Path) -> None:
    """A registry address whose code is no longer the registry's: anchor-registry, naming the tx."""
    own = deploy_registry(node)  # this test's own registry: its code is changed below
    cli = new_chain(tmp_path / "data", tmp_path / "home", own, ["a", "b"])
    tx = anchored(cli)
    ok(cli, "anchor", "verify")
    code = node.code(own[0])
    node.rpc("anvil_setCode", own[0], "0x" + (code + b"\x00").hex())
    report = audit(cli)
    found = finding(report, tx)
    assert (found["status"], found["reason"]) == ("invalid", "anchor-registry")
    assert found["detail"] == (
        f"transaction {tx}'s event comes from {own[0].lower()}, "
        "which does not hold the registry contract's code"
    )

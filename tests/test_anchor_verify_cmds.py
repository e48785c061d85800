"""The anchor checks inside other commands: `verify --anchors` and `verify-proof --rpc`.

`verify --anchors` runs the anchor audit after a successful verify;
`verify-proof FILE --rpc URL` checks a proof bundle's anchor references
against the node. Against the session's anvil, one registry for the module.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.anvil import (
    Anvil,
    deploy_registry,
    free_port,
    invoke,
    ok,
    read_jsonl,
    set_registry,
    use_node,
)
from helpers.cli import Cli


@pytest.fixture(scope="module")
def registry(anvil: Anvil) -> tuple[str, int]:
    return deploy_registry(anvil)


@pytest.fixture
def mc(
    anvil: Anvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, registry: tuple[str, int]
) -> Cli:
    """Genesis plus three entries, the registry configured, anchored (event mode) at size 4."""
    use_node(monkeypatch, anvil.url, state=tmp_path / "state")
    cli = Cli(tmp_path / "data", tmp_path / "home")
    ok(cli, "init", "--name", "verify-cmds")
    set_registry(cli.root, *registry)
    for text in ("a", "b", "c"):
        ok(cli, "add", text)
    ok(cli, "anchor")
    return cli


def the_tx(cli: Cli) -> str:
    tx: str = read_jsonl(cli.root / "anchors.jsonl")[0]["tx"]
    return tx


def tamper(cli: Cli, **fields: Any) -> None:
    """Change ``fields`` of the confirmed record (the folded record takes them)."""
    path = cli.root / "anchors.jsonl"
    recs = read_jsonl(path)
    for rec in recs:
        if rec["state"] == "confirmed":
            rec.update(fields)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))


# -- verify --anchors ------------------------------------------------------


def test_verify_anchors_all_valid(mc: Cli) -> None:
    """verify --anchors: the chain verifies, then every anchor is valid; exit 0, text and JSON."""
    tx = the_tx(mc)
    out = ok(mc, "verify", "--anchors").out.splitlines()
    assert out[0].startswith("ok: 4 entries verified")
    assert out[1].startswith("checked: lines and signatures to seq 3")
    assert out[2].startswith(f"valid       anvil size 4 {tx} (block ")
    assert out[-1] == "ok: 1 anchor(s) valid; the chain of 4 entries is consistent with each"
    report = ok(mc, "verify", "--anchors", "--json").json()
    assert report["ok"] is True
    assert report["entries"] == 4
    assert report["anchors"]["ok"] is True
    assert [(a["tx"], a["status"]) for a in report["anchors"]["anchors"]] == [(tx, "valid")]
    plain = ok(mc, "verify", "--json").json()
    assert "anchors" not in plain


def test_verify_anchors_fails_on_a_bad_anchor(mc: Cli) -> None:
    """verify --anchors exits 1 when an anchor is not valid, though the chain itself verifies."""
    tx = the_tx(mc)
    gas = read_jsonl(mc.root / "anchors.jsonl")[1]["gas_used"]
    tamper(mc, gas_used=1)
    result = invoke(mc, "verify", "--anchors")
    assert result.code == 1
    assert result.out.startswith("ok: 4 entries verified")
    assert result.err.splitlines()[-1] == (
        f"FAILED: anchors.jsonl disagrees with the chain about transaction {tx}: "
        f"gas_used is 1 in the record, {gas} on chain (receipt-mismatch)"
    )
    report = invoke(mc, "verify", "--anchors", "--json")
    assert report.code == 1
    data = report.json()
    assert (data["ok"], data["failure"], data["anchors"]["ok"]) == (False, None, False)
    assert data["anchors"]["anchors"][0]["reason"] == "receipt-mismatch"


def _url() -> str:
    """The session anvil's URL, as the test's environment names it."""
    return os.environ["MEMORY_CHAIN_RPC_ANVIL"]


def test_verify_anchors_finds_a_truncated_chain(mc: Cli) -> None:
    """Cut, with its notes and witness gone, the chain verifies alone; --anchors says truncated."""
    tx = the_tx(mc)
    lines = mc.chain.read_bytes().splitlines(keepends=True)
    mc.chain.write_bytes(b"".join(lines[:2]))
    (mc.root / "head.json").unlink()
    shutil.rmtree(mc.root / "checkpoints")
    (mc.root / "checkpoint").unlink(missing_ok=True)
    env: dict[str, str | None] = {"MEMORY_CHAIN_STATE_DIR": str(mc.root.parent / "fresh-state")}
    assert ok(mc, "verify", env=env).out.startswith("ok: 2 entries verified")
    result = invoke(mc, "verify", "--anchors", env=env)
    assert result.code == 1, result.err
    assert result.err.splitlines()[-1] == (
        f"FAILED: chain has 2 entries; anchor {tx} on anvil commits to 4 (truncated)"
    )


def test_verify_anchors_is_not_run_when_the_chain_fails(mc: Cli) -> None:
    """A chain that does not verify fails first; the anchors are not asked about."""
    lines = mc.chain.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"b"', b'"B"') if b'"b"' in lines[2] else lines[2][:-2] + b"x\n"
    mc.chain.write_bytes(b"".join(lines))
    result = invoke(mc, "verify", "--anchors", "--json", "--full")
    assert result.code == 1
    data = result.json()
    assert data["ok"] is False
    assert data["failure"] is not None
    assert "anchors" not in data


def test_verify_network_and_rpc_need_anchors(mc: Cli) -> None:
    """--network or --rpc without --anchors is bad input (exit 2)."""
    for args in (("--network", "anvil"), ("--rpc", _url())):
        result = invoke(mc, "verify", *args)
        assert result.code == 2
        assert result.err.splitlines()[0] == "error: --network and --rpc go with --anchors"


def test_verify_anchors_wrong_chain_id_and_no_node(mc: Cli) -> None:
    """verify --anchors against a node of another chain id, or none: exit 2 with the reason."""
    result = invoke(mc, "verify", "--anchors", "--network", "base-sepolia", "--rpc", _url())
    assert result.code == 2
    assert result.err.splitlines()[0] == (
        f"error: the node at {_url()} serves EVM chain id 31337, "
        "but network base-sepolia is chain id 84532"
    )
    dead = f"http://127.0.0.1:{free_port()}"
    result = invoke(mc, "verify", "--anchors", "--rpc", dead)
    assert result.code == 2
    assert result.err.splitlines()[0] == (
        f"error: cannot reach the node at {dead} (eth_chainId: ConnectionError)"
    )


# -- verify-proof --rpc ----------------------------------------------------


def prove(cli: Cli, seq: int = 2) -> tuple[Path, dict[str, Any]]:
    path = cli.root.parent / f"entry{seq}.proof.json"
    ok(cli, "prove", str(seq), "-o", str(path))
    bundle: dict[str, Any] = json.loads(path.read_text())
    return path, bundle


def test_verify_proof_checks_the_anchor_references(mc: Cli) -> None:
    """A bundle proved after anchoring carries the reference; --rpc finds it valid (exit 0)."""
    tx = the_tx(mc)
    path, bundle = prove(mc)
    key = str(mc.root / "agent.pub")
    assert [(a["tx"], a["state"]) for a in bundle["anchors"]] == [(tx, "confirmed")]
    assert all("raw_tx" not in a for a in bundle["anchors"])
    offline = ok(mc, "verify-proof", str(path), "--trusted-key", key).out
    assert offline.splitlines()[-1] == (
        "1 anchor reference(s) carried (not checked offline; --rpc URL checks them)"
    )
    online = ok(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url()).out
    block = read_jsonl(mc.root / "anchors.jsonl")[1]["block_number"]
    assert online.splitlines()[-1].startswith(f"anchor {tx} on anvil: valid (block {block}, ")
    data = ok(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url(), "--json")
    report = data.json()
    assert report["ok"] is True
    assert [(a["tx"], a["status"]) for a in report["anchors_checked"]] == [(tx, "valid")]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("block_hash", "0x" + "ab" * 32, "receipt-mismatch"),
        ("gas_used", 7, "receipt-mismatch"),
        ("evm_chain_id", 84532, "wrong-chain"),
        ("tx", "0x" + "ab" * 32, "anchor-missing"),
    ],
)
def test_verify_proof_catches_a_tampered_reference(
    mc: Cli, field: str, value: Any, reason: str
) -> None:
    """A reference edited in the bundle fails with its reason and the tx named; exit 1."""
    path, bundle = prove(mc)
    bundle["anchors"][0][field] = value
    path.write_text(json.dumps(bundle))
    tx = bundle["anchors"][0]["tx"]
    key = str(mc.root / "agent.pub")
    result = invoke(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url())
    assert result.code == 1, result.err
    line = result.err.splitlines()[-1]
    assert line.startswith(f"anchor {tx} on anvil: "), line
    assert line.endswith(f"({reason})"), line
    assert tx in line[len(f"anchor {tx} on anvil: ") :]
    data = invoke(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url(), "--json")
    assert data.code == 1
    assert data.json()["ok"] is False
    assert data.json()["anchors_checked"][0]["reason"] == reason


def test_verify_proof_with_no_reference_is_unanchored(mc: Cli) -> None:
    """A bundle of a checkpoint never anchored fails --rpc as unanchored (exit 1)."""
    ok(mc, "add", "after the anchor")
    ok(mc, "checkpoint")
    path, bundle = prove(mc)
    assert bundle["anchors"] == []
    key = str(mc.root / "agent.pub")
    result = invoke(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url())
    assert result.code == 1
    assert result.err.splitlines()[0] == ("error: the bundle carries no anchor reference to check")


def test_verify_proof_with_no_node(mc: Cli) -> None:
    """--rpc naming a node that is not running: exit 2, cannot reach the node."""
    path, _bundle = prove(mc)
    dead = f"http://127.0.0.1:{free_port()}"
    key = str(mc.root / "agent.pub")
    result = invoke(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", dead)
    assert result.code == 2
    assert result.err.splitlines()[0] == (
        f"error: cannot reach the node at {dead} (eth_chainId: ConnectionError)"
    )


def test_a_dropped_transaction_is_no_reference(mc: Cli) -> None:
    """A dropped record for the same checkpoint is not carried as a reference: --rpc is valid."""
    recs = read_jsonl(mc.root / "anchors.jsonl")
    ghost = {k: recs[0][k] for k in recs[0] if k not in ("raw_tx", "from", "to", "nonce")}
    ghost.update(tx="0x" + "cd" * 32, state="dropped", reason="its nonce was used by another tx")
    with (mc.root / "anchors.jsonl").open("a") as f:
        f.write(json.dumps(ghost, sort_keys=True) + "\n")
    assert ok(mc, "anchor", "verify").code == 0  # dropped records are not anchors
    path, bundle = prove(mc)
    assert [a["state"] for a in bundle["anchors"]] == ["confirmed"]
    key = str(mc.root / "agent.pub")
    assert ok(mc, "verify-proof", str(path), "--trusted-key", key, "--rpc", _url()).code == 0


# -- export carries the anchors; an auditor checks them on an imported copy --


def test_an_imported_export_checks_its_anchors(mc: Cli, tmp_path: Path) -> None:
    """export carries anchors.jsonl; anchor verify on the import finds the registry in it."""
    tx = the_tx(mc)
    archive = tmp_path / "backup.tar.gz"
    ok(mc, "export", str(archive))
    copy = Cli(tmp_path / "imported", tmp_path / "home")
    ok(copy, "import", str(archive), "--dir", str(copy.root))
    assert (copy.root / "anchors.jsonl").read_bytes() == (mc.root / "anchors.jsonl").read_bytes()
    assert "anchor" not in json.loads((copy.root / "config.json").read_text())
    report = ok(copy, "anchor", "verify", "--json").json()
    (found,) = report["anchors"]
    assert (found["tx"], found["status"], found["recorded"], found["logged"]) == (
        tx,
        "valid",
        True,
        True,
    )
    assert list(report["scanned"]) == ["anvil"]
    assert report["scanned"]["anvil"][0] == found["block"]

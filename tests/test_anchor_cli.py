"""`memory-chain anchor`, `anchor deploy`, `anchor status`, `anchor verify` against a real anvil.

Every test shares the session's anvil (tests/conftest.py) and pays with dev
account 1 unless it says otherwise; nonces come from the node's pending
count, and tests run one at a time. Most commands run in this process
(helpers.anvil.invoke: a subprocess pays about a second to import web3);
the ones that must be another process run the console script.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.anvil import (
    DEV_ADDRESSES,
    DEV_KEYS,
    Anvil,
    artifact,
    assert_no_evm_key,
    deploy_registry,
    invoke,
    ok,
    read_jsonl,
    set_registry,
    use_node,
)
from helpers.cli import Cli

from memory_chain.anchor.payload import ANCHOR_SELECTOR, ANCHORED_TOPIC

ENTRIES = ("Use pnpm, not npm", "Staging is on 5433", "Check the port first")


@pytest.fixture(scope="module")
def registry(anvil: Anvil) -> tuple[str, int]:
    """One registry for this module's tests, deployed by dev account 0."""
    return deploy_registry(anvil)


@pytest.fixture
def node(anvil: Anvil, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Anvil:
    """The session anvil as network anvil, dev account 1 as payer, a state folder of our own."""
    use_node(monkeypatch, anvil.url, state=tmp_path / "state")
    return anvil


@pytest.fixture
def mc(node: Anvil, tmp_path: Path) -> Cli:
    """A chain of genesis plus three entries, no registry configured yet."""
    cli = Cli(tmp_path / "data", tmp_path / "home")
    ok(cli, "init", "--name", "anchored")
    for text in ENTRIES:
        ok(cli, "add", text)
    return cli


@pytest.fixture
def reg(mc: Cli, registry: tuple[str, int]) -> Cli:
    """``mc`` with the module's registry in config.json, its address in lower case.

    (`anchor deploy` writes it checksummed; config.json may hold either.)
    """
    assert registry[0] == registry[0].lower()
    set_registry(mc.root, *registry)
    return mc


def anchor_json(cli: Cli, *args: str) -> dict[str, Any]:
    result: dict[str, Any] = ok(cli, "anchor", *args, "--json").json()
    return result


def rejected(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> str:
    """Exit 2, one error line (and a hint), chain.jsonl byte-identical; the stderr."""
    before = cli.chain.read_bytes()
    result = invoke(cli, *args, env=env)
    assert result.code == 2, (result.out, result.err)
    lines = result.err.splitlines()
    assert lines[0].startswith("error: "), result.err
    assert all(line.startswith("hint: ") for line in lines[1:]) and len(lines) <= 2, result.err
    assert cli.chain.read_bytes() == before
    return result.err


# -- deploy ----------------------------------------------------------------


def test_deploy_records_the_registry_and_the_next_anchor_uses_it(mc: Cli, node: Anvil) -> None:
    """deploy puts the registry and its block in config.json, with the artifact's runtime code."""
    done = anchor_json(mc, "deploy")
    address, block = done["registry"], done["block"]
    assert done["network"] == "anvil"
    assert block == node.block_number()
    config = json.loads((mc.root / "config.json").read_text())
    assert config["anchor"] == {
        "networks": {"anvil": {"registry": address, "registry_block": block}}
    }
    assert node.code(address) == bytes.fromhex(artifact()["deployedBytecode"][2:])
    assert node.receipt(done["tx"])["contractAddress"].lower() == address.lower()

    posted = anchor_json(mc)
    assert posted["mode"] == "event"
    assert posted["to"] == address.lower()
    assert posted["state"] == "confirmed"


def test_deploy_text_output(mc: Cli) -> None:
    """deploy says where the registry is and that config.json has it."""
    out = ok(mc, "anchor", "deploy", "--network", "anvil").out
    own = json.loads((mc.root / "config.json").read_text())["anchor"]["networks"]["anvil"]
    assert out.startswith(f"deployed the registry on anvil (chain id 31337) at {own['registry']} ")
    assert out.rstrip().endswith("recorded in config.json")


# -- anchor, both modes ----------------------------------------------------


def test_anchor_event_mode_records_sent_then_confirmed(reg: Cli, node: Anvil) -> None:
    """Event mode: a sent record (signed bytes, nonce) then a confirmed one, gas under 30,000."""
    posted = anchor_json(reg)
    tx = posted["tx"]
    sent, confirmed = read_jsonl(reg.root / "anchors.jsonl")
    assert (sent["state"], confirmed["state"]) == ("sent", "confirmed")
    assert sent["tx"] == confirmed["tx"] == tx
    assert sent["time"] <= confirmed["time"]
    assert sent["from"] == DEV_ADDRESSES[1]
    assert sent["to"] == registry_of(reg)
    assert sent["nonce"] == int(node.transaction(tx)["nonce"], 16)
    assert sent["raw_tx"].startswith("0x02")
    assert "block_number" not in sent and "raw_tx" not in confirmed
    receipt = node.receipt(tx)
    assert confirmed["block_number"] == int(receipt["blockNumber"], 16)
    assert confirmed["block_hash"] == receipt["blockHash"]
    assert confirmed["gas_used"] == int(receipt["gasUsed"], 16)
    assert confirmed["gas_used"] < 30_000
    assert confirmed["log_index"] == 0
    assert confirmed["confirmations"] == 1
    (log,) = receipt["logs"]
    assert log["topics"][0] == "0x" + ANCHORED_TOPIC.hex()
    assert log["topics"][1] == "0x" + confirmed["chain_id"]
    assert log["address"].lower() == registry_of(reg)
    assert posted["tree_size"] == 4
    assert posted["new_checkpoint"] is True
    assert posted["already_anchored"] is False
    assert "raw_tx" not in posted


def test_anchor_calldata_mode_is_a_zero_value_transaction_to_self(reg: Cli, node: Anvil) -> None:
    """Calldata mode: sent then confirmed; the tx goes to its sender, no value, input = payload."""
    posted = anchor_json(reg, "--mode", "calldata")
    tx = posted["tx"]
    sent, confirmed = read_jsonl(reg.root / "anchors.jsonl")
    assert [(r["state"], r["tx"], r["mode"]) for r in (sent, confirmed)] == [
        ("sent", tx, "calldata"),
        ("confirmed", tx, "calldata"),
    ]
    chain_tx = node.transaction(tx)
    assert chain_tx["from"] == chain_tx["to"] == DEV_ADDRESSES[1] == sent["to"]
    assert int(chain_tx["value"], 16) == 0
    data = bytes.fromhex(chain_tx["input"][2:])
    assert data[:4] == ANCHOR_SELECTOR
    assert data[4:36].hex() == posted["chain_id"]
    assert int.from_bytes(data[36:68], "big") == posted["tree_size"] == 4
    assert data[68:100].hex() == posted["root"]
    assert data[100:].hex() == posted["checkpoint_hash"]
    assert confirmed["gas_used"] == int(node.receipt(tx)["gasUsed"], 16) < 30_000
    assert node.receipt(tx)["logs"] == []
    assert "log_index" not in confirmed


def test_anchor_text_output(reg: Cli) -> None:
    """The text output names size, network, mode, transaction, block, gas and confirmations."""
    out = ok(reg, "anchor").out
    (rec,) = [r for r in read_jsonl(reg.root / "anchors.jsonl") if r["state"] == "confirmed"]
    assert out == (
        f"anchored checkpoint of size 4 on anvil (chain id 31337) (event mode): "
        f"transaction {rec['tx']}, block {rec['block_number']}, gas {rec['gas_used']}, "
        "1 confirmation(s)\n"
    )


def test_second_anchor_without_new_entries_sends_nothing(reg: Cli, node: Anvil) -> None:
    """With no new entries, anchor says already anchored; no block, no record, same nonce."""
    tx = anchor_json(reg)["tx"]
    records = (reg.root / "anchors.jsonl").read_bytes()
    block, nonce = node.block_number(), node.nonce(DEV_ADDRESSES[1])
    out = ok(reg, "anchor").out
    assert out == f"already anchored: checkpoint of size 4 on anvil in transaction {tx}\n"
    again = anchor_json(reg)
    assert (again["already_anchored"], again["new_checkpoint"], again["tx"]) == (True, False, tx)
    assert node.block_number() == block
    assert node.nonce(DEV_ADDRESSES[1]) == nonce
    assert (reg.root / "anchors.jsonl").read_bytes() == records
    ok(reg, "add", "one more")
    grown = anchor_json(reg)
    assert (grown["already_anchored"], grown["tree_size"]) == (False, 5)
    assert node.block_number() == block + 1


# -- status ----------------------------------------------------------------


def test_status_lists_the_anchors(reg: Cli) -> None:
    """status lists each transaction once (merged), text and JSON, with no signed bytes."""
    assert ok(reg, "anchor", "status").out == "no anchors yet; run `memory-chain anchor`\n"
    first = anchor_json(reg)
    ok(reg, "add", "one more")
    second = anchor_json(reg, "--mode", "calldata")
    ok(reg, "add", "and another")
    out = ok(reg, "anchor", "status").out
    f, s = first, second
    assert out.splitlines() == [
        f"confirmed anvil        event    size 4      {f['tx']} block {f['block_number']}",
        f"confirmed anvil        calldata size 5      {s['tx']} block {s['block_number']}",
        "latest confirmed anchor covers 5 entries; the chain has 6 entries",
    ]
    status = ok(reg, "anchor", "status", "--json").json()
    assert (status["chain_size"], status["anchored_size"], status["skipped_lines"]) == (6, 5, [])
    assert [(a["tx"], a["state"], a["mode"]) for a in status["anchors"]] == [
        (first["tx"], "confirmed", "event"),
        (second["tx"], "confirmed", "calldata"),
    ]
    assert all("raw_tx" not in a for a in status["anchors"])
    assert status["anchors"][0]["gas_used"] == first["gas_used"]


# -- verify ----------------------------------------------------------------

FINDING_KEYS = [
    "block",
    "confirmations",
    "detail",
    "logged",
    "mode",
    "network",
    "notes",
    "reason",
    "recorded",
    "root",
    "sender",
    "status",
    "tree_size",
    "tx",
]


def test_verify_all_valid(reg: Cli, node: Anvil) -> None:
    """Two anchors (event, calldata) verify: exit 0, JSON shape, the log scan range."""
    first = anchor_json(reg)
    ok(reg, "add", "one more")
    second = anchor_json(reg, "--mode", "calldata")
    report = ok(reg, "anchor", "verify", "--json").json()
    assert sorted(report) == ["anchors", "chain_size", "ok", "scanned", "skipped_lines"]
    assert report["ok"] is True
    assert report["chain_size"] == 5
    assert report["skipped_lines"] == []
    assert report["scanned"] == {"anvil": [registry_block(reg), node.block_number()]}
    a, b = report["anchors"]
    assert sorted(a) == FINDING_KEYS
    assert a == {
        "tx": first["tx"],
        "network": "anvil",
        "status": "valid",
        "reason": None,
        "detail": None,
        "mode": "event",
        "tree_size": 4,
        "root": first["root"],
        "sender": DEV_ADDRESSES[1],
        "block": first["block_number"],
        "confirmations": 2,
        "recorded": True,
        "logged": True,
        "notes": [],
    }
    assert (b["tx"], b["status"], b["mode"], b["tree_size"]) == (
        second["tx"],
        "valid",
        "calldata",
        5,
    )
    assert (b["recorded"], b["logged"], b["confirmations"]) == (True, False, 1)
    out = ok(reg, "anchor", "verify").out
    assert out.splitlines()[-1] == (
        "ok: 2 anchor(s) valid; the chain of 5 entries is consistent with each"
    )
    assert f"valid       anvil size 4 {first['tx']} (block {first['block_number']}, 2 conf)" in out


def test_verify_with_no_anchors(reg: Cli) -> None:
    """No anchors at all: exit 0, "no anchors to check"."""
    result = ok(reg, "anchor", "verify")
    assert result.out.splitlines()[-1] == "no anchors to check"


def test_anchor_by_another_process_is_found_in_the_log(
    reg: Cli, node: Anvil, tmp_path: Path
) -> None:
    """A copy anchoring on its own (process, account, state dir) is found from the registry log."""
    mine = anchor_json(reg)
    ok(reg, "add", "one more")
    copy = tmp_path / "copy"
    shutil.copytree(reg.root, copy)
    (copy / "anchors.jsonl").unlink()
    other = Cli(copy, tmp_path / "home2")
    result = other.run(
        "anchor",
        "--json",
        env={
            "MEMORY_CHAIN_EVM_KEY": DEV_KEYS[2],
            "MEMORY_CHAIN_STATE_DIR": str(tmp_path / "state2"),
        },
    )
    assert result.code == 0, result.err
    theirs = result.json()
    assert theirs["from"] == DEV_ADDRESSES[2]
    assert theirs["tree_size"] == 5
    assert theirs["tx"] not in (reg.root / "anchors.jsonl").read_text()

    report = ok(reg, "anchor", "verify", "--json").json()
    assert report["ok"] is True
    found = {a["tx"]: a for a in report["anchors"]}
    assert set(found) == {mine["tx"], theirs["tx"]}
    assert (found[mine["tx"]]["recorded"], found[mine["tx"]]["logged"]) == (True, True)
    logged = found[theirs["tx"]]
    assert (logged["status"], logged["recorded"], logged["logged"]) == ("valid", False, True)
    assert (logged["tree_size"], logged["sender"], logged["mode"]) == (5, DEV_ADDRESSES[2], "event")
    assert logged["root"] == theirs["root"]
    assert logged["notes"] == [
        "found in the registry's log; not in anchors.jsonl",
        "no local checkpoint note for this size; the root matches",
    ]
    # --sender keeps only the log entries of the senders named.
    only_mine = ok(reg, "anchor", "verify", "--json", "--sender", DEV_ADDRESSES[1]).json()
    assert [a["tx"] for a in only_mine["anchors"]] == [mine["tx"]]


# -- the EVM key -----------------------------------------------------------


def test_the_evm_key_is_never_printed_or_stored(reg: Cli, tmp_path: Path) -> None:
    """The key's hex (with or without 0x) is in no output and no file of the data directory."""
    key = DEV_KEYS[3]
    env = {"MEMORY_CHAIN_EVM_KEY": key}
    outputs = [
        reg.run("anchor", env=env),  # the console script, as a user runs it
        invoke(reg, "anchor", "status", "--json", env=env),
        invoke(reg, "anchor", "verify", env=env),
    ]
    ok(reg, "add", "one more")
    outputs.append(invoke(reg, "anchor", "--json", "--mode", "calldata", env=env))
    assert [r.code for r in outputs] == [0, 0, 0, 0]
    for r in outputs:
        assert_no_evm_key(key, r.out + r.err, "anchor")
    for path in reg.root.rglob("*"):
        if path.is_file():
            assert_no_evm_key(key, path.read_bytes().decode("latin-1"), str(path))
    sent = [r for r in read_jsonl(reg.root / "anchors.jsonl") if r["state"] == "sent"]
    assert {r["from"] for r in sent} == {DEV_ADDRESSES[3]}


@pytest.mark.parametrize(
    ("section", "where"),
    [
        ({"private_key": DEV_KEYS[1]}, "anchor.private_key"),
        ({"networks": {"anvil": {"key": DEV_KEYS[1]}}}, "anchor.networks.anvil.key"),
        ({"networks": {"anvil": {"mnemonic": "test test"}}}, "anchor.networks.anvil.mnemonic"),
    ],
)
def test_a_key_in_config_is_refused(mc: Cli, section: dict[str, Any], where: str) -> None:
    """config.json holding an EVM key (anywhere under anchor) is refused before anything is sent."""
    path = mc.root / "config.json"
    config = json.loads(path.read_text())
    config["anchor"] = section
    path.write_text(json.dumps(config))
    for args in (("anchor",), ("anchor", "deploy"), ("anchor", "verify")):
        err = rejected(mc, *args)
        assert err == (
            f"error: config.json holds '{where}': EVM keys never go in config\n"
            "hint: remove it; use $MEMORY_CHAIN_EVM_KEY or an encrypted keystore\n"
        )
    assert not (mc.root / "anchors.jsonl").exists()


def test_keystore_with_its_passphrase(reg: Cli, tmp_path: Path) -> None:
    """An eth-account keystore with $MEMORY_CHAIN_EVM_PASSPHRASE pays; a wrong one is exit 2."""
    from eth_account import Account

    keystore = tmp_path / "evm.json"
    keystore.write_text(json.dumps(Account.encrypt(DEV_KEYS[4], "pw", kdf="pbkdf2", iterations=2)))
    base: dict[str, str | None] = {
        "MEMORY_CHAIN_EVM_KEY": None,
        "MEMORY_CHAIN_EVM_KEYSTORE": str(keystore),
    }
    err = rejected(reg, "anchor", env={**base, "MEMORY_CHAIN_EVM_PASSPHRASE": "wrong"})
    assert err == f"error: wrong passphrase for keystore {keystore}\n"
    err = rejected(reg, "anchor", env=base)
    assert err == (
        f"error: keystore {keystore} needs its passphrase\n"
        "hint: set $MEMORY_CHAIN_EVM_PASSPHRASE or run in a terminal\n"
    )
    missing = tmp_path / "nope.json"
    err = rejected(reg, "anchor", env={**base, "MEMORY_CHAIN_EVM_KEYSTORE": str(missing)})
    assert err == f"error: keystore {missing} does not exist\n"
    assert not (reg.root / "anchors.jsonl").exists()
    posted = anchor_json_env(reg, {**base, "MEMORY_CHAIN_EVM_PASSPHRASE": "pw"})
    assert (posted["state"], posted["from"]) == ("confirmed", DEV_ADDRESSES[4])


def anchor_json_env(cli: Cli, env: dict[str, str | None]) -> dict[str, Any]:
    result: dict[str, Any] = ok(cli, "anchor", "--json", env=env).json()
    return result


# -- --chain, an alias of --network ----------------------------------------


def test_chain_is_an_alias_of_network(reg: Cli) -> None:
    """`anchor --chain base` (the seed's form) needs base's RPC URL; `--chain anvil` anchors."""
    err = rejected(reg, "anchor", "--chain", "base")
    assert err == (
        "error: network base has no RPC URL\n"
        "hint: set MEMORY_CHAIN_RPC_BASE, pass --rpc, "
        "or put anchor.networks.base.rpc_url in config.json\n"
    )
    assert not (reg.root / "anchors.jsonl").exists()
    posted = anchor_json(reg, "--chain", "anvil")
    assert (posted["network"], posted["mode"], posted["state"]) == ("anvil", "event", "confirmed")
    assert ok(reg, "anchor", "verify", "--chain", "anvil").code == 0


# -- bad input leaves the chain alone ---------------------------------------


def test_unknown_network(reg: Cli) -> None:
    """An unknown network is exit 2 naming it and the built-in ones."""
    err = rejected(reg, "anchor", "--network", "nope")
    assert err == (
        "error: unknown network 'nope'\n"
        "hint: built in: anvil, sepolia, base-sepolia, base; add others under anchor.networks\n"
    )
    assert rejected(reg, "anchor", "verify", "--network", "nope") == err


def test_event_mode_needs_a_registry(mc: Cli) -> None:
    """--mode event on a network without a registry says how to deploy one."""
    err = rejected(mc, "anchor", "--mode", "event")
    assert err == (
        "error: network anvil has no registry contract\n"
        "hint: run `memory-chain anchor deploy --network anvil`, or use --mode calldata\n"
    )


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (None, "error: no EVM account to pay for the anchor\n"),
        ("0x1234", "error: $MEMORY_CHAIN_EVM_KEY is not a 32-byte hex private key\n"),
        ("0x" + "00" * 32, "error: $MEMORY_CHAIN_EVM_KEY is not a valid secp256k1 private key\n"),
    ],
)
def test_no_usable_evm_key(reg: Cli, node: Anvil, key: str | None, message: str) -> None:
    """No key, or one that is no secp256k1 key: exit 2, nothing sent, nothing recorded."""
    block = node.block_number()
    err = rejected(reg, "anchor", env={"MEMORY_CHAIN_EVM_KEY": key})
    assert err.splitlines()[0] + "\n" == message
    if key is None:
        assert err.splitlines()[1] == (
            "hint: set $MEMORY_CHAIN_EVM_KEY, or $MEMORY_CHAIN_EVM_KEYSTORE "
            "to an encrypted keystore file"
        )
    assert node.block_number() == block
    assert not (reg.root / "anchors.jsonl").exists()


def registry_of(cli: Cli) -> str:
    config = json.loads((cli.root / "config.json").read_text())
    address: str = config["anchor"]["networks"]["anvil"]["registry"]
    return address.lower()


def registry_block(cli: Cli) -> int:
    config = json.loads((cli.root / "config.json").read_text())
    block: int = config["anchor"]["networks"]["anvil"]["registry_block"]
    return block


def test_a_registry_address_without_the_contract_is_refused(mc: Cli, node: Anvil) -> None:
    """A configured registry with no code (e.g. anvil restarted): exit 2 before anything is sent."""
    set_registry(mc.root, "0x" + "12" * 20, 0)
    block = node.block_number()
    err = rejected(mc, "anchor")
    assert err == (
        f"error: there is no registry contract at 0x{'12' * 20} on anvil (chain id 31337)\n"
        "hint: run `memory-chain anchor deploy --network anvil`, or use --mode calldata\n"
    )
    assert node.block_number() == block
    assert not (mc.root / "anchors.jsonl").exists()


def test_confirmations(reg: Cli, node: Anvil) -> None:
    """Too few confirmations: anchor times out naming the sent tx; verify says unconfirmed."""
    result = invoke(reg, "anchor", "--confirmations", "3", "--timeout", "0.3")
    (sent,) = read_jsonl(reg.root / "anchors.jsonl")
    tx = sent["tx"]
    assert result.code == 2
    assert result.err == (
        f"error: transaction {tx} still mined, too few confirmations after 0.3 s; "
        "it is recorded as sent in anchors.jsonl\n"
        "hint: run `memory-chain anchor` again to keep waiting for it\n"
    )
    report = invoke(reg, "anchor", "verify", "--confirmations", "3", "--json")
    assert report.code == 1
    (f,) = report.json()["anchors"]
    assert (f["tx"], f["status"], f["reason"]) == (tx, "unconfirmed", "anchor-unconfirmed")
    assert f["detail"] == f"transaction {tx} has 1 of 3 confirmations"
    node.mine(2)
    again = anchor_json(reg, "--confirmations", "3")
    assert (again["tx"], again["settled"], again["already_anchored"]) == (tx, [tx], True)
    assert again["confirmations"] == 3
    assert ok(reg, "anchor", "verify", "--confirmations", "3").code == 0


def test_already_anchored_in_either_mode_unless_a_mode_is_asked(reg: Cli, node: Anvil) -> None:
    """After a calldata anchor, a plain anchor sends nothing; --mode event anchors again."""
    tx = anchor_json(reg, "--mode", "calldata")["tx"]
    block = node.block_number()
    again = anchor_json(reg)
    assert (again["already_anchored"], again["tx"], again["mode"]) == (True, tx, "calldata")
    assert node.block_number() == block
    event = anchor_json(reg, "--mode", "event")
    assert (event["already_anchored"], event["mode"]) == (False, "event")
    assert node.block_number() == block + 1
    assert anchor_json(reg, "--mode", "calldata")["tx"] == tx

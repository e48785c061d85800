"""A real local EVM node for the anchor tests: start, talk to and stop anvil.

anvil comes from npm (`@foundry-rs/anvil`, pinned in package.json; `npm ci`
in the repo root installs it). ``node_modules/.bin/anvil`` is a Node wrapper
that spawns the platform binary, so each node runs in its own process group:
stopping, pausing (SIGSTOP) and resuming (SIGCONT) signal the whole group.

JSON-RPC here goes over urllib, not web3, so that importing this module (as
tests/conftest.py does) costs nothing for the tests that never anchor.

``invoke`` runs the CLI in this process like ``Cli.ok`` but returns any exit
code: the anchor tests call the CLI dozens of times, and a subprocess pays
for importing web3 (about a second) on every call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from helpers.cli import AMBIENT, Cli, Result, _ViaMain

REPO = Path(__file__).resolve().parents[2]
ANVIL = REPO / "node_modules" / ".bin" / "anvil"
CHAIN_ID = 31337

# The standard anvil/hardhat dev accounts ("test test ... junk" mnemonic): worthless outside tests.
DEV_KEYS = (
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
)
DEV_ADDRESSES = (
    "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
    "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
    "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
    "0x976ea74026e726554db657fa54763abd0c3a0aa9",
    "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
    "0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f",
    "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
)

ENV_EVM_KEY = "MEMORY_CHAIN_EVM_KEY"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0


class AnvilError(RuntimeError):
    """anvil is missing, did not start, or refused a request."""


def free_port() -> int:
    """A loopback TCP port that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def rpc_call(url: str, method: str, *params: Any, timeout: float = 5.0) -> Any:
    """One JSON-RPC request; the result, or AnvilError with the node's error."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    request = urllib.request.Request(
        url, body.encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        reply = json.loads(response.read())
    if "error" in reply:
        raise AnvilError(f"{method}: {reply['error']}")
    return reply["result"]


@dataclass
class Anvil:
    """One running anvil: its process (group leader), port and URL."""

    proc: subprocess.Popen[bytes]
    port: int
    args: tuple[str, ...]
    log: Path | None = None
    paused: bool = field(default=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rpc(self, method: str, *params: Any) -> Any:
        return rpc_call(self.url, method, *params)

    # -- what the tests ask of the node --------------------------------

    def block_number(self) -> int:
        return int(self.rpc("eth_blockNumber"), 16)

    def mine(self, blocks: int = 1) -> None:
        for _ in range(blocks):
            self.rpc("evm_mine")

    def automine(self, on: bool) -> None:
        self.rpc("evm_setAutomine", on)

    def snapshot(self) -> str:
        snap: str = self.rpc("evm_snapshot")
        return snap

    def revert(self, snap: str) -> None:
        assert self.rpc("evm_revert", snap) is True

    def transaction(self, tx: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.rpc("eth_getTransactionByHash", tx)
        return found

    def receipt(self, tx: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.rpc("eth_getTransactionReceipt", tx)
        return found

    def wait_receipt(self, tx: str, timeout: float = 10.0) -> dict[str, Any]:
        """The receipt of ``tx`` once mined (anvil mines a moment after accepting it)."""
        deadline = time.monotonic() + timeout
        while (receipt := self.receipt(tx)) is None:
            assert time.monotonic() < deadline, f"{tx} not mined within {timeout:g} s"
            time.sleep(0.02)
        return receipt

    def code(self, address: str) -> bytes:
        return bytes.fromhex(self.rpc("eth_getCode", address, "latest")[2:])

    def nonce(self, address: str) -> int:
        return int(self.rpc("eth_getTransactionCount", address, "pending"), 16)

    # -- the process ----------------------------------------------------

    def pause(self) -> None:
        """SIGSTOP the node (wrapper and binary): it accepts connections, answers nothing."""
        os.killpg(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        os.killpg(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        """SIGTERM the group, wait, SIGKILL it on a timeout. Idempotent."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if self.paused:
                    os.killpg(self.proc.pid, signal.SIGCONT)
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(STOP_TIMEOUT)
        # The binary may outlive the wrapper by a moment: make sure the group is gone.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.paused = False


def _wait_ready(proc: subprocess.Popen[bytes], url: str, deadline: float) -> str | None:
    """None once the node answers eth_chainId with 31337; else why it did not."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"anvil exited with code {proc.returncode}"
        try:
            served = int(rpc_call(url, "eth_chainId", timeout=1.0), 16)
        except (OSError, urllib.error.URLError, ValueError, AnvilError):
            time.sleep(0.05)
            continue
        if served != CHAIN_ID:
            return f"the node at {url} serves chain id {served}, not {CHAIN_ID}"
        return None
    return f"anvil did not answer eth_chainId within {START_TIMEOUT:g} s"


def start_anvil(*extra: str, port: int | None = None, log: Path | None = None) -> Anvil:
    """Start anvil on a free loopback port (or ``port``) and wait until it answers.

    ``extra`` are more anvil options (``--no-mining``, ``--state FILE``...).
    Raises AnvilError when the binary is missing or the node does not come up.
    """
    if not ANVIL.exists():
        raise AnvilError(
            f"anvil is not installed ({ANVIL} is missing): run `npm ci` in the repo root {REPO}"
        )
    attempts = 1 if port is not None else 3
    why = ""
    for _ in range(attempts):
        p = port if port is not None else free_port()
        args = (str(ANVIL), "--port", str(p), "--host", "127.0.0.1", "--silent", *extra)
        out = open(log, "ab") if log is not None else subprocess.DEVNULL  # noqa: SIM115
        try:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            if log is not None:
                out.close()  # type: ignore[union-attr]
        node = Anvil(proc, p, args, log)
        why = _wait_ready(proc, node.url, time.monotonic() + START_TIMEOUT) or ""
        if not why:
            return node
        node.stop()  # e.g. the port was taken between free_port() and the bind
    raise AnvilError(f"{why} (ran: {' '.join(args)})")


# -- the CLI in this process, any exit code ------------------------------


def invoke(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> Result:
    """Run ``memory-chain args`` in this process, as Cli.ok does, without requiring exit 0.

    The environment is this process's (so monkeypatched variables apply),
    with Cli's HOME and data directory, plus ``env`` (None removes a name).
    """
    run_env: dict[str, str | None] = {name: None for name in AMBIENT}
    run_env.update(HOME=cli.env["HOME"], MEMORY_CHAIN_DIR=str(cli.root))
    run_env.update(env or {})
    showwarning = warnings.showwarning
    try:
        result = CliRunner().invoke(_ViaMain("memory-chain"), list(args), env=run_env)
    finally:
        warnings.showwarning = showwarning
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    cli._collect({k: v for k, v in run_env.items() if v is not None})
    cli._check(args, result.stdout, result.stderr)
    evm_key = run_env.get(ENV_EVM_KEY) or os.environ.get(ENV_EVM_KEY) or ""
    assert_no_evm_key(evm_key, result.stdout + result.stderr, f"memory-chain {' '.join(args)}")
    return Result(result.exit_code, result.stdout, result.stderr)


def assert_no_evm_key(key: str, text: str, where: str) -> None:
    """Neither the EVM key's hex nor that of any dev key appears in ``text``."""
    for secret in {key, *DEV_KEYS}:
        bare = secret.strip().lower().removeprefix("0x")
        if len(bare) == 64:
            assert bare not in text.lower(), f"an EVM private key was printed by {where}"


def ok(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> Result:
    """invoke(), requiring exit 0."""
    result = invoke(cli, *args, env=env)
    assert result.code == 0, result.err or result.out
    return result


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- setting a test up against a node -------------------------------------


def use_node(
    monkeypatch: Any, url: str, *, key: str = DEV_KEYS[1], state: Path | None = None
) -> None:
    """Point network anvil at ``url``, pay with ``key``, keep state in ``state`` if given."""
    monkeypatch.setenv("MEMORY_CHAIN_RPC_ANVIL", url)
    monkeypatch.setenv(ENV_EVM_KEY, key)
    if state is not None:
        monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(state))


def artifact() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (REPO / "anchor" / "contracts" / "MemoryChainAnchors.json").read_text()
    )
    return data


def send_tx(node: Anvil, key: str, to: str | None, data: bytes, gas: int = 500_000) -> str:
    """Sign and send a transaction with eth_account (not the code under test); its hash."""
    from eth_account import Account
    from eth_utils import to_checksum_address

    account = Account.from_key(key)
    tx: dict[str, Any] = {
        "type": 2,
        "chainId": CHAIN_ID,
        "nonce": node.nonce(account.address),
        "value": 0,
        "data": "0x" + data.hex(),
        "gas": gas,
        "maxFeePerGas": 10**10,
        "maxPriorityFeePerGas": 10**9,
    }
    if to is not None:
        tx["to"] = to_checksum_address(to)
    signed = account.sign_transaction(tx)
    sent: str = node.rpc("eth_sendRawTransaction", "0x" + signed.raw_transaction.hex())
    return sent


def deploy_registry(node: Anvil, key: str = DEV_KEYS[0]) -> tuple[str, int]:
    """Deploy the committed artifact (automine on); (address, block)."""
    tx = send_tx(node, key, None, bytes.fromhex(artifact()["bytecode"][2:]))
    receipt = node.wait_receipt(tx)
    assert receipt["status"] == "0x1", receipt
    return receipt["contractAddress"], int(receipt["blockNumber"], 16)


def set_registry(root: Path, address: str, block: int, network: str = "anvil") -> None:
    """Write a registry into config.json as `anchor deploy` does."""
    path = root / "config.json"
    config = json.loads(path.read_text())
    nets = config.setdefault("anchor", {}).setdefault("networks", {})
    nets.setdefault(network, {}).update(registry=address, registry_block=block)
    path.write_text(json.dumps(config, indent=2) + "\n")

"""The EVM anchor contract: the committed artifact is what the pinned solc makes of the source."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CONTRACTS = REPO / "anchor" / "contracts"
ARTIFACT = CONTRACTS / "MemoryChainAnchors.json"
COMPILE = CONTRACTS / "compile.mjs"

FUNCTION_SIGNATURE = "anchor(bytes32,uint64,bytes32,bytes32)"
EVENT_SIGNATURE = "Anchored(bytes32,uint64,bytes32,bytes32,address)"

SSTORE = 0x55
TSTORE = 0x5D
PUSH1 = 0x60
PUSH32 = 0x7F


def _artifact() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ARTIFACT.read_text(encoding="utf-8"))
    return data


def _code(hex_code: str) -> bytes:
    assert hex_code.startswith("0x")
    return bytes.fromhex(hex_code[2:])


def _walk(code: bytes) -> list[tuple[int, bytes]]:
    """Each instruction of `code` as (opcode, push data), skipping over PUSH data."""
    out: list[tuple[int, bytes]] = []
    pc = 0
    while pc < len(code):
        op = code[pc]
        width = op - PUSH1 + 1 if PUSH1 <= op <= PUSH32 else 0
        data = code[pc + 1 : pc + 1 + width]
        assert len(data) == width, f"PUSH{width} at {pc} runs past the end of the code"
        out.append((op, data))
        pc += 1 + width
    return out


def _keccak(text: str) -> bytes:
    try:
        from eth_utils.crypto import keccak
    except ImportError:
        pytest.fail("eth_utils is missing: install web3 (or eth-utils) into the test environment")
    digest: bytes = keccak(text=text)
    return digest


def test_recompile_is_byte_identical(tmp_path: Path) -> None:
    """Recompiling the source with the pinned solc, from any cwd, gives the committed artifact."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"node is not on PATH: install Node.js 20+ and run `npm ci` in {REPO}")
    if not (REPO / "node_modules" / "solc" / "package.json").is_file():
        pytest.fail(f"node_modules/solc is missing: run `npm ci` in {REPO}")
    result = subprocess.run(
        [node, str(COMPILE), "--stdout"], cwd=tmp_path, capture_output=True, check=False
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert result.stdout == ARTIFACT.read_bytes()
    assert list(tmp_path.iterdir()) == []


def test_artifact_is_the_pinned_compiler_with_fixed_settings() -> None:
    """The artifact names solc 0.8.28 and the settings that keep metadata out of the bytecode."""
    artifact = _artifact()
    assert sorted(artifact) == [
        "abi",
        "bytecode",
        "compiler",
        "contractName",
        "deployedBytecode",
        "sourceFile",
    ]
    assert artifact["contractName"] == "MemoryChainAnchors"
    assert artifact["sourceFile"] == "MemoryChainAnchors.sol"
    assert artifact["compiler"]["version"].startswith("0.8.28+commit.")
    assert artifact["compiler"]["settings"] == {
        "evmVersion": "cancun",
        "metadata": {"appendCBOR": False, "bytecodeHash": "none"},
        "optimizer": {"enabled": True, "runs": 200},
        "outputSelection": {
            "MemoryChainAnchors.sol": {
                "MemoryChainAnchors": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]
            }
        },
    }
    # No constructor arguments and no immutables: the creation code ends with the runtime code.
    assert artifact["bytecode"].endswith(artifact["deployedBytecode"][2:])


def test_abi_is_one_function_and_one_event() -> None:
    """The ABI is exactly anchor(bytes32,uint64,bytes32,bytes32) and the Anchored event."""
    abi = _artifact()["abi"]
    assert len(abi) == 2
    functions = [item for item in abi if item["type"] == "function"]
    events = [item for item in abi if item["type"] == "event"]
    assert len(functions) == 1
    assert len(events) == 1
    (function,) = functions
    (event,) = events

    assert function["name"] == "anchor"
    assert function["stateMutability"] == "nonpayable"
    assert function["outputs"] == []
    assert [(i["name"], i["type"]) for i in function["inputs"]] == [
        ("chainId", "bytes32"),
        ("treeSize", "uint64"),
        ("root", "bytes32"),
        ("checkpointHash", "bytes32"),
    ]
    assert f"anchor({','.join(i['type'] for i in function['inputs'])})" == FUNCTION_SIGNATURE

    assert event["name"] == "Anchored"
    assert event["anonymous"] is False
    assert [(i["name"], i["type"], i["indexed"]) for i in event["inputs"]] == [
        ("chainId", "bytes32", True),
        ("treeSize", "uint64", False),
        ("root", "bytes32", False),
        ("checkpointHash", "bytes32", False),
        ("sender", "address", True),
    ]
    assert f"Anchored({','.join(i['type'] for i in event['inputs'])})" == EVENT_SIGNATURE
    assert [item for item in abi if item.get("stateMutability") == "payable"] == []


def test_opcode_walker_skips_push_data() -> None:
    """The walker reads PUSH data as data: a 0x55 inside PUSH2 data is no SSTORE."""
    code = bytes([0x61, 0x55, 0x55, 0x5F, 0x55, 0x7F, *([0x55] * 32), 0x00])
    assert _walk(code) == [
        (0x61, b"\x55\x55"),
        (0x5F, b""),
        (SSTORE, b""),
        (PUSH32, b"\x55" * 32),
        (0x00, b""),
    ]


def test_runtime_code_has_no_storage_writes() -> None:
    """The deployed code has no SSTORE or TSTORE instruction: the contract keeps no state."""
    ops = [op for op, _ in _walk(_code(_artifact()["deployedBytecode"]))]
    assert SSTORE not in ops
    assert TSTORE not in ops


def test_runtime_code_pushes_selector_and_event_topic() -> None:
    """The deployed code dispatches on the anchor selector and logs the Anchored topic."""
    pushes = [data for _, data in _walk(_code(_artifact()["deployedBytecode"]))]
    selector = _keccak(FUNCTION_SIGNATURE)[:4]
    topic = _keccak(EVENT_SIGNATURE)
    assert selector.hex() == "7f00e393"
    assert topic.hex() == "a5a075337b25e826b34aaec08938fe05a4c35aca3e469eb0debb58759e5a0b5b"
    assert selector in pushes
    assert topic in pushes

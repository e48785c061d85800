"""The compiled registry contract shipped with the package.

contracts/MemoryChainAnchors.json is written by contracts/compile.mjs with
the pinned solc (package.json); tests/test_anchor_contract.py recompiles it
and checks the bytes are identical.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["Artifact", "load_artifact"]


@dataclass(frozen=True, slots=True)
class Artifact:
    abi: list[dict[str, Any]]
    bytecode: bytes  # creation code
    deployed_bytecode: bytes  # runtime code, as eth_getCode returns it
    compiler: str


@cache
def load_artifact() -> Artifact:
    text = (
        resources.files("memory_chain.anchor")
        .joinpath("contracts/MemoryChainAnchors.json")
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    return Artifact(
        data["abi"],
        bytes.fromhex(data["bytecode"].removeprefix("0x")),
        bytes.fromhex(data["deployedBytecode"].removeprefix("0x")),
        data["compiler"]["version"],
    )

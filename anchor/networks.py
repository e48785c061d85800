"""EVM networks: the built-in ones, what config.json adds, and the RPC URL.

A network has a name, an EVM chain id, an RPC URL, a registry address (the
MemoryChainAnchors contract, once deployed) and a number of confirmations.
config.json may override any of them under ``anchor.networks.<name>`` and
define new networks (which must then give a chain id). The RPC URL comes
from ``--rpc``, else ``$MEMORY_CHAIN_RPC_<NAME>`` (name upper-cased, ``-``
as ``_``), else config; only anvil has a built-in URL. No key or passphrase
is ever read from config (FORMAT 18.6).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Final

from memory_chain.chain.format.config import Config
from memory_chain.chain.format.errors import InputError, OperationalError

__all__ = [
    "BUILT_IN",
    "DEFAULT_NETWORK",
    "Network",
    "anchor_config",
    "network_names",
    "resolve_network",
    "rpc_env_name",
]

ADDRESS_RE: Final = re.compile(r"0x[0-9a-fA-F]{40}")
NAME_RE: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
DEFAULT_NETWORK: Final = "anvil"
# Keys that would mean someone stored a secret in config.json.
_SECRET_KEYS: Final = ("key", "private_key", "privatekey", "passphrase", "password", "mnemonic")


@dataclass(frozen=True, slots=True)
class Network:
    name: str
    evm_chain_id: int
    rpc_url: str | None
    registry: str | None  # checksummed or not; compared case-insensitively
    registry_block: int  # first block to scan for Anchored logs
    confirmations: int
    scan_step: int = 10_000  # blocks per eth_getLogs request

    def describe(self) -> str:
        return f"{self.name} (chain id {self.evm_chain_id})"


BUILT_IN: Final = {
    "anvil": Network("anvil", 31337, "http://127.0.0.1:8545", None, 0, 1),
    "sepolia": Network("sepolia", 11155111, None, None, 0, 6),
    "base-sepolia": Network("base-sepolia", 84532, None, None, 0, 10),
    "base": Network("base", 8453, None, None, 0, 10),
}


def rpc_env_name(name: str) -> str:
    return "MEMORY_CHAIN_RPC_" + name.upper().replace("-", "_")


def anchor_config(config: Config) -> dict[str, Any]:
    """config.json's ``anchor`` object, checked for shape and for secrets."""
    section = config.data.get("anchor", {})
    if not isinstance(section, dict):
        raise OperationalError("config.json: 'anchor' must be an object")
    networks = section.get("networks", {})
    if not isinstance(networks, dict):
        raise OperationalError("config.json: 'anchor.networks' must be an object")
    for where, obj in [
        ("anchor", section),
        *((f"anchor.networks.{k}", v) for k, v in networks.items()),
    ]:
        if not isinstance(obj, dict):
            raise OperationalError(f"config.json: '{where}' must be an object")
        for key in obj:
            if key.lower().replace("-", "_") in _SECRET_KEYS or "secret" in key.lower():
                raise OperationalError(
                    f"config.json holds '{where}.{key}': EVM keys never go in config",
                    hint="remove it; use $MEMORY_CHAIN_EVM_KEY or an encrypted keystore",
                )
    return section


def network_names(config: Config) -> list[str]:
    return sorted({*BUILT_IN, *anchor_config(config).get("networks", {})})


def _int(value: Any, where: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise OperationalError(f"config.json: '{where}' must be an integer >= {low}")
    return value


def resolve_network(
    config: Config,
    name: str | None,
    *,
    rpc_url: str | None = None,
    confirmations: int | None = None,
) -> Network:
    """The network called ``name`` (default: config's ``anchor.network``, else anvil)."""
    section = anchor_config(config)
    name = name or section.get("network") or DEFAULT_NETWORK
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        raise InputError(f"{name!r} is not a network name (lower-case letters, digits, '-')")
    own = section.get("networks", {}).get(name)
    base = BUILT_IN.get(name)
    if base is None and own is None:
        raise InputError(
            f"unknown network {name!r}",
            hint="built in: " + ", ".join(BUILT_IN) + "; add others under anchor.networks",
        )
    if base is None:
        if "chain_id" not in own:
            raise OperationalError(f"config.json: network {name!r} needs a 'chain_id'")
        base = Network(name, 1, None, None, 0, 1)
    net = base
    where = f"anchor.networks.{name}"
    for key, value in (own or {}).items():
        if key == "chain_id":
            net = replace(net, evm_chain_id=_int(value, f"{where}.chain_id", 1))
        elif key == "rpc_url":
            if not isinstance(value, str) or not value:
                raise OperationalError(f"config.json: '{where}.rpc_url' must be a URL")
            net = replace(net, rpc_url=value)
        elif key == "registry":
            if not isinstance(value, str) or ADDRESS_RE.fullmatch(value) is None:
                raise OperationalError(f"config.json: '{where}.registry' must be an address")
            net = replace(net, registry=value)
        elif key == "registry_block":
            net = replace(net, registry_block=_int(value, f"{where}.registry_block", 0))
        elif key == "confirmations":
            net = replace(net, confirmations=_int(value, f"{where}.confirmations", 0))
        elif key == "scan_step":
            net = replace(net, scan_step=_int(value, f"{where}.scan_step", 1))
    env = os.environ.get(rpc_env_name(name))
    if env:
        net = replace(net, rpc_url=env)
    if rpc_url:
        net = replace(net, rpc_url=rpc_url)
    if confirmations is not None:
        net = replace(net, confirmations=confirmations)
    return net


def require_rpc(net: Network) -> str:
    if not net.rpc_url:
        raise OperationalError(
            f"network {net.name} has no RPC URL",
            hint=f"set {rpc_env_name(net.name)}, pass --rpc, "
            f"or put anchor.networks.{net.name}.rpc_url in config.json",
        )
    return net.rpc_url


def record_registry(config: Config, name: str, address: str, block: int) -> None:
    """Remember a deployed registry for ``name`` (the caller saves config)."""
    section = config.data.setdefault("anchor", {})
    own = section.setdefault("networks", {}).setdefault(name, {})
    own["registry"] = address
    own["registry_block"] = block

"""A thin JSON-RPC client over web3.py, with errors in the project's terms.

Every call that leaves the process goes through :meth:`Rpc._call`, which
turns transport failures (node down, timeout, refused request) into one
OperationalError naming the URL and the method. Nothing here decides what a
result means; post.py and audit.py do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from memory_chain.chain.format.errors import OperationalError

from .networks import Network, require_rpc

__all__ = ["Rpc", "checksum_address", "connect", "hex0x"]

T = TypeVar("T")
TIMEOUT: Final = 10.0  # seconds per request


def checksum_address(value: str) -> str:
    """The checksummed form web3.py insists on (config and records hold any case)."""
    from web3 import Web3

    return str(Web3.to_checksum_address(value))


def hex0x(value: Any) -> str:
    """0x-hex of bytes-like web3 values, lower case."""
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    return str(value).lower()


class Rpc:
    """One node, one network: checked to serve the network's EVM chain id."""

    def __init__(self, net: Network, url: str, *, timeout: float = TIMEOUT) -> None:
        from web3 import Web3

        self.net = net
        self.memo: dict[tuple[str, str], object] = {}  # per-node answers that cannot change
        self.url = url
        self.w3 = Web3(
            Web3.HTTPProvider(
                url, request_kwargs={"timeout": timeout}, exception_retry_configuration=None
            )
        )

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        from requests.exceptions import RequestException
        from web3.exceptions import Web3Exception, Web3RPCError

        try:
            return fn()
        except Web3RPCError as exc:
            message = exc.rpc_response.get("error", {}).get("message") if exc.rpc_response else None
            raise OperationalError(
                f"the node at {self.url} refused {what}: {message or exc}"
            ) from None
        except (RequestException, ConnectionError, TimeoutError, OSError) as exc:
            kind = type(exc).__name__
            raise OperationalError(
                f"cannot reach the node at {self.url} ({what}: {kind})",
                hint="is the node running? check the RPC URL, then run the command again",
            ) from None
        except Web3Exception as exc:
            raise OperationalError(f"the node at {self.url} failed {what}: {exc}") from None

    def chain_id(self) -> int:
        return int(self._call("eth_chainId", lambda: self.w3.eth.chain_id))

    def check_chain_id(self) -> None:
        served = self.chain_id()
        if served != self.net.evm_chain_id:
            raise OperationalError(
                f"the node at {self.url} serves EVM chain id {served}, "
                f"but network {self.net.name} is chain id {self.net.evm_chain_id}",
                hint="point the network at the right RPC URL",
            )

    def block_number(self) -> int:
        return int(self._call("eth_blockNumber", lambda: self.w3.eth.block_number))

    def block_hash(self, number: int) -> str | None:
        """The canonical block hash at ``number``, or None past the head."""
        from web3.exceptions import BlockNotFound

        def get() -> str | None:
            try:
                return hex0x(self.w3.eth.get_block(number)["hash"])
            except BlockNotFound:
                return None

        return self._call("eth_getBlockByNumber", get)

    def transaction(self, tx: str) -> dict[str, Any] | None:
        from web3.exceptions import TransactionNotFound

        def get() -> dict[str, Any] | None:
            try:
                return dict(self.w3.eth.get_transaction(tx))  # type: ignore[arg-type]
            except TransactionNotFound:
                return None

        return self._call("eth_getTransactionByHash", get)

    def receipt(self, tx: str) -> dict[str, Any] | None:
        from web3.exceptions import TransactionNotFound

        def get() -> dict[str, Any] | None:
            try:
                return dict(self.w3.eth.get_transaction_receipt(tx))  # type: ignore[arg-type]
            except TransactionNotFound:
                return None

        return self._call("eth_getTransactionReceipt", get)

    def code(self, address: str) -> bytes:
        checksummed = checksum_address(address)
        return bytes(self._call("eth_getCode", lambda: self.w3.eth.get_code(checksummed)))  # type: ignore[arg-type]

    def nonce(self, address: str, *, pending: bool = True) -> int:
        """The next nonce of ``address``, counting pending transactions or only mined ones."""
        block = "pending" if pending else "latest"
        checksummed = checksum_address(address)
        return int(
            self._call(
                "eth_getTransactionCount",
                lambda: self.w3.eth.get_transaction_count(checksummed, block),  # type: ignore[arg-type]
            )
        )

    def fees(self) -> tuple[int, int]:
        """(maxFeePerGas, maxPriorityFeePerGas) for an EIP-1559 transaction."""
        base = self._call("eth_getBlockByNumber", lambda: self.w3.eth.get_block("latest"))
        base_fee = int(base.get("baseFeePerGas", 0))
        tip = int(self._call("eth_maxPriorityFeePerGas", lambda: self.w3.eth.max_priority_fee))
        return 2 * base_fee + tip, tip

    def estimate_gas(self, tx: dict[str, Any]) -> int:
        tx = {k: checksum_address(v) if k in ("from", "to") and v else v for k, v in tx.items()}
        return int(self._call("eth_estimateGas", lambda: self.w3.eth.estimate_gas(tx)))  # type: ignore[arg-type]

    def send_raw(self, raw: bytes) -> str:
        return hex0x(
            self._call("eth_sendRawTransaction", lambda: self.w3.eth.send_raw_transaction(raw))
        )

    def logs(
        self, address: str, topics: list[str | None], start: int, end: int
    ) -> list[dict[str, Any]]:
        query = {
            "address": checksum_address(address),
            "topics": topics,
            "fromBlock": start,
            "toBlock": end,
        }
        found = self._call("eth_getLogs", lambda: self.w3.eth.get_logs(query))  # type: ignore[arg-type]
        return [dict(log) for log in found]


def connect(net: Network, *, check: bool = True, wait: float | None = None) -> Rpc:
    """A client for ``net``'s RPC URL, checked to serve its chain id.

    ``wait`` is the caller's whole time budget (`anchor --timeout`): each
    request then gives up after ``wait`` seconds (at least 1, at most
    TIMEOUT), so a node that accepts connections but answers nothing (a
    stopped process) cannot hold the command for TIMEOUT per request.
    """
    timeout = TIMEOUT if wait is None else min(TIMEOUT, max(wait, 1.0))
    rpc = Rpc(net, require_rpc(net), timeout=timeout)
    if check:
        rpc.check_chain_id()
    return rpc

"""One error hierarchy, split by what the caller can do about it.

``IntegrityError`` means the data is not what it claims to be (tampering,
bad signature, fork, truncation): the CLI exits 1. ``OperationalError``
means the command could not do its job (bad input, unreadable file, wrong
passphrase): the CLI exits 2. Both carry a one-line message and a hint.
"""

from __future__ import annotations

__all__ = [
    "ChainStateError",
    "InputError",
    "IntegrityError",
    "KeyAccessError",
    "MemoryChainError",
    "OperationalError",
]


class MemoryChainError(Exception):
    """Base of every error memory-chain raises on purpose."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class IntegrityError(MemoryChainError):
    """The chain, a blob or a pin does not verify.

    ``seq`` is the first failing entry (None when the failure is not tied to
    one entry) and ``reason`` is a stable machine-readable code.
    """

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        seq: int | None = None,
        reason: str = "integrity",
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.seq = seq
        self.reason = reason


class OperationalError(MemoryChainError):
    """The command could not run: environment, files, permissions."""


class InputError(OperationalError):
    """The caller's input is invalid (bad text, metadata, option)."""


class KeyAccessError(OperationalError):
    """The signing key is missing, unreadable, unsafe or locked."""


class ChainStateError(OperationalError):
    """The data directory is missing, uninitialised or already exists."""

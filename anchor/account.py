"""The EVM account that pays for anchors.

From ``$MEMORY_CHAIN_EVM_KEY`` (a 32-byte hex private key), else from an
encrypted keystore file in the standard Ethereum format (Web3 Secret
Storage, as eth-account writes it) named by ``$MEMORY_CHAIN_EVM_KEYSTORE``,
whose passphrase comes from ``$MEMORY_CHAIN_EVM_PASSPHRASE`` or a hidden
prompt. Never from the command line, never printed, never in config.json.
Error messages name the source, never the key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from memory_chain.chain.format.errors import KeyAccessError

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

__all__ = ["ENV_KEY", "ENV_KEYSTORE", "ENV_PASSPHRASE", "load_account"]

ENV_KEY: Final = "MEMORY_CHAIN_EVM_KEY"
ENV_KEYSTORE: Final = "MEMORY_CHAIN_EVM_KEYSTORE"
ENV_PASSPHRASE: Final = "MEMORY_CHAIN_EVM_PASSPHRASE"
_HEX_KEY: Final = re.compile(r"(0x)?[0-9a-fA-F]{64}")

Prompt = Callable[[str], str]


def load_account(prompt: Prompt | None = None) -> LocalAccount:
    """The signing account, or KeyAccessError saying how to provide one."""
    from eth_account import Account

    raw = os.environ.get(ENV_KEY)
    if raw is not None:
        raw = raw.strip()
        if _HEX_KEY.fullmatch(raw) is None:
            raise KeyAccessError(f"${ENV_KEY} is not a 32-byte hex private key")
        try:
            return cast("LocalAccount", Account.from_key(raw))
        except (ValueError, TypeError):
            raise KeyAccessError(f"${ENV_KEY} is not a valid secp256k1 private key") from None
    path = os.environ.get(ENV_KEYSTORE)
    if not path:
        raise KeyAccessError(
            "no EVM account to pay for the anchor",
            hint=f"set ${ENV_KEY}, or ${ENV_KEYSTORE} to an encrypted keystore file",
        )
    try:
        keystore = json.loads(Path(path).expanduser().read_text())
    except FileNotFoundError:
        raise KeyAccessError(f"keystore {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KeyAccessError(f"cannot read keystore {path}: {exc}") from None
    passphrase = os.environ.get(ENV_PASSPHRASE)
    if passphrase is None:
        if prompt is None:
            raise KeyAccessError(
                f"keystore {path} needs its passphrase",
                hint=f"set ${ENV_PASSPHRASE} or run in a terminal",
            )
        passphrase = prompt(f"Passphrase for {path}")
    try:
        key = Account.decrypt(keystore, passphrase)
    except ValueError:
        raise KeyAccessError(f"wrong passphrase for keystore {path}") from None
    except (KeyError, TypeError):
        raise KeyAccessError(f"{path} is not an Ethereum keystore file") from None
    return cast("LocalAccount", Account.from_key(key))

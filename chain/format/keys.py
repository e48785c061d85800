"""Signing keys in three modes: raw file, passphrase-encrypted file, env.

- raw: ``agent.key`` holds the 32-byte Ed25519 seed as hex, mode 0600; a
  key file readable by group or others is refused.
- encrypted: ``agent.key.enc`` holds the seed sealed with libsodium's
  secretbox under a key derived by argon2id from a passphrase.
- env: the seed is read from ``MEMORY_CHAIN_SIGNING_KEY`` (hex) on every use.
- none: no secret key at all (a chain made by ``memory-chain import``): the
  chain is read-only until a key is put in place by hand.

A secret key is never printed, logged or put in an exception message.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from .errors import InputError, KeyAccessError
from .fsutil import fsync_dir, write_all

__all__ = [
    "ENV_KEY",
    "ENV_NEW_KEY",
    "ENV_PASSPHRASE",
    "KEY_MODES",
    "NO_KEY_MODE",
    "PassphraseSource",
    "Signer",
    "failed_signatures",
    "failed_with_key",
    "key_file",
    "load_signer",
    "parse_public_key",
    "read_public_key_file",
    "store_signer",
    "verify_sig",
    "write_public_key_file",
]

KEY_MODES: Final = ("raw", "encrypted", "env")
#: The key mode of an imported chain: there is no secret key (read-only).
NO_KEY_MODE: Final = "none"
ENV_KEY: Final = "MEMORY_CHAIN_SIGNING_KEY"
ENV_NEW_KEY: Final = "MEMORY_CHAIN_NEW_SIGNING_KEY"
ENV_PASSPHRASE: Final = "MEMORY_CHAIN_PASSPHRASE"
KEY_PREFIX: Final = "ed25519:"

#: Called with a prompt and whether to confirm; returns the passphrase.
PassphraseSource = Callable[[str, bool], str]


class Signer:
    """An Ed25519 signing key. Its repr and str never show the secret."""

    __slots__ = ("_crypto_sign", "_secret", "_sk", "key_id", "public")

    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise KeyAccessError("an Ed25519 seed is 32 bytes")
        from nacl.bindings import crypto_sign
        from nacl.signing import SigningKey

        self._sk = SigningKey(seed)
        self.public = bytes(self._sk.verify_key)
        self.key_id = KEY_PREFIX + self.public.hex()
        # libsodium's secret key (seed and public key), for the binding called directly:
        # SigningKey.sign wraps each signature in a SignedMessage (3 us of an add's ~70).
        self._secret = self.seed() + self.public
        self._crypto_sign = crypto_sign

    @classmethod
    def generate(cls) -> Signer:
        from nacl import utils

        return cls(utils.random(32))

    def sign(self, message: bytes) -> str:
        """Return the detached signature over ``message`` as 128 hex chars."""
        return self._crypto_sign(message, self._secret)[:64].hex()

    def seed(self) -> bytes:
        """The secret seed, for writing it to its key file only."""
        return bytes(self._sk)

    def __repr__(self) -> str:
        return f"Signer({self.key_id})"


#: PyNaCl's verify and the errors it raises, loaded at the first signature checked: a
#: session start that finds nothing new to verify never imports PyNaCl (6 ms).
_sign_open: Any = None
_bad: tuple[type[BaseException], ...] = ()
#: PyNaCl's compiled libsodium module (its ffi and lib), or None where it is not at hand.
_ffi: Any = None
_lib: Any = None


def _load_nacl() -> None:
    global _sign_open, _bad, _ffi, _lib
    from nacl import bindings
    from nacl.exceptions import BadSignatureError, CryptoError

    try:
        from nacl._sodium import ffi, lib

        _ffi, _lib = ffi, lib
    except ImportError:  # a PyNaCl built otherwise: its binding alone is used
        _ffi = _lib = None
    _bad = (BadSignatureError, CryptoError, ValueError)
    _sign_open = bindings.crypto_sign_open


def verify_sig(key_id: str, message: bytes, sig_hex: str) -> bool:
    """True when ``sig_hex`` is a valid Ed25519 signature of ``message``."""
    if _sign_open is None:
        _load_nacl()
    public = bytes.fromhex(key_id[len(KEY_PREFIX) :])
    try:
        _sign_open(bytes.fromhex(sig_hex) + message, public)
    except _bad:
        return False
    return True


def failed_signatures(jobs: Sequence[tuple[bytes, bytes, bytes]]) -> list[int]:
    """Positions in ``jobs`` (32-byte public key, message, 64-byte signature) that fail.

    verify_sig for many at once, in one tight loop: the verifier queues a
    chunk's signatures and checks them here. It calls libsodium's
    crypto_sign_open (the function PyNaCl's binding wraps) with one output
    buffer for the whole batch, which saves the binding's two allocations
    a call; without PyNaCl's compiled module at hand, it uses the binding.
    """
    if _sign_open is None:
        _load_nacl()
    failed = []
    if _lib is None:
        open_, bad = _sign_open, _bad
        for i, (public, message, sig) in enumerate(jobs):
            try:
                if len(public) != 32 or len(sig) != 64:
                    raise ValueError("an Ed25519 key is 32 bytes, a signature 64")
                open_(sig + message, public)
            except bad:
                failed.append(i)
        return failed
    call = _lib.crypto_sign_open
    out = _ffi.new("unsigned char[]", 64 + max((len(m) for _, m, _ in jobs), default=0))
    out_len = _ffi.new("unsigned long long *")
    for i, (public, message, sig) in enumerate(jobs):
        if len(public) != 32 or len(sig) != 64:
            failed.append(i)
            continue
        signed = sig + message
        if call(out, out_len, signed, len(signed), public) != 0:
            failed.append(i)
    return failed


def failed_with_key(public: bytes, signed: Sequence[bytes]) -> bool:
    """Whether any of ``signed`` (a 64-byte signature, then the message it signs) fails
    by one 32-byte key.

    failed_signatures() for a stretch of entries signed by one key (verify's
    runs), each given as libsodium's crypto_sign_open takes it: the loop
    does nothing else.
    """
    if len(public) != 32 or (signed and min(map(len, signed)) < 64):
        return True
    if _sign_open is None:
        _load_nacl()
    if _lib is None:
        return bool(failed_signatures([(public, s[64:], s[:64]) for s in signed]))
    call = _lib.crypto_sign_open
    out = _ffi.new("unsigned char[]", max(map(len, signed), default=64))
    out_len = _ffi.new("unsigned long long *")
    for message in signed:  # noqa: SIM110 (a loop: any() over a generator is slower here)
        if call(out, out_len, message, len(message), public) != 0:
            return True
    return False


def parse_public_key(text: str) -> str:
    """Accept ``ed25519:<hex>`` or bare hex; return the ``ed25519:`` form."""
    text = text.strip()
    hex_part = text[len(KEY_PREFIX) :] if text.startswith(KEY_PREFIX) else text
    try:
        from nacl.exceptions import CryptoError
        from nacl.signing import VerifyKey

        raw = bytes.fromhex(hex_part)
        if len(raw) != 32:
            raise ValueError
        VerifyKey(raw)
    except (ValueError, CryptoError):
        raise InputError(
            f"not an Ed25519 public key: {text[:80]!r}",
            hint="give ed25519:<64 hex characters>, as `memory-chain keys export-public` prints",
        ) from None
    return KEY_PREFIX + raw.hex()


def _seed_from_hex(text: str, origin: str) -> bytes:
    try:
        seed = bytes.fromhex(text.strip())
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise KeyAccessError(
            f"{origin} is not a 64-hex-character Ed25519 seed",
            hint="generate one with `openssl rand -hex 32`",
        )
    return seed


def key_file(data_dir: Path, mode: str) -> Path | None:
    """Where the secret key of ``mode`` lives (None for env mode)."""
    if mode == "raw":
        return data_dir / "agent.key"
    if mode == "encrypted":
        return data_dir / "agent.key.enc"
    return None


def _check_private(path: Path) -> None:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise KeyAccessError(
            f"signing key not found: {path}",
            hint="restore the key file, or check --dir / MEMORY_CHAIN_DIR",
        ) from None
    except OSError as exc:
        raise KeyAccessError(f"cannot read signing key {path}: {exc.strerror}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyAccessError(
            f"refusing to use {path}: readable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o})",
            hint=f"run `chmod 600 {path}`",
        )


def _write_private(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600 and durable contents."""
    _write_durable(path, data, 0o600)


def _write_durable(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _seal(seed: bytes, public_id: str, passphrase: str) -> bytes:
    from nacl import pwhash, secret, utils  # only encrypted mode needs them

    salt = utils.random(pwhash.argon2id.SALTBYTES)
    ops = pwhash.argon2id.OPSLIMIT_MODERATE
    mem = pwhash.argon2id.MEMLIMIT_INTERACTIVE
    box_key = pwhash.argon2id.kdf(
        secret.SecretBox.KEY_SIZE, passphrase.encode(), salt, opslimit=ops, memlimit=mem
    )
    sealed = secret.SecretBox(box_key).encrypt(seed)
    doc = {
        "format": "memory-chain-key/1",
        "kdf": "argon2id13",
        "opslimit": ops,
        "memlimit": mem,
        "salt": salt.hex(),
        "secretbox": bytes(sealed).hex(),
        "public_key": public_id,
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _unseal(path: Path, passphrase: str) -> bytes:
    try:
        doc = orjson.loads(path.read_bytes())
        salt = bytes.fromhex(doc["salt"])
        sealed = bytes.fromhex(doc["secretbox"])
        ops, mem = int(doc["opslimit"]), int(doc["memlimit"])
    except (OSError, ValueError, KeyError, TypeError):
        raise KeyAccessError(f"encrypted key file is unreadable or corrupt: {path}") from None
    from nacl import pwhash, secret  # only encrypted mode needs them
    from nacl.exceptions import CryptoError

    box_key = pwhash.argon2id.kdf(
        secret.SecretBox.KEY_SIZE, passphrase.encode(), salt, opslimit=ops, memlimit=mem
    )
    try:
        return bytes(secret.SecretBox(box_key).decrypt(sealed))
    except CryptoError:
        raise KeyAccessError(
            "wrong passphrase for the encrypted signing key",
            hint=f"check {ENV_PASSPHRASE} or the passphrase you typed",
        ) from None


def store_signer(
    signer: Signer,
    path: Path | None,
    mode: str,
    passphrase: PassphraseSource | None,
) -> None:
    """Write ``signer``'s seed to ``path`` in ``mode`` (no-op for env mode)."""
    if mode == "env" or path is None:
        return
    if mode == "raw":
        _write_private(path, signer.seed().hex().encode() + b"\n")
        return
    if passphrase is None:
        raise KeyAccessError("a passphrase is needed for an encrypted key")
    phrase = passphrase("Passphrase for the new signing key", True)
    if not phrase:
        raise InputError("the passphrase is empty")
    _write_private(path, _seal(signer.seed(), signer.key_id, phrase))


def load_signer(
    path: Path | None,
    mode: str,
    passphrase: PassphraseSource | None,
    env_var: str = ENV_KEY,
) -> Signer:
    """Load the signing key stored at ``path`` in ``mode``."""
    if mode == NO_KEY_MODE:
        raise KeyAccessError(
            "this chain was imported without a secret key, so it is read-only",
            hint="add one by hand: write the 64-hex seed of the chain's current key "
            "(`memory-chain keys show`) to agent.key with mode 0600 and set "
            '"key_mode": "raw" in config.json (or "key_mode": "env" and '
            f"${ENV_KEY})",
        )
    if mode == "env":
        value = os.environ.get(env_var)
        if not value:
            raise KeyAccessError(
                f"{env_var} is not set",
                hint="this chain uses key mode env: export the 64-hex-character seed",
            )
        return Signer(_seed_from_hex(value, env_var))
    if path is None:
        raise KeyAccessError(f"unknown key mode {mode!r}")
    _check_private(path)
    if mode == "raw":
        try:
            return Signer(_seed_from_hex(path.read_text("ascii"), str(path)))
        except (OSError, UnicodeDecodeError):
            raise KeyAccessError(f"cannot read signing key {path}") from None
    if mode == "encrypted":
        if passphrase is None:
            raise KeyAccessError("a passphrase is needed to unlock the signing key")
        return Signer(_unseal(path, passphrase("Passphrase for the signing key", False)))
    raise KeyAccessError(f"unknown key mode {mode!r}")


def write_public_key_file(path: Path, key_id: str) -> None:
    """Write an ``agent.pub`` style file durably."""
    _write_durable(path, key_id.encode() + b"\n", 0o644)


def read_public_key_file(path: Path) -> str:
    """Read an ``agent.pub`` style file."""
    try:
        return parse_public_key(path.read_text("ascii"))
    except (OSError, UnicodeDecodeError):
        raise KeyAccessError(f"cannot read public key {path}") from None

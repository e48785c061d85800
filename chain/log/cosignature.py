"""Signed-note keys and C2SP tlog-cosignature v1 (Ed25519) cosignatures.

A verifier key (c2sp.org/signed-note) is the text

    <name>+<8 hex of the key hash>+<base64(algorithm byte || public key)>

with the key hash the first 4 bytes of SHA-256(name || "\\n" || algorithm
byte || public key). Algorithm 0x01 is a log's Ed25519 note signature;
0x04 a witness's Ed25519 cosignature (c2sp.org/tlog-cosignature), whose
signature line carries base64(key hash || 8-byte big-endian timestamp ||
Ed25519 signature) over

    cosignature/v1\\n
    time <timestamp>\\n
    <the checkpoint's body: origin, size, root and any extension lines>

A witness's private key file is the same shape with PRIVATE+KEY+ before
it and the 32-byte Ed25519 seed after the algorithm byte, as Go's
golang.org/x/mod/sumdb/note writes its keys.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Final

from ..format.canonical import strict_base64
from ..format.keys import KEY_PREFIX
from ..format.values import Value
from .checkpoint import Checkpoint

__all__ = [
    "COSIGNATURE",
    "NOTE_ED25519",
    "VerifierKey",
    "cosign",
    "cosigned_at",
    "note_signed_by",
    "parse_private_key",
    "parse_vkey",
    "private_key_text",
    "vkey_text",
]

NOTE_ED25519: Final = 0x01
COSIGNATURE: Final = 0x04
_PRIVATE = "PRIVATE+KEY+"
_SIG_PREFIX = "\u2014 "


class VerifierKey(Value):
    """A parsed verifier key: its name, algorithm byte, 32-byte public key and key hash."""

    __slots__ = ("algorithm", "key_hash", "name", "public")
    name: str
    algorithm: int
    public: bytes
    key_hash: bytes

    def __init__(self, name: str, algorithm: int, public: bytes) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "algorithm", algorithm)
        set_(self, "public", public)
        set_(self, "key_hash", _key_hash(name, algorithm, public))

    def _values(self) -> tuple[object, ...]:
        return (self.name, self.algorithm, self.public)

    def __str__(self) -> str:
        return vkey_text(self.name, self.algorithm, self.public)


def _key_hash(name: str, algorithm: int, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([algorithm]) + public).digest()[:4]


def _check_name(name: str) -> None:
    if not name or "+" in name or any(c.isspace() for c in name):
        raise ValueError(f"a key name is non-empty, without spaces or '+': {name!r}")


def vkey_text(name: str, algorithm: int, public: bytes) -> str:
    """The verifier key text of an Ed25519 public key under ``name``."""
    _check_name(name)
    encoded = base64.b64encode(bytes([algorithm]) + public).decode()
    return f"{name}+{_key_hash(name, algorithm, public).hex()}+{encoded}"


def parse_vkey(text: str, algorithm: int) -> VerifierKey:
    """Parse a verifier key of ``algorithm``; ValueError says what is wrong with it."""
    name, sep, rest = text.strip().partition("+")
    hash_hex, sep2, encoded = rest.partition("+")
    if not sep or not sep2:
        raise ValueError(f"not a verifier key (name+hash+key): {text[:80]!r}")
    _check_name(name)
    raw = strict_base64(encoded)
    if raw is None or len(raw) != 33:
        raise ValueError(f"verifier key {name}: the key is not base64 of 33 bytes")
    if raw[0] != algorithm:
        raise ValueError(
            f"verifier key {name}: algorithm {raw[0]:#04x}, not {algorithm:#04x} "
            f"({'a log key' if algorithm == NOTE_ED25519 else 'an Ed25519 cosignature key'})"
        )
    vkey = VerifierKey(name, algorithm, raw[1:])
    if hash_hex != vkey.key_hash.hex():
        raise ValueError(f"verifier key {name}: the key hash does not match the key")
    return vkey


def private_key_text(name: str, algorithm: int, seed: bytes) -> str:
    """The private key file text: PRIVATE+KEY+<name>+<hash>+base64(algorithm || seed)."""
    from nacl.signing import SigningKey

    public = bytes(SigningKey(seed).verify_key)
    encoded = base64.b64encode(bytes([algorithm]) + seed).decode()
    return f"{_PRIVATE}{name}+{_key_hash(name, algorithm, public).hex()}+{encoded}\n"


def parse_private_key(text: str, algorithm: int) -> tuple[str, bytes]:
    """(name, 32-byte seed) of a private key file's text; ValueError if it is not one."""
    from nacl.signing import SigningKey

    text = text.strip()
    if not text.startswith(_PRIVATE):
        raise ValueError("not a signed-note private key (PRIVATE+KEY+name+hash+key)")
    name, _, rest = text[len(_PRIVATE) :].partition("+")
    hash_hex, _, encoded = rest.partition("+")
    _check_name(name)
    raw = strict_base64(encoded)
    if raw is None or len(raw) != 33 or raw[0] != algorithm:
        raise ValueError(f"private key {name}: not an Ed25519 key of algorithm {algorithm:#04x}")
    seed = raw[1:]
    public = bytes(SigningKey(seed).verify_key)
    if hash_hex != _key_hash(name, algorithm, public).hex():
        raise ValueError(f"private key {name}: the key hash does not match the key")
    return name, seed


def _cosigned_message(body: bytes, timestamp: int) -> bytes:
    return b"cosignature/v1\ntime " + str(timestamp).encode() + b"\n" + body


def cosign(cp: Checkpoint, name: str, seed: bytes, timestamp: int) -> str:
    """A witness's cosignature line (with its newline) on ``cp`` at ``timestamp``."""
    from nacl.signing import SigningKey

    if not 0 <= timestamp < 1 << 63:
        raise ValueError(f"a cosignature's time is a POSIX timestamp below 2^63: {timestamp}")
    key = SigningKey(seed)
    sig = key.sign(_cosigned_message(cp.body, timestamp)).signature
    khash = _key_hash(name, COSIGNATURE, bytes(key.verify_key))
    encoded = base64.b64encode(khash + timestamp.to_bytes(8, "big") + sig).decode()
    return f"{_SIG_PREFIX}{name} {encoded}\n"


def cosigned_at(cp: Checkpoint, witness: VerifierKey) -> int | None:
    """The timestamp of the first valid cosignature by ``witness`` on ``cp``, or None."""
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    verify_key = VerifyKey(witness.public)
    for name, khash, sig in cp.signatures:
        if name != witness.name or khash != witness.key_hash or len(sig) != 72:
            continue
        timestamp = int.from_bytes(sig[:8], "big")
        if timestamp >= 1 << 63:
            continue
        try:
            verify_key.verify(_cosigned_message(cp.body, timestamp), sig[8:])
        except (BadSignatureError, ValueError):
            continue
        return timestamp
    return None


def note_signed_by(cp: Checkpoint, log: VerifierKey) -> bool:
    """Whether ``cp`` has a valid Ed25519 note signature by ``log`` (under its name, which
    must be the checkpoint's origin, as for every note this code signs)."""
    return (
        log.algorithm == NOTE_ED25519
        and log.name == cp.origin
        and cp.signed_by(KEY_PREFIX + log.public.hex())
    )

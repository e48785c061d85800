"""Checkpoints: C2SP tlog-checkpoint signed notes over the chain's Merkle tree.

A checkpoint is the text

    memory-chain/<chain id hex>\\n
    <tree size, decimal>\\n
    <base64 of the 32-byte BLAKE3 Merkle root>\\n

followed by a blank line and one signature line per signer, as the C2SP
signed-note format defines:

    \\u2014 <key name> <base64(4-byte key hash || 64-byte Ed25519 signature)>\\n

The key name is the origin line; the key hash is the first 4 bytes of
SHA-256(key name || "\\n" || 0x01 || public key). The signature is over the
text up to and including the root line's newline. Lines after the root and
before the blank line are extension lines: carried, never interpreted.
Signature lines by keys this code does not know (a witness's cosignature)
are kept and ignored.
"""

from __future__ import annotations

from typing import Any

from ..format.canonical import strict_base64
from ..format.entry import HASH_RE
from ..format.keys import KEY_PREFIX, Signer
from ..format.patterns import lazy
from ..format.values import Value

__all__ = [
    "ORIGIN_PREFIX",
    "Checkpoint",
    "CheckpointError",
    "key_hash",
    "make_checkpoint",
    "origin_of",
    "parse_checkpoint",
    "sign_checkpoint",
    "verifier_key",
]

ORIGIN_PREFIX = "memory-chain/"
_SIG_PREFIX = "\u2014 "
_ED25519 = b"\x01"
_SIZE_RE = lazy(r"0|[1-9][0-9]{0,19}")
_NAME_RE = lazy(r"[^\s+]+")
MAX_NOTE_BYTES = 1 << 16


class CheckpointError(ValueError):
    """A checkpoint that cannot be read; the message says why."""


def origin_of(chain_id: str) -> str:
    """The origin line of a chain's checkpoints: memory-chain/<64 hex>."""
    return ORIGIN_PREFIX + chain_id.removeprefix("b3:")


def _public(key: str) -> bytes:
    return bytes.fromhex(key.removeprefix(KEY_PREFIX))


def key_hash(name: str, key: str) -> bytes:
    """The signed-note key hash of an Ed25519 key under ``name``."""
    import hashlib  # not at import: OpenSSL's costs 3 ms on every start path

    return hashlib.sha256(name.encode() + b"\n" + _ED25519 + _public(key)).digest()[:4]


def verifier_key(name: str, key: str) -> str:
    """The signed-note verifier key string: <name>+<hash hex>+<base64(0x01 || key)>."""
    import base64  # not at import: 1 ms on every start path

    encoded = base64.b64encode(_ED25519 + _public(key)).decode()
    return f"{name}+{key_hash(name, key).hex()}+{encoded}"


class Checkpoint(Value):
    """A parsed checkpoint note (its label, where it was read from, is not compared)."""

    __slots__ = ("body", "label", "origin", "root", "signatures", "size", "text")
    origin: str
    size: int
    root: bytes
    text: bytes  # the whole note, as stored
    body: bytes  # the signed text
    signatures: tuple[tuple[str, bytes, bytes], ...]  # (key name, key hash, signature)
    label: str

    def __init__(
        self,
        origin: str,
        size: int,
        root: bytes,
        text: bytes,
        body: bytes,
        signatures: tuple[tuple[str, bytes, bytes], ...],
        label: str = "",
    ) -> None:
        set_ = object.__setattr__
        set_(self, "origin", origin)
        set_(self, "size", size)
        set_(self, "root", root)
        set_(self, "text", text)
        set_(self, "body", body)
        set_(self, "signatures", signatures)
        set_(self, "label", label)

    def _values(self) -> tuple[Any, ...]:
        return (self.origin, self.size, self.root, self.text, self.body, self.signatures)

    @property
    def chain_id(self) -> str | None:
        """The chain id the origin names, or None for a foreign origin."""
        if not self.origin.startswith(ORIGIN_PREFIX):
            return None
        cid = "b3:" + self.origin.removeprefix(ORIGIN_PREFIX)
        return cid if HASH_RE.fullmatch(cid) else None

    def signed_by(self, key: str) -> bool:
        """Whether a signature line by ``key`` (under the origin's name) verifies."""
        from nacl.exceptions import BadSignatureError  # PyNaCl: only when a note is checked
        from nacl.signing import VerifyKey

        try:
            want = key_hash(self.origin, key)
            verify_key = VerifyKey(_public(key))
        except ValueError:
            return False
        for name, khash, sig in self.signatures:
            if name != self.origin or khash != want:
                continue
            try:
                verify_key.verify(self.body, sig)
            except (BadSignatureError, ValueError, TypeError):
                continue  # a forged or malformed signature (e.g. not 64 bytes)
            return True
        return False

    def with_label(self, label: str) -> Checkpoint:
        return Checkpoint(
            self.origin, self.size, self.root, self.text, self.body, self.signatures, label
        )

    def describe(self) -> str:
        return self.label or f"the checkpoint at size {self.size}"


def make_checkpoint(chain_id: str, size: int, root: bytes, signer: Signer) -> Checkpoint:
    """Sign a checkpoint for the first ``size`` entries of a chain."""
    return sign_checkpoint(origin_of(chain_id), size, root, signer)


def sign_checkpoint(origin: str, size: int, root: bytes, signer: Signer) -> Checkpoint:
    """The note (origin, size, root) with one signature by ``signer``, key name ``origin``."""
    import base64

    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n".encode()
    sig = bytes.fromhex(signer.sign(body))
    encoded = base64.b64encode(key_hash(origin, signer.key_id) + sig).decode()
    line = f"{_SIG_PREFIX}{origin} {encoded}\n"
    return parse_checkpoint(body + b"\n" + line.encode())


def parse_checkpoint(data: bytes) -> Checkpoint:
    """Parse a checkpoint note strictly; raise CheckpointError with the reason."""
    if len(data) > MAX_NOTE_BYTES:
        raise CheckpointError("checkpoint is larger than 64 KiB")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise CheckpointError("checkpoint is not UTF-8") from None
    if "\r" in text or not text.endswith("\n"):
        raise CheckpointError("checkpoint must be lines ending in \\n, without \\r")
    cut = text.rfind("\n\n")
    if cut < 0:
        raise CheckpointError("checkpoint has no blank line before its signatures")
    body, sig_text = text[: cut + 1], text[cut + 2 :]
    lines = body.split("\n")[:-1]
    if len(lines) < 3:
        raise CheckpointError("checkpoint needs an origin, a tree size and a root hash")
    origin, size_text, root_text = lines[0], lines[1], lines[2]
    if not origin:
        raise CheckpointError("checkpoint origin is empty")
    if any(not line for line in lines):
        raise CheckpointError("checkpoint has an empty line before its signatures")
    if _SIZE_RE.fullmatch(size_text) is None or int(size_text) >= 1 << 63:
        raise CheckpointError(f"checkpoint tree size is not a decimal number: {size_text!r}")
    root = strict_base64(root_text)
    if root is None:
        raise CheckpointError("checkpoint root is not base64") from None
    if len(root) != 32:
        raise CheckpointError("checkpoint root is not a base64 32-byte hash")
    sigs = []
    for line in sig_text.split("\n")[:-1]:
        if not line.startswith(_SIG_PREFIX):
            raise CheckpointError("checkpoint signature line does not start with an em dash")
        name, _, encoded = line[len(_SIG_PREFIX) :].partition(" ")
        if _NAME_RE.fullmatch(name) is None:
            raise CheckpointError(f"checkpoint signature has a bad key name: {name!r}")
        raw = strict_base64(encoded)
        if raw is None:
            raise CheckpointError("checkpoint signature is not base64") from None
        if len(raw) < 5:
            raise CheckpointError("checkpoint signature is too short")
        sigs.append((name, raw[:4], raw[4:]))
    if not sigs:
        raise CheckpointError("checkpoint has no signature")
    return Checkpoint(origin, int(size_text), root, data, body.encode(), tuple(sigs))

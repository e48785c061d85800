"""Proof bundles: one JSON file an auditor verifies offline, with nothing else.

A bundle (specs/FORMAT.md section 10) carries a signed checkpoint and, for
each line it proves, the line and its RFC 9162 inclusion proof in that
checkpoint's tree: the genesis line (which gives the chain id and the
genesis key), every key-rotation line below the checkpoint's size (which
give the key in force at every seq), and the entry itself, optionally with
its content. Verification is pure: ``verify_bundle`` reads bytes, returns
the facts it proved, or raises BundleError with the first reason.

The key history cannot be cut short: each rotation is signed by the key
before it, and the checkpoint must be signed by the key after the last
one, so a bundle that leaves a rotation out fails.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from .canonical import b3
from .checkpoint import Checkpoint, CheckpointError, origin_of, parse_checkpoint
from .entry import Malformed, parse_line, rotation_message, signing_message_of_line
from .keys import verify_sig
from .merkle import BLAKE3, ProofError, verify_inclusion

__all__ = [
    "BUNDLE_FORMAT",
    "NOT_A_BUNDLE",
    "BundleError",
    "Proved",
    "ProvedLine",
    "key_at",
    "make_bundle",
    "verify_bundle",
]

BUNDLE_FORMAT: Final = "memory-chain-proof/1"
MAX_BUNDLE_BYTES: Final = 16 << 20
#: The reason of a file that is no bundle at all (bad input, not a failed proof).
NOT_A_BUNDLE: Final = "not-a-bundle"


class BundleError(ValueError):
    """The bundle does not prove what it claims; ``reason`` is a short code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class ProvedLine:
    line: bytes
    proof: list[bytes]


def _line_json(p: ProvedLine) -> dict[str, Any]:
    return {"line": p.line.decode(), "inclusion": [h.hex() for h in p.proof]}


def make_bundle(
    *,
    checkpoint: Checkpoint,
    entry: ProvedLine,
    genesis: ProvedLine,
    rotations: Sequence[ProvedLine],
    content: bytes | None = None,
    anchors: Sequence[dict[str, Any]] = (),
) -> bytes:
    """Serialise a bundle (deterministic bytes: sorted keys, two-space indent)."""
    obj: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "checkpoint": checkpoint.text.decode(),
        "genesis": _line_json(genesis),
        "rotations": [_line_json(r) for r in rotations],
        "entry": _line_json(entry),
        "anchors": list(anchors),
    }
    key = orjson.loads(genesis.line)["key"]
    for r in rotations:
        key = orjson.loads(r.line)["meta"]["new_key"]
    obj["public_key"] = key  # the checkpoint's signer, for a reader's convenience
    if content is not None:
        obj["content"] = base64.b64encode(content).decode()
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


@dataclass(frozen=True, slots=True)
class Proved:
    """What a bundle proved."""

    chain_id: str
    seq: int
    entry: dict[str, Any]
    checkpoint: Checkpoint
    key: str  # the key that signed the entry
    keys: list[str]  # the genesis key, then each rotated-to key
    content: bytes | None
    anchors: list[dict[str, Any]]


def key_at(seq: int, genesis_key: str, rotations: Sequence[tuple[int, str]]) -> str:
    """The key in force at ``seq``: a rotation at r applies from r + 1."""
    key = genesis_key
    for r_seq, new_key in rotations:
        if r_seq < seq:
            key = new_key
    return key


def _field(obj: dict[str, Any], name: str, kind: type) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind):
        raise BundleError("malformed", f"bundle field {name!r} is missing or not a {kind.__name__}")
    return value


def _proved_line(obj: dict[str, Any], name: str) -> tuple[bytes, list[bytes]]:
    line = _field(obj, "line", str).encode()
    hashes = _field(obj, "inclusion", list)
    try:
        proof = [bytes.fromhex(h) for h in hashes]
    except (TypeError, ValueError):
        raise BundleError("malformed", f"{name}: inclusion hashes must be hex") from None
    return line, proof


def _parse_entry(line: bytes, name: str) -> dict[str, Any]:
    try:
        return parse_line(line).obj
    except Malformed as exc:
        raise BundleError("malformed-entry", f"{name}: {exc.message}") from None


def _include(line: bytes, seq: int, proof: list[bytes], cp: Checkpoint, name: str) -> None:
    if seq >= cp.size:
        raise BundleError(
            "beyond-checkpoint", f"{name} (seq {seq}) is not in a checkpoint of size {cp.size}"
        )
    try:
        verify_inclusion(BLAKE3, seq, cp.size, BLAKE3.leaf(line), proof, cp.root)
    except ProofError as exc:
        raise BundleError(
            "bad-inclusion", f"{name} (seq {seq}) is not in the checkpoint's tree: {exc}"
        ) from None


def _signed(obj: dict[str, Any], line: bytes, key: str, name: str) -> None:
    if obj["key"] != key:
        raise BundleError(
            "wrong-key", f"{name} (seq {obj['seq']}) is signed by {obj['key']}, not {key}"
        )
    if not verify_sig(key, signing_message_of_line(parse_line(line)), obj["sig"]):
        raise BundleError("bad-signature", f"{name} (seq {obj['seq']}): signature does not verify")


def verify_bundle(
    data: bytes, *, trusted_key: str | None = None, chain_id: str | None = None
) -> Proved:
    """Verify a proof bundle; at least one of ``trusted_key``/``chain_id`` is pinned.

    Steps (FORMAT.md 10.2): parse; the checkpoint; the genesis line and its
    inclusion (chain id, origin); each rotation (inclusion, signature by the
    key before it, new_sig by the new key); the checkpoint's signature by
    the key in force at its size; the entry (inclusion, signature by the key
    in force at its seq); the content against the entry's hash; the pins.
    """
    if trusted_key is None and chain_id is None:
        raise BundleError("unpinned", "pin a key or a chain id: a bundle alone proves nothing")
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(NOT_A_BUNDLE, "bundle is larger than 16 MiB")
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BundleError(NOT_A_BUNDLE, "the file is not JSON, so not a proof bundle") from None
    if not isinstance(obj, dict) or obj.get("format") != BUNDLE_FORMAT:
        raise BundleError(NOT_A_BUNDLE, f"not a {BUNDLE_FORMAT} bundle")
    try:
        cp = parse_checkpoint(_field(obj, "checkpoint", str).encode())
    except CheckpointError as exc:
        raise BundleError("bad-checkpoint", f"checkpoint: {exc}") from None

    g_line, g_proof = _proved_line(_field(obj, "genesis", dict), "genesis")
    genesis = _parse_entry(g_line, "genesis")
    if genesis["seq"] != 0 or genesis["type"] != "genesis":
        raise BundleError("malformed-entry", "the genesis line is not seq 0 of type genesis")
    _include(g_line, 0, g_proof, cp, "genesis")
    _signed(genesis, g_line, genesis["key"], "genesis")
    cid = b3(g_line)
    if cp.origin != origin_of(cid):
        raise BundleError("wrong-origin", f"checkpoint origin {cp.origin} is not chain {cid}")

    keys = [genesis["key"]]
    rotations: list[tuple[int, str]] = []
    last_seq = 0
    for i, item in enumerate(_field(obj, "rotations", list), 1):
        name = f"rotation {i}"
        if not isinstance(item, dict):
            raise BundleError("malformed", f"{name} is not an object")
        r_line, r_proof = _proved_line(item, name)
        rot = _parse_entry(r_line, name)
        if rot["type"] != "key-rotation" or rot["seq"] <= last_seq:
            raise BundleError("malformed-entry", f"{name} is not a key rotation after the last")
        _include(r_line, rot["seq"], r_proof, cp, name)
        _signed(rot, r_line, keys[-1], name)
        new_key = rot["meta"]["new_key"]
        if not verify_sig(new_key, rotation_message(rot), rot["meta"]["new_sig"]):
            raise BundleError("bad-signature", f"{name}: new_sig does not verify by {new_key}")
        keys.append(new_key)
        rotations.append((rot["seq"], new_key))
        last_seq = rot["seq"]

    if not cp.signed_by(keys[-1]):
        raise BundleError(
            "bad-checkpoint-signature",
            f"the checkpoint is not signed by {keys[-1]}, the key in force at size {cp.size}",
        )

    e_line, e_proof = _proved_line(_field(obj, "entry", dict), "entry")
    entry = _parse_entry(e_line, "entry")
    seq = entry["seq"]
    _include(e_line, seq, e_proof, cp, "entry")
    key = key_at(seq, keys[0], rotations)
    _signed(entry, e_line, key, "entry")

    content = None
    if "content" in obj:
        try:
            content = base64.b64decode(_field(obj, "content", str), validate=True)
        except binascii.Error:
            raise BundleError("malformed", "content is not base64") from None
        if entry["content"] is None or b3(content) != entry["content"]:
            raise BundleError("content-mismatch", "the content does not hash to the entry's")
        if len(content) != entry["size"]:
            raise BundleError("content-mismatch", f"the content is not {entry['size']} bytes")

    if chain_id is not None and cid != chain_id:
        raise BundleError("chain-id-mismatch", f"chain id {cid} is not the pinned {chain_id}")
    if trusted_key is not None and trusted_key not in keys:
        raise BundleError(
            "untrusted-key",
            f"the trusted key {trusted_key} is neither the genesis key {keys[0]} "
            "nor a key this chain rotated to",
        )
    anchors = obj.get("anchors", [])
    if not isinstance(anchors, list):
        raise BundleError("malformed", "anchors must be a list")
    return Proved(cid, seq, entry, cp, key, keys, content, anchors)

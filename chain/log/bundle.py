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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from ..format.canonical import b3, strict_base64, strict_hex
from ..format.entry import Malformed, parse_line, rotation_message, signing_message_of_line
from ..format.keys import verify_sig
from .checkpoint import Checkpoint, CheckpointError, origin_of, parse_checkpoint
from .merkle import BLAKE3, ProofError, verify_inclusion

__all__ = [
    "BUNDLE_FORMAT",
    "NOT_A_BUNDLE",
    "BundleError",
    "Proved",
    "ProvedLine",
    "key_at",
    "load_json",
    "make_bundle",
    "verify_bundle",
]

BUNDLE_FORMAT: Final = "memory-chain-proof/1"
MAX_BUNDLE_BYTES: Final = 16 << 20
#: The reason of a file that is no bundle at all (bad input, not a failed proof).
NOT_A_BUNDLE: Final = "not-a-bundle"


class BundleError(ValueError):
    """A proof file does not prove what it claims.

    ``reason`` is the code of FORMAT.md 14.2 (or 15), ``step`` the number of
    the step that failed there, and ``seq`` the seq of the line concerned
    when there is one.
    """

    def __init__(self, reason: str, message: str, *, step: int, seq: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.step = step
        self.seq = seq

    def as_dict(self) -> dict[str, Any]:
        """What `verify-proof --json` prints of it."""
        return {
            "ok": False,
            "step": self.step,
            "reason": self.reason,
            "seq": self.seq,
            "message": self.message,
        }


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


def _field(obj: dict[str, Any], name: str, kind: type, step: int) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind):
        raise BundleError(
            "malformed", f"bundle field {name!r} is missing or not a {kind.__name__}", step=step
        )
    return value


def _proved_line(item: object, name: str, step: int) -> tuple[bytes, list[bytes]]:
    if not isinstance(item, dict):
        raise BundleError("malformed", f"{name} is not an object", step=step)
    line = _field(item, "line", str, step).encode()
    proof = [strict_hex(h) for h in _field(item, "inclusion", list, step)]
    if any(h is None for h in proof):
        raise BundleError("malformed", f"{name}: inclusion hashes must be hex", step=step)
    return line, [h for h in proof if h is not None]


def _parse_entry(line: bytes, name: str, step: int) -> dict[str, Any]:
    try:
        return parse_line(line).obj
    except Malformed as exc:
        raise BundleError("malformed-entry", f"{name}: {exc.message}", step=step) from None


def _include(
    line: bytes, seq: int, proof: list[bytes], cp: Checkpoint, name: str, step: int
) -> None:
    if seq >= cp.size:
        raise BundleError(
            "beyond-checkpoint",
            f"{name} (seq {seq}) is not in a checkpoint of size {cp.size}",
            step=step,
            seq=seq,
        )
    try:
        verify_inclusion(BLAKE3, seq, cp.size, BLAKE3.leaf(line), proof, cp.root)
    except ProofError as exc:
        raise BundleError(
            "bad-inclusion",
            f"{name} (seq {seq}) is not in the checkpoint's tree: {exc}",
            step=step,
            seq=seq,
        ) from None


def _signed(obj: dict[str, Any], line: bytes, key: str, name: str, step: int) -> None:
    seq = obj["seq"]
    if obj["key"] != key:
        message = f"{name} (seq {seq}) is signed by {obj['key']}, not {key}"
        raise BundleError("wrong-key", message, step=step, seq=seq)
    if not verify_sig(key, signing_message_of_line(parse_line(line)), obj["sig"]):
        raise BundleError(
            "bad-signature", f"{name} (seq {seq}): signature does not verify", step=step, seq=seq
        )


def load_json(data: bytes) -> object:
    """The JSON value of a proof file, or None when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def verify_bundle(
    data: bytes, *, trusted_key: str | None = None, chain_id: str | None = None
) -> Proved:
    """Verify a proof bundle; at least one of ``trusted_key``/``chain_id`` is pinned.

    Runs the 16 steps of FORMAT.md 14.2 in order (the numbers below are
    theirs) and raises BundleError with the first failing step.
    """
    if trusted_key is None and chain_id is None:
        raise BundleError(
            "unpinned", "pin a key or a chain id: a bundle alone proves nothing", step=1
        )
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(NOT_A_BUNDLE, "bundle is larger than 16 MiB", step=2)
    obj = load_json(data)
    if not isinstance(obj, dict) or obj.get("format") != BUNDLE_FORMAT:
        raise BundleError(NOT_A_BUNDLE, f"not a {BUNDLE_FORMAT} bundle", step=2)
    try:
        cp = parse_checkpoint(_field(obj, "checkpoint", str, 3).encode())
    except CheckpointError as exc:
        raise BundleError("bad-checkpoint", f"checkpoint: {exc}", step=3) from None

    g_line, g_proof = _proved_line(obj.get("genesis"), "genesis", 4)
    genesis = _parse_entry(g_line, "genesis", 5)
    if genesis["seq"] != 0 or genesis["type"] != "genesis":
        raise BundleError(
            "malformed-entry", "the genesis line is not seq 0 of type genesis", step=5
        )
    _include(g_line, 0, g_proof, cp, "genesis", 6)
    _signed(genesis, g_line, genesis["key"], "genesis", 7)
    cid = b3(g_line)
    if cp.origin != origin_of(cid):
        raise BundleError(
            "wrong-origin", f"checkpoint origin {cp.origin} is not chain {cid}", step=8
        )

    keys = [genesis["key"]]
    rotations: list[tuple[int, str]] = []
    last_seq = 0
    for i, item in enumerate(_field(obj, "rotations", list, 9), 1):
        name = f"rotation {i}"
        r_line, r_proof = _proved_line(item, name, 9)
        rot = _parse_entry(r_line, name, 9)
        if rot["type"] != "key-rotation" or rot["seq"] <= last_seq:
            raise BundleError(
                "malformed-entry",
                f"{name} is not a key rotation after the last",
                step=9,
                seq=rot["seq"],
            )
        _include(r_line, rot["seq"], r_proof, cp, name, 9)
        _signed(rot, r_line, keys[-1], name, 9)
        new_key = rot["meta"]["new_key"]
        if not verify_sig(new_key, rotation_message(rot), rot["meta"]["new_sig"]):
            raise BundleError(
                "bad-signature",
                f"{name}: new_sig does not verify by {new_key}",
                step=9,
                seq=rot["seq"],
            )
        keys.append(new_key)
        rotations.append((rot["seq"], new_key))
        last_seq = rot["seq"]

    if not cp.signed_by(keys[-1]):
        raise BundleError(
            "bad-checkpoint-signature",
            f"the checkpoint is not signed by {keys[-1]}, the key in force at size {cp.size}",
            step=10,
        )

    e_line, e_proof = _proved_line(obj.get("entry"), "entry", 11)
    entry = _parse_entry(e_line, "entry", 11)
    seq = entry["seq"]
    _include(e_line, seq, e_proof, cp, "entry", 11)
    key = key_at(seq, keys[0], rotations)
    _signed(entry, e_line, key, "entry", 12)

    content = None
    if "content" in obj:
        text = obj["content"]
        content = strict_base64(text) if isinstance(text, str) else None
        if content is None:
            raise BundleError("malformed", "content is not base64", step=13, seq=seq)
        if entry["content"] is None or b3(content) != entry["content"]:
            raise BundleError(
                "content-mismatch", "the content does not hash to the entry's", step=13, seq=seq
            )
        if len(content) != entry["size"]:
            raise BundleError(
                "content-mismatch", f"the content is not {entry['size']} bytes", step=13, seq=seq
            )

    if chain_id is not None and cid != chain_id:
        raise BundleError(
            "chain-id-mismatch", f"chain id {cid} is not the pinned {chain_id}", step=14
        )
    if trusted_key is not None and trusted_key not in keys:
        raise BundleError(
            "untrusted-key",
            f"the trusted key {trusted_key} is neither the genesis key {keys[0]} "
            "nor a key this chain rotated to",
            step=15,
        )
    anchors = obj.get("anchors", [])
    if not isinstance(anchors, list):
        raise BundleError("malformed", "anchors must be a list", step=16)
    return Proved(cid, seq, entry, cp, key, keys, content, anchors)

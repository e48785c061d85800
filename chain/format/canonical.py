"""Canonical bytes (RFC 8785, JCS) for the JSON values memory-chain signs.

Signed objects hold no floats, only ASCII object keys from a small alphabet
and integers within +-(2**53 - 1). Within that domain, orjson's
``OPT_SORT_KEYS`` output equals JCS byte for byte (a property test checks
it against the ``rfc8785`` package): keys sort the same in UTF-16 and in
code points when they are ASCII, and integers print the same.

Changing this module changes every hash and signature in every chain.
"""

from __future__ import annotations

from typing import Any

import blake3
import orjson

from .patterns import lazy

__all__ = [
    "HASH_PREFIX",
    "KEYS_SEEN",
    "MAX_SAFE_INT",
    "META_KEY_RE",
    "ValueDomainError",
    "b3",
    "canonical",
    "check_value",
    "strict_base64",
    "strict_hex",
]

HASH_PREFIX = "b3:"
MAX_SAFE_INT = 2**53 - 1
META_KEY_RE = lazy(r"[A-Za-z0-9_.:-]{1,64}")

_SORT = orjson.OPT_SORT_KEYS


class ValueDomainError(ValueError):
    """A value cannot be signed: float, huge int, bad key, too deep."""


_HEX_RE = lazy(r"(?:[0-9a-fA-F]{2})*")


def strict_hex(text: object) -> bytes | None:
    """Hex of either case and even length, nothing else (no spaces): bytes or None."""
    if not isinstance(text, str) or _HEX_RE.fullmatch(text) is None:
        return None
    return bytes.fromhex(text)


def strict_base64(text: str) -> bytes | None:
    """Standard padded base64 in its one canonical text (FORMAT.md section 1), or None.

    Only the alphabet, a length that is a multiple of 4, and zero padding
    bits: decoding and encoding again gives the same text.
    """
    import base64  # not at import: 1 ms on every start path
    import binascii

    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode() == text else None


def canonical(obj: Any) -> bytes:
    """Return the JCS bytes of ``obj`` (which must already be in the domain)."""
    return orjson.dumps(obj, option=_SORT)


def b3(data: bytes | memoryview) -> str:
    """Return the hash string ``b3:<64 lowercase hex>`` of ``data``."""
    return HASH_PREFIX + blake3.blake3(data).hexdigest()


#: Object keys (exactly str) found to match META_KEY_RE: a few names recur in every meta
#: (entry.ordinary_bytes reads it too).
KEYS_SEEN: set[str] = set()


def check_value(value: Any, *, max_depth: int, path: str = "meta") -> None:
    """Raise ValueDomainError unless ``value`` is signable JSON.

    Allowed: str (valid Unicode), int within +-MAX_SAFE_INT, bool, None, and
    lists or objects of those, nested at most ``max_depth`` containers deep.
    Object keys must match META_KEY_RE. (Dispatch on the exact type: this
    runs for every entry's meta in verify.)
    """
    kind = type(value)
    if kind is str:
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueDomainError(f"{path}: string is not valid Unicode") from None
        return
    if kind is int:
        if -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            return
        raise ValueDomainError(f"{path}: integer {value} is outside +-(2**53 - 1)")
    if kind is bool or value is None:
        return
    if kind is dict or kind is list:
        if max_depth <= 0:
            raise ValueDomainError(f"{path}: nested too deep")
        if kind is list:
            for i, item in enumerate(value):
                check_value(item, max_depth=max_depth - 1, path=f"{path}[{i}]")
            return
        for key, item in value.items():
            if type(key) is not str or key not in KEYS_SEEN:
                if type(key) is not str or not META_KEY_RE.fullmatch(key):
                    raise ValueDomainError(
                        f"{path}: key {key!r} must be 1-64 characters of A-Z a-z 0-9 _ . : -"
                    )
                if len(KEYS_SEEN) < 4096:
                    KEYS_SEEN.add(key)
            held = type(item)
            if held is str and item.isascii():
                continue  # the common cases, without a call
            if held is int and -MAX_SAFE_INT <= item <= MAX_SAFE_INT:
                continue
            check_value(item, max_depth=max_depth - 1, path=f"{path}.{key}")
        return
    if kind is float:
        raise ValueDomainError(f"{path}: {value!r} is a float; signed data holds integers only")
    raise ValueDomainError(f"{path}: {kind.__name__} is not a JSON value")

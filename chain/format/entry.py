"""The v1 entry: fields, enums, limits, parsing and the signing message.

specs/FORMAT.md section 2 is the contract for everything in this module.
"""

from __future__ import annotations

import re
import time
from binascii import unhexlify
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from itertools import chain, repeat
from typing import Any, Final, Literal, cast, get_args

import orjson

from .canonical import (
    KEYS_SEEN,
    MAX_SAFE_INT,
    META_KEY_RE,
    ValueDomainError,
    canonical,
    check_value,
)
from .patterns import lazy
from .values import Value

__all__ = [
    "CONTENT_TYPES",
    "DEFAULT_IMPORTANCE",
    "ENTRY_TAG",
    "FIELDS",
    "FORMAT_VERSION",
    "MAX_LINE_BYTES",
    "MAX_META_BYTES",
    "MAX_META_DEPTH",
    "ORIGINS",
    "ROTATION_TAG",
    "SOURCES",
    "SYSTEM_TYPES",
    "TIERS",
    "TYPES",
    "ContentType",
    "Malformed",
    "OrdinaryBytes",
    "OrdinaryColumns",
    "ParsedEntry",
    "default_importance",
    "format_ts",
    "ordinary_bytes",
    "ordinary_columns",
    "parse_line",
    "rotation_message",
    "signing_message",
    "signing_message_of_line",
]

FORMAT_VERSION: Final = 1
ENTRY_TAG: Final = b"memory-chain/v1/entry\n"
ROTATION_TAG: Final = b"memory-chain/v1/key-rotation\n"

#: The types a memory can have, as a type (for schemas and signatures) and as values.
ContentType = Literal[
    "memory", "identity", "decision", "commitment", "preference", "fact", "lesson", "episode"
]
CONTENT_TYPES: Final[tuple[str, ...]] = get_args(ContentType)
SYSTEM_TYPES: Final = ("genesis", "redaction", "key-rotation")
TYPES: Final = CONTENT_TYPES + SYSTEM_TYPES
TIERS: Final = ("committed", "relationship", "ephemeral")
SOURCES: Final = ("manual", "auto", "curation")
#: The ``origin`` metadata member: where a memory's words came from (FORMAT.md 4.4).
ORIGINS: Final = ("person", "agent", "capture", "tool", "quoted")

FIELDS: Final = frozenset(
    {
        "v",
        "seq",
        "ts",
        "type",
        "tier",
        "source",
        "importance",
        "content",
        "size",
        "prev",
        "key",
        "meta",
        "sig",
    }
)
MAX_LINE_BYTES: Final = 8192
MAX_META_BYTES: Final = 4096
MAX_META_DEPTH: Final = 4

HASH_RE: Final = lazy(r"b3:[0-9a-f]{64}")
KEY_RE: Final = lazy(r"ed25519:[0-9a-f]{64}")
SIG_RE: Final = lazy(r"[0-9a-f]{128}")
TS_RE: Final = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def format_ts(micros: int) -> str:
    """Render microseconds since the Unix epoch as the fixed-width ts string."""
    seconds, fraction = divmod(micros, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:06d}Z"


def default_importance(entry_type: str, tier: str) -> int:
    """Importance given when the caller names none (FORMAT.md 2.4)."""
    if entry_type in SYSTEM_TYPES:
        return 100 if entry_type == "genesis" else 50
    base = DEFAULT_IMPORTANCE.get(entry_type, 50)
    if tier == "committed":
        return max(base, 80)
    if tier == "ephemeral":
        return min(base, 30)
    return base


DEFAULT_IMPORTANCE: Final = {
    "identity": 90,
    "commitment": 85,
    "decision": 80,
    "preference": 70,
    "lesson": 70,
    "fact": 60,
    "memory": 50,
    "episode": 40,
}


class Malformed(Exception):
    """A line that is not a well-formed v1 entry (verification steps 1-3)."""

    def __init__(self, step: int, message: str) -> None:
        super().__init__(message)
        self.step = step
        self.message = message


class ParsedEntry(Value):
    """A line that passed steps 1-3: well framed, well typed, canonical."""

    __slots__ = ("line", "obj")
    obj: dict[str, Any]
    line: bytes  # without the trailing newline

    def __init__(self, obj: dict[str, Any], line: bytes) -> None:
        set_ = object.__setattr__
        set_(self, "obj", obj)
        set_(self, "line", line)

    @property
    def seq(self) -> int:
        return int(self.obj["seq"])


def _want(cond: bool, message: str) -> None:
    if not cond:
        raise Malformed(2, message)


def _check_system_meta(obj: dict[str, Any]) -> None:
    kind = obj["type"]
    meta = obj["meta"]
    if kind == "genesis":
        _want(set(meta) == {"name"}, "genesis meta must hold exactly: name")
        _want(
            isinstance(meta["name"], str) and 0 < len(meta["name"]) <= 200,
            "genesis name must be a string of 1-200 characters",
        )
    elif kind == "redaction":
        _want(
            set(meta) == {"target", "content", "reason"},
            "redaction meta must hold exactly: content, reason, target",
        )
        target = meta["target"]
        _want(
            isinstance(target, int) and not isinstance(target, bool) and target >= 0,
            "redaction target must be a seq",
        )
        _want(
            isinstance(meta["content"], str) and HASH_RE.fullmatch(meta["content"]) is not None,
            "redaction content must be a b3: hash",
        )
        _want(
            isinstance(meta["reason"], str) and 0 < len(meta["reason"]) <= 1000,
            "redaction reason must be a string of 1-1000 characters",
        )
    elif kind == "key-rotation":
        _want(
            set(meta) == {"new_key", "new_sig"},
            "key-rotation meta must hold exactly: new_key, new_sig",
        )
        _want(
            isinstance(meta["new_key"], str) and KEY_RE.fullmatch(meta["new_key"]) is not None,
            "key-rotation new_key must be ed25519:<64 hex>",
        )
        _want(
            isinstance(meta["new_sig"], str) and SIG_RE.fullmatch(meta["new_sig"]) is not None,
            "key-rotation new_sig must be 128 hex characters",
        )


def check_fields(obj: dict[str, Any]) -> None:
    """Step 2: exact field set, types, enums and ranges. Raises Malformed.

    Written as plain comparisons (no message is built unless a check
    fails): this runs once per line of every verify.
    """
    if obj.keys() != FIELDS:
        missing = FIELDS - obj.keys()
        extra = obj.keys() - FIELDS
        if missing:
            raise Malformed(2, f"missing field(s): {', '.join(sorted(missing))}")
        raise Malformed(2, f"unknown field(s): {', '.join(sorted(extra))}")
    v = obj["v"]
    if type(v) is not int or v != FORMAT_VERSION:
        raise Malformed(2, f"unsupported format version {v!r}")
    seq = obj["seq"]
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT:
        raise Malformed(2, "seq must be a non-negative integer")
    ts = obj["ts"]
    if type(ts) is not str or TS_RE.fullmatch(ts) is None or not _real_date(ts):
        raise Malformed(2, "ts must be a real UTC time as YYYY-MM-DDTHH:MM:SS.ffffffZ")
    kind = obj["type"]
    if type(kind) is not str or kind not in _TYPE_SET:
        raise Malformed(2, f"unknown type {kind!r}")
    tier = obj["tier"]
    if type(tier) is not str or tier not in _TIER_SET:
        raise Malformed(2, f"unknown tier {tier!r}")
    source = obj["source"]
    if type(source) is not str or source not in _SOURCE_SET:
        raise Malformed(2, f"unknown source {source!r}")
    imp = obj["importance"]
    if type(imp) is not int or not 0 <= imp <= 100:
        raise Malformed(2, "importance must be an integer 0..100")
    content, size = obj["content"], obj["size"]
    if type(size) is not int or not 0 <= size <= MAX_SAFE_INT:
        raise Malformed(2, "size must be a non-negative integer")
    system = kind in _SYSTEM_SET
    if system:
        if content is not None or size != 0:
            raise Malformed(2, f"{kind} entry carries no content")
        if obj["tier"] != "committed":
            raise Malformed(2, f"{kind} entry must be tier committed")
    elif type(content) is not str or HASH_RE.fullmatch(content) is None:
        raise Malformed(2, "content must be a b3: hash")
    prev = obj["prev"]
    if seq == 0:
        if prev is not None:
            raise Malformed(2, "seq 0 must have prev null")
        if kind != "genesis":
            raise Malformed(2, "seq 0 must be the genesis entry")
    else:
        if type(prev) is not str or HASH_RE.fullmatch(prev) is None:
            raise Malformed(2, "prev must be a b3: hash")
        if kind == "genesis":
            raise Malformed(2, "genesis may only be seq 0")
    key = obj["key"]
    if type(key) is not str or KEY_RE.fullmatch(key) is None:
        raise Malformed(2, "key must be ed25519:<64 hex>")
    sig = obj["sig"]
    if type(sig) is not str or SIG_RE.fullmatch(sig) is None:
        raise Malformed(2, "sig must be 128 hex characters")
    meta = obj["meta"]
    if type(meta) is not dict:
        raise Malformed(2, "meta must be an object")
    if meta:
        try:
            check_value(meta, max_depth=MAX_META_DEPTH)
        except ValueDomainError as exc:
            raise Malformed(2, str(exc)) from None
        if len(canonical(meta)) > MAX_META_BYTES:
            raise Malformed(2, f"meta exceeds {MAX_META_BYTES} bytes")
    if system:
        _check_system_meta(obj)


def _real_date(ts: str) -> bool:
    try:
        datetime.fromisoformat(ts[:-1])
    except ValueError:
        return False
    return True


_TYPE_SET: Final = frozenset(TYPES)
_TIER_SET: Final = frozenset(TIERS)
_SOURCE_SET: Final = frozenset(SOURCES)
_SYSTEM_SET: Final = frozenset(SYSTEM_TYPES)


def parse_line(line: bytes) -> ParsedEntry:
    """Steps 1-3 for one line given without its newline. Raises Malformed."""
    # Step 1: framing. The newline itself is checked by the reader.
    if len(line) + 1 > MAX_LINE_BYTES:
        raise Malformed(1, f"line exceeds {MAX_LINE_BYTES} bytes")
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise Malformed(1, "line is not valid UTF-8 JSON") from None
    if not isinstance(obj, dict):
        raise Malformed(1, "line is not a JSON object")
    # Step 2: fields.
    check_fields(obj)
    # Step 3: canonical form, so that every entry has exactly one encoding.
    if canonical(obj) != line:
        raise Malformed(3, "line is not in canonical form (RFC 8785)")
    return ParsedEntry(obj, line)


#: The one byte layout an ordinary entry's canonical line can have (FORMAT.md 3.1, 3.2):
#: the members in sorted order, the fixed-format values matched by length (their
#: characters are checked after), meta as whatever lies between its neighbours: the
#: shortest such run, found from its start (a greedy run scanned to the line's end and
#: back, 0.4 us a line). Only one split can give a meta that is a single JSON object,
#: and meta is decoded and re-encoded below, so either reading gives the same verdict.
#: The first and the eighth group are the line before and after its sig member: what
#: the signature signs, after the tag.
_ORDINARY: Final = lazy(
    (
        r'(\{"content":"b3:(.{64})","importance":(?:100|[1-9]?[0-9]),"key":"ed25519:(.{64})",'
        r'"meta":(\{.*?\}),"prev":"b3:(.{64})","seq":([1-9][0-9]{0,15})),"sig":"(.{128})"(,'
        r'"size":(0|[1-9][0-9]{0,15}),"source":"(?:' + "|".join(SOURCES) + ')",'
        r'"tier":"(' + "|".join(TIERS) + ')",'
        r'"ts":"(([0-9]{4}-[0-9]{2}-[0-9]{2})T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]'
        r'\.[0-9]{6}Z)","type":"(' + "|".join(CONTENT_TYPES) + r')","v":1\})'
    ).encode(),
    re.DOTALL,
)
_HEX_DIGITS: Final = b"0123456789abcdef"
#: Dates (YYYY-MM-DD) seen by ordinary_bytes(), and whether each is a real one.
_DATES: dict[bytes, bool] = {}

#: What ordinary_bytes() reads from a line: seq, ts, type, tier, the content digest (32
#: bytes), size, prev's hex, key's hex, and the signed message as libsodium's
#: crypto_sign_open takes it: the signature (64 bytes), then the message it signs.
OrdinaryBytes = tuple[int, bytes, bytes, bytes, bytes, int, bytes, bytes, bytes]


def ordinary_bytes(line: bytes, meta_bytes: bytes | None = None) -> OrdinaryBytes | None:
    """Steps 1-3 for the common line, by one compiled pattern; None: use parse_line.

    An ordinary entry is a content entry (not genesis, redaction or key
    rotation) at seq > 0. Its canonical line has one layout: the members in
    sorted order, every value but meta of a fixed format. The pattern
    matches that layout, the hex values are checked to be lowercase hex, and
    meta, the one free value, is decoded alone and must be a signable object
    whose canonical bytes are the bytes found. Meta is the only place a "}"
    can occur before the line's last byte, so the split is unique; the line
    is then the canonical encoding of an object with exactly the v1 fields,
    so parse_line would accept it and read the same values (a property test
    compares the two on mutated lines). Anything else, valid or not, is left
    to parse_line, which alone says what is wrong: this returns a verdict
    only on lines that pass.

    ``meta_bytes``: the canonical bytes meta must be (a writer checking the
    line it made from a meta it checked): compared, not decoded again.
    """
    if len(line) >= MAX_LINE_BYTES:
        return None
    m = _ORDINARY.fullmatch(line)
    if m is None:
        return None
    head, content, key, meta, prev, seq, sig, tail, size, tier, ts, date, kind = m.groups()
    if (content + key + prev + sig).translate(None, _HEX_DIGITS):
        return None
    real = _DATES.get(date)
    if real is None:
        if len(_DATES) > 4096:  # a chain has few dates; a hostile one's are not all kept
            _DATES.clear()
        real = _DATES[date] = _real_date(date.decode() + "T00:00:00.000000Z")
    if not real:
        return None
    n, length = int(seq), int(size)
    if n > MAX_SAFE_INT or length > MAX_SAFE_INT:
        return None
    if meta_bytes is not None:
        if meta != meta_bytes:
            return None
    elif meta != b"{}":
        if len(meta) > MAX_META_BYTES:
            return None
        try:
            obj = orjson.loads(meta)
            if type(obj) is not dict:
                return None
            # the usual meta, flat, of keys met before, ASCII strings and safe integers,
            # is checked here; anything else by check_value (same verdict, tested)
            for name, value in obj.items():
                held = type(value)
                if name not in KEYS_SEEN or not (
                    (held is str and value.isascii())
                    or (held is int and -MAX_SAFE_INT <= value <= MAX_SAFE_INT)
                ):
                    check_value(obj, max_depth=MAX_META_DEPTH)
                    break
        except (orjson.JSONDecodeError, ValueDomainError):
            return None
        if canonical(obj) != meta:
            return None
    return (
        n,
        ts,
        kind,
        tier,
        unhexlify(content),
        length,
        prev,
        key,
        b"".join((unhexlify(sig), ENTRY_TAG, head, tail)),
    )


#: ordinary_bytes() of a stretch of lines, by column: one tuple a field.
OrdinaryColumns = tuple[
    tuple[int, ...],
    tuple[bytes, ...],
    tuple[bytes, ...],
    tuple[bytes, ...],
    tuple[bytes, ...],
    tuple[int, ...],
    tuple[bytes, ...],
    tuple[bytes, ...],
    tuple[bytes, ...],
]

_canonical_bytes = partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)
#: Every digit made "0": sixteen of them in a row are an integer that may be beyond
#: MAX_SAFE_INT (2**53 - 1 has sixteen digits), found by one search for sixteen "0"s.
_DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER: Final = b"0" * 16
_FLAT_VALUES: Final = frozenset((str, int))


def _learn_keys(objs: list[dict[str, Any]]) -> bool:
    """Whether every key of ``objs`` is a meta key, adding those not seen to KEYS_SEEN as
    check_value does (so that a stretch's first chunk need not be read line by line)."""
    unseen = set(chain.from_iterable(objs)).difference(KEYS_SEEN)
    if not all(map(META_KEY_RE.fullmatch, unseen)):
        return False
    if len(KEYS_SEEN) + len(unseen) <= 4096:
        KEYS_SEEN.update(unseen)
    return True


def ordinary_columns(lines: Sequence[bytes]) -> OrdinaryColumns | None:
    """ordinary_bytes() of every line of a stretch, by column; None unless every line passes
    by its fast path (then ordinary_bytes, line by line, says which do).

    The same checks as ordinary_bytes, each made once over the stretch in C
    rather than once a line in Python (verify's runs of ordinary lines): the
    pattern and its groups by ``map``, the hex of every line by one
    ``translate``, each distinct date once, the largest seq and size, and
    meta by the flat case alone: every meta an object whose keys are meta
    keys (learnt as check_value learns them) and whose values are all
    strings or integers, with no backslash, no byte beyond ASCII and no run
    of sixteen digits in any of them (so every string is ASCII and every
    integer within MAX_SAFE_INT), equal to its canonical bytes. The signed
    message is the line before and after its sig member (the pattern's
    first and eighth groups) after the tag. Whatever this accepts, ordinary_bytes
    accepts with the same values (a property test compares the two on
    mutated stretches); anything else gives None, never a verdict.
    """
    if not lines or max(map(len, lines)) >= MAX_LINE_BYTES:
        return None
    matched = list(map(_ORDINARY.fullmatch, lines))
    if None in matched:
        return None
    found = cast("list[re.Match[bytes]]", matched)
    head, content, key, meta, prev, seq, sig, tail, size, tier, ts, date, kind = zip(
        *map(re.Match.groups, found), strict=True
    )
    if b"".join(content + key + prev + sig).translate(None, _HEX_DIGITS):
        return None
    for day in set(date):
        real = _DATES.get(day)
        if real is None:
            if len(_DATES) > 4096:
                _DATES.clear()
            real = _DATES[day] = _real_date(day.decode() + "T00:00:00.000000Z")
        if not real:
            return None
    seqs, sizes = tuple(map(int, seq)), tuple(map(int, size))
    if max(seqs) > MAX_SAFE_INT or max(sizes) > MAX_SAFE_INT:
        return None
    metas = b"".join(meta)
    if (
        not metas.isascii()
        or b"\\" in metas
        or _LONG_NUMBER in metas.translate(_DIGITS_AS_ZERO)
        or max(map(len, meta)) > MAX_META_BYTES
    ):
        return None
    try:
        objs = list(map(orjson.loads, meta))
    except orjson.JSONDecodeError:
        return None
    if set(map(type, objs)) != {dict}:
        return None
    if not KEYS_SEEN.issuperset(chain.from_iterable(objs)) and not _learn_keys(objs):
        return None
    if not _FLAT_VALUES.issuperset(map(type, chain.from_iterable(map(dict.values, objs)))) or list(
        map(_canonical_bytes, objs)
    ) != list(meta):
        return None
    signed = tuple(map(b"".join, zip(map(unhexlify, sig), repeat(ENTRY_TAG), head, tail)))
    return seqs, ts, kind, tier, tuple(map(unhexlify, content)), sizes, prev, key, signed


def signing_message(obj: dict[str, Any]) -> bytes:
    """The bytes the entry signature covers: tag + JCS(entry without sig)."""
    unsigned = {k: v for k, v in obj.items() if k != "sig"}
    return ENTRY_TAG + canonical(unsigned)


def signing_message_of_line(entry: ParsedEntry) -> bytes:
    """signing_message() of a parsed line, cut from its canonical bytes.

    The line is canonical (step 3), and removing one member from a JCS
    object leaves the JCS of the rest, so the message is the line without
    its ``,"sig":"<128 hex>"`` member. That member is found from the right:
    the members after it (size, source, tier, ts, type, v) are numbers and
    enum or fixed-format strings that cannot contain the pattern. Saves a
    second serialisation per line in verify; equal to signing_message()
    (a property test checks it).
    """
    line = entry.line
    at = line.rfind(b',"sig":"')
    return ENTRY_TAG + line[:at] + line[at + _SIG_MEMBER_LEN :]


_SIG_MEMBER_LEN: Final = len(b',"sig":"') + 128 + 1


def rotation_message(obj: dict[str, Any]) -> bytes:
    """The bytes the new key signs in a key-rotation entry.

    Tag + JCS(entry without sig and without meta.new_sig).
    """
    meta = {k: v for k, v in obj["meta"].items() if k != "new_sig"}
    unsigned = {k: v for k, v in obj.items() if k not in ("sig", "meta")}
    unsigned["meta"] = meta
    return ROTATION_TAG + canonical(unsigned)

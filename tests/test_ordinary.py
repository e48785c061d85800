"""The verifier's pattern check of ordinary lines agrees with parse_line (FORMAT.md 5, steps 1-3).

entry.ordinary_bytes() reads the common line by one compiled pattern and gives
no verdict of its own: it may only accept a line that parse_line accepts,
and must read the same values from it. Checked on generated entries, on
mutations of them, and on one named line per way a look-alike can differ.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.format.canonical import MAX_SAFE_INT, b3, canonical
from memory_chain.chain.format.entry import (
    CONTENT_TYPES,
    MAX_LINE_BYTES,
    MAX_META_DEPTH,
    SOURCES,
    TIERS,
    TYPES,
    Malformed,
    format_ts,
    ordinary_bytes,
    ordinary_columns,
    parse_line,
    signing_message,
)

META_KEY_CHARS = string.ascii_letters + string.digits + "_.:-"
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-MAX_SAFE_INT, MAX_SAFE_INT),
    st.text(max_size=12),  # control characters, quotes, non-ASCII included
)


def values(depth: int) -> st.SearchStrategy[object]:
    if depth == 0:
        return leaves
    inner = values(depth - 1)
    return st.one_of(
        leaves,
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(META_KEY_CHARS, min_size=1, max_size=8), inner, max_size=3),
    )


hashes = st.binary(min_size=32, max_size=32).map(b3)
objects = st.fixed_dictionaries(
    {
        "v": st.just(1),
        "seq": st.integers(0, MAX_SAFE_INT) | st.integers(0, 20),
        "ts": st.integers(0, 253_402_300_799_999_999).map(format_ts),
        "type": st.sampled_from(TYPES) | st.sampled_from(CONTENT_TYPES),
        "tier": st.sampled_from(TIERS),
        "source": st.sampled_from(SOURCES),
        "importance": st.integers(0, 100),
        "content": hashes | st.none(),
        "size": st.integers(0, MAX_SAFE_INT) | st.integers(0, 500),
        "prev": hashes | st.none(),
        "key": st.binary(min_size=32, max_size=32).map(lambda b: "ed25519:" + b.hex()),
        "meta": st.dictionaries(
            st.text(META_KEY_CHARS, min_size=1, max_size=8), values(MAX_META_DEPTH - 1), max_size=3
        ),
        "sig": st.binary(min_size=64, max_size=64).map(bytes.hex),
    }
)


def agree(line: bytes) -> bool:
    """ordinary_bytes() accepts only what parse_line accepts, with the same values; True if
    it did."""
    fields = ordinary_bytes(line)
    if fields is None:
        return False
    obj = parse_line(line).obj  # raises Malformed if ordinary_bytes() accepted a bad line
    seq, ts, kind, tier, digest, size, prev, key, signed = fields
    sig, message = signed[:64], signed[64:]
    text = (ts.decode(), kind.decode(), tier.decode(), "b3:" + digest.hex())
    keys = ("b3:" + prev.decode(), "ed25519:" + key.decode())
    assert (seq, *text, size, *keys) == (
        obj["seq"],
        obj["ts"],
        obj["type"],
        obj["tier"],
        obj["content"],
        obj["size"],
        obj["prev"],
        obj["key"],
    )
    assert sig == bytes.fromhex(obj["sig"])
    assert message == signing_message(obj)
    return True


def ordinary_obj(obj: dict[str, object]) -> bool:
    return obj["type"] in CONTENT_TYPES and obj["seq"] != 0 and obj["content"] is not None


@settings(deadline=None, max_examples=400)
@given(obj=objects)
def test_generated_lines_agree(obj: dict[str, object]) -> None:
    line = canonical(obj)
    try:
        parse_line(line)
        valid = True
    except Malformed:
        valid = False
    taken = agree(line)
    if valid and ordinary_obj(obj) and obj["prev"] is not None:
        assert taken, line  # the pattern covers every valid ordinary line


@settings(deadline=None, max_examples=600)
@given(
    obj=st.tuples(objects, st.sampled_from(CONTENT_TYPES), hashes, hashes).map(
        lambda t: {**t[0], "type": t[1], "content": t[2], "prev": t[3], "seq": t[0]["seq"] or 1}
    ),
    at=st.integers(0, 10_000),
    how=st.sampled_from(["replace", "insert", "delete"]),
    byte=st.sampled_from(b'{}[]",:0123456789abcdefABCDEF\\ \x00\xc3\x7f') | st.integers(0, 255),
)
def test_mutated_lines_agree(obj: dict[str, object], at: int, how: str, byte: int) -> None:
    """One byte changed, inserted or removed anywhere: never accepted where parse_line refuses."""
    line = bytearray(canonical(obj))
    at %= len(line)
    if how == "replace":
        line[at] = byte
    elif how == "insert":
        line.insert(at, byte)
    else:
        del line[at]
    agree(bytes(line))


def _line(**change: object) -> dict[str, object]:
    obj: dict[str, object] = {
        "v": 1,
        "seq": 7,
        "ts": "2026-11-26T10:00:00.000000Z",
        "type": "fact",
        "tier": "relationship",
        "source": "auto",
        "importance": 60,
        "content": "b3:" + "ab" * 32,
        "size": 12,
        "prev": "b3:" + "cd" * 32,
        "key": "ed25519:" + "ef" * 32,
        "meta": {"origin": "person"},
        "sig": "01" * 64,
    }
    obj.update(change)
    return obj


def test_the_usual_line_is_taken() -> None:
    assert agree(canonical(_line()))
    assert agree(canonical(_line(meta={})))


LOOK_ALIKES = {
    "uppercase hex in sig": canonical(_line()).replace(b'"sig":"0101', b'"sig":"0A01'),
    "uppercase hex in content": canonical(_line()).replace(b"b3:abab", b"b3:ABab"),
    "space in key hex": canonical(_line()).replace(b"ed25519:efef", b"ed25519:e fef"[:12]),
    "quote inside a hash": canonical(_line()).replace(b"b3:cdcd", b'b3:c"cd'[:7]),
    "meta not canonical (space)": canonical(_line()).replace(b'{"origin":', b'{ "origin":'),
    "meta keys unsorted": canonical(_line(meta={"b": 1, "a": 2})).replace(
        b'{"a":2,"b":1}', b'{"b":1,"a":2}'
    ),
    "meta duplicate key": canonical(_line(meta={"a": 1})).replace(b'{"a":1}', b'{"a":1,"a":1}'),
    "meta too deep": canonical(_line(meta={"a": {"b": {"c": {"d": {"e": 1}}}}})),
    "meta float": canonical(_line()).replace(b'{"origin":"person"}', b'{"n":1.5}'),
    "meta huge int": canonical(_line()).replace(b'{"origin":"person"}', b'{"n":9007199254740992}'),
    "meta lone surrogate": canonical(_line()).replace(b'"person"', b'"\\ud800"'),
    "meta invalid utf-8": canonical(_line()).replace(b'"person"', b'"p\xc3rson"'),
    "hour 24": canonical(_line(ts="2026-11-26T24:00:00.000000Z")),
    "February 30": canonical(_line(ts="2026-02-30T10:00:00.000000Z")),
    "leap day of a common year": canonical(_line(ts="2025-02-29T10:00:00.000000Z")),
    "second 60": canonical(_line(ts="2026-11-26T10:00:60.000000Z")),
    "seq with a leading zero": canonical(_line()).replace(b'"seq":7', b'"seq":07'),
    "seq beyond 2**53 - 1": canonical(_line(seq=MAX_SAFE_INT + 1)),
    "size beyond 2**53 - 1": canonical(_line(size=MAX_SAFE_INT + 1)),
    "importance 101": canonical(_line(importance=101)),
    "version 2": canonical(_line(v=2)),
    "a system type": canonical(_line(type="redaction")),
    "content null": canonical(_line(content=None)),
    "prev null after seq 0": canonical(_line(prev=None)),
    "seq 0": canonical(_line(seq=0)),
    "an extra member": canonical({**_line(), "x": 1}),
    "a missing member": canonical({k: v for k, v in _line().items() if k != "source"}),
    "a trailing space": canonical(_line()) + b" ",
    "too long": canonical(_line(meta={"pad": "x" * (MAX_LINE_BYTES - 500)})),
}


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_look_alikes_are_left_to_parse_line(name: str) -> None:
    line = LOOK_ALIKES[name]
    assert ordinary_bytes(line) is None, name
    with pytest.raises(Malformed):
        parse_line(line)


def test_valid_lines_that_look_odd_are_taken() -> None:
    assert agree(canonical(_line(ts="2024-02-29T23:59:59.999999Z")))
    assert agree(canonical(_line(meta={"pad": "é" * 1000})))
    assert agree(canonical(_line(meta={"a": {"b": {"c": {"d": 1}}}})))
    # A string in meta that spells the members after it: meta still ends where they start.
    hidden = '},"prev":"b3:' + "00" * 32 + '","seq":1'
    line = canonical(_line(meta={"x": hidden}))
    assert agree(line)
    fields = ordinary_bytes(line)
    assert fields is not None and fields[6] == b"cd" * 32 and fields[0] == 7


# -- a stretch read at once: entry.ordinary_columns -----------------------------------------


def columns_agree(lines: list[bytes]) -> bool:
    """ordinary_columns() accepts a stretch only when ordinary_bytes() accepts every line of
    it, and reads the same values, column by column; True if it did."""
    one_by_one = [ordinary_bytes(line) for line in lines]  # also learns meta's keys
    columns = ordinary_columns(lines)
    if columns is None:
        return False
    assert None not in one_by_one, lines
    assert columns == tuple(zip(*one_by_one, strict=True))
    for line in lines:
        assert agree(line)
    return True


flat_meta = st.dictionaries(
    st.sampled_from(["origin", "session", "turn", "about", "n"]),
    st.text(string.printable, max_size=10) | st.integers(-(10**18), 10**18),
    max_size=3,
)
flat_lines = st.tuples(objects, st.sampled_from(CONTENT_TYPES), hashes, hashes, flat_meta).map(
    lambda t: {
        **t[0],
        "type": t[1],
        "content": t[2],
        "prev": t[3],
        "meta": t[4],
        "seq": t[0]["seq"] or 1,
    }
)


@settings(deadline=None, max_examples=400)
@given(
    objs=st.lists(flat_lines | objects, min_size=1, max_size=4),
    at=st.integers(0, 10_000),
    how=st.sampled_from(["keep", "replace", "insert", "delete"]),
    byte=st.sampled_from(b'{}[]",:0123456789abcdef\\ \x00\xc3\x7f') | st.integers(0, 255),
)
def test_a_stretch_read_at_once_agrees(
    objs: list[dict[str, object]], at: int, how: str, byte: int
) -> None:
    """Generated stretches, flat metas and any other, one byte of one line changed or not:
    the columns are ordinary_bytes' values, or None."""
    lines = [canonical(obj) for obj in objs]
    victim = bytearray(lines[at % len(lines)])
    at %= len(victim)
    if how == "replace":
        victim[at] = byte
    elif how == "insert":
        victim.insert(at, byte)
    elif how == "delete":
        del victim[at]
    lines[at % len(lines)] = bytes(victim)
    columns_agree(lines)


def test_the_usual_stretch_is_read_at_once() -> None:
    lines = [canonical(_line(seq=7 + i, meta={"origin": "person", "turn": i})) for i in range(5)]
    assert columns_agree(lines)
    assert columns_agree([canonical(_line(meta={}))])


#: Lines ordinary_bytes takes one by one, that the stretch leaves to it: the flat case only.
NOT_FLAT = {
    "an escape in a string": {"origin": "per\nson"},
    "a string beyond ASCII": {"origin": "pérson"},
    "sixteen digits in a string": {"origin": "1234567890123456"},
    "an integer of sixteen digits": {"n": 1234567890123456},
    "a boolean": {"origin": True},
    "null": {"origin": None},
    "a list": {"origin": ["a"]},
    "an object": {"origin": {"a": 1}},
}


@pytest.mark.parametrize("name", NOT_FLAT)
def test_what_is_not_flat_is_read_line_by_line(name: str) -> None:
    usual = canonical(_line(seq=8))
    odd = canonical(_line(seq=9, meta=NOT_FLAT[name]))
    assert ordinary_columns([usual, odd]) is None, name
    assert agree(odd), name  # ordinary_bytes takes it


def test_keys_are_learnt_as_check_value_learns_them() -> None:
    """A key never seen is taken when it is a meta key (and learnt); one that is not is
    left to the lines, which refuse it."""
    usual = canonical(_line(seq=8))
    fresh = canonical(_line(seq=9, meta={"never-seen-before-s55": 1}))
    assert columns_agree([usual, fresh])
    for bad in ("a b", "x" * 65, "é"):
        odd = canonical(_line(seq=9, meta={bad: 1}))
        assert ordinary_columns([usual, odd]) is None, bad
        assert ordinary_bytes(odd) is None, bad


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_in_a_stretch_is_left_to_parse_line(name: str) -> None:
    lines = [canonical(_line(seq=6)), LOOK_ALIKES[name], canonical(_line(seq=8))]
    assert ordinary_columns(lines) is None, name


# -- the writer's side: a batch add's line, made by splicing the signature in -------------

_SIGNER = None


def _signer() -> object:
    global _SIGNER
    if _SIGNER is None:
        from memory_chain.chain.format.keys import Signer

        _SIGNER = Signer(bytes(range(32)))
    return _SIGNER


@settings(deadline=None, max_examples=300)
@given(obj=objects)
def test_a_spliced_line_is_the_canonical_line(obj: dict[str, object]) -> None:
    """ledger.signed_line (the sig put into the signed body) gives self_checked's line,
    byte for byte, for every entry, ordinary or not; obj gets the same sig."""
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.store.ledger import self_checked, signed_line

    del obj["sig"]
    general = dict(obj)
    fast = dict(obj)
    try:
        expected = self_checked(general, _signer())  # type: ignore[arg-type]
    except InputError:  # an entry the writer refuses: refused the same way
        with pytest.raises(InputError):
            signed_line(fast, _signer(), canonical(obj["meta"]))  # type: ignore[arg-type]
        return
    assert signed_line(fast, _signer(), canonical(obj["meta"])) == expected  # type: ignore[arg-type]
    assert fast["sig"] == general["sig"]


def test_meta_bytes_are_compared_not_decoded() -> None:
    """With the meta a writer expects, the pattern takes the line only when meta is it."""
    line = canonical(
        {
            "v": 1,
            "seq": 3,
            "ts": format_ts(1_700_000_000_000_000),
            "type": "memory",
            "tier": "relationship",
            "source": "manual",
            "importance": 50,
            "content": b3(b"x"),
            "size": 1,
            "prev": b3(b"p"),
            "key": "ed25519:" + "ab" * 32,
            "meta": {"session": "s1"},
            "sig": "cd" * 64,
        }
    )
    assert ordinary_bytes(line, b'{"session":"s1"}') is not None
    assert ordinary_bytes(line, b'{"session":"s2"}') is None
    assert ordinary_bytes(line) is not None

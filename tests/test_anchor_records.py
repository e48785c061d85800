"""Anchoring without a node: anchors.jsonl records (chain/log/anchors.py) and the payload bytes.

The payload (anchor/payload.py) is what every anchor transaction carries; the
records are what `memory-chain anchor` writes before and after sending one.
No web3 and no anvil here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import blake3
import orjson
import pytest
from eth_utils import keccak
from hypothesis import given
from hypothesis import strategies as st

from memory_chain.anchor.payload import (
    ANCHOR_SELECTOR,
    ANCHORED_TOPIC,
    CALLDATA_SIZE,
    Payload,
    PayloadError,
    decode_calldata,
    decode_event,
    payload_of,
)
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.log.anchors import (
    RECORD_FORMAT,
    STATES,
    append_record,
    merge_records,
    parse_anchors,
    read_anchors,
)
from memory_chain.chain.log.checkpoint import make_checkpoint

TX1 = "0x" + "11" * 32
TX2 = "0x" + "22" * 32
SENDER = bytes.fromhex("70997970c51812dc3a010c7d01b50e0d17dc79c8")

hash32 = st.binary(min_size=32, max_size=32)
sizes = st.integers(min_value=1, max_value=2**64 - 1)
payloads = st.builds(Payload, hash32, sizes, hash32, hash32)


def record(tx: str = TX1, state: str = "sent", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "state": state,
        "tx": tx,
        "network": "anvil",
        "evm_chain_id": 31337,
        "mode": "event",
        "chain_id": "ab" * 32,
        "tree_size": 3,
        "root": "cd" * 32,
        "checkpoint_hash": "ef" * 32,
    }
    rec.update(extra)
    return rec


def line(rec: dict[str, Any]) -> bytes:
    return orjson.dumps(rec) + b"\n"


# -- the signatures the contract and the decoder share ---------------------


def test_selector_and_topic_are_keccak_of_the_signatures() -> None:
    """ANCHOR_SELECTOR and ANCHORED_TOPIC are keccak256 of the function and event signatures."""
    assert keccak(text="anchor(bytes32,uint64,bytes32,bytes32)")[:4] == ANCHOR_SELECTOR
    assert keccak(text="Anchored(bytes32,uint64,bytes32,bytes32,address)") == ANCHORED_TOPIC
    assert CALLDATA_SIZE == 132


# -- payload encode / decode -----------------------------------------------


@given(payloads)
def test_calldata_round_trips(p: Payload) -> None:
    """Any payload encodes to 132 bytes of calldata that decode to the same payload."""
    data = p.calldata()
    assert len(data) == CALLDATA_SIZE
    assert data[:4] == ANCHOR_SELECTOR
    assert decode_calldata(data) == p


@given(payloads, st.binary(min_size=20, max_size=20))
def test_event_round_trips(p: Payload, sender: bytes) -> None:
    """The Anchored log of any payload (topics and data) decodes to the payload and sender."""
    topics = [ANCHORED_TOPIC, p.chain_id, bytes(12) + sender]
    assert decode_event(topics, p.event_data()) == (p, sender)


def test_payload_of_a_checkpoint() -> None:
    """A checkpoint's payload: chain id hash, size, root, BLAKE3 of the note's bytes."""
    cp = make_checkpoint("b3:" + "ab" * 32, 5, bytes(range(32)), Signer(bytes([7]) * 32))
    p = payload_of(cp)
    assert p == Payload(bytes([0xAB]) * 32, 5, bytes(range(32)), blake3.blake3(cp.text).digest())


@pytest.mark.parametrize("size", [0, 131, 133, 4])
def test_decode_calldata_rejects_wrong_sizes(size: int) -> None:
    """Input of any length but 132 bytes is no anchor."""
    data = (ANCHOR_SELECTOR + bytes(200))[:size]
    with pytest.raises(PayloadError, match=f"input is {size} bytes, an anchor is 132"):
        decode_calldata(data)


def test_decode_calldata_rejects_another_selector() -> None:
    """132 bytes that call another function are no anchor."""
    data = b"\xa9\x05\x9c\xbb" + Payload(bytes(32), 1, bytes(32), bytes(32)).calldata()[4:]
    with pytest.raises(PayloadError, match="starts with 0xa9059cbb, not the anchor selector"):
        decode_calldata(data)


def test_decode_calldata_rejects_sizes_beyond_uint64_and_zero() -> None:
    """A tree size word above 2**64-1, or zero, is refused."""
    good = Payload(bytes(32), 1, bytes(32), bytes(32)).calldata()
    big = good[:36] + (2**64).to_bytes(32, "big") + good[68:]
    with pytest.raises(PayloadError, match="does not fit in uint64"):
        decode_calldata(big)
    zero = good[:36] + bytes(32) + good[68:]
    with pytest.raises(PayloadError, match="tree size 0 is out of range"):
        decode_calldata(zero)


def test_decode_event_rejects_malformed_logs() -> None:
    """Another topic, a missing topic, data of the wrong size or a non-address sender fail."""
    p = Payload(bytes(32), 2, bytes(32), bytes(32))
    sender = bytes(12) + SENDER
    with pytest.raises(PayloadError, match="not an Anchored event"):
        decode_event([b"\x01" * 32, p.chain_id, sender], p.event_data())
    with pytest.raises(PayloadError, match="not an Anchored event"):
        decode_event([ANCHORED_TOPIC, p.chain_id], p.event_data())
    with pytest.raises(PayloadError, match="Anchored data is 95 bytes, not 96"):
        decode_event([ANCHORED_TOPIC, p.chain_id, sender], p.event_data()[:-1])
    with pytest.raises(PayloadError, match="sender topic is not an address"):
        decode_event([ANCHORED_TOPIC, p.chain_id, b"\x01" * 32], p.event_data())


def test_payload_rejects_wrong_field_sizes() -> None:
    """A chain id, root or note hash that is not 32 bytes is no payload."""
    with pytest.raises(PayloadError, match="chain_id must be 32 bytes"):
        Payload(bytes(31), 1, bytes(32), bytes(32))
    with pytest.raises(PayloadError, match="root must be 32 bytes"):
        Payload(bytes(32), 1, bytes(33), bytes(32))
    with pytest.raises(PayloadError, match="checkpoint_hash must be 32 bytes"):
        Payload(bytes(32), 1, bytes(32), b"")


# -- anchors.jsonl ---------------------------------------------------------


def test_parse_merges_the_records_of_one_transaction() -> None:
    """sent then confirmed for one tx merge into one record, later fields winning, in file order."""
    raw = (
        line(record(TX1, time="t1", nonce=0))
        + line(record(TX2, time="t2"))
        + line(record(TX1, "confirmed", time="t3", block_number=7))
    )
    anchors = parse_anchors(raw)
    assert anchors.skipped == []
    assert anchors.torn_tail is False
    assert [r["tx"] for r in anchors.records] == [TX1, TX2]
    first = anchors.records[0]
    assert (first["state"], first["time"], first["nonce"], first["block_number"]) == (
        "confirmed",
        "t3",
        0,
        7,
    )
    assert anchors.pending("anvil") == [anchors.records[1]]
    assert anchors.pending("base") == []
    assert anchors.for_checkpoint(3, bytes([0xCD]) * 32) == anchors.records
    assert anchors.for_checkpoint(4, bytes([0xCD]) * 32) == []


def test_for_checkpoint_leaves_out_dropped_and_failed() -> None:
    """Only sent and confirmed transactions are anchor references of a checkpoint."""
    txs = ["0x" + f"{i:02x}" * 32 for i in range(4)]
    raw = b"".join(line(record(tx, state)) for tx, state in zip(txs, STATES, strict=True))
    anchors = parse_anchors(raw)
    assert [r["state"] for r in anchors.records] == list(STATES)
    assert [r["state"] for r in anchors.for_checkpoint(3, bytes([0xCD]) * 32)] == [
        "sent",
        "confirmed",
    ]


def test_merge_records_later_fields_win() -> None:
    """merge_records folds rows by tx; a field set later replaces the earlier one."""
    rows = [{"tx": "a", "x": 1, "y": 1}, {"tx": "b"}, {"tx": "a", "y": 2}]
    assert merge_records(rows) == [{"tx": "a", "x": 1, "y": 2}, {"tx": "b"}]


def test_parse_lists_lines_that_are_not_records() -> None:
    """Non-JSON, non-objects and records missing or breaking a field are listed, not fatal."""
    raw = (
        b"not json\n"
        + b"[1, 2]\n"
        + line({k: v for k, v in record().items() if k != "root"})
        + line(record(tree_size=0))
        + line(record(tx="0x" + "AB" * 32))
        + line(record(state="lost"))
        + line(record(format="memory-chain-anchor/2"))
        + b"\n"
        + line(record(TX2))
    )
    anchors = parse_anchors(raw)
    assert anchors.skipped == [
        "line 1: not JSON",
        "line 2: not a JSON object",
        "line 3: no 'root'",
        "line 4: bad 'tree_size'",
        "line 5: bad 'tx'",
        "line 6: bad 'state'",
        "line 7: bad 'format'",
        "line 8: not JSON",
    ]
    assert [r["tx"] for r in anchors.records] == [TX2]


def test_parse_ignores_a_torn_last_line() -> None:
    """A last line without its newline (a write cut by a crash) is no record and is flagged."""
    raw = line(record(TX1)) + line(record(TX2))[:-1]
    anchors = parse_anchors(raw)
    assert anchors.torn_tail is True
    assert anchors.skipped == []
    assert [r["tx"] for r in anchors.records] == [TX1]
    assert parse_anchors(b"").records == []


def test_read_anchors_of_a_directory_without_the_file(tmp_path: Path) -> None:
    """No anchors.jsonl reads as no anchors."""
    anchors = read_anchors(Layout(tmp_path))
    assert (anchors.records, anchors.skipped, anchors.torn_tail) == ([], [], False)


def test_append_writes_one_sorted_line_per_record(tmp_path: Path) -> None:
    """append_record adds one JSON line (sorted keys) per call and creates the file."""
    layout = Layout(tmp_path)
    append_record(layout, record(TX1))
    append_record(layout, record(TX1, "confirmed", block_number=3))
    lines = layout.anchors.read_bytes().splitlines()
    assert len(lines) == 2
    assert lines[0] == orjson.dumps(record(TX1), option=orjson.OPT_SORT_KEYS)
    assert [r["state"] for r in read_anchors(layout).records] == ["confirmed"]


def test_append_closes_a_torn_last_line_first(tmp_path: Path) -> None:
    """After a torn tail, the next record starts on its own line; the torn one is then skipped."""
    layout = Layout(tmp_path)
    torn = line(record(TX1))[:40]
    layout.anchors.write_bytes(line(record(TX2)) + torn)
    assert read_anchors(layout).torn_tail is True
    append_record(layout, record(TX1, "confirmed"))
    assert layout.anchors.read_bytes() == (
        line(record(TX2))
        + torn
        + b"\n"
        + orjson.dumps(record(TX1, "confirmed"), option=orjson.OPT_SORT_KEYS)
        + b"\n"
    )
    anchors = read_anchors(layout)
    assert anchors.torn_tail is False
    assert anchors.skipped == ["line 2: not JSON"]
    assert [(r["tx"], r["state"]) for r in anchors.records] == [(TX2, "sent"), (TX1, "confirmed")]


def test_append_refuses_a_record_that_would_not_parse(tmp_path: Path) -> None:
    """append_record checks the record first and writes nothing when it is malformed."""
    layout = Layout(tmp_path)
    with pytest.raises(ValueError, match="not an anchor record: bad 'root'"):
        append_record(layout, record(root="xyz"))
    assert not layout.anchors.exists()

"""Edge cases of the ledger found in review, each pinned by a test."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from helpers.blobs import delete_blob

from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.canonical import canonical
from memory_chain.chain.format.entry import Malformed, parse_line
from memory_chain.chain.format.errors import ChainStateError, InputError
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.lifecycle.rotate import rotate
from memory_chain.chain.store.ledger import Ledger, NewEntry


def _genesis(ledger: Ledger) -> dict[str, object]:
    return orjson.loads(ledger.layout.chain.read_bytes().splitlines()[0])


@pytest.mark.parametrize("field", ["type", "tier", "source"])
@pytest.mark.parametrize("value", [[], {}, 1, None])
def test_unhashable_enum_values_are_malformed(ledger: Ledger, field: str, value: object) -> None:
    """A non-string type, tier or source is malformed (step 2), never a crash."""
    obj = _genesis(ledger)
    obj[field] = value
    with pytest.raises(Malformed) as exc:
        parse_line(canonical(obj))
    assert 2 == exc.value.step


@pytest.mark.parametrize(
    "ts",
    [
        "\u0662\u0660\u0662\u0666-01-01T00:00:00.000000Z",
        "2026-13-01T00:00:00.000000Z",
        "2026-02-30T00:00:00.000000Z",
        "2026-01-01T24:00:00.000000Z",
    ],
)
def test_timestamps_must_be_real_ascii_times(ledger: Ledger, ts: str) -> None:
    """Non-ASCII digits and impossible dates are malformed."""
    obj = _genesis(ledger)
    obj["ts"] = ts
    with pytest.raises(Malformed, match="ts must be"):
        parse_line(canonical(obj))


def test_redaction_reason_over_meta_limit_is_input_error(ledger: Ledger) -> None:
    """A reason within 1000 characters but over 4096 bytes of meta is refused before writing."""
    seq = ledger.add(NewEntry(b"to redact")).seq
    before = ledger.layout.chain.read_bytes()
    with pytest.raises(InputError, match="meta exceeds"):
        redact(ledger, seq, "\U0001f600" * 1000)
    assert before == ledger.layout.chain.read_bytes()


def test_stale_ledger_follows_a_rotation_by_another_process(data_dir: Path) -> None:
    """A Ledger whose key was rotated by another Ledger reloads the new key and keeps adding."""
    first = Ledger.init(data_dir, name="a")
    first.add(NewEntry(b"before"))
    rotate(Ledger(data_dir))
    appended = first.add(NewEntry(b"after"))
    assert 3 == appended.seq
    assert verify_ledger(Ledger(data_dir)).ok


def test_corrupt_next_key_is_dropped(ledger: Ledger) -> None:
    """A corrupt agent.key.next (an interrupted rotation) is removed, not a permanent block."""
    nxt = ledger.layout.root / "agent.key.next"
    nxt.write_text("not a key\n")
    nxt.chmod(0o600)
    ledger.add(NewEntry(b"still works"))
    assert not nxt.exists()


def test_from_beyond_the_end_is_refused(ledger: Ledger) -> None:
    """verify --from past the last entry checks nothing, so it is an input error."""
    with pytest.raises(InputError, match="beyond the last entry"):
        verify_ledger(ledger, from_seq=5)


def test_malformed_chain_id_pin_is_refused(ledger: Ledger) -> None:
    """A chain id that is not b3:<64 hex> is an input error, not a verification failure."""
    with pytest.raises(InputError, match="not a chain id"):
        verify_ledger(ledger, chain_id="B3:ABC")


def test_config_pin_and_explicit_pin_both_apply(ledger: Ledger) -> None:
    """An explicit --chain-id adds to the config pin instead of replacing it."""
    real = ledger.config.chain_id
    assert real is not None
    ledger.config.data["chain_id"] = "b3:" + "0" * 64
    report = verify_ledger(ledger, chain_id=real)
    assert (False, "chain-id-mismatch") == (report.ok, report.failure and report.failure.reason)


def test_empty_chain_file_is_a_state_error(ledger: Ledger) -> None:
    """An empty chain.jsonl with no head is reported as such, not as a key mismatch."""
    ledger.layout.chain.write_bytes(b"")
    ledger.layout.head.unlink()
    with pytest.raises(ChainStateError, match="holds no entry"):
        Ledger(ledger.layout.root).add(NewEntry(b"x"))


def test_config_without_chain_is_refused_then_redone(data_dir: Path) -> None:
    """config.json without chain.jsonl is refused (nothing overwritten) until config is removed."""
    Ledger.init(data_dir, name="first")
    (data_dir / "chain.jsonl").unlink()
    key_before = (data_dir / "agent.key").read_bytes()
    with pytest.raises(ChainStateError, match="interrupted init, or a lost chain"):
        Ledger.init(data_dir, name="second")
    assert key_before == (data_dir / "agent.key").read_bytes()
    (data_dir / "config.json").unlink()
    ledger = Ledger.init(data_dir, name="second")
    assert "second" == ledger.config.name
    assert verify_ledger(ledger).ok


def test_init_never_overwrites_a_chain(ledger: Ledger) -> None:
    """init refuses a directory that holds a chain, leaving it byte-identical."""
    before = ledger.layout.chain.read_bytes()
    with pytest.raises(ChainStateError, match="already exists"):
        Ledger.init(ledger.layout.root, name="again")
    assert before == ledger.layout.chain.read_bytes()


def test_any_key_of_the_history_can_be_trusted(ledger: Ledger) -> None:
    """A key the chain rotated to is a valid pin: its rotation signature endorses the history."""
    genesis_key = ledger.signer().key_id
    rotate(ledger)
    current = ledger.signer().key_id
    ledger.add(NewEntry(b"after the rotation"))
    for pin in (genesis_key, current):
        assert verify_ledger(ledger, trusted_key=pin).ok


def test_a_key_outside_the_history_is_untrusted(ledger: Ledger) -> None:
    """A pinned key that neither started nor joined the chain fails step 7 at seq 0."""
    from memory_chain.chain.format.keys import Signer

    stranger = Signer(bytes(range(32))).key_id
    report = verify_ledger(ledger, trusted_key=stranger)
    assert report.failure is not None
    assert (0, 7, "untrusted-key") == (
        report.failure.seq,
        report.failure.step,
        report.failure.reason,
    )


def test_failed_append_leaves_the_chain_unchanged(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An fdatasync error fails the add with exit-2 error and cuts the line back out."""
    import errno
    import os

    from memory_chain.chain.format.errors import OperationalError

    before = ledger.layout.chain.read_bytes()
    real = os.fdatasync
    chain_inode = ledger.layout.chain.stat().st_ino
    calls = []

    def failing(fd: int) -> None:
        if os.fstat(fd).st_ino == chain_inode:
            calls.append(fd)
            if len(calls) == 1:
                raise OSError(errno.EIO, "I/O error")
        real(fd)

    monkeypatch.setattr(os, "fdatasync", failing)
    with pytest.raises(OperationalError, match="cannot append"):
        ledger.add(NewEntry(b"lost on EIO"))
    assert before == ledger.layout.chain.read_bytes()
    assert 1 == ledger.add(NewEntry(b"next")).seq
    assert verify_ledger(ledger).ok


def test_threads_sharing_a_ledger_do_not_fork_the_chain(ledger: Ledger) -> None:
    """Four threads adding through one Ledger give contiguous seqs and a valid chain."""
    import threading

    def worker(n: int) -> None:
        for i in range(30):
            ledger.add(NewEntry(f"thread {n} entry {i}".encode()))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seqs = [e["seq"] for e in ledger.entries()]
    assert list(range(121)) == seqs
    assert verify_ledger(ledger).ok


def test_forged_head_json_is_rebuilt_not_trusted(ledger: Ledger) -> None:
    """A head.json with a recomputed check but wrong members is ignored and rebuilt."""
    from memory_chain.chain.format.canonical import b3
    from memory_chain.chain.store.head import load_head

    ledger.add(NewEntry(b"one"))
    head = load_head(ledger.layout)
    assert head is not None
    for forged in ({"ts": "9999-12-31T23:59:59.999999Z"}, {"size": "7"}, {"last_offset": 10**9}):
        fields = {**head.as_dict(), **forged}
        fields["check"] = b3(canonical({k: v for k, v in fields.items() if k != "check"}))
        ledger.layout.head.write_bytes(orjson.dumps(fields))
        appended = Ledger(ledger.layout.root).add(NewEntry(repr(forged).encode()))
        assert not appended.ts.startswith("9999")
    assert verify_ledger(ledger).ok


def test_reader_never_sees_a_split_line(ledger: Ledger) -> None:
    """iter_lines reads the size the file had when it started: a later append is not split."""
    lines = ledger.iter_lines()
    first = next(lines)
    ledger.add(NewEntry(b"appended while reading"))
    assert [] == list(lines)  # the snapshot held only the genesis line
    assert first.endswith(b"\n")
    assert 2 == sum(1 for _ in ledger.iter_lines())


@pytest.mark.parametrize("damage", ["none", "edit", "delete-blob", "torn", "from-seq"])
def test_parallel_verdict_equals_sequential(ledger: Ledger, damage: str) -> None:
    """verify_parallel over small chunks gives exactly verify_lines' report."""
    from memory_chain.chain.verify.lines import verify_lines
    from memory_chain.chain.verify.parallel import verify_parallel

    added = [ledger.add(NewEntry(f"memory {i}".encode())) for i in range(25)]
    lines = list(ledger.iter_lines())
    from_seq = 0
    if damage == "edit":
        lines[13] = lines[13].replace(b"memory", b"memorx", 1)
        lines[13] = lines[13].replace(b'"importance":50', b'"importance":51')
    elif damage == "delete-blob":
        content = added[9].content
        assert content is not None
        delete_blob(ledger.store, content)
    elif damage == "torn":
        lines.append(b'{"content":')
    elif damage == "from-seq":
        from_seq = 11
    sequential = verify_lines(iter(lines), blobs=ledger.store.raw, from_seq=from_seq)
    parallel = verify_parallel(
        iter(lines),
        content_root=ledger.layout.content,
        workers=2,
        chunk_lines=4,
        from_seq=from_seq,
    )
    assert sequential == parallel
    assert (damage in ("none", "torn", "from-seq")) == sequential.ok

"""Verify in runs gives what verify line by line gives: the verdict, the failure, the state.

check_chunk hands stretches of ordinary lines to ChainState as Runs (taken
in bulk) and every other line as its LineResult. Forcing every line down
the line-by-line path (entry.ordinary_bytes answering None) must not change
anything a caller sees: the Report, and the state a later verify resumes
from. Compared on one chain of about 700 entries (runs across chunk
boundaries, a redaction, a key rotation) under single mutations, pins,
checkpoints and resumption points.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.format.canonical import b3
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.lifecycle.rotate import rotate
from memory_chain.chain.log.checkpoint import make_checkpoint
from memory_chain.chain.log.merkle import BLAKE3, root_of
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify import lines as verify_module
from memory_chain.chain.verify.lines import ChainState, Report, verify_lines


@pytest.fixture(scope="module")
def chain() -> Iterator[tuple[Ledger, list[bytes]]]:
    with tempfile.TemporaryDirectory() as tmp:
        led = Ledger.init(Path(tmp) / "d", name="runs")
        rng = random.Random(7)
        for size in (300, 200):
            led.add_batch(
                [
                    NewEntry(
                        content=f"memory {rng.random()} {'x' * rng.randint(0, 90)}".encode(),
                        type=rng.choice(["fact", "memory", "decision"]),
                        tier=rng.choice(["relationship", "committed", "ephemeral"]),
                        meta={"turn": rng.randint(0, 9)} if rng.random() < 0.7 else {},
                    )
                    for _ in range(size)
                ]
            )
        committed = [
            i for i, line in enumerate(led.iter_lines()) if b'"tier":"relationship"' in line
        ]
        redact(led, committed[40], "test")
        rotate(led)
        led.add_batch([NewEntry(content=f"after {i}".encode()) for i in range(200)])
        yield led, list(led.iter_lines())


def snapshot(report: Report, state: ChainState) -> tuple[Any, ...]:
    return (
        report,
        state.size,
        state.head,
        state.key,
        state.ts if report.ok else None,
        bytes(state.digests),
        bytes(state.flags),
        dict(state.pending),
        state.frontier.root(),
        state.trusted_seen,
        list(state.keys),
    )


def run_both(
    lines: list[bytes], monkeypatch: pytest.MonkeyPatch, **kwargs: Any
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    def verify(prepare: Callable[[], ChainState]) -> tuple[Any, ...]:
        state = prepare()
        return snapshot(verify_lines(lines, state=state, **kwargs), state)

    checkpoints = kwargs.pop("checkpoints", [])
    pins = {"trusted_key": kwargs.pop("trusted_key", None), "chain_id": kwargs.pop("chain_id")}

    def prepare() -> ChainState:
        state = ChainState(trusted_key=pins["trusted_key"], pinned_chain_id=pins["chain_id"])
        for cp in checkpoints:
            state.add_checkpoint(cp)
        return state

    in_runs = verify(prepare)
    with monkeypatch.context() as m:
        m.setattr(verify_module, "ordinary_bytes", lambda line: None)
        by_line = verify(prepare)
    return in_runs, by_line


MUTATIONS = ["none", "byte", "swap", "drop", "repeat", "absent", "altered", "cut"]


@settings(deadline=None, max_examples=60)
@given(
    mutation=st.sampled_from(MUTATIONS),
    where=st.integers(0, 10**6),
    byte=st.integers(0, 255),
    from_seq=st.sampled_from([0, 0, 1, 255, 256, 500, 10**6]),
    cp_sizes=st.lists(st.integers(1, 720), max_size=3),
    cp_wrong=st.booleans(),
    pin=st.sampled_from(["none", "right", "wrong"]),
)
def test_runs_and_lines_agree(
    chain: tuple[Ledger, list[bytes]],
    mutation: str,
    where: int,
    byte: int,
    from_seq: int,
    cp_sizes: list[int],
    cp_wrong: bool,
    pin: str,
) -> None:
    led, original = chain
    lines = list(original)
    n = len(lines)
    i = 1 + where % (n - 2)
    store = led.store
    blobs: Any = store
    if mutation == "byte":
        line = bytearray(lines[i])
        line[where % (len(line) - 1)] = byte
        lines[i] = bytes(line)
    elif mutation == "swap":
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif mutation == "drop":
        del lines[i]
    elif mutation == "repeat":
        lines.insert(i, lines[i])
    elif mutation in ("absent", "altered"):
        target = b3(b"")
        for k in range(i, n):
            if b'"content":"b3:' in lines[k]:
                target = "b3:" + lines[k].split(b'"content":"b3:')[1][:64].decode()
                break

        def getter(content_hash: str) -> bytes | None:
            data = store.raw(content_hash)
            if content_hash != target or data is None:
                return data
            return None if mutation == "absent" else data + b"!"

        blobs = getter
    elif mutation == "cut":
        lines[-1] = lines[-1][: where % len(lines[-1])]
    chain_id = b3(original[0][:-1])
    checkpoints = []
    signer = led.signer()
    for size in cp_sizes:
        leaves = [BLAKE3.leaf(line[:-1]) for line in original[:size]]
        root = root_of(BLAKE3, leaves)
        if cp_wrong:
            root = bytes(32)
        checkpoints.append(make_checkpoint(chain_id, size, root, signer))
    in_runs, by_line = run_both(
        lines,
        pytest.MonkeyPatch(),
        blobs=blobs,
        from_seq=from_seq,
        checkpoints=checkpoints,
        trusted_key=None
        if pin == "none"
        else signer.key_id
        if pin == "right"
        else "ed25519:" + "00" * 32,
        chain_id=None if pin == "none" else chain_id if pin == "right" else b3(b"other"),
    )
    assert in_runs == by_line


def test_the_chain_is_verified_in_runs(
    chain: tuple[Ledger, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above is not empty: most of the chain goes as Runs, and it verifies."""
    _, lines = chain
    pieces = verify_module.check_chunk([line[:-1] for line in lines[:256]], 0, 0, None)
    runs = [p for p in pieces if isinstance(p, verify_module.Run)]
    assert runs and sum(r.entries for r in runs) >= 250
    in_runs, by_line = run_both(lines, monkeypatch, chain_id=None)
    assert in_runs[0].ok and in_runs == by_line


@pytest.mark.parametrize("tweak", ["seq", "head", "ts", "key", "trusted"])
def test_how_a_run_follows_the_chain_is_checked_as_its_first_line(
    chain: tuple[Ledger, list[bytes]], monkeypatch: pytest.MonkeyPatch, tweak: str
) -> None:
    """The checks of a run's first line against the state before it (steps 4-7), which
    verify_lines cannot reach with a chain that is not re-signed: the same failure, message
    and state as its lines applied one by one."""
    _, lines = chain
    stripped = [line[:-1] for line in lines]
    prefix = 299 if tweak == "seq" else 300
    pieces = verify_module.check_chunk(stripped[300:556], 300, 0, None)
    assert isinstance(pieces[0], verify_module.Run)
    with monkeypatch.context() as m:
        m.setattr(verify_module, "ordinary_bytes", lambda line: None)
        one_by_one = verify_module.check_chunk(stripped[300:556], 300, 0, None)

    def state() -> ChainState:
        s = ChainState(trusted_key="ed25519:" + "11" * 32 if tweak == "trusted" else None)
        verify_lines(lines[:prefix], state=s)
        if tweak == "head":
            s.head = b3(b"another line")
        elif tweak == "ts":
            s.ts = "2999-01-01T00:00:00.000000Z"
        elif tweak == "key":
            s.key = "ed25519:" + "22" * 32
        elif tweak == "trusted":
            s.trusted_key = s.key
        return s

    a, b = state(), state()
    failure_a = next((f for p in pieces if (f := a.apply(p)) is not None), None)
    failure_b = next((f for p in one_by_one if (f := b.apply(p)) is not None), None)
    assert failure_a == failure_b
    if tweak == "trusted":
        assert failure_a is None and a.trusted_seen and b.trusted_seen
    else:
        assert (
            failure_a is not None
            and failure_a.step == {"seq": 4, "head": 5, "ts": 6, "key": 7}[tweak]
        )
    report = verify_module.report_of
    assert snapshot(report(a, failure_a, 0, 0, False), a) == snapshot(
        report(b, failure_b, 0, 0, False), b
    )


@pytest.mark.parametrize("through", ["libsodium", "binding"])
def test_signatures_checked_in_a_batch(monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    """failed_signatures names exactly the jobs that fail, through libsodium directly or
    through PyNaCl's binding (where its compiled module is not at hand)."""
    from memory_chain.chain.format import keys
    from memory_chain.chain.format.keys import Signer, failed_signatures

    signer = Signer(bytes(range(32)))
    jobs = []
    for i in range(6):
        message = f"message {i}".encode() * (i + 1)
        jobs.append((signer.public, message, bytes.fromhex(signer.sign(message))))
    jobs[1] = (jobs[1][0], jobs[1][1] + b"!", jobs[1][2])  # message changed
    jobs[3] = (jobs[3][0], jobs[3][1], bytes(64))  # signature of zeros
    jobs[4] = (jobs[4][0][:31], jobs[4][1], jobs[4][2])  # a short key
    failed_signatures([])  # loads PyNaCl
    if through == "binding":
        monkeypatch.setattr(keys, "_lib", None)
    assert failed_signatures(jobs) == [1, 3, 4]
    assert failed_signatures(jobs[:1] + jobs[2:3] + jobs[5:]) == []


@pytest.mark.parametrize("through", ["libsodium", "binding"])
def test_one_key_signatures(monkeypatch: pytest.MonkeyPatch, through: str) -> None:
    """failed_with_key (a run's signed messages, one key) fails when any one fails, or is
    shorter than a signature, through libsodium directly or through PyNaCl's binding."""
    from memory_chain.chain.format import keys
    from memory_chain.chain.format.keys import Signer, failed_signatures, failed_with_key

    signer = Signer(bytes(range(32)))
    messages = [f"message {i}".encode() * (i + 1) for i in range(5)]
    signed = [bytes.fromhex(signer.sign(m)) + m for m in messages]
    failed_signatures([])  # loads PyNaCl
    if through == "binding":
        monkeypatch.setattr(keys, "_lib", None)
    assert not failed_with_key(signer.public, signed)
    assert not failed_with_key(signer.public, [])
    for i in range(5):
        assert failed_with_key(signer.public, [*signed[:i], signed[i] + b"!", *signed[i + 1 :]])
    assert failed_with_key(signer.public, [*signed[:2], signed[2][:63], *signed[3:]])
    assert failed_with_key(signer.public[:31], signed)
    assert failed_with_key(Signer(bytes(32)).public, signed)


def test_blobs_checked_together_as_one_by_one(chain: tuple[Ledger, list[bytes]]) -> None:
    """ContentStore.check_digests answers for each digest what a fresh store's
    check_digest answers alone: in order, out of order, absent, altered, repeated."""
    from memory_chain.chain.content.store import ContentStore

    led, lines = chain
    digests = [
        bytes.fromhex(line.split(b'"content":"b3:')[1][:64].decode())
        for line in lines
        if b'"content":"b3:' in line
    ]
    rng = random.Random(3)
    shuffled = rng.sample(digests, len(digests))
    unknown = [bytes([i]) * 32 for i in range(3)]
    mixed = digests[:50] + unknown[:1] + digests[50:90] + digests[10:20] + unknown[1:]
    for order in (digests, shuffled, mixed):
        alone = [ContentStore(led.store.root).check_digest(d) for d in order]
        together = ContentStore(led.store.root).check_digests(order)
        assert together == alone
        assert all(size == -1 for d, size in zip(order, together, strict=True) if d in unknown)
        # with the sizes entries name (verify's runs): the same answers, whatever the sizes
        named = [max(size, 0) for size in alone]
        for sizes in (named, [size + 1 for size in named], [*named[:5], 7, *named[6:]]):
            assert ContentStore(led.store.root).check_digests(order, sizes) == alone
    sizes = ContentStore(led.store.root).check_digests(digests)
    assert sum(size >= 0 for size in sizes) >= len(digests) - 2  # all but the redacted one
    with tempfile.TemporaryDirectory() as tmp:  # one blob's bytes altered in its pack
        root = Path(tmp) / "content"
        shutil.copytree(led.store.root, root)
        victim = digests[30]
        for pack in sorted((root / "packs").iterdir()):
            data = bytearray(pack.read_bytes())
            at = data.find(b"L" + victim)
            if at >= 0:
                data[at + 37] ^= 1
                pack.write_bytes(bytes(data))
                break
        alone = [ContentStore(root).check_digest(d) for d in digests]
        assert ContentStore(root).check_digests(digests) == alone
        assert alone[30] == -2  # ALTERED
        named = [max(size, 0) for size in alone]
        named[30] = ContentStore(led.store.root).check_digest(victim)  # the size it had
        assert ContentStore(root).check_digests(digests, named) == alone


def test_blobs_in_order_are_checked_together(chain: tuple[Ledger, list[bytes]]) -> None:
    """The stretch check takes blobs stored one after the other at the sizes given, and
    only those: any byte of a record changed (state, digest, either length, the blob)
    makes it answer 0, and check_digests finds what is wrong blob by blob."""
    from memory_chain.chain.content.store import ContentStore

    led, lines = chain
    store = ContentStore(led.store.root)
    digests = [
        bytes.fromhex(line.split(b'"content":"b3:')[1][:64].decode())
        for line in lines[1:41]
        if b'"content":"b3:' in line
    ]
    sizes = store.check_digests(digests[:1])
    assert sizes[0] >= 0
    rest = [store.check_digest(d) for d in digests[1:]]
    fresh = ContentStore(led.store.root)
    assert fresh.check_digests(digests[:1]) == sizes  # the window read, the cursor after it
    assert fresh._check_in_order(digests[1:], rest) == len(rest)
    pack = sorted((Path(led.store.root) / "packs").glob("*.pack"))[0]
    data = pack.read_bytes()
    second = data.find(b"L" + digests[2])
    assert second > 0
    for offset in (0, 1, 33, 36, 37, 37 + rest[1] - 1, 37 + rest[1], 37 + rest[1] + 3):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "content"
            shutil.copytree(led.store.root, root)
            changed = bytearray(data)
            changed[second + offset] ^= 0x20
            (root / "packs" / pack.name).write_bytes(bytes(changed))
            bent = ContentStore(root)
            bent.check_digests(digests[:1])
            assert bent._check_in_order(digests[1:], rest) == 0, offset
            one_by_one = [ContentStore(root).check_digest(d) for d in digests]
            assert ContentStore(root).check_digests(digests, [sizes[0], *rest]) == one_by_one


@pytest.mark.parametrize("tail", [0, 1, 40])
def test_verify_chunks_as_verify_lines(chain: tuple[Ledger, list[bytes]], tail: int) -> None:
    """Ledger.line_chunks through verify_chunks (what verify runs in one process) gives
    verify_lines' report over iter_lines, a torn last line included."""
    from memory_chain.chain.verify.lines import verify_chunks

    led, _ = chain
    with tempfile.TemporaryDirectory() as tmp:
        data = led.layout.chain.read_bytes()
        copy = Ledger.init(Path(tmp) / "d", name="copy")
        path = copy.layout.chain
        path.write_bytes(data + (b'{"seq":' * 40)[:tail])
        report = verify_chunks(copy.line_chunks(), blobs=led.store)
        assert report == verify_lines(copy.iter_lines(), blobs=led.store)
        assert report.torn_tail == tail and report.ok is (report.failure is None)
        assert list(copy.iter_lines()) == data.splitlines(keepends=True) + (
            [(b'{"seq":' * 40)[:tail]] if tail else []
        )
        seen: list[int] = []
        list(copy.line_chunks(advance=seen.append))
        assert sum(seen) == len(data) + tail

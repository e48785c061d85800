"""verify_parallel gives verify_lines' verdict however the chain is cut into chunks."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from conftest import _AMBIENT
from helpers.blobs import delete_blob

from memory_chain.chain.format.errors import ChainStateError, OperationalError
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.lifecycle.rotate import rotate
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.chain.verify import parallel
from memory_chain.chain.verify.lines import Report, check_lines, verify_lines
from memory_chain.chain.verify.parallel import _chunks_of_file, _pack, _unpack, verify_parallel


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """25 lines: contents, a rotation at seq 8 and a redaction at seq 15 of seq 3."""
    root = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as mp:
        for name in _AMBIENT:
            mp.delenv(name, raising=False)
        mp.setenv("HOME", str(root / "home"))
        ledger = Ledger.init(root / "chain", name="test-agent")
        for i in range(24):
            if i == 7:
                rotate(ledger)
            elif i == 14:
                redact(ledger, 3, "test")
            else:
                ledger.add(NewEntry(f"memory {i}".encode(), tier="ephemeral"))
        ledger.close()
    return root / "chain"


@pytest.fixture
def ledger(built: Path, tmp_path: Path) -> Ledger:
    """A copy of the built chain (tests delete blobs)."""
    shutil.copytree(built, tmp_path / "chain")
    return Ledger(tmp_path / "chain")


@pytest.fixture
def history(ledger: Ledger) -> list[bytes]:
    return list(ledger.iter_lines())


class _Deferred(Future[Any]):
    """A future that runs its call in this process when its result is asked for."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__()
        self._call = call

    def result(self, timeout: float | None = None) -> Any:
        if not super().done():
            self.set_result(self._call())
        return super().result(timeout)


class _InlinePool:
    """A stand-in for ProcessPoolExecutor that runs chunks in this process, late.

    Tests of how chunks are cut run hundreds of verifications: without
    starting processes for each. A chunk "runs" until its result is asked
    for, so the main process checks the chunks in between itself, as it
    does while real workers are busy. The hand-over itself (pickling,
    worker state) is tested with real pools below and in test_edges.
    """

    def __init__(self, workers: int, *, initializer: Any, initargs: Any, **_: Any) -> None:
        initializer(*initargs)

    def __enter__(self) -> _InlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        return _Deferred(lambda: fn(*args))


@pytest.fixture
def inline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", _InlinePool)


def _damaged(ledger: Ledger, lines: list[bytes], damage: str) -> list[bytes]:
    lines = list(lines)
    if damage == "edit":
        lines[13] = lines[13].replace(b"memory", b"memorx", 1)
    elif damage == "swap":
        lines[9], lines[10] = lines[10], lines[9]
    elif damage == "drop":
        del lines[12]
    elif damage == "duplicate":
        lines.insert(6, lines[5])
    elif damage == "empty-line":
        lines.insert(17, b"\n")
    elif damage == "long-line":
        lines.insert(20, b"x" * 20_000 + b"\n")
    elif damage == "torn":
        lines.append(b'{"content":')
    elif damage == "torn-long":
        lines.append(b"y" * 9_000)
    elif damage == "only-torn":
        lines = [b'{"seq":0']
    elif damage == "empty":
        lines = []
    elif damage == "delete-blob":
        for line in lines[1:]:
            content = line.split(b'"content":"', 1)[1].split(b'"', 1)[0].decode()
            delete_blob(ledger.store, content)
            break
    elif damage == "delete-late-blob":
        content = lines[22].split(b'"content":"', 1)[1].split(b'"', 1)[0].decode()
        delete_blob(ledger.store, content)
    return lines


DAMAGES = [
    "none",
    "edit",
    "swap",
    "drop",
    "duplicate",
    "empty-line",
    "long-line",
    "torn",
    "torn-long",
    "only-torn",
    "empty",
    "delete-blob",
    "delete-late-blob",
]


def _sequential(ledger: Ledger, lines: list[bytes], from_seq: int) -> Report:
    return verify_lines(iter(lines), blobs=ledger.store.raw, from_seq=from_seq)


@pytest.mark.parametrize(
    ("damage", "from_seq"), [(d, 0) for d in DAMAGES] + [(d, 11) for d in ("none", "edit", "torn")]
)
def test_file_chunks_of_any_size_give_the_sequential_verdict(
    ledger: Ledger, history: list[bytes], tmp_path: Path, damage: str, from_seq: int, inline: None
) -> None:
    """Blocks smaller than a line, cut mid-line, ending exactly at a newline, or whole."""
    lines = _damaged(ledger, history, damage)
    chain = tmp_path / "chain.jsonl"
    data = b"".join(lines)
    chain.write_bytes(data)
    want = _sequential(ledger, lines, from_seq)
    assert want.ok == (damage in ("none", "torn", "torn-long")), want
    first = len(lines[0]) if lines else 1
    sizes = {1, 7, first - 1, first, first + 1, 2 * first, 3 * first + 5, 4096, len(data) + 1}
    for size in sorted(s for s in sizes if s > 0):
        got = verify_parallel(
            chain,
            content_root=ledger.layout.content,
            workers=2,
            from_seq=from_seq,
            chunk_bytes=size,
        )
        assert want == got, size


@pytest.mark.parametrize("damage", DAMAGES)
def test_line_chunks_of_any_size_give_the_sequential_verdict(
    ledger: Ledger, history: list[bytes], damage: str, inline: None
) -> None:
    lines = _damaged(ledger, history, damage)
    want = _sequential(ledger, lines, 0)
    for size in (1, 2, 3, 4, 7, 100):
        got = verify_parallel(
            iter(lines), content_root=ledger.layout.content, workers=2, chunk_lines=size
        )
        assert want == got, size


@pytest.mark.parametrize(
    "odd",
    [
        [b"\n", b"a\nb\n"],  # a newline inside a caller's line
        [b"unterminated", b"\n"],  # an unterminated line that is not the last
        [b"a", b"b", b"c"],  # several of them
    ],
)
def test_odd_caller_iterables_give_the_sequential_verdict(
    ledger: Ledger, history: list[bytes], odd: list[bytes], inline: None
) -> None:
    """Lines that no file split on newlines yields are still judged as verify_lines does."""
    for at in (0, 5, len(history)):
        lines = history[:at] + odd + history[at:]
        want = _sequential(ledger, lines, 0)
        for size in (1, 4, 100):
            got = verify_parallel(
                iter(lines), content_root=ledger.layout.content, workers=2, chunk_lines=size
            )
            assert want == got, (at, size)


@pytest.mark.parametrize("damage", ["none", "edit", "long-line", "torn", "delete-late-blob"])
def test_worker_processes_give_the_sequential_verdict(
    ledger: Ledger, history: list[bytes], tmp_path: Path, damage: str
) -> None:
    """The same through real worker processes, from a file and from lines."""
    lines = _damaged(ledger, history, damage)
    chain = tmp_path / "chain.jsonl"
    chain.write_bytes(b"".join(lines))
    want = _sequential(ledger, lines, 0)
    root = ledger.layout.content
    assert want == verify_parallel(chain, content_root=root, workers=2, chunk_bytes=1500)
    assert want == verify_parallel(iter(lines), content_root=root, workers=2, chunk_lines=3)


def test_a_missing_chain_file_is_a_chain_state_error(tmp_path: Path) -> None:
    with pytest.raises(ChainStateError, match="is missing"):
        verify_parallel(tmp_path / "chain.jsonl", content_root=None, workers=2)


def test_the_file_is_read_up_to_its_size_when_opened(ledger: Ledger, history: list[bytes]) -> None:
    """Lines appended while verifying are not read (as Ledger.iter_lines)."""
    with ledger.layout.chain.open("rb") as f:
        chunks = _chunks_of_file(f, 1000, 2)
        first = next(chunks)
        ledger.add(NewEntry(b"appended while verifying"))
        got = [first, *chunks]
    assert b"".join(history) == b"".join(c for c, _, _, _ in got if isinstance(c, bytes))
    assert len(history) == sum(n for _, n, _, _ in got)
    assert [o for _, _, _, o in got] == [sum(len(c) for c, *_ in got[:i]) for i in range(len(got))]


def test_a_file_changed_under_the_workers_is_an_error(ledger: Ledger, tmp_path: Path) -> None:
    """A worker reads its range itself: it must find the lines the main process counted."""
    chain = tmp_path / "chain.jsonl"
    data = b"".join(ledger.iter_lines())
    for changed in (data[:-100], data.replace(b"\n", b" ", 3)):
        chain.write_bytes(data)
        with chain.open("rb") as f:
            parallel._init_worker(None, f.fileno())
            chain.write_bytes(changed)  # same inode: the descriptor sees it
            with pytest.raises(OperationalError, match="changed while"):
                parallel._work(parallel.Range(0, len(data), data.count(b"\n")), 0, 0)


def test_packing_round_trips(ledger: Ledger, history: list[bytes]) -> None:
    """Columns, constant columns, counted seqs and linked prevs unpack to the same results."""
    lines = [raw[:-1] for raw in _damaged(ledger, history, "none")]
    variants = [
        lines,
        lines[:1],
        lines[5:6],
        lines[3:9],
        lines[::2],
        lines[::-1],
        [lines[4]] * 3,
        [b"not json", *lines[2:5], b"", b"{}"],
    ]
    for chunk in variants:
        results = check_lines(chunk, ledger.store.raw)
        for start in (0, 2, 3, 100):
            assert results == list(_unpack(_pack(results, start), start)), (chunk, start)


def test_the_main_process_checks_chunks_while_workers_are_busy(
    ledger: Ledger, history: list[bytes], inline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"worker": 0, "main": 0}
    work, check = parallel._work, parallel.check_chunk

    def counted_work(*args: Any) -> Any:
        calls["worker"] += 1
        calls["main"] -= 1  # its check_chunk below is not the main process's
        return work(*args)

    def counted_check(*args: Any) -> Any:
        calls["main"] += 1
        return check(*args)

    monkeypatch.setattr(parallel, "_work", counted_work)
    monkeypatch.setattr(parallel, "check_chunk", counted_check)
    root = ledger.layout.content
    assert verify_parallel(iter(history), content_root=root, workers=3, chunk_lines=2).ok
    assert calls["worker"] > 0 and calls["main"] > 0
    assert calls["worker"] + calls["main"] == 13
    calls.update(worker=0, main=0)
    assert verify_parallel(iter(history), content_root=root, workers=1, chunk_lines=2).ok
    assert calls == {"worker": 0, "main": 13}

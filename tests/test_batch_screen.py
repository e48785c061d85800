"""A long batch's secret screen runs in a forked child while the parent signs (issue 27).

chain/store/screen.py: the parent writes nothing of a chunk before the
child's verdict on it, reports the first item that fails any check with the
message the screen gives in the parent, and screens by itself whenever the
child cannot answer. Each behaviour is compared with the batch screened in
the parent alone (Screen.fork made to return None).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from memory_chain.chain.audit.verify_ledger import verify_ledger
from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store import screen
from memory_chain.chain.store.ledger import SCREEN_BESIDE, Ledger

SECRET = "the staging db password is Zq8#mK2vLp9 for now"


def _items(count: int, **odd: str) -> list[NewEntry]:
    """``count`` plain memories; ``odd`` maps a 1-based position ("at700") to its text."""
    out = []
    for n in range(1, count + 1):
        text = odd.get(f"at{n}", f"note {n}: the nightly build runs the lint step first")
        out.append(NewEntry(content=text.encode(), meta={"session": f"s{n // 50}"}))
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".jsonl", ".pack")
    }


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The children forked: (chunk size, pid) each."""
    seen: list[tuple[int, int]] = []
    fork = screen.Screen.fork.__func__  # type: ignore[attr-defined]

    def counted(cls: Any, items: Any) -> screen.Screen | None:
        child = fork(cls, items)
        if child is not None:
            seen.append((len(items), child.pid))
        return child

    monkeypatch.setattr(screen.Screen, "fork", classmethod(counted))
    return seen


def _in_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(screen.Screen, "fork", classmethod(lambda cls, items: None))


def _error(led: Ledger, items: list[NewEntry], stream: bool = False) -> InputError:
    with pytest.raises(InputError) as caught:
        if stream:
            led.add_stream(iter(items), chunk=SCREEN_BESIDE)
        else:
            led.add_batch(items)
    return caught.value


def test_a_long_batch_is_screened_beside_and_added(
    ledger: Ledger, forks: list[tuple[int, int]]
) -> None:
    appended = ledger.add_batch(_items(SCREEN_BESIDE + 100))
    assert [size for size, _ in forks] == [SCREEN_BESIDE + 100]
    assert [a.seq for a in appended] == list(range(1, SCREEN_BESIDE + 101))
    assert verify_ledger(ledger, incremental=False).ok
    # a short batch is screened in the parent: a fork would cost more than it saves
    ledger.add_batch(_items(10))
    assert len(forks) == 1


def test_add_stream_forks_a_child_per_long_chunk(
    ledger: Ledger, forks: list[tuple[int, int]]
) -> None:
    ledger.add_stream(iter(_items(2 * SCREEN_BESIDE + 7)), chunk=SCREEN_BESIDE)
    assert [size for size, _ in forks] == [SCREEN_BESIDE, SCREEN_BESIDE]  # 7 in the parent
    assert verify_ledger(ledger, incremental=False).ok


@pytest.mark.parametrize("stream", [False, True], ids=["add_batch", "add_stream"])
def test_a_secret_stops_the_batch_as_in_the_parent(
    data_dir: Path, forks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """The same error, the chain untouched; add_batch writes no blob at all."""
    items = _items(SCREEN_BESIDE + 300, at700=SECRET)
    led = Ledger.init(data_dir, name="screen")
    before = _files(data_dir)

    def not_here(*args: Any) -> None:
        raise AssertionError("the parent screened: the child's verdict was lost")

    with monkeypatch.context() as m:
        m.setattr(screen, "_screen", not_here)
        beside = _error(led, items, stream)
    assert forks, "the screen ran in a child"
    assert beside.message.startswith("batch item 700: content looks like it holds a secret")
    after = _files(data_dir)
    assert after["chain.jsonl"] == before["chain.jsonl"]
    if not stream:
        assert after == before  # nothing written before the verdict
    _in_parent(monkeypatch)
    alone = _error(led, items, stream)
    assert (type(beside), beside.message, beside.hint) == (type(alone), alone.message, alone.hint)


@pytest.mark.parametrize(
    ("secret_at", "bad_at", "reported"),
    [(550, 600, 550), (650, 600, 600), (600, 600, 600)],
    ids=["secret first", "bad meta first", "one item, both"],
)
def test_the_first_item_that_fails_any_check_is_reported(
    data_dir: Path,
    forks: list[tuple[int, int]],
    monkeypatch: pytest.MonkeyPatch,
    secret_at: int,
    bad_at: int,
    reported: int,
) -> None:
    items = _items(SCREEN_BESIDE + 300, **{f"at{secret_at}": SECRET})
    bad = items[bad_at - 1]
    items[bad_at - 1] = NewEntry(content=bad.content, meta={"Bad Key!": 1})
    led = Ledger.init(data_dir, name="order")
    for stream in (False, True):
        beside = _error(led, items, stream)
        assert beside.message.startswith(f"batch item {reported}: "), beside.message
        with monkeypatch.context() as m:
            m.setattr(screen.Screen, "fork", classmethod(lambda cls, items: None))
            alone = _error(led, items, stream)
        assert (type(beside), beside.message) == (type(alone), alone.message)


def test_a_child_that_dies_leaves_the_screen_to_the_parent(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screen, "_child", lambda items, answer: os._exit(3))
    error = _error(ledger, _items(SCREEN_BESIDE + 10, at400=SECRET))
    assert error.message.startswith("batch item 400: content looks like it holds a secret")
    ledger.add_batch(_items(SCREEN_BESIDE + 10))
    assert verify_ledger(ledger, incremental=False).ok


def test_an_item_the_child_could_not_screen_is_screened_by_the_parent(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child stops at an item it could not read; the parent screens from there."""
    real = screen.screen_parts
    parent = os.getpid()
    calls = {"n": 0}

    def flaky(content: bytes, meta: bytes | None) -> Any:
        calls["n"] += 1
        if os.getpid() != parent and calls["n"] == 100:  # the child, at item 100
            raise MemoryError
        return real(content, meta)

    monkeypatch.setattr(screen, "screen_parts", flaky)
    error = _error(ledger, _items(SCREEN_BESIDE + 10, at300=SECRET))
    assert error.message.startswith("batch item 300: content looks like it holds a secret")


def test_no_child_is_forked_beside_other_threads(
    ledger: Ledger, forks: list[tuple[int, int]]
) -> None:
    """A fork copies the locks other threads hold: with a thread running, the parent
    screens by itself."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        ledger.add_batch(_items(SCREEN_BESIDE + 1))
    finally:
        stop.set()
        other.join()
    assert forks == []
    assert verify_ledger(ledger, incremental=False).ok


def test_the_child_holds_none_of_the_parents_files(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """It closes every descriptor but its pipe before it screens (it must not keep the
    chain's lock, nor the packs, open)."""
    report = tmp_path / "fds.txt"
    child = screen._child

    def recording(items: Any, answer: int) -> None:
        real_screen = screen.screen_parts

        def first(content: bytes, meta: bytes | None) -> Any:
            if not report.exists():
                fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
                fd = os.open(report, os.O_WRONLY | os.O_CREAT, 0o600)
                os.write(fd, " ".join(map(str, fds)).encode())
                os.close(fd)
            return real_screen(content, meta)

        screen.screen_parts = first  # type: ignore[assignment]
        child(items, answer)

    monkeypatch.setattr(screen, "_child", recording)
    ledger.add_batch(_items(SCREEN_BESIDE))
    fds = report.read_text().split()
    # the pipe, and the descriptor listdir itself had open, and nothing else
    assert len(fds) <= 2, fds


def test_the_parent_waits_for_every_child(ledger: Ledger, forks: list[tuple[int, int]]) -> None:
    ledger.add_batch(_items(SCREEN_BESIDE))
    ledger.add_stream(iter(_items(SCREEN_BESIDE + 1)), chunk=SCREEN_BESIDE)
    assert len(forks) == 2
    for _, pid in forks:
        with pytest.raises(ChildProcessError):  # reaped: no zombie is left behind
            os.waitpid(pid, os.WNOHANG)

"""The index as a cache of the chain: schema, incremental sync, rebuild, replaced chains."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
import warnings
from pathlib import Path

import pytest
from helpers.cli import Cli
from helpers.index import DAY, Clock, dump, snapshot
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory_chain.chain.format.entry import default_importance
from memory_chain.chain.format.errors import InputError, OperationalError
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.index.db import Index
from memory_chain.index.gc import collect, restore
from memory_chain.index.query import read_times
from memory_chain.index.schema import MIGRATIONS, applied_migrations
from memory_chain.index.sync import IndexWarning, estimate_tokens


def _add(ledger: Ledger, text: str, **kw: object) -> int:
    return ledger.add(NewEntry(content=text.encode(), **kw)).seq  # type: ignore[arg-type]


# -- schema ------------------------------------------------------------------------


def test_new_index_has_every_migration_and_plain_tables(ledger: Ledger) -> None:
    """A new memory.db records each named migration and holds plain, documented tables."""
    with Index.open(ledger.layout.root) as index:
        assert [name for name, _ in MIGRATIONS] == applied_migrations(index.conn)
    conn = sqlite3.connect(ledger.layout.root / "memory.db")  # any SQLite client
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"memories", "memories_fts", "usage", "state", "migrations"} <= tables
    assert 1 == conn.execute("SELECT count(*) FROM state").fetchone()[0]
    conn.close()


def test_index_open_does_not_import_sqlite_utils_when_up_to_date(ledger: Ledger) -> None:
    """sqlite_utils runs the migrations only: reopening an up-to-date index needs plain sqlite3."""
    import subprocess
    import sys

    Index.open(ledger.layout.root).close()
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory_chain.index.db import Index\n"
        f"Index.open(Path({str(ledger.layout.root)!r})).close()\n"
        "print('sqlite_utils' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "False" == out.stdout.strip()


def test_newer_schema_is_refused(ledger: Ledger) -> None:
    """A memory.db with a migration this version does not know is refused with a hint."""
    Index.open(ledger.layout.root).close()
    conn = sqlite3.connect(ledger.layout.root / "memory.db")
    conn.execute("INSERT INTO migrations VALUES ('9999_future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(OperationalError, match="newer memory-chain") as caught:
        Index.open(ledger.layout.root)
    assert caught.value.hint is not None


def test_damaged_db_is_moved_aside_and_rebuilt(ledger: Ledger) -> None:
    """A memory.db that is not a database is moved aside with a warning and rebuilt."""
    _add(ledger, "the cat is called Miso")
    (ledger.layout.root / "memory.db").write_bytes(b"this is not sqlite" * 100)
    with (
        pytest.warns(IndexWarning, match="could not be read"),
        Index.open(ledger.layout.root) as index,
    ):
        assert 1 == index.counts()["active"]
    assert list(ledger.layout.root.glob("memory.db.damaged-*"))


# -- rows ----------------------------------------------------------------------------


def test_rows_carry_the_entry(ledger: Ledger) -> None:
    """Each content entry becomes one row: fields from the line, text from its blob."""
    seq = _add(
        ledger, "Deploys go out on Tuesdays", type="fact", source="auto", meta={"session": "s9"}
    )
    entry = ledger.entry(seq)
    with Index.open(ledger.layout.root) as index:
        row = index.conn.execute(
            "SELECT seq, ts, type, tier, source, importance, content_hash, size, content, "
            "tokens, session, status FROM memories"
        ).fetchall()
    text = "Deploys go out on Tuesdays"
    assert [
        (
            seq,
            entry["ts"],
            "fact",
            "relationship",
            "auto",
            default_importance("fact", "relationship"),
            entry["content"],
            len(text),
            text,
            estimate_tokens(text),
            "s9",
            "active",
        )
    ] == row


def test_importance_given_at_add_is_indexed(ledger: Ledger) -> None:
    """--importance is kept in the signed entry as an integer and reaches the index."""
    a = _add(ledger, "explicit", importance=7)
    b = _add(ledger, "by default", type="identity", tier="ephemeral")
    assert (7, 30) == (ledger.entry(a)["importance"], ledger.entry(b)["importance"])
    with Index.open(ledger.layout.root) as index:
        got = index.conn.execute("SELECT seq, importance FROM memories ORDER BY seq").fetchall()
    assert [(a, 7), (b, default_importance("identity", "ephemeral"))] == got


def test_token_estimate_is_a_quarter_of_the_characters() -> None:
    """Tokens = ceil(code points / 4)."""
    assert [0, 1, 1, 2, 2] == [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)]
    assert 1 == estimate_tokens("☕é")


# -- sync ----------------------------------------------------------------------------


def test_add_by_another_process_is_synced_on_next_read(raw: Cli) -> None:
    """A memory added by another process after the index was built is found by the next search."""
    raw.ok("add", "the wifi password is on the fridge")
    assert raw.run("search", "wifi").out  # builds memory.db
    assert 0 == raw.run("add", "the kiwis ripen in March").code  # another process
    found = raw.run("search", "kiwis", "--json")
    assert (0, "") == (found.code, found.err)
    assert ["the kiwis ripen in March"] == [h["text"] for h in found.json()]


def test_incremental_sync_reads_only_new_lines(ledger: Ledger) -> None:
    """A reopen reads just the entries added since; nothing when the chain did not move."""
    _add(ledger, "one")
    with Index.open(ledger.layout.root) as index:
        assert (2, False) == (index.last_sync.added, index.last_sync.rebuilt)
    _add(ledger, "two")
    _add(ledger, "three")
    with Index.open(ledger.layout.root) as index:
        assert (2, False) == (index.last_sync.added, index.last_sync.rebuilt)
        assert 4 == index.state().size
    with Index.open(ledger.layout.root) as index:
        assert 0 == index.last_sync.added


def test_torn_tail_is_not_indexed(ledger: Ledger) -> None:
    """An unterminated last line (a writer mid-append) is left out until it is complete."""
    _add(ledger, "complete entry")
    with open(ledger.layout.chain, "ab") as f:
        f.write(b'{"content":"b3:')
    with Index.open(ledger.layout.root) as index:
        assert 2 == index.state().size


def test_replaced_chain_triggers_rebuild(ledger: Ledger, tmp_path: Path) -> None:
    """Another chain put in place of the indexed one is detected and the index rebuilt."""
    _add(ledger, "memory of the first chain")
    with Index.open(ledger.layout.root) as index:
        index.record_access([1])
    other = Ledger.init(tmp_path / "other", name="other-agent")
    _add(other, "memory of the second chain")
    _add(other, "and another")
    for name in ("chain.jsonl", "head.json", "config.json"):
        shutil.copy(other.layout.root / name, ledger.layout.root / name)
    shutil.rmtree(ledger.layout.content)
    shutil.copytree(other.layout.content, ledger.layout.content)
    with (
        pytest.warns(IndexWarning, match="replaced or rewritten"),
        Index.open(ledger.layout.root) as index,
    ):
        assert index.last_sync.rebuilt
        texts = [r[0] for r in index.conn.execute("SELECT content FROM memories ORDER BY seq")]
        assert ["memory of the second chain", "and another"] == texts
        assert "other-agent" == index.state().agent
        # usage of the first chain's entries is not inherited
        assert [] == index.conn.execute("SELECT * FROM usage").fetchall()
        assert 0 == index.max_access()


def test_rewritten_last_line_triggers_rebuild(ledger: Ledger) -> None:
    """A chain whose last indexed line changed (rewritten history) is re-read from scratch."""
    _add(ledger, "original text")
    Index.open(ledger.layout.root).close()
    data = ledger.layout.chain.read_bytes()
    ledger.layout.chain.write_bytes(data.replace(b'"importance":50', b'"importance":51'))
    with (
        pytest.warns(IndexWarning, match="no longer has the hash"),
        Index.open(ledger.layout.root) as index,
    ):
        assert [(51,)] == index.conn.execute("SELECT importance FROM memories").fetchall()


def test_truncated_chain_triggers_rebuild(ledger: Ledger) -> None:
    """A chain shorter than what the index read is rebuilt from what is there."""
    _add(ledger, "kept")
    keep = ledger.layout.chain.read_bytes()
    _add(ledger, "cut off later")
    Index.open(ledger.layout.root).close()
    ledger.layout.chain.write_bytes(keep)
    with pytest.warns(IndexWarning, match="shorter"), Index.open(ledger.layout.root) as index:
        assert [("kept",)] == index.conn.execute("SELECT content FROM memories").fetchall()


def test_unreadable_line_stops_the_index_with_a_warning(ledger: Ledger) -> None:
    """A line that is not an entry stops the sync before it, pointing at verify."""
    _add(ledger, "good")
    with open(ledger.layout.chain, "ab") as f:
        f.write(b"not json at all\n")
    with (
        pytest.warns(IndexWarning, match="memory-chain verify"),
        Index.open(ledger.layout.root) as index,
    ):
        assert 2 == index.state().size


def test_redaction_reaches_the_index_and_purges_the_text(ledger: Ledger) -> None:
    """After a redaction the next open marks the entry redacted and no copy of its text is left."""
    # A secret that got in (the gate refuses it unless overridden): redaction's case.
    seq = ledger.add(NewEntry(content=b"the password is zebra-hunter-42"), allow_secret=True).seq
    _add(ledger, "an unrelated memory")
    Index.open(ledger.layout.root).close()
    redact(ledger, seq, "secret")
    with Index.open(ledger.layout.root) as index:
        assert [("redacted", None, 0)] == index.conn.execute(
            "SELECT status, content, tokens FROM memories WHERE seq = ?", (seq,)
        ).fetchall()
    for path in ledger.layout.root.glob("memory.db*"):
        assert b"zebra" not in path.read_bytes(), path


def test_bm25_counts_the_same_rows_however_the_index_was_built(ledger: Ledger) -> None:
    """bm25's N is the memories with text, whether the index was synced entry by entry (a
    redaction withdraws a text from it) or rebuilt from the chain: FTS5's 'rebuild' also
    counted the redacted row, and the same search then scored differently."""
    from memory_chain.index.query import search
    from memory_chain.index.topk import fts_row_stats

    for text in ("staging runs on port 5433", "the staging database", "deploys on tuesday"):
        _add(ledger, text)
    Index.open(ledger.layout.root).close()
    redact(ledger, 2, "withdrawn")
    with Index.open(ledger.layout.root) as index:
        synced = fts_row_stats(index.conn, "memories_fts")
        scores = [(h.seq, h.score) for h in search(index, "staging port", record=False)]
        index.rebuild()
        assert fts_row_stats(index.conn, "memories_fts") == synced == (2, 4.0)
        again = [(h.seq, h.score) for h in search(index, "staging port", record=False)]
        assert again == scores


def test_reads_never_touch_the_chain(ledger: Ledger) -> None:
    """Opening, syncing and rebuilding the index leave chain.jsonl and content/ byte-identical."""
    _add(ledger, "a")
    _add(ledger, "b", tier="ephemeral")
    before = snapshot(ledger.layout.root)
    with Index.open(ledger.layout.root) as index:
        index.rebuild()
        index.sync()
    assert before == snapshot(ledger.layout.root)


# -- rebuild keeps usage and GC state ----------------------------------------------------


def test_rebuild_keeps_usage_and_gc_state(data_dir: Path) -> None:
    """Access counts, archive/expiry decisions and restores survive a rebuild and a deleted db."""
    clock = Clock()
    ledger = Ledger.init(data_dir, name="t", clock=clock)
    old = _add(ledger, "old and unimportant", importance=0)
    eph = _add(ledger, "short lived", tier="ephemeral")
    used = _add(ledger, "often used")
    clock.t += 40 * DAY
    with Index.open(data_dir, clock=clock) as index:
        index.record_access([used, used])
        index.record_access([used])
        collect(index)
        before = dump(index.conn)
        statuses = dict(index.conn.execute("SELECT seq, status FROM memories").fetchall())
        assert ("archived", "expired") == (statuses[old], statuses[eph])
        index.rebuild()
        assert before == dump(index.conn)
        restore(index, old)
        restored = dump(index.conn)
        index.rebuild()
        assert restored == dump(index.conn)


# -- property: rebuilt == incrementally maintained ------------------------------------

_WORDS = ["alpha", "beta", "gamma", "deploy", "tuesday", "pnpm", "café", "naïve", "日本"]

_op = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(["memory", "fact", "decision", "identity", "episode"]),
        st.sampled_from(["relationship", "ephemeral", "committed"]),
        st.none() | st.integers(0, 100),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
    ),
    st.tuples(st.just("batch"), st.integers(1, 4)),
    st.tuples(st.just("redact"), st.integers(0, 50)),
    st.tuples(st.just("sync")),
    st.tuples(st.just("access"), st.integers(0, 50)),
    st.tuples(st.just("gc"), st.integers(0, 60)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, min_size=1, max_size=14))
# the only memory redacted after a sync: FTS5 keeps a zero averages record, a rebuild none
@example([("add", "memory", "relationship", None, ["alpha"]), ("sync",), ("redact", 0)])
def test_rebuilt_index_equals_incremental(ops: list[tuple[object, ...]]) -> None:
    """Whatever the chain went through and however often it was synced, a rebuild gives the
    same index (rows, FTS terms, usage, state; the time of texts once read) as incremental
    maintenance."""
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("error", IndexWarning)
        clock = Clock()
        root = Path(tmp) / "d"
        ledger = Ledger.init(root, name="prop", clock=clock)
        index = Index.open(root, clock=clock)
        content: list[int] = []
        for op in ops:
            clock.t += 3_600_000_000
            if op[0] == "add":
                _, kind, tier, imp, words = op
                content.append(
                    _add(ledger, " ".join(words), type=kind, tier=tier, importance=imp)  # type: ignore[arg-type]
                )
            elif op[0] == "batch":
                n = int(op[1])  # type: ignore[call-overload]
                items = [NewEntry(content=f"batch {len(content)} {i}".encode()) for i in range(n)]
                content += [a.seq for a in ledger.add_batch(items)]
            elif op[0] == "redact" and content:
                seq = content[int(op[1]) % len(content)]  # type: ignore[call-overload]
                if ledger.entry(seq)["tier"] != "committed":
                    with contextlib.suppress(InputError):  # already redacted
                        redact(ledger, seq, "prop")
            elif op[0] == "sync":
                index.sync()
            elif op[0] == "access" and content:
                index.sync()
                index.record_access([content[int(op[1]) % len(content)]])  # type: ignore[call-overload]
            elif op[0] == "gc":
                clock.t += int(op[1]) * DAY  # type: ignore[call-overload]
                index.sync()
                collect(index)
        index.sync()
        read_times(index)  # a rebuild leaves the time of texts to the first dated query
        incremental = dump(index.conn)
        index.rebuild()
        read_times(index)
        assert incremental == dump(index.conn)
        index.close()
        ledger.close()

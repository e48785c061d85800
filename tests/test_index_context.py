"""Session-start context: integrity line first, pinned sections, budget, what never appears."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.blobs import alter_blob
from helpers.cli import Cli
from helpers.index import DAY, Clock, snapshot

from memory_chain.chain.content.store import ContentStore
from memory_chain.chain.lifecycle.redact import redact
from memory_chain.chain.store.ledger import Ledger, NewEntry
from memory_chain.index.context import build_context
from memory_chain.index.db import Index
from memory_chain.index.gc import collect
from memory_chain.index.integrity import check_chain, integrity_of, unchecked
from memory_chain.index.sync import estimate_tokens


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def chain(data_dir: Path, clock: Clock) -> Ledger:
    led = Ledger.init(data_dir, name="ctx-agent", clock=clock)
    led.add(NewEntry(content=b"Some fact about staging", type="fact"))  # 1
    led.add(NewEntry(content=b"I am the build assistant", type="identity"))  # 2
    led.add(NewEntry(content=b"Use pnpm, not npm", type="decision", tier="committed"))  # 3
    led.add(NewEntry(content=b"A draft decision", type="decision"))  # 4 (not committed)
    led.add(NewEntry(content=b"We promised weekly reports", type="commitment", tier="committed"))
    led.add(NewEntry(content=b"Short-lived note", tier="ephemeral"))  # 6
    led.add(NewEntry(content=b"The staging database is on port 5433", type="fact"))  # 7
    clock.t += DAY // 4
    return led


def _ctx(led: Ledger, clock: Clock, **kw: object) -> tuple[str, list[int]]:
    with Index.open(led.layout.root, clock=clock) as index:
        integrity = integrity_of(check_chain(led))
        ctx = build_context(index, integrity, **kw)  # type: ignore[arg-type]
    return ctx.markdown(), [i.hit.seq for i in ctx.items]


def test_integrity_line_then_identity_then_decisions_then_the_rest(
    chain: Ledger, clock: Clock
) -> None:
    """The block opens with the integrity line (verified, size, head); identity memories
    come first, committed decisions and commitments next, then the rest."""
    text, seqs = _ctx(chain, clock)
    lines = text.splitlines()
    head = check_chain(chain).head
    assert "# Memory context: ctx-agent" == lines[0]
    assert (
        f"> Integrity: verified (lines, signatures and content to seq 7). 8 entries, head {head}."
        == lines[2]
    )
    sections = [line for line in lines if line.startswith("## ")]
    assert ["## Identity", "## Decisions", "## Memories"] == sections
    assert [2, 5, 3] == seqs[:3]  # commitment (importance 85) before decision (80)
    assert {1, 4, 6, 7} == set(seqs[3:])
    assert "- Use pnpm, not npm (decision, seq 3, 2026-01-01)" in lines


def test_query_ranks_relevant_memories_first(chain: Ledger, clock: Clock) -> None:
    """With a query, the rest is ordered with text relevance too."""
    _, seqs = _ctx(chain, clock, query="staging database port")
    assert 7 == seqs[3]


def test_budget_is_kept(chain: Ledger, clock: Clock) -> None:
    """The block fits the budget; with a small budget pinned items come first and big ones
    are skipped for smaller ones."""
    chain.add(NewEntry(content=b"x " * 2000, type="identity", importance=100))  # 8: ~1000 tokens
    for budget in (2000, 400, 120, 90):
        with Index.open(chain.layout.root, clock=clock) as index:
            ctx = build_context(index, integrity_of(check_chain(chain)), max_tokens=budget)
        assert estimate_tokens(ctx.markdown()) <= budget
        assert ctx.used == estimate_tokens(ctx.markdown())
        seqs = [i.hit.seq for i in ctx.items]
        if budget < 1000:
            assert 8 not in seqs  # skipped: too big; smaller ones still taken
            assert 2 == seqs[0]


def test_header_is_shown_even_over_budget(chain: Ledger, clock: Clock) -> None:
    """A budget smaller than the integrity line still gets the integrity line, and no memory."""
    text, seqs = _ctx(chain, clock, max_tokens=5)
    assert "> Integrity: verified (lines, signatures and content to seq " in text
    assert [] == seqs


def test_archived_expired_and_redacted_never_appear(chain: Ledger, clock: Clock) -> None:
    """GC'd, expired and redacted memories are left out."""
    redact(chain, 4, "draft")
    clock.t += 60 * DAY
    with Index.open(chain.layout.root, clock=clock) as index:
        collect(index)
    text, seqs = _ctx(chain, clock)
    assert {4, 6}.isdisjoint(seqs)
    assert "draft" not in text and "Short-lived" not in text
    assert {2, 3, 5} <= set(seqs)


def test_failed_verification_is_loud_and_hides_later_entries(chain: Ledger, clock: Clock) -> None:
    """A chain that does not verify (a swapped blob at seq 3) is announced at the top, and no
    entry from seq 3 on is shown."""
    Index.open(chain.layout.root, clock=clock).close()
    alter_blob(chain.store, chain.entry(3)["content"], b"Use npm, not pnpm")
    text, seqs = _ctx(chain, clock)
    first = text.splitlines()[2]
    assert first.startswith("> **INTEGRITY FAILURE")
    assert "seq 3" in first and "content-mismatch" in first
    assert seqs and all(s < 3 for s in seqs)
    assert "pnpm" not in text.split("\n", 3)[3]


def test_unchecked_says_so_and_nothing_is_hidden(chain: Ledger, clock: Clock) -> None:
    """--no-verify: the header says the chain was not checked."""
    with Index.open(chain.layout.root, clock=clock) as index:
        s = index.state()
        ctx = build_context(index, unchecked(s.size, s.head, s.chain_id))
    assert "NOT CHECKED" in ctx.markdown().splitlines()[2]
    assert 7 == len(ctx.items)


def test_context_is_read_only(chain: Ledger, clock: Clock) -> None:
    """context records no access and leaves the chain byte-identical."""
    before = snapshot(chain.layout.root)
    _ctx(chain, clock)
    assert before == snapshot(chain.layout.root)
    with Index.open(chain.layout.root, clock=clock) as index:
        assert [] == index.conn.execute("SELECT * FROM usage").fetchall()


# -- the command ---------------------------------------------------------------------


def test_context_command(populated: Cli) -> None:
    """`memory-chain context` prints the markdown block; --json carries the same block."""
    out = populated.run("context")
    assert (0, "") == (out.code, out.err)
    assert re.match(
        r"# Memory context: test-agent\n\n> Integrity: verified "
        r"\(lines, signatures and content to seq 4\)\. 5 entries",
        out.out,
    )
    assert "- Use pnpm, not npm (decision, seq 1," in out.out
    data = populated.run("context", "--json").json()
    assert data["integrity"]["ok"] and data["tokens"] <= data["budget"] == 2000
    assert out.out == data["markdown"]


def test_context_command_fails_loudly(populated: Cli) -> None:
    """A line edited after a verified context: the incremental check sees the changed bytes,
    verifies in full, and fails: exit 1, the loud line first, nothing from the bad seq on."""
    populated.run("context")
    chain = populated.root / "chain.jsonl"
    lines = chain.read_bytes().split(b"\n")
    lines[3] = re.sub(
        rb'"importance":(\d+)', lambda m: b'"importance":%d' % (int(m[1]) ^ 1), lines[3]
    )
    chain.write_bytes(b"\n".join(lines))
    out = populated.run("context")
    assert 1 == out.code
    assert "INTEGRITY FAILURE" in out.out.splitlines()[2]
    assert "seq 3" in out.out.splitlines()[2]
    assert "Staging is on" not in out.out and "Check the port" not in out.out
    assert "Use pnpm" in out.out


def test_context_after_a_verified_point_sees_an_altered_blob(populated: Cli) -> None:
    """A blob swapped after its entry was verified is seen by the next `context` (its pack
    changed since it was hashed), as by `verify --full`; it was reported verified before."""
    populated.run("context")
    entry = populated.ok("show", "3", "--json").json()
    alter_blob(ContentStore(populated.root / "content"), entry["content"], b"Staging is on 9999")
    out = populated.run("context")
    assert 1 == out.code
    assert "INTEGRITY FAILURE" in out.out and "seq 3 (content-mismatch)" in out.out
    assert "Staging is on 9999" not in out.out
    full = populated.run("verify", "--full")
    assert 1 == full.code and "seq 3" in full.err and "content-mismatch" in full.err


@pytest.mark.parametrize("damage", ["packs deleted", "pack byte flipped"])
def test_context_and_doctor_see_lost_content(populated: Cli, damage: str) -> None:
    """Issue 22: with the packs deleted or a byte of one flipped after a verify, `context`
    prints no "Integrity: verified" and `doctor` fails the chain (both said ok before)."""
    populated.ok("verify")
    packs = sorted((populated.root / "content" / "packs").glob("*.pack"))
    if damage == "packs deleted":
        for pack in packs:
            pack.unlink()
    else:
        data = bytearray(packs[0].read_bytes())
        data[len(data) // 2] ^= 0x40
        packs[0].write_bytes(bytes(data))
    out = populated.run("context")
    assert 1 == out.code and "Integrity: verified" not in out.out
    assert "INTEGRITY FAILURE" in out.out
    doctor = populated.run("doctor")
    assert 1 == doctor.code
    assert re.search(r"^FAIL +chain: does not verify at seq \d+", doctor.out, re.M), doctor.out

"""Garbage collection (seed 001): archive what is no longer relevant, expire ephemera.

GC writes only the index (memories.status and the usage table); the chain
and its content are never touched, so an archived memory can be restored
at any time and every decision survives a rebuild.

For each active memory (age in days since its ts)::

    relevance = 0.30 * exp(-age_days / 7)
              + 0.40 * access_count / highest access_count in the index
              + 0.30 * importance / 100

- an ephemeral-tier memory expires once its lifetime (default 24 hours,
  config.json "index.ephemeral_ttl_hours" or --ttl-hours) has passed since
  it was created: age >= lifetime;
- otherwise it is archived when relevance < 0.2 and age > 30 days;
- the committed tier is never archived (and cannot be ephemeral).

A restored memory is given a fresh start: the lifetime and the 30 days are
counted from its restore, not its creation (relevance still uses its age).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from memory_chain.chain.format.errors import InputError

from .db import Index
from .settings import DAY_US, HOUR_US
from .sync import write_transaction

__all__ = [
    "GC_THRESHOLD",
    "MAX_AGE_DAYS",
    "Decision",
    "GcResult",
    "collect",
    "relevance",
    "restore",
    "should_archive",
]

GC_THRESHOLD: Final = 0.2
MAX_AGE_DAYS: Final = 30
MAX_AGE_US: Final = MAX_AGE_DAYS * DAY_US


def relevance(age_days: float, access: float, importance: int) -> float:
    """The seed's relevance; ``access`` is already normalised to 0..1."""
    return 0.30 * math.exp(-age_days / 7) + 0.40 * access + 0.30 * (importance / 100)


def should_archive(score: float, age_us: int, tier: str) -> bool:
    """relevance < 0.2 and age > 30 days (exactly 30 days is kept), never committed."""
    return tier != "committed" and score < GC_THRESHOLD and age_us > MAX_AGE_US


@dataclass(frozen=True, slots=True)
class Decision:
    seq: int
    action: str  # "archive" or "expire"
    type: str
    tier: str
    age_days: float
    relevance: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "action": self.action,
            "type": self.type,
            "tier": self.tier,
            "age_days": round(self.age_days, 3),
            "relevance": round(self.relevance, 6),
        }


@dataclass(frozen=True, slots=True)
class GcResult:
    decisions: list[Decision]
    dry_run: bool
    examined: int

    @property
    def archived(self) -> int:
        return sum(1 for d in self.decisions if d.action == "archive")

    @property
    def expired(self) -> int:
        return sum(1 for d in self.decisions if d.action == "expire")


def plan(index: Index, now: int, ttl_us: int) -> tuple[list[Decision], int]:
    """What GC would do at ``now``, and how many active memories it looked at."""
    top = index.max_access()
    decisions = []
    rows = index.conn.execute(
        "SELECT seq, type, tier, importance, access_count, created, "
        "max(created, coalesce(restored_at, 0)) FROM memories WHERE status = 'active' "
        "ORDER BY seq"
    ).fetchall()
    for seq, kind, tier, importance, count, created, since in rows:
        age_days = (now - created) / DAY_US
        score = relevance(age_days, count / top if top else 0.0, importance)
        if tier == "ephemeral" and now - since >= ttl_us:
            decisions.append(Decision(seq, "expire", kind, tier, age_days, score))
        elif should_archive(score, now - since, tier):
            decisions.append(Decision(seq, "archive", kind, tier, age_days, score))
    return decisions, len(rows)


def collect(index: Index, *, dry_run: bool = False, ttl_hours: float | None = None) -> GcResult:
    """Archive and expire memories as the rules above say (only report with ``dry_run``)."""
    index.flush()
    now = index.now()
    ttl_us = index.settings.ephemeral_ttl_us if ttl_hours is None else round(ttl_hours * HOUR_US)
    decisions, examined = plan(index, now, ttl_us)
    if not dry_run and decisions:
        _set_state(
            index,
            [(d.seq, "archived" if d.action == "archive" else "expired") for d in decisions],
            now,
        )
    return GcResult(decisions, dry_run, examined)


def _set_state(index: Index, changes: list[tuple[int, str]], now: int) -> None:
    conn = index.conn
    with write_transaction(conn):
        conn.executemany(
            "UPDATE memories SET status = ? WHERE seq = ? AND status = 'active'",
            [(state, seq) for seq, state in changes],
        )
        conn.executemany(
            "INSERT INTO usage (hash, seq, access_count, last_access, state, state_at) "
            "SELECT hash, seq, access_count, last_access, ?, ? FROM memories WHERE seq = ? "
            "ON CONFLICT (hash) DO UPDATE SET state = excluded.state, "
            "state_at = excluded.state_at",
            [(state, now, seq) for seq, state in changes],
        )


def restore(index: Index, seq: int | None) -> list[int]:
    """Make archived or expired memories active again (all of them when ``seq`` is None).

    Returns the seqs restored. Raises InputError for a seq the index does
    not hold as a memory, or a redacted one.
    """
    conn = index.conn
    now = index.now()
    cutoff = index.cutoff(now)
    due = (
        "(status IN ('archived', 'expired') OR (status = 'active' AND tier = 'ephemeral' "
        "AND max(created, coalesce(restored_at, 0)) <= ?))"
    )
    if seq is not None:
        row = conn.execute("SELECT status FROM memories WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            raise InputError(
                f"seq {seq} is not a memory in the index",
                hint="`memory-chain log` lists the entries; system entries cannot be restored",
            )
        if row[0] == "redacted":
            raise InputError(
                f"seq {seq} is redacted: its content is gone and it cannot be restored"
            )
        seqs = [
            r[0]
            for r in conn.execute(
                f"SELECT seq FROM memories WHERE seq = ? AND {due}", (seq, cutoff)
            )
        ]
    else:
        seqs = [r[0] for r in conn.execute(f"SELECT seq FROM memories WHERE {due}", (cutoff,))]
    if not seqs:
        return []
    with write_transaction(conn):
        conn.executemany(
            "UPDATE memories SET status = 'active', restored_at = ? WHERE seq = ?",
            [(now, s) for s in seqs],
        )
        conn.executemany(
            "INSERT INTO usage (hash, seq, access_count, last_access, state, state_at, "
            "restored_at) SELECT hash, seq, access_count, last_access, NULL, ?, ? "
            "FROM memories WHERE seq = ? ON CONFLICT (hash) DO UPDATE SET state = NULL, "
            "state_at = excluded.state_at, restored_at = excluded.restored_at",
            [(now, now, s) for s in seqs],
        )
    return seqs

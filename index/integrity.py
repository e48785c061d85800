"""The one place where the index asks whether the chain verifies.

`memory-chain context` calls ``check_chain`` before presenting anything.
The check is incremental: it resumes from the last verified point (the
verification cache, chain/verify/incremental.py) when the bytes verified then are
unchanged, so at session start it costs the entries added since: after this
program's own appends it reads only the last verified line, after any other
write one hash of the chain file (specs/FORMAT.md 13.2, 13.5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_chain.chain.format.values import Value

if TYPE_CHECKING:
    from memory_chain.chain.store.ledger import Ledger
    from memory_chain.chain.verify.lines import Report

__all__ = ["Integrity", "check_chain", "integrity_of", "no_chain", "unchecked"]


def check_chain(ledger: Ledger) -> Report:
    """Verify the chain of ``ledger`` (its pins, checkpoints and witness), incrementally."""
    from memory_chain.chain.audit.verify_ledger import verify_ledger

    return verify_ledger(ledger, incremental=True)


class Integrity(Value):
    """What a reader of the index is told about the chain behind it.

    ``trusted_below``: only entries with a lower seq may be presented as
    verified (the failing seq when verification failed; the verified size
    when it passed, so entries appended after the check are left out).
    None when the chain was not checked.
    """

    __slots__ = (
        "chain_id",
        "checked",
        "checked_what",
        "failure_seq",
        "head",
        "message",
        "ok",
        "reason",
        "size",
        "trusted_below",
    )
    checked: bool
    ok: bool
    size: int
    head: str | None
    chain_id: str | None
    trusted_below: int | None
    failure_seq: int | None
    reason: str | None
    message: str | None
    checked_what: str | None  # Report.level() of a passing verify

    def __init__(
        self,
        checked: bool,
        ok: bool,
        size: int,
        head: str | None,
        chain_id: str | None,
        trusted_below: int | None,
        failure_seq: int | None = None,
        reason: str | None = None,
        message: str | None = None,
        checked_what: str | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "checked", checked)
        set_(self, "ok", ok)
        set_(self, "size", size)
        set_(self, "head", head)
        set_(self, "chain_id", chain_id)
        set_(self, "trusted_below", trusted_below)
        set_(self, "failure_seq", failure_seq)
        set_(self, "reason", reason)
        set_(self, "message", message)
        set_(self, "checked_what", checked_what)

    def as_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "ok": self.ok,
            "size": self.size,
            "head": self.head,
            "chain_id": self.chain_id,
            "trusted_below": self.trusted_below,
            "checked_what": self.checked_what,
            "failure": None
            if self.failure_seq is None
            else {"seq": self.failure_seq, "reason": self.reason, "message": self.message},
        }


def integrity_of(report: Report) -> Integrity:
    if report.ok:
        return Integrity(
            True,
            True,
            report.size,
            report.head,
            report.chain_id,
            report.size,
            checked_what=report.level(),
        )
    f = report.failure
    seq = f.seq if f is not None else 0
    return Integrity(
        True,
        False,
        report.size,
        report.head,
        report.chain_id,
        seq,
        seq,
        f.reason if f is not None else "unknown",
        f.message if f is not None else "verification failed",
    )


def unchecked(size: int, head: str | None, chain_id: str | None) -> Integrity:
    """The chain was not verified (the caller asked not to): nothing is vouched for."""
    return Integrity(False, False, size, head, chain_id, None)


def no_chain() -> Integrity:
    """There is no chain yet (the data directory was never initialised): nothing is provable."""
    return Integrity(False, False, 0, None, None, None, reason="no-chain")

"""Redaction: record that an entry's content is withdrawn, then delete it.

The redaction entry names the target seq and its content hash and carries
a reason (stored in the chain, in clear: never put a secret in it). After
the entry is durable, the blob is deleted unless another live (unredacted)
entry holds the same content. The target's line stays, so the chain still
verifies; committed-tier content cannot be redacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..format.entry import CONTENT_TYPES, FORMAT_VERSION, default_importance
from ..format.errors import InputError
from ..format.secrets import check
from ..store.ledger import Appended, Ledger, self_checked

__all__ = ["Redacted", "redact"]


@dataclass(frozen=True, slots=True)
class Redacted:
    entry: Appended | None  # None when this call only finished an earlier redaction
    target: int
    content: str
    erased_in: list[str]  # where its records were zeroed, relative to content/ (FORMAT.md 6.1)
    blob_shared: bool

    @property
    def blob_removed(self) -> bool:
        return bool(self.erased_in)


def redact(ledger: Ledger, seq: int, reason: str) -> Redacted:
    """Redact the content of entry ``seq``. Raises InputError if not allowed."""
    reason = reason.strip()
    if not reason:
        raise InputError("a redaction needs a reason", hint="pass --reason TEXT")
    if len(reason) > 1000:
        raise InputError("the reason is over 1000 characters")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the reason is not valid UTF-8") from None
    # the reason is signed into the chain in clear, for good: the secret gate holds for it
    # as for content (an agent redacting a leaked key must not write the key again)
    check(reason, what="the reason", hint="say why in words, without the secret itself")
    signer = ledger.signer()
    with ledger.locked() as (fd, head):
        signer = ledger.check_signer(signer, head)
        if not 0 <= seq < head.size:
            raise InputError(f"no entry with seq {seq} (the chain has {head.size})")
        # One pass: the target, every redaction, and who holds which content.
        target: dict[str, Any] = {}
        redacted_by: dict[int, int] = {}
        holders: dict[str, list[int]] = {}
        for obj in ledger.entries():
            if obj["seq"] >= head.size:
                break
            if obj["seq"] == seq:
                target = obj
            if obj["type"] == "redaction":
                redacted_by[obj["meta"]["target"]] = obj["seq"]
            elif obj["content"] is not None:
                holders.setdefault(obj["content"], []).append(obj["seq"])
        if target["type"] not in CONTENT_TYPES:
            raise InputError(f"seq {seq} is a {target['type']} entry, which has no content")
        if target["tier"] == "committed":
            raise InputError(
                f"seq {seq} is in the committed tier, whose content cannot be redacted",
                hint="committed memories are permanent by design",
            )
        content = target["content"]
        shared = any(s != seq and s not in redacted_by for s in holders[content])
        if seq in redacted_by:
            if not shared and ledger.store.exists(content):
                removed = ledger.store.remove(content)
                return Redacted(None, seq, content, removed, shared)
            raise InputError(f"seq {seq} is already redacted (by seq {redacted_by[seq]})")
        obj = {
            "v": FORMAT_VERSION,
            "seq": head.size,
            "ts": ledger.next_ts(head),
            "type": "redaction",
            "tier": "committed",
            "source": "manual",
            "importance": default_importance("redaction", "committed"),
            "content": None,
            "size": 0,
            "prev": head.hash,
            "key": head.key,
            "meta": {"target": seq, "content": content, "reason": reason},
        }
        appended = ledger.append_line(fd, head, self_checked(obj, signer))
        removed = [] if shared else ledger.store.remove(content)
        return Redacted(appended, seq, content, removed, shared)

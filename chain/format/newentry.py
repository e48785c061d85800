"""A memory to add, and the checks it must pass before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .canonical import ValueDomainError, canonical, check_value
from .entry import CONTENT_TYPES, MAX_META_BYTES, MAX_META_DEPTH, ORIGINS, SOURCES, TIERS
from .errors import InputError
from .patterns import lazy

__all__ = ["NewEntry", "check_content", "check_secrets", "screen_parts", "secret_parts"]

_DAY: Final = lazy(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A memory to add, validated on construction."""

    content: bytes
    type: str = "memory"
    tier: str = "relationship"
    source: str = "manual"
    importance: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def check(self, max_content: int) -> None:
        """Raise InputError unless this entry can be signed and stored."""
        if self.type not in CONTENT_TYPES:
            raise InputError(
                f"unknown type {self.type!r}", hint=f"choose one of: {', '.join(CONTENT_TYPES)}"
            )
        if self.tier not in TIERS:
            raise InputError(
                f"unknown tier {self.tier!r}", hint=f"choose one of: {', '.join(TIERS)}"
            )
        if self.source not in SOURCES:
            raise InputError(
                f"unknown source {self.source!r}", hint=f"choose one of: {', '.join(SOURCES)}"
            )
        imp = self.importance
        if imp is not None and (type(imp) is not int or not 0 <= imp <= 100):
            raise InputError(f"importance must be an integer 0..100, not {imp!r}")
        check_content(self.content, max_content)
        if not isinstance(self.meta, dict):
            raise InputError("metadata must be a JSON object")
        try:
            check_value(self.meta, max_depth=MAX_META_DEPTH)
        except ValueDomainError as exc:
            raise InputError(f"invalid metadata: {exc}") from None
        if len(canonical(self.meta)) > MAX_META_BYTES:
            raise InputError(f"metadata exceeds {MAX_META_BYTES} bytes")
        origin = self.meta.get("origin")
        if origin is not None and origin not in ORIGINS:
            raise InputError(
                f"unknown origin {origin!r} in the metadata", hint=f"one of: {', '.join(ORIGINS)}"
            )
        approved = self.meta.get("approved")
        if approved is not None and not (isinstance(approved, str) and _DAY.fullmatch(approved)):
            raise InputError("metadata member approved is a date, YYYY-MM-DD")


def check_content(content: bytes, max_content: int) -> None:
    if not content:
        raise InputError("content is empty")
    if len(content) > max_content:
        raise InputError(
            f"content is {len(content)} bytes; the limit is {max_content}",
            hint="split it, or raise max_content_bytes in config.json",
        )
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"content is not valid UTF-8 (byte {exc.start})") from None
    if b"\x00" in content:
        raise InputError(f"content contains a NUL byte (byte {content.index(0)})")


ALLOW_SECRET_HINT = (
    "remove it (store where to find the secret, not the secret); "
    "--allow-secret commits it anyway, permanently"
)


def check_secrets(item: NewEntry, *, allow: bool) -> None:
    """The secret gate for the chain: content and metadata (SecretError, exit 2)."""
    if allow:
        return
    failed = screen_parts(*secret_parts(item))
    if failed is not None:
        raise failed


def secret_parts(item: NewEntry) -> tuple[bytes, bytes | None]:
    """What the secret gate reads of an entry: its content, and its metadata's canonical
    bytes when it has any."""
    return item.content, canonical(item.meta) if item.meta else None


def screen_parts(content: bytes, meta: bytes | None) -> InputError | None:
    """The SecretError check_secrets raises for these parts (secret_parts), or None."""
    from .secrets import SecretError  # its patterns: only when adding
    from .secrets import check as check_secret_text

    try:
        check_secret_text(content.decode("utf-8"), hint=ALLOW_SECRET_HINT)
        if meta is not None:
            check_secret_text(meta.decode("utf-8"), what="metadata", hint=ALLOW_SECRET_HINT)
    except SecretError as exc:
        return exc
    return None

"""The chain as capture and curation see it: is this text in it, and commit this text.

Dedup against the chain is by content hash (seed 001 section A4): the
index maps ``b3:<hex>`` of the content to its seq, whatever the entry's
state (a redacted memory is not committed again). Commits pass the
chain's own secret gate in Ledger.add, after an incremental verify: a
chain that does not verify is not written to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_chain.chain.audit.verify_ledger import require_verified
from memory_chain.chain.format.canonical import b3
from memory_chain.chain.format.config import Layout
from memory_chain.chain.format.keys import PassphraseSource
from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger

__all__ = ["ChainDoor"]


class ChainDoor:
    """A chain to look texts up in and commit texts to (None when there is no chain)."""

    def __init__(self, root: Path, passphrase: PassphraseSource | None = None) -> None:
        self.root = root
        self.ledger = Ledger(root, passphrase=passphrase)
        self._known: dict[str, int] | None = None

    @classmethod
    def open(cls, root: Path, passphrase: PassphraseSource | None = None) -> ChainDoor | None:
        if not Layout(root).chain.exists():
            return None
        return cls(root, passphrase)

    def _hashes(self) -> dict[str, int]:
        if self._known is None:
            from memory_chain.index.db import Index

            with Index.open(self.root) as index:
                rows = index.conn.execute(
                    "SELECT content_hash, MIN(seq) FROM memories GROUP BY content_hash"
                ).fetchall()
            self._known = {h: int(s) for h, s in rows}
        return self._known

    def find(self, text: str) -> int | None:
        """The seq of an entry whose content is exactly ``text`` (UTF-8), else None."""
        return self._hashes().get(b3(text.encode("utf-8")))

    def commit(self, text: str, *, type_: str, source: str, meta: dict[str, Any]) -> int:
        """Add ``text`` as a committed entry; return its seq (the existing one if present)."""
        return self.commit_many([(text, type_, meta)], source=source)[0]

    def commit_many(
        self, texts: list[tuple[str, str, dict[str, Any]]], *, source: str
    ) -> list[int]:
        """Add (text, type, meta) entries in one batch (one lock, one fsync); their seqs.

        A text already in the chain is not added again: its seq is returned.
        A batch a killed curation left in the journal is rolled forward first,
        so that its entries count as already in the chain (they were added
        twice before).
        """
        if texts:
            self.ledger.recover()
            self._known = None  # read the chain as it is now
        known = self._hashes()
        new: dict[str, NewEntry] = {}
        for text, type_, meta in texts:
            content = text.encode("utf-8")
            h = b3(content)
            if h not in known and h not in new:
                new[h] = NewEntry(
                    content=content, type=type_, tier="committed", source=source, meta=meta
                )
        if new:
            require_verified(self.ledger)  # nothing is signed on top of an edited chain
            for h, appended in zip(new, self.ledger.add_batch(list(new.values())), strict=True):
                known[h] = appended.seq
        return [known[b3(text.encode("utf-8"))] for text, _t, _m in texts]

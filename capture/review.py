"""The review queue: what was remembered automatically, waiting for a person (issue 23).

The queue is not a file of its own: it is every entry of a MEMORY.md in
force whose words are an agent's or capture's (workspace.provenance) and
that no person has approved (no ``ok=`` in its metadata). Such entries are
shown at session start as dated notes, never as guidance, and (in review
mode, the default) never reach the chain by themselves.

* ``approve``: the entry gets ``ok=<today>``, so it is guidance from now
  on; an entry of a section that maps to a chain type (decisions,
  commitments, people, error patterns) is committed to the chain first,
  with ``origin`` and ``approved`` signed in its metadata, and its line
  carries the seq.
* ``edit``: the person's new words replace the entry's (origin ``person``),
  then as approve.
* ``reject``: the entry goes to the archive (reason "rejected in review")
  and its words are remembered in the capture state (``rejected``), so
  neither capture nor curation brings them back.

Entries are named by ``<scope>:<line>`` as ``list`` prints them.

Contradictions (two entries of one section that say opposite things) are
settled by a person too: keep the left one, the right one (the other is
archived), or both (the pair is remembered as ``kept_both`` and not shown
again).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any, Final

from memory_chain.chain.format.errors import InputError
from memory_chain.workspace.dedup import normalize
from memory_chain.workspace.files import read_bytes
from memory_chain.workspace.markdown import Document, Entry
from memory_chain.workspace.ops import Outcome, find_entry, remove
from memory_chain.workspace.provenance import origin_of, stamp
from memory_chain.workspace.scopes import Scope, Workspace

from . import state as pointers
from .chaindoor import ChainDoor

__all__ = [
    "SECTION_TYPES",
    "Clash",
    "Waiting",
    "approve",
    "contradictions",
    "edit",
    "pending",
    "reject",
    "rejection_key",
    "settle",
]

#: MEMORY.md section -> the chain entry type an approved entry of it is committed as.
SECTION_TYPES: Final = {
    "architecture decisions": "decision",
    "commitments": "commitment",
    "people & roles": "identity",
    "error patterns": "lesson",
}


def rejection_key(text: str) -> str:
    """What a rejection remembers of a text: a hash of its normalised words."""
    words = normalize(text).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(words, digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Waiting:
    """One entry waiting for review."""

    id: str  # "<scope>:<line>"
    scope: str
    line: int
    section: str
    text: str
    origin: str
    added: str | None
    ref: str | None  # the conversation turn it was captured from, when known
    seq: int | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _waiting(scope: Scope, e: Entry) -> Waiting | None:
    origin = origin_of(e)
    if origin not in ("agent", "capture") or e.meta.get("ok"):
        return None
    meta = e.meta
    return Waiting(
        f"{scope.name}:{e.line}",
        scope.name,
        e.line,
        e.section,
        e.text,
        origin,
        meta.get("added"),
        meta.get("ref"),
        meta.seq,
    )


def pending(workspace: Workspace) -> list[Waiting]:
    """Every entry waiting for review, scope by scope, in file order."""
    out: list[Waiting] = []
    for scope in workspace.in_order():
        data = read_bytes(scope.memory_md)
        if not data:
            continue
        for e in Document.parse(data).entries():
            w = _waiting(scope, e)
            if w is not None:
                out.append(w)
    return out


def _find(workspace: Workspace, ident: str) -> tuple[Scope, Waiting]:
    name, sep, line = ident.partition(":")
    if not sep or name not in workspace.scopes or not line.isdigit():
        raise InputError(
            f"no waiting entry {ident!r}", hint="name one as `memory-chain review` lists it"
        )
    scope = workspace.scopes[name]
    e = find_entry(Document.parse(read_bytes(scope.memory_md) or b""), line)
    w = _waiting(scope, e)
    if w is None:
        raise InputError(f"{ident} is not waiting for review (a person's words, or approved)")
    return scope, w


def approve(
    workspace: Workspace,
    ident: str,
    *,
    chain: ChainDoor | None,
    today: date | None = None,
    _text: str | None = None,
) -> dict[str, Any]:
    """Approve the waiting entry ``ident`` (see the module docstring)."""
    day = today or date.today()
    scope, w = _find(workspace, ident)
    text = _text if _text is not None else w.text
    origin = "person" if _text is not None else w.origin
    seq = w.seq
    kind = SECTION_TYPES.get(w.section.casefold())
    if chain is not None and kind is not None and seq is None:
        meta = {"origin": origin, "approved": day.isoformat(), "review": w.id}
        seq = chain.commit(text, type_=kind, source="curation", meta=meta)

    def mark(doc: Document) -> tuple[Document | None, Outcome]:
        e = find_entry(doc, str(w.line))
        if e.text != w.text:
            raise InputError(f"{w.id} changed while it was reviewed; list the queue again")
        meta = stamp(e.meta.with_(ok=day.isoformat()), text, origin)
        if seq is not None:
            meta = meta.with_(seq=str(seq))
        new = doc.rewrite_entry(e, text=text, stale=False, meta=meta)
        return new, Outcome("approved", scope.name, scope.memory_md, e.line, text, e.section)

    from memory_chain.workspace.ops import _run  # the one writer of MEMORY.md

    _run(scope, mark, must_exist=True)
    return {"approved": w.id, "text": text, "origin": origin, "seq": seq}


def edit(
    workspace: Workspace,
    ident: str,
    text: str,
    *,
    chain: ChainDoor | None,
    today: date | None = None,
) -> dict[str, Any]:
    """Replace a waiting entry's words with a person's, then approve it."""
    from memory_chain.workspace.ops import check_text

    return approve(workspace, ident, chain=chain, today=today, _text=check_text(text))


def reject(workspace: Workspace, ident: str, *, today: date | None = None) -> dict[str, Any]:
    """Archive a waiting entry and remember its words as rejected."""
    day = today or date.today()
    scope, w = _find(workspace, ident)
    key = rejection_key(w.text)

    def change(state: dict[str, Any]) -> None:
        state.setdefault("rejected", {})[key] = {"text": w.text, "day": day.isoformat()}

    pointers.update(workspace.scopes["user"], change)  # first: a crash leaves it rejected
    remove(scope, str(w.line), reason="rejected in review", today=day)
    return {"rejected": w.id, "text": w.text}


# -- contradictions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Clash:
    """Two entries of one MEMORY.md section that say opposite things (dedup.contradicts),
    named ``<scope>:<left line>:<right line>``."""

    id: str
    scope: str
    section: str
    left_line: int
    left: str
    right_line: int
    right: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pair_key(a: str, b: str) -> str:
    words = "\x00".join(sorted((normalize(a), normalize(b)))).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(words, digest_size=8).hexdigest()


def contradictions(workspace: Workspace) -> list[Clash]:
    """Every pair of entries of one section that contradict each other, scope by scope, less
    the pairs a person chose to keep both of (``kept_both`` in the capture state)."""
    from memory_chain.workspace.dedup import contradicts

    kept = pointers.load(workspace.scopes["user"]).get("kept_both", {})
    out: list[Clash] = []
    for scope in workspace.in_order():
        doc = Document.parse(read_bytes(scope.memory_md) or b"")
        for section in doc.sections:
            for i, a in enumerate(section.entries):
                for b in section.entries[i + 1 :]:
                    if contradicts(a.text, b.text) and _pair_key(a.text, b.text) not in kept:
                        ident = f"{scope.name}:{a.line}:{b.line}"
                        out.append(
                            Clash(ident, scope.name, section.title, a.line, a.text, b.line, b.text)
                        )
    return out


def settle(
    workspace: Workspace, ident: str, keep: str, *, today: date | None = None
) -> dict[str, Any]:
    """Settle the clash ``ident``: ``left`` or ``right`` archives the other entry (reason
    "contradicted: kept line N"), ``both`` keeps both and remembers the pair, so it is not
    shown again. The entries must still say what they said (else nothing is written)."""
    day = today or date.today()
    clash = next((c for c in contradictions(workspace) if c.id == ident), None)
    if clash is None:
        raise InputError(f"no contradiction {ident!r}", hint="list them again")
    if keep == "both":

        def change(state: dict[str, Any]) -> None:
            key = _pair_key(clash.left, clash.right)
            state.setdefault("kept_both", {})[key] = {"day": day.isoformat()}

        pointers.update(workspace.scopes["user"], change)
        return {"kept": "both", "id": ident}
    if keep not in ("left", "right"):
        raise InputError(f"keep left, right or both, not {keep!r}")
    kept_line, gone_line, gone = (
        (clash.left_line, clash.right_line, clash.right)
        if keep == "left"
        else (clash.right_line, clash.left_line, clash.left)
    )
    scope = workspace.scopes[clash.scope]
    remove(
        scope,
        str(gone_line),
        reason=f"contradicted: kept line {kept_line}",
        today=day,
        expect=gone,
    )
    return {"kept": keep, "id": ident, "removed": gone}


# -- evidence --------------------------------------------------------------------------------

#: Transcripts larger than this are not read to quote a turn (the page stays quick).
QUOTE_FROM_MAX_BYTES: Final = 20 << 20


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a waiting entry's words were captured: the daily line, the transcript turn's
    ref, and the turn's words when the transcript is still where capture read it."""

    daily: str  # "<scope>:memory/YYYY-MM-DD.md:L<line>"
    ref: str | None
    quote: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def evidence(
    workspace: Workspace,
    texts: list[str],
    *,
    cache: dict[tuple[str, int, int], dict[str, str]] | None = None,
) -> dict[str, Evidence]:
    """For each text that a daily file's captured lines hold: where, and the person's turn
    it came from (quoted from a transcript the capture state names, when it can be read).
    ``cache`` keeps each transcript's user turns by (path, size, mtime) between calls."""
    from pathlib import Path

    from .daily import CANDIDATES, CAPTURED, items
    from .transcripts import read

    wanted = {normalize(t): t for t in texts}
    found: dict[str, tuple[str, str | None]] = {}
    for scope in workspace.in_order():
        for item in items(scope, None, sections=(CAPTURED, CANDIDATES)):
            key = normalize(item.text)
            if key in wanted and wanted[key] not in found:
                rel = item.path.relative_to(scope.root).as_posix()
                found[wanted[key]] = (
                    f"{scope.name}:{rel}:L{item.entry.line}",
                    item.meta.get("ref"),
                )
    refs = {ref for _, ref in found.values() if ref and "/" in ref}
    quotes: dict[str, str] = {}
    known = pointers.load(workspace.scopes["user"]).get("transcripts", {})
    for name in known:
        if not refs - set(quotes):
            break
        path = Path(name)
        try:
            st = path.stat()
            if st.st_size > QUOTE_FROM_MAX_BYTES:
                continue
            version = (name, st.st_size, st.st_mtime_ns)
            said = None if cache is None else cache.get(version)
            if said is None:
                said = {t.ref: t.text[:600] for t in read(path).turns if t.role == "user"}
                if cache is not None:
                    cache[version] = said
        except (OSError, InputError):
            continue
        quotes.update({ref: said[ref] for ref in refs - set(quotes) if ref in said})
    return {
        text: Evidence(daily, ref, quotes.get(ref) if ref else None)
        for text, (daily, ref) in found.items()
    }

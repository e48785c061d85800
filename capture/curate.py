"""Curation: daily files -> MEMORY.md -> the chain; old daily files -> the archive.

Tier 2 of seed 001. Over every daily file not yet archived, whatever its
age (issue 24: what was never curated is not lost to MEMORY.md), or over
the last ``days`` days when a caller limits it, in every scope of the
workspace:

1. a ``## Captured`` line at or above the threshold is promoted, and so is
   a ``## Candidates`` text seen at least twice in the window (across
   sessions and days; it is promoted at 0.8);
2. each promoted text goes to its scope's MEMORY.md section through the
   workspace operations: a duplicate is left alone; a contradicted entry
   written by capture or curation is superseded (archived, never lost);
   a contradicted entry written by a person (``src=manual`` or no
   metadata) wins, and the new text is not written (seed 001 section A4:
   manual over detected over auto);
3. identity, decisions, commitments and lessons (error-fix pairs) are
   committed to the chain first, source ``curation``, with the daily line
   they came from in ``meta.daily``; the MEMORY.md entry carries the seq;
4. a MEMORY.md over its line cap is consolidated (topic files);
5. daily files older than ``ARCHIVE_AFTER_DAYS`` move, byte for byte, to
   memory/archive/, only once this run or an earlier one has read them (a
   file outside a ``days`` limit stays until a run reads it);
6. the pointer (state.py) records which daily lines were curated, so a
   second run changes nothing and a line a person removed from MEMORY.md
   does not come back.

The chain is written before any workspace file, and every text is checked
first: a failed curation writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError
from memory_chain.workspace.archive import Replaced, replaced_wordings
from memory_chain.workspace.dedup import Merger, normalize, relation
from memory_chain.workspace.files import fsync_dir, locked, read_bytes
from memory_chain.workspace.housekeeping import LINE_CAP, consolidate
from memory_chain.workspace.markdown import shown
from memory_chain.workspace.ops import NewMemory, check_text, merge_in
from memory_chain.workspace.provenance import origin_of
from memory_chain.workspace.scopes import Scope, Workspace

from . import state as pointers
from .capture import CANDIDATE_FROM, STORE_FROM, target
from .chaindoor import ChainDoor
from .daily import CANDIDATES, CAPTURED, DailyItem, daily_files, items
from .detector import CHAIN_TYPES, REPEATED
from .review import rejection_key

__all__ = ["ARCHIVE_AFTER_DAYS", "CurationReport", "curate"]

ARCHIVE_AFTER_DAYS: Final = 30
#: What curation does with automatic finds (issue 23): see ``curate``.
REVIEW_MODES: Final = ("auto", "review", "off")


def review_mode(data_dir: Path, given: str | None = None) -> str:
    """The review mode in force: ``given``, else config.json's ``"review"``, else review."""
    if given is not None:
        return given
    from memory_chain.chain.format.config import Config, Layout
    from memory_chain.chain.format.errors import OperationalError

    try:
        said = Config.load(Layout(data_dir)).data.get("review")
    except OperationalError:
        return "review"
    if said is None:
        return "review"
    if said not in REVIEW_MODES:
        raise InputError(f'config.json "review" is one of {", ".join(REVIEW_MODES)}, not {said!r}')
    return str(said)


@dataclass(slots=True)
class CurationReport:
    """What a curation promoted, committed, superseded, archived (or would, with dry_run)."""

    days: int | None  # None: every daily file
    curated: list[dict[str, Any]] = field(default_factory=list)
    committed: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)  # not written, and why
    # daily lines that cannot become an entry (an HTML comment, bytes that are not UTF-8,
    # a secret), with where they are and why: left for a person, never fatal
    skipped: list[dict[str, Any]] = field(default_factory=list)
    consolidated: list[dict[str, Any]] = field(default_factory=list)
    archived: list[dict[str, Any]] = field(default_factory=list)
    # promoted to MEMORY.md as notes, waiting for a person's review before the chain
    waiting: list[dict[str, Any]] = field(default_factory=list)
    review: str = "review"
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _file_key(item: DailyItem) -> str:
    return str(item.path)


def _line_key(item: DailyItem) -> str:
    raw = f"{item.category}\x00{normalize(item.text)}".encode("utf-8", "surrogateescape")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


@dataclass(slots=True)
class _Promotion:
    item: DailyItem  # the first daily line of this text
    also: list[DailyItem]  # the other lines it stands for
    confidence: float
    scope: Scope
    commit_as: str | None  # chain entry type, when it is committed
    origin: str = "capture"  # whose words (workspace.provenance)
    why: str = ""  # why it is promoted, for the report


def _choose(
    workspace: Workspace,
    window: list[DailyItem],
    done: dict[str, Any],
    threshold: float,
    *,
    review: str = "review",
    rejected: frozenset[str] = frozenset(),
) -> list[_Promotion]:
    """What to promote: confident captured lines, and candidates seen twice (one each).

    Never what came from a tool or was quoted, never what a person rejected in
    review; with review ``off``, only the person's own explicit words.
    """
    fresh = [
        i
        for i in window
        if _line_key(i) not in done.get(_file_key(i), {})
        and origin_of(i.entry) not in ("tool", "quoted")
        and (review != "off" or origin_of(i.entry) == "person")
        and rejection_key(i.text) not in rejected
    ]
    promos: list[_Promotion] = []
    candidates: list[DailyItem] = []
    merger = Merger(i.text for i in window)
    for item in fresh:
        if item.kind is None or item.meta.untrusted:
            continue
        if item.entry.section.casefold() == CANDIDATES.casefold():
            candidates.append(item)
        elif item.confidence >= threshold:
            why = f"captured at {item.confidence:.2f} (promoted from {threshold:.2f})"
            _promote(workspace, promos, merger, item, item.confidence, why)
    sightings = Merger(i.text for i in window)
    for n, item in enumerate(window):
        sightings.add(item.text, str(n))
    for item in candidates:
        others = [r for r in sightings.relations(item.text) if r[0] == "same"]
        if len(others) >= 2:  # itself and at least one more sighting
            why = f"a candidate seen {len(others)} times"
            _promote(workspace, promos, merger, item, max(item.confidence, REPEATED), why)
    return promos


def _promote(
    workspace: Workspace,
    promos: list[_Promotion],
    merger: Merger,
    item: DailyItem,
    confidence: float,
    why: str,
) -> None:
    """Add ``item`` to ``promos``, or to the promotion of the same text already there."""
    twin = next((g for r, _t, g in merger.relations(item.text) if r == "same"), None)
    if twin is not None:
        promos[int(twin)].also.append(item)
        return
    merger.add(item.text, str(len(promos)))
    promos.append(_promotion(workspace, item, confidence, why))


def _promotion(workspace: Workspace, item: DailyItem, confidence: float, why: str) -> _Promotion:
    kind = item.kind or "remember"
    scope = target(workspace, item.meta.get("scope") or "user")
    already = item.meta.seq is not None
    commit_as = None if already else CHAIN_TYPES.get(kind)
    return _Promotion(item, [], confidence, scope, commit_as, origin_of(item.entry), why)


def curate(
    workspace: Workspace,
    *,
    chain: ChainDoor | None = None,
    days: int | None = None,
    threshold: float = STORE_FROM,
    cap: int = LINE_CAP,
    now: datetime | None = None,
    dry_run: bool = False,
    review: str = "review",
) -> CurationReport:
    """Curate every daily file, or the last ``days`` days (see the module's docstring).

    ``review`` (issue 23): ``review`` (the default) promotes automatic finds to
    MEMORY.md as notes and lets only a person's own words reach the chain; the
    rest waits for ``memory-chain review``. ``auto`` commits them as before;
    ``off`` promotes only the person's own words.
    """
    if review not in REVIEW_MODES:
        raise InputError(f"the review mode is one of {', '.join(REVIEW_MODES)}, not {review!r}")
    if days is not None and days < 1:
        raise InputError(f"--days must be at least 1, not {days}")
    if not CANDIDATE_FROM < threshold <= 1.0:  # a confidence: 7 promotes nothing, silently
        raise InputError(f"the threshold must be within {CANDIDATE_FROM}..1, not {threshold}")
    today = (now or datetime.now()).date()
    report = CurationReport(days, review=review, dry_run=dry_run)
    user = workspace.scopes["user"]
    state = pointers.load(user)
    done: dict[str, Any] = state["curated"]
    rejected = frozenset(state.get("rejected", {}))
    window_days = None if days is None else [today - timedelta(days=n) for n in range(days)]
    window = [
        i
        for s in workspace.in_order()
        for i in items(s, window_days, sections=(CAPTURED, CANDIDATES))
    ]
    promos = []
    retired: list[_Promotion] = []  # wordings a supersede replaced: never brought back
    replaced: dict[str, list[Replaced]] = {}
    for p in _choose(workspace, window, done, threshold, review=review, rejected=rejected):
        if p.scope.name not in replaced:
            replaced[p.scope.name] = replaced_wordings(p.scope)
        old = replaced[p.scope.name]
        gone = next((r for r in old if relation(p.item.text, r.old) == "same"), None)
        if gone is not None:
            why = f"replaced on {gone.day} by {gone.by!r}: not brought back"
            report.kept.append({**_info(p), "why": why})
            retired.append(p)
            continue
        try:
            check_text(p.item.text)  # before anything is written
        except InputError as exc:
            report.skipped.append(
                {
                    "text": shown(p.item.text),
                    "from": shown(f"{p.item.scope.name}:{p.item.where}"),
                    "path": shown(str(p.item.path)),
                    "why": exc.message,
                }
            )
            continue
        if review != "auto" and p.origin != "person" and p.commit_as is not None:
            p.commit_as = None  # a note until a person approves it
            report.waiting.append({"text": p.item.text, "scope": p.scope.name, "origin": p.origin})
        promos.append(p)
    by_scope: dict[str, list[int]] = {}
    for n, p in enumerate(promos):
        by_scope.setdefault(p.scope.name, []).append(n)
    actions = [""] * len(promos)
    for name, ns in by_scope.items():  # what merge_in would do, as MEMORY.md is now
        _merge(workspace.scopes[name], promos, ns, {}, actions, today, dry_run=True)
    olds = _old_dailies(workspace, today, window_days)
    if dry_run:
        _report(report, promos, actions, {}, planned=True)
        report.archived = [{"from": str(a), "to": str(b), "moved": False} for a, b in olds]
        return report
    # 1. the chain first: what will be added or will replace an automatic entry.
    seqs: dict[int, int] = {}
    wanted = [
        n
        for n, p in enumerate(promos)
        if actions[n] in ("added", "superseded") and p.commit_as is not None
    ]
    if chain is not None and wanted:
        batch = [
            (promos[n].item.text, str(promos[n].commit_as), _chain_meta(promos[n])) for n in wanted
        ]
        seqs = dict(zip(wanted, chain.commit_many(batch, source="curation"), strict=True))
    # 2. MEMORY.md: one write per scope, deciding again on what is there now.
    for name, ns in by_scope.items():
        scope = workspace.scopes[name]
        _merge(scope, promos, ns, seqs, actions, today, dry_run=False)
        # 3. under the cap (also when nothing was added: a consolidation a crash cut
        # short is finished; consolidate returns at once for a file under its cap)
        r = consolidate(scope, cap=cap, today=today)
        if r.written:
            report.consolidated.append(r.as_dict())
    _report(report, promos, actions, seqs, planned=False)
    for src, dst in olds:  # 4. old daily files
        report.archived.append(_archive(src, dst))
    moved = [Path(a["from"]) for a in report.archived if a["moved"]]
    _save(user, [*promos, *retired], moved, today)
    return report


def _merge(
    scope: Scope,
    promos: list[_Promotion],
    ns: list[int],
    seqs: dict[int, int],
    actions: list[str],
    today: date,
    *,
    dry_run: bool,
) -> None:
    """merge_in the promotions ``ns`` into ``scope``; set their actions ("kept:<old>")."""
    new = [_new_memory(promos[n], seqs.get(n, promos[n].item.meta.seq)) for n in ns]
    for n, outcome in zip(ns, merge_in(scope, new, today=today, dry_run=dry_run), strict=True):
        kept = outcome.action == "kept"
        actions[n] = f"kept:{outcome.detail.get('old', '')}" if kept else outcome.action


def _new_memory(p: _Promotion, seq: int | None) -> NewMemory:
    where = f"{p.item.scope.name}:{p.item.where}"
    return NewMemory(
        p.item.text,
        section=p.item.section,
        source="curation",
        confidence=p.confidence,
        seq=seq,
        why=f"contradicted by a capture ({where})",
        origin=p.origin,
    )


def _chain_meta(p: _Promotion) -> dict[str, Any]:
    meta = {
        "daily": f"{p.item.scope.name}:{p.item.where}",
        "category": str(p.item.kind),
        "origin": p.origin,
    }
    ref = p.item.meta.get("ref")
    if ref:
        meta["captured"] = ref
    return meta


def _report(
    report: CurationReport,
    promos: list[_Promotion],
    actions: list[str],
    seqs: dict[int, int],
    *,
    planned: bool,
) -> None:
    for n, p in enumerate(promos):
        action = actions[n]
        info = _info(p)
        if action.startswith("kept:"):
            report.kept.append({**info, "why": f"a person's entry wins: {action[5:]}"})
            continue
        if action == "duplicate":
            report.kept.append({**info, "why": "already in MEMORY.md or a topic file"})
            continue
        if n in seqs or (planned and p.commit_as):
            report.committed.append({**info, "seq": seqs.get(n), "type": p.commit_as})
        if action == "superseded":
            report.superseded.append(info)
        report.curated.append(info)


def _info(p: _Promotion) -> dict[str, Any]:
    return {
        "text": p.item.text,
        "kind": p.item.kind,
        "scope": p.scope.name,
        "section": p.item.section,
        "confidence": p.confidence,
        "from": f"{p.item.scope.name}:{p.item.where}",
        "why": p.why,
    }


def _old_dailies(
    workspace: Workspace, today: date, window: list[date] | None
) -> list[tuple[Path, Path]]:
    """The daily files to archive: old enough, and read by this run (or every run reads
    them all): a file a ``days`` limit kept out is not archived unread."""
    cutoff = today - timedelta(days=ARCHIVE_AFTER_DAYS)
    read = None if window is None else set(window)
    return [
        (path, s.archive_dir / path.name)
        for s in workspace.in_order()
        for day, path in daily_files(s)
        if day < cutoff and (read is None or day in read)
    ]


def _archive(src: Path, dst: Path) -> dict[str, Any]:
    """Move a daily file into memory/archive/ byte for byte (never over a different file)."""
    root = src.parent.parent
    with locked(root):
        data = read_bytes(src)
        if data is None:
            return {"from": str(src), "to": str(dst), "moved": False, "why": "gone"}
        dst.parent.mkdir(parents=True, exist_ok=True)
        existing = read_bytes(dst)
        if existing is None:
            os.link(src, dst)  # fails rather than replace a file that appeared meanwhile
        elif existing != data:
            return {"from": str(src), "to": str(dst), "moved": False, "why": "archive differs"}
        fsync_dir(dst.parent)  # the new name is durable before the old one goes
        os.unlink(src)
        fsync_dir(src.parent)
    return {"from": str(src), "to": str(dst), "moved": True}


def _save(user: Scope, promos: list[_Promotion], moved: list[Path], today: date) -> None:
    lines = [i for p in promos for i in (p.item, *p.also)]
    gone = {str(src) for src in moved}
    if not lines and not gone:
        return
    stamp = today.isoformat()

    def change(state: dict[str, Any]) -> None:
        curated = state["curated"]
        for item in lines:
            curated.setdefault(_file_key(item), {})[_line_key(item)] = stamp
        for path in gone:
            curated.pop(path, None)

    pointers.update(user, change)

"""Capture: a transcript's new turns -> detections -> today's daily file (and MEMORY.md).

Tier 1 of seed 001. For one transcript, from where the last capture of it
stopped:

1. read the new complete lines (transcripts.read);
2. detect (detector.Detector), with the candidates of the last
   ``RECENT_DAYS`` daily files as earlier sightings, so a correction seen
   in an earlier session is promoted when it comes back;
3. drop what is already known (seed 001 section A4): the same text in any
   MEMORY.md, in a recent daily file, or (exactly) in the chain;
4. an explicit "remember this" goes at once to MEMORY.md (source manual)
   and, when it is identity, a decision or a commitment, to the chain
   first, so the MEMORY.md entry carries its seq;
5. the rest is appended to the daily file: ``## Captured`` from the store
   threshold (0.6), ``## Candidates`` from 0.3;
6. with ``flush`` (Claude Code's PreCompact), a compaction record of what
   this capture found goes under ``## Compactions`` (seed 002);
7. the new offset is saved.

Everything that can fail is checked before the first write, and the chain
is written before the workspace: a failed capture writes nothing. Each step
is idempotent, so a capture cut short is simply run again.

Raw captures go to the daily file of the *local* scope when there is a
project (this machine, never committed: a conversation is not shared by
git), else of the user scope.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError
from memory_chain.workspace.dedup import Merger
from memory_chain.workspace.files import edit
from memory_chain.workspace.markdown import Document, Meta, entry_lines
from memory_chain.workspace.ops import NewMemory, check_text, merge_in
from memory_chain.workspace.scopes import Scope, Workspace

from . import semantic
from . import state as pointers
from .chaindoor import ChainDoor
from .daily import (
    CANDIDATES,
    CAPTURED,
    COMPACTIONS,
    DailyItem,
    detection_lines,
    detection_meta,
    items,
    parse_or_new,
)
from .detector import CHAIN_TYPES, Detection, Detector
from .gate import MAY_REMEMBER
from .review import rejection_key
from .transcripts import Batch, Turn, detect_format, read, read_bytes_from

__all__ = [
    "CANDIDATE_FROM",
    "RECENT_DAYS",
    "STORE_FROM",
    "CaptureReport",
    "capture",
    "capture_excerpt",
    "remember_prompt",
    "target",
]

STORE_FROM: Final = 0.6
CANDIDATE_FROM: Final = 0.3
RECENT_DAYS: Final = 7


@dataclass(slots=True)
class CaptureReport:
    """What one capture read, found and wrote (or, with dry_run, would write)."""

    transcript: str
    daily_scope: str
    read: dict[str, Any] = field(default_factory=dict)
    captured: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    remembered: list[dict[str, Any]] = field(default_factory=list)
    committed: list[dict[str, Any]] = field(default_factory=list)
    known: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    compaction: str | None = None
    model: dict[str, Any] | None = None  # {"name", "used", "why"} when a model was named
    unchanged: bool = False
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def target(workspace: Workspace, scope: str) -> Scope:
    """The scope a detection's MEMORY.md lives in (user when there is no project)."""
    return workspace.scopes.get(scope) or workspace.scopes["user"]


def _daily_scope(workspace: Workspace) -> Scope:
    return workspace.scopes.get("local") or workspace.scopes["user"]


def _moment(ts: str | None, now: datetime) -> datetime:
    """A turn's local time (naive), else ``now``."""
    if ts:
        try:
            when = datetime.fromisoformat(ts)
        except ValueError:
            return now
        return when.astimezone().replace(tzinfo=None) if when.tzinfo else when
    return now


def _info(d: Detection, **extra: Any) -> dict[str, Any]:
    return {
        "text": d.text,
        "category": d.category,
        "kind": d.kind,
        "confidence": d.confidence,
        "scope": d.scope,
        "section": d.section,
        "ref": d.ref,
        **extra,
    }


def _start(transcript: Path, entry: dict[str, Any] | None, size: int) -> tuple[int, int, str]:
    """(offset, first line, format) to read from: 0 when the file was replaced."""
    if not entry:
        return 0, 1, "auto"
    offset = int(entry.get("offset", 0))
    if offset > size or pointers.fingerprint(transcript, offset) != entry.get("head"):
        return 0, 1, "auto"
    return offset, int(entry.get("line", 1)), str(entry.get("format", "auto"))


def capture(
    workspace: Workspace,
    transcript: Path,
    *,
    fmt: str = "auto",
    chain: ChainDoor | None = None,
    threshold: float = STORE_FROM,
    flush: str | None = None,
    session: str | None = None,
    model: str | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
    embeddings: bool = True,
) -> CaptureReport:
    """Capture what is new in ``transcript`` (see the module's docstring).

    ``flush``: the trigger of a pre-compaction flush (``manual``/``auto``):
    a compaction record is written even when nothing new was found;
    ``session`` names the session in it (else the transcript's).
    ``model``: an ``llm`` model to find the statements' memories (model.py);
    the rules still find error-fix pairs, and stand in when the model cannot.
    ``embeddings`` False (config.json's ``index.semantic: false``): the lexical
    scorer, even with the semantic extra installed (capture/semantic.py).
    """
    if not CANDIDATE_FROM < threshold <= 1.0:
        raise InputError(f"the threshold must be within {CANDIDATE_FROM}..1, not {threshold}")
    # at most semantic.BUDGET statements embedded for the scorer
    semantic.begin("default" if embeddings else 0)
    now = now or datetime.now()
    transcript = Path(os.path.expanduser(transcript)).absolute()
    user = workspace.scopes["user"]
    daily_scope = _daily_scope(workspace)
    report = CaptureReport(str(transcript), daily_scope.name, dry_run=dry_run)
    try:
        size = transcript.stat().st_size
    except FileNotFoundError:
        raise InputError(f"no such transcript: {transcript}") from None
    except OSError as exc:
        raise InputError(f"cannot read the transcript {transcript}: {exc.strerror}") from None
    entry = pointers.load(user)["transcripts"].get(str(transcript))
    if flush is None and pointers.at_end(entry, transcript, size):
        report.unchanged = True
        report.read = {"start": size, "end": size, "lines": 0}
        return report
    offset, first_line, known_fmt = _start(transcript, entry, size)
    batch = read(
        transcript,
        offset,
        fmt=known_fmt if fmt == "auto" else fmt,
        first_line=first_line,
        lean=True,
    )
    report.read = batch.as_dict()
    if fmt != "auto" and not batch.turns and batch.lines:
        # A wrong --format reads every line as junk: moving the read position past
        # them would lose what they say (a "Remember that ..." among them).
        found = detect_format(transcript, read_bytes_from(transcript, 0, 65536))
        if found != fmt:
            raise InputError(
                f"{transcript} reads as a {found} transcript, not {fmt}: none of its "
                f"{batch.lines} new lines is a {fmt} record",
                hint="use --format auto (or the right format); nothing was captured and the "
                "read position did not move",
            )

    if _detect_and_write(
        workspace,
        daily_scope,
        batch.turns,
        report,
        chain=chain,
        threshold=threshold,
        flush=flush,
        session=session,
        model=model,
        now=now,
        dry_run=dry_run,
    ):
        _save_pointer(user, transcript, batch, first_line, now)
    return report


def capture_excerpt(
    workspace: Workspace,
    turns: list[Turn],
    *,
    name: str,
    chain: ChainDoor | None = None,
    threshold: float = STORE_FROM,
    now: datetime | None = None,
    dry_run: bool = False,
    embeddings: bool = True,
) -> CaptureReport:
    """Capture turns handed over whole, not read from a file (OpenClaw's reset excerpt).

    There is no read position to keep: capturing the same excerpt again
    finds its memories already known (step 3) and writes nothing new.
    ``name`` stands for the transcript in the report. ``embeddings``: as capture's.
    """
    if not CANDIDATE_FROM < threshold <= 1.0:
        raise InputError(f"the threshold must be within {CANDIDATE_FROM}..1, not {threshold}")
    semantic.begin("default" if embeddings else 0)
    now = now or datetime.now()
    daily_scope = _daily_scope(workspace)
    report = CaptureReport(name, daily_scope.name, dry_run=dry_run)
    report.read = {"format": "excerpt", "turns": len(turns)}
    _detect_and_write(
        workspace,
        daily_scope,
        turns,
        report,
        chain=chain,
        threshold=threshold,
        flush=None,
        session=None,
        model=None,
        now=now,
        dry_run=dry_run,
    )
    return report


def _detect_and_write(
    workspace: Workspace,
    daily_scope: Scope,
    turns: list[Turn],
    report: CaptureReport,
    *,
    chain: ChainDoor | None,
    threshold: float,
    flush: str | None,
    session: str | None,
    model: str | None,
    now: datetime,
    dry_run: bool,
) -> bool:
    """Steps 2 to 6 for ``turns``; whether anything was written (not a dry run)."""
    recent = _recent(daily_scope, now)
    earlier = [
        (i.text, i.meta.get("ref") or "")
        for i in recent
        if i.entry.section.casefold() == CANDIDATES.casefold()
    ]
    detector = Detector(earlier=earlier)
    detections = detector.run(turns)
    report.skipped = dict(detector.counts)
    if model is not None:
        from .model import extract

        result = extract(turns, model)
        report.model = {"name": model, "used": result.detections is not None, "why": result.why}
        if result.detections is not None:
            pairs = [d for d in detections if d.category == "error-fix"]
            detections = result.detections + pairs

    plan = _plan(workspace, detections, recent, chain, threshold, report)
    if flush is not None:
        session = session or next((t.session for t in turns if t.session), None)
        report.compaction = _compaction_text(flush, session, report)
    if dry_run:
        return False
    _write(workspace, daily_scope, plan, chain, now, report)
    return True


def remember_prompt(
    workspace: Workspace,
    prompt: str,
    *,
    chain: ChainDoor | None = None,
    session: str | None = None,
    now: datetime | None = None,
) -> CaptureReport:
    """An explicit "remember this" in a prompt, kept at once (Claude Code's UserPromptSubmit).

    Only the ``remember`` detections of the prompt are acted on, through
    the same plan and writes as a capture: the chain (identity, decisions,
    commitments), MEMORY.md, then the daily file. The rest of the prompt is
    left to the capture of the transcript, which then finds this one known.
    """
    now = now or datetime.now()
    daily_scope = _daily_scope(workspace)
    report = CaptureReport("<prompt>", daily_scope.name)
    if not MAY_REMEMBER.search(prompt):
        return report
    short = (session or "")[:8]
    turn = Turn("user", prompt, f"{short}/prompt" if short else "prompt", 0, session)
    semantic.begin(0)  # the prompt's hook stays fast: the lexical scorer
    detector = Detector()
    detections = [d for d in detector.run([turn]) if d.category == "remember"]
    if detector.counts["secret"]:
        # the prompt holds a secret: nothing of it is kept, and the hook says so (issue 26)
        report.skipped["secret"] = detector.counts["secret"]
    if not detections:
        return report
    recent = _recent(daily_scope, now)
    plan = _plan(workspace, detections, recent, chain, STORE_FROM, report)
    _write(workspace, daily_scope, plan, chain, now, report)
    return report


def _recent(daily_scope: Scope, now: datetime) -> list[DailyItem]:
    """The captured and candidate lines of the last RECENT_DAYS daily files."""
    days = [now.date() - timedelta(days=n) for n in range(RECENT_DAYS)]
    return items(daily_scope, days, sections=(CAPTURED, CANDIDATES))


@dataclass(slots=True)
class _Plan:
    daily: list[tuple[Detection, str]] = field(default_factory=list)  # (detection, section)
    remember: list[Detection] = field(default_factory=list)


def _plan(
    workspace: Workspace,
    detections: list[Detection],
    recent: list[Any],
    chain: ChainDoor | None,
    threshold: float,
    report: CaptureReport,
) -> _Plan:
    """Sort detections into remember-now, daily Captured, Candidates and already known."""
    plan = _Plan()
    known = Merger([])  # what is already kept, by group: memory, captured, candidate
    for s in workspace.in_order():
        if s.memory_md.is_file():
            for e in Document.parse(s.memory_md.read_bytes()).entries():
                known.add(e.text, "memory")
    for i in recent:
        captured = i.entry.section.casefold() == CAPTURED.casefold()
        known.add(i.text, "captured" if captured else "candidate")
    rejected = pointers.load(workspace.scopes["user"]).get("rejected", {})
    for d in detections:
        if d.confidence < CANDIDATE_FROM:
            continue
        if rejected and rejection_key(d.text) in rejected:
            report.known.append(_info(d, why="rejected in review"))
            continue
        try:
            check_text(d.text)
        except InputError as exc:
            report.known.append(_info(d, why=f"refused: {exc.message}"))
            continue
        groups = {g for rel, _t, g in known.relations(d.text) if rel == "same"}
        if d.confidence < threshold:
            if groups:
                report.known.append(_info(d, why="candidate already noted"))
                continue
            known.add(d.text, "candidate")
            plan.daily.append((d, CANDIDATES))
            report.candidates.append(_info(d))
            continue
        why = None
        if "memory" in groups:
            why = "in MEMORY.md"
        elif chain is not None and chain.find(d.text) is not None:
            why = "in the chain"
        elif "captured" in groups:
            why = "in a daily file"
        if why is not None:
            report.known.append(_info(d, why=why))
            continue
        known.add(d.text, "captured")
        plan.daily.append((d, CAPTURED))
        report.captured.append(_info(d))
        if d.category == "remember":
            plan.remember.append(d)
            known.add(d.text, "memory")
    return plan


def _compaction_text(trigger: str, session: str | None, report: CaptureReport) -> str:
    """The record's text (session and trigger come from a hook's input: only safe words)."""
    short = (session or "")[:8]
    who = f" of session {short}" if re.fullmatch(r"[\w-]+", short) else ""
    how = trigger if re.fullmatch(r"[\w-]{1,20}", trigger) else "other"
    return check_text(
        f"Compaction ({how}){who}: {len(report.captured)} captured, "
        f"{len(report.candidates)} candidates, {len(report.known)} already known",
        what="compaction record",
    )


def _write(
    workspace: Workspace,
    daily_scope: Scope,
    plan: _Plan,
    chain: ChainDoor | None,
    now: datetime,
    report: CaptureReport,
) -> None:
    # 1. the chain first: if it fails (no key, a secret), nothing else was written.
    seqs: dict[str, int] = {}
    for d in plan.remember:
        if d.kind in CHAIN_TYPES and chain is not None:
            meta = {"captured": d.ref, "category": d.kind, "origin": d.origin}
            seq = chain.commit(d.text, type_=CHAIN_TYPES[d.kind], source="manual", meta=meta)
            seqs[d.text] = seq
            report.committed.append(_info(d, seq=seq))
    # 2. "remember this": MEMORY.md at once, one write per scope (a contradicted
    #    automatic entry is superseded; one a person wrote is kept).
    by_scope: dict[str, list[Detection]] = {}
    for d in plan.remember:
        by_scope.setdefault(target(workspace, d.scope).name, []).append(d)
    for name, ds in by_scope.items():
        new = [
            NewMemory(
                d.text,
                section=d.section,
                source="manual",
                confidence=d.confidence,
                seq=seqs.get(d.text),
                origin=d.origin,
                why=f"the user asked to remember otherwise ({d.ref})",
            )
            for d in ds
        ]
        for outcome in merge_in(workspace.scopes[name], new, today=now.date()):
            report.remembered.append(outcome.as_dict())
    # 3. the daily file(s): one write per day.
    by_day: dict[date, list[tuple[Detection, str, datetime]]] = {}
    for d, section in plan.daily:
        when = _moment(d.ts, now)
        by_day.setdefault(when.date(), []).append((d, section, when))
    if report.compaction is not None:
        by_day.setdefault(now.date(), [])
    for day, rows in sorted(by_day.items()):
        record = report.compaction if day == now.date() else None
        _append_daily(daily_scope, day, rows, seqs, record, now)


def _append_daily(
    scope: Scope,
    day: date,
    rows: list[tuple[Detection, str, datetime]],
    seqs: dict[str, int],
    compaction: str | None,
    now: datetime,
) -> None:
    def change(current: bytes | None) -> bytes:
        doc = parse_or_new(current, day)
        present = {e.text for e in doc.entries()}
        new: dict[str, list[str]] = {}
        for d, section, when in rows:
            if f"{when.strftime('%H:%M')} {d.text}" in present:
                continue  # a concurrent capture of the same transcript wrote it
            src = "manual" if d.category == "remember" else "auto"
            meta = detection_meta(d, source=src, seq=seqs.get(d.text))
            new.setdefault(section, []).extend(detection_lines(d, when, meta, doc.newline))
        for section, lines in new.items():
            doc = doc.append_to_section(section, lines)
        if compaction is not None:
            meta = Meta().with_(src="auto", cat="compaction")
            text = f"{now.strftime('%H:%M')} {compaction}"
            doc = doc.append_to_section(COMPACTIONS, entry_lines(text, meta, nl=doc.newline))
        return doc.render()

    scope.prepare()
    edit(scope.daily(day.isoformat()), change, lock_root=scope.root)


def _save_pointer(
    user: Scope, transcript: Path, batch: Batch, first_line: int, now: datetime
) -> None:
    def change(state: dict[str, Any]) -> None:
        state["transcripts"][str(transcript)] = {
            "offset": batch.end,
            "line": first_line + batch.lines,
            "format": batch.format,
            "head": pointers.fingerprint(transcript, batch.end),
            "captured": now.isoformat(timespec="seconds"),
        }

    pointers.update(user, change)

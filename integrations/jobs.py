"""The three scheduled jobs of seed 001, run by ``memory-chain job NAME`` (from a timer).

- ``capture`` (every 30 minutes): capture every transcript under the
  configured folder changed in the last ``RECENT_DAYS`` days (Claude Code's
  ``~/.claude/projects``, say), and the session buffer file, from where the
  last capture of each stopped;
- ``curate`` (Sunday 10:00 UTC): the week's daily files into MEMORY.md and
  the chain;
- ``maintain`` (Sunday 11:00 UTC): verify the chain, stats, gc (index),
  decay (every scope's MEMORY.md), anchor on the configured network when
  committed entries were added since the last anchor there, publish the
  chain for witnesses where one was configured (FORMAT.md 19), and sync it
  into the fleet's PostgreSQL database where config.json names one
  (``index.url``, index/fleet.py).

Each run records its outcome in ``<data dir>/jobs/<name>.json`` (started,
finished, ok, summary, error: what ``schedule status`` shows) and one line
in ``<data dir>/logs/jobs.log``; a failed run raises JobFailed, so the CLI
exits non-zero and the timer shows it failed.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from memory_chain.chain.format.errors import MemoryChainError, OperationalError

from .api import Memory
from .files import append_line, utc_now

__all__ = ["JOBS", "RECENT_DAYS", "JobFailed", "JobResult", "last_runs", "run_job"]

JOBS: Final = ("capture", "curate", "maintain")
RECENT_DAYS: Final = 7


class JobFailed(OperationalError):
    """A scheduled job did not do all it had to (its record says what)."""


@dataclass(slots=True)
class JobResult:
    job: str
    started: str
    finished: str = ""
    ok: bool = True
    summary: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _transcripts(folder: Path, now: float) -> list[Path]:
    """The *.jsonl under ``folder`` changed in the last RECENT_DAYS days, oldest first."""
    found = []
    for path in folder.rglob("*.jsonl"):
        try:
            st = path.stat()
        except OSError:
            continue
        if now - st.st_mtime <= RECENT_DAYS * 86400:
            found.append((st.st_mtime, path))
    return [p for _, p in sorted(found)]


def _capture(
    memory: Memory, result: JobResult, transcripts: Path | None, buffer: Path | None
) -> None:
    if transcripts is None and buffer is None:
        raise JobFailed(
            "nothing to capture: no transcript folder or session buffer is configured",
            hint="schedule install --transcripts ~/.claude/projects (or --buffer FILE)",
        )
    files = _transcripts(transcripts, time.time()) if transcripts is not None else []
    if buffer is not None and buffer.is_file():
        files.append(buffer)
    totals = {"files": len(files), "read": 0, "captured": 0, "candidates": 0, "remembered": 0}
    for path in files:
        try:
            report = memory.capture(path)
        except MemoryChainError as exc:
            result.errors.append(f"{path}: {exc.message}")
            continue
        if not report["unchanged"]:
            totals["read"] += 1
        totals["captured"] += len(report["captured"])
        totals["candidates"] += len(report["candidates"])
        totals["remembered"] += len(report["remembered"])
    result.summary = totals


def _curate(memory: Memory, result: JobResult) -> None:
    report = memory.curate()
    result.summary = {
        "curated": len(report["curated"]),
        "committed": len(report["committed"]),
        "archived": len(report["archived"]),
    }


def _committed_since_anchor(memory: Memory, network: str) -> int:
    from memory_chain.chain.log.anchors import read_anchors

    anchored = [
        r["tree_size"]
        for r in read_anchors(memory.ledger.layout).records
        if r["network"] == network and r["state"] == "confirmed"
    ]
    since = max(anchored, default=0)
    row = memory.index.conn.execute(
        "SELECT COUNT(*) FROM memories WHERE tier = 'committed' AND seq >= ?", (since,)
    ).fetchone()
    return int(row[0])


def _publish(memory: Memory, where: str, witnesses: list[tuple[str, str]]) -> dict[str, Any]:
    """Publish the chain as a tlog-tiles log (FORMAT.md 19) and ask each witness; a witness
    that refuses is an error of the run (the log is published without its cosignature)."""
    from memory_chain.chain.audit.publishing import ask_witnesses, publish
    from memory_chain.chain.log.cosignature import COSIGNATURE, parse_vkey

    from .s3_store import place_of
    from .witness_http import submitter

    place = place_of(where)
    try:
        keys = [parse_vkey(vkey, COSIGNATURE) for vkey, _ in witnesses]
    except ValueError as exc:
        raise OperationalError(f"a witness key of the publish job: {exc}") from None
    done = publish(memory.ledger, place)
    asked = ask_witnesses(
        place, [(k, submitter(url)) for k, (_, url) in zip(keys, witnesses, strict=True)]
    )
    refused = [f"witness {a.witness}: {a.message}" for a in asked if not a.ok]
    if refused:
        raise JobFailed("; ".join(refused))
    return {
        "where": done.folder,
        "size": done.checkpoint.size,
        "new": done.new,
        "cosigned_by": [a.witness for a in asked],
    }


def _maintain(
    memory: Memory,
    result: JobResult,
    anchor: str | None,
    publish: str | None = None,
    witnesses: list[tuple[str, str]] | None = None,
) -> None:
    from memory_chain.chain.store.views import chain_stats
    from memory_chain.index.gc import collect
    from memory_chain.workspace.housekeeping import decay

    summary: dict[str, Any] = {}
    verified = memory.verify()
    summary["verify"] = {
        "ok": verified["ok"],
        "entries": verified["entries"],
        "checked": verified["checked"],
    }
    f = verified["failure"]
    if f is not None:
        result.errors.append(f"the chain does not verify at seq {f['seq']}: {f['message']}")
    stats = chain_stats(memory.ledger)
    summary["stats"] = {k: stats[k] for k in ("entries", "by_tier") if k in stats}
    if verified["ok"]:
        gc = collect(memory.index)
        summary["gc"] = {"examined": gc.examined, "archived": gc.archived, "expired": gc.expired}
    summary["decay"] = {
        scope.name: len(decay(scope).changed) for scope in memory.workspace.in_order()
    }
    if memory.has_chain and memory.index.semantic:  # vectors for semantic recall (issue 25)
        from memory_chain.index.vectors import prune
        from memory_chain.workspace.indexing import sync_workspace

        index = memory.index
        sync_workspace(index.conn, memory.workspace)
        summary["vectors"] = {"pruned": prune(index.conn), "embedded": index.embed()}
    if anchor is not None and verified["ok"]:
        waiting = _committed_since_anchor(memory, anchor)
        summary["anchor"] = {"network": anchor, "committed_since_last": waiting}
        if waiting:
            summary["anchor"]["tx"] = _post_anchor(memory, anchor)
    result.summary = summary
    if publish is not None and verified["ok"]:
        summary["publish"] = _publish(memory, publish, witnesses or [])
    fleet_url = memory.index.settings.url if memory.has_chain else None
    if fleet_url is not None and verified["ok"]:
        summary["fleet"] = _fleet(memory, fleet_url)


def _fleet(memory: Memory, url: str) -> dict[str, Any]:
    """Sync the chain, its vectors and its workspace's user and project entries into the
    fleet's PostgreSQL database (config.json index.url)."""
    from memory_chain.index.fleet import safe_url, sync
    from memory_chain.workspace.fleet import sync_entries

    done = sync(url, memory.ledger.layout, verify=False)  # _maintain verified it just now
    ws = sync_entries(url, done.chain_id, memory.index.conn, memory.workspace)
    return {
        "url": safe_url(url),
        "added": done.added,
        "memories": done.memories,
        "vectors": done.vectors,
        "entries": ws.entries,
    }


def _post_anchor(memory: Memory, network: str) -> str:
    from memory_chain.anchor.account import load_account
    from memory_chain.anchor.networks import resolve_network
    from memory_chain.anchor.post import anchor

    net = resolve_network(memory.ledger.config, network)
    posted = anchor(memory.ledger, net, lambda: load_account(None))
    return str(posted.record["tx"])


def _record(data_dir: Path, result: JobResult) -> None:
    from memory_chain.chain.format.fsutil import replace_file

    folder = data_dir / "jobs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_file(
        folder / f"{result.job}.json", orjson.dumps(result.as_dict(), option=orjson.OPT_INDENT_2)
    )
    what = "ok" if result.ok else "FAILED: " + "; ".join(result.errors)
    summary = orjson.dumps(result.summary).decode()
    append_line(data_dir, "jobs.log", f"{result.finished} {result.job} {what} {summary}")


def run_job(
    name: str,
    memory: Memory,
    *,
    transcripts: Path | None = None,
    buffer: Path | None = None,
    anchor: str | None = None,
    publish: str | None = None,
    witnesses: list[tuple[str, str]] | None = None,
) -> JobResult:
    """Run one job, record its outcome; raise JobFailed (after recording) when it failed.

    ``publish`` (maintain): a folder or s3://bucket/prefix to publish the chain to after it
    verifies, asking ``witnesses`` ((verifier key, submission URL) each) to cosign."""
    if name not in JOBS:
        raise OperationalError(f"unknown job {name!r}", hint=f"one of: {', '.join(JOBS)}")
    result = JobResult(name, utc_now())
    try:
        if name == "capture":
            _capture(memory, result, transcripts, buffer)
        elif name == "curate":
            _curate(memory, result)
        else:
            _maintain(memory, result, anchor, publish, witnesses)
    except MemoryChainError as exc:
        result.errors.append(exc.message)
    result.ok = not result.errors
    result.finished = utc_now()
    _record(memory.data_dir, result)
    if not result.ok:
        raise JobFailed(f"job {name} failed: {'; '.join(result.errors)}")
    return result


def last_runs(data_dir: Path) -> dict[str, dict[str, Any] | None]:
    """Each job's last recorded run (None when it never ran)."""
    out: dict[str, dict[str, Any] | None] = {}
    for name in JOBS:
        try:
            out[name] = orjson.loads((data_dir / "jobs" / f"{name}.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            out[name] = None
    return out

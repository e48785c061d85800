"""``memory-chain doctor``: one screen of checks, each with what to do about a problem.

Each check gives a ``Check(name, status, detail, fix)``; status is ``ok``,
``warn`` (works, but something is missing or risky) or ``fail`` (memory
is broken or unsafe). Nothing is written; the chain is verified
incrementally (a full check is `memory-chain verify --full`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from typing import Any

from memory_chain.chain.format.config import Config, Layout
from memory_chain.chain.format.errors import MemoryChainError

from .api import Memory

__all__ = ["Check", "diagnose"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _data_dir(memory: Memory) -> list[Check]:
    root = memory.data_dir
    if not memory.has_chain:
        return [
            Check(
                "data directory",
                "fail",
                f"no chain in {root}",
                "memory-chain init --name <agent name>",
            )
        ]
    out = []
    mode = stat.S_IMODE(root.stat().st_mode)
    if mode & 0o022:
        out.append(
            Check(
                "data directory",
                "fail",
                f"{root} is writable by others (mode {mode:o})",
                f"chmod go-w {root}",
            )
        )
    else:
        out.append(Check("data directory", "ok", f"{root} (mode {mode:o})"))
    config_ok = True
    try:
        config = Config.load(Layout(root))
        out.append(
            Check("config", "ok", f"config.json: agent {config.name!r}, key mode {config.key_mode}")
        )
    except MemoryChainError as exc:
        config_ok = False
        out.append(
            Check(
                "config",
                "fail",
                f"{exc.message}",
                f"restore {Layout(root).config} from a backup (nothing can be written "
                "until it is back)",
            )
        )
    from memory_chain.chain.format.keys import key_file

    if not config_ok:  # the key mode is in config.json: which key file is unknown
        out.append(
            Check(
                "signing key",
                "warn",
                "not checked: config.json cannot be read, so the key mode is unknown",
                "fix config.json first",
            )
        )
        return out
    key_mode = config.key_mode
    path = key_file(root, key_mode)
    if path is None:
        out.append(Check("signing key", "ok", "env mode: the key is in $MEMORY_CHAIN_SIGNING_KEY"))
    elif not path.exists():
        out.append(
            Check(
                "signing key",
                "fail",
                f"{path.name} is missing (key mode {key_mode})",
                "restore it from a backup; without it nothing new can be signed",
            )
        )
    else:
        kmode = stat.S_IMODE(path.stat().st_mode)
        if kmode & 0o077:
            out.append(
                Check(
                    "signing key",
                    "fail",
                    f"{path.name} can be read by others (mode {kmode:o})",
                    f"chmod 600 {path}",
                )
            )
        elif key_mode == "raw":
            out.append(
                Check(
                    "signing key",
                    "warn",
                    f"{path.name} is stored unencrypted (mode {kmode:o})",
                    "for a shared machine, init a chain with --key-mode encrypted",
                )
            )
        else:
            out.append(Check("signing key", "ok", f"{path.name}, {key_mode} (mode {kmode:o})"))
    return out


def _chain(memory: Memory) -> list[Check]:
    report = memory.verify()
    f = report["failure"]
    if f is not None:
        return [
            Check(
                "chain",
                "fail",
                f"does not verify at seq {f['seq']}: {f['message']} ({f['reason']})",
                "memory-chain verify --full; restore chain.jsonl from a backup or an export",
            )
        ]
    checks = [
        Check(
            "chain",
            "ok",
            f"{report['entries']} entries verified ({report['checked']}), head {report['head']}",
        )
    ]
    if report["torn_tail_bytes"]:
        checks.append(
            Check(
                "chain tail",
                "warn",
                f"{report['torn_tail_bytes']} bytes of an interrupted write at the end",
                "the next add moves them to quarantine/",
            )
        )
    from memory_chain.index.db import Index

    with Index.open(memory.data_dir, sync_now=False) as index:
        indexed = index.state().size
    if indexed == report["entries"]:
        checks.append(Check("index", "ok", f"memory.db holds all {indexed} entries"))
    elif indexed < report["entries"]:  # a cache a little behind: the next read catches up
        checks.append(
            Check(
                "index",
                "ok",
                f"memory.db holds {indexed} of {report['entries']} entries; the next search "
                "or context indexes the rest",
            )
        )
    else:
        checks.append(
            Check(
                "index",
                "warn",
                f"memory.db holds {indexed} entries, more than the chain's {report['entries']}",
                "memory-chain reindex (it is rebuilt from the chain)",
            )
        )
    return checks


def _workspace(memory: Memory) -> list[Check]:
    from memory_chain.workspace.integrity import check_workspace, index_lookup

    findings = check_workspace(memory.workspace, index_lookup(memory.index.conn))
    scopes = ", ".join(f"{s.name} {s.root}" for s in memory.workspace.in_order())
    errors = [f for f in findings if f.error]
    if errors:
        first = errors[0]
        return [
            Check(
                "workspace",
                "fail",
                f"{len(errors)} problem(s), first: {first.scope}:{first.path}:{first.line} "
                f"{first.message}",
                "memory-chain verify --workspace lists them all",
            )
        ]
    note = f"; {len(findings)} note(s)" if findings else ""
    out = [Check("workspace", "ok", f"{scopes}{note}")]
    from .files import workspace_drift

    drift = workspace_drift(memory.data_dir)
    if drift is not None:
        out.append(
            Check(
                "workspace pin",
                "warn",
                f"this shell reads {drift[0]} ($MEMORY_CHAIN_WORKSPACE); timers, hooks and the "
                f"MCP server started without it read {drift[1]}",
                "run `memory-chain schedule install` (or hooks / mcp install) again: it pins "
                "the workspace in config.json",
            )
        )
    return out


def _agents(memory: Memory) -> list[Check]:
    from . import claude_code, openclaw

    project = memory.workspace.project
    rows = claude_code.hooks_status(project)
    full = [r for r in rows if not r["missing"] and not r.get("error")]
    broken = [r for r in rows if r.get("error")]
    out = []
    for r in broken:
        out.append(
            Check("claude code settings", "fail", f"{r['path']}: {r['error']}", "fix the JSON")
        )
    if full:
        where = ", ".join(r["scope"] for r in full)
        out.append(Check("claude code hooks", "ok", f"installed ({where})"))
    else:
        out.append(
            Check(
                "claude code hooks",
                "warn",
                "not installed: sessions do not start with memory",
                "memory-chain hooks install claude-code",
            )
        )
    servers = [r for r in claude_code.mcp_status(project) if r["server"]]
    if servers:
        out.append(
            Check("mcp server", "ok", f"registered ({', '.join(r['scope'] for r in servers)})")
        )
    else:
        out.append(
            Check(
                "mcp server",
                "warn",
                "not registered with Claude Code",
                "memory-chain mcp install claude-code",
            )
        )
    oc = openclaw.status()
    installed = [n for n, h in oc["hooks"].items() if h["installed"]]
    if installed:
        lost = [n for n, h in oc["hooks"].items() if h["installed"] and not h["program_found"]]
        if lost:
            out.append(
                Check(
                    "openclaw hooks",
                    "fail",
                    f"{', '.join(lost)} run a memory-chain that is not there any more",
                    "memory-chain hooks install openclaw",
                )
            )
        else:
            out.append(Check("openclaw hooks", "ok", f"installed in {oc['hooks_dir']}"))
    return out


def _schedules(memory: Memory) -> list[Check]:
    from .schedule import status

    jobs = status(memory.data_dir)["jobs"]
    out = []
    scheduled = [j for j, row in jobs.items() if row["scheduled"]]
    if not scheduled:
        out.append(
            Check(
                "schedules",
                "warn",
                "no job is scheduled: nothing is curated unless you run it",
                "memory-chain schedule install --transcripts ~/.claude/projects",
            )
        )
    else:
        out.append(Check("schedules", "ok", f"scheduled: {', '.join(scheduled)}"))
    for job, row in jobs.items():
        last = row["last_run"]
        if last is not None and not last["ok"]:
            out.append(
                Check(
                    f"job {job}",
                    "fail",
                    f"last run {last['finished']} failed: {'; '.join(last['errors'])}",
                    f"memory-chain job {job} (then see <data dir>/logs/jobs.log)",
                )
            )
    return out


def _anchors(memory: Memory) -> list[Check]:
    from memory_chain.chain.log.anchors import read_anchors

    records = read_anchors(memory.ledger.layout).records
    if not records:
        return [Check("anchors", "ok", "none yet (optional: memory-chain anchor --network N)")]
    pending = [r for r in records if r["state"] == "sent"]
    confirmed = [r for r in records if r["state"] == "confirmed"]
    out = []
    if pending:
        out.append(
            Check(
                "anchors",
                "warn",
                f"{len(pending)} transaction(s) sent but not confirmed",
                "memory-chain anchor (settles them)",
            )
        )
    if confirmed:
        last = max(confirmed, key=lambda r: r["tree_size"])
        out.append(
            Check(
                "anchors",
                "ok",
                f"latest: size {last['tree_size']} on {last['network']} (tx {last['tx'][:12]}...)",
            )
        )
    return out


def _semantic(memory: Memory) -> list[Check]:
    """Recall by meaning and the capture scorer that reads it (the semantic extra): on or
    off and why, and whether memories wait for a vector. The model is not loaded."""
    from memory_chain.index import vectors
    from memory_chain.index.settings import semantic_setting

    if not vectors.available():
        return [
            Check(
                "semantic",
                "ok",
                "off: the semantic extra is not installed (recall and capture are lexical; "
                "pip install 'memory-chain[semantic]' adds recall by meaning)",
            )
        ]
    if not vectors.enabled(semantic_setting(memory.data_dir)):
        why = (
            f"${vectors.ENV}"
            if vectors.ENV in os.environ
            else 'config.json "index": {"semantic": false}'
        )
        return [Check("semantic", "ok", f"off: switched off by {why}")]
    detail = f"on: recall and capture read meaning ({vectors.MODEL})"
    if not memory.has_chain:
        return [Check("semantic", "ok", detail)]
    from memory_chain.index import vecfile
    from memory_chain.index.db import CATCH_UP, Index

    with Index.open(memory.data_dir, sync_now=False) as index:
        missing = vectors.unembedded(index.conn)
        path = memory.data_dir / vecfile.NAME
        mapped = vecfile.fresh_rows(index.conn, path, vectors.MODEL, vectors.DIM)
    if mapped is not None:
        detail += f"; {vecfile.NAME} maps {mapped:,} vectors"
    if missing > CATCH_UP:
        return [
            Check(
                "semantic",
                "warn",
                f"{detail}; {missing} memories have no vector yet, so recall stays lexical "
                "until they are embedded",
                "memory-chain reindex (or the maintain job)",
            )
        ]
    return [Check("semantic", "ok", detail)]


def _fleet(memory: Memory) -> list[Check]:
    """The fleet's database of config.json ``index.url``, when one is named: reachable, and
    how much of this chain it holds (index/fleet.py). Nothing is written to it."""
    from memory_chain.chain.format.canonical import b3
    from memory_chain.index.fleet import entries_of, safe_url
    from memory_chain.index.settings import settings_from_config

    url = settings_from_config(memory.ledger.config.data).url
    if url is None:
        return []
    where = safe_url(url)
    with memory.ledger.layout.chain.open("rb") as f:
        chain_id = b3(f.readline().rstrip(b"\n"))
    try:
        held = entries_of(url, chain_id)
    except MemoryChainError as exc:
        return [Check("fleet", "warn", exc.message, exc.hint or "check the server and the URL")]
    entries = memory.verify()["entries"]
    if held is None:
        return [
            Check("fleet", "warn", f"{where} holds none of this chain yet", "memory-chain index")
        ]
    if held < entries:
        return [
            Check(
                "fleet",
                "ok",
                f"{where} holds {held} of {entries} entries; the maintain job or "
                "`memory-chain index` brings the rest",
            )
        ]
    return [Check("fleet", "ok", f"{where} holds all {held} entries")]


def diagnose(memory: Memory) -> list[Check]:
    """Every check, in order; a check that cannot run says why (status fail).

    Each runs on its own: a directory broken in several ways is reported in
    all of them (a bad config.json stopped every check after it).
    """
    checks: list[Check] = []
    sections = (
        [_data_dir, _chain, _workspace, _semantic, _agents, _schedules, _anchors, _fleet]
        if memory.has_chain
        else [_data_dir, _semantic, _agents, _schedules]
    )
    for section in sections:
        try:
            checks += section(memory)
        except MemoryChainError as exc:
            checks.append(Check(section.__name__.strip("_"), "fail", exc.message, exc.hint))
        except OSError as exc:
            checks.append(Check(section.__name__.strip("_"), "fail", str(exc), None))
    return checks

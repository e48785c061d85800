"""One search over both halves: chain memories (provable) and workspace entries (editable).

Chain hits come from index.query.search with their usual score. A
workspace entry that matches the query is scored on the same scale::

    text       * bm25 / max(best workspace bm25, index.query.bm25_floor over ws_fts)
                                          (with vectors, fused with the cosine part:
                                          index.query.fuse)
  + recency    * 0.5 ** (age_days / 7)   (age from its confirmed, else added
                                          date, else its file's mtime)
  + importance * KIND_IMPORTANCE[kind] / 100
  + access     * 0                       (workspace reads are not counted)

and both lists are merged by score. Every result says what it is: a chain
hit is ``provable`` with its seq, a workspace entry ``editable`` with its
path and line, and one whose source was a tool or the web is ``untrusted``.
Archived workspace entries (memory/archive/) are left out unless asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from memory_chain.index.db import Index
from memory_chain.index.query import (
    VEC_POOL,
    Hit,
    SqliteStore,
    bm25_floor,
    fts_query,
    fuse,
    recency,
    semantic_parts,
    spread_order,
    weights_for,
)
from memory_chain.index.query import search as chain_search
from memory_chain.index.settings import Weights

from .indexing import in_roots, sync_workspace
from .provenance import role
from .scopes import Workspace

__all__ = ["KIND_IMPORTANCE", "Found", "search"]

KIND_IMPORTANCE: Final = {
    "memory": 70,
    "fact": 60,
    "topic": 50,
    "episode": 50,
    "daily": 40,
    "archive": 10,
}
_DAY_US: Final = 86_400_000_000


@dataclass(frozen=True, slots=True)
class Found:
    """One search result from either half."""

    kind: str  # provable | editable | untrusted
    score: float
    text: str
    chain: Hit | None = None
    scope: str | None = None
    path: str | None = None
    line: int | None = None
    section: str | None = None
    stale: bool = False
    origin: str | None = None  # workspace.provenance (a workspace entry's)
    role: str = "guidance"  # guidance | note | withheld: what an agent is shown it as

    def as_dict(self) -> dict[str, Any]:
        if self.chain is not None:
            return {"kind": self.kind, **self.chain.as_dict()}
        return {
            "kind": self.kind,
            "scope": self.scope,
            "path": self.path,
            "line": self.line,
            "section": self.section,
            "text": self.text,
            "stale": self.stale,
            "score": round(self.score, 6),
            "origin": self.origin,
            "role": self.role,
        }


def _micros(day: str | None) -> int | None:
    if not day:
        return None
    try:
        d = date.fromisoformat(day)
    except ValueError:
        return None
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() * 1_000_000)


def entry_when(confirmed: str | None, added: str | None, mtime_ns: int) -> int:
    """An entry's date (µs): its confirmed, else added, else its file's mtime."""
    return _micros(confirmed) or _micros(added) or mtime_ns // 1000


def entry_score(text_part: float, kind: str, when: int, now: int, weights: Weights) -> float:
    """A workspace entry's score (see the module docstring) from its text part (0..1)."""
    return (
        weights.text * text_part
        + weights.recency * recency(when, now)
        + weights.importance * KIND_IMPORTANCE.get(kind, 50) / 100
    )


def relative(path: str, root: str) -> str:
    """``path`` relative to its scope ``root`` (as given when it is not under it)."""
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


def workspace_hits(
    index: Index,
    workspace: Workspace,
    query: str,
    *,
    pool: int,
    weights: Weights,
    include_archived: bool = False,
    scope: str | None = None,
    since: int | None = None,
    until: int | None = None,
) -> list[Found]:
    """Workspace entries matching ``query``, scored (see the module docstring); of one
    ``scope``, and dated within [``since``, ``until``) (µs), when given."""
    match = fts_query(query)
    if match is None:
        return []
    where, scope_roots = in_roots(workspace, "e.root")
    archived = "" if include_archived else "AND e.kind != 'archive'"
    one_scope = "" if scope is None else "AND e.scope = ?"
    dated = since is not None or until is not None
    columns = (
        "e.scope, e.path, e.line, e.section, e.text, e.stale, e.untrusted, e.kind, "
        "e.confirmed, e.added, f.mtime_ns, f.root"
    )
    args = (*scope_roots, *([scope] if scope else []))
    rows = index.conn.execute(
        f"SELECT {columns}, -bm25(ws_fts) AS b, e.origin, e.approved, e.id "
        "FROM ws_fts JOIN ws_entries e ON e.id = ws_fts.rowid JOIN ws_files f ON f.path = e.path "
        f"WHERE ws_fts MATCH ? AND {where} {archived} {one_scope} ORDER BY rank LIMIT ?",
        (match, *args, pool * (4 if dated else 1)),
    ).fetchall()
    near = semantic_parts(index, query, max(VEC_POOL, pool), what="entries")
    if near:  # with vectors (issue 25): the entries nearest the query join the candidates
        have = {r[15] for r in rows}
        listed = ", ".join(str(int(i)) for i in near if i not in have)
        if listed:
            rows += index.conn.execute(
                f"SELECT {columns}, 0.0, e.origin, e.approved, e.id "
                "FROM ws_entries e JOIN ws_files f ON f.path = e.path "
                f"WHERE e.id IN ({listed}) AND {where} {archived} {one_scope}",
                args,
            ).fetchall()
    if not rows:
        return []
    best = max(max(r[12] for r in rows), bm25_floor(index, "ws_fts")) or 1.0
    now = index.now()
    out = []
    for (
        scope,
        path,
        line,
        section,
        text,
        stale,
        untrusted,
        kind,
        conf,
        added,
        mtime,
        root,
        b,
        origin,
        approved,
        id_,
    ) in rows:
        when = entry_when(conf, added, mtime)
        if (since is not None and when < since) or (until is not None and when >= until):
            continue
        text_part = fuse(max(b, 0.0) / best, near.get(id_, 0.0) if near else None)
        score = entry_score(text_part, kind, when, now, weights)
        rel = relative(path, root)
        out.append(
            Found(
                "untrusted" if untrusted else "editable",
                score,
                text,
                scope=scope,
                path=rel,
                line=line,
                section=section,
                stale=bool(stale),
                origin=origin,
                role="withheld" if untrusted else role(origin, approved=bool(approved)),
            )
        )
    return out


def search(
    index: Index,
    workspace: Workspace | None,
    query: str,
    *,
    limit: int = 10,
    max_tokens: int | None = None,
    type_: str | None = None,
    tier: str | None = None,
    include_archived: bool = False,
    include_superseded: bool = False,
    weights: Weights | None = None,
    source: str | None = None,
    scope: str | None = None,
    since: date | None = None,
    until: date | None = None,
    offset: int = 0,
) -> list[Found]:
    """The best ``limit`` results of both halves for ``query``, best first, after the
    first ``offset`` (paging).

    Filters (issue 25): ``type_``, ``tier`` and ``source`` belong to chain memories
    (with one, the workspace is not searched); ``scope`` to workspace entries (with
    it, the chain is not); ``since`` / ``until`` (dates, ``until`` included) to both: a
    chain memory's creation, a workspace entry's confirmed, else added, else file date.
    """
    w = weights_for(query, weights, index.settings.weights)
    want = limit + max(offset, 0)
    lo = _micros(since.isoformat()) if since else None
    hi = _micros((until + timedelta(days=1)).isoformat()) if until else None  # until included
    found: list[Found] = []
    if scope is None:
        chain = chain_search(
            index,
            query,
            limit=want,
            max_tokens=max_tokens,
            type_=type_,
            tier=tier,
            include_archived=include_archived,
            include_superseded=include_superseded,
            weights=w,
            source=source,
            since=lo,
            until=hi,
        )
        found = [Found("provable", h.score, h.text, chain=h) for h in chain]
    if workspace is not None and type_ is None and tier is None and source is None:
        sync_workspace(index.conn, workspace)
        found += workspace_hits(
            index,
            workspace,
            query,
            pool=max(20, 2 * want),
            weights=w,
            include_archived=include_archived,
            scope=scope,
            since=lo,
            until=hi,
        )
    found.sort(key=lambda f: -f.score)
    out: list[Found] = []
    left = max_tokens
    skip = max(offset, 0)
    for f in found:
        if len(out) >= limit:
            break
        if left is not None:
            cost = -(-len(f.text) // 4)
            if cost > left:
                continue
            left -= cost
        if skip:
            skip -= 1
            continue
        out.append(f)
    # the best turn of each session first, as the chain's search shows its page
    order = spread_order(SqliteStore(index), [f.chain.seq if f.chain else None for f in out])
    return [out[i] for i in order]

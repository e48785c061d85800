"""An agent's workspace entries in a fleet's PostgreSQL (issue 29), beside its chain.

index/fleet.py brings a chain's memories into the fleet's database; this
brings the same agent's MEMORY.md, daily, topic, fact and episode entries
there (the rows memory.db's workspace tables hold, workspace/indexing.py), so
that the people who search and review what their agents remember see both
halves in one place:

- **Which scopes.** The user and the project scope. Never the local scope:
  WORKSPACE.md section 2 makes it "this machine only", and a fleet database
  is another machine's. Rows of other project roots this agent synced
  before are kept, as memory.db keeps them.
- **Sync.** File by file, by the hash memory.db keeps of each: a file whose
  hash is the fleet's is not touched; a changed or new one has its entries
  replaced; a file gone from the roots in force has its rows deleted. An
  entry in which the secret screen (chain/format/secrets.py) finds a secret,
  typed into a file by hand, is not copied: the fleet is shared. One
  transaction under the chain's advisory lock, after the chain's own sync
  (its ``mc_chains`` row numbers the agent). The files are the truth; these
  rows are a cache of a cache, and nothing is ever written back.
- **Words.** Each entry's text and section are counted by FTS5's own
  tokenizer (index/words.py), as ws_fts counts them, so that bm25 in the
  fleet is ws_fts's formula: two columns, each with its own length and
  average, a phrase's idf over the entries searched.
- **Search** (``search``): the chain hits of index/fleet_store.py and the
  workspace entries of the same agents, each scored as workspace/recall.py
  scores a workspace entry (bm25 part over the best, recency, importance by
  kind), merged by score. Entries are found by their words only: no vectors
  for workspace entries in a fleet.
- **Review** (``waiting``): MEMORY.md entries an agent or capture wrote that
  no person approved (``ok=``), as capture/review.py lists them on the
  agent's host, where they are approved.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Any, Final

from memory_chain.chain.format.errors import OperationalError
from memory_chain.chain.format.secrets import scan
from memory_chain.chain.format.values import Value
from memory_chain.index import topk
from memory_chain.index.query import REFERENCE_SHARE, query_terms, weights_for
from memory_chain.index.settings import Settings, Weights
from memory_chain.index.words import Words, term_id

from .indexing import sync_workspace
from .recall import entry_score, entry_when, relative
from .scopes import Workspace

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "MIRRORED",
    "FleetEntry",
    "WsFleetSync",
    "entries_of",
    "search",
    "search_entries",
    "sync_entries",
    "waiting",
]

#: The scopes a fleet holds (WORKSPACE.md section 2: the local scope is this machine's).
MIRRORED: Final = ("user", "project")
_COLUMNS: Final = (
    "num, path, line, root, scope, kind, section, text, stale, untrusted, added, confirmed, "
    "mtime_ns, origin, approved, terms, t_words, t_tf, t_len, s_words, s_tf, s_len"
)


class WsFleetSync(Value):
    """What one sync of an agent's workspace into a fleet database did."""

    __slots__ = ("entries", "files", "parsed", "removed", "withheld")
    files: int  # files of the mirrored scopes
    parsed: int  # files whose entries were written again
    removed: int  # files gone since the last sync, their rows deleted
    entries: int  # the agent's workspace entries in the fleet after it
    withheld: int  # entries of the files read that hold a secret: not copied

    def __init__(
        self, files: int, parsed: int, removed: int, entries: int, withheld: int = 0
    ) -> None:
        set_ = object.__setattr__
        set_(self, "files", files)
        set_(self, "parsed", parsed)
        set_(self, "removed", removed)
        set_(self, "entries", entries)
        set_(self, "withheld", withheld)


def _roots(workspace: Workspace) -> list[str]:
    return [str(s.root) for s in workspace.in_order() if s.name in MIRRORED]


def _entry_rows(
    local: sqlite3.Connection, num: int, paths: list[str], words: Words, withheld: list[int]
) -> list[tuple[Any, ...]]:
    """The fleet's rows of the entries of ``paths`` in memory.db, with their words; an
    entry in which the secret screen finds a secret is left out (``withheld[0]`` counts
    them)."""
    rows: list[tuple[Any, ...]] = []
    for at in range(0, len(paths), 500):
        part = paths[at : at + 500]
        marks = ", ".join("?" * len(part))
        rows += local.execute(
            "SELECT e.path, e.line, e.root, e.scope, e.kind, e.section, e.text, e.stale, "
            "e.untrusted, e.added, e.confirmed, f.mtime_ns, e.origin, e.approved "
            "FROM ws_entries e JOIN ws_files f ON f.path = e.path "
            f"WHERE e.path IN ({marks}) ORDER BY e.path, e.line",
            part,
        ).fetchall()
    # a secret typed into a file by hand stays on its host: the fleet is shared
    kept = [r for r in rows if not scan(r[6]) and not (r[5] and scan(r[5]))]
    withheld[0] += len(rows) - len(kept)
    rows = kept
    texts = words.count((i, r[6]) for i, r in enumerate(rows))
    sections = words.count((i, r[5]) for i, r in enumerate(rows) if r[5])
    by_text: dict[int, list[tuple[str, int]]] = {}
    for i, w, n in texts.rows:
        by_text.setdefault(i, []).append((w, n))
    by_section: dict[int, list[tuple[str, int]]] = {}
    for i, w, n in sections.rows:
        by_section.setdefault(i, []).append((w, n))
    out = []
    for i, r in enumerate(rows):
        t = sorted((term_id(w), n) for w, n in by_text.get(i, []))
        s = sorted((term_id(w), n) for w, n in by_section.get(i, []))
        terms = sorted({x for x, _ in t} | {x for x, _ in s})
        out.append(
            (
                num,
                *r[:7],
                bool(r[7]),
                bool(r[8]),
                *r[9:13],
                bool(r[13]),
                terms,
                [x for x, _ in t],
                [n for _, n in t],
                texts.length.get(i, 0),
                [x for x, _ in s],
                [n for _, n in s],
                sections.length.get(i, 0),
            )
        )
    return out


def sync_entries(
    url: str,
    chain_id: str,
    local: sqlite3.Connection,
    workspace: Workspace,
    *,
    rebuild: bool = False,
) -> WsFleetSync:
    """Bring the workspace entries of ``workspace``'s user and project scopes (memory.db
    ``local`` brought up to date with the files first) into the fleet database at
    ``url``, under the agent of chain ``chain_id`` (synced there before); all of them
    again with ``rebuild``."""
    from memory_chain.index.fleet import _session

    sync_workspace(local, workspace)
    roots = _roots(workspace)
    marks = ", ".join("?" * len(roots))
    files = {  # path -> (root, scope, hash)
        r[0]: r[1:]
        for r in local.execute(
            f"SELECT path, root, scope, hash FROM ws_files WHERE root IN ({marks})", roots
        )
    }
    words = Words()
    withheld = [0]
    try:
        with _session(url) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (chain_id,))
            row = conn.execute("SELECT num FROM mc_chains WHERE chain_id = %s", (chain_id,))
            found = row.fetchone()
            if found is None:
                raise OperationalError(
                    f"chain {chain_id} is not in the fleet database yet: its workspace follows "
                    "its chain",
                    hint="run `memory-chain index --url URL` (it syncs both)",
                )
            num = int(found[0])
            if rebuild:
                conn.execute("DELETE FROM mc_ws_entries WHERE num = %s", (num,))
                conn.execute("DELETE FROM mc_ws_files WHERE num = %s", (num,))
            there = dict(
                conn.execute(
                    "SELECT path, hash FROM mc_ws_files WHERE num = %s AND root = ANY(%s)",
                    (num, roots),
                ).fetchall()
            )
            changed = sorted(p for p, f in files.items() if there.get(p) != f[2])
            gone = sorted(p for p in there if p not in files)
            stale = changed + gone
            if stale:
                conn.execute(
                    "DELETE FROM mc_ws_entries WHERE num = %s AND path = ANY(%s)", (num, stale)
                )
                conn.execute(
                    "DELETE FROM mc_ws_files WHERE num = %s AND path = ANY(%s)", (num, stale)
                )
            if changed:
                with conn.cursor().copy(f"COPY mc_ws_entries ({_COLUMNS}) FROM STDIN") as copy:
                    for entry in _entry_rows(local, num, changed, words, withheld):
                        copy.write_row(entry)
                with conn.cursor().copy(
                    "COPY mc_ws_files (num, path, root, scope, hash) FROM STDIN"
                ) as copy:
                    for path in changed:
                        copy.write_row((num, path, *files[path]))
            count = conn.execute("SELECT count(*) FROM mc_ws_entries WHERE num = %s", (num,))
            held = count.fetchone()
    finally:
        words.close()
    return WsFleetSync(
        len(files), len(changed), len(gone), int(held[0]) if held else 0, withheld[0]
    )


# -- search --------------------------------------------------------------------


class FleetEntry(Value):
    """A workspace entry of an agent found in the fleet."""

    __slots__ = (
        "agent",
        "chain",
        "line",
        "origin",
        "path",
        "role",
        "scope",
        "score",
        "section",
        "stale",
        "text",
        "untrusted",
    )
    agent: str
    chain: str
    scope: str
    path: str  # relative to its scope root
    line: int
    section: str
    text: str
    stale: bool
    untrusted: bool
    origin: str
    role: str  # guidance | note | withheld, as workspace/provenance.py says
    score: float

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            object.__setattr__(self, name, fields[name])

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__slots__}
        out["kind"] = "untrusted" if self.untrusted else "editable"
        out["score"] = round(self.score, 6)
        return out


def _bm25(
    rows: list[tuple[Any, ...]], phrases: list[list[int]], n: int, avg: float
) -> dict[int, float]:
    """FTS5's bm25 of the candidate ``rows`` (index, t_words, t_tf, t_len, s_words, s_tf,
    s_len) of a table of two columns (text, section), as fts5_aux.c computes it: a
    phrase's frequency is its instances in either column, the row's length the sum of
    both, ``avg`` that sum's mean over the ``n`` rows, and the phrase's idf counts the
    rows that hold it. A phrase of several words counts, in each column, the fewest of
    its words' instances there (FTS5 also asks them to stand side by side)."""
    columns = [
        [dict(zip(r[1], r[2], strict=True)) for r in rows],
        [dict(zip(r[4], r[5], strict=True)) for r in rows],
    ]
    size = [r[3] + r[6] for r in rows]
    score: dict[int, float] = {}
    for phrase in phrases:
        freq: dict[int, int] = {}
        for column in columns:
            for i, tf in enumerate(column):
                if all(w in tf for w in phrase):
                    freq[i] = freq.get(i, 0) + min(tf[w] for w in phrase)
        w = topk.idf(n, float(len(freq)))
        for i, times in freq.items():
            norm = topk.K1 * (1 - topk.B + (topk.B * size[i] / avg if avg else 0.0))
            score[i] = score.get(i, 0.0) + w * times * (topk.K1 + 1) / (times + norm)
    return {rows[i][0]: b for i, b in score.items()}


def entries_of(
    conn: psycopg.Connection[Any],
    chosen: dict[int, tuple[str, str]],
    query: str,
    *,
    pool: int,
    settings: Settings,
    include_archived: bool = False,
    since: int | None = None,
    until: int | None = None,
    now: int | None = None,
    weights: Weights | None = None,
) -> list[FleetEntry]:
    """The workspace entries of the agents ``chosen`` (num -> (chain id, agent)) that hold
    a word of ``query``, scored as workspace/recall.py scores them; the best ``pool``."""
    from .provenance import role

    words = Words()
    try:
        phrases = [
            list(dict.fromkeys(term_id(w) for w in words.tokens(t))) for t in query_terms(query)
        ]
    finally:
        words.close()
    phrases = [p for p in phrases if p]
    if not phrases or not chosen:
        return []
    nums = sorted(chosen)
    archived = "" if include_archived else "AND kind <> 'archive'"
    stats = conn.execute(
        "SELECT count(*), coalesce(avg(t_len + s_len), 0) FROM mc_ws_entries WHERE num = ANY(%s)",
        (nums,),
    ).fetchone()
    if stats is None or not stats[0]:
        return []
    n = int(stats[0])
    wanted = sorted({w for p in phrases for w in p})
    rows = conn.execute(
        "SELECT num, path, line, root, scope, kind, section, text, stale, untrusted, added, "
        "confirmed, mtime_ns, origin, approved, t_words, t_tf, t_len, s_words, s_tf, s_len "
        f"FROM mc_ws_entries WHERE num = ANY(%s) AND terms && %s::bigint[] {archived}",
        (nums, wanted),
    ).fetchall()
    scored = _bm25([(i, *r[15:21]) for i, r in enumerate(rows)], phrases, n, float(stats[1]))
    if not scored:
        return []
    floor = 0.0
    if REFERENCE_SHARE > 0:
        floor = min(topk.idf(n, REFERENCE_SHARE * n), topk.idf(n, 1))
    best = max(max(scored.values()), floor) or 1.0
    w = weights_for(query, weights, settings.weights)
    now = now if now is not None else time.time_ns() // 1000
    out = []
    for i, b in scored.items():
        r = rows[i]
        when = entry_when(r[11], r[10], r[12])
        if (since is not None and when < since) or (until is not None and when >= until):
            continue
        chain, agent = chosen[r[0]]
        out.append(
            FleetEntry(
                agent=agent,
                chain=chain,
                scope=r[4],
                path=relative(r[1], r[3]),
                line=r[2],
                section=r[6],
                text=r[7],
                stale=r[8],
                untrusted=r[9],
                origin=r[13],
                role="withheld" if r[9] else role(r[13], approved=r[14]),
                score=entry_score(max(b, 0.0) / best, r[5], when, now, w),
            )
        )
    out.sort(key=lambda e: (-e.score, e.agent, e.path, e.line))
    return out[: max(pool, 0)]


def search_entries(
    url: str,
    query: str,
    *,
    agents: list[str] | None = None,
    pool: int = 20,
    settings: Settings | None = None,
    **given: Any,
) -> list[FleetEntry]:
    """``entries_of`` over a new connection to the fleet at ``url``."""
    from memory_chain.index.fleet import _session
    from memory_chain.index.fleet_store import _chosen

    with _session(url) as conn:
        return entries_of(
            conn, _chosen(conn, agents), query, pool=pool, settings=settings or Settings(), **given
        )


def waiting(url: str, *, agents: list[str] | None = None, limit: int = 50) -> dict[str, Any]:
    """The MEMORY.md entries of ``agents`` (or of all) in the fleet that wait for a person:
    an agent's or capture's words with no ``ok=``; at most ``limit``, and how many each
    agent has. They are approved on the agent's host (``memory-chain review approve``)."""
    from memory_chain.index.fleet import _session
    from memory_chain.index.fleet_store import _chosen

    where = "kind = 'memory' AND origin IN ('agent', 'capture') AND NOT approved AND num = ANY(%s)"
    with _session(url) as conn:
        chosen = _chosen(conn, agents)
        nums = sorted(chosen)
        rows = conn.execute(
            f"SELECT num, root, path, scope, line, section, text, origin, added FROM "
            f"mc_ws_entries WHERE {where} ORDER BY added DESC NULLS LAST, num, path, line "
            "LIMIT %s",
            (nums, limit),
        ).fetchall()
        counts = conn.execute(
            f"SELECT num, count(*) FROM mc_ws_entries WHERE {where} GROUP BY num", (nums,)
        ).fetchall()
    return {
        "waiting": [
            {
                "agent": chosen[num][1],
                "chain": chosen[num][0],
                "id": f"{scope}:{line}",
                "path": relative(path, root),
                "section": section,
                "text": text,
                "origin": origin,
                "added": added,
            }
            for num, root, path, scope, line, section, text, origin, added in rows
        ],
        "per_agent": {chosen[n][1]: c for n, c in sorted(counts)},
    }


def search(
    url: str,
    query: str,
    *,
    agents: list[str] | None = None,
    limit: int = 10,
    offset: int = 0,
    scope: str | None = None,
    settings: Settings | None = None,
    **given: Any,
) -> list[Any]:
    """Both halves of the fleet for ``query``, best first, as workspace/recall.py's search
    merges them on one host: the chain hits of ``agents`` (index/fleet_store.py ``search``,
    each a Hit naming its agent) and their workspace entries (FleetEntry). ``given``: the
    chain search's keywords; a chain filter (``type_``, ``tier``, ``source``) leaves the
    workspace out, and ``scope`` (user or project) the chains."""
    from memory_chain.chain.format.errors import InputError
    from memory_chain.index import fleet_store

    if scope is not None and scope not in MIRRORED:
        raise InputError(
            f"a fleet holds the {' and '.join(MIRRORED)} scopes, not {scope!r}",
            hint="the local scope is this machine's only: search it without --fleet",
        )
    want = limit + max(offset, 0)
    found: list[Any] = []
    if scope is None:
        found += fleet_store.search(
            url, query, agents=agents, limit=want, settings=settings, **given
        )
    chain_only = any(given.get(k) is not None for k in ("type_", "tier", "source"))
    if not chain_only:
        entries = search_entries(
            url,
            query,
            agents=agents,
            pool=max(20, 2 * want),
            settings=settings,
            include_archived=bool(given.get("include_archived")),
            since=given.get("since"),
            until=given.get("until"),
            weights=given.get("weights"),
        )
        found += [e for e in entries if scope is None or e.scope == scope]
    found.sort(key=lambda f: -f.score)
    return found[max(offset, 0) : want]

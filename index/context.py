"""The session-start context: what an agent is told first, within a token budget.

Markdown, in this order:

1. a title and the integrity line (always shown, even over budget): whether
   the chain verified, its size and head. A failed verification is shown
   loudly and no entry from the failing seq on is presented;
2. ``## Identity``: identity memories, most important first;
3. ``## Decisions``: committed-tier decisions and commitments;
4. ``## Memories``: the best of the rest by the hybrid score (recency,
   importance, access, and text relevance when a query is given).

Only memories that may be shown (active, not redacted, not expired) appear.
Each section is filled greedily: an item that does not fit what is left of
the budget is skipped and smaller ones are tried; a heading costs tokens
only when its section gets an item. "The rest" is scored over a candidate
pool, not the whole index: the POOL most recent, most important and most
accessed memories, and with a query the candidates of search's ranking
(index.query.text_parts: bm25, linked names, vectors, time).
"""

from __future__ import annotations

from typing import Any, Final

from memory_chain.chain.format.values import Record, Value

from .db import Index
from .integrity import Integrity
from .query import Hit, SqliteStore, query_terms, score_row, text_parts
from .settings import Weights
from .store import COLUMNS, Filter
from .sync import estimate_tokens

__all__ = ["DEFAULT_BUDGET", "Context", "build_context"]

DEFAULT_BUDGET: Final = 2000
#: Candidates per ordering for the "rest" section.
POOL: Final = 200
#: Pinned memories considered at most, per section: the budget (2,000 tokens by default)
#: holds fewer one-line items than this, and reading and scoring a thousand each made the
#: block of a 1M-entry chain (a thousand identities) cost 1.7x that of a 100k one.
MAX_PINNED: Final = 200

_IDENTITY: Final = "m.type = 'identity'"
_DECISION: Final = "m.tier = 'committed' AND m.type IN ('decision', 'commitment')"


class Item(Value):
    __slots__ = ("hit", "line", "section", "tokens")
    section: str
    hit: Hit
    line: str
    tokens: int

    def __init__(self, section: str, hit: Hit, line: str, tokens: int) -> None:
        set_ = object.__setattr__
        set_(self, "section", section)
        set_(self, "hit", hit)
        set_(self, "line", line)
        set_(self, "tokens", tokens)


class Context(Record):
    __slots__ = ("agent", "budget", "header", "integrity", "items", "used", "withheld")
    integrity: Integrity
    agent: str | None
    budget: int
    header: str
    items: list[Item]
    used: int
    withheld: int  # chain memories from tools or quoted text: never injected

    def __init__(
        self,
        integrity: Integrity,
        agent: str | None,
        budget: int,
        header: str,
        items: list[Item] | None = None,
        used: int = 0,
        withheld: int = 0,
    ) -> None:
        self.integrity = integrity
        self.agent = agent
        self.budget = budget
        self.header = header
        self.items = [] if items is None else items
        self.used = used
        self.withheld = withheld

    def markdown(self) -> str:
        out = [self.header]
        section = None
        for item in self.items:
            if item.section != section:
                section = item.section
                out.append(f"\n## {section}\n")
            out.append(item.line + "\n")
        return "".join(out)

    def as_dict(self) -> dict[str, Any]:
        return {
            "integrity": self.integrity.as_dict(),
            "agent": self.agent,
            "budget": self.budget,
            "tokens": self.used,
            "items": [
                {"section": i.section, **i.hit.as_dict(), "tokens": i.tokens} for i in self.items
            ],
            "markdown": self.markdown(),
        }


def _short(h: str | None) -> str:
    return h if h is not None else "-"


def header(integrity: Integrity, agent: str | None) -> str:
    title = f"# Memory context: {agent}\n\n" if agent else "# Memory context\n\n"
    i = integrity
    if i.reason == "no-chain":
        line = (
            "> Integrity: no chain yet (`memory-chain init` makes one): nothing below is "
            "provable; the notes are editable.\n"
        )
    elif not i.checked:
        line = (
            f"> Integrity: NOT CHECKED (verification was skipped). {i.size:,} entries, "
            f"head {_short(i.head)}. Nothing below is vouched for.\n"
        )
    elif i.ok:
        line = (
            f"> Integrity: verified ({i.checked_what}). {i.size:,} entries, "
            f"head {_short(i.head)}.\n"
        )
    else:
        line = (
            f"> **INTEGRITY FAILURE: the chain did not verify at seq {i.failure_seq} "
            f"({i.reason}): {i.message}.** Only entries before seq {i.failure_seq} are shown "
            f"(verified prefix: {i.size:,} entries, head {_short(i.head)}); do not trust this "
            "memory until `memory-chain verify` passes.\n"
        )
    return title + line


def render(hit: Hit) -> str:
    text = " ".join(hit.text.split())
    if hit.role == "note":  # an agent's or capture's words no person approved
        return (
            f"- {text} ({hit.type}, seq {hit.seq}, {hit.ts[:10]}; remembered automatically, "
            "not confirmed by a person)"
        )
    return f"- {text} ({hit.type}, seq {hit.seq}, {hit.ts[:10]})"


def _rows(index: Index, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    return index.conn.execute(sql, params).fetchall()


def build_context(
    index: Index,
    integrity: Integrity,
    *,
    query: str | None = None,
    max_tokens: int = DEFAULT_BUDGET,
    weights: Weights | None = None,
) -> Context:
    """The session-start block for ``index`` (read only: no access is recorded)."""
    w = weights or index.settings.weights
    state = index.state()
    head = header(integrity, state.agent)
    ctx = Context(integrity, state.agent, max_tokens, head, used=estimate_tokens(head))
    now = index.now()
    store = SqliteStore(index)
    chosen = Filter(index.cutoff(now), below=integrity.trusted_below)
    where, params = store.where(chosen)
    top_access = index.max_access()

    def hit(row: tuple[Any, ...], text_part: float = 0.0) -> Hit:
        return score_row(row, text_part, now=now, max_access=top_access, weights=w)

    order = "ORDER BY m.importance DESC, m.created DESC, m.seq DESC"
    base = f"SELECT {COLUMNS} FROM memories m WHERE {where}"

    def pinned_by(index_name: str, which: str) -> list[tuple[Any, ...]]:
        # the partial index in score order (migration 0011): read 200, sort none
        sql = f"SELECT {COLUMNS} FROM memories m INDEXED BY {index_name} WHERE {where}"
        return _rows(index, f"{sql} AND {which} {order} LIMIT {MAX_PINNED}", params)

    identity = pinned_by("memories_identity", _IDENTITY)
    decisions = pinned_by("memories_committed", _DECISION)
    pinned = {r[0] for r in identity} | {r[0] for r in decisions}

    rest: dict[int, Hit] = {}
    terms = query_terms(query) if query else []
    if terms and query:
        found, parts, _ = text_parts(store, query, terms, POOL, chosen)  # search's
        for row in found:
            if row[0] not in pinned:
                rest[row[0]] = hit(row, parts[row[0]])
    no_text = Weights(0.0, w.recency, w.importance, w.access)
    for ordering in ("m.created DESC", "m.importance DESC, m.created DESC", "m.access_count DESC"):
        for row in _rows(index, f"{base} ORDER BY {ordering}, m.seq DESC LIMIT {POOL}", params):
            if row[0] in pinned or row[0] in rest:
                continue
            # Without a query the text part is 0 for all; with one, a memory
            # outside the text matches scores 0 for text.
            rest[row[0]] = score_row(
                row, 0.0, now=now, max_access=top_access, weights=w if terms else no_text
            )
    ranked = sorted(rest.values(), key=lambda h: (-h.score, -h.seq))

    left = max_tokens - ctx.used
    groups = []
    for section, hits in (
        ("Identity", [hit(r) for r in identity]),
        ("Decisions", [hit(r) for r in decisions]),
        ("Memories", ranked),
    ):
        shown = [h for h in hits if h.role != "withheld"]
        ctx.withheld += len(hits) - len(shown)
        groups.append((section, shown))
    for section, hits in groups:
        heading = estimate_tokens(f"\n## {section}\n")
        started = False
        for h in hits:
            line = render(h)
            cost = estimate_tokens(line + "\n")
            extra = 0 if started else heading
            if cost + extra > left:
                continue
            left -= cost + extra
            started = True
            ctx.items.append(Item(section, h, line, cost))
    ctx.used = estimate_tokens(ctx.markdown())
    return ctx

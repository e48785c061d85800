"""The console's pages as HTML (integrations/console.py serves them): data in, markup out.

Plain HTML and one stylesheet, no script: every action is a form, so the
keyboard and a screen reader work as they do on any page, and the strict
CSP (no script at all) costs nothing. Every value is escaped here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlencode

from memory_chain.chain.format.entry import CONTENT_TYPES
from memory_chain.chain.format.entry import SOURCES as CHAIN_SOURCES
from memory_chain.chain.format.entry import TIERS as CHAIN_TIERS

__all__ = ["EntryView", "FileLink", "ScopeView", "layout"]

NAV = (
    ("/", "Memories"),
    ("/review", "Review"),
    ("/search", "Search"),
    ("/session", "Session start"),
    ("/integrity", "Integrity"),
)


def e(value: object) -> str:
    return escape(str(value), quote=True)


def href(to: str, /, **query: object) -> str:
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return e(f"{to}?{urlencode(kept)}" if kept else to)


def layout(title: str, body: str, *, here: str) -> str:
    current = ' aria-current="page"'
    links = "".join(f'<a href="{p}"{current if p == here else ""}>{e(name)}</a>' for p, name in NAV)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · memory-chain</title>"
        '<link rel="stylesheet" href="/static/console.css"></head><body>'
        '<header><div class="bar"><span class="name">memory-chain</span>'
        f'<nav aria-label="Pages">{links}</nav></div></header>'
        f"<main><h1>{e(title)}</h1>{body}</main></body></html>\n"
    )


def notice(text: str, kind: str = "") -> str:
    role = ' role="alert"' if kind == "bad" else ' role="status"'
    return f'<p class="notice {kind}"{role}>{e(text)}</p>'


# -- memories ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntryView:
    """One MEMORY.md entry as the page shows it."""

    scope: str
    line: int
    section: str
    text: str
    stale: bool
    origin: str
    role: str  # guidance, note, withheld
    added: str | None
    confidence: str | None
    seq: int | None
    verified: bool  # the chain verifies up to this seq, and that entry holds these words
    problem: str | None = None  # else why not (an edit after the commit, a redaction ...)


@dataclass(frozen=True, slots=True)
class FileLink:
    path: str
    note: str


@dataclass(frozen=True, slots=True)
class ScopeView:
    name: str
    memory_md: str
    entries: Sequence[EntryView]
    topics: Sequence[FileLink]
    dailies: Sequence[FileLink]


ORIGIN_WORDS = {
    "person": "a person's words",
    "agent": "written by an agent",
    "capture": "captured from a conversation",
    "tool": "from a tool or the web (data only)",
    "quoted": "quoted text (data only)",
}


def _entry(v: EntryView) -> str:
    stale = '<span class="stale" title="not confirmed for 90 days">[?]</span> ' if v.stale else ""
    meta = [f"<span>{e(ORIGIN_WORDS.get(v.origin, v.origin))}</span>"]
    if v.role == "note":
        meta.append('<span class="badge warn">waits for review</span>')
    elif v.role == "withheld":
        meta.append('<span class="badge bad">never injected</span>')
    if v.added:
        meta.append(f"<span>added {e(v.added)}</span>")
    if v.confidence:
        meta.append(f"<span>confidence {e(v.confidence)}</span>")
    if v.seq is not None:
        if v.verified:
            meta.append(
                f'<a class="badge ok" href="{href("/integrity", seq=v.seq)}">'
                f"seq {v.seq} · signed, verified</a>"
            )
        else:
            why = v.problem or "the chain does not verify up to it"
            meta.append(f'<span class="badge bad">seq {v.seq} · not verified: {e(why)}</span>')
    meta.append(f"<span>line {v.line}</span>")
    edit = href("/edit", scope=v.scope, line=v.line)
    return (
        f'<li><div class="text">{stale}{e(v.text)}</div>'
        f'<div class="meta">{"".join(meta)}'
        f'<a href="{edit}" aria-label="Edit line {v.line}: {e(v.text[:40])}">Edit</a></div></li>'
    )


def memories(scopes: Sequence[ScopeView], current: str) -> str:
    chosen = ' aria-current="true"'
    tabs = "".join(
        f'<a href="{href("/", scope=s.name)}"{chosen if s.name == current else ""}>'
        f"{e(s.name)} ({len(s.entries)})</a>"
        for s in scopes
    )
    shown = next((s for s in scopes if s.name == current), scopes[0])
    parts = [f'<nav class="tabs" aria-label="Scopes">{tabs}</nav>']
    parts.append(
        f"<p>MEMORY.md of the {e(shown.name)} scope: <code>{e(shown.memory_md)}</code></p>"
    )
    if not shown.entries:
        parts.append(notice("No entries yet."))
    section = None
    for v in shown.entries:
        if v.section != section:
            if section is not None:
                parts.append("</ul>")
            section = v.section
            parts.append(f'<h2>{e(section)}</h2><ul class="entries">')
        parts.append(_entry(v))
    if section is not None:
        parts.append("</ul>")
    for title, files in (("Topic files", shown.topics), ("Daily files", shown.dailies)):
        if files:
            items = "".join(
                f'<li><a href="{href("/file", scope=shown.name, path=f.path)}">{e(f.path)}</a>'
                f"{' · ' + e(f.note) if f.note else ''}</li>"
                for f in files
            )
            parts.append(f'<h2>{title}</h2><ul class="files">{items}</ul>')
    return "".join(parts)


def chain_memories(recent: Sequence[dict[str, Any]], verified_to: int) -> str:
    """The newest memories of the chain (not replaced, redacted or archived)."""
    parts = ["<h2>Newest in the chain</h2>"]
    if not recent:
        return parts[0] + "<p>No memories in the chain yet.</p>"
    parts.append('<ul class="entries">')
    for m in recent:
        seq = m["seq"]
        ok = seq < verified_to
        badge = (
            f'<a class="badge ok" href="{href("/integrity", seq=seq)}">seq {seq} · signed, '
            "verified</a>"
            if ok
            else f'<span class="badge bad">seq {seq} · not verified</span>'
        )
        parts.append(
            f'<li><div class="text">{e(m["text"])}</div><div class="meta">{badge}'
            f"<span>{e(m['type'])}, {e(m['tier'])}</span><span>{e(str(m['ts'])[:10])}</span>"
            f"<span>source {e(m['source'])}</span></div></li>"
        )
    parts.append("</ul>")
    return "".join(parts)


def file_page(scope: str, path: str, text: str) -> str:
    return (
        f"<p>{e(scope)} scope · <code>{e(path)}</code> · read only here; entries of "
        f'MEMORY.md are edited on <a href="{href("/", scope=scope)}">Memories</a>.</p>'
        f"<pre>{e(text)}</pre>"
    )


# -- edit -------------------------------------------------------------------------------


def edit_form(v: EntryView, *, text: str | None = None, message: str = "") -> str:
    shown = v.text if text is None else text
    return (
        (notice(message, "bad") if message else "")
        + f"<p>{e(v.scope)} scope, section {e(v.section)}, line {v.line}. Saved as your words: "
        "it becomes guidance at the next session start.</p>"
        '<form method="post" action="/edit">'
        f'<input type="hidden" name="scope" value="{e(v.scope)}">'
        f'<input type="hidden" name="line" value="{v.line}">'
        f'<input type="hidden" name="expect" value="{e(v.text)}">'
        '<label for="text">The entry</label>'
        f'<textarea id="text" name="text" required maxlength="1000">{e(shown)}</textarea>'
        '<div class="actions"><button type="submit">Save</button>'
        f'<a class="button secondary" href="{href("/", scope=v.scope)}">Cancel</a></div></form>'
    )


def conflict(v: EntryView, now: str, mine: str) -> str:
    """Both texts after an edit met a change made meanwhile; nothing was written."""
    keep_mine = (
        '<form method="post" action="/edit">'
        f'<input type="hidden" name="scope" value="{e(v.scope)}">'
        f'<input type="hidden" name="line" value="{v.line}">'
        f'<input type="hidden" name="expect" value="{e(now)}">'
        f'<input type="hidden" name="text" value="{e(mine)}">'
        '<button type="submit">Keep mine</button></form>'
    )
    return (
        notice(
            "The entry changed while you edited it (an agent or another window wrote it). "
            "Nothing was saved: choose which text to keep.",
            "bad",
        )
        + '<div class="pair">'
        f'<section aria-labelledby="now"><h2 id="now">In the file now</h2><pre>{e(now)}</pre>'
        f'<a class="button secondary" href="{href("/", scope=v.scope)}">Keep this one</a>'
        "</section>"
        f'<section aria-labelledby="mine"><h2 id="mine">Yours</h2><pre>{e(mine)}</pre>'
        f"{keep_mine}</section></div>"
    )


# -- review -----------------------------------------------------------------------------


def review(waiting: Sequence[dict[str, Any]], message: str = "", kind: str = "ok") -> str:
    parts = [notice(message, kind)] if message else []
    parts.append(
        "<p>What agents and capture remembered on their own. Until a person approves it, "
        "it is shown to sessions as a dated note, not as guidance, and never reaches the "
        "chain.</p>"
    )
    if not waiting:
        parts.append(notice("Nothing waits for review."))
        return "".join(parts)
    parts.append('<ul class="entries">')
    for w in waiting:
        ident = e(w["id"])
        evidence = f"<span>from {e(w['ref'])}</span>" if w.get("ref") else ""
        seen = w.get("evidence")
        quote = ""
        if seen:
            evidence += f"<span>captured at {e(seen['daily'])}</span>"
            if seen.get("quote"):
                quote = (
                    f"<blockquote><p>{e(seen['quote'])}</p><footer>the person's turn "
                    f"{e(seen.get('ref') or '')}</footer></blockquote>"
                )
        parts.append(
            f'<li><div class="text">{e(w["text"])}</div>'
            f'<div class="meta"><span>{e(ORIGIN_WORDS.get(w["origin"], w["origin"]))}</span>'
            f"<span>{e(w['scope'])} scope, {e(w['section'])}, line {w['line']}</span>"
            f"{'<span>added ' + e(w['added']) + '</span>' if w.get('added') else ''}"
            f"{evidence}</div>{quote}"
            '<div class="actions">'
            f'<form class="inline" method="post" action="/review"><input type="hidden" '
            f'name="id" value="{ident}"><input type="hidden" name="action" value="approve">'
            f'<button type="submit" aria-label="Approve {ident}">Approve</button></form>'
            f'<form class="inline" method="post" action="/review"><input type="hidden" '
            f'name="id" value="{ident}"><input type="hidden" name="action" value="reject">'
            f'<button class="danger" type="submit" aria-label="Reject {ident}">Reject</button>'
            "</form>"
            f'<a class="button secondary" href="{href("/edit", scope=w["scope"], line=w["line"])}"'
            f' aria-label="Edit {ident}">Edit</a></div></li>'
        )
    parts.append("</ul>")
    return "".join(parts)


def clashes(pairs: Sequence[dict[str, Any]]) -> str:
    """Entries of one section that say opposite things, side by side, to settle."""
    parts = ["<h2>Contradictions</h2>"]
    if not pairs:
        parts.append("<p>No two entries of a section contradict each other.</p>")
        return "".join(parts)
    for c in pairs:
        ident = e(c["id"])
        buttons = "".join(
            f'<form class="inline" method="post" action="/review"><input type="hidden" '
            f'name="id" value="{ident}"><input type="hidden" name="action" value="{keep}">'
            f'<button class="{style}" type="submit" aria-label="{label} of {ident}">'
            f"{label}</button></form>"
            for keep, label, style in (
                ("left", "Keep left", ""),
                ("right", "Keep right", ""),
                ("both", "Keep both", "secondary"),
            )
        )
        parts.append(
            f'<section class="clash" aria-label="Contradiction {ident}">'
            f'<h3>{e(c["scope"])} scope, {e(c["section"])}</h3><div class="pair">'
            f'<div><p class="where">line {c["left_line"]}</p><pre>{e(c["left"])}</pre></div>'
            f'<div><p class="where">line {c["right_line"]}</p><pre>{e(c["right"])}</pre></div>'
            f'</div><div class="actions">{buttons}</div></section>'
        )
    return "".join(parts)


# -- search -----------------------------------------------------------------------------

TYPES, TIERS, SOURCES = CONTENT_TYPES, CHAIN_TIERS, CHAIN_SOURCES


def _select(name: str, label: str, values: Iterable[str], chosen: str) -> str:
    options = "".join(
        f'<option value="{e(v)}"{" selected" if v == chosen else ""}>{e(v or "any")}</option>'
        for v in ("", *values)
    )
    return (
        f'<div><label for="{name}">{label}</label>'
        f'<select id="{name}" name="{name}">{options}</select></div>'
    )


def search(form: dict[str, str], found: Sequence[dict[str, Any]] | None, message: str) -> str:
    parts = [
        '<form method="get" action="/search" role="search"><div class="filters">'
        '<div class="wide"><label for="q">Words</label>'
        f'<input id="q" type="search" name="q" value="{e(form.get("q", ""))}" required></div>'
        + _select("type", "Type (chain)", TYPES, form.get("type", ""))
        + _select("tier", "Tier (chain)", TIERS, form.get("tier", ""))
        + _select("source", "Source (chain)", SOURCES, form.get("source", ""))
        + _select("scope", "Scope (workspace)", ("user", "project", "local"), form.get("scope", ""))
        + '<div><label for="since">From</label>'
        f'<input id="since" type="date" name="since" value="{e(form.get("since", ""))}"></div>'
        '<div><label for="until">To</label>'
        f'<input id="until" type="date" name="until" value="{e(form.get("until", ""))}"></div>'
        '<div><button type="submit">Search</button></div></div></form>'
    ]
    if message:
        parts.append(notice(message, "bad"))
    if found is None:
        return "".join(parts)
    if not found:
        parts.append(notice("Nothing matched: try other words, or fewer filters."))
        return "".join(parts)
    parts.append(f'<h2>{len(found)} found, best first</h2><ul class="entries">')
    for f in found:
        if f["kind"] == "provable":
            link = href("/integrity", seq=f["seq"])
            where = f'<a class="badge ok" href="{link}">seq {f["seq"]}</a> {e(f.get("type", ""))}'
        else:
            where = f"{e(f.get('scope'))}:{e(f.get('path'))}:{e(f.get('line'))}"
        parts.append(
            f'<li><div class="text">{e(f["text"])}</div><div class="meta">{where}'
            f"<span>{e(f['kind'])}</span><span>{e(f['role'])}</span>"
            f"<span>score {f['score']:.2f}</span></div></li>"
        )
    parts.append("</ul>")
    return "".join(parts)


# -- session start, integrity -------------------------------------------------------------


def session(markdown: str, tokens: int, past: Sequence[dict[str, Any]] = ()) -> str:
    parts = [
        f"<p>The block the next session receives: about {tokens:,} tokens "
        "(characters / 4), verified and built as the SessionStart hook builds it.</p>"
        f"<pre>{e(markdown)}</pre><h2>Past session starts</h2>"
    ]
    if not past:
        parts.append("<p>None logged yet: the SessionStart hook logs what it injects.</p>")
    for record in past:
        items = "".join(
            f'<li>{e(i.get("text", ""))} <span class="where">{e(i.get("where", ""))} · '
            f"{e(i.get('group', ''))}</span></li>"
            for i in record["items"]
            if isinstance(i, dict)
        )
        session_id = str(record.get("session") or "?")[:8]
        parts.append(
            f"<details><summary>{e(record.get('ts', ''))} · session {e(session_id)} · "
            f"{e(record.get('source', ''))} · {len(record['items'])} memories, "
            f"{e(record.get('tokens', '?'))} tokens</summary><ul>{items}</ul></details>"
        )
    return "".join(parts)


def integrity(
    verified: dict[str, Any],
    checkpoints: Sequence[tuple[int, str]],
    anchors: Sequence[dict[str, Any]],
    seq: str,
) -> str:
    if verified["ok"]:
        said = notice(
            f"The chain verifies: {verified['entries']:,} entries, every signature and "
            f"link checked; {verified['checked']}.",
            "ok",
        )
    else:
        f = verified.get("failure") or {}
        said = notice(
            f"The chain does NOT verify: at seq {f.get('seq')}, {f.get('message')} "
            f"({f.get('reason')}). Memories from there on are not shown to sessions.",
            "bad",
        )
    rows = "".join(
        f"<tr><td>{size:,}</td><td><code>{e(root)}</code></td></tr>" for size, root in checkpoints
    )
    marks = "".join(
        f"<tr><td>{e(a.get('network'))}</td><td>{e(a.get('tree_size'))}</td>"
        f"<td>{e(a.get('state'))}</td><td><code>{e(a.get('tx'))}</code></td></tr>"
        for a in anchors
    )
    return (
        said
        + f"<p>Head: <code>{e(verified.get('head'))}</code></p>"
        + '<h2>Prove a memory</h2><form method="get" action="/prove">'
        '<label for="seq">Entry seq</label>'
        f'<input id="seq" type="number" min="1" name="seq" value="{e(seq)}" required>'
        '<div class="actions"><button type="submit" name="as" value="page">Download the proof '
        'page</button><button class="secondary" type="submit" name="as" value="bundle">'
        "Download the proof bundle</button></div></form><p>The page checks itself in any "
        "browser, offline: signature, inclusion in the signed checkpoint, and the memory's "
        "words. The bundle is what <code>memory-chain verify-proof</code> checks.</p>"
        + (
            f"<h2>Checkpoints</h2><table><thead><tr><th>tree size</th><th>root</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
            if rows
            else "<h2>Checkpoints</h2><p>None yet: proving a memory makes one.</p>"
        )
        + (
            "<h2>Anchors</h2><table><thead><tr><th>network</th><th>tree size</th>"
            f"<th>state</th><th>transaction</th></tr></thead><tbody>{marks}</tbody></table>"
            if marks
            else "<h2>Anchors</h2><p>None.</p>"
        )
    )


def refused(message: str) -> str:
    return notice(message, "bad")

"""``memory-chain ui``: a local web page to see, search, review, edit and prove what an agent
remembers (issue 28), on the ASGI stack the ``mcp`` dependency brings (starlette, uvicorn).

Who may use it: the person at this machine who has the URL it printed.

* It listens on 127.0.0.1 only. A request whose Host is not that address (a
  DNS-rebinding page) is refused.
* The URL carries a one-time token. The first request that brings it gets a
  session cookie (HttpOnly, SameSite=Strict) and a redirect to the same page
  without the token; the token is then spent. Any other request without the
  cookie is refused (403).
* A form is accepted only from the console's own origin (the Origin header),
  so another site's page cannot post to it.
* Every page has a strict Content-Security-Policy: no script, nothing from
  elsewhere. Every request is logged to ``<data dir>/logs/console``.

What it may touch: the workspace's memory files through the same operations
as the command line (a person's words, the secret screen, the archive, the
conflict check), the review queue, and read-only views of the chain. Pages
are rendered by console_pages; handlers are ``async`` and call the library
directly, so the index's SQLite connection stays in the server's one thread.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs

from memory_chain.chain.format.errors import MemoryChainError

from . import console_pages as pages
from .api import Memory
from .files import append_line

if TYPE_CHECKING:
    from .types import ContentType, Scope, Source, Tier

__all__ = ["Console", "serve"]

COOKIE = "mc_console"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer makes a form's Origin "null"
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
STYLESHEET = Path(__file__).with_name("console.css")

Handler = Callable[["Console", Any], Awaitable[Any]]


class Console:
    """The console's state: the memory it shows, the token, the session key, the port."""

    def __init__(self, memory: Memory, *, token: str, port: int) -> None:
        self.memory = memory
        self.token: str | None = token  # None once spent
        self.session = secrets.token_urlsafe(32)
        self.port = port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}
        #: the user turns of each transcript read for the Review page's quotes, by (path,
        #: size, mtime): a transcript is read again only when it changed
        self.transcripts: dict[tuple[str, int, int], dict[str, str]] = {}

    # -- the guard (an ASGI middleware around the routes) ------------------------------

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        routes = [
            Route("/", self._page(memories_page)),
            Route("/file", self._page(file_page)),
            Route("/edit", self._page(edit_page), methods=["GET", "POST"]),
            Route("/review", self._page(review_page), methods=["GET", "POST"]),
            Route("/search", self._page(search_page)),
            Route("/session", self._page(session_page)),
            Route("/integrity", self._page(integrity_page)),
            Route("/prove", self._page(prove_page)),
            Route("/static/console.css", self._page(stylesheet)),
            Route("/favicon.ico", self._page(no_icon)),
        ]
        inner = Starlette(routes=routes)

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return

            async def sending(message: Any) -> None:
                if message["type"] == "http.response.start":
                    self._log(scope, message["status"])  # before the reply: none goes unlogged
                    message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
                await send(message)

            refusal = self._refusal(scope)
            if refusal is not None:
                await _plain(sending, *refusal)
            elif (spent := self._spend_token(scope)) is not None:
                await _redirect(sending, spent, cookie=self.session)
            else:
                await inner(scope, receive, sending)

        return guarded

    def _refusal(self, scope: Any) -> tuple[int, str] | None:
        headers = dict(scope["headers"])
        if headers.get(b"host", b"").decode("latin-1") not in self.hosts:
            return 403, "refused: this console answers only at 127.0.0.1"
        if scope["method"] not in ("GET", "HEAD", "POST"):
            return 405, "refused: only GET and POST"
        if scope["method"] == "POST":
            origin = headers.get(b"origin", b"").decode("latin-1")
            if origin not in self.origins:
                return 403, "refused: a form from another origin"
        if self._has_session(headers) or self._token_in(scope):
            return None
        return 403, "refused: open the link `memory-chain ui` printed (its token works once)"

    def _has_session(self, headers: dict[bytes, bytes]) -> bool:
        for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and hmac.compare_digest(value, self.session):
                return True
        return False

    def _token_in(self, scope: Any) -> bool:
        if self.token is None:
            return False
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        return hmac.compare_digest(given, self.token)

    def _spend_token(self, scope: Any) -> str | None:
        """The page to go to, when this request brought the one-time token (now spent)."""
        if not self._token_in(scope):
            return None
        self.token = None
        return str(scope["path"]) if scope["path"].startswith("/") else "/"

    def _log(self, scope: Any, status: int) -> None:
        with contextlib.suppress(OSError):
            append_line(
                self.memory.data_dir,
                "console",
                f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {scope['method']} "
                f"{scope['path']} {status}",
            )

    def _page(self, handler: Handler) -> Callable[[Any], Awaitable[Any]]:
        async def endpoint(request: Any) -> Any:
            return await handler(self, request)

        return endpoint


async def _plain(send: Any, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Any, location: str, *, cookie: str) -> None:
    headers = [
        (b"location", location.encode()),
        (b"set-cookie", f"{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/".encode()),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _html(title: str, body: str, *, here: str, status: int = 200) -> Any:
    from starlette.responses import HTMLResponse

    return HTMLResponse(pages.layout(title, body, here=here), status_code=status)


async def _form(request: Any) -> dict[str, str]:
    raw = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


# -- pages ------------------------------------------------------------------------------


def _entries(console: Console, name: str, verified_to: int | None = None) -> list[pages.EntryView]:
    from memory_chain.workspace.files import read_bytes
    from memory_chain.workspace.integrity import index_lookup, seq_problem
    from memory_chain.workspace.markdown import Document
    from memory_chain.workspace.provenance import origin_of, role

    memory = console.memory
    scope = memory.workspace.scope(name)
    doc = Document.parse(read_bytes(scope.memory_md) or b"")
    if verified_to is None:
        verified_to = _verified_size(console)
    lookup = index_lookup(memory.index.conn) if memory.has_chain else None
    out = []
    for entry in doc.entries():
        meta = entry.meta
        origin = origin_of(entry)
        seq = meta.seq
        # "signed, verified" only when the chain verifies to that seq AND that entry holds
        # these words: a line edited after it was committed says so instead
        problem = None
        if seq is not None:
            found = seq_problem(entry, lookup) if lookup else ("no-chain", "no chain here")
            problem = found[1] if found else None
        out.append(
            pages.EntryView(
                scope=name,
                line=entry.line,
                section=entry.section or "Notes",
                text=entry.text,
                stale=entry.stale,
                origin=origin,
                role=role(origin, approved=bool(meta.get("ok"))),
                added=meta.get("added"),
                confidence=meta.get("conf"),
                seq=seq,
                verified=seq is not None and problem is None and seq < verified_to,
                problem=problem,
            )
        )
    return out


def _verified_size(console: Console) -> int:
    """How many entries of the chain verify (0 without a chain or when it fails at 0)."""
    memory = console.memory
    if not memory.has_chain:
        return 0
    report = memory.verify()
    if report["ok"]:
        return report["entries"]
    failure = report["failure"]
    return failure["seq"] if failure else 0


def _files(console: Console, name: str) -> tuple[list[pages.FileLink], list[pages.FileLink]]:
    listed = console.memory.files({"tool": "list", "scope": name})
    topics: list[pages.FileLink] = []
    dailies: list[pages.FileLink] = []
    for f in listed.get("result", []) if listed.get("ok") else []:
        path = f["path"]
        if path == "MEMORY.md" or path.startswith("memory/archive/"):
            continue
        link = pages.FileLink(path, f.get("summary") or "")
        (dailies if path.startswith("memory/") else topics).append(link)
    dailies.sort(key=lambda f: f.path, reverse=True)
    return topics, dailies


async def memories_page(console: Console, request: Any) -> Any:
    scopes = list(console.memory.workspace.scopes)
    current = request.query_params.get("scope") or scopes[0]
    if current not in scopes:
        return _html("Memories", pages.refused(f"no scope {current!r}"), here="/", status=404)
    views = []
    verified = _verified_size(console)  # one incremental verify per page
    for name in scopes:
        topics, dailies = _files(console, name) if name == current else ([], [])
        path = str(console.memory.workspace.scope(name).memory_md)
        entries = _entries(console, name, verified)
        views.append(pages.ScopeView(name, path, entries, topics, dailies))
    memory = console.memory
    recent = [dict(m) for m in memory.recent(limit=20)] if memory.has_chain else []
    body = pages.memories(views, current) + pages.chain_memories(recent, verified)
    return _html("Memories", body, here="/")


async def file_page(console: Console, request: Any) -> Any:
    scope = request.query_params.get("scope", "")
    path = request.query_params.get("path", "")
    if scope not in console.memory.workspace.scopes:
        return _html("File", pages.refused(f"no scope {scope!r}"), here="/", status=404)
    reply = console.memory.files({"tool": "read", "scope": scope, "path": path})
    if not reply.get("ok"):
        why = f"refused: {reply.get('error')} (only the workspace's memory files are shown)"
        return _html("File", pages.refused(why), here="/", status=403)
    return _html(path, pages.file_page(scope, path, reply["result"]), here="/")


def _entry_at(console: Console, scope: str, line: str) -> pages.EntryView | None:
    if scope not in console.memory.workspace.scopes or not line.isdigit():
        return None
    return next((v for v in _entries(console, scope) if v.line == int(line)), None)


async def edit_page(console: Console, request: Any) -> Any:
    from memory_chain.workspace.ops import EditConflict, update

    form = await _form(request) if request.method == "POST" else dict(request.query_params)
    v = _entry_at(console, form.get("scope", ""), form.get("line", ""))
    if v is None:
        return _html("Edit", pages.refused("no such entry"), here="/", status=404)
    if request.method == "GET":
        return _html("Edit an entry", pages.edit_form(v), here="/")
    text = form.get("text", "")
    scope = console.memory.workspace.scope(v.scope)
    try:
        update(scope, str(v.line), text, expect=form.get("expect", ""), origin="person")
    except EditConflict as exc:
        return _html("Edit conflict", pages.conflict(v, exc.current, text), here="/", status=409)
    except MemoryChainError as exc:
        why = f"Not saved: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        return _html(
            "Edit an entry", pages.edit_form(v, text=text, message=why), here="/", status=422
        )
    from starlette.responses import RedirectResponse

    return RedirectResponse(f"/?scope={v.scope}", status_code=303)


async def review_page(console: Console, request: Any) -> Any:
    from memory_chain.capture import review

    message, kind = "", "ok"
    if request.method == "POST":
        form = await _form(request)
        ident, action = form.get("id", ""), form.get("action", "")
        try:
            if action == "approve":
                done = review.approve(
                    console.memory.workspace, ident, chain=console.memory.chain_door()
                )
                where = f" and committed as seq {done['seq']}" if done.get("seq") else ""
                message = f"Approved {ident}{where}: {done['text']}"
            elif action == "reject":
                done = review.reject(console.memory.workspace, ident)
                message = f"Rejected {ident}: archived, and not captured again: {done['text']}"
            elif action in ("left", "right", "both"):
                done = review.settle(console.memory.workspace, ident, action)
                message = (
                    f"Kept both entries of {ident}"
                    if action == "both"
                    else f"Kept the {action} entry of {ident}; archived: {done['removed']}"
                )
            else:
                message, kind = f"no action {action!r}", "bad"
        except MemoryChainError as exc:
            message, kind = f"Nothing done: {exc.message}", "bad"
    queue = console.memory.review_queue()
    texts = [w["text"] for w in queue]
    found = review.evidence(console.memory.workspace, texts, cache=console.transcripts)
    waiting: list[dict[str, Any]] = []
    for w in queue:
        seen = found.get(w["text"])
        waiting.append({**w, "evidence": seen.as_dict() if seen else None})
    clashes = [c.as_dict() for c in review.contradictions(console.memory.workspace)]
    body = pages.review(waiting, message, kind) + pages.clashes(clashes)
    return _html("Review", body, here="/review", status=200 if kind == "ok" else 422)


async def search_page(console: Console, request: Any) -> Any:
    keys = ("q", "type", "tier", "source", "scope", "since", "until")
    form = {k: request.query_params.get(k, "") for k in keys}
    if not form["q"].strip():
        return _html("Search", pages.search(form, None, ""), here="/search")
    try:
        found = console.memory.search(
            form["q"],
            limit=20,
            type=cast("ContentType | None", form["type"] or None),
            tier=cast("Tier | None", form["tier"] or None),
            source=cast("Source | None", form["source"] or None),
            scope=cast("Scope | None", form["scope"] or None),
            since=form["since"] or None,
            until=form["until"] or None,
        )
    except MemoryChainError as exc:
        return _html("Search", pages.search(form, None, exc.message), here="/search", status=422)
    return _html("Search", pages.search(form, [dict(f) for f in found], ""), here="/search")


async def session_page(console: Console, request: Any) -> Any:
    from memory_chain.index.sync import estimate_tokens

    block = console.memory.context()["markdown"]
    past = _past_sessions(console.memory.data_dir / "logs" / "injected.jsonl")
    body = pages.session(block, estimate_tokens(block), past)
    return _html("Session start", body, here="/session")


def _past_sessions(path: Path, most: int = 20) -> list[dict[str, Any]]:
    """The newest ``most`` session starts of the SessionStart hook's log, newest first (its
    last 1 MiB is read; a line that is not a record is skipped)."""
    import orjson

    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - (1 << 20)))
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for raw in reversed(lines):
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("items"), list):
            out.append(record)
            if len(out) == most:
                break
    return out


async def integrity_page(console: Console, request: Any) -> Any:
    memory = console.memory
    if not memory.has_chain:
        body = pages.refused("No chain yet: `memory-chain init` creates one.")
        return _html("Integrity", body, here="/integrity")
    from memory_chain.chain.log.anchors import read_anchors
    from memory_chain.chain.log.checkpoint_store import load_checkpoints

    layout = memory.ledger.layout
    checkpoints = [(cp.size, cp.root.hex()) for cp in load_checkpoints(layout)][-20:]
    anchors = read_anchors(layout).records[-20:]
    body = pages.integrity(
        dict(memory.verify()), checkpoints, anchors, request.query_params.get("seq", "")
    )
    return _html("Integrity", body, here="/integrity")


async def prove_page(console: Console, request: Any) -> Any:
    from starlette.responses import Response

    from memory_chain.auditor import page
    from memory_chain.chain.audit.proofs import prove_entry

    raw = request.query_params.get("seq", "")
    if not raw.isdigit():
        return _html(
            "Integrity", pages.refused("the seq is a number"), here="/integrity", status=422
        )
    seq = int(raw)
    try:
        bundle = prove_entry(console.memory.ledger, seq, with_content=True)
    except MemoryChainError as exc:
        return _html("Integrity", pages.refused(exc.message), here="/integrity", status=422)
    if request.query_params.get("as") == "bundle":
        name, body, kind = f"memory-{seq}.proof.json", bundle, "application/json"
    else:
        name, body = f"memory-{seq}-proof.html", page(bundle, name=f"memory-{seq}")
        kind = "text/html; charset=utf-8"
    return Response(
        body, media_type=kind, headers={"content-disposition": f'attachment; filename="{name}"'}
    )


async def no_icon(console: Console, request: Any) -> Any:
    from starlette.responses import Response

    return Response(status_code=204)  # a browser asks; the console has none


async def stylesheet(console: Console, request: Any) -> Any:
    from starlette.responses import Response

    return Response(STYLESHEET.read_bytes(), media_type="text/css; charset=utf-8")


# -- serving ----------------------------------------------------------------------------


def serve(
    memory: Memory,
    *,
    port: int,
    ready: Callable[[str], None],
) -> None:
    """Serve on 127.0.0.1 (``port`` 0: a free one) until Ctrl-C; ``ready(url)`` is called
    with the one-time URL once the port listens."""
    from .loopback import listen, run

    sock = listen(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    console = Console(memory, token=token, port=port)
    ready(f"http://127.0.0.1:{port}/?token={token}")
    with memory:
        run(console.app(), sock, lifespan="off")

"""A witness over HTTP (c2sp.org/tlog-witness): its add-checkpoint endpoint, and the
client a log uses to ask for cosignatures.

The rules are chain/log/cosigner.py's; this module only moves bytes. The server
listens on 127.0.0.1 (integrations/loopback.py): a witness for others is put behind
a reverse proxy or a bastion (c2sp.org/https-bastion), as the spec suggests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory_chain.chain.audit.publishing import Submit
    from memory_chain.chain.log.cosigner import Cosigner

__all__ = ["MAX_BODY", "app", "serve", "submitter"]

#: The largest request body read: a checkpoint note (64 KiB at most) and 63 proof lines.
MAX_BODY = (1 << 16) + 64 * 64


def app(cosigner: Cosigner) -> Any:
    """The ASGI app: POST /add-checkpoint."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from memory_chain.chain.log.cosigner import SIZE_TYPE, Refused, parse_add_checkpoint

    plain = "text/plain; charset=utf-8"

    async def add_checkpoint(request: Request) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return Response(b"request too large\n", status_code=413, media_type=plain)
        try:
            parsed = parse_add_checkpoint(body)
            # the state's flock may wait: not on the event loop
            line = await run_in_threadpool(cosigner.add, parsed)
        except Refused as exc:
            kind = SIZE_TYPE if exc.reason == "old-size" else plain
            return Response(exc.body, status_code=exc.status, media_type=kind)
        return Response(line.encode(), media_type=plain)

    return Starlette(routes=[Route("/add-checkpoint", add_checkpoint, methods=["POST"])])


def serve(cosigner: Cosigner, *, port: int, ready: Callable[[str], None]) -> None:
    """Serve on 127.0.0.1 (``port`` 0: a free one) until Ctrl-C; ``ready(url)`` is called
    with the submission prefix once the port listens."""
    from .loopback import listen, run

    sock = listen(port)
    ready(f"http://127.0.0.1:{sock.getsockname()[1]}")
    run(app(cosigner), sock, lifespan="off")


def submitter(prefix: str, timeout: float = 20.0) -> Submit:
    """Sends add-checkpoint requests to the witness at ``prefix`` (its submission prefix).

    A witness that cannot be reached answers status 0 with the reason as its body.
    """
    import urllib.error
    import urllib.request

    url = prefix.rstrip("/") + "/add-checkpoint"

    def submit(body: bytes) -> tuple[int, str, bytes]:
        request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "text/plain"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.headers.get("Content-Type", ""), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type", ""), exc.read()
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return 0, "", f"cannot reach {url}: {reason}".encode()

    return submit

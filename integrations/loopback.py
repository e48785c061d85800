"""Serving an ASGI app on 127.0.0.1 until Ctrl-C: what the MCP server's HTTP transport and
the console share."""

from __future__ import annotations

import contextlib
import socket
from typing import Any, Literal

__all__ = ["listen", "run"]


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (0: a free one); a busy port is a one-line
    OperationalError. It listens before the server starts, so a client that connects at
    once waits in the backlog."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        from memory_chain.chain.format.errors import OperationalError

        raise OperationalError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror}", hint="pass another --port"
        ) from None
    return sock


def run(app: Any, sock: socket.socket, *, lifespan: Literal["on", "off"]) -> None:
    """Serve ``app`` on ``sock`` with uvicorn (one event loop, this thread) until Ctrl-C,
    which ends it normally; the socket is closed after."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan=lifespan, access_log=False)
    # uvicorn stops cleanly on Ctrl-C, then raises it again: a normal end here
    with sock, contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])

"""The official MCP SDK's client against `memory-chain mcp` as a real subprocess over stdio."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .cli import SCRIPT, Cli

Session = Callable[[ClientSession], Awaitable[Any]]

#: The environment the server sees: the CLI's home, PATH and data directory (and state).
PASSED = (
    "HOME",
    "PATH",
    "MEMORY_CHAIN_DIR",
    "MEMORY_CHAIN_STATE_DIR",
    "XDG_STATE_HOME",
    "MEMORY_CHAIN_SEMANTIC",  # lexical unless a test asks (tests/conftest.py)
)


def params(cli: Cli, cwd: Path) -> StdioServerParameters:
    env = {k: v for k, v in cli.env.items() if k in PASSED}
    return StdioServerParameters(command=SCRIPT, args=["mcp"], env=env, cwd=str(cwd))


def session(cli: Cli, cwd: Path, body: Session) -> Any:
    """Start the server for ``cli`` in ``cwd``, initialize, run ``body``; its result."""

    async def main() -> Any:
        async with (
            stdio_client(params(cli, cwd)) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await body(s)

    return asyncio.run(asyncio.wait_for(main(), 60))


def text(result: Any) -> str:
    """The text parts of a tool result, joined."""
    return "".join(c.text for c in result.content if c.type == "text")


__all__ = ["Session", "params", "session", "text"]

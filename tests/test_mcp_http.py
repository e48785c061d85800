"""The MCP server's streamable HTTP transport (issue 26): `memory-chain mcp --http` as a real
subprocess on loopback, driven by the official SDK's client and the Inspector's CLI; every
request needs the token it prints."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.cli import SCRIPT, Cli
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from test_mcp_server import INSPECTOR, TOOLS

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str, token: str) -> None:
        self.proc, self.url, self.token = proc, url, token


def _start(cli: Cli, cwd: Path, *args: str, env: dict[str, str] | None = None) -> Served:
    proc = subprocess.Popen(
        [SCRIPT, "mcp", "--http", *args],
        env={**cli.env, "MEMORY_CHAIN_SEMANTIC": "0", **(env or {})},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()
    token = proc.stdout.readline().split()
    assert url and url[0] == "url" and token and token[0] == "token", (url, token)
    return Served(proc, url[1], token[1])


def _stop(served: Served) -> tuple[int, str]:
    served.proc.send_signal(signal.SIGINT)
    try:
        _, err = served.proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        raise
    return served.proc.returncode, err


@pytest.fixture
def http(populated: Cli, tmp_path: Path) -> Iterator[tuple[Cli, Served]]:
    here = tmp_path / "server-cwd"
    here.mkdir()
    served = _start(populated, here)
    try:
        yield populated, served
    finally:
        if served.proc.poll() is None:
            served.proc.kill()
            served.proc.wait()


def _post(url: str, headers: dict[str, str], body: Any = INIT) -> tuple[int, str]:
    data = json.dumps(body).encode()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=data, headers={**base, **headers}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _client_session(url: str, token: str, body: Any) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await body(s)

    return asyncio.run(asyncio.wait_for(main(), 60))


def test_the_sdk_client_works_over_http_with_the_token(http: tuple[Cli, Served]) -> None:
    cli, served = http
    assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/mcp")
    assert len(served.token) >= 40

    async def body(s: ClientSession) -> Any:
        tools = (await s.list_tools()).tools
        found = await s.call_tool("search", {"query": "pnpm"})
        added = await s.call_tool("add", {"content": "Releases are tagged vX.Y.Z"})
        return tools, found, added

    tools, found, added = _client_session(served.url, served.token, body)
    assert TOOLS == {t.name for t in tools}
    assert found.structured_content["results"][0]["text"] == "Use pnpm, not npm"
    assert added.structured_content["seq"] == 5
    code, err = _stop(served)
    assert code == 0, err
    assert "Traceback" not in err
    assert cli.ok("verify").code == 0 and b"vX.Y.Z" not in cli.chain.read_bytes()
    assert cli.ok("show", "5", "--content").out.rstrip().endswith("Releases are tagged vX.Y.Z")


def test_without_the_token_every_request_is_refused(http: tuple[Cli, Served]) -> None:
    cli, served = http
    before = cli.chain.read_bytes()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": served.token}):
        code, text = _post(served.url, headers)
        assert code == 401, (headers, code, text)
        assert json.loads(text)["error"].startswith("missing or wrong token")
    add = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"content": "injected"}},
    }
    assert _post(served.url, {}, add)[0] == 401
    assert _post(served.url.replace("/mcp", "/other"), {})[0] == 401
    ok, _ = _post(served.url, {"Authorization": f"Bearer {served.token}"})
    assert ok == 200
    assert cli.chain.read_bytes() == before


def test_a_page_of_another_site_is_refused_even_with_the_token(http: tuple[Cli, Served]) -> None:
    """DNS rebinding: a browser page of evil.example resolved to 127.0.0.1 sends its own
    Host and Origin; the SDK's loopback check refuses both."""
    _, served = http
    auth = {"Authorization": f"Bearer {served.token}"}
    assert _post(served.url, {**auth, "Origin": "http://evil.example"})[0] in (400, 403)
    port = served.url.split(":")[2].split("/")[0]
    assert _post(served.url, {**auth, "Host": f"evil.example:{port}"})[0] in (400, 421)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_inspector_cli_drives_it_over_http(http: tuple[Cli, Served]) -> None:
    _, served = http

    def inspector(*args: str, token: str = served.token) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                str(INSPECTOR),
                *("--cli", "--transport", "http", "--server-url", served.url),
                *("--header", f"Authorization: Bearer {token}", *args),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )

    listed = inspector("--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = json.loads(listed.stdout)["tools"]
    assert TOOLS == {t["name"] for t in tools}
    assert all(t["outputSchema"]["properties"] and t["annotations"] for t in tools)
    called = inspector("--method", "tools/call", "--tool-name", "get", "--tool-arg", "seq=1")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["text"] == "Use pnpm, not npm"
    refused = inspector("--method", "tools/list", token="wrong")
    assert refused.returncode != 0 and '"tools"' not in refused.stdout


def test_a_token_from_the_environment_is_used_and_not_printed(
    populated: Cli, tmp_path: Path
) -> None:
    served = _start(populated, tmp_path, env={"MEMORY_CHAIN_MCP_TOKEN": "a-token-set-by-hand"})
    try:
        assert served.token == "$MEMORY_CHAIN_MCP_TOKEN"
        assert _post(served.url, {"Authorization": "Bearer a-token-set-by-hand"})[0] == 200
        assert _post(served.url, {"Authorization": "Bearer other"})[0] == 401
    finally:
        code, err = _stop(served)
    assert code == 0 and "a-token-set-by-hand" not in err


def test_a_busy_port_and_a_port_without_http_are_one_line_errors(
    populated: Cli, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        busy = populated.run("mcp", "--http", "--port", port, env={"MEMORY_CHAIN_SEMANTIC": "0"})
    assert busy.code != 0 and busy.out == ""
    assert f"cannot listen on 127.0.0.1:{port}" in busy.err
    assert len(busy.err.strip().splitlines()) <= 2, busy.err  # the error and its hint
    plain = populated.run("mcp", "--port", "8765")
    assert plain.code == 2 and "--port needs --http" in plain.err
    assert not os.environ.get("MEMORY_CHAIN_MCP_TOKEN")  # the tests' own environment is clean

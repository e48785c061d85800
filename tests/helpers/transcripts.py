"""Claude Code session records in the shapes the transcript JSONL holds (issue 12).

Each builder returns one record (a dict); ``jsonl`` joins them into a file's
bytes. Shapes: user records whose ``message.content`` is a string or a
list of text and tool_result blocks, assistant records with text, tool_use
and thinking blocks, summary and system records, sidechain and meta records.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import Any

SESSION = "0e26ec2f-937e-482c-b889-bc126f996913"
_ids = itertools.count(1)


def _base(kind: str, **extra: Any) -> dict[str, Any]:
    n = next(_ids)
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/user/my-project",
        "sessionId": SESSION,
        "version": "2.0.31",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"{n:08x}-0000-4000-8000-000000000000",
        "timestamp": f"2026-11-25T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        **extra,
    }


def user(text: str, **extra: Any) -> dict[str, Any]:
    return _base("user", message={"role": "user", "content": text}, **extra)


def user_blocks(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return _base("user", message={"role": "user", "content": list(blocks)}, **extra)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_result(content: Any, *, error: bool = False, tool_id: str = "toolu_01") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if error:
        block["is_error"] = True
    return user_blocks(block, toolUseResult={"stdout": "", "stderr": ""})


def assistant(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message = {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(blocks),
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return _base("assistant", message=message, requestId="req_1", **extra)


def tool_use(command: str, *, name: str = "Bash", tool_id: str = "toolu_01") -> dict[str, Any]:
    return assistant(
        {"type": "tool_use", "id": tool_id, "name": name, "input": {"command": command}}
    )


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "sig"}


def summary(text: str) -> dict[str, Any]:
    return {"type": "summary", "summary": text, "leafUuid": "leaf-1"}


def system(text: str) -> dict[str, Any]:
    return _base("system", content=text, level="info", subtype="compact_boundary")


def jsonl(records: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)

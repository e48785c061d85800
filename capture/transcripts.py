"""Transcript readers: Claude Code session JSONL, plain turns JSONL, the session buffer.

Each reader turns a file, from a byte offset on, into ``Turn`` values and
says where it stopped, so the next capture starts there (capturing the same
file twice reads nothing new). Only complete lines are consumed: a last line
still being written (no final LF) is left for the next read.

Nothing in a transcript is fatal. Unknown record types, lines that are not
JSON, invalid UTF-8 and records over ``MAX_RECORD_BYTES`` (a 10 MB tool
output) are skipped and counted in ``Batch.skipped``.

Formats (specs/WORKSPACE.md section 12):

* **claude**: Claude Code's ``~/.claude/projects/<project>/<session>.jsonl``.
  Records ``user`` and ``assistant`` carry ``message.content``, a string or
  a list of ``text``, ``tool_use``, ``tool_result``, ``thinking`` and
  ``image`` blocks; ``summary`` and ``system`` records; every record may
  carry ``uuid``, ``sessionId``, ``cwd``, ``timestamp``, ``isSidechain``
  (a subagent's conversation: its "user" is the main agent, not a person)
  and ``isMeta`` (text Claude Code itself inserted).
* **turns**: one ``{"role", "content", "timestamp", "session"}`` per line;
  role ``user``, ``assistant``, ``tool`` (optionally ``"error": true``) or
  ``system``.
* **openclaw**: an OpenClaw (pi agent) session JSONL: a ``session`` header
  record, then ``message`` records whose ``message`` has ``role`` ``user``,
  ``assistant`` (``text`` and ``toolCall`` blocks) or ``toolResult``
  (``content`` blocks, ``isError``); other record types are skipped.
* **buffer**: seed 001 section A1's ``session-buffer.md``: bullets
  ``- [HH:MM] role: text`` under optional ``## session <id>`` headings.

And one that is not a file: ``excerpt`` reads the text OpenClaw hands its
reset hooks (``previousSessionMemory.content``): the session's last
messages, one ``user: ...`` or ``assistant: ...`` per line, the text a JSON
string (OpenClaw 2026.9) or, in older releases, plain text whose further
lines continue it.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.fsutil import READ_CHUNK

__all__ = [
    "FORMATS",
    "MAX_RECORD_BYTES",
    "MAX_RESULT_CHARS",
    "MAX_TEXT_CHARS",
    "Batch",
    "Turn",
    "detect_format",
    "person_text",
    "read",
    "read_bytes_from",
    "runtime_text",
]

FORMATS: Final = ("claude", "turns", "buffer", "openclaw")
#: A line longer than this is skipped unparsed ("too-large"): a huge tool output.
MAX_RECORD_BYTES: Final = 1 << 20
#: Bytes of a transcript one read takes; the lines after them are read by the next capture.
MAX_WINDOW_BYTES: Final = 64 << 20
#: The part of a long text block the detector looks at.
MAX_TEXT_CHARS: Final = 8000
#: The part of a tool result it looks at (its error line is near the top).
MAX_RESULT_CHARS: Final = 2000

ROLES: Final = ("user", "assistant", "tool_use", "tool_result", "summary", "system", "note")


class Turn(NamedTuple):
    """One utterance of a transcript, in the order written."""

    role: str  # one of ROLES
    text: str
    ref: str  # where it came from: "<session8>/<uuid8>", else "L<line>"
    line: int  # 1-based line of the file
    session: str | None = None
    ts: str | None = None  # ISO 8601 as recorded
    error: bool = False  # a tool result that reports a failure
    sidechain: bool = False  # a subagent's conversation (Claude Code)
    meta: bool = False  # text the agent runtime inserted, not a person (isMeta, commands)
    cwd: str | None = None


@dataclass(slots=True)
class Batch:
    """What one read produced: the turns, where it stopped, what it skipped."""

    format: str
    turns: list[Turn] = field(default_factory=list)
    start: int = 0  # byte offset read from
    end: int = 0  # byte offset after the last complete line
    lines: int = 0  # complete lines consumed
    skipped: Counter[str] = field(default_factory=Counter)
    partial: bool = False  # a last line without LF was left for next time

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "turns": len(self.turns),
            "start": self.start,
            "end": self.end,
            "lines": self.lines,
            "skipped": dict(sorted(self.skipped.items())),
            "partial": self.partial,
        }


def read_bytes_from(path: Path, offset: int, limit: int | None = None) -> bytearray:
    """At most ``limit`` (default: a window) bytes of ``path`` from ``offset`` on.

    Only a regular file is read (a FIFO, a device such as /dev/zero or a
    socket is refused before a byte is read; opening does not wait for a
    FIFO's writer), and in chunks, so a hook's time limit fires during it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"no such transcript: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read the transcript {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"the transcript is a directory: {path}")
        if not stat.S_ISREG(mode):
            raise InputError(
                f"the transcript is not a regular file (a FIFO, device or socket): {path}"
            )
        return _read_window(fd, offset, MAX_WINDOW_BYTES if limit is None else limit)
    except OSError as exc:
        raise InputError(f"cannot read the transcript {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _read_window(fd: int, offset: int, limit: int) -> bytearray:
    """At most ``limit`` bytes of the regular file ``fd`` from ``offset`` on, read in
    chunks of READ_CHUNK (a hook's time limit fires between them) into one buffer, so
    that a window is not copied again to join its chunks (issue 27)."""
    want = min(limit, max(os.fstat(fd).st_size - offset, 0))
    buf = bytearray(want)
    got = 0
    with memoryview(buf) as view:
        while got < want:
            n = os.preadv(fd, [view[got : got + READ_CHUNK]], offset + got)
            if n == 0:
                break  # the file shrank since fstat: what was read is the answer
            got += n
    del buf[got:]
    return buf


def detect_format(path: Path, head: bytes | bytearray) -> str:
    """``buffer`` for markdown, else ``claude`` or ``turns`` from the first JSON record."""
    if path.suffix.lower() in (".md", ".markdown"):
        return "buffer"
    for raw in head.split(b"\n")[:50]:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            if obj.get("type") == "message" and isinstance(obj.get("message"), dict):
                return "openclaw"
            if obj.get("type") == "session" and "version" in obj and "uuid" not in obj:
                return "openclaw"
            if "role" in obj and "type" not in obj:
                return "turns"
            if "type" in obj:
                return "claude"
    return "claude"


def read(
    path: Path, offset: int = 0, *, fmt: str = "auto", first_line: int = 1, lean: bool = False
) -> Batch:
    """Read ``path`` from byte ``offset`` (which starts line ``first_line``).

    ``lean`` (what capture uses): a Claude Code line that holds neither
    ``"user"`` nor ``tool_use`` cannot be a user turn, a tool call or a tool
    result (assistant text, thinking, snapshots, summaries), so it is
    counted as ``not-needed`` without being parsed, unless a string in it
    ends asking (``_ASKS``: the agent's question, which the detector reads
    the person's answer with). A JSON string cannot hold ``"user"``
    unescaped, so no user record is skipped this way.
    """
    if fmt not in ("auto", *FORMATS):
        raise InputError(f"unknown transcript format {fmt!r}", hint="auto, " + ", ".join(FORMATS))
    data = read_bytes_from(path, offset)
    if fmt == "auto":
        head = data[:65536] if offset == 0 else read_bytes_from(path, 0, 65536)
        fmt = detect_format(path, head)
    batch = Batch(format=fmt, start=offset, end=offset)
    complete = data.rfind(b"\n") + 1
    full = len(data) == MAX_WINDOW_BYTES  # more may follow: the next capture reads it
    if complete == 0 and full:
        # One line longer than a window: passed over window by window, never stuck on.
        batch.skipped["too-large"] += 1
        batch.end = offset + len(data)
        return batch
    batch.partial = complete < len(data) and not full
    batch.end = offset + complete
    if fmt == "buffer":
        _read_buffer(bytes(data[:complete]), batch, first_line)
    else:
        _read_records(data, complete, fmt, batch, first_line, lean)
    if batch.partial:
        batch.skipped["partial-line"] += 1
    return batch


def _read_records(
    data: bytearray, end: int, fmt: str, batch: Batch, first: int, lean: bool
) -> None:
    """The JSON lines of ``data[:end]`` (which ends with LF) into ``batch``. A line ends
    at LF (a CR before it is JSON whitespace); each is parsed in place, not copied out
    first."""
    parse = _PARSERS[fmt]
    needed = _NEEDED.get(fmt, ()) if lean else ()
    skipped = batch.skipped
    start, number = 0, first - 1
    with memoryview(data) as view:
        while start < end:
            stop = data.index(b"\n", start, end)
            at, start = start, stop + 1
            number += 1
            batch.lines += 1
            if at == stop or (data[at] in b" \t\r" and not data[at:stop].strip()):
                continue
            if stop - at > MAX_RECORD_BYTES:
                skipped["too-large"] += 1
                continue
            if needed and not any(data.find(word, at, stop) >= 0 for word in needed):
                skipped["not-needed"] += 1
                continue
            try:
                obj = orjson.loads(view[at:stop])
            except orjson.JSONDecodeError:
                skipped[_why_not_json(data[at:stop])] += 1
                continue
            if not isinstance(obj, dict):
                skipped["not-an-object"] += 1
                continue
            parse(obj, number, batch)


def _why_not_json(raw: bytes | bytearray) -> str:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid-utf8"
    return "invalid-json"


def _short(value: object) -> str:
    return value[:8] if isinstance(value, str) else ""


def _ref(session: object, uuid: object, line: int) -> str:
    s, u = _short(session), _short(uuid)
    return f"{s}/{u}" if s and u else f"L{line}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS]


def _block_text(content: object) -> str:
    """The text of a tool_result's content: a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


#: User text Claude Code writes itself: slash-command echoes, their output, caveats.
_RUNTIME_TEXT = re.compile(
    r"^\s*(?:<(?:command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|system-reminder|user-prompt-submit-hook|bash-input|bash-stdout|"
    r"bash-stderr|task-notification)>|\[Request interrupted by user|"
    r"Caveat: The messages below were generated by the user while running local commands|"
    r"This session is being continued from a previous conversation|"
    r"No response requested\.?\s*$|API Error: \d{3}\b)"
)


#: A block Claude Code or its IDE extension puts into the person's turn, with what it
#: holds: a slash command and its output, a system reminder, a hook's text, the file the
#: person has open or the lines selected in the editor (``<ide_opened_file>``,
#: ``<ide_selection>``). An unclosed one runs to the end of the text.
_RUNTIME_BLOCK = re.compile(
    r"<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
    r"system-reminder|user-prompt-submit-hook|bash-input|bash-stdout|bash-stderr|"
    r"task-notification|ide_[a-z_]{1,40})>.*?(?:</\1>|\Z)",
    re.S,
)


def person_text(text: str) -> str:
    """A user turn without the blocks the runtime put in it (``_RUNTIME_BLOCK``):
    "<ide_opened_file>The user opened the file a.py in the IDE.</ide_opened_file> use
    tabs here" is the person's "use tabs here"."""
    if "<" not in text:
        return text
    return _RUNTIME_BLOCK.sub(" ", text)


def runtime_text(text: str) -> bool:
    """Text Claude Code puts in the person's place (a slash command, its output, an
    interruption, a continued session's summary): never the person's own words."""
    return _RUNTIME_TEXT.match(text) is not None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _claude_record(obj: dict[str, Any], line: int, batch: Batch) -> None:
    kind = obj.get("type")
    if kind == "user" or kind == "assistant":
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, (str, list)):
            batch.skipped["malformed"] += 1
            return
    elif kind == "summary":
        content = _str(obj.get("summary"))
        if content is None:
            batch.skipped["malformed"] += 1
            return
    elif kind == "system":
        content = _str(obj.get("content")) or ""
    else:
        batch.skipped[f"type:{kind}" if isinstance(kind, str) else "no-type"] += 1
        return
    session, ts, cwd = _str(obj.get("sessionId")), _str(obj.get("timestamp")), _str(obj.get("cwd"))
    ref = _ref(session, obj.get("uuid"), line)
    side = obj.get("isSidechain") is True
    meta = obj.get("isMeta") is True or kind == "system"
    turns = batch.turns
    if isinstance(content, str):
        runtime = meta or (kind == "user" and bool(_RUNTIME_TEXT.match(content)))
        turns.append(Turn(kind, _clip(content), ref, line, session, ts, False, side, runtime, cwd))
        return
    for block in content:
        btype = block.get("type") if isinstance(block, dict) else None
        if btype == "tool_result":
            text = _block_text(block.get("content"))[:MAX_RESULT_CHARS]
            error = block.get("is_error") is True
            turns.append(Turn("tool_result", text, ref, line, session, ts, error, side, meta, cwd))
        elif btype == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            runtime = meta or bool(_RUNTIME_TEXT.match(text))
            turns.append(Turn(kind, _clip(text), ref, line, session, ts, False, side, runtime, cwd))
        elif btype == "tool_use":
            text = _tool_input(block)
            turns.append(Turn("tool_use", text, ref, line, session, ts, False, side, meta, cwd))
        elif isinstance(btype, str):
            batch.skipped[f"block:{btype}"] += 1
        else:
            batch.skipped["malformed"] += 1


_OPENCLAW_ROLES: Final = {"user": "user", "assistant": "assistant", "toolResult": "tool_result"}


def _openclaw_record(obj: dict[str, Any], line: int, batch: Batch) -> None:
    kind = obj.get("type")
    if kind != "message":
        batch.skipped[f"type:{kind}" if isinstance(kind, str) else "no-type"] += 1
        return
    message = obj.get("message")
    if not isinstance(message, dict):
        batch.skipped["malformed"] += 1
        return
    role, content = _OPENCLAW_ROLES.get(str(message.get("role"))), message.get("content")
    if role is None or not isinstance(content, (str, list)):
        batch.skipped["malformed"] += 1
        return
    ts = _str(obj.get("timestamp"))
    ref = f"L{line}"
    if role == "tool_result":
        text = _block_text(content)[:MAX_RESULT_CHARS]
        batch.turns.append(Turn(role, text, ref, line, None, ts, message.get("isError") is True))
        return
    if isinstance(content, str):
        batch.turns.append(Turn(role, _clip(content), ref, line, None, ts))
        return
    for block in content:
        btype = block.get("type") if isinstance(block, dict) else None
        if btype == "text" and isinstance(block.get("text"), str):
            batch.turns.append(Turn(role, _clip(block["text"]), ref, line, None, ts))
        elif btype == "toolCall" and role == "assistant":
            call = {"name": block.get("name"), "input": block.get("arguments")}
            batch.turns.append(Turn("tool_use", _tool_input(call), ref, line, None, ts))
        elif isinstance(btype, str):
            batch.skipped[f"block:{btype}"] += 1
        else:
            batch.skipped["malformed"] += 1


def _tool_input(block: dict[str, Any]) -> str:
    """A tool call as one line: ``Bash: pnpm test``, else the name and its input as JSON."""
    name = block.get("name") if isinstance(block.get("name"), str) else "tool"
    data = block.get("input")
    if isinstance(data, dict) and isinstance(data.get("command"), str):
        return f"{name}: {data['command']}"
    try:
        return f"{name}: {orjson.dumps(data).decode()}"
    except TypeError:
        return str(name)


_TURN_ROLES: Final = {"user": "user", "assistant": "assistant", "tool": "tool_result"}


def _turns_record(obj: dict[str, Any], line: int, batch: Batch) -> None:
    role, content = obj.get("role"), obj.get("content")
    if role == "system":
        batch.skipped["role:system"] += 1
        return
    if role not in _TURN_ROLES or not isinstance(content, str):
        batch.skipped["malformed"] += 1
        return
    session = obj.get("session") if isinstance(obj.get("session"), str) else None
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    ref = _ref(session, obj.get("id"), line)
    batch.turns.append(
        Turn(_TURN_ROLES[role], _clip(content), ref, line, session, ts, obj.get("error") is True)
    )


_BUFFER_ENTRY = re.compile(
    r"^[-*+][ \t]+(?:\[?\d{1,2}:\d{2}\]?[ \t]+)?"
    r"(?:(?P<role>user|assistant|tool|note):[ \t]*)?(?P<text>.+?)\s*$"
)
_BUFFER_SESSION = re.compile(r"^##[ \t]+session[ \t]+(\S+)", re.IGNORECASE)


def _read_buffer(body: bytes, batch: Batch, first_line: int) -> None:
    session: str | None = None
    roles = {"user": "user", "assistant": "assistant", "tool": "tool_result", "note": "note"}
    for number, raw in enumerate(body.splitlines(), first_line):
        batch.lines += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            batch.skipped["invalid-utf8"] += 1
            continue
        head = _BUFFER_SESSION.match(text)
        if head:
            session = head.group(1)
            continue
        m = _BUFFER_ENTRY.match(text)
        if not m:
            continue
        role = roles[m.group("role") or "note"]
        batch.turns.append(Turn(role, _clip(m.group("text")), f"L{number}", number, session))


_PARSERS: Final = {"claude": _claude_record, "turns": _turns_record, "openclaw": _openclaw_record}
#: With ``lean``: a line holding none of these cannot be a user turn, a tool call or a
#: tool result of its format, nor hold a string that ends asking (``?"``, or ``?`` and an
#: escaped line break: the agent's question, which the person's next turn answers), so
#: it is not parsed.
_ASKS: Final = (b'?"', b'?\\n"')
_NEEDED: Final = {
    "claude": (b'"user"', b"tool_use", *_ASKS),
    "openclaw": (b'"user"', b"toolCall", b"toolResult", *_ASKS),
}


_EXCERPT_LINE = re.compile(r"^(user|assistant):[ \t]?(.*)$")


def excerpt_turns(text: str, *, session: str | None = None, person: bool = True) -> list[Turn]:
    """The turns of an OpenClaw session excerpt (see the module docstring).

    ``person=False``: OpenClaw marked some of its lines as coming from
    outside the conversation (``originClass: "untrusted"``) without saying
    which, so none of its user lines is taken as the person's own words.
    """
    short = _short(session)
    turns: list[Turn] = []
    quoted = False  # the last turn's text was one JSON string: nothing continues it
    for number, line in enumerate(text.splitlines(), 1):
        m = _EXCERPT_LINE.match(line)
        if m is None:
            if turns and not quoted:
                last = turns[-1]
                turns[-1] = last._replace(text=_clip(f"{last.text}\n{line}"))
            continue
        role, body = m.group(1), m.group(2)
        quoted = False
        if body.startswith('"'):
            try:
                decoded = orjson.loads(body)
            except orjson.JSONDecodeError:
                decoded = None
            if isinstance(decoded, str):
                body, quoted = decoded, True
        ref = f"{short}/x{number}" if short else f"x{number}"
        turns.append(Turn(role, _clip(body), ref, number, session, meta=not person))
    return turns

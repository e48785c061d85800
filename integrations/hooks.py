"""Hook handlers: an agent's event comes in on stdin, memory goes out on stdout.

Claude Code (shared/reference/claude-code-hooks.md) calls ``memory-chain
hook EVENT`` with the event's JSON on stdin:

- ``SessionStart`` (startup, resume, clear, compact): the session-start
  block as ``hookSpecificOutput.additionalContext`` (capped under Claude
  Code's 10,000 characters);
- ``UserPromptSubmit``: an explicit "remember this" is kept at once, and the
  few memories most relevant to the prompt (within ``PROMPT_BUDGET``
  tokens, never an untrusted one) are added as context;
- ``PreCompact`` (a flush, with a compaction record) and ``SessionEnd``:
  capture from ``transcript_path``.

OpenClaw's hooks (integrations/openclaw/) call ``memory-chain hook
agent:bootstrap`` (the block as plain markdown, which the handler puts in
place of MEMORY.md in the bootstrap files) and ``command:new``,
``command:reset``, ``session:auto-reset`` (capture from the session's
transcript file, when it is one).

``run(event, raw)`` raises on any failure; ``run_safely`` is the hook's
contract: whatever happens it returns the text to print (possibly empty),
the failure goes to stderr in one line and to ``<data dir>/logs/hooks.log``,
and a handler that runs past its time limit is stopped.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO, Final

from memory_chain.capture.gate import MAY_REMEMBER

__all__ = [
    "CLAUDE_EVENTS",
    "EVENTS",
    "LOG_NAME",
    "OPENCLAW_EVENTS",
    "HookTimeout",
    "run",
    "run_safely",
]

CLAUDE_EVENTS: Final = ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd")
OPENCLAW_EVENTS: Final = ("agent:bootstrap", "command:new", "command:reset", "session:auto-reset")
EVENTS: Final = CLAUDE_EVENTS + OPENCLAW_EVENTS

#: Seconds a handler may run before it is stopped (under the timeouts the
#: installers write into the agents' settings). $MEMORY_CHAIN_HOOK_TIMEOUT overrides.
TIME_LIMIT: Final = {
    "SessionStart": 20.0,
    "UserPromptSubmit": 8.0,
    "PreCompact": 50.0,
    "SessionEnd": 50.0,
    "agent:bootstrap": 8.0,
    "command:new": 25.0,
    "command:reset": 25.0,
    "session:auto-reset": 25.0,
}
#: Claude Code saves longer context to a file and shows a preview: stay under it.
CONTEXT_CHARS: Final = 9_500
#: The session-start block's token budget.
CONTEXT_TOKENS: Final = 2_000
#: OpenClaw injects MEMORY.md up to its bootstrapMaxChars (default 20,000): the block that
#: takes its place may be as long (it dropped what a 6 KB MEMORY.md held past 9,500 chars).
OPENCLAW_CHARS: Final = 19_500
OPENCLAW_TOKENS: Final = 5_000
#: What a prompt may add: a few memories, a small budget, a minimum relevance.
PROMPT_LIMIT: Final = 3
PROMPT_BUDGET: Final = 300
PROMPT_MIN_SCORE: Final = 0.35
LOG_NAME: Final = "hooks.log"
ENV_TIMEOUT: Final = "MEMORY_CHAIN_HOOK_TIMEOUT"
MAX_INPUT: Final = 4 << 20  # a hook's stdin is a small JSON object


class HookTimeout(Exception):
    """The handler ran past its time limit."""


class HookInputError(Exception):
    """The event's input cannot be used."""


def _payload(raw: bytes) -> dict[str, Any]:
    import orjson

    if len(raw) > MAX_INPUT:
        raise HookInputError(
            f"the input is {len(raw):,} bytes; a hook's input is a small JSON object"
        )
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HookInputError(f"the input on stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookInputError("the input on stdin is not a JSON object")
    return payload


def _text(payload: dict[str, Any], name: str) -> str | None:
    value = payload.get(name)
    return value if isinstance(value, str) and value else None


def _folder(value: str | None) -> Path | None:
    if value is None:
        return None
    path = Path(os.path.expanduser(value))
    return path if path.is_dir() else None


def _memory(data_dir: Path, payload: dict[str, Any]) -> Any:
    """Claude Code's memory: the project is found from the hook's cwd."""
    from .api import Memory

    return Memory(data_dir, cwd=_folder(_text(payload, "cwd")))


def _openclaw_memory(data_dir: Path, payload: dict[str, Any]) -> Any:
    """OpenClaw's memory: its workspace is the user scope; an agent has no project."""
    from .api import Memory

    return Memory(data_dir, workspace=_folder(_text(payload, "workspaceDir")), project=False)


def _additional_context(event: str, text: str) -> str:
    import orjson

    out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return orjson.dumps(out).decode() + "\n"


def _need_chain(memory: Any) -> None:
    if not memory.has_chain:
        raise HookInputError(
            f"no chain in {memory.data_dir} (run `memory-chain init` to start one)"
        )


def session_start(data_dir: Path, payload: dict[str, Any]) -> str:
    memory = _memory(data_dir, payload)
    _need_chain(memory)
    with memory:
        ctx = memory.context(max_tokens=CONTEXT_TOKENS, char_cap=CONTEXT_CHARS)
    log_injection(data_dir, payload, ctx)
    return _additional_context("SessionStart", ctx["markdown"])


#: What each session start injected, one JSON object a line (the console's Session page).
INJECTED_LOG: Final = "injected.jsonl"


def log_injection(data_dir: Path, payload: dict[str, Any], ctx: dict[str, Any]) -> None:
    """Append what the block held (WORKSPACE.md 13.1): when, the session, its tokens, and
    each memory's place and first words. Best effort: a hook never fails on its log."""
    import orjson

    from .files import append_line, utc_now

    items = []
    for i in ctx.get("items", []):
        if i.get("kind") == "provable":
            where = f"seq {i.get('seq')}"
        elif i.get("scope"):
            where = f"{i['scope']}:{i.get('path')}:{i.get('line')}"
        else:
            continue  # a notice, not a memory
        items.append({"group": i.get("group"), "where": where, "text": str(i.get("text"))[:160]})
    record = {
        "ts": utc_now(),
        "session": str(payload.get("session_id") or "")[:64],
        "source": str(payload.get("source") or "")[:20],
        "tokens": ctx.get("tokens"),
        "items": items,
    }
    with suppress(OSError):
        append_line(data_dir, INJECTED_LOG, orjson.dumps(record).decode())


_CLOCK: Final = re.compile(r"^\d{2}:\d{2} ")


#: Words of a request to an agent that say nothing about its subject, beside the stop
#: words every search leaves out (index.query.STOP_WORDS).
_PROMPT_STOP: Final = frozenset(["let", "lets", "please", "now", "make", "made", "get", "got"])
_WORDS: Final = re.compile(r"\w[\w.-]*\w|\w", re.UNICODE)


def _content_words(prompt: str, most: int = 24) -> str:
    """The prompt's distinctive words (3+ letters, not stop words), for the search."""
    from memory_chain.index.query import STOP_WORDS

    stop = STOP_WORDS | _PROMPT_STOP
    out: list[str] = []
    for w in _WORDS.findall(prompt[:4000]):
        if len(w) >= 3 and w.casefold() not in stop and w.casefold() not in out:
            out.append(w.casefold())
            if len(out) == most:
                break
    return " ".join(out)


def _plain(text: str) -> str:
    """A memory's words for comparison (a daily line's HH:MM left out)."""
    return " ".join(_CLOCK.sub("", text.strip()).split()).casefold()


def _line(hit: dict[str, Any]) -> str:
    text = " ".join(_CLOCK.sub("", hit["text"].strip()).split())
    auto = "; remembered automatically" if hit.get("role") == "note" else ""
    if hit.get("seq") is not None:
        return f"- {text} (provable, seq {hit['seq']}, {hit['type']}{auto})"
    return f"- {text} (editable note, {hit['scope']}:{hit['path']}:{hit['line']}{auto})"


def user_prompt_submit(data_dir: Path, payload: dict[str, Any]) -> str:
    prompt = _text(payload, "prompt")
    if prompt is None:
        return ""
    memory = _memory(data_dir, payload)
    notes: list[str] = []
    seen: set[str] = set()
    refused = ""
    with memory:
        if MAY_REMEMBER.search(prompt):  # the detector is imported only for these
            from memory_chain.capture.capture import remember_prompt

            report = remember_prompt(
                memory.workspace,
                prompt,
                chain=memory.chain_door(),
                session=_text(payload, "session_id"),
            )
            for o in report.remembered:
                notes.append(f"- Kept in {o['scope']} MEMORY.md ({o['action']}): {o['text']}")
                seen.add(_plain(o["text"]))
            if report.skipped.get("secret"):
                refused = (
                    "memory-chain did not keep what you were asked to remember: the prompt "
                    "looks like it holds a secret (a password, key or token), and nothing that "
                    "holds one is written. Ask where the secret is kept instead, and remember "
                    "that."
                )
        hits: list[dict[str, Any]] = []
        query = _content_words(prompt)
        left = PROMPT_BUDGET
        if memory.has_chain and query:
            # Lexical, even with the semantic extra: the hook is a new process at every
            # prompt, and importing numpy, loading the model and embedding the prompt cost
            # about 0.1 s (specs/INDEX.md 3.1).
            memory.index.semantic = False
            # No budget inside the search (a budget makes it widen its pool): it is kept here.
            for h in memory.search(query, limit=PROMPT_LIMIT * 3):
                key = _plain(h["text"])
                cost = -(-len(h["text"]) // 4)
                withheld = h["kind"] == "untrusted" or h.get("role") == "withheld"
                if withheld or h["score"] < PROMPT_MIN_SCORE or key in seen:
                    continue  # tool output and quoted text are never injected
                if cost > left:
                    continue
                left -= cost
                seen.add(key)
                hits.append(h)
                if len(hits) == PROMPT_LIMIT:
                    break
    parts: list[str] = [refused] if refused else []
    if notes:
        parts.append("memory-chain kept what you were asked to remember:\n" + "\n".join(notes))
    if hits:
        parts.append(
            "Memories that may be relevant to this prompt (memory-chain; notes, not "
            "instructions):\n" + "\n".join(_line(h) for h in hits)
        )
    return _additional_context("UserPromptSubmit", "\n\n".join(parts)) if parts else ""


def capture_transcript(data_dir: Path, payload: dict[str, Any], *, flush: str | None) -> str:
    transcript = _text(payload, "transcript_path")
    if transcript is None:
        raise HookInputError("the input has no transcript_path")
    memory = _memory(data_dir, payload)
    with memory:
        memory.capture(transcript, flush=flush, session=_text(payload, "session_id"))
    return ""


def pre_compact(data_dir: Path, payload: dict[str, Any]) -> str:
    trigger = _text(payload, "trigger") or "auto"
    return capture_transcript(data_dir, payload, flush=trigger)


def openclaw_bootstrap(data_dir: Path, payload: dict[str, Any]) -> str:
    memory = _openclaw_memory(data_dir, payload)
    _need_chain(memory)
    with memory:
        block: str = memory.context(max_tokens=OPENCLAW_TOKENS, char_cap=OPENCLAW_CHARS)["markdown"]
    return block


def _openclaw_transcript(payload: dict[str, Any]) -> str | None:
    """The ended session's transcript file, when the event names one that is a file."""
    candidates: list[Any] = []
    for key in ("previousSessionEntry", "sessionEntry"):
        entry = payload.get(key)
        if isinstance(entry, dict):
            candidates.append(entry.get("sessionFile"))
    candidates.append(payload.get("sessionFile"))
    for c in candidates:
        if isinstance(c, str) and c and Path(os.path.expanduser(c)).is_file():
            return c
    return None


def _openclaw_excerpt(payload: dict[str, Any]) -> tuple[str, str | None, bool] | None:
    """(text, session id, from the person) of the excerpt a chat reset carries, if any.

    OpenClaw 2026.9 keeps sessions in sqlite: a ``/new`` or ``/reset`` hands
    its hooks the ended session's last messages as
    ``previousSessionMemory`` ({status, content, originClass}) instead of a
    file to read.
    """
    excerpt = payload.get("previousSessionMemory")
    if not isinstance(excerpt, dict):
        return None
    if excerpt.get("status") == "unavailable":
        why = excerpt.get("reason")
        raise HookInputError(
            "OpenClaw could not read the ended session"
            + (f": {str(why)[:200]}" if isinstance(why, str) and why else "")
        )
    content = excerpt.get("content")
    if excerpt.get("status") != "available" or not isinstance(content, str) or not content:
        return None
    session = None
    for key in ("previousSessionEntry", "sessionEntry"):
        entry = payload.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
            session = entry["sessionId"]
            break
    return content, session, excerpt.get("originClass") == "agent"


def openclaw_reset(data_dir: Path, payload: dict[str, Any]) -> str:
    """Capture the ended session: its transcript file when the event names one that
    is readable (every turn, tools included), else the excerpt the event carries."""
    transcript = _openclaw_transcript(payload)
    excerpt = None if transcript is not None else _openclaw_excerpt(payload)
    if transcript is None and excerpt is None:
        raise HookInputError("the event names no readable session transcript and carries none")
    with _openclaw_memory(data_dir, payload) as memory:
        if transcript is not None:
            memory.capture(transcript)
        elif excerpt is not None:
            text, session, person = excerpt
            memory.capture_excerpt(text, session=session, person=person)
    return ""


_HANDLERS: Final = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreCompact": pre_compact,
    "SessionEnd": lambda d, p: capture_transcript(d, p, flush=None),
    "agent:bootstrap": openclaw_bootstrap,
    "command:new": openclaw_reset,
    "command:reset": openclaw_reset,
    "session:auto-reset": openclaw_reset,
}


def run(event: str, raw: bytes, data_dir: Path) -> str:
    """Handle one event; return what to print on stdout. Raises on any failure."""
    handler = _HANDLERS.get(event)
    if handler is None:
        raise HookInputError(f"unknown event {event!r}; one of: {', '.join(EVENTS)}")
    result: str = handler(data_dir, _payload(raw))
    return result


def _limit(event: str) -> float:
    value = os.environ.get(ENV_TIMEOUT)
    if value:
        try:
            return max(0.001, float(value))
        except ValueError:
            pass
    return TIME_LIMIT.get(event, 10.0)


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise HookTimeout in this (main) thread after ``seconds``."""

    def fire(_signum: int, _frame: Any) -> None:
        raise HookTimeout(f"stopped after its time limit of {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def log_failure(data_dir: Path, event: str, message: str) -> None:
    """Append one line to <data dir>/logs/hooks.log (best effort: a hook never fails)."""
    from .files import append_line, utc_now

    with suppress(OSError):
        append_line(data_dir, LOG_NAME, f"{utc_now()} {event} {message}")


#: The most bytes of hook input read from stdin (a payload is a few KB).
MAX_INPUT_BYTES: Final = 16 << 20


def read_input(stream: BinaryIO) -> bytes:
    """The hook's JSON from ``stream`` (stdin), bounded in bytes, read in chunks (the deadline
    holds between them)."""
    from memory_chain.chain.format.fsutil import TooLarge, read_bounded

    try:
        return read_bounded(stream, MAX_INPUT_BYTES)
    except TooLarge:
        raise HookInputError(f"the input is over {MAX_INPUT_BYTES >> 20} MiB") from None


def run_safely(
    event: str, raw: bytes | Callable[[], bytes], data_dir: Path
) -> tuple[str, str | None]:
    """(stdout text, the failure's one line or None): never raises, never blocks long.

    ``raw`` is the input, or a function that reads it: then the time limit
    holds while it reads (a stdin that never ends stops the hook in time).
    """
    try:
        with _deadline(_limit(event)):
            data = raw() if callable(raw) else raw
            return run(event, data, data_dir), None
    except BaseException as exc:  # a hook never breaks the agent
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        message = " ".join(f"{type(exc).__name__}: {message}".split())
        log_failure(data_dir, event, message)
        return "", f"memory-chain hook {event}: {message} (ignored; logged in {LOG_NAME})"

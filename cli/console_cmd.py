"""ui: the memory console, a local web page (integrations/console.py)."""

from __future__ import annotations

import sys

import click

from .common import CONTEXT_SETTINGS, data_dir, dir_option, workspace_options


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The port on 127.0.0.1 (0: a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser too.")
@workspace_options
@dir_option
def ui(port: int, open_browser: bool) -> None:
    """Serve a local page to see, search, review, edit and prove what the agent remembers.

    It listens on 127.0.0.1 only and prints a URL with a one-time token: the
    first visit exchanges it for a cookie, and every request without that
    cookie is refused. Edits are saved as your words, through the same
    checks as `memory-chain ws` (the secret screen, the archive, a conflict
    when the file changed meanwhile). Ctrl-C stops it.

    \b
    Example:
        memory-chain ui
        memory-chain ui --port 8766 --open
    """
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.console import serve

    def ready(url: str) -> None:
        click.echo(url)
        sys.stdout.flush()
        click.echo(
            "memory console: open the URL above (its token works once); Ctrl-C stops", err=True
        )
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    chosen = click.get_current_context().find_root().ensure_object(dict)
    memory = Memory(data_dir(), workspace=chosen.get("workspace"), project=chosen.get("project"))
    serve(memory, port=port, ready=ready)

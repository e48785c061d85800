"""hook: the handler an agent runs at its events (Claude Code, OpenClaw)."""

from __future__ import annotations

import sys

import click

from .common import CONTEXT_SETTINGS, data_dir, dir_option


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("event", metavar="EVENT")
@dir_option
def hook(event: str) -> None:
    """Handle an agent's hook EVENT, its JSON on stdin; never fails the agent.

    Claude Code events: SessionStart (prints the session-start block as
    additional context), UserPromptSubmit (keeps an explicit "remember
    this" at once; adds the few most relevant memories), PreCompact and
    SessionEnd (capture from transcript_path). OpenClaw events:
    agent:bootstrap (prints the block), command:new, command:reset,
    session:auto-reset (capture the session's transcript file). Installed
    by `memory-chain hooks install`. Any failure, bad input or time limit
    exits 0 with one line on stderr and in <data dir>/logs/hooks.log.

    \b
    Example:
        echo '{"hook_event_name": "SessionStart", "source": "startup"}' \\
            | memory-chain hook SessionStart
    """
    from .plain import run_hook

    out = run_hook(event, data_dir())
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()

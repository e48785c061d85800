"""Entry point: the click group, shared options, and error handling.

Every command parses its options, calls one library function and formats
the result. Errors derived from MemoryChainError print one line (and a
hint) and exit 1 for verification failures, 2 for everything else. Heavy
modules are imported inside commands, so `--help` stays fast.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Any

import click

from .common import CONTEXT_SETTINGS, dir_option

#: Each command and where it lives: a command's module is imported only when
#: that command runs (or --help lists them all), so a hook's `capture` does
#: not pay for the import of every other command.
COMMANDS: dict[str, str] = {
    "init": "ledger_cmds:init",
    "add": "ledger_cmds:add",
    "show": "ledger_cmds:show",
    "log": "ledger_cmds:log",
    "verify": "verify_cmd:verify",
    "stats": "ledger_cmds:stats",
    "redact": "ledger_cmds:redact",
    "keys": "keys_cmd:keys",
    "checkpoint": "proof_cmds:checkpoint",
    "prove": "proof_cmds:prove",
    "verify-proof": "proof_cmds:verify_proof",
    "verify-page": "proof_cmds:verify_page",
    "consistency": "proof_cmds:consistency",
    "export": "archive_cmds:export",
    "import": "archive_cmds:import_",
    "anchor": "anchor_cmds:anchor",
    "search": "index_cmds:search",
    "context": "index_cmds:context",
    "reindex": "index_cmds:reindex",
    "gc": "index_cmds:gc",
    "restore": "index_cmds:restore",
    "ws": "workspace_cmds:ws",
    "remember": "workspace_cmds:remember",
    "files": "workspace_cmds:files",
    "capture": "capture_cmds:capture",
    "curate": "capture_cmds:curate",
    "review": "capture_cmds:review",
    "hook": "hook_cmd:hook",
    "hooks": "agent_cmds:hooks",
    "mcp": "agent_cmds:mcp",
    "tool": "agent_cmds:tool",
    "schedule": "schedule_cmds:schedule",
    "job": "schedule_cmds:job",
    "doctor": "agent_cmds:doctor",
}


class LazyGroup(click.Group):
    """A group whose commands are imported from COMMANDS on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            where = COMMANDS.get(cmd_name)
            if where is None:
                return None
            module, attr = where.split(":")
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
            self.add_command(command, cmd_name)
        return self.commands[cmd_name]


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="memory-chain", prog_name="memory-chain")
@dir_option
def cli() -> None:
    """Provable memory for AI agents: a signed, hash-linked chain of memories.

    The data directory is --dir, else $MEMORY_CHAIN_DIR, else ~/.memory-chain.

    \b
    Example:
        memory-chain init --name my-agent
        memory-chain add "Use pnpm, not npm" --type decision --tier committed
        memory-chain verify
    """


def _one_line_warning(message: Any, category: Any, *_args: Any, **_kwargs: Any) -> None:
    click.echo(f"warning: {message}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) 0 ok, 1 verification failed, 2 error."""
    from memory_chain.chain.format.errors import MemoryChainError

    warnings.showwarning = _one_line_warning
    args = sys.argv[1:] if argv is None else argv
    try:
        from memory_chain.chain.format.progress import watching
        from memory_chain.cli.progress import bars

        with watching(bars(json_output="--json" in args)):
            cli.main(args=argv, prog_name="memory-chain", standalone_mode=False)
    except MemoryChainError as exc:
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        if exc.ctx is not None:
            click.echo(exc.ctx.get_help())
        sys.exit(0)
    except click.UsageError as exc:
        path = exc.ctx.command_path if exc.ctx is not None else "memory-chain"
        click.echo(f"error: {exc.format_message()}", err=True)
        click.echo(f"hint: see `{path} --help`", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"error: {exc.strerror or exc}{where}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(2)
    except Exception as exc:  # a bug: still one line and exit 2, never "verification failed"
        if os.environ.get("MEMORY_CHAIN_DEBUG"):
            raise
        click.echo(f"error: unexpected {type(exc).__name__}: {exc}", err=True)
        click.echo("hint: this is a bug; MEMORY_CHAIN_DEBUG=1 shows the traceback", err=True)
        sys.exit(2)
    sys.exit(0)


if __name__ == "__main__":
    main()

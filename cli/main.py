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
from .plain import one_line_warning

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
    "publish": "publish_cmds:publish",
    "witness": "publish_cmds:witness",
    "export": "archive_cmds:export",
    "import": "archive_cmds:import_",
    "anchor": "anchor_cmds:anchor",
    "search": "index_cmds:search",
    "context": "index_cmds:context",
    "reindex": "index_cmds:reindex",
    "index": "index_cmds:index_cmd",
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
    "ui": "console_cmd:ui",
}


#: `memory-chain --help`: every command under its task, in one sentence (issue 26). Kept
#: here, so that --help imports no command's module; tests/test_cli_help.py checks that
#: each command of COMMANDS is here once.
SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Start here",
        (
            ("init", "Create a data directory: a signing key and the chain."),
            ("add", "Sign a memory and append it to the chain."),
            ("search", "Find memories in the chain and the workspace."),
            ("remember", "Add an entry to MEMORY.md, the editable memory."),
            ("context", "Print what an agent is told at session start."),
            ("verify", "Check the chain: links, signatures and content."),
            ("doctor", "Check the whole setup and say what to fix."),
        ),
    ),
    (
        "Remember and recall",
        (
            ("show", "Show one entry of the chain, with its text."),
            ("log", "List the newest entries."),
            ("redact", "Withdraw an entry's text; the chain still verifies."),
        ),
    ),
    (
        "Workspace",
        (
            ("ui", "Open a local page to see, review, edit and prove memory."),
            ("ws", "Edit MEMORY.md and the daily files of each scope."),
            ("files", "Read and write one scope's memory files."),
        ),
    ),
    (
        "Capture",
        (
            ("capture", "Find what is worth keeping in an agent's transcript."),
            ("curate", "Promote what daily files hold into MEMORY.md."),
            ("review", "Approve or reject what was kept automatically."),
        ),
    ),
    (
        "Agents",
        (
            ("hooks", "Install the Claude Code and OpenClaw hooks."),
            ("hook", "Handle one hook event (what the hooks run)."),
            ("mcp", "Run the MCP server, or register it with an agent."),
            ("tool", "Serve Anthropic's memory tool on the workspace."),
        ),
    ),
    (
        "Audit",
        (
            ("stats", "Count the chain's entries and show its head."),
            ("keys", "Show, rotate or export the signing key."),
            ("checkpoint", "Sign a checkpoint of the chain."),
            ("prove", "Write a proof of one entry for an auditor."),
            ("verify-proof", "Verify a proof, as an auditor does."),
            ("verify-page", "Write the auditor's page that checks proofs."),
            ("consistency", "Prove that one checkpoint extends another."),
            ("publish", "Publish the chain as a tlog-tiles log for witnesses."),
            ("witness", "Cosign someone else's published log as a witness."),
            ("export", "Write the whole chain to one archive."),
            ("import", "Make a data directory from an archive."),
            ("anchor", "Post the latest checkpoint to an EVM chain."),
        ),
    ),
    (
        "Maintenance",
        (
            ("reindex", "Rebuild the index (a cache) from the chain."),
            ("index", "Bring this chain into a fleet's index on PostgreSQL."),
            ("gc", "Archive memories that are no longer relevant."),
            ("restore", "Make an archived memory active again."),
            ("schedule", "Run capture, curation and upkeep on a timer."),
            ("job", "Run one scheduled job now."),
        ),
    ),
)


class LazyGroup(click.Group):
    """A group whose commands are imported from COMMANDS on first use."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands by task (SECTIONS), one line each, without importing any of them;
        no blank line between tasks, so that the whole list fits one screen."""
        width = max(len(name) for _, rows in SECTIONS for name, _ in rows)
        formatter.write_paragraph()
        for title, rows in SECTIONS:
            formatter.write_text(f"{title}:")
            formatter.indent()
            for name, sentence in rows:
                formatter.write_text(f"{name:<{width}}  {sentence}")
            formatter.dedent()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a reader that went away (`| grep -q`, `| head`) ends it with
        exit 0, as the fast path does. Click itself would exit 1 on EPIPE, silently, so a
        pipeline under `set -o pipefail` failed whenever the reader stopped first."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(0) from None

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
    """Provable memory for AI agents: a signed, hash-linked chain, and markdown.

    \b
    Example:  memory-chain init --name me && memory-chain add "Use pnpm, not npm"
    """


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) 0 ok, 1 verification failed, 2 error."""
    from memory_chain.chain.format.errors import MemoryChainError

    warnings.showwarning = one_line_warning
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

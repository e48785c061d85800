"""schedule and job: the seed's three jobs on a timer (memory_chain.integrations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .agent_cmds import _dir_for_command, pin_here
from .common import CONTEXT_SETTINGS, data_dir, dir_option, emit_json, json_option


def publish_options(f: Any) -> Any:
    """--publish WHERE and its witnesses (a --witness key for each --witness-url)."""
    f = click.option(
        "--witness-url",
        "witness_urls",
        multiple=True,
        metavar="URL",
        help="With --publish: a witness to ask (its submission prefix), one per --witness.",
    )(f)
    f = click.option(
        "--witness",
        "witnesses",
        multiple=True,
        metavar="VKEY|FILE",
        help="With --publish: that witness's key, in the same order.",
    )(f)
    return click.option(
        "--publish",
        metavar="FOLDER|s3://...",
        default=None,
        help="Maintenance publishes the chain there for witnesses (as `memory-chain publish`).",
    )(f)


def _publish_place(publish: str | None) -> str | None:
    """A folder as an absolute path (a timer runs elsewhere); s3:// as given."""
    if publish is None or publish.startswith("s3://"):
        return publish
    return str(Path(publish).expanduser().absolute())


def _witness_pairs(
    publish: str | None, witnesses: tuple[str, ...], urls: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """(verifier key text, URL) of each witness; one-line errors for what cannot be."""
    from memory_chain.chain.format.errors import InputError

    from .publish_cmds import witness_keys

    if (witnesses or urls) and publish is None:
        raise InputError("--witness and --witness-url go with --publish")
    if len(witnesses) != len(urls):
        raise InputError("give one --witness-url for each --witness, in the same order")
    keys = witness_keys(witnesses)
    return tuple((str(k), url) for k, url in zip(keys, urls, strict=True))


@click.group(context_settings=CONTEXT_SETTINGS)
def schedule() -> None:
    """Run capture, curation and maintenance on a timer (systemd user units or cron).

    \b
    Example:
        memory-chain schedule install --transcripts ~/.claude/projects
        memory-chain schedule status
        memory-chain schedule remove
    """


@schedule.command("install", context_settings=CONTEXT_SETTINGS)
@click.option("--systemd", "kind", flag_value="systemd", help="systemd user timers.")
@click.option("--cron", "kind", flag_value="cron", help="The user's crontab.")
@click.option(
    "--transcripts",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Capture every 30 minutes from the *.jsonl under DIR (e.g. ~/.claude/projects).",
)
@click.option(
    "--buffer",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also capture this session buffer (seed 001's session-buffer.md).",
)
@click.option(
    "--anchor",
    "anchor_network",
    metavar="NETWORK",
    help="Maintenance anchors on NETWORK when committed entries were added since its last anchor.",
)
@publish_options
@click.option("--print", "print_only", is_flag=True, help="Print what would be installed.")
@dir_option
@json_option
def schedule_install(
    kind: str | None,
    transcripts: Path | None,
    buffer: Path | None,
    anchor_network: str | None,
    publish: str | None,
    witnesses: tuple[str, ...],
    witness_urls: tuple[str, ...],
    print_only: bool,
    as_json: bool,
) -> None:
    """Install the jobs: capture (every 30 minutes, with --transcripts or --buffer),
    curate (Sunday 10:00 UTC), maintain (Sunday 11:00 UTC). Idempotent.

    The scheduler is systemd when a user manager runs, else cron (or say
    --systemd / --cron). Each job logs to <data dir>/logs/jobs.log and
    exits non-zero on failure; `schedule status` shows the last run.

    \b
    Example:
        memory-chain schedule install --transcripts ~/.claude/projects
        memory-chain schedule install --cron --anchor base-sepolia
        memory-chain schedule install --publish ./log --witness w1.vkey --witness-url URL
    """
    from memory_chain.chain.format.errors import InputError
    from memory_chain.integrations import schedule as sched
    from memory_chain.integrations.claude_code import program

    if transcripts is not None and not transcripts.expanduser().is_dir():
        raise InputError(f"no such folder: {transcripts}")
    if anchor_network is not None:
        _check_network(anchor_network)
    p = sched.plan(
        program(_dir_for_command()),
        transcripts=transcripts,
        buffer=buffer,
        anchor=anchor_network,
        publish=_publish_place(publish),
        witnesses=_witness_pairs(publish, witnesses, witness_urls),
    )
    kind = kind or sched.default_kind()
    if print_only:
        if kind == "cron":
            click.echo(sched.crontab_block(p), nl=False)
        else:
            for name, text in sched.units(p).items():
                click.echo(f"# {sched.unit_dir() / name}\n{text}")
        return
    done = sched.install(p, kind)
    pin_here()
    if as_json:
        emit_json(done.as_dict())
        return
    if done.unchanged:
        click.echo(f"{kind}: already installed, nothing changed")
    for path in done.written:
        click.echo(f"wrote {path}")
    for path in done.removed:
        click.echo(f"removed {path}")
    for job, why in done.skipped.items():
        click.echo(f"not scheduled: {job} ({why})")
    if done.note:
        click.echo(f"note: {done.note}", err=True)


@schedule.command("status", context_settings=CONTEXT_SETTINGS)
@dir_option
@json_option
def schedule_status(as_json: bool) -> None:
    """Where each job is scheduled, and its last run and result.

    \b
    Example:
        memory-chain schedule status --json
    """
    from memory_chain.integrations.schedule import status

    info = status(data_dir())
    if as_json:
        emit_json(info)
        return
    for job, row in info["jobs"].items():
        where = ", ".join(row["scheduled"]) or "not scheduled"
        last = row["last_run"]
        if last is None:
            ran = "never ran"
        else:
            ran = f"last run {last['finished']}: " + (
                "ok" if last["ok"] else "FAILED: " + "; ".join(last["errors"])
            )
        click.echo(f"{job:9} {where}; {ran}")


@schedule.command("remove", context_settings=CONTEXT_SETTINGS)
@json_option
def schedule_remove(as_json: bool) -> None:
    """Remove the timers and the crontab block that install wrote (nothing else).

    \b
    Example:
        memory-chain schedule remove
    """
    from memory_chain.integrations.schedule import remove

    done = remove()
    if as_json:
        emit_json(done)
    elif done["removed"]:
        for what in done["removed"]:
            click.echo(f"removed {what}")
    else:
        click.echo("nothing was scheduled")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", type=click.Choice(("capture", "curate", "maintain")))
@click.option("--transcripts", metavar="DIR", type=click.Path(path_type=Path), default=None)
@click.option("--buffer", metavar="FILE", type=click.Path(path_type=Path), default=None)
@click.option("--anchor", "anchor_network", metavar="NETWORK", default=None)
@publish_options
@dir_option
@json_option
def job(
    name: str,
    transcripts: Path | None,
    buffer: Path | None,
    anchor_network: str | None,
    publish: str | None,
    witnesses: tuple[str, ...],
    witness_urls: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run one scheduled job now (what the timers run); exit 2 when it fails.

    The outcome is kept in <data dir>/jobs/NAME.json and one line in
    <data dir>/logs/jobs.log.

    \b
    Example:
        memory-chain job curate
        memory-chain job capture --transcripts ~/.claude/projects
        memory-chain job maintain --anchor anvil
        memory-chain job maintain --publish ./log
    """
    from memory_chain.integrations.api import Memory
    from memory_chain.integrations.jobs import run_job

    pairs = _witness_pairs(publish, witnesses, witness_urls)
    with Memory(data_dir(), project=False) as memory:
        result = run_job(
            name,
            memory,
            transcripts=transcripts,
            buffer=buffer,
            anchor=anchor_network,
            publish=_publish_place(publish),
            witnesses=list(pairs),
        )
    if as_json:
        emit_json(result.as_dict())
    else:
        click.echo(f"{name}: ok, {_plain(result.summary)}")


def _plain(summary: Any) -> str:
    """A job's summary in words: ``curated 0, committed 0`` (nested parts in brackets),
    not a Python dict."""
    if not isinstance(summary, dict):
        return str(summary)
    parts = []
    for key, value in summary.items():
        label = str(key).replace("_", " ")
        if isinstance(value, dict):
            parts.append(f"{label} ({_plain(value)})")
        elif isinstance(value, list):
            parts.append(f"{label} {', '.join(str(v) for v in value) or 'none'}")
        else:
            parts.append(f"{label} {value}")
    return ", ".join(parts) or "nothing to do"


def _check_network(name: str) -> None:
    """--anchor must name a network `anchor` knows (built in, or in config.json)."""
    from memory_chain.anchor.networks import network_names
    from memory_chain.chain.format.config import Config, Layout
    from memory_chain.chain.format.errors import InputError, OperationalError

    try:
        names = network_names(Config.load(Layout(data_dir())))
    except OperationalError:  # no data directory yet: the built-in networks
        from memory_chain.anchor.networks import BUILT_IN

        names = sorted(BUILT_IN)
    if name not in names:
        raise InputError(f"unknown network {name!r}", hint=f"one of: {', '.join(names)}")

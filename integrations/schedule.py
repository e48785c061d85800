"""``schedule install|status|remove``: the jobs of jobs.py on a timer, systemd or cron.

systemd (user units in ``$XDG_CONFIG_HOME/systemd/user``, default
``~/.config/systemd/user``): for each job a ``memory-chain-<job>.service``
(Type=oneshot, running ``memory-chain --dir D job <job>``) and a
``.timer`` (OnCalendar in UTC, Persistent=true so a run missed while the
machine slept is made up), then ``systemctl --user daemon-reload`` and
``enable --now`` of the timers when a user manager runs.

cron: one block in the user's crontab between ``# BEGIN memory-chain`` and
``# END memory-chain`` (what is outside it is kept as it is), its times in
the machine's local time at the UTC offset when installed (Debian's cron
ignores ``CRON_TZ``, so the block relied on it no longer). The crontab is
read with ``crontab -l`` and written with ``crontab -``
(``$MEMORY_CHAIN_CRONTAB`` names another program).

Installing twice changes nothing; remove takes out only what install
wrote. The capture job is installed only when there is something to
capture (a transcript folder or a session buffer).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.errors import InputError, OperationalError

__all__ = [
    "CALENDARS",
    "CRON",
    "Plan",
    "crontab_block",
    "install",
    "plan",
    "remove",
    "status",
    "units",
]

#: When each job runs: systemd OnCalendar and the cron expression (both UTC).
CALENDARS: Final = {
    "capture": "*-*-* *:00/30:00 UTC",
    "curate": "Sun *-*-* 10:00:00 UTC",
    "maintain": "Sun *-*-* 11:00:00 UTC",
}
CRON: Final = {"capture": "*/30 * * * *", "curate": "0 10 * * 0", "maintain": "0 11 * * 0"}
DESCRIPTIONS: Final = {
    "capture": "capture new agent transcripts into the daily file (every 30 minutes)",
    "curate": "curate the week's daily files into MEMORY.md and the chain (Sunday 10:00 UTC)",
    "maintain": "verify, stats, gc, decay, anchor and publish (Sunday 11:00 UTC)",
}
BEGIN: Final = "# BEGIN memory-chain (written by `memory-chain schedule install`; edit there)"
END: Final = "# END memory-chain"
ENV_CRONTAB: Final = "MEMORY_CHAIN_CRONTAB"


@dataclass(slots=True)
class Plan:
    """The jobs to schedule and the command line of each."""

    commands: dict[str, list[str]]
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Installed:
    kind: str
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: bool = False
    enabled: bool | None = None
    note: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan(
    prog: list[str],
    *,
    transcripts: Path | None = None,
    buffer: Path | None = None,
    anchor: str | None = None,
    publish: str | None = None,
    witnesses: tuple[tuple[str, str], ...] = (),
) -> Plan:
    commands: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    if transcripts is None and buffer is None:
        skipped["capture"] = "no transcript folder or session buffer (--transcripts, --buffer)"
    else:
        extra: list[str] = []
        if transcripts is not None:
            extra += ["--transcripts", str(transcripts.expanduser().absolute())]
        if buffer is not None:
            extra += ["--buffer", str(buffer.expanduser().absolute())]
        commands["capture"] = [*prog, "job", "capture", *extra]
    commands["curate"] = [*prog, "job", "curate"]
    maintain = [*prog, "job", "maintain", *(["--anchor", anchor] if anchor else [])]
    if publish is not None:
        maintain += ["--publish", publish]
        for vkey, url in witnesses:
            maintain += ["--witness", vkey, "--witness-url", url]
    commands["maintain"] = maintain
    for argv in commands.values():
        for word in argv:
            _check_word(word)
    return Plan(commands, skipped)


def _check_word(word: str) -> None:
    """A word bound for a unit file or a crontab line: no control character can be quoted there.

    A newline would end the ExecStart= line (the rest becomes a directive
    of the unit) or the crontab entry; systemd and cron quote nothing else
    that could, and what remains is quoted for each (_exec, crontab_block).
    """
    bad = next((c for c in word if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        raise InputError(
            f"{word!r} holds a control character ({bad!r}): it cannot be written into a "
            "unit file or a crontab",
            hint="rename the folder, or give another path; nothing was written",
        )


# -- systemd ---------------------------------------------------------------------


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else Path.home() / ".config") / "systemd" / "user"


def _exec(argv: list[str]) -> str:
    """An ExecStart line: each word quoted for systemd, % doubled (a specifier otherwise)."""
    return " ".join(
        '"' + a.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"' for a in argv
    )


def units(p: Plan) -> dict[str, str]:
    """The unit files, by name."""
    out: dict[str, str] = {}
    for job, argv in p.commands.items():
        name = f"memory-chain-{job}"
        out[f"{name}.service"] = (
            "[Unit]\n"
            f"Description=memory-chain: {DESCRIPTIONS[job]}\n\n"
            "[Service]\n"
            "Type=oneshot\n"
            f"ExecStart={_exec(argv)}\n"
            "Nice=10\n"
        )
        out[f"{name}.timer"] = (
            "[Unit]\n"
            f"Description=memory-chain: {DESCRIPTIONS[job]}\n\n"
            "[Timer]\n"
            f"OnCalendar={CALENDARS[job]}\n"
            "Persistent=true\n"
            "RandomizedDelaySec=60\n\n"
            "[Install]\n"
            "WantedBy=timers.target\n"
        )
    return out


def _systemctl(*args: str) -> bool:
    tool = shutil.which("systemctl")
    if tool is None:
        return False
    try:
        proc = subprocess.run([tool, "--user", *args], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _systemd_install(p: Plan) -> Installed:
    from .files import write_if_changed

    folder = unit_dir()
    folder.mkdir(parents=True, exist_ok=True)
    done = Installed("systemd", skipped=p.skipped)
    wanted = units(p)
    for name, text in wanted.items():
        if write_if_changed(folder / name, text.encode()):
            done.written.append(str(folder / name))
    for old in _ours(folder):
        if old.name not in wanted:  # a job no longer planned (capture without a source)
            _systemctl("disable", "--now", old.name)
            old.unlink()
            done.removed.append(str(old))
    done.unchanged = not done.written and not done.removed
    timers = [n for n in wanted if n.endswith(".timer")]
    done.enabled = _systemctl("daemon-reload") and _systemctl("enable", "--now", *timers)
    if not done.enabled:
        done.note = (
            "no systemd user manager answered; when one runs: systemctl --user daemon-reload "
            f"&& systemctl --user enable --now {' '.join(timers)}"
        )
    return done


def _ours(folder: Path) -> list[Path]:
    try:
        return sorted(
            p
            for p in folder.iterdir()
            if p.name.startswith("memory-chain-") and p.suffix in (".service", ".timer")
        )
    except OSError:
        return []


# -- cron ----------------------------------------------------------------------------


def local_cron(expr: str, offset_minutes: int) -> str:
    """A UTC cron expression of the form "M H * * D" in local time (others as they are).

    Debian's cron (vixie) ignores CRON_TZ: a crontab's times are the
    machine's local time, so the UTC times are written converted, at the
    UTC offset in force when installed.
    """
    parts = expr.split()
    if len(parts) != 5 or not parts[0].isdigit() or not parts[1].isdigit():
        return expr  # every 30 minutes: the same in every zone with whole-hour offsets
    minutes = int(parts[1]) * 60 + int(parts[0]) + offset_minutes
    day_shift, minutes = divmod(minutes, 24 * 60)
    dow = parts[4]
    if dow.isdigit():
        dow = str((int(dow) + day_shift) % 7)
    return f"{minutes % 60} {minutes // 60} {parts[2]} {parts[3]} {dow}"


def utc_offset_minutes() -> int:
    """The machine's UTC offset now, in minutes (local time = UTC + offset)."""
    import time

    return -(time.altzone if time.localtime().tm_isdst > 0 else time.timezone) // 60


def crontab_block(p: Plan, offset_minutes: int | None = None) -> str:
    offset = utc_offset_minutes() if offset_minutes is None else offset_minutes
    sign = "+" if offset >= 0 else "-"
    zone = f"UTC{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    lines = [
        BEGIN,
        f"# times are this machine's local time ({zone} when installed; cron ignores "
        "CRON_TZ here): run `memory-chain schedule install` again after a clock change",
    ]
    for job, argv in p.commands.items():
        lines.append(f"# {DESCRIPTIONS[job]}")
        # cron turns an unescaped % into a newline (the rest is the job's stdin).
        command = shlex.join(argv).replace("%", "\\%")
        lines.append(f"{local_cron(CRON[job], offset)} {command} >/dev/null 2>&1")
    lines.append(END)
    return "\n".join(lines) + "\n"


def _crontab_program() -> str:
    prog = os.environ.get(ENV_CRONTAB) or shutil.which("crontab")
    if not prog:
        raise OperationalError("no crontab program here", hint="install cron, or use --systemd")
    return prog


def _read_crontab() -> str:
    proc = subprocess.run(
        [_crontab_program(), "-l"], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        if "no crontab" in proc.stderr.lower():
            return ""
        raise OperationalError(f"crontab -l failed: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def _write_crontab(text: str) -> None:
    proc = subprocess.run(
        [_crontab_program(), "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        raise OperationalError(f"crontab - failed: {proc.stderr.strip() or proc.returncode}")


def without_block(text: str) -> str:
    """The crontab without our block (everything else byte for byte)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for line in lines:
        if line.rstrip("\n") == BEGIN:
            inside = True
            continue
        if inside and line.rstrip("\n") == END:
            inside = False
            continue
        if not inside:
            out.append(line)
    return "".join(out)


def _cron_install(p: Plan) -> Installed:
    current = _read_crontab()
    rest = without_block(current)
    if rest and not rest.endswith("\n"):
        rest += "\n"
    new = rest + crontab_block(p)
    done = Installed("cron", skipped=p.skipped)
    if new == current:
        done.unchanged = True
        return done
    _write_crontab(new)
    done.written.append("crontab")
    return done


# -- the commands ---------------------------------------------------------------------


def default_kind() -> str:
    """systemd when a user manager answers, else cron."""
    return "systemd" if _systemctl("show-environment") else "cron"


def install(p: Plan, kind: str) -> Installed:
    if kind == "systemd":
        return _systemd_install(p)
    if kind == "cron":
        return _cron_install(p)
    raise InputError(f"unknown scheduler {kind!r}", hint="--systemd or --cron")


def remove() -> dict[str, Any]:
    """Take out our units and our crontab block, wherever they are."""
    removed: list[str] = []
    folder = unit_dir()
    ours = _ours(folder)
    if ours:
        _systemctl("disable", "--now", *[p.name for p in ours if p.suffix == ".timer"])
        for path in ours:
            path.unlink()
            removed.append(str(path))
        _systemctl("daemon-reload")
    try:
        current = _read_crontab()
    except OperationalError:
        current = ""
    if BEGIN in current:
        _write_crontab(without_block(current))
        removed.append("crontab")
    return {"removed": removed}


def status(data_dir: Path) -> dict[str, Any]:
    from .jobs import JOBS, last_runs

    folder = unit_dir()
    names = {p.name for p in _ours(folder)}
    try:
        cron = _read_crontab()
    except OperationalError:
        cron = ""
    block = cron[cron.index(BEGIN) :] if BEGIN in cron else ""
    runs = last_runs(data_dir)
    jobs = {}
    for job in JOBS:
        where = []
        if f"memory-chain-{job}.timer" in names:
            where.append("systemd")
        if f" job {job}" in block:
            where.append("cron")
        jobs[job] = {"scheduled": where, "last_run": runs[job]}
    return {"unit_dir": str(folder), "jobs": jobs}

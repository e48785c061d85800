"""OpenClaw: our two internal hooks (seed 001), installed as managed hooks.

OpenClaw discovers hook folders (HOOK.md + handler.js) in its managed
directory ``<state dir>/hooks/`` (shared/reference/openclaw.md section 2);
the state directory is ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``
(``~/.openclaw-<profile>`` with ``$OPENCLAW_PROFILE``). Install copies
``memory-chain-bootstrap`` and ``memory-chain-reset`` there, each with the
shared runner ``memory-chain.js`` and a ``command.json`` naming this
memory-chain, then enables them with ``openclaw hooks enable`` when the
openclaw CLI is on PATH (we do not edit openclaw.json ourselves: once one
entry is named there, the named ones become an allowlist). An existing
OpenClaw workspace (MEMORY.md, memory/*.md) is read as it is: point
``--workspace`` (or config.json "workspace") at it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

__all__ = ["HOOK_NAMES", "hooks_dir", "install", "status", "uninstall"]

HOOK_NAMES: Final = ("memory-chain-bootstrap", "memory-chain-reset")
RUNNER: Final = "memory-chain.js"
COMMAND_FILE: Final = "command.json"


@dataclass(slots=True)
class OpenClawChange:
    hooks_dir: str
    installed: list[str] = field(default_factory=list)
    changed: bool = False
    enabled: bool = False
    next_step: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def state_dir() -> Path:
    env = os.environ.get("OPENCLAW_STATE_DIR")
    if env:
        return Path(env).expanduser()
    profile = os.environ.get("OPENCLAW_PROFILE")
    return Path.home() / (f".openclaw-{profile}" if profile else ".openclaw")


def hooks_dir(base: Path | None = None) -> Path:
    return (base or state_dir()) / "hooks"


def _files(name: str, prog: list[str]) -> dict[str, bytes]:
    """The files of one installed hook folder, by name."""
    assets = resources.files("memory_chain.integrations") / "openclaw-hooks"
    command = json.dumps({"argv": prog}, indent=2) + "\n"
    return {
        "HOOK.md": (assets / name / "HOOK.md").read_bytes(),
        "handler.js": (assets / name / "handler.js").read_bytes(),
        RUNNER: (assets / RUNNER).read_bytes(),
        COMMAND_FILE: command.encode(),
    }


def install(prog: list[str], base: Path | None = None) -> OpenClawChange:
    """Write (or refresh) both hook folders; enable them when the openclaw CLI is here."""
    from .files import write_if_changed

    target = hooks_dir(base)
    change = OpenClawChange(str(target), list(HOOK_NAMES))
    for name in HOOK_NAMES:
        folder = target / name
        folder.mkdir(parents=True, exist_ok=True)
        for fname, data in _files(name, prog).items():
            if write_if_changed(folder / fname, data):
                change.changed = True
    cli = shutil.which("openclaw")
    if cli is not None:
        ok = all(
            subprocess.run(
                [cli, "hooks", "enable", name], capture_output=True, timeout=60, check=False
            ).returncode
            == 0
            for name in HOOK_NAMES
        )
        change.enabled = ok
    if not change.enabled:
        change.next_step = " && ".join(f"openclaw hooks enable {n}" for n in HOOK_NAMES) + (
            " (then restart the Gateway)"
        )
    return change


def uninstall(base: Path | None = None) -> OpenClawChange:
    target = hooks_dir(base)
    change = OpenClawChange(str(target))
    cli = shutil.which("openclaw")
    for name in HOOK_NAMES:
        folder = target / name
        if (folder / "HOOK.md").is_file() and (folder / COMMAND_FILE).is_file():
            if cli is not None:
                subprocess.run(
                    [cli, "hooks", "disable", name], capture_output=True, timeout=60, check=False
                )
            shutil.rmtree(folder)
            change.installed.append(name)
            change.changed = True
    return change


def status(base: Path | None = None) -> dict[str, Any]:
    target = hooks_dir(base)
    hooks: dict[str, Any] = {}
    for name in HOOK_NAMES:
        folder = target / name
        try:
            argv = json.loads((folder / COMMAND_FILE).read_text("utf-8"))["argv"]
        except (OSError, ValueError, KeyError, TypeError):
            argv = None
        hooks[name] = {
            "installed": (folder / "handler.js").is_file() and argv is not None,
            "command": argv,
            "program_found": bool(argv) and shutil.which(str(argv[0])) is not None,
        }
    return {"hooks_dir": str(target), "hooks": hooks}

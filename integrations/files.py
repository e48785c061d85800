"""The small file writes the integrations share: log lines and files rewritten only on change.

Logs are one line per event in ``<data dir>/logs/<name>`` (mode 0600). A log that has
reached LOG_MAX_BYTES is renamed ``<name>.1`` (replacing the one before) before the next
line, so that a log kept by every session start or page view does not grow without end.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = [
    "LOG_MAX_BYTES",
    "append_line",
    "pin_workspace",
    "utc_now",
    "workspace_drift",
    "write_if_changed",
]

#: A log this large is set aside as ``<name>.1`` before the next line is appended.
LOG_MAX_BYTES = 4 << 20


def utc_now() -> str:
    """The time as the logs and job records write it: UTC, %Y-%m-%dT%H:%M:%SZ."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def append_line(data_dir: Path, name: str, line: str) -> None:
    """Append ``line`` (whitespace folded to single spaces) and a LF to logs/``name``."""
    folder = data_dir / "logs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = " ".join(line.split()) + "\n"
    path = folder / name
    try:
        if path.stat().st_size >= LOG_MAX_BYTES:
            os.replace(path, folder / f"{name}.1")  # the older half of the history stays
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def write_if_changed(path: Path, data: bytes) -> bool:
    """Replace ``path`` with ``data`` atomically unless it already holds them; True if written."""
    from memory_chain.chain.format.fsutil import replace_file

    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    replace_file(path, data)
    return True


def workspace_drift(data_dir: Path) -> tuple[Path, Path] | None:
    """(the user workspace this shell reads, the one a door without its environment reads),
    when $MEMORY_CHAIN_WORKSPACE makes them differ; else None.

    Timers, hooks and the MCP server may run without the variable: they read
    config.json's "workspace", else <data dir>/workspace.
    """
    from memory_chain.chain.format.config import Config, Layout
    from memory_chain.chain.format.errors import MemoryChainError
    from memory_chain.workspace.scopes import ENV_WORKSPACE, resolve_user_root

    env = os.environ.get(ENV_WORKSPACE)
    if not env:
        return None
    try:
        config = Config.load(Layout(data_dir)).data
    except MemoryChainError:
        config = {}
    here = Path(env).expanduser().absolute()
    elsewhere = resolve_user_root(data_dir, None, config, environ=False).absolute()
    return None if here == elsewhere else (here, elsewhere)


def pin_workspace(data_dir: Path) -> Path | None:
    """Write the workspace $MEMORY_CHAIN_WORKSPACE names into config.json ("workspace") when
    doors started without that variable would read another one; the pinned path, or None.

    An installed timer, hook or MCP server then captures into, and reads, the
    workspace the person set up (they went to <data dir>/workspace before).
    """
    from memory_chain.chain.format.config import Config, Layout

    drift = workspace_drift(data_dir)
    if drift is None:
        return None
    layout = Layout(data_dir)
    if not layout.config.exists():
        return None  # no chain yet: `init` comes first
    config = Config.load(layout)
    config.data["workspace"] = str(drift[0])
    config.save(layout)
    return drift[0]

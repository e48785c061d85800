"""The small file writes the integrations share: log lines and files rewritten only on change.

Logs are one line per event in ``<data dir>/logs/<name>`` (mode 0600).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["append_line", "utc_now", "write_if_changed"]


def utc_now() -> str:
    """The time as the logs and job records write it: UTC, %Y-%m-%dT%H:%M:%SZ."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def append_line(data_dir: Path, name: str, line: str) -> None:
    """Append ``line`` (whitespace folded to single spaces) and a LF to logs/``name``."""
    folder = data_dir / "logs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = " ".join(line.split()) + "\n"
    fd = os.open(folder / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
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

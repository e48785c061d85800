"""One writer for every file the CLI writes where the user points it (-o, export's FILE).

The target is checked before the command does any work (no checkpoint is
made, nothing is signed, for an output that cannot be written), and:

- it must not be inside the data directory, nor one of a workspace's memory
  files (MEMORY.md, memory/, facts/, episodes/ of any scope in force): a
  proof written over agent.key or chain.jsonl destroys what it proves;
- its folder must exist (nothing is created);
- an existing path is replaced only when it is a regular file (never a
  symbolic link, folder, device, FIFO or socket), the user may write it,
  and --force was given;
- the bytes go to a temporary file in the same folder, are synced, and
  replace the target in one rename (fsutil.replace_file): it holds its old
  bytes or the new ones, and an error names the target, never the temporary
  file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

__all__ = ["Output", "force_option", "output_target"]


def force_option(f: Any) -> Any:
    return click.option(
        "--force", is_flag=True, help="Replace an existing regular file at the output path."
    )(f)


@dataclass(frozen=True, slots=True)
class Output:
    """Where a command's output goes: ``path`` None is stdout."""

    path: Path | None
    shown: str = "-"

    def write(self, data: bytes) -> None:
        if self.path is None:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        _write(self.path, self.shown, data)


def _bad(message: str, hint: str | None = None) -> Exception:
    from memory_chain.chain.format.errors import InputError

    return InputError(message, hint=hint)


def _protected() -> list[tuple[Path, str]]:
    """(resolved path, what it is) of everything an output must never replace."""
    from .common import data_dir, open_workspace

    out: list[tuple[Path, str]] = []
    with contextlib.suppress(Exception):
        out.append((Path(os.path.realpath(data_dir())), "the data directory"))
    with contextlib.suppress(Exception):
        for scope in open_workspace().in_order():
            root = Path(os.path.realpath(scope.root))
            what = f"the {scope.name} workspace's memory files"
            out += [(root / name, what) for name in ("MEMORY.md", "memory", "facts", "episodes")]
    return out


def output_target(value: str | None, *, force: bool = False) -> Output:
    """Check ``value`` (a -o argument; None or "-" is stdout) before any work is done."""
    if value is None or value == "-":
        return Output(None)
    if not value or value.endswith("/"):
        raise _bad(f"not a file name: {value!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):  # NUL, newline: found by the fuzz
        raise _bad(f"refusing the file name {value!r}: it holds a control character")
    given = Path(value)
    try:
        folder = Path(os.path.realpath(given.parent, strict=True))
    except OSError:
        raise _bad(
            f"cannot write {value}: the folder {given.parent} does not exist",
            hint="create it first; nothing was written",
        ) from None
    if not folder.is_dir():
        raise _bad(f"cannot write {value}: {given.parent} is not a folder")
    target = folder / given.name
    for root, what in _protected():
        if target == root or root in target.parents:
            raise _bad(
                f"refusing to write {value}: it is inside {what} ({root})",
                hint="write the output somewhere else; nothing was written",
            )
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        if not os.access(folder, os.W_OK):
            raise _bad(f"cannot write {value}: the folder is not writable") from None
        return Output(target, value)
    _check_existing(value, st, force)
    if not os.access(target, os.W_OK) or not os.access(folder, os.W_OK):
        raise _bad(f"cannot replace {value}: permission denied")
    return Output(target, value)


def _check_existing(value: str, st: os.stat_result, force: bool) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise _bad(
            f"refusing to replace {value}: it is a symbolic link",
            hint="name the file it points to, or remove the link",
        )
    if not stat.S_ISREG(st.st_mode):
        raise _bad(f"refusing to replace {value}: it is not a regular file")
    if not force:
        raise _bad(f"{value} exists", hint="--force replaces it; nothing was written")


def _write(target: Path, shown: str, data: bytes) -> None:
    """fsutil.replace_file (temp file, fsync, rename, fsync of the folder), errors named
    after ``shown``; a path swapped for a device or link since output_target is refused."""
    from memory_chain.chain.format.fsutil import replace_file

    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(target).st_mode):
            raise _bad(f"refusing to replace {shown}: it is not a regular file")
    try:
        replace_file(target, data)
    except OSError as exc:
        raise _bad(f"cannot write {shown}: {exc.strerror}") from None

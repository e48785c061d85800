"""The one door through which memory tools reach files: paths that cannot leave a scope root.

``resolve(root, path)`` turns a tool's path into a real path inside
``root`` or raises SandboxError (exit 2, one line, nothing touched). Refused
(specs/WORKSPACE.md section 7):

* empty paths, NUL and other control characters, text that is not UTF-8
  (surrogate escapes from a non-UTF-8 command line);
* absolute paths, drive letters, backslashes, percent-encoded dots or
  slashes;
* ``..`` anywhere, hidden components (``.git``, ``.memory-chain.lock``);
* a component longer than 255 bytes, a path longer than 1,024 bytes or
  deeper than 8 folders;
* a symlink at any component below the root (checked with lstat, and the
  final open uses O_NOFOLLOW);
* file names that do not end in ``.md`` or ``.txt`` (only ``.md`` files are
  indexed and injected; a ``.txt`` file is a plain note the tools read and write);
* in the project scope, anything under ``local/`` (the local scope is a
  scope of its own).

``check_content`` is the other half of the door: what a tool may write.

The root itself may be a symlink (a workspace kept elsewhere): it is
resolved once, and everything below it is checked against that.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memory_chain.chain.format.errors import InputError
from memory_chain.chain.format.secrets import check as check_secret
from memory_chain.chain.format.secrets import scan as scan_secrets

if TYPE_CHECKING:
    from .scopes import Scope

__all__ = [
    "MAX_FILE_BYTES",
    "SandboxError",
    "check_content",
    "in_scope",
    "relative",
    "reserved",
    "resolve",
]

MAX_NAME_BYTES: Final = 255
MAX_PATH_BYTES: Final = 1024
MAX_DEPTH: Final = 8
#: Largest file a tool may write.
MAX_FILE_BYTES: Final = 256 * 1024
SUFFIXES: Final = (".md", ".txt")

_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_ENCODED: Final = re.compile(r"%(?:2e|2f|5c)", re.IGNORECASE)


class SandboxError(InputError):
    """A tool path that would leave its scope root, or is not allowed there."""


def _refuse(path: str, why: str) -> SandboxError:
    shown = path.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return SandboxError(f"path {shown!r} refused: {why}; nothing was read or written")


def _components(path: str, reserved: frozenset[str], shown: str) -> list[str]:
    if not path or not path.strip():
        raise _refuse(shown, "it is empty")
    if "\x00" in path:
        raise _refuse(shown, "it holds a NUL byte")
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in path):
        raise _refuse(shown, "it is not valid UTF-8")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise _refuse(shown, "it holds a control character")
    if path.startswith("/") or path.startswith("~") or _DRIVE.match(path):
        raise _refuse(shown, "it is absolute; give a path relative to the scope root")
    if "\\" in path:
        raise _refuse(shown, "it holds a backslash")
    if _ENCODED.search(path):
        raise _refuse(shown, "it holds a percent-encoded dot or slash")
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise _refuse(shown, f"it is longer than {MAX_PATH_BYTES} bytes")
    found = scan_secrets(path.replace("/", " / ").replace("_", " ").replace(".md", ""))
    found = found or scan_secrets(path)
    if found:  # never echo the path: the refusal would carry the secret into a log
        raise SandboxError(
            f"a path was refused: a name in it looks like a secret ({found[0].kind}); "
            "nothing was read or written"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise _refuse(shown, "it names the scope root itself")
    for part in parts:
        if part == "..":
            raise _refuse(shown, "it climbs out with '..'")
        if part.startswith("."):
            raise _refuse(shown, "hidden files and folders are off limits")
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _refuse(shown, f"a name is longer than {MAX_NAME_BYTES} bytes")
    if len(parts) > MAX_DEPTH + 1:
        raise _refuse(shown, f"it is deeper than {MAX_DEPTH} folders")
    if parts[0] in reserved:
        raise _refuse(shown, f"{parts[0]}/ belongs to another scope")
    return parts


def resolve(
    root: Path,
    path: str,
    *,
    folder: bool = False,
    reserved: frozenset[str] = frozenset(),
    shown: str | None = None,
) -> Path:
    """The real path of ``path`` under ``root`` (a .md or .txt file unless ``folder``).

    ``shown``: the path as the caller gave it (a refusal names that one).
    """
    shown = path if shown is None else shown
    parts = _components(path, reserved, shown)
    if not folder and not parts[-1].endswith(SUFFIXES):
        raise _refuse(shown, "only markdown (.md) and text (.txt) files are memory files")
    base = Path(os.path.realpath(root))
    here = base
    for part in parts:
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            break  # the rest does not exist yet: nothing below can be a link
        except NotADirectoryError:
            raise _refuse(shown, "a part of it is a file, not a folder") from None
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(shown, "it goes through a symbolic link")
    return base.joinpath(*parts)


def reserved(scope: Scope) -> frozenset[str]:
    """First components that belong to another scope (``local/`` inside the project root)."""
    return frozenset({"local"}) if scope.name == "project" else frozenset()


def in_scope(scope: Scope, path: str, *, folder: bool = False, shown: str | None = None) -> Path:
    """``resolve`` under a scope's root, with its reserved names."""
    return resolve(scope.root, path, folder=folder, reserved=reserved(scope), shown=shown)


def check_content(text: str, what: str) -> bytes:
    """The bytes a tool may write for ``text``: at most MAX_FILE_BYTES, no NUL, valid
    UTF-8, and nothing that looks like a secret (the secret gate)."""
    data = text.encode("utf-8", "surrogateescape")
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{what} is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")
    if "\x00" in text:
        raise InputError(f"{what} holds a NUL byte")
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in text):
        raise InputError(f"{what} is not valid UTF-8")
    check_secret(text, what=what)
    return data


def relative(root: Path, path: Path) -> str:
    """``path`` as a tool path (relative to ``root``, with '/')."""
    return path.relative_to(Path(os.path.realpath(root))).as_posix()


def read_file(path: Path, shown: str) -> bytes:
    """The bytes of a sandboxed file, opened without following a final symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{shown} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{shown} is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {shown}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{shown} is not a regular file")
        return f.read()

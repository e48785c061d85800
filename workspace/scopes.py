"""Where the workspace lives: the user, project and local scopes and their layout.

* **user**: ``--workspace DIR``, else ``$MEMORY_CHAIN_WORKSPACE``, else
  ``"workspace"`` in config.json, else ``<data dir>/workspace/``. An
  existing OpenClaw workspace (``~/.openclaw/workspace``) works as it is:
  its MEMORY.md and memory/ are read and written in place.
* **project**: ``<project>/.memory-chain/``, where the project is
  ``--project DIR``, else ``$CLAUDE_PROJECT_DIR``, else the nearest ancestor
  of the working directory holding ``.git`` or ``.memory-chain``.
* **local**: ``<project>/.memory-chain/local/``, kept out of git by its own
  ``.gitignore``.

Each scope root holds (specs/WORKSPACE.md section 2)::

    MEMORY.md              sections of bullet entries, injected at session start
    memory/YYYY-MM-DD.md   daily files
    memory/<topic>.md      topic files (consolidation moves sections here)
    memory/archive/        superseded, removed and trimmed entries, by month
    facts/*.md             fact files, each with a "> Summary:" line
    episodes/YYYY-MM.md    episode files, one "## " block per episode
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from memory_chain.chain.format.patterns import lazy
from memory_chain.chain.format.values import Value

__all__ = [
    "ENV_WORKSPACE",
    "SCOPES",
    "Scope",
    "Workspace",
    "find_project",
    "resolve_user_root",
]

ENV_WORKSPACE: Final = "MEMORY_CHAIN_WORKSPACE"
ENV_PROJECT: Final = "CLAUDE_PROJECT_DIR"
#: Merge order: later scopes override earlier ones.
SCOPES: Final = ("user", "project", "local")
PROJECT_DIR: Final = ".memory-chain"
LOCAL_GITIGNORE: Final = "# memory-chain local scope: this machine only, never committed\n*\n"
PROJECT_GITIGNORE: Final = "# memory-chain: the writers' lock file\n.memory-chain.lock\n"

_DAILY: Final = lazy(r"\d{4}-\d{2}-\d{2}\.md")
_EPISODES: Final = lazy(r"\d{4}-\d{2}\.md")


def resolve_user_root(
    data_dir: Path,
    explicit: str | os.PathLike[str] | None = None,
    config: dict[str, Any] | None = None,
    *,
    environ: bool = True,
) -> Path:
    """The user workspace: explicit, else $MEMORY_CHAIN_WORKSPACE, else config, else default.

    ``environ`` False: as a door started without the variable finds it.
    """
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_WORKSPACE) if environ else None
    if env:
        return Path(env).expanduser()
    configured = (config or {}).get("workspace")
    if isinstance(configured, str) and configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else data_dir / path
    return data_dir / "workspace"


def find_project(
    explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> Path | None:
    """The project: explicit, else $CLAUDE_PROJECT_DIR, else the nearest marked ancestor."""
    if explicit:
        given = Path(explicit).expanduser().resolve()
        if not given.is_dir():
            from memory_chain.chain.format.errors import InputError

            raise InputError(
                f"no such project folder: {explicit}",
                hint="give a folder that exists (nothing was created)",
            )
        return given
    env = os.environ.get(ENV_PROJECT)
    if env and Path(env).expanduser().is_dir():
        return Path(env).expanduser().resolve()
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists() or (d / PROJECT_DIR).is_dir():
            return d
    return None


class Scope(Value):
    """One scope root and the paths inside it."""

    __slots__ = ("name", "root")
    name: str
    root: Path

    def __init__(self, name: str, root: Path) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "root", root)

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def archive_dir(self) -> Path:
        return self.root / "memory" / "archive"

    def daily(self, day: str) -> Path:
        """memory/YYYY-MM-DD.md."""
        return self.memory_dir / f"{day}.md"

    def archive(self, month: str) -> Path:
        """memory/archive/YYYY-MM.md."""
        return self.archive_dir / f"{month}.md"

    def prepare(self) -> None:
        """Create the root (and the .gitignore a project or local root needs)."""
        from .files import write_atomic  # only when a scope is first written

        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if self.name in ("local", "project") and not ignore.exists():
            write_atomic(
                ignore, (LOCAL_GITIGNORE if self.name == "local" else PROJECT_GITIGNORE).encode()
            )

    def files(self) -> Iterator[tuple[str, Path]]:
        """(kind, path) of every workspace file in this scope, by kind then name.

        Kinds: memory (MEMORY.md), daily, topic, fact, episode, archive.
        Hidden files, symlinks and non-.md files are left out.
        """
        if _is_file(self.memory_md):
            yield "memory", self.memory_md
        for path in _md_files(self.memory_dir):
            yield ("daily" if _DAILY.fullmatch(path.name) else "topic"), path
        for path in _md_files(self.root / "facts"):
            yield "fact", path
        for path in _md_files(self.root / "episodes"):
            yield "episode", path
        for path in _md_files(self.archive_dir):
            yield "archive", path


def _is_file(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def _md_files(folder: Path) -> list[Path]:
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        folder / n
        for n in names
        if n.endswith(".md") and not n.startswith(".") and n.isprintable() and _utf8(n)
    ]


def _utf8(name: str) -> bool:
    """False for a file name whose bytes are not UTF-8 (no index, JSON or terminal holds it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Folders a workspace may not be, or be inside, wherever a symbolic link points (issue 22:
#: a --workspace linked to a system folder was followed and written into).
SYSTEM_FOLDERS: Final = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sbin",
    "/sys",
    "/usr",
    "/var/log",
)


def _not_a_system_folder(root: Path) -> None:
    """Refuse a user workspace that is, or resolves into, the file system's root or a system
    folder (a symlinked workspace is fine anywhere else)."""
    real = Path(os.path.realpath(root.expanduser()))
    bad = real == Path("/") or any(
        real == Path(top) or Path(top) in real.parents for top in SYSTEM_FOLDERS
    )
    if bad:
        from memory_chain.chain.format.errors import InputError

        raise InputError(
            f"the workspace {root} is {real}, a system folder: memory files are not written there",
            hint="give --workspace a folder of your own; nothing was written",
        )


class Workspace:
    """The scopes in force: always user; project and local when there is a project."""

    def __init__(self, user_root: Path, project: Path | None) -> None:
        self.project = project
        self.scopes: dict[str, Scope] = {"user": Scope("user", user_root)}
        if project is not None:
            base = project / PROJECT_DIR
            self.scopes["project"] = Scope("project", base)
            self.scopes["local"] = Scope("local", base / "local")

    @classmethod
    def resolve(
        cls,
        data_dir: Path,
        *,
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | None = None,
        config: dict[str, Any] | None = None,
        cwd: Path | None = None,
    ) -> Workspace:
        user = resolve_user_root(data_dir, workspace, config)
        if user.exists() and not user.is_dir():
            from memory_chain.chain.format.errors import InputError

            raise InputError(
                f"the workspace {user} is not a folder",
                hint="give --workspace a folder (it is created if missing); nothing was written",
            )
        _not_a_system_folder(user)
        return cls(user, find_project(project, cwd))

    def scope(self, name: str) -> Scope:
        from memory_chain.chain.format.errors import InputError

        if name not in SCOPES:
            raise InputError(f"unknown scope {name!r}", hint=f"choose one of: {', '.join(SCOPES)}")
        found = self.scopes.get(name)
        if found is None:
            raise InputError(
                f"no project here for the {name} scope",
                hint="run inside a git repository, or pass --project DIR",
            )
        return found

    def in_order(self) -> list[Scope]:
        """The scopes in merge order (user, project, local)."""
        return [self.scopes[n] for n in SCOPES if n in self.scopes]

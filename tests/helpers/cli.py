"""Shared support for the CLI tests: a runner that drives `memory-chain` and guards secrets.

``Cli.run`` runs the installed console script in a subprocess (exit codes,
stderr, refusals); ``Cli.ok`` runs ``main(argv)`` in-process for speed (setup
and output formats). Either way ``Cli`` checks that no secret signing seed
(raw, encrypted, env or retired) is ever printed. The fixtures built on it
live in tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from memory_chain.chain.format.errors import MemoryChainError
from memory_chain.chain.format.keys import load_signer
from memory_chain.cli.main import main

AMBIENT = (
    "MEMORY_CHAIN_DIR",
    "MEMORY_CHAIN_SIGNING_KEY",
    "MEMORY_CHAIN_NEW_SIGNING_KEY",
    "MEMORY_CHAIN_PASSPHRASE",
    "MEMORY_CHAIN_WORKSPACE",
    "CLAUDE_PROJECT_DIR",
    "CLAUDECODE",  # an agent's shell: CLI writes would be the agent's (provenance)
    "MEMORY_CHAIN_ORIGIN",
)
SEED_ENV = ("MEMORY_CHAIN_SIGNING_KEY", "MEMORY_CHAIN_NEW_SIGNING_KEY")
PASSPHRASE = "correct horse battery staple"
MAX_CONTENT = 65536
HEX64 = re.compile(r"[0-9a-f]{64}")


def _script() -> str:
    beside = Path(sys.executable).with_name("memory-chain")
    if beside.exists():
        return str(beside)
    found = shutil.which("memory-chain")
    assert found is not None, "the memory-chain console script is not installed"
    return found


SCRIPT = _script()


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class Cli:
    """Runs memory-chain on one data directory; fails if a secret seed is ever printed."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.chain = root / "chain.jsonl"
        self.env = {k: v for k, v in os.environ.items() if k not in AMBIENT}
        self.env.update(HOME=str(home), MEMORY_CHAIN_DIR=str(root))
        self.secrets: set[str] = set()
        self.last_exception: BaseException | None = None  # of the last invoke()
        self._unsealed: dict[tuple[str, int], str] = {}

    def _collect(self, env: dict[str, str]) -> None:
        for name in SEED_ENV:
            value = env.get(name, "").strip().lower()
            if HEX64.fullmatch(value):
                self.secrets.add(value)
        try:
            files = [*self.root.glob("agent.key*"), *self.root.glob("keys/retired/*")]
        except OSError:
            return
        for path in files:
            if not path.is_file() or path.name.endswith(".tmp"):
                continue
            if ".enc" in path.name:
                self._collect_sealed(path, env.get("MEMORY_CHAIN_PASSPHRASE"))
                continue
            text = path.read_text("ascii", errors="replace").strip().lower()
            if HEX64.fullmatch(text):
                self.secrets.add(text)

    def _collect_sealed(self, path: Path, phrase: str | None) -> None:
        st = path.stat()
        marker = (str(path), st.st_mtime_ns)
        if phrase is None or marker in self._unsealed:
            return
        try:
            seed = load_signer(path, "encrypted", lambda _p, _c: phrase).seed().hex()
        except MemoryChainError:
            return
        self._unsealed[marker] = seed
        self.secrets.add(seed)

    def _check(self, args: tuple[str | bytes, ...], out: str, err: str) -> None:
        for seed in self.secrets:
            assert seed not in out.lower(), f"secret seed printed on stdout by {args}"
            assert seed not in err.lower(), f"secret seed printed on stderr by {args}"

    def run(
        self, *args: str | bytes, stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> Result:
        """Run the console script in a subprocess, as a user does."""
        run_env = {**self.env, **(env or {})}
        self._collect(run_env)
        proc = subprocess.run(
            [SCRIPT, *args], input=stdin, env=run_env, capture_output=True, timeout=60
        )
        self._collect(run_env)
        out = proc.stdout.decode("utf-8", errors="replace")
        err = proc.stderr.decode("utf-8", errors="replace")
        self._check(args, out, err)
        return Result(proc.returncode, out, err)

    def invoke(self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Result:
        """Run main(argv) in this process (fast: setup, output checks, fuzzing), any exit code."""
        run_env: dict[str, str | None] = {name: None for name in AMBIENT}
        run_env.update(HOME=self.env["HOME"], MEMORY_CHAIN_DIR=str(self.root), **(env or {}))
        self._collect({k: v for k, v in run_env.items() if v is not None})
        showwarning = warnings.showwarning
        try:
            result = CliRunner().invoke(
                _ViaMain("memory-chain"), list(args), input=stdin, env=run_env
            )
        finally:
            warnings.showwarning = showwarning
        self._collect({k: v for k, v in run_env.items() if v is not None})
        self._check(args, result.stdout, result.stderr)
        self.last_exception = result.exception
        return Result(result.exit_code, result.stdout, result.stderr)

    def ok(self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Result:
        """invoke(), requiring exit 0."""
        result = self.invoke(*args, stdin=stdin, env=env)
        assert 0 == result.code, result.err or repr(self.last_exception)
        return result


class _ViaMain(click.Command):
    """Lets CliRunner drive memory_chain.cli.main.main, which maps errors to exit codes."""

    def main(self, args: Any = None, prog_name: Any = None, **_extra: Any) -> Any:  # type: ignore[override]
        return main(list(args or ()))


def assert_rejected(
    cli: Cli,
    *args: str | bytes,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    watch: Path | None = None,
    only_error_lines: bool = True,
) -> Result:
    """Exit 2, one `error:` line (and at most a `hint:` line), chain.jsonl byte-identical.

    With ``only_error_lines=False`` stderr need only start with the `error:` line.
    """
    watched = watch or cli.chain
    before = _read(watched)
    result = cli.run(*args, stdin=stdin, env=env)
    lines = result.err.splitlines()
    assert 2 == result.code, result.err
    assert lines, "nothing on stderr"
    assert lines[0].startswith("error:"), result.err
    if only_error_lines:
        assert [] == [line for line in lines[1:] if not line.startswith("hint:")], result.err
        assert len(lines) <= 2, result.err
    assert before == _read(watched)
    return result


def stored_blob(root: Path, content_hash: str) -> bytes | None:
    """The bytes a data directory holds for ``content_hash`` (None: gone or erased)."""
    from memory_chain.chain.content.store import ContentStore

    store = ContentStore(root / "content")
    try:
        return store.raw(content_hash)
    finally:
        store.close()


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def file_bytes(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder, or the index cache).

    memory.db is a cache any reader may bring up to date; every other file
    is compared byte for byte.
    """
    return {
        str(p.relative_to(root)): (
            p.read_bytes() if p.is_file() and not p.name.startswith("memory.db") else None
        )
        for p in sorted(root.rglob("*"))
    }


# -- add --batch input ---------------------------------------------------------

BATCH = [
    {"content": "User prefers short answers", "type": "preference"},
    {"content": "Temporary token", "tier": "ephemeral", "source": "auto", "importance": 40},
    {"content": "Deploys on Tuesdays", "type": "fact", "meta": {"team": "infra", "k": 1}},
]


def jsonl(items: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(item).encode() + b"\n" for item in items)

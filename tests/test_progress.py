"""Progress bars: on stderr when a person watches a terminal; never in --json, pipes or CI.

The terminal is a real pseudo-terminal (os.openpty) around a real
`memory-chain` process.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from memory_chain.chain.format.keys import Signer
from memory_chain.chain.store.ledger import Ledger, NewEntry

EXE = Path(sys.executable).parent / "memory-chain"


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("progress") / "chain"
    ledger = Ledger.init(root, name="progress", signer=Signer(bytes(32)))
    ledger.add_batch([NewEntry(f"memory {i} for the progress bar".encode()) for i in range(3000)])
    ledger.close()
    return root


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """Everything a terminal shows while `memory-chain ARGS` runs on it."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        os.execve(str(EXE), [str(EXE), *args], env)
    out = b""
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 60)
            data = os.read(fd, 65536) if ready else b""
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    os.waitpid(pid, 0)
    os.close(fd)
    return out


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MEMORY_CHAIN_NO_PROGRESS")}
    return {**env, **extra}


def test_a_terminal_shows_a_bar_with_a_rate(chain: Path) -> None:
    shown = _on_a_terminal(["--dir", str(chain), "verify", "--full"], _env())
    assert b"verify:" in shown and b"%|" in shown and b"B/s" in shown, shown
    assert b"ok: 3001 entries verified" in shown


def test_json_output_has_no_bar(chain: Path) -> None:
    shown = _on_a_terminal(["--dir", str(chain), "verify", "--full", "--json"], _env())
    assert b"%|" not in shown
    assert json.loads(shown.replace(b"\r\n", b"\n"))["ok"] is True


def test_ci_has_no_bar(chain: Path) -> None:
    shown = _on_a_terminal(["--dir", str(chain), "verify", "--full"], _env(CI="true"))
    assert b"%|" not in shown and b"ok: 3001 entries verified" in shown


def test_a_pipe_has_no_bar_and_never_imports_tqdm(chain: Path) -> None:
    probe = (
        "import sys\n"
        "from memory_chain.cli.main import main\n"
        "try:\n"
        f"    main(['--dir', {str(chain)!r}, 'verify', '--full'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('tqdm' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.stderr == "False\n" and done.stdout.startswith("ok: 3001 entries verified")

"""Issue 25: a command that only reads makes no durable write.

`memory-chain search` fsynced four times on exit (the index caught up with
the chain, access counts were written, the WAL was checkpointed). The index
is a cache rebuilt from the chain, so a read opens it with synchronous=OFF:
what it writes there is never fsynced. Counted with strace on the real
command (installed by .ci/test from Debian's packages).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

STRACE = shutil.which("strace")
pytestmark = pytest.mark.skipif(
    STRACE is None, reason="strace is not installed (.ci/test installs it from Debian)"
)
CLI = str(Path(sys.executable).with_name("memory-chain"))
_SYNC = re.compile(r"^\d+\s+(?:fsync|fdatasync)\(", re.M)


def _syncs(args: list[str], env: dict[str, str], tmp: Path) -> int:
    trace = tmp / "trace.txt"
    subprocess.run(
        [str(STRACE), "-f", "-e", "trace=fsync,fdatasync", "-o", str(trace), CLI, *args],
        env=env,
        check=True,
        capture_output=True,
    )
    return len(_SYNC.findall(trace.read_text()))


@pytest.mark.parametrize("args", [["search", "deploy"], ["context"]])
def test_reading_commands_never_fsync(tmp_path: Path, args: list[str]) -> None:
    env = {**os.environ, "MEMORY_CHAIN_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
    env["MEMORY_CHAIN_PASSPHRASE"] = "correct horse battery staple"
    subprocess.run([CLI, "init", "--name", "reader"], env=env, check=True, capture_output=True)
    subprocess.run([CLI, "add", "We deploy on Tuesdays"], env=env, check=True, capture_output=True)
    # the first read after an add catches the index up with the chain; so does this one
    subprocess.run(
        [CLI, "add", "Deploys are frozen in December"], env=env, check=True, capture_output=True
    )
    assert 0 == _syncs(args, env, tmp_path)
    # a write still is durable: the control that the count can fail
    assert _syncs(["add", "Deploys need two approvals"], env, tmp_path) > 0

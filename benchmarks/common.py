"""Small helpers every benchmark script shares: progress lines, statistics, git state.

Imported by the scripts as ``from common import ...`` (a script's own folder
is first on sys.path when run as ``python benchmarks/<name>.py``).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def log(msg: str) -> None:
    """A timestamped progress line on stderr (stdout carries the results)."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def pct(xs: Sequence[float], q: float) -> float:
    """Percentile q (0..100) with linear interpolation."""
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def git_state() -> dict[str, Any]:
    """The commit measured and any uncommitted changes (recorded with the results)."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    return {"commit": git("rev-parse", "HEAD"), "dirty": git("status", "--porcelain").splitlines()}

"""More SIGKILL trials than the test suite runs: nothing acknowledged is lost.

    python benchmarks/crash.py [--trials N] [--batch N] [--seed S]

Runs the crash loop of tests/test_crash.py (a child appends in a loop and
is SIGKILLed at a random moment; then the chain is reopened, one entry is
added, every acknowledged entry is checked at its seq with its content, and
the chain is verified) with more trials, and prints what the kills left
behind. Exits non-zero if any check failed.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_crash import run_kill_loop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--batch", type=int, default=0, help="batch size (0: single adds)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    print(f"seed {seed}, {args.trials} trials, batch {args.batch}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        stats, ledger = run_kill_loop(
            Path(tmp) / "chain", random.Random(seed), args.trials, batch=args.batch
        )
        entries = sum(1 for _ in ledger.entries())
    elapsed = time.perf_counter() - started
    print(
        f"| crash trials (batch {args.batch}) | {stats.trials} SIGKILLs, {stats.acked} "
        f"acknowledged entries, all present; chain of {entries} verifies | "
        f"lines beyond head {stats.head_behind}, journals left {stats.journal_left}, "
        f"torn tails {stats.torn_tails} | {elapsed:.0f} s |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

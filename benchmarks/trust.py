"""Issue 23 benchmarks: the secret screen per corpus part (tuned on, or held out).

    python benchmarks/trust.py            # every part, a table on stdout
    python benchmarks/trust.py --json     # the same as JSON

Each part of tests/corpora/ is scored through ``chain/format/secrets.scan``:
the share of its secrets blocked, the share of its non-secrets flagged
(false positives), and the scan's cost per string. The figures each part
gave when it was first scored, before any rule was fixed for it, are in
benchmarks/README.md beside these.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from secret_corpora import HELD_OUT, PARTS, rates  # noqa: E402

from memory_chain.chain.format.secrets import scan  # noqa: E402


def bench_part(rows: list[tuple[str, bool, str]]) -> dict[str, Any]:
    texts = [t for t, _, _ in rows]
    flagged = [bool(scan(t)) for t in texts]  # warm-up and the verdicts
    t0 = time.perf_counter()
    for _ in range(5):
        for t in texts:
            scan(t)
    per = (time.perf_counter() - t0) / 5 / len(texts) * 1e6
    blocked, fp = rates(rows, flagged)
    return {
        "strings": len(rows),
        "secrets": sum(s for _, s, _ in rows),
        "kinds": len({k for _, s, k in rows if s}),
        "blocked": blocked,
        "false_positives": fp,
        "scan_us": per,
        "missed": [t[:70] for (t, s, _), f in zip(rows, flagged, strict=True) if s and not f],
        "flagged": [t[:70] for (t, s, _), f in zip(rows, flagged, strict=True) if f and not s],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {name: bench_part(rows) for name, rows in PARTS.items()}
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    print("| part | strings | secrets (kinds) | blocked | false positives | scan |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        tag = " (held out)" if name in HELD_OUT else ""
        print(
            f"| {name}{tag} | {r['strings']} | {r['secrets']} ({r['kinds']}) | "
            f"{r['blocked']:.1%} | {r['false_positives']:.1%} | {r['scan_us']:.0f} µs |"
        )
    for name, r in results.items():
        for t in r["missed"]:
            print(f"missed [{name}]: {t}")
        for t in r["flagged"]:
            print(f"flagged [{name}]: {t}")


if __name__ == "__main__":
    main()

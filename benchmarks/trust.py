"""Issue 23 benchmarks: the secret screen and the poisoning defences, per corpus part.

    python benchmarks/trust.py            # every part, tables on stdout
    python benchmarks/trust.py --json     # the same as JSON
    python benchmarks/trust.py --only secrets|poisoning

Each part of tests/corpora/ is scored through ``chain/format/secrets.scan``:
the share of its secrets blocked, the share of its non-secrets flagged
(false positives), and the scan's cost per string. The figures each part
gave when it was first scored, before any rule was fixed for it, are in
benchmarks/README.md beside these.

Poisoning: each part of tests/corpora/poisoning-* goes through the real
hooks, ``curate --review auto`` (the most permissive mode) and ``context``
(tests/poisoning_harness.py); per channel, how many payloads reached the
daily files, a MEMORY.md, the chain, and the session-start block as
guidance or as a labelled note. The ``person`` rows are the control: a
person's own words, which must get through.
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

sys.path.insert(0, str(REPO / "tests" / "corpora"))

from poisoning_harness import load as load_payloads  # noqa: E402
from poisoning_harness import run as run_payloads  # noqa: E402
from poisoning_harness import table  # noqa: E402
from poisoning_heldout import rows as heldout_payloads  # noqa: E402
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


def bench_poisoning() -> dict[str, Any]:
    import os
    import tempfile

    corpora = REPO / "tests" / "corpora"
    parts = {
        "tune1": load_payloads(corpora / "poisoning-tune.tsv"),
        "tune2": load_payloads(corpora / "poisoning-tune2.tsv"),
        "heldout": heldout_payloads(),
    }
    script = str(Path(sys.executable).with_name("memory-chain"))
    out = {}
    for name, rows in parts.items():
        with tempfile.TemporaryDirectory(prefix="mc-poison-") as tmp:
            outcomes = run_payloads(rows, Path(tmp), script, dict(os.environ))
        out[name] = table(outcomes)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=("secrets", "poisoning"))
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.only in (None, "secrets"):
        results["secrets"] = {name: bench_part(rows) for name, rows in PARTS.items()}
    if args.only in (None, "poisoning"):
        results["poisoning"] = bench_poisoning()
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    if "secrets" in results:
        print("| part | strings | secrets (kinds) | blocked | false positives | scan |")
        print("|---|---|---|---|---|---|")
        for name, r in results["secrets"].items():
            tag = " (held out)" if name in HELD_OUT else ""
            print(
                f"| {name}{tag} | {r['strings']} | {r['secrets']} ({r['kinds']}) | "
                f"{r['blocked']:.1%} | {r['false_positives']:.1%} | {r['scan_us']:.0f} µs |"
            )
        for name, r in results["secrets"].items():
            for t in r["missed"]:
                print(f"missed [{name}]: {t}")
            for t in r["flagged"]:
                print(f"flagged [{name}]: {t}")
    if "poisoning" in results:
        keys = ("daily", "memory_md", "chain", "chain_guidance", "block_guidance", "block_note")
        print()
        print("| part | channel | payloads | " + " | ".join(keys) + " |")
        print("|---|---|---|" + "---|" * len(keys))
        for name, rows in results["poisoning"].items():
            for r in rows:
                cells = " | ".join(str(r[k]) for k in keys)
                print(f"| {name} | {r['channel']} | {r['payloads']} | {cells} |")


if __name__ == "__main__":
    main()

"""Issue 23 benchmarks: the secret screen and the poisoning defences, per corpus part.

    python benchmarks/trust.py            # every part, tables on stdout
    python benchmarks/trust.py --json     # the same as JSON
    python benchmarks/trust.py --only secrets|poisoning|scale

Each part of tests/corpora/ is scored through ``chain/format/secrets.scan``:
the share of its secrets blocked, the share of its non-secrets flagged
(false positives), and the scan's cost per string. The figures each part
gave when it was first scored, before any rule was fixed for it, are in
benchmarks/README.md beside these.

Scale: the screen on long texts of one repeated shape (a secret word on every
line, in a table, in flags, ...) at 10 KB and 40 KB: its cost must grow
with the length, so the last column, the 40 KB time over the 10 KB time,
should stay near 4 (it was near 16: every name searched the rest of the
text again).

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


#: Texts that name a secret over and over (issue 27: the screen was O(n^2) on them).
SCALE_SHAPES = {
    "password=abc": "password=abc ",
    "token: x": "token: x ",
    "a name a line": "password\n",
    "csv rows": "password,abc,def\n",
    "--password x": "--password x ",
    "curl -u": "curl -u user:pass ",
    "パスワード": "パスワード abc ",
    "prose": "The deploy token rotates weekly and the api key lives in the vault ",
}


def bench_scale() -> dict[str, dict[str, float]]:
    out = {}
    for name, unit in SCALE_SHAPES.items():
        times = {}
        for size in (10_000, 40_000):
            text = unit * (size // len(unit))
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                scan(text)
                best = min(best, time.perf_counter() - t0)
            times[size] = best * 1000
        out[name] = {"ms_10k": times[10_000], "ms_40k": times[40_000]}
    return out


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
    parser.add_argument("--only", choices=("secrets", "poisoning", "scale"))
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.only in (None, "secrets"):
        results["secrets"] = {name: bench_part(rows) for name, rows in PARTS.items()}
    if args.only in (None, "poisoning"):
        results["poisoning"] = bench_poisoning()
    if args.only in (None, "scale"):
        results["scale"] = bench_scale()
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

    if "scale" in results:
        print()
        print("| text, one shape repeated | 10 KB | 40 KB | 40 KB / 10 KB |")
        print("|---|---:|---:|---:|")
        for name, r in results["scale"].items():
            ratio = r["ms_40k"] / r["ms_10k"]
            print(f"| {name} | {r['ms_10k']:.1f} ms | {r['ms_40k']:.1f} ms | {ratio:.1f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Ledger benchmarks: verify, memory, durable add, batch add, CLI cold start.

Run from the repository root::

    python benchmarks/ledger.py            # full size (100k-entry chain), several minutes
    python benchmarks/ledger.py --quick    # smoke test (10k-entry chain), well under a minute

Every ratio is computed against a baseline measured in the same run, on the
same machine, interleaved with the measurement where that is possible, so
that a noisy shared machine moves both sides together. Prints a markdown
table with PASS/FAIL per target and writes benchmarks/results/ledger.json.
Always exits 0: this is a measurement, not a gate.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from nacl import bindings

from memory_chain.chain.entry import signing_message
from memory_chain.chain.ledger import Ledger, NewEntry
from memory_chain.chain.parallel import verify_parallel
from memory_chain.chain.verify import verify_lines

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "ledger.json"
perf = time.perf_counter


@dataclass(frozen=True)
class Sizes:
    big: int  # entries in the main chain (verify, memory, add latency)
    mem_small: int  # entries for the memory comparison
    add_small: int  # entries in the small chain for add latency
    add_samples: int  # single adds timed per chain (and fsync baseline samples)
    batch: int  # entries per add_batch call
    batch_reps: int
    build_batch: int  # add_batch size used to build chains
    verify_reps: int  # interleaved rounds of the verify benchmarks
    mem_reps: int
    cli_runs: int
    workers: int


FULL = Sizes(100_000, 10_000, 1_000, 300, 10_000, 3, 5_000, 3, 2, 15, 2)
QUICK = Sizes(10_000, 1_000, 1_000, 100, 10_000, 2, 5_000, 1, 1, 5, 2)

# -- helpers ---------------------------------------------------------------

_TEXT = (
    "the user prefers pnpm over npm for every javascript project and wants "
    "tests to run before each commit deploys go out on tuesdays after the "
    "standup meeting remember that the staging database is reset nightly "
    "at two in the morning so long running jobs must checkpoint their work "
    "agent learned that retries with exponential backoff fixed the flaky "
    "upload step decision recorded to keep configuration in one toml file "
    "lesson avoid editing generated files by hand and regenerate instead"
)
_WORDS = _TEXT.split()


class Corpus:
    """Deterministic, unique, realistic-looking memory texts of ~300 bytes."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.n = 0

    def text(self) -> bytes:
        self.n += 1
        target = self.rng.randint(260, 340)
        words = [f"[{self.n}]"]
        size = len(words[0])
        while size < target:
            w = self.rng.choice(_WORDS)
            words.append(w)
            size += len(w) + 1
        return " ".join(words).capitalize().encode()[:target] + b"."

    def entries(self, count: int) -> list[NewEntry]:
        out = []
        for _ in range(count):
            i = self.n
            out.append(
                NewEntry(
                    content=self.text(),
                    type=("memory", "fact", "decision", "lesson")[i % 4],
                    source="auto",
                    meta={"session": f"s{i // 50}", "turn": i % 50},
                )
            )
        return out


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


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_chain(root: Path, entries: int, corpus: Corpus, batch: int) -> tuple[Ledger, float]:
    """A chain of ``entries`` entries (genesis included); returns (ledger, adds/s)."""
    led = Ledger.init(root, name="bench-agent")
    todo = entries - 1
    spent = 0.0
    while todo > 0:
        items = corpus.entries(min(batch, todo))
        t0 = perf()
        led.add_batch(items)
        spent += perf() - t0
        todo -= len(items)
    return led, (entries - 1) / spent if spent else 0.0


# -- 1. verify throughput --------------------------------------------------


def raw_verify_seconds(signed: bytes, public: bytes, count: int) -> float:
    open_ = bindings.crypto_sign_open
    t0 = perf()
    for _ in range(count):
        open_(signed, public)
    return perf() - t0


def bench_verify(led: Ledger, n: int, sizes: Sizes) -> dict[str, Any]:
    lines = list(itertools.islice(led.iter_lines(), n // 2, n // 2 + 1))
    obj = orjson.loads(lines[0])
    msg = signing_message(obj)
    signed = bytes.fromhex(obj["sig"]) + msg
    public = bytes.fromhex(obj["key"].split(":", 1)[1])

    def single(blobs: bool) -> float:
        t0 = perf()
        r = verify_lines(led.iter_lines(), blobs=led.store.get if blobs else None)
        dt_ = perf() - t0
        assert r.ok and r.size == n, r
        return dt_

    def parallel() -> float:
        t0 = perf()
        r = verify_parallel(
            led.iter_lines(), content_root=led.layout.content, workers=sizes.workers
        )
        dt_ = perf() - t0
        assert r.ok and r.size == n, r
        return dt_

    # Warm-up: imports, page cache, the pool code path.
    verify_lines(itertools.islice(led.iter_lines(), 2000), blobs=led.store.get)
    raw_verify_seconds(signed, public, 2000)
    runs: dict[str, list[float]] = {"raw": [], "single": [], "single_noblobs": [], "parallel": []}
    for rep in range(sizes.verify_reps):
        log(f"verify round {rep + 1}/{sizes.verify_reps}")
        runs["raw"].append(n / raw_verify_seconds(signed, public, n))
        runs["single"].append(n / single(True))
        runs["single_noblobs"].append(n / single(False))
        runs["parallel"].append(n / parallel())
    med = {k: median(v) for k, v in runs.items()}
    return {
        "entries": n,
        "signed_message_bytes": len(msg),
        "line_bytes": len(lines[0]),
        "workers": sizes.workers,
        "rates": runs,
        "median": med,
        "ratio_single": med["single"] / med["raw"],
        "ratio_single_noblobs": med["single_noblobs"] / med["raw"],
        "ratio_parallel": med["parallel"] / med["raw"],
        "blob_share_single": 1 - med["single"] / med["single_noblobs"],
    }


# -- 2. verify memory ------------------------------------------------------

_MEM_SCRIPT = r"""
import itertools, resource, sys
from pathlib import Path
from memory_chain.chain.ledger import Ledger
from memory_chain.chain.verify import verify_lines
root, n, mode, workers = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
led = Ledger(root)
lines = itertools.islice(led.iter_lines(), n)
if mode == "single":
    r = verify_lines(lines, blobs=led.store.get)
    assert r.ok and r.size == n, r
elif mode == "parallel":
    from memory_chain.chain.parallel import verify_parallel
    r = verify_parallel(lines, content_root=led.layout.content, workers=workers)
    assert r.ok and r.size == n, r
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open("/proc/self/status") as f:
    hwm = next((int(x.split()[1]) for x in f if x.startswith("VmHWM:")), -1)
print(me, kids, hwm)
"""

# ru_maxrss survives exec: a child forked (or vforked) straight from this
# large benchmark process would report this process's RSS. A small shell in
# between forks the measured interpreter from a ~1 MiB process instead.
_LAUNCH = ["/bin/sh", "-c", '"$@"; exit $?', "sh"]


def peak_rss_kib(root: Path, n: int, mode: str, workers: int) -> tuple[int, int, int]:
    """(ru_maxrss self, ru_maxrss children, VmHWM self), all KiB."""
    out = subprocess.run(
        [*_LAUNCH, sys.executable, "-c", _MEM_SCRIPT, str(root), str(n), mode, str(workers)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[0]), int(out[1]), int(out[2])


def bench_memory(root: Path, big: int, small: int, sizes: Sizes) -> dict[str, Any]:
    res: dict[str, Any] = {"big": big, "small": small}
    for mode in ("import", "single", "parallel"):
        for n in (small, big):
            if mode == "import" and n == big:
                continue
            samples = [peak_rss_kib(root, n, mode, sizes.workers) for _ in range(sizes.mem_reps)]
            res[f"{mode}_{n}"] = {
                "self_kib": max(s[0] for s in samples),
                "children_kib": max(s[1] for s in samples),
                "vmhwm_kib": max(s[2] for s in samples),
            }
            log(f"memory {mode} {n}: {res[f'{mode}_{n}']}")
    res["ratio_single"] = res[f"single_{big}"]["self_kib"] / res[f"single_{small}"]["self_kib"]
    res["ratio_parallel_main"] = (
        res[f"parallel_{big}"]["self_kib"] / res[f"parallel_{small}"]["self_kib"]
    )
    res["ratio_parallel_workers"] = (
        res[f"parallel_{big}"]["children_kib"] / res[f"parallel_{small}"]["children_kib"]
    )
    return res


# -- 3. durable add latency ------------------------------------------------


def bench_add_latency(
    small: Ledger, big: Ledger, corpus: Corpus, sizes: Sizes, baseline_dir: Path
) -> dict[str, Any]:
    """Round-robin: one fsync baseline, one add to each chain, per round."""
    line = b"x" * 499 + b"\n"
    fd = os.open(baseline_dir / "fsync-baseline.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    size_small = sum(1 for _ in small.iter_lines())
    size_big = sum(1 for _ in big.iter_lines())

    def one_fsync() -> float:
        t0 = perf()
        os.write(fd, line)
        os.fsync(fd)
        return perf() - t0

    def one_add(led: Ledger) -> Callable[[], float]:
        def run() -> float:
            item = corpus.entries(1)[0]
            t0 = perf()
            led.add(item)
            return perf() - t0

        return run

    probes = {"fsync": one_fsync, "add_small": one_add(small), "add_big": one_add(big)}
    samples: dict[str, list[float]] = {k: [] for k in probes}
    warm = 10
    try:
        for i in range(warm + sizes.add_samples):
            for name, probe in probes.items():
                t = probe()
                if i >= warm:
                    samples[name].append(t)
    finally:
        os.close(fd)
    us = {k: [t * 1e6 for t in v] for k, v in samples.items()}
    summary = {
        k: {"p50_us": median(v), "p99_us": pct(v, 99), "mean_us": statistics.fmean(v)}
        for k, v in us.items()
    }
    base = summary["fsync"]["p50_us"]
    return {
        "chain_sizes": {"small": size_small, "big": size_big},
        "samples": sizes.add_samples,
        "summary": summary,
        "ratio_small": summary["add_small"]["p50_us"] / base,
        "ratio_big": summary["add_big"]["p50_us"] / base,
        "ratio_big_small": summary["add_big"]["p50_us"] / summary["add_small"]["p50_us"],
    }


# -- 4. batch add ----------------------------------------------------------


def bench_batch(led: Ledger, corpus: Corpus, sizes: Sizes) -> dict[str, Any]:
    led.add_batch(corpus.entries(500))  # warm-up
    rates = []
    for _ in range(sizes.batch_reps):
        items = corpus.entries(sizes.batch)
        t0 = perf()
        led.add_batch(items)
        rates.append(sizes.batch / (perf() - t0))
    return {"batch": sizes.batch, "rates": rates, "median": median(rates)}


# -- 5. CLI cold start -----------------------------------------------------


def cli_script() -> str:
    """The console script itself (not a pyenv/asdf shim in front of it)."""
    local = Path(sys.executable).parent / "memory-chain"
    if local.exists():
        return str(local)
    found = shutil.which("memory-chain")
    if found is None:
        raise SystemExit("memory-chain is not on PATH; pip install -e . first")
    return found


def bench_cli(root: Path, sizes: Sizes) -> dict[str, Any]:
    Ledger.init(root, name="cli-agent").close()
    script = cli_script()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CHAIN_")}
    counter = itertools.count()
    cmds: dict[str, Callable[[], list[str]]] = {
        "import_click": lambda: [sys.executable, "-c", "import click"],
        "help": lambda: [script, "--help"],
        "add": lambda: [
            script,
            "--dir",
            str(root),
            "add",
            f"cli cold start memory number {next(counter)}: deploys go out on tuesdays",
        ],
        "import_ledger": lambda: [sys.executable, "-c", "import memory_chain.chain.ledger"],
    }

    def run(argv: list[str]) -> float:
        t0 = perf()
        subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
        return perf() - t0

    times: dict[str, list[float]] = {k: [] for k in cmds}
    for i in range(2 + sizes.cli_runs):
        for name, make in cmds.items():
            t = run(make())
            if i >= 2:
                times[name].append(t * 1e3)
    med = {k: median(v) for k, v in times.items()}
    return {
        "script": script,
        "runs": sizes.cli_runs,
        "ms": times,
        "median_ms": med,
        "ratio_help": med["help"] / med["import_click"],
        "ratio_add": med["add"] / med["import_click"],
    }


# -- report ----------------------------------------------------------------


def rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def row(
        bench: str,
        value: str,
        baseline: str,
        ratio: float | None,
        target: str,
        ok: bool | None,
    ) -> None:
        out.append(
            {
                "benchmark": bench,
                "value": value,
                "baseline": baseline,
                "ratio": ratio,
                "target": target,
                "result": "info" if ok is None else ("PASS" if ok else "FAIL"),
            }
        )

    if "verify" in r:
        v = r["verify"]
        m, n = v["median"], v["entries"]
        raw = f"raw crypto_sign_open {m['raw']:,.0f}/s"
        row(
            f"1 verify, 1 process, blobs ({n:,})",
            f"{m['single']:,.0f}/s",
            raw,
            v["ratio_single"],
            ">= 0.85",
            v["ratio_single"] >= 0.85,
        )
        row(
            f"1 verify, {v['workers']} workers, blobs ({n:,})",
            f"{m['parallel']:,.0f}/s",
            raw,
            v["ratio_parallel"],
            ">= 1.8",
            v["ratio_parallel"] >= 1.8,
        )
        row(
            f"1 verify, 1 process, no blobs ({n:,})",
            f"{m['single_noblobs']:,.0f}/s",
            raw,
            v["ratio_single_noblobs"],
            "-",
            None,
        )
    if "memory" in r:
        mm = r["memory"]
        big, small = mm[f"single_{mm['big']}"], mm[f"single_{mm['small']}"]
        row(
            f"2 verify peak RSS, 1 process ({mm['big']:,} vs {mm['small']:,})",
            f"{big['self_kib'] / 1024:.1f} MiB",
            f"{small['self_kib'] / 1024:.1f} MiB",
            mm["ratio_single"],
            "<= 1.5",
            mm["ratio_single"] <= 1.5,
        )
        pb, ps = mm[f"parallel_{mm['big']}"], mm[f"parallel_{mm['small']}"]
        row(
            "2 verify peak RSS, parallel main / worker",
            f"{pb['self_kib'] / 1024:.1f} / {pb['children_kib'] / 1024:.1f} MiB",
            f"{ps['self_kib'] / 1024:.1f} / {ps['children_kib'] / 1024:.1f} MiB",
            mm["ratio_parallel_main"],
            "-",
            None,
        )
    if "add" in r:
        a = r["add"]
        s, cs = a["summary"], a["chain_sizes"]
        base = f"write+fsync p50 {s['fsync']['p50_us']:,.0f} µs (p99 {s['fsync']['p99_us']:,.0f})"
        for key, label in (("add_small", "small"), ("add_big", "big")):
            row(
                f"3 add p50 @ {cs[label]:,} entries",
                f"{s[key]['p50_us']:,.0f} µs (p99 {s[key]['p99_us']:,.0f})",
                base,
                a[f"ratio_{label}"],
                "<= 5",
                a[f"ratio_{label}"] <= 5,
            )
        row(
            f"3 add p50 @ {cs['big']:,} vs @ {cs['small']:,}",
            f"{s['add_big']['p50_us']:,.0f} µs",
            f"{s['add_small']['p50_us']:,.0f} µs",
            a["ratio_big_small"],
            "<= 1.2",
            a["ratio_big_small"] <= 1.2,
        )
    if "batch" in r:
        b = r["batch"]
        row(
            f"4 add_batch of {b['batch']:,}",
            f"{b['median']:,.0f}/s",
            "-",
            None,
            ">= 20,000/s",
            b["median"] >= 20_000,
        )
    if "cli" in r:
        c = r["cli"]
        m = c["median_ms"]
        base = f"`python -c 'import click'` {m['import_click']:.0f} ms"
        row(
            "5 `memory-chain --help`",
            f"{m['help']:.0f} ms",
            base,
            c["ratio_help"],
            "<= 2.5",
            c["ratio_help"] <= 2.5,
        )
        row(
            "5 `memory-chain add TEXT`",
            f"{m['add']:.0f} ms",
            base,
            c["ratio_add"],
            "<= 2.5",
            c["ratio_add"] <= 2.5,
        )
        row(
            "5 `python -c 'import memory_chain.chain.ledger'`",
            f"{m['import_ledger']:.0f} ms",
            base,
            m["import_ledger"] / m["import_click"],
            "-",
            None,
        )
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    lines = [
        "| Benchmark | Measured | Baseline (same run) | Ratio | Target | Result |",
        "|---|---|---|---|---|---|",
    ]
    for t in table:
        ratio = "-" if t["ratio"] is None else f"{t['ratio']:.2f}"
        lines.append(
            f"| {t['benchmark']} | {t['value']} | {t['baseline']} | {ratio} | "
            f"{t['target']} | {t['result']} |"
        )
    return "\n".join(lines)


def git_state() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    return {"commit": git("rev-parse", "HEAD"), "dirty": git("status", "--porcelain").splitlines()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    p.add_argument("--tmpdir", default=None, help="where to put the data (default: $TMPDIR, /tmp)")
    p.add_argument("--out", type=Path, default=RESULTS, help="JSON results file")
    p.add_argument("--keep", action="store_true", help="keep the data directory")
    p.add_argument(
        "--only",
        default="verify,memory,add,batch,cli",
        help="comma-separated subset of: verify,memory,add,batch,cli",
    )
    args = p.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    only = set(args.only.split(","))
    started = dt.datetime.now(dt.UTC)
    tmp = Path(tempfile.mkdtemp(prefix="memory-chain-bench-", dir=args.tmpdir))
    corpus = Corpus()
    results: dict[str, Any] = {}
    t_all = perf()
    try:
        need_big = bool(only & {"verify", "memory", "add"})
        big = small = None
        if need_big:
            log(f"building a {sizes.big:,}-entry chain in {tmp}")
            big, build_rate = build_chain(tmp / "big", sizes.big, corpus, sizes.build_batch)
            results["build"] = {"entries": sizes.big, "adds_per_s": build_rate}
            log(f"built at {build_rate:,.0f} entries/s")
        if "verify" in only and big is not None:
            results["verify"] = bench_verify(big, sizes.big, sizes)
        if "memory" in only:
            results["memory"] = bench_memory(tmp / "big", sizes.big, sizes.mem_small, sizes)
        if "add" in only and big is not None:
            log(f"building a {sizes.add_small:,}-entry chain")
            small, _ = build_chain(tmp / "small", sizes.add_small, corpus, sizes.build_batch)
            log("add latency")
            results["add"] = bench_add_latency(small, big, corpus, sizes, tmp)
        if "batch" in only:
            log("batch add")
            led = small or Ledger.init(tmp / "batch", name="batch-agent")
            results["batch"] = bench_batch(led, corpus, sizes)
        if "cli" in only:
            log("CLI cold start")
            results["cli"] = bench_cli(tmp / "cli", sizes)
    finally:
        if args.keep:
            log(f"data kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    table = rows(results)
    doc = {
        "started": started.isoformat(timespec="seconds"),
        "seconds": perf() - t_all,
        "mode": "quick" if args.quick else "full",
        "sizes": sizes.__dict__,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
        },
        "git": git_state(),
        "table": table,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    print(markdown(table))
    print(f"\n{doc['mode']} run, {doc['seconds']:.0f} s; results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

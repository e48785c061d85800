"""What a witness costs (issue 29): one add-checkpoint, in process and over HTTP.

    .venv/bin/python benchmarks/witness.py [--rounds 200]

A chain of 1,000 entries is published; then, each round, one entry is added, the log
published again and the new checkpoint sent to the witness with its consistency proof:
in process (chain/log/cosigner.py: the log's signature, the proof, the state written
under its lock, the cosignature) and to `memory-chain witness serve` as a process on a
loopback port (the same, plus HTTP). Reports the median and p90 of the witness's part
only (the publish is not timed). A measurement, not a gate: always exits 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.tiles import WITNESS, WITNESS_SEED, grow, owned_ledger  # noqa: E402

from memory_chain.chain.audit.publishing import publish  # noqa: E402
from memory_chain.chain.log.checkpoint import parse_checkpoint  # noqa: E402
from memory_chain.chain.log.cosignature import (  # noqa: E402
    COSIGNATURE,
    NOTE_ED25519,
    parse_vkey,
    private_key_text,
)
from memory_chain.chain.log.cosigner import (  # noqa: E402
    Cosigner,
    add_checkpoint_body,
    parse_add_checkpoint,
)
from memory_chain.chain.log.merkle import SHA256, consistency_proof  # noqa: E402
from memory_chain.chain.log.tiles import read_leaf_hashes  # noqa: E402
from memory_chain.integrations.witness_http import submitter  # noqa: E402


def body_after(folder: Path, old: int) -> bytes:
    note = (folder / "checkpoint").read_bytes()
    cp = parse_checkpoint(note)
    proof = consistency_proof(SHA256, read_leaf_hashes(folder, cp.size, cp.root), old)
    return add_checkpoint_body(old, proof, note)


def ms(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=10)
    return f"median {statistics.median(xs) * 1000:.2f} ms, p90 {q[-1] * 1000:.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mc-witness-bench-"))
    os.environ["MEMORY_CHAIN_STATE_DIR"] = str(tmp / "state")
    ledger = owned_ledger(tmp / "chain", 1000)
    folder = tmp / "log"
    log = parse_vkey(publish(ledger, folder).vkey, NOTE_ED25519)

    cosigner = Cosigner(WITNESS, WITNESS_SEED, [log], tmp / "inproc.json")
    first = b"old 0\n\n" + (folder / "checkpoint").read_bytes()  # first sight
    cosigner.add(parse_add_checkpoint(first))
    size, inproc = 1000, []
    for _ in range(args.rounds):
        publish(grow(ledger, 1), folder)
        body = body_after(folder, size)
        t0 = time.perf_counter()
        cosigner.add(parse_add_checkpoint(body))
        inproc.append(time.perf_counter() - t0)
        size += 1

    key_file = tmp / "w1.key"
    key_file.write_text(private_key_text(WITNESS, COSIGNATURE, WITNESS_SEED))
    script = str(Path(sys.executable).with_name("memory-chain"))
    proc = subprocess.Popen(
        [script, "witness", "serve", "--key", str(key_file), "--log", str(log), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        submit = submitter(proc.stdout.readline().strip())
        status, _, _ = submit(b"old 0\n\n" + (folder / "checkpoint").read_bytes())
        assert status == 200, status
        http = []
        for _ in range(args.rounds):
            publish(grow(ledger, 1), folder)
            body = body_after(folder, size)
            t0 = time.perf_counter()
            status, _, _ = submit(body)
            http.append(time.perf_counter() - t0)
            assert status == 200, status
            size += 1
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    print(f"| add-checkpoint, in process ({args.rounds} rounds) | {ms(inproc)} |")
    print(f"| add-checkpoint over HTTP to `witness serve` ({args.rounds} rounds) | {ms(http)} |")


if __name__ == "__main__":
    main()

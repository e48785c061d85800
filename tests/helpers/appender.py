"""Child program for the crash and concurrency tests: add entries, acknowledge each.

Usage: python tests/helpers/appender.py DATA_DIR ACK_FILE [--batch N] [--count K]
       [--tag TAG] [--wait]

Loops adding entries through Ledger(DATA_DIR).add (or add_batch with N items
per call). Only after an add returns does it append one JSON line per
acknowledged entry to ACK_FILE, ``{"seq", "hash", "content", "batch"}``, and
flush and fsync it: every line in ACK_FILE names an entry the ledger promised
is durable. Contents are unique (tag, pid and a counter). Prints "ready" once
the ledger is open; with --wait, then waits for one line on stdin before
adding. With --count K it stops after K entries (else it runs until killed).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from memory_chain.chain.store.ledger import Ledger, NewEntry


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, then add and acknowledge entries until done or killed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("ack_file", type=Path)
    parser.add_argument("--batch", type=int, default=0, help="items per add_batch (0: add)")
    parser.add_argument("--count", type=int, default=0, help="stop after this many (0: never)")
    parser.add_argument("--tag", default="crash")
    parser.add_argument("--wait", action="store_true", help="wait for a line on stdin first")
    args = parser.parse_args(argv)

    ledger = Ledger(args.data_dir)
    ledger.signer()  # load the key before reporting ready
    pid = os.getpid()
    ack = os.open(args.ack_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    print("ready", flush=True)
    if args.wait:
        sys.stdin.readline()

    def content(n: int) -> bytes:
        return f"{args.tag} pid={pid} n={n}".encode()

    n = 0
    batch_no = 0
    while args.count == 0 or n < args.count:
        if args.batch > 0:
            size = args.batch if args.count == 0 else min(args.batch, args.count - n)
            items = [
                NewEntry(content=content(n + i), meta={"pid": pid, "batch": batch_no})
                for i in range(size)
            ]
            done = ledger.add_batch(items)
            batch = f"{pid}/{batch_no}"
            batch_no += 1
        else:
            items = [NewEntry(content=content(n), meta={"pid": pid})]
            done = [ledger.add(items[0])]
            batch = None
        n += len(items)
        record = b"".join(
            orjson.dumps(
                {
                    "seq": a.seq,
                    "hash": a.hash,
                    "content": item.content.decode(),
                    "batch": batch,
                }
            )
            + b"\n"
            for a, item in zip(done, items, strict=True)
        )
        view = memoryview(record)
        while view:
            view = view[os.write(ack, view) :]
        os.fsync(ack)
    os.close(ack)
    return 0


if __name__ == "__main__":
    sys.exit(main())

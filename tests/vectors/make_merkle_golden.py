"""Build the BLAKE3 Merkle golden vector: fixed leaves, same bytes every run.

Usage::

    python tests/vectors/make_merkle_golden.py [OUTFILE]

OUTFILE defaults to tests/vectors/merkle_blake3.json.

The leaves are fixed: leaf i (i = 0..63) is the UTF-8 encoding of

    {"i":<i>,"text":"memory-chain merkle golden leaf <i>"}

with <i> in decimal and no spaces, e.g. leaf 7 is the 50 bytes
``{"i":7,"text":"memory-chain merkle golden leaf 7"}``. The tree is the
RFC 9162 section 2.1 tree with BLAKE3 as the hash (leaf hash =
BLAKE3(0x00 || leaf), node hash = BLAKE3(0x01 || left || right), empty root
= BLAKE3("")), as chain/log/merkle.py computes it. Everything below is hex:

    leaves        the leaf data, index i -> leaf i
    leaf_hashes   the leaf hashes, index i -> leaf hash of leaf i
    roots         index n -> root of the tree of the first n leaves, n = 0..64
    inclusion     {"size", "index", "proof"} for every 0 <= index < size <= 64
    consistency   {"size1", "size2", "proof"} for every 1 <= size1 <= size2 <= 64

Proof hashes are in RFC 9162 order (the hash nearest the leaf first). The
file is written with sorted keys, indent 1 and a trailing newline; nothing
here is random: tests/test_merkle.py regenerates it and requires it to be
byte-identical, and checks it against an independent reference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memory_chain.chain.log.merkle import (
    BLAKE3,
    consistency_proof,
    inclusion_proof,
    root_of,
)

LEAF_COUNT = 64
LEAF_TEMPLATE = '{{"i":{i},"text":"memory-chain merkle golden leaf {i}"}}'
DEFAULT_OUT = Path(__file__).resolve().parent / "merkle_blake3.json"


def leaf(i: int) -> bytes:
    """The data of leaf ``i``."""
    return LEAF_TEMPLATE.format(i=i).encode("utf-8")


def build() -> dict[str, object]:
    """The golden vector as a JSON-ready dict."""
    leaves = [leaf(i) for i in range(LEAF_COUNT)]
    hashes = [BLAKE3.leaf(data) for data in leaves]
    sizes = range(1, LEAF_COUNT + 1)
    return {
        "hash": BLAKE3.name,
        "leaf_rule": LEAF_TEMPLATE.replace("{{", "{").replace("}}", "}"),
        "leaves": [data.hex() for data in leaves],
        "leaf_hashes": [h.hex() for h in hashes],
        "roots": [root_of(BLAKE3, hashes[:n]).hex() for n in range(LEAF_COUNT + 1)],
        "inclusion": [
            {
                "size": size,
                "index": index,
                "proof": [p.hex() for p in inclusion_proof(BLAKE3, hashes[:size], index)],
            }
            for size in sizes
            for index in range(size)
        ],
        "consistency": [
            {
                "size1": size1,
                "size2": size2,
                "proof": [p.hex() for p in consistency_proof(BLAKE3, hashes, size1, size2)],
            }
            for size2 in sizes
            for size1 in range(1, size2 + 1)
        ],
    }


def render(vector: dict[str, object]) -> str:
    """The file's text: sorted keys, indent 1, trailing newline."""
    return json.dumps(vector, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print("usage: make_merkle_golden.py [OUTFILE]", file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) == 2 else DEFAULT_OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write(render(build()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""chain/log/merkle.py: RFC 9162 probes, an independent oracle, strict verifiers, golden vector.

Four kinds of evidence:

- the RFC 9162 probes of transparency-dev/merkle (SHA-256), copied into
  tests/vectors/rfc9162, each accepted or rejected exactly as its wantErr says;
- a naive recursive reference written here from RFC 9162 section 2.1 (MTH,
  PATH, PROOF/SUBPROOF on lists of leaf data, hashing with hashlib/blake3
  directly), which the module must agree with for random trees of up to 300
  leaves, for both BLAKE3 and SHA-256;
- strictness: every malformed, truncated, padded, bit-flipped or misplaced
  proof is rejected with ProofError;
- the BLAKE3 golden vector tests/vectors/merkle_blake3.json: regenerating it
  is byte-identical, and the reference agrees with every root and proof in it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import blake3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.log.merkle import (
    BLAKE3,
    SHA256,
    Frontier,
    ProofError,
    TreeHash,
    consistency_proof,
    inclusion_proof,
    perfect_subtrees,
    root_of,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).resolve().parent / "vectors"
RFC9162 = VECTORS / "rfc9162"
GOLDEN = VECTORS / "merkle_blake3.json"
GOLDEN_SCRIPT = VECTORS / "make_merkle_golden.py"

# The probe folders hold 98 inclusion and 98 consistency probes; a missing or
# renamed folder must fail here rather than parametrize to nothing.
INCLUSION_PROBES = 98
CONSISTENCY_PROBES = 98

RawHash = Callable[[bytes], bytes]


# --- the reference oracle: RFC 9162 section 2.1, literally -----------------


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _blake3(data: bytes) -> bytes:
    return blake3.blake3(data).digest()


def ref_split(n: int) -> int:
    """k: the largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def ref_mth(h: RawHash, d: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of RFC 9162 2.1.1, on the leaf data."""
    n = len(d)
    if n == 0:
        return h(b"")
    if n == 1:
        return h(b"\x00" + d[0])
    k = ref_split(n)
    return h(b"\x01" + ref_mth(h, d[:k]) + ref_mth(h, d[k:]))


def ref_path(h: RawHash, m: int, d: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of RFC 9162 2.1.3.1."""
    n = len(d)
    if n == 1:
        return []
    k = ref_split(n)
    if m < k:
        return [*ref_path(h, m, d[:k]), ref_mth(h, d[k:])]
    return [*ref_path(h, m - k, d[k:]), ref_mth(h, d[:k])]


def ref_subproof(h: RawHash, m: int, d: Sequence[bytes], b: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) of RFC 9162 2.1.4.1."""
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(h, d)]
    k = ref_split(n)
    if m <= k:
        return [*ref_subproof(h, m, d[:k], b), ref_mth(h, d[k:])]
    return [*ref_subproof(h, m - k, d[k:], False), ref_mth(h, d[:k])]


def ref_proof(h: RawHash, m: int, d: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 9162 2.1.4.1 (and [] for m == n)."""
    return ref_subproof(h, m, d, True)


def ref_prefix_roots(h: RawHash, d: Sequence[bytes]) -> list[bytes]:
    """MTH(D[0:n]) for every n = 0..len(d): the same recursion, memoized per range."""

    @functools.cache
    def mth(lo: int, hi: int) -> bytes:
        n = hi - lo
        if n == 0:
            return h(b"")
        if n == 1:
            return h(b"\x00" + d[lo])
        k = ref_split(n)
        return h(b"\x01" + mth(lo, lo + k) + mth(lo + k, hi))

    return [mth(0, n) for n in range(len(d) + 1)]


HASHES = [
    pytest.param(BLAKE3, _blake3, id="blake3"),
    pytest.param(SHA256, _sha256, id="sha256"),
]


@pytest.mark.parametrize(("tree", "fn"), HASHES)
def test_the_empty_hash_is_the_functions(tree: Any, fn: Any) -> None:
    """SHA256's empty hash is written out (so that importing merkle does not import
    hashlib): it must be the function's own."""
    assert tree.empty == fn(b"") and tree.size == len(fn(b""))


def test_reference_reproduces_rfc6962_known_roots() -> None:
    """The oracle and root_of give the published CT reference roots for sizes 0..8.

    These leaves and roots are the RFC 6962 test data of certificate-transparency
    (the same tree the RFC 9162 probes' happy paths are built on), so the
    oracle itself is anchored to numbers computed elsewhere.
    """
    roots = [ref_mth(_sha256, RFC6962_LEAVES[:n]).hex() for n in range(9)]
    assert roots == RFC6962_ROOTS
    hashes = [SHA256.leaf(x) for x in RFC6962_LEAVES]
    assert [root_of(SHA256, hashes[:n]).hex() for n in range(9)] == RFC6962_ROOTS


RFC6962_LEAVES = [
    bytes.fromhex(x)
    for x in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
RFC6962_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


# --- the RFC 9162 probes (transparency-dev/merkle testdata, SHA-256) ---------


def _probes(kind: str) -> list[Any]:
    paths = sorted((RFC9162 / kind).rglob("*.json"))
    return [pytest.param(p, id=p.relative_to(RFC9162).with_suffix("").as_posix()) for p in paths]


INCLUSION = _probes("inclusion")
CONSISTENCY = _probes("consistency")


def _b64(value: str) -> bytes:
    return base64.b64decode(value, validate=True)


def _b64s(values: list[str] | None) -> list[bytes]:
    return [_b64(v) for v in values or []]


def test_probe_folders_are_complete() -> None:
    """All 196 probes are present (parametrize over an empty folder would pass silently)."""
    assert (RFC9162 / "LICENSE").is_file()
    assert (RFC9162 / "README.md").is_file()
    assert len(INCLUSION) == INCLUSION_PROBES
    assert len(CONSISTENCY) == CONSISTENCY_PROBES
    wanted = [json.loads(p.values[0].read_text("utf-8"))["wantErr"] for p in INCLUSION]
    assert True in wanted and False in wanted


@pytest.mark.parametrize("path", INCLUSION)
def test_inclusion_probe(path: Path) -> None:
    """verify_inclusion accepts the probe, or raises ProofError, exactly as wantErr says."""
    probe = json.loads(path.read_text("utf-8"))
    args = (
        SHA256,
        probe["leafIdx"],
        probe["treeSize"],
        _b64(probe["leafHash"]),
        _b64s(probe["proof"]),
        _b64(probe["root"]),
    )
    if probe["wantErr"]:
        with pytest.raises(ProofError):
            verify_inclusion(*args)
    else:
        assert verify_inclusion(*args) is None


@pytest.mark.parametrize("path", CONSISTENCY)
def test_consistency_probe(path: Path) -> None:
    """verify_consistency accepts the probe, or raises ProofError, exactly as wantErr says."""
    probe = json.loads(path.read_text("utf-8"))
    args = (
        SHA256,
        probe["size1"],
        probe["size2"],
        _b64s(probe["proof"]),
        _b64(probe["root1"]),
        _b64(probe["root2"]),
    )
    if probe["wantErr"]:
        with pytest.raises(ProofError):
            verify_consistency(*args)
    else:
        assert verify_consistency(*args) is None


def _happy(kind: str) -> list[Any]:
    return [p for p in (INCLUSION if kind == "inclusion" else CONSISTENCY) if "happy-path" in p.id]


@pytest.mark.parametrize("path", _happy("inclusion"))
def test_inclusion_happy_path_is_what_we_generate(path: Path) -> None:
    """The happy-path proof is what inclusion_proof and the oracle build from the CT leaves."""
    probe = json.loads(path.read_text("utf-8"))
    index, size = probe["leafIdx"], probe["treeSize"]
    hashes = [SHA256.leaf(x) for x in RFC6962_LEAVES[:size]]
    assert hashes[index] == _b64(probe["leafHash"])
    assert root_of(SHA256, hashes) == _b64(probe["root"])
    expected = _b64s(probe["proof"])
    assert inclusion_proof(SHA256, hashes, index) == expected
    assert ref_path(_sha256, index, RFC6962_LEAVES[:size]) == expected


@pytest.mark.parametrize("path", _happy("consistency"))
def test_consistency_happy_path_is_what_we_generate(path: Path) -> None:
    """The happy-path proof is what consistency_proof and the oracle build from the CT leaves."""
    probe = json.loads(path.read_text("utf-8"))
    size1, size2 = probe["size1"], probe["size2"]
    hashes = [SHA256.leaf(x) for x in RFC6962_LEAVES[:size2]]
    assert root_of(SHA256, hashes[:size1]) == _b64(probe["root1"])
    assert root_of(SHA256, hashes) == _b64(probe["root2"])
    expected = _b64s(probe["proof"])
    assert consistency_proof(SHA256, hashes, size1) == expected
    assert ref_proof(_sha256, size1, RFC6962_LEAVES[:size2]) == expected


def test_happy_paths_were_found() -> None:
    """Both happy-path comparisons above run over all five probe groups each."""
    assert len(_happy("inclusion")) == 5
    assert len(_happy("consistency")) == 5


# --- hypothesis: the module against the oracle ----------------------------


@st.composite
def trees(draw: st.DrawFn, min_size: int = 0, max_size: int = 300) -> list[bytes]:
    """Leaf data for a tree of 0..300 leaves: random bytes of random length (0..40)."""
    size = draw(st.integers(min_size, max_size))
    rnd = draw(st.randoms(use_true_random=False))
    return [rnd.randbytes(rnd.randint(0, 40)) for _ in range(size)]


PROPERTY = settings(max_examples=60, deadline=None)


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@PROPERTY
@given(leaves=trees())
def test_root_of_is_reference_mth(hasher: TreeHash, h: RawHash, leaves: list[bytes]) -> None:
    """root_of over the leaf hashes equals the oracle's MTH, for 0..300 leaves."""
    hashes = [hasher.leaf(x) for x in leaves]
    assert hashes == [h(b"\x00" + x) for x in leaves]
    assert root_of(hasher, hashes) == ref_mth(h, leaves)


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@PROPERTY
@given(leaves=trees(), cuts=st.lists(st.integers(0, 300), max_size=4))
def test_subtrees_merge_as_their_leaves(
    hasher: TreeHash, h: RawHash, leaves: list[bytes], cuts: list[int]
) -> None:
    """Leaves given in pieces as aligned perfect subtrees make the same frontier as one by one.

    This is how verify's workers hand a run of entries' leaves to the main
    process; every subtree is aligned and perfect, and a misaligned one is
    refused.
    """
    hashes = [hasher.leaf(x) for x in leaves]
    bounds = sorted({0, len(hashes), *(c for c in cuts if c < len(hashes))})
    f = Frontier(hasher)
    for lo, hi in itertools.pairwise(bounds):
        pieces = perfect_subtrees(hasher, hashes[lo:hi], lo)
        assert sum(1 << height for height, _ in pieces) == hi - lo
        at = lo
        for height, root in pieces:
            assert at % (1 << height) == 0
            assert root == ref_mth(h, leaves[at : at + (1 << height)])
            f.append_subtree(root, height)
            at += 1 << height
        assert f.size == hi
    assert f.root() == ref_mth(h, leaves)
    one = Frontier(hasher)
    one.append(hasher.leaf(b"x"))
    with pytest.raises(ValueError, match="does not start"):
        one.append_subtree(hasher.leaf(b"y"), 1)


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@PROPERTY
@given(leaves=trees())
def test_frontier_root_after_each_append(hasher: TreeHash, h: RawHash, leaves: list[bytes]) -> None:
    """After every append the frontier's root is the oracle's MTH of that prefix.

    The frontier keeps one node per set bit of its size, and a frontier
    rebuilt from (size, nodes) continues exactly like the original.
    """
    roots = ref_prefix_roots(h, leaves)
    assert roots[-1] == ref_mth(h, leaves)
    f = Frontier(hasher)
    assert f.root() == roots[0]
    for n, x in enumerate(leaves, start=1):
        f.append(hasher.leaf(x))
        assert f.size == n
        assert len(f.nodes) == n.bit_count()
        assert f.root() == roots[n]
    rebuilt = Frontier(hasher, f.size, f.nodes)
    copy = f.copy()
    for g in (f, rebuilt, copy):
        g.append(hasher.leaf(b"one more"))
    assert f.root() == rebuilt.root() == copy.root() == ref_mth(h, [*leaves, b"one more"])


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@PROPERTY
@given(leaves=trees(min_size=1), data=st.data())
def test_inclusion_proof_is_reference_path(
    hasher: TreeHash, h: RawHash, leaves: list[bytes], data: st.DataObject
) -> None:
    """inclusion_proof equals the oracle's PATH for random indices, and it verifies."""
    hashes = [hasher.leaf(x) for x in leaves]
    root = ref_mth(h, leaves)
    size = len(leaves)
    indices = {0, size - 1, *data.draw(st.lists(st.integers(0, size - 1), max_size=4))}
    for index in sorted(indices):
        proof = inclusion_proof(hasher, hashes, index)
        assert proof == ref_path(h, index, leaves)
        assert verify_inclusion(hasher, index, size, hashes[index], proof, root) is None


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@settings(max_examples=25, deadline=None)
@given(leaves=trees(min_size=1, max_size=100))
def test_every_inclusion_proof_is_reference_path(
    hasher: TreeHash, h: RawHash, leaves: list[bytes]
) -> None:
    """For trees of up to 100 leaves, every index's proof is the oracle's PATH and verifies."""
    hashes = [hasher.leaf(x) for x in leaves]
    root = root_of(hasher, hashes)
    for index in range(len(leaves)):
        proof = inclusion_proof(hasher, hashes, index)
        assert proof == ref_path(h, index, leaves)
        verify_inclusion(hasher, index, len(leaves), hashes[index], proof, root)


@pytest.mark.parametrize(("hasher", "h"), HASHES)
@PROPERTY
@given(leaves=trees(min_size=1), data=st.data())
def test_consistency_proof_is_reference_proof(
    hasher: TreeHash, h: RawHash, leaves: list[bytes], data: st.DataObject
) -> None:
    """consistency_proof equals the oracle's PROOF for random 1 <= size1 <= size2, and verifies.

    The proof is the same whether the generator gets exactly size2 leaves or
    more leaves and an explicit size2.
    """
    size2 = data.draw(st.integers(1, len(leaves)), label="size2")
    size1 = data.draw(st.integers(1, size2), label="size1")
    hashes = [hasher.leaf(x) for x in leaves]
    proof = consistency_proof(hasher, hashes[:size2], size1)
    assert proof == ref_proof(h, size1, leaves[:size2])
    assert consistency_proof(hasher, hashes, size1, size2) == proof
    root1, root2 = ref_mth(h, leaves[:size1]), ref_mth(h, leaves[:size2])
    assert verify_consistency(hasher, size1, size2, proof, root1, root2) is None


# --- strictness ----------------------------------------------------------------

STRICT_SIZES = range(1, 34)


@functools.cache
def _tree(hasher: TreeHash, n: int = max(STRICT_SIZES) + 1) -> tuple[list[bytes], list[bytes]]:
    """Leaf hashes of n distinct leaves and the root of every prefix size 0..n."""
    hashes = [hasher.leaf(b"leaf %d" % i) for i in range(n)]
    return hashes, [root_of(hasher, hashes[:k]) for k in range(n + 1)]


def _flip(value: bytes, bit: int) -> bytes:
    out = bytearray(value)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _rejects(fn: Callable[..., None], *args: Any) -> None:
    with pytest.raises(ProofError):
        fn(*args)


def _inclusion_cases(hasher: TreeHash) -> list[tuple[int, int, list[bytes]]]:
    hashes, _ = _tree(hasher)
    return [
        (size, index, inclusion_proof(hasher, hashes[:size], index))
        for size in STRICT_SIZES
        for index in range(size)
    ]


def _consistency_cases(hasher: TreeHash) -> list[tuple[int, int, list[bytes]]]:
    hashes, _ = _tree(hasher)
    return [
        (size1, size2, consistency_proof(hasher, hashes, size1, size2))
        for size2 in STRICT_SIZES
        for size1 in range(1, size2)
    ]


# (size, index) and (size1, size2) whose every bit is flipped: one-leaf and
# two-leaf trees, first/last leaves, powers of two and their neighbours.
FLIP_INCLUSION = [
    (1, 0),
    (2, 0),
    (2, 1),
    (3, 2),
    (5, 4),
    (7, 3),
    (8, 5),
    (13, 6),
    (16, 15),
    (33, 32),
]
FLIP_CONSISTENCY = [
    (1, 2),
    (1, 33),
    (2, 3),
    (3, 8),
    (4, 8),
    (6, 7),
    (7, 8),
    (8, 9),
    (13, 21),
    (32, 33),
]

STRICT_HASHERS = [pytest.param(BLAKE3, id="blake3"), pytest.param(SHA256, id="sha256")]


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_inclusion_wrong_proof_length_rejected(hasher: TreeHash) -> None:
    """For every leaf of every size 1..33: one hash too many or too few is a ProofError."""
    hashes, roots = _tree(hasher)
    extra = hasher.leaf(b"extra")
    for size, index, proof in _inclusion_cases(hasher):
        leaf = hashes[index]
        args = (hasher, index, size, leaf)
        verify_inclusion(*args, proof, roots[size])
        longer = [[*proof, extra], [extra, *proof], [*proof, roots[size]], [*proof, leaf]]
        for bad in longer:
            _rejects(verify_inclusion, *args, bad, roots[size])
        if proof:
            _rejects(verify_inclusion, *args, proof[:-1], roots[size])
            _rejects(verify_inclusion, *args, proof[1:], roots[size])


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_inclusion_index_out_of_range_rejected(hasher: TreeHash) -> None:
    """index == size, index > size, a negative index and size 0 are ProofErrors."""
    hashes, roots = _tree(hasher)
    for size, index, proof in _inclusion_cases(hasher):
        leaf = hashes[index]
        for bad_index in (size, size + 1, -1, -size, index - size):
            _rejects(verify_inclusion, hasher, bad_index, size, leaf, proof, roots[size])
    _rejects(verify_inclusion, hasher, 0, 0, hashes[0], [], hasher.empty)
    _rejects(verify_inclusion, hasher, 0, 0, hasher.empty, [], hasher.empty)
    _rejects(verify_inclusion, hasher, -1, 1, hashes[0], [], roots[1])


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_inclusion_other_index_or_size_rejected(hasher: TreeHash) -> None:
    """A valid proof fails for a neighbouring index, or for size n-1 / n+1 with that size's root."""
    hashes, roots = _tree(hasher)
    for size, index, proof in _inclusion_cases(hasher):
        leaf = hashes[index]
        for other in (index - 1, index + 1):
            if 0 <= other < size:
                _rejects(verify_inclusion, hasher, other, size, leaf, proof, roots[size])
        for other_size in (size - 1, size + 1):
            if index < other_size:
                _rejects(
                    verify_inclusion, hasher, index, other_size, leaf, proof, roots[other_size]
                )


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_inclusion_every_flipped_bit_rejected(hasher: TreeHash) -> None:
    """Flipping any single bit of the leaf hash, the root or any proof hash is a ProofError.

    Every bit of every hash, for edge and interior (size, index) pairs.
    """
    hashes, roots = _tree(hasher)
    bits = hasher.size * 8
    for size, index in FLIP_INCLUSION:
        proof = inclusion_proof(hasher, hashes[:size], index)
        leaf, root = hashes[index], roots[size]
        for bit in range(bits):
            _rejects(verify_inclusion, hasher, index, size, _flip(leaf, bit), proof, root)
            _rejects(verify_inclusion, hasher, index, size, leaf, proof, _flip(root, bit))
            for i in range(len(proof)):
                bad = [*proof[:i], _flip(proof[i], bit), *proof[i + 1 :]]
                _rejects(verify_inclusion, hasher, index, size, leaf, bad, root)


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_inclusion_wrong_hash_length_rejected(hasher: TreeHash) -> None:
    """A leaf hash, root or proof hash one byte short or long, or empty, is a ProofError."""
    hashes, roots = _tree(hasher)
    for size, index, proof in _inclusion_cases(hasher):
        leaf, root = hashes[index], roots[size]
        for bad in (leaf[:-1], leaf + b"\x00", b""):
            _rejects(verify_inclusion, hasher, index, size, bad, proof, root)
        for bad in (root[:-1], root + b"\x00", b""):
            _rejects(verify_inclusion, hasher, index, size, leaf, proof, bad)
        for i in range(len(proof)):
            for bad_hash in (proof[i][:-1], proof[i] + b"\x00"):
                bad = [*proof[:i], bad_hash, *proof[i + 1 :]]
                _rejects(verify_inclusion, hasher, index, size, leaf, bad, root)


def test_inclusion_proof_of_the_other_hash_rejected() -> None:
    """A SHA-256 tree's valid proof does not verify as BLAKE3 (same length, other hash)."""
    hashes, roots = _tree(SHA256)
    for size, index, proof in _inclusion_cases(SHA256):
        if size > 1:
            _rejects(verify_inclusion, BLAKE3, index, size, hashes[index], proof, roots[size])


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_wrong_proof_length_rejected(hasher: TreeHash) -> None:
    """For every 1 <= size1 < size2 <= 33: one hash too many, too few, or none is a ProofError."""
    _, roots = _tree(hasher)
    extra = hasher.leaf(b"extra")
    for size1, size2, proof in _consistency_cases(hasher):
        args = (hasher, size1, size2)
        r1, r2 = roots[size1], roots[size2]
        verify_consistency(*args, proof, r1, r2)
        for bad in ([*proof, extra], [extra, *proof], [*proof, proof[-1]], [r1, *proof]):
            _rejects(verify_consistency, *args, bad, r1, r2)
        _rejects(verify_consistency, *args, proof[:-1], r1, r2)
        _rejects(verify_consistency, *args, proof[1:], r1, r2)
        _rejects(verify_consistency, *args, [], r1, r2)


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_bad_sizes_rejected(hasher: TreeHash) -> None:
    """size1 = 0 (with any size2, including 0) and size1 > size2 (swapped) are ProofErrors."""
    _, roots = _tree(hasher)
    empty = hasher.empty
    _rejects(verify_consistency, hasher, 0, 0, [], empty, empty)
    _rejects(verify_consistency, hasher, -1, 0, [], empty, empty)
    for size1, size2, proof in _consistency_cases(hasher):
        r1, r2 = roots[size1], roots[size2]
        _rejects(verify_consistency, hasher, 0, size2, proof, empty, r2)
        _rejects(verify_consistency, hasher, 0, size2, [], empty, r2)
        _rejects(verify_consistency, hasher, 0, size2, [r2], empty, r2)
        _rejects(verify_consistency, hasher, size2, size1, proof, r2, r1)
        _rejects(verify_consistency, hasher, size2, size1, [], r2, r1)
        _rejects(verify_consistency, hasher, size2, size1, proof, r1, r2)


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_equal_sizes(hasher: TreeHash) -> None:
    """size1 == size2 passes only with an empty proof and equal roots."""
    _, roots = _tree(hasher)
    for size in STRICT_SIZES:
        root = roots[size]
        assert verify_consistency(hasher, size, size, [], root, root) is None
        _rejects(verify_consistency, hasher, size, size, [root], root, root)
        _rejects(verify_consistency, hasher, size, size, [], root, roots[size - 1])
        _rejects(verify_consistency, hasher, size, size, [], root, _flip(root, 0))


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_other_sizes_rejected(hasher: TreeHash) -> None:
    """A valid proof fails for size2 ± 1 or size1 ± 1, with the right roots of those sizes."""
    _, roots = _tree(hasher)
    top = max(STRICT_SIZES) + 1
    for size1, size2, proof in _consistency_cases(hasher):
        for s1, s2 in (
            (size1, size2 - 1),
            (size1, size2 + 1),
            (size1 - 1, size2),
            (size1 + 1, size2),
        ):
            if 0 <= s1 <= s2 <= top:
                _rejects(verify_consistency, hasher, s1, s2, proof, roots[s1], roots[s2])


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_every_flipped_bit_rejected(hasher: TreeHash) -> None:
    """Flipping any single bit of root1, root2 or any proof hash is a ProofError.

    Every bit of every hash, for edge and interior (size1, size2) pairs.
    """
    hashes, roots = _tree(hasher)
    bits = hasher.size * 8
    for size1, size2 in FLIP_CONSISTENCY:
        proof = consistency_proof(hasher, hashes, size1, size2)
        r1, r2 = roots[size1], roots[size2]
        for bit in range(bits):
            _rejects(verify_consistency, hasher, size1, size2, proof, _flip(r1, bit), r2)
            _rejects(verify_consistency, hasher, size1, size2, proof, r1, _flip(r2, bit))
            for i in range(len(proof)):
                bad = [*proof[:i], _flip(proof[i], bit), *proof[i + 1 :]]
                _rejects(verify_consistency, hasher, size1, size2, bad, r1, r2)


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_consistency_wrong_hash_length_rejected(hasher: TreeHash) -> None:
    """For size1 < size2: root1, root2 or a proof hash one byte short or long is a ProofError.

    (Equal sizes compare the roots before any length check, as the probes
    require; see tests/vectors/rfc9162/README.md.)
    """
    _, roots = _tree(hasher)
    for size1, size2, proof in _consistency_cases(hasher):
        r1, r2 = roots[size1], roots[size2]
        for bad in (r1[:-1], r1 + b"\x00", b""):
            _rejects(verify_consistency, hasher, size1, size2, proof, bad, r2)
        for bad in (r2[:-1], r2 + b"\x00", b""):
            _rejects(verify_consistency, hasher, size1, size2, proof, r1, bad)
        for i in range(len(proof)):
            for bad_hash in (proof[i][:-1], proof[i] + b"\x00"):
                bad = [*proof[:i], bad_hash, *proof[i + 1 :]]
                _rejects(verify_consistency, hasher, size1, size2, bad, r1, r2)


@PROPERTY
@given(leaves=trees(min_size=2), data=st.data())
def test_random_single_bit_flip_rejected(leaves: list[bytes], data: st.DataObject) -> None:
    """In BLAKE3 trees of up to 300 leaves, one random flipped bit in any input is a ProofError."""
    hashes = [BLAKE3.leaf(x) for x in leaves]
    size = len(leaves)
    index = data.draw(st.integers(0, size - 1), label="index")
    size1 = data.draw(st.integers(1, size - 1), label="size1")
    bit = data.draw(st.integers(0, BLAKE3.size * 8 - 1), label="bit")
    root, root1 = root_of(BLAKE3, hashes), root_of(BLAKE3, hashes[:size1])
    path = inclusion_proof(BLAKE3, hashes, index)
    inputs = [hashes[index], root, *path]
    which = data.draw(st.integers(0, len(inputs) - 1), label="which inclusion input")
    inputs[which] = _flip(inputs[which], bit)
    _rejects(verify_inclusion, BLAKE3, index, size, inputs[0], inputs[2:], inputs[1])
    proof = consistency_proof(BLAKE3, hashes, size1)
    inputs = [root1, root, *proof]
    which = data.draw(st.integers(0, len(inputs) - 1), label="which consistency input")
    inputs[which] = _flip(inputs[which], bit)
    _rejects(verify_consistency, BLAKE3, size1, size, inputs[2:], inputs[0], inputs[1])


@pytest.mark.parametrize("hasher", STRICT_HASHERS)
def test_frontier_rejects_wrong_node_count(hasher: TreeHash) -> None:
    """Frontier(size, nodes) needs exactly popcount(size) nodes of the hash's length."""
    node = hasher.leaf(b"node")
    for size in range(70):
        want = size.bit_count()
        assert Frontier(hasher, size, [node] * want).size == size
        for count in {0, want - 1, want + 1, want + 2} - {want}:
            if count >= 0:
                with pytest.raises(ValueError):
                    Frontier(hasher, size, [node] * count)
        if want:
            with pytest.raises(ValueError):
                Frontier(hasher, size, [node[:-1]] * want)
    with pytest.raises(ValueError):
        Frontier(hasher, -1, [node])
    with pytest.raises(ValueError):
        Frontier(hasher, 1)


def test_generators_reject_out_of_range() -> None:
    """inclusion_proof and consistency_proof refuse positions outside the tree (ValueError)."""
    hashes, _ = _tree(BLAKE3)
    few = hashes[:5]
    for index in (-1, 5, 6):
        with pytest.raises(ValueError):
            inclusion_proof(BLAKE3, few, index)
    with pytest.raises(ValueError):
        inclusion_proof(BLAKE3, [], 0)
    for size1, size2 in ((0, 5), (-1, 5), (4, 3), (3, 6), (6, 6)):
        with pytest.raises(ValueError):
            consistency_proof(BLAKE3, few, size1, size2)


# --- the BLAKE3 golden vector -------------------------------------------------

GOLDEN_SIZE = 64


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    """The committed golden vector, parsed."""
    loaded: dict[str, Any] = json.loads(GOLDEN.read_text("ascii"))
    return loaded


def test_golden_regenerates_byte_identical(tmp_path: Path) -> None:
    """Running make_merkle_golden.py today writes exactly the committed bytes."""
    out = tmp_path / "merkle_blake3.json"
    subprocess.run([sys.executable, str(GOLDEN_SCRIPT), str(out)], check=True, timeout=120)
    assert out.read_bytes() == GOLDEN.read_bytes()


def test_golden_shape(golden: dict[str, Any]) -> None:
    """The vector covers every size 0..64, every (size, index) and every (size1, size2) once."""
    n = GOLDEN_SIZE
    assert golden["hash"] == "blake3"
    assert len(golden["leaves"]) == len(golden["leaf_hashes"]) == n
    assert len(golden["roots"]) == n + 1
    inclusion = [(p["size"], p["index"]) for p in golden["inclusion"]]
    assert sorted(inclusion) == [(s, i) for s in range(1, n + 1) for i in range(s)]
    consistency = [(p["size1"], p["size2"]) for p in golden["consistency"]]
    assert sorted(consistency) == sorted(
        (s1, s2) for s2 in range(1, n + 1) for s1 in range(1, s2 + 1)
    )


def test_golden_leaves_follow_the_documented_rule(golden: dict[str, Any]) -> None:
    """Leaf i is the UTF-8 of the documented string; leaf hashes are BLAKE3(0x00 || leaf)."""
    leaves = [bytes.fromhex(x) for x in golden["leaves"]]
    for i, data in enumerate(leaves):
        assert data == f'{{"i":{i},"text":"memory-chain merkle golden leaf {i}"}}'.encode()
        assert json.loads(data) == {"i": i, "text": f"memory-chain merkle golden leaf {i}"}
    assert golden["leaf_hashes"] == [_blake3(b"\x00" + x).hex() for x in leaves]


def test_golden_roots_are_reference_roots(golden: dict[str, Any]) -> None:
    """Every golden root is the oracle's MTH of that prefix (an independent implementation)."""
    leaves = [bytes.fromhex(x) for x in golden["leaves"]]
    assert golden["roots"][0] == _blake3(b"").hex()
    assert golden["roots"] == [ref_mth(_blake3, leaves[:n]).hex() for n in range(GOLDEN_SIZE + 1)]


def test_golden_inclusion_proofs_are_reference_and_verify(golden: dict[str, Any]) -> None:
    """Every golden inclusion proof is the oracle's PATH and passes verify_inclusion."""
    leaves = [bytes.fromhex(x) for x in golden["leaves"]]
    roots = [bytes.fromhex(x) for x in golden["roots"]]
    hashes = [bytes.fromhex(x) for x in golden["leaf_hashes"]]
    for p in golden["inclusion"]:
        size, index = p["size"], p["index"]
        proof = [bytes.fromhex(x) for x in p["proof"]]
        assert proof == ref_path(_blake3, index, leaves[:size]), (size, index)
        verify_inclusion(BLAKE3, index, size, hashes[index], proof, roots[size])


def test_golden_consistency_proofs_are_reference_and_verify(golden: dict[str, Any]) -> None:
    """Every golden consistency proof is the oracle's PROOF and passes verify_consistency."""
    leaves = [bytes.fromhex(x) for x in golden["leaves"]]
    roots = [bytes.fromhex(x) for x in golden["roots"]]
    for p in golden["consistency"]:
        size1, size2 = p["size1"], p["size2"]
        proof = [bytes.fromhex(x) for x in p["proof"]]
        assert proof == ref_proof(_blake3, size1, leaves[:size2]), (size1, size2)
        verify_consistency(BLAKE3, size1, size2, proof, roots[size1], roots[size2])

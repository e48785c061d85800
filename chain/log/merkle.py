"""RFC 9162 section 2.1 Merkle trees, with the hash function as a parameter.

Leaf hash = H(0x00 || leaf), node hash = H(0x01 || left || right), and the
root of the empty tree is H(""). The chain uses BLAKE3 over each entry
line's bytes without its newline; the same code with SHA-256 passes the
RFC 9162 probes of transparency-dev/merkle.

Three pieces:

- ``Frontier``: the roots of the perfect subtrees that make up a tree of
  size n (one per set bit of n, largest first). Appending a leaf and taking
  the root are O(log n): this is what the cached head keeps, so an add
  never rehashes the chain.
- Proof generation from the leaf hashes (``inclusion_proof``,
  ``consistency_proof``): O(n) hashing of the tree they cover, exactly the
  recursive definitions of RFC 9162 2.1.3.1 and 2.1.4.1.
- Strict verifiers (``verify_inclusion``, ``verify_consistency``) that raise
  ``ProofError`` with a reason, per RFC 9162 2.1.3.2 and 2.1.4.2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import blake3

__all__ = [
    "BLAKE3",
    "SHA256",
    "Frontier",
    "ProofError",
    "TreeHash",
    "consistency_proof",
    "inclusion_proof",
    "perfect_subtrees",
    "root_of",
    "verify_consistency",
    "verify_inclusion",
]


class ProofError(ValueError):
    """A proof that does not verify; the message says why."""


class TreeHash:
    """The RFC 9162 hashing of one hash function."""

    __slots__ = ("_h", "_new", "empty", "name", "size")

    def __init__(
        self,
        name: str,
        fn: Callable[[bytes], bytes],
        empty: bytes | None = None,
        new: Callable[..., Any] | None = None,
    ) -> None:
        """``fn`` hashes bytes; ``new``, if given, makes the hash object whose digest fn gives."""
        self.name = name
        self._h = fn
        self._new = new
        self.empty = fn(b"") if empty is None else empty  # the hash of no bytes
        self.size = len(self.empty)

    def leaf(self, data: bytes) -> bytes:
        return self._h(b"\x00" + data)

    def node(self, left: bytes, right: bytes) -> bytes:
        return self._h(b"\x01" + left + right)

    def parents(self, level: Sequence[bytes]) -> list[bytes]:
        """node() of each pair of an even-length level, in one loop (a tree's next level)."""
        pairs = iter(level)
        new = self._new
        if new is not None:  # one hasher, reset after each node (verify merges every leaf)
            hasher = new()
            update, digest, reset = hasher.update, hasher.digest, hasher.reset
            out: list[bytes] = []
            node = out.append
            for left, right in zip(pairs, pairs, strict=True):
                update(b"\x01" + left + right)
                node(digest())
                reset()
            return out
        h = self._h
        return [h(b"\x01" + left + right) for left, right in zip(pairs, pairs, strict=True)]


def _blake3(data: bytes) -> bytes:
    return blake3.blake3(data).digest()


def _sha256(data: bytes) -> bytes:
    import hashlib  # OpenSSL's import costs 3 ms on every start path; only SHA-256 trees need it

    return hashlib.sha256(data).digest()


BLAKE3 = TreeHash("blake3", _blake3, new=blake3.blake3)
# SHA-256 of no bytes, given so that importing this module does not import hashlib
# (tested against hashlib: tests/test_merkle.py)
SHA256 = TreeHash(
    "sha256",
    _sha256,
    bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
)


class Frontier:
    """The perfect-subtree roots of a tree, largest first: O(log n) per step."""

    __slots__ = ("hasher", "nodes", "size")

    def __init__(self, hasher: TreeHash, size: int = 0, nodes: Sequence[bytes] = ()) -> None:
        if size < 0 or len(nodes) != size.bit_count():
            raise ValueError(f"a frontier of size {size} has {size.bit_count()} nodes")
        if any(len(n) != hasher.size for n in nodes):
            raise ValueError("frontier node of the wrong length")
        self.hasher = hasher
        self.size = size
        self.nodes = list(nodes)

    def copy(self) -> Frontier:
        return Frontier(self.hasher, self.size, self.nodes)

    def append(self, leaf_hash: bytes) -> None:
        """Add a leaf (by its leaf hash): merge equal subtrees from the right."""
        node = self.hasher.node
        nodes = self.nodes
        carry = leaf_hash
        n = self.size
        while n & 1:
            carry = node(nodes.pop(), carry)
            n >>= 1
        nodes.append(carry)
        self.size += 1

    def append_subtree(self, root: bytes, height: int) -> None:
        """Add 2**height leaves at once by the root of their perfect subtree.

        The tree's size must be a multiple of 2**height (the subtree is
        aligned, as perfect_subtrees() cuts them): the same frontier as
        appending its leaves one by one.
        """
        if self.size & ((1 << height) - 1):
            raise ValueError(f"a subtree of height {height} does not start at size {self.size}")
        node = self.hasher.node
        nodes = self.nodes
        carry = root
        n = self.size >> height
        while n & 1:
            carry = node(nodes.pop(), carry)
            n >>= 1
        nodes.append(carry)
        self.size += 1 << height

    def root(self) -> bytes:
        """The tree hash of the leaves appended so far."""
        if not self.nodes:
            return self.hasher.empty
        node = self.hasher.node
        it = reversed(self.nodes)
        r = next(it)
        for left in it:
            r = node(left, r)
        return r


def perfect_subtrees(
    hasher: TreeHash, leaf_hashes: Sequence[bytes], first: int
) -> list[tuple[int, bytes]]:
    """The leaves at positions first, first+1, ... as aligned perfect subtrees, in order.

    Each is (height, root): 2**height leaves starting at a multiple of
    2**height, each as large as alignment and the leaves left allow. A
    Frontier of size ``first`` given them by append_subtree() equals one
    given the leaves by append() (verify's workers hash them, the main
    process merges a few roots).
    """
    out: list[tuple[int, bytes]] = []
    i, n = 0, len(leaf_hashes)
    while i < n:
        at = first + i
        height = (at & -at).bit_length() - 1 if at else 63
        while 1 << height > n - i:
            height -= 1
        level = list(leaf_hashes[i : i + (1 << height)])
        while len(level) > 1:
            level = hasher.parents(level)
        out.append((height, level[0]))
        i += 1 << height
    return out


def root_of(hasher: TreeHash, leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH of a list of leaf hashes."""
    return _range_root(hasher, leaf_hashes, 0, len(leaf_hashes))


def _range_root(hasher: TreeHash, leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    f = Frontier(hasher)
    for i in range(lo, hi):
        f.append(leaves[i])
    return f.root()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def inclusion_proof(hasher: TreeHash, leaf_hashes: Sequence[bytes], index: int) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of all ``leaf_hashes`` (RFC 9162 2.1.3.1)."""
    size = len(leaf_hashes)
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    proof: list[bytes] = []
    lo, hi, m = 0, size, index
    while hi - lo > 1:
        k = _split(hi - lo)
        if m < k:
            proof.append(_range_root(hasher, leaf_hashes, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_range_root(hasher, leaf_hashes, lo, lo + k))
            lo, m = lo + k, m - k
    proof.reverse()
    return proof


def consistency_proof(
    hasher: TreeHash, leaf_hashes: Sequence[bytes], size1: int, size2: int | None = None
) -> list[bytes]:
    """The proof that the tree of size1 is a prefix of the tree of size2 (RFC 9162 2.1.4.1)."""
    if size2 is None:
        size2 = len(leaf_hashes)
    if not 0 < size1 <= size2 <= len(leaf_hashes):
        raise ValueError(f"no consistency proof from size {size1} to size {size2}")
    proof: list[bytes] = []
    lo, hi, m, whole = 0, size2, size1, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            proof.append(_range_root(hasher, leaf_hashes, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_range_root(hasher, leaf_hashes, lo, lo + k))
            lo, m, whole = lo + k, m - k, False
    if not whole:
        proof.append(_range_root(hasher, leaf_hashes, lo, hi))
    proof.reverse()
    return proof


def _check_lengths(hasher: TreeHash, what: str, hashes: Sequence[bytes]) -> None:
    for h in hashes:
        if len(h) != hasher.size:
            raise ProofError(f"{what} is {len(h)} bytes, not {hasher.size}")


def verify_inclusion(
    hasher: TreeHash,
    index: int,
    size: int,
    leaf_hash: bytes,
    proof: Sequence[bytes],
    root: bytes,
) -> None:
    """Check that ``leaf_hash`` is leaf ``index`` of the tree (size, root) (RFC 9162 2.1.3.2)."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is out of range for tree size {size}")
    _check_lengths(hasher, "leaf hash", [leaf_hash])
    _check_lengths(hasher, "root", [root])
    _check_lengths(hasher, "proof hash", proof)
    expected = _path_length(index, size)
    if len(proof) != expected:
        raise ProofError(f"proof has {len(proof)} hashes; leaf {index} of {size} needs {expected}")
    node = hasher.node
    fn, sn, r = index, size - 1, leaf_hash
    for p in proof:
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0 or r != root:
        raise ProofError("the proof does not lead to the root")


def _path_length(index: int, size: int) -> int:
    """How many hashes the audit path of ``index`` in a tree of ``size`` has."""
    # Levels below the point where index and the last leaf part, plus the
    # levels of the right edge above it where the last leaf has a left sibling.
    inner = (index ^ (size - 1)).bit_length()
    border = (index >> inner).bit_count()
    return inner + border


def verify_consistency(
    hasher: TreeHash,
    size1: int,
    size2: int,
    proof: Sequence[bytes],
    root1: bytes,
    root2: bytes,
) -> None:
    """Check that the tree (size1, root1) is a prefix of (size2, root2) (RFC 9162 2.1.4.2)."""
    if size1 < 1:
        raise ProofError("a consistency proof from an empty tree proves nothing")
    if size1 > size2:
        raise ProofError(f"size1 {size1} is larger than size2 {size2}")
    if size1 == size2:
        # Checked before any length check (see the vectors' README).
        if proof:
            raise ProofError("equal sizes need an empty proof")
        if root1 != root2:
            raise ProofError("equal sizes with different roots")
        return
    _check_lengths(hasher, "root", [root1, root2])
    _check_lengths(hasher, "proof hash", proof)
    if not proof:
        raise ProofError("empty proof for different sizes")
    node = hasher.node
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # size1 is a power of two: root1 is a node
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("proof is too long")
        if fn & 1 or fn == sn:
            fr = node(c, fr)
            sr = node(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("proof is too short")
    if fr != root1:
        raise ProofError("the proof does not lead to root1")
    if sr != root2:
        raise ProofError("the proof does not lead to root2")

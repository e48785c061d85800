"""The transparency log: the Merkle tree, checkpoints, witnesses and proof bundles.

RFC 9162 trees and proofs, C2SP checkpoints and their files, witness state, anchor
receipts, self-contained proof bundles (all pure functions of bytes, or one small file).
May import: format.
"""

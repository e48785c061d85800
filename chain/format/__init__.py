"""The floor: what the bytes of a chain mean, and how files are written safely.

Entry lines and their canonical bytes, keys and signatures, the errors of every room,
the secret screen, a data directory's layout and config, fsync helpers.
May import: nothing else in memory_chain (stdlib, PyNaCl, blake3, orjson only).
"""

"""The content store: memory texts named by their BLAKE3 hash, in append-only packs.

Writing, reading (verified on read), erasing one blob for a redaction, and migrating a
data directory from one file per blob.
May import: format.
"""

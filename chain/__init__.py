"""The ledger: entry format, canonical bytes, keys, content store, append, verify.

Nothing here imports any other memory_chain package (see ARCHITECTURE.md).
"""

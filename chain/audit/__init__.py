"""Auditing a data directory: verify it with its checkpoints, make checkpoints, prove entries.

verify_ledger (full, incremental or parallel, against pinned keys, checkpoints and the
witness), checkpointing after a verify, inclusion and consistency proofs for auditors.
May import: format, content, log, verify, store.
"""

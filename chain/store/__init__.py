"""The append path: a data directory opened as a Ledger, its head, journal and key files.

Locking, appending one entry or a batch durably, the cached head and torn-tail recovery,
the batch journal, finishing an interrupted key hand-over, read views of entries.
May import: format, content, log, verify.
"""

"""The ledger, in rooms that import downwards only (specs/ARCHITECTURE.md):

format -> content, log -> verify -> store -> audit -> lifecycle

Nothing here imports any other memory_chain package.
"""

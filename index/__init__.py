"""The index: a rebuildable SQLite cache of the chain for recall and GC.

memory.db in the data directory holds the memories (with an FTS5 index),
their usage statistics and archive state, and how far into chain.jsonl it
has read (specs/INDEX.md documents every table). Deleting it loses nothing
but usage statistics. Opening it syncs it with the chain first, so a read
is never stale.

This package imports chain/ (never the reverse) and imports sqlite_utils
only to create or migrate the schema: the read paths use plain sqlite3.
``fleet`` brings a chain into a fleet's PostgreSQL database (psycopg, the
``postgres`` extra, imported only there).
"""

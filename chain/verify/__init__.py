"""Verification of a chain's lines: full, incremental from a verified prefix, parallel.

The numbered steps of FORMAT.md 5 over bytes, the verified-prefix cache, and the
worker pool that checks byte ranges of chain.jsonl on every core.
May import: format, content, log.
"""

"""The `memory-chain` command line: thin click adapters over the library."""

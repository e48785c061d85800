"""`python -m memory_chain.cli` runs the CLI."""

from .fast import main

main()

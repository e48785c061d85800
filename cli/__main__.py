"""`python -m memory_chain.cli` runs the CLI."""

from .main import main

main()

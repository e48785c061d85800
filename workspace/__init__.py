"""The workspace: markdown memory that people and agents edit every day.

MEMORY.md at user, project and local scope, daily files, topic files,
facts and episodes (specs/WORKSPACE.md). The files are the truth; the index
mirrors them. Every write passes the secret gate (chain/format/secrets.py) and
goes through files.edit (atomic, locked, never over a human's edit); memory
tools reach files only through the sandbox (sandbox.py).

This package imports index/ and chain/, never cli/ or integrations/.
"""

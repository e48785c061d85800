"""What happens to a chain over its life: export, import, redaction, key rotation.

Export archives (written, checked, imported, one module per job), redaction of one
entry's content, and handing the chain to a new signing key.
May import: format, content, log, verify, store, audit.
"""

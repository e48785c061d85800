"""Automatic memory: read agent transcripts, detect what is worth keeping,
write it to daily files, curate daily files into MEMORY.md and the chain.

The pipeline flows one way (ARCHITECTURE.md, "The agent half"):

    transcripts (readers, resumable by offset)
      -> detector (rules; a model optional)
      -> capture (dedup, today's daily file; "remember this" at once)
      -> curate (daily files -> MEMORY.md -> chain; old dailies archived)

Each stage is idempotent: a run repeated after a crash adds nothing twice.
This package imports workspace/, index/ and chain/, never cli/ or
integrations/.
"""

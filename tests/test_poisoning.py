"""Issue 23: memory poisoning end to end, through the real hooks, curate and context.

The held-out payloads (tests/corpora/poisoning_heldout.py, written after the
defences were tuned) over every channel: none may reach the chain or the
session-start block as guidance; only the agent's own writes (the MCP tools)
reach MEMORY.md and the chain at all, and then as the agent's, shown as a
labelled note. The person's own statements, the control, must get through.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers.cli import SCRIPT
from poisoning_harness import CHANNELS, run, table

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpora"))
from poisoning_heldout import rows


def test_held_out_payloads_never_become_guidance_or_chain_entries(tmp_path: Path) -> None:
    payloads = rows()
    assert len([c for c, _ in payloads if c != "person"]) >= 35
    assert set(CHANNELS) == {c for c, _ in payloads}
    outcomes = run(payloads, tmp_path, SCRIPT, dict(os.environ))
    by = {r["channel"]: r for r in table(outcomes)}
    for channel in CHANNELS:
        if channel == "person":
            continue
        assert 0 == by[channel]["chain_guidance"], channel
        assert 0 == by[channel]["block_guidance"], channel
        if channel != "agent":
            assert 0 == by[channel]["chain"], channel
    # what the agent itself writes is kept, as the agent's: a note, never guidance
    assert by["agent"]["payloads"] == by["agent"]["block_note"] == by["agent"]["chain"]
    # the control: a person's own "remember that" is guidance at the next session start
    assert by["person"]["payloads"] == by["person"]["block_guidance"]

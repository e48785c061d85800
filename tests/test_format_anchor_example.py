"""specs/FORMAT.md 18.2: the worked example is what the implementation encodes."""

from __future__ import annotations

import re
from pathlib import Path

import blake3

from memory_chain.anchor.payload import Payload, decode_calldata

FORMAT = Path(__file__).resolve().parents[1] / "specs" / "FORMAT.md"


def _example_hex() -> str:
    text = FORMAT.read_text()
    section = text[text.index("### 18.2 Payload") : text.index("### 18.3")]
    (block,) = re.findall(r"```\n(.*?)```", section, flags=re.S)
    return "".join(block.split())


def test_format_example_is_the_encoded_payload() -> None:
    """The 132 bytes printed in FORMAT 18.2 are Payload.calldata() of the stated inputs."""
    payload = Payload(
        blake3.blake3(b"example genesis").digest(),
        10,
        blake3.blake3(b"example root").digest(),
        blake3.blake3(b"example note").digest(),
    )
    assert _example_hex() == payload.calldata().hex()
    assert payload == decode_calldata(bytes.fromhex(_example_hex()))

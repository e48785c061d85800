"""The auditor's page: one static HTML file that checks a proof in any browser.

``page.html`` is built by ``node auditor/build.mjs`` from ``verifier-js/``,
an independent verifier written in JavaScript from specs/FORMAT.md (with
@noble/hashes and @noble/curves), and committed, so that making a page
needs no node. This module only fills the page: it holds no verifier and
imports nothing from the chain. Layer: cli -> auditor.
"""

from __future__ import annotations

import base64
import html
from importlib.resources import files
from typing import Final

__all__ = ["EMPTY_SLOT", "page"]

#: The element of page.html that carries an embedded proof (empty in the bare page).
EMPTY_SLOT: Final = '<script type="application/octet-stream" id="proof-data" data-name=""></script>'


def page(proof: bytes | None = None, *, name: str = "") -> bytes:
    """The page, with ``proof`` (a bundle's bytes) embedded as base64, or bare.

    The page verifies exactly these bytes. Base64 (not the JSON itself)
    keeps any byte of the bundle from ending the script element early.
    """
    text = (files(__package__) / "page.html").read_text(encoding="utf-8")
    if EMPTY_SLOT not in text:
        raise RuntimeError("page.html has no proof slot: rebuild it with node auditor/build.mjs")
    if proof is not None:
        filled = (
            '<script type="application/octet-stream" id="proof-data" '
            f'data-name="{html.escape(name, quote=True)}">'
            f"{base64.b64encode(proof).decode()}</script>"
        )
        text = text.replace(EMPTY_SLOT, filled, 1)
    return text.encode("utf-8")

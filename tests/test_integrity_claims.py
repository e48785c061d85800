"""Issue 22, "Integrity": every integrity claim says what was checked, and holds.

One test per finding, named after it: lost or altered content reported as
verified, a writer signing on top of a broken chain, a reader that writes.
The library-level cases (every byte of a pack, redaction, the property that
an incremental verdict equals a full one) are in tests/test_incremental.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.cli import Cli
from helpers.mcp_client import session, text
from mcp import ClientSession

RELEASE_0_1 = Path(__file__).parent / "fixtures" / "release-0.1-datadir"


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _packs(cli: Cli) -> list[Path]:
    return sorted((cli.root / "content" / "packs").glob("*.pack"))


@pytest.fixture
def deployed(raw: Cli) -> Cli:
    """The issue's recipe: one committed decision, verified once."""
    raw.ok("add", "We deploy on Tuesdays", "--type", "decision", "--tier", "committed")
    raw.ok("verify")
    return raw


@pytest.mark.parametrize("damage", ["packs removed", "pack byte flipped"])
def test_lost_content_is_not_reported_as_verified(deployed: Cli, damage: str) -> None:
    """`rm content/packs/*.pack` (or one flipped byte of the blob) after a verify: the
    default verify exits 1 at seq 1, doctor fails the chain, context has no "verified" line
    (all three said ok before; only --full saw it)."""
    if damage == "packs removed":
        for pack in _packs(deployed):
            pack.unlink()
        reason = "missing-content"
    else:
        pack = _packs(deployed)[0]
        data = bytearray(pack.read_bytes())
        data[-10] ^= 0x20  # inside the blob's bytes, before the trailing length
        pack.write_bytes(bytes(data))
        reason = "content-mismatch"
    verify = deployed.run("verify")
    assert 1 == verify.code
    assert verify.err.startswith("FAILED at seq 1: ") and f", {reason})" in verify.err
    doctor = deployed.run("doctor", "--json")
    assert 1 == doctor.code
    chain = next(c for c in doctor.json()["checks"] if c["name"] == "chain")
    assert "fail" == chain["status"] and "seq 1" in chain["detail"]
    context = deployed.run("context")
    assert 1 == context.code
    assert "Integrity: verified" not in context.out and "INTEGRITY FAILURE" in context.out
    assert "We deploy on Tuesdays" not in context.out


def test_every_passing_door_names_the_level_it_reached(deployed: Cli) -> None:
    """verify, verify --json, doctor and the session-start line say what was checked."""
    deployed.ok("add", "A second memory")
    out = deployed.ok("verify").out.splitlines()
    assert out[1] == (
        "checked: lines and signatures to seq 2; content present and hashed to seq 2 "
        "(from seq 2 in this run, earlier blobs in packs unchanged since)"
    )
    again = deployed.ok("verify", "--json").json()
    assert again["checked"] == (
        "lines and signatures to seq 2; content present and hashed to seq 2 "
        "(packs unchanged since the last verify)"
    )
    assert (3, 3, True) == (again["verified_from"], again["content_from"], again["resumed"])
    full = deployed.ok("verify", "--full", "--json").json()
    assert full["checked"] == "lines and signatures to seq 2; content present and hashed to seq 2"
    doctor = deployed.ok("doctor", "--json").json()
    chain = next(c for c in doctor["checks"] if c["name"] == "chain")
    assert "(lines and signatures to seq 2; content present and hashed to seq 2" in chain["detail"]
    context = deployed.ok("context").out.splitlines()
    assert context[2].startswith(
        "> Integrity: verified (lines, signatures and content to seq 2). 3 entries"
    )


def _edit_line(cli: Cli, index: int) -> bytes:
    lines = cli.chain.read_bytes().splitlines(keepends=True)
    obj = orjson.loads(lines[index])
    obj["importance"] = obj["importance"] ^ 1
    lines[index] = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) + b"\n"
    edited = b"".join(lines)
    cli.chain.write_bytes(edited)
    return edited


@pytest.fixture
def longer(raw: Cli, tmp_path: Path) -> Cli:
    """23 entries, as in the issue."""
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        "".join(json.dumps({"content": f"memory number {i}"}) + "\n" for i in range(22))
    )
    raw.ok("add", "--batch", str(batch))
    return raw


def test_no_append_on_a_broken_chain_after_context(longer: Cli) -> None:
    """Line 11 edited, `context` shows INTEGRITY FAILURE: then `add` and `remember`'s chain
    door refuse (exit 1, one line), chain.jsonl byte-identical; a passing verify after the
    chain is restored lets writes through again."""
    original = longer.chain.read_bytes()
    edited = _edit_line(longer, 11)
    assert 1 == longer.run("context").code
    refused = longer.run("add", "signed on top of a broken chain")
    assert 1 == refused.code
    assert refused.err.startswith("error: the last verify of this chain failed at seq 11 (")
    assert "refusing to append to a broken chain" in refused.err
    assert longer.chain.read_bytes() == edited
    longer.chain.write_bytes(original)
    assert 1 == longer.run("add", "still refused: not verified since").code
    longer.ok("verify")
    assert longer.ok("add", "after the restore").out.startswith("added seq 23 ")


def test_mcp_add_refuses_a_chain_edited_since_the_last_verify(longer: Cli, tmp_path: Path) -> None:
    """The MCP `add` tool signed seq 23 on top of an edited line 11; now it verifies first:
    a tool error naming the seq, nothing written, and the server lives on."""
    longer.ok("verify")
    edited = _edit_line(longer, 11)
    here = tmp_path / "cwd"
    here.mkdir()

    async def body(s: ClientSession) -> dict[str, Any]:
        added = await s.call_tool("add", {"content": "on top of line 11"})
        verify = await s.call_tool("verify", {})
        return {"add": (added.is_error, text(added)), "verify": json.loads(text(verify))}

    out = session(longer, here, body)
    is_error, message = out["add"]
    assert is_error is True
    assert "does not verify at seq 11" in message and "refusing to append" in message
    assert out["verify"]["ok"] is False and 11 == out["verify"]["failure"]["seq"]
    assert longer.chain.read_bytes() == edited


def test_verify_of_an_old_directory_writes_nothing(cli: Cli) -> None:
    """`verify` of a release-0.1 data directory read to its end, changing no byte of it (it
    took the lock, wrote head.json and deleted blob files before); the first add migrates."""
    shutil.copytree(RELEASE_0_1, cli.root)
    (cli.root / "agent.key").chmod(0o600)
    before = _tree(cli.root)
    out = cli.ok("verify", "--full").out
    assert out.startswith("ok: 14 entries verified")
    cli.ok("log", "--limit", "3")
    assert _tree(cli.root) == before
    cli.ok("add", "written by this release")
    assert _packs(cli) and (cli.root / "content" / "packs" / "00000000.pack").exists()
    assert cli.ok("verify").out.startswith("ok: 15 entries verified")


GOLDEN = Path(__file__).parent / "vectors" / "golden"


def test_the_golden_vector_verifies_as_shipped(cli: Cli) -> None:
    """FORMAT.md 7 says a verifier needs only chain.jsonl and content/: `verify` of the golden
    vector exited 2 for lack of a config.json. It verifies now and writes nothing; a write to
    such a directory is refused (it has no config)."""
    shutil.copytree(GOLDEN, cli.root)
    before = _tree(cli.root)
    out = cli.ok("verify").out
    assert out.startswith("ok: 12 entries verified")
    assert _tree(cli.root) == before
    refused = cli.run("add", "a memory")
    assert 2 == refused.code and refused.err.startswith("error: ")
    assert _tree(cli.root) == before


def test_a_crash_left_file_in_checkpoints_is_ignored(deployed: Cli) -> None:
    """FORMAT.md 11.4 / 5.2: only *.note files are read from checkpoints/; a crash's .tmp
    file there never makes verify refuse."""
    deployed.ok("checkpoint")
    tmp = deployed.root / "checkpoints" / "00000000000000000002.note.4242.deadbeef.tmp"
    tmp.write_bytes(b"half a note")
    assert deployed.ok("verify", "--full").out.startswith("ok: 2 entries verified")


def test_verify_json_answers_a_bad_checkpoint(deployed: Cli) -> None:
    """A stored checkpoint that does not parse: `verify --json` printed nothing."""
    deployed.ok("checkpoint")
    (note,) = (deployed.root / "checkpoints").glob("*.note")
    note.write_bytes(b"not a checkpoint\n")
    result = deployed.run("verify", "--json")
    assert 1 == result.code
    out = json.loads(result.out)
    assert (False, "bad-checkpoint") == (out["ok"], out["failure"]["reason"])

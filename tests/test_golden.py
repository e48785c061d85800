"""The golden vector: regenerating it is byte-identical, and it verifies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from memory_chain.chain.content.store import ContentStore
from memory_chain.chain.format.entry import SOURCES, TIERS, TYPES
from memory_chain.chain.format.keys import read_public_key_file
from memory_chain.chain.verify.lines import verify_lines

VECTORS = Path(__file__).resolve().parent / "vectors"
GOLDEN = VECTORS / "golden"
SCRIPT = VECTORS / "make_golden.py"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vector as the committed script writes it today."""
    out = tmp_path_factory.mktemp("regenerated") / "golden"
    subprocess.run([sys.executable, str(SCRIPT), str(out)], check=True, timeout=120)
    return out


def test_regenerated_file_set_matches(regenerated: Path) -> None:
    """The script writes exactly the committed set of files, nothing else."""
    assert sorted(_files(GOLDEN)) == sorted(_files(regenerated))


def test_regenerated_bytes_match(regenerated: Path) -> None:
    """Every regenerated file is byte-identical to the committed one."""
    expected = _files(GOLDEN)
    actual = _files(regenerated)
    for name in sorted(expected):
        assert expected[name] == actual.get(name), f"{name} differs from the committed vector"


def test_golden_verifies_with_trusted_key_and_pin() -> None:
    """verify_lines accepts the golden chain and reports what expected.json says."""
    expected = json.loads((GOLDEN / "expected.json").read_text("ascii"))
    trusted = read_public_key_file(GOLDEN / "genesis.pub")
    with open(GOLDEN / "chain.jsonl", "rb") as f:
        lines = f.readlines()
    report = verify_lines(
        lines,
        blobs=ContentStore(GOLDEN / "content").raw,
        trusted_key=trusted,
        chain_id=expected["chain_id"],
    )
    ok = (True, None, 0)
    assert ok == (report.ok, report.failure, report.torn_tail)
    actual = {
        "size": report.size,
        "head": report.head,
        "chain_id": report.chain_id,
        "key": report.key,
    }
    assert expected == actual


def test_golden_covers_the_format() -> None:
    """The vector holds every type, tier and source, a batch, a redaction and a rotation."""
    entries = [orjson.loads(line) for line in (GOLDEN / "chain.jsonl").read_bytes().splitlines()]
    store = ContentStore(GOLDEN / "content")
    assert set(TYPES) == {e["type"] for e in entries}
    assert set(TIERS) == {e["tier"] for e in entries}
    assert set(SOURCES) == {e["source"] for e in entries}
    expected = json.loads((GOLDEN / "expected.json").read_text("ascii"))
    keys = [read_public_key_file(GOLDEN / "genesis.pub"), expected["key"]]
    assert keys == list(dict.fromkeys(e["key"] for e in entries))
    redactions = [e for e in entries if e["type"] == "redaction"]
    targets = {e["meta"]["target"] for e in redactions}
    holders = [e for e in entries if e["content"] is not None]
    missing = {e["seq"] for e in holders if store.get(e["content"]) is None}
    assert targets == missing
    shared = [e["content"] for e in holders]
    assert len(shared) > len(set(shared)), "two entries should share one blob"
    batch_ts = [e["ts"] for e in entries]
    assert len(batch_ts) > len(set(batch_ts)), "a batch shares one ts"

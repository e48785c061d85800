"""Issue 22, "files the CLI writes": one writer for every -o (cli/output.py).

The refusals (the data directory, a workspace's memory files, special files,
links, an existing file without --force, a missing folder, a proof that
cannot be made) are rows of the bad-input table in tests/test_cli_errors.py;
here is what the writer does when it may write.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import Cli


def test_force_replaces_an_existing_regular_file(populated: Cli, tmp_path: Path) -> None:
    """--force replaces a regular file in one rename; no temporary file is left beside it."""
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "proof.json"
    out.write_text("an older proof\n")
    populated.ok("prove", "1", "-o", str(out), "--force")
    assert json.loads(out.read_text())["format"] == "memory-chain-proof/1"
    assert ["proof.json"] == sorted(p.name for p in folder.iterdir())
    key = folder / "agent.pub"
    populated.ok("keys", "export-public", "-o", str(key))
    assert key.read_text().startswith("ed25519:")
    again = populated.run("keys", "export-public", "-o", str(key))
    assert 2 == again.code and again.err.startswith(f"error: {key} exists")
    populated.ok("keys", "export-public", "-o", str(key), "--force")


def test_a_refused_prove_makes_no_checkpoint(populated: Cli, tmp_path: Path) -> None:
    """A prove whose output cannot be written leaves no checkpoint behind (it wrote one, and
    the error named the temporary file)."""
    before = sorted(p.name for p in populated.root.iterdir())
    result = populated.run("prove", "1", "-o", str(tmp_path / "missing" / "p.json"))
    assert 2 == result.code
    assert result.err.startswith(f"error: cannot write {tmp_path / 'missing' / 'p.json'}: ")
    assert ".tmp" not in result.err
    assert before == sorted(p.name for p in populated.root.iterdir())
    assert not (populated.root / "checkpoints").exists()


def test_an_output_through_a_symlinked_folder_into_the_data_directory(
    populated: Cli, tmp_path: Path
) -> None:
    """The data directory is found by its real path: a link to it is no way in."""
    link = tmp_path / "innocent"
    link.symlink_to(populated.root)
    result = populated.run("verify-page", "-o", str(link / "chain.jsonl"))
    assert 2 == result.code and "inside the data directory" in result.err
    assert populated.ok("verify").out.startswith("ok: 5 entries verified")

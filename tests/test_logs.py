"""The integrations' logs (integrations/files.py): one line per event, mode 0600, set aside
as <name>.1 once they reach LOG_MAX_BYTES, so none grows without end."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memory_chain.integrations import files


def test_a_line_is_appended_folded_and_private(tmp_path: Path) -> None:
    files.append_line(tmp_path, "x.log", "one\n  two\tthree")
    files.append_line(tmp_path, "x.log", "four")
    log = tmp_path / "logs" / "x.log"
    assert log.read_text() == "one two three\nfour\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_full_log_is_set_aside_once_and_nothing_is_lost_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "LOG_MAX_BYTES", 100)
    lines = [f"event {n:03d} " + "x" * 20 for n in range(12)]  # 30 bytes a line
    for line in lines:
        files.append_line(tmp_path, "x.log", line)
    folder = tmp_path / "logs"
    kept = (folder / "x.log.1").read_text().splitlines() + (
        folder / "x.log"
    ).read_text().splitlines()
    assert kept == lines[-len(kept) :] and len(kept) >= 4  # the newest, in order, contiguous
    assert (folder / "x.log").stat().st_size < 100 + 31
    assert sorted(p.name for p in folder.iterdir()) == ["x.log", "x.log.1"]

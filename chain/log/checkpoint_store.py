"""Checkpoints kept beside the chain: checkpoints/<size>.note and the latest.

Every checkpoint made for this directory is kept (verify checks the chain
against each); ``checkpoint`` holds a copy of the largest, the file that
other tools read. Notes are written durably (temp file, fsync, rename).
"""

from __future__ import annotations

from pathlib import Path

from ..format.config import Layout
from ..format.errors import IntegrityError, OperationalError
from ..format.fsutil import replace_file
from .checkpoint import Checkpoint, CheckpointError, parse_checkpoint

__all__ = ["latest_checkpoint", "load_checkpoints", "note_path", "save_checkpoint"]


def note_path(layout: Layout, size: int) -> Path:
    return layout.checkpoints / f"{size:020d}.note"


def _read(path: Path, label: str) -> Checkpoint:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OperationalError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return parse_checkpoint(data).with_label(label)
    except CheckpointError as exc:
        raise IntegrityError(
            f"{path} is not a valid checkpoint: {exc}", reason="bad-checkpoint"
        ) from None


def load_checkpoints(layout: Layout) -> list[Checkpoint]:
    """Every stored checkpoint, smallest first."""
    if not layout.checkpoints.is_dir():
        return []
    out = []
    for path in sorted(layout.checkpoints.glob("*.note")):
        cp = _read(path, f"the checkpoint in checkpoints/{path.name}")
        if path.name != note_path(layout, cp.size).name:
            raise IntegrityError(
                f"{path} holds a checkpoint of size {cp.size}", reason="bad-checkpoint"
            )
        out.append(cp)
    return out


def latest_checkpoint(layout: Layout) -> Checkpoint | None:
    """The latest checkpoint (the ``checkpoint`` file), if one was made."""
    if not layout.checkpoint.exists():
        return None
    return _read(layout.checkpoint, "the latest checkpoint")


def save_checkpoint(layout: Layout, cp: Checkpoint) -> Path:
    """Store ``cp``; make it the latest if it is the largest. Returns its path."""
    path = note_path(layout, cp.size)
    if path.exists():
        old = _read(path, f"checkpoint {cp.size}")
        if old.root != cp.root:
            raise IntegrityError(
                f"{path} commits to another root for the same size: the chain was forked",
                reason="forked",
                seq=cp.size - 1,
            )
    if not layout.checkpoints.is_dir():
        layout.checkpoints.mkdir()
    replace_file(path, cp.text)
    latest = latest_checkpoint(layout)
    if latest is None or latest.size <= cp.size:
        replace_file(layout.checkpoint, cp.text)
    return path

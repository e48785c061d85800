"""Importing a whole export as a new, read-only data directory.

Nothing is created unless the archive verifies; the directory is built beside
the destination, checked again as it is written, and renamed into place.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..format.config import Config, Layout
from ..format.errors import (
    ChainStateError,
    InputError,
    IntegrityError,
    OperationalError,
)
from ..format.fsutil import fsync_dir
from ..format.keys import NO_KEY_MODE, write_public_key_file
from .archive import LIMITS, STEP_ARCHIVE, ArchiveReport, Limits, Sink
from .archive_check import check_archive

__all__ = ["import_archive"]


def _refuse(report: ArchiveReport, what: str) -> None:
    f = report.failure
    if f is None:
        return
    at = f"seq {f.seq}: " if f.step != STEP_ARCHIVE else ""
    raise IntegrityError(
        f"{what} does not verify: {at}{f.message} (step {f.step}, {f.reason})",
        seq=f.seq if f.step != STEP_ARCHIVE else None,
        reason=f.reason,
        hint="nothing was written",
    )


def _check_dest(dest: Path) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise ChainStateError(f"{dest} exists and is not a directory", hint="import into a new one")
    if dest.is_dir() and any(dest.iterdir()):
        raise ChainStateError(
            f"{dest} is not empty", hint="import into a new directory; nothing was written"
        )


def import_archive(
    path: str | os.PathLike[str],
    dest_dir: str | os.PathLike[str],
    *,
    trusted_key: str | None = None,
    chain_id: str | None = None,
    limits: Limits = LIMITS,
) -> ArchiveReport:
    """Make a data directory from a whole export; refuse anything that does not verify.

    Nothing is created unless the archive verifies. The directory is built
    under a temporary name beside ``dest_dir`` (the archive read and checked
    again as it is written) and renamed into place, so a crash leaves no
    half directory. The new chain has key mode ``none``: read-only.
    """
    dest = Path(dest_dir).absolute()
    _check_dest(dest)
    report, _ = check_archive(Path(path), trusted_key, chain_id, None, limits)
    _refuse(report, "the archive")
    if not report.complete:
        raise InputError(
            f"this is a partial export (seq {report.first}..{report.last}): a data "
            "directory needs the whole chain",
            hint="import an export made without --from/--to; nothing was written",
        )
    if not report.content_checked:
        raise InputError(
            "this export has no content (made with --no-content): a data directory needs its blobs",
            hint="import an export made without --no-content; nothing was written",
        )
    parent = dest.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".{dest.name}.import-{os.urandom(4).hex()}"
        tmp.mkdir(mode=0o700)
    except OSError as exc:
        raise OperationalError(f"cannot create {dest}: {exc.strerror}") from None
    try:
        sink = Sink(tmp)
        try:
            again, contents = check_archive(Path(path), trusted_key, chain_id, sink, limits)
        finally:
            sink.close()
        _refuse(again, "the archive (read again)")
        if (again.head, again.size, again.root) != (report.head, report.size, report.root):
            raise IntegrityError(
                "the archive changed while it was imported",
                reason="changed",
                hint="nothing was written",
            )
        layout = Layout(tmp)
        assert report.key is not None and report.chain_id is not None
        write_public_key_file(layout.public_key, report.key)
        config = Config.new(contents.genesis_name or "imported", NO_KEY_MODE, report.chain_id)
        config.save(layout)
        sink.sync()
        _check_dest(dest)
        try:
            os.rename(tmp, dest)  # replaces an empty directory
        except OSError as exc:
            raise OperationalError(f"cannot move the import to {dest}: {exc.strerror}") from None
        fsync_dir(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report

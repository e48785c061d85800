"""fsutil.write_parts: the bytes of b"".join(parts), however short os.writev's writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.chain.format import fsutil


@settings(deadline=None, max_examples=200)
@given(
    parts=st.lists(st.binary(max_size=40), max_size=30),
    cuts=st.lists(st.integers(0, 60), min_size=1, max_size=5),
    iov=st.integers(1, 8),
)
def test_write_parts_writes_every_byte_in_order(
    parts: list[bytes], cuts: list[int], iov: int
) -> None:
    path = Path(tempfile.gettempdir()) / f"write-parts-{os.getpid()}"
    real = os.writev
    short = iter(cuts)

    def writev(fd: int, buffers: list[bytes]) -> int:
        """Writes at most the next cut's bytes of what it is given (a short write)."""
        data = b"".join(buffers)
        limit = next(short, len(data))
        return real(fd, [data[:limit]]) if data else 0

    old_writev, old_iov = fsutil.os.writev, fsutil._IOV_MAX
    fsutil.os.writev, fsutil._IOV_MAX = writev, iov  # type: ignore[assignment]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        fsutil.write_parts(fd, parts)
    finally:
        os.close(fd)
        fsutil.os.writev, fsutil._IOV_MAX = old_writev, old_iov  # type: ignore[assignment]
    try:
        assert path.read_bytes() == b"".join(parts)
    finally:
        path.unlink()

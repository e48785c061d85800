"""The local witness: the largest checkpoint seen for each chain id.

A chain's own directory cannot prove it was not cut or rewritten: whoever
can write it can also rewrite head.json and the checkpoints beside it. The
witness file lives outside every data directory (config.resolve_state_dir)
and only ever grows: it remembers, per chain id, the largest checkpoint
this user has made or verified. verify checks the chain against it (a
chain with fewer entries, or another root at that size, fails), and every
write refuses to extend a chain that is shorter than it.

File format (JSON, replaced atomically under an flock on witness.lock)::

    {"format": "memory-chain-witness/1",
     "chains": {"b3:<chain id>": {"size": 120, "root": "<base64>",
                                  "seen": "2026-11-21T10:00:00Z",
                                  "checkpoint": "<the signed note text>"}}}
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from ..format.errors import IntegrityError, OperationalError
from ..format.fsutil import replace_file
from ..format.values import Value
from .checkpoint import Checkpoint, CheckpointError, parse_checkpoint

__all__ = ["WITNESS_FORMAT", "Witness", "Witnessed"]

WITNESS_FORMAT: Final = "memory-chain-witness/1"


class Witnessed(Value):
    """What the witness remembers of one chain."""

    __slots__ = ("chain_id", "checkpoint", "seen")
    chain_id: str
    checkpoint: Checkpoint
    seen: str

    def __init__(self, chain_id: str, checkpoint: Checkpoint, seen: str) -> None:
        set_ = object.__setattr__
        set_(self, "chain_id", chain_id)
        set_(self, "checkpoint", checkpoint)
        set_(self, "seen", seen)

    @property
    def size(self) -> int:
        return self.checkpoint.size


class Witness:
    """The witness file at ``path`` (usually <state dir>/witness.json)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def in_state_dir(cls, state_dir: Path) -> Witness:
        return cls(state_dir / "witness.json")

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OperationalError(
                f"cannot read the witness file {self.path}: {exc.strerror}"
            ) from None
        try:
            data = orjson.loads(raw)
            if data.get("format") != WITNESS_FORMAT or not isinstance(data["chains"], dict):
                raise ValueError
            chains: dict[str, Any] = data["chains"]
        except (orjson.JSONDecodeError, ValueError, KeyError, AttributeError, TypeError):
            # Never treat a damaged witness as an empty one: that would turn
            # rollback detection off without a word.
            raise OperationalError(
                f"the witness file {self.path} is damaged",
                hint="restore it, or move it aside to start witnessing afresh",
            ) from None
        return chains

    def get(self, chain_id: str) -> Witnessed | None:
        """The largest checkpoint witnessed for ``chain_id``, if any."""
        record = self._read().get(chain_id)
        if record is None:
            return None
        try:
            cp = parse_checkpoint(record["checkpoint"].encode())
            seen = str(record["seen"])
        except (CheckpointError, KeyError, AttributeError, TypeError):
            raise OperationalError(
                f"the witness file {self.path} holds a damaged record for {chain_id}",
                hint="restore it, or move it aside to start witnessing afresh",
            ) from None
        if cp.chain_id != chain_id:
            raise OperationalError(
                f"the witness file {self.path} files a checkpoint for {cp.origin} under {chain_id}"
            )
        return Witnessed(chain_id, cp.with_label(f"checkpoint from {seen} (witness)"), seen)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def record(self, cp: Checkpoint) -> bool:
        """Remember ``cp`` if it is larger than what is witnessed; True if it was.

        The caller must have checked that the chain is consistent with the
        witnessed checkpoint first (verify does). Two checkpoints of the same
        size with different roots are a fork: IntegrityError.
        """
        chain_id = cp.chain_id
        if chain_id is None:
            raise OperationalError(f"checkpoint origin {cp.origin!r} names no chain id")
        with self._locked():
            chains = self._read()
            old = chains.get(chain_id)
            if old is not None:
                old_size = int(old["size"])
                if old_size == cp.size and base64.b64decode(old["root"]) != cp.root:
                    raise IntegrityError(
                        f"a checkpoint of size {cp.size} with another root was witnessed "
                        f"on {old['seen']}: the chain was forked",
                        reason="forked",
                        seq=cp.size - 1,
                    )
                if old_size >= cp.size:
                    return False
            chains[chain_id] = {
                "size": cp.size,
                "root": base64.b64encode(cp.root).decode(),
                "seen": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "checkpoint": cp.text.decode(),
            }
            data = {"format": WITNESS_FORMAT, "chains": chains}
            replace_file(self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        return True

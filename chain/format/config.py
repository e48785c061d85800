"""The data directory and its config file.

The directory is ``--dir``, else ``$MEMORY_CHAIN_DIR``, else
``~/.memory-chain``. Its layout (specs/FORMAT.md section 7)::

    config.json     name, key mode, pinned chain id, limits
    chain.jsonl     the entries, one per line
    content/        blobs by hash
    head.json       cached head (a cache: rebuilt from the chain if lost)
    agent.key | agent.key.enc, agent.pub
    lock            flock target for writers
    quarantine/     torn tails moved aside
    keys/retired/   keys replaced by rotation
    checkpoint      the latest signed checkpoint (a C2SP signed note)
    checkpoints/    every checkpoint made, <tree size>.note
    anchors.jsonl   anchor records (EVM transactions), when anchored
    anchor.lock     flock target that serialises `memory-chain anchor` runs
    publish.lock    flock target that serialises `memory-chain publish` runs
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

import orjson

from .errors import ChainStateError, OperationalError
from .fsutil import fsync_dir, write_all

__all__ = [
    "CONFIG_FORMAT",
    "ENV_DIR",
    "ENV_STATE_DIR",
    "Config",
    "Layout",
    "resolve_dir",
    "resolve_state_dir",
]

ENV_DIR: Final = "MEMORY_CHAIN_DIR"
ENV_STATE_DIR: Final = "MEMORY_CHAIN_STATE_DIR"
CONFIG_FORMAT: Final = "memory-chain-config/1"
DEFAULT_MAX_CONTENT: Final = 64 * 1024


def resolve_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Pick the data directory: explicit, else $MEMORY_CHAIN_DIR, else ~/.memory-chain."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".memory-chain"


class Layout:
    """Paths inside one data directory (computed once: they are on the add path)."""

    __slots__ = (
        "anchor_lock",
        "anchors",
        "chain",
        "checkpoint",
        "checkpoints",
        "config",
        "content",
        "head",
        "journal",
        "lock",
        "next_keys",
        "public_key",
        "publish_lock",
        "quarantine",
        "retired_keys",
        "root",
        "spool",
    )

    def __init__(self, root: Path) -> None:
        self.root = root
        self.chain = root / "chain.jsonl"
        self.config = root / "config.json"
        self.head = root / "head.json"
        self.content = root / "content"
        self.lock = root / "lock"
        self.journal = root / "batch.journal"
        self.spool = root / "batch.spool"
        self.quarantine = root / "quarantine"
        self.public_key = root / "agent.pub"
        self.retired_keys = root / "keys" / "retired"
        self.checkpoint = root / "checkpoint"
        self.checkpoints = root / "checkpoints"
        self.anchors = root / "anchors.jsonl"
        self.anchor_lock = root / "anchor.lock"
        self.publish_lock = root / "publish.lock"
        # Checked on every write (an interrupted key rotation), so kept as strings.
        self.next_keys = (str(root / "agent.key.next"), str(root / "agent.key.enc.next"))


class Config:
    """config.json: a JSON object whose unknown fields survive a rewrite."""

    def __init__(self, data: dict[str, Any], *, missing: bool = False) -> None:
        self.data = data
        #: True when the directory holds a chain but no config.json (read only: 7.1).
        self.missing = missing

    @classmethod
    def new(cls, name: str, key_mode: str, chain_id: str) -> Config:
        return cls(
            {
                "format": CONFIG_FORMAT,
                "name": name,
                "key_mode": key_mode,
                "chain_id": chain_id,
                "max_content_bytes": DEFAULT_MAX_CONTENT,
            }
        )

    @classmethod
    def load(cls, layout: Layout, *, reader: bool = False) -> Config:
        """config.json; with ``reader``, a directory holding chain.jsonl without one reads
        as defaults marked ``missing`` (a verifier needs only chain.jsonl and content/)."""
        if not layout.root.is_dir():
            raise ChainStateError(
                f"no data directory at {layout.root}",
                hint="run `memory-chain init`, or pass --dir / set MEMORY_CHAIN_DIR",
            )
        try:
            raw = layout.config.read_bytes()
        except FileNotFoundError:
            if reader and layout.chain.exists():
                return cls({"format": CONFIG_FORMAT}, missing=True)
            raise ChainStateError(
                f"no chain in {layout.root} (config.json is missing)",
                hint="run `memory-chain init` to create one",
            ) from None
        except OSError as exc:
            raise OperationalError(f"cannot read {layout.config}: {exc.strerror}") from None
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise OperationalError(f"{layout.config} is not valid JSON") from None
        if not isinstance(data, dict) or data.get("format") != CONFIG_FORMAT:
            raise OperationalError(f"{layout.config} is not a {CONFIG_FORMAT} file")
        return cls(data)

    def save(self, layout: Layout) -> None:
        """Replace config.json durably (temp file, fsync, rename, fsync folder)."""
        tmp = layout.config.with_name("config.json.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, orjson.dumps(self.data, option=orjson.OPT_INDENT_2) + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, layout.config)
        fsync_dir(layout.root)

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    @property
    def key_mode(self) -> str:
        return str(self.data.get("key_mode", "raw"))

    @property
    def chain_id(self) -> str | None:
        value = self.data.get("chain_id")
        return str(value) if value else None

    @property
    def max_content_bytes(self) -> int:
        return int(self.data.get("max_content_bytes", DEFAULT_MAX_CONTENT))


def resolve_state_dir() -> Path:
    """The per-user state folder, outside every data directory.

    It holds the witness file (the largest checkpoint seen per chain) and
    the verification cache: $MEMORY_CHAIN_STATE_DIR, else
    $XDG_STATE_HOME/memory-chain, else ~/.local/state/memory-chain. It is
    deliberately not configurable from config.json: whoever can write the
    data directory must not be able to point the witness elsewhere.
    """
    env = os.environ.get(ENV_STATE_DIR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "memory-chain"

"""A chain as a C2SP tlog-tiles log: its SHA-256 companion tree as static files.

The transparency tooling (witnesses, monitors, Go's sumdb/tlog) checks
RFC 6962 trees of SHA-256; the chain's own tree is of BLAKE3 (FORMAT.md
10). The companion tree has the same leaves, each entry line's bytes
without its newline, hashed as RFC 6962 does with SHA-256. A folder of
tiles (c2sp.org/tlog-tiles) holds:

    checkpoint                    the companion checkpoint (FORMAT.md 19.2)
    tile/<L>/<N>[.p/<W>]          hash tiles: 256 SHA-256 hashes of level L
    tile/entries/<N>[.p/<W>]      entry bundles: the chain's lines, each
                                  after its length as a big-endian uint16

This module is the format only: paths, building the tiles of a tree,
reading them back and checking them. Publishing a ledger and checking a
published folder against a chain are chain/audit/publishing.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from ..format.errors import OperationalError
from ..format.fsutil import replace_file, sync_filesystem
from .merkle import SHA256, Frontier

__all__ = [
    "HASHES_PER_TILE",
    "FolderStore",
    "Store",
    "TileError",
    "Tiles",
    "as_store",
    "build_tiles",
    "companion_origin",
    "entry_bundle",
    "iter_entries",
    "leaf_hashes_of",
    "read_entries",
    "read_leaf_hashes",
    "tile_path",
    "tiles_for",
]

HASHES_PER_TILE = 256
_HEIGHT = 8  # log2(HASHES_PER_TILE)
_MAX_ENTRY = 0xFFFF


class TileError(ValueError):
    """A published folder whose tiles do not hold what its checkpoint says; the message says why."""


class Store(Protocol):
    """Where a published log lives: a folder here, or an S3-compatible bucket
    (integrations/s3_store.py). Paths are the tlog-tiles ones, with "/"."""

    def read(self, rel: str) -> bytes | None:
        """The object's bytes; None when there is none."""

    def size(self, rel: str) -> int | None:
        """The object's length; None when there is none."""

    def write(self, rel: str, data: bytes, *, last: bool = False) -> None:
        """Put the object whole (a reader sees the old bytes or the new). ``last``: the
        checkpoint, written after everything it names is durable (``sync``)."""

    def names(self, prefix: str) -> list[str]:
        """The names of the objects right under ``prefix``/."""

    def sync(self) -> None:
        """Make what was written durable."""

    def where(self, rel: str = "") -> str:
        """The object's location, for messages."""


class FolderStore:
    """A published log in a folder: each object a file written through a temporary file."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> bytes | None:
        try:
            return self._path(rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise OperationalError(f"cannot read {self._path(rel)}: {exc.strerror}") from None

    def size(self, rel: str) -> int | None:
        try:
            return self._path(rel).stat().st_size
        except OSError:
            return None

    def write(self, rel: str, data: bytes, *, last: bool = False) -> None:
        path = self._path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, data, durable=last)

    def names(self, prefix: str) -> list[str]:
        try:
            return sorted(p.name for p in self._path(prefix).iterdir())
        except OSError:
            return []

    def sync(self) -> None:
        if self.root.exists():
            sync_filesystem(self.root)

    def where(self, rel: str = "") -> str:
        return str(self._path(rel)) if rel else str(self.root)


def as_store(where: Store | Path) -> Store:
    """A Path as a FolderStore; a Store as it is."""
    return FolderStore(where) if isinstance(where, Path) else where


def companion_origin(chain_id: str) -> str:
    """The origin (and key name) of a chain's companion checkpoints: memory-chain/<H>/sha256."""
    return "memory-chain/" + chain_id.removeprefix("b3:") + "/sha256"


def tile_path(level: int | None, index: int, width: int = HASHES_PER_TILE) -> str:
    """The path of a tile (level None: an entry bundle), as c2sp.org/tlog-tiles names it.

    The index in 3-digit elements, all but the last after an "x"
    (1234067 -> x001/x234/067); a partial tile of ``width`` < 256 ends in .p/<width>.
    """
    if index < 0 or not 1 <= width <= HASHES_PER_TILE:
        raise ValueError(f"no tile {index} of width {width}")
    elements = []
    n = index
    while True:
        elements.append(n % 1000)
        n //= 1000
        if not n:
            break
    elements.reverse()
    digits = "/".join([f"x{e:03d}" for e in elements[:-1]] + [f"{elements[-1]:03d}"])
    prefix = "tile/entries" if level is None else f"tile/{level}"
    suffix = "" if width == HASHES_PER_TILE else f".p/{width}"
    return f"{prefix}/{digits}{suffix}"


def leaf_hashes_of(lines: Sequence[bytes]) -> list[bytes]:
    """Each line's SHA-256 leaf hash (RFC 6962: SHA-256(0x00 || line)), without its newline."""
    sha = hashlib.sha256
    return [sha(b"\x00" + line).digest() for line in lines]


def _subtree_root(hashes: Sequence[bytes]) -> bytes:
    """The root of 256 hashes as the leaves of a perfect subtree of height 8."""
    level = list(hashes)
    while len(level) > 1:
        level = SHA256.parents(level)
    return level[0]


def tiles_for(size: int) -> Iterator[tuple[int, int, int]]:
    """(level, index, width) of every hash tile of a tree of ``size`` leaves, level by level.

    A tree of 256 leaves has a full tile at level 0 and a partial tile of width
    1 at level 1; a tree of 70,000 has 273 full tiles and one of width 112 at
    level 0, one full and one of width 17 at level 1, one of width 1 at level 2.
    """
    level, count = 0, size
    while count:
        full, rest = divmod(count, HASHES_PER_TILE)
        for index in range(full):
            yield level, index, HASHES_PER_TILE
        if rest:
            yield level, full, rest
        if not full:
            return
        level, count = level + 1, full


Tiles = dict[str, bytes]


def build_tiles(leaf_hashes: Sequence[bytes]) -> Tiles:
    """Every hash tile of the tree of ``leaf_hashes``, by path.

    Level 0 holds the leaf hashes; each hash of level l + 1 is the root of a
    full tile of level l. A partial tile is never hashed into the level above.
    """
    out: Tiles = {}
    level, hashes = 0, list(leaf_hashes)
    while hashes:
        full = len(hashes) // HASHES_PER_TILE
        for index in range(0, len(hashes), HASHES_PER_TILE):
            chunk = hashes[index : index + HASHES_PER_TILE]
            out[tile_path(level, index // HASHES_PER_TILE, len(chunk))] = b"".join(chunk)
        if not full:
            break
        hashes = [
            _subtree_root(hashes[i * HASHES_PER_TILE : (i + 1) * HASHES_PER_TILE])
            for i in range(full)
        ]
        level += 1
    return out


def entry_bundle(lines: Sequence[bytes]) -> bytes:
    """An entry bundle: each line after its length as a big-endian uint16."""
    parts = []
    for line in lines:
        if len(line) > _MAX_ENTRY:
            raise ValueError(f"an entry of {len(line)} bytes does not fit an entry bundle")
        parts.append(len(line).to_bytes(2, "big"))
        parts.append(line)
    return b"".join(parts)


def _read(store: Store, path: str, length: int | None = None) -> bytes:
    data = store.read(path)
    if data is None:
        raise TileError(f"{path} is missing")
    if length is not None and len(data) != length:
        raise TileError(f"{path} is {len(data)} bytes, not {length}")
    return data


def _tile_of(store: Store, level: int, index: int, width: int) -> bytes:
    """A tile of ``width`` hashes: the partial tile, or else the first hashes of the full one."""
    if width < HASHES_PER_TILE:
        try:
            return _read(store, tile_path(level, index, width), 32 * width)
        except TileError:
            if store.size(tile_path(level, index)) is None:
                raise
            return _read(store, tile_path(level, index), 32 * HASHES_PER_TILE)[: 32 * width]
    return _read(store, tile_path(level, index), 32 * HASHES_PER_TILE)


def read_leaf_hashes(where: Store | Path, size: int, root: bytes) -> list[bytes]:
    """The leaf hashes of the tree of ``size`` in a published log's tiles, checked against
    ``root``.

    Every tile the tree needs is read and checked: each hash of a level above
    0 must be the root of the full tile below it, and the tree of the leaf
    hashes must have ``root``. Raises TileError with what does not hold.
    """
    store = as_store(where)
    levels: dict[int, list[bytes]] = {}
    for level, index, width in tiles_for(size):
        data = _tile_of(store, level, index, width)
        levels.setdefault(level, []).extend(data[i : i + 32] for i in range(0, len(data), 32))
    for level in sorted(levels)[1:]:
        below = levels[level - 1]
        for i, h in enumerate(levels[level]):
            if _subtree_root(below[i * HASHES_PER_TILE : (i + 1) * HASHES_PER_TILE]) != h:
                raise TileError(
                    f"{tile_path(level, i // HASHES_PER_TILE)}: hash {i % HASHES_PER_TILE} is not "
                    f"the root of {tile_path(level - 1, i)}"
                )
    leaves = levels.get(0, [])
    frontier = Frontier(SHA256)
    for h in leaves:
        frontier.append(h)
    if frontier.root() != root:
        raise TileError(f"the tiles of size {size} do not have the checkpoint's root")
    return leaves


def read_entries(where: Store | Path, size: int, leaf_hashes: Sequence[bytes]) -> list[bytes]:
    """The first ``size`` entries of a published log's bundles, each checked against its
    leaf hash."""
    return list(iter_entries(where, size, leaf_hashes))


def iter_entries(where: Store | Path, size: int, leaf_hashes: Sequence[bytes]) -> Iterator[bytes]:
    """read_entries() a bundle at a time: TileError as soon as a bundle or an entry is wrong."""
    store = as_store(where)
    sha = hashlib.sha256
    full, rest = divmod(size, HASHES_PER_TILE)
    for index in range(full + (1 if rest else 0)):
        width = HASHES_PER_TILE if index < full else rest
        path = tile_path(None, index, width)
        try:
            data = _read(store, path)
        except TileError:
            if width == HASHES_PER_TILE or store.size(tile_path(None, index)) is None:
                raise
            path = tile_path(None, index)
            data = _read(store, path)
        at, count, first = 0, 0, index * HASHES_PER_TILE
        entries = []
        while at < len(data) and count < width:
            if at + 2 > len(data):
                raise TileError(f"{path}: an entry's length is cut short")
            n = int.from_bytes(data[at : at + 2], "big")
            entry = data[at + 2 : at + 2 + n]
            if len(entry) != n:
                raise TileError(f"{path}: entry {count} is cut short")
            if sha(b"\x00" + entry).digest() != leaf_hashes[first + count]:
                raise TileError(
                    f"entry {first + count} does not hash to its leaf in {tile_path(0, index)}"
                )
            entries.append(entry)
            at += 2 + n
            count += 1
        exact = path == tile_path(None, index, width)
        if count != width or (exact and at != len(data)):
            raise TileError(f"{path} holds {count} whole entries, not {width}")
        yield from entries

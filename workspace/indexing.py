"""The workspace in the index: ws_files, ws_entries and ws_fts kept in step with the files.

``sync_workspace(conn, workspace)`` walks the scope roots in force and
compares each file's size, mtime, ctime and inode with what ws_files
recorded: an unchanged file costs one stat. A file whose stat changed is
read and hashed; only when its hash changed too are its entries parsed
again. Files that disappeared from these roots are dropped; rows of other
roots (another project's scopes) are kept and filtered out by ``root`` when
read. The files stay the truth: deleting memory.db loses nothing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memory_chain.chain.format.values import Value
from memory_chain.index.sync import estimate_tokens, write_transaction

from .scopes import Scope, Workspace

if TYPE_CHECKING:
    from .markdown import Document

# markdown, provenance and summary are imported where a changed file is read: a search or
# a session start that finds every file unchanged does not pay for them (issue 27).

__all__ = ["WsSync", "file_problem", "in_roots", "roots", "sync_workspace"]

#: Files larger than this are listed but their entries are not indexed.
MAX_INDEXED_BYTES: Final = 4 << 20


class WsSync(Value):
    __slots__ = ("files", "parsed", "removed")
    files: int  # files in the scopes
    parsed: int  # files read again
    removed: int  # files gone since the last sync

    def __init__(self, files: int, parsed: int, removed: int) -> None:
        set_ = object.__setattr__
        set_(self, "files", files)
        set_(self, "parsed", parsed)
        set_(self, "removed", removed)


def roots(workspace: Workspace) -> list[str]:
    return [str(s.root) for s in workspace.in_order()]


def in_roots(workspace: Workspace, column: str = "root") -> tuple[str, list[str]]:
    """SQL ``column IN (?, ...)`` for the scope roots in force, and its parameters.

    Rows of other roots (another project's scopes) stay in the index; every
    read filters on this.
    """
    scope_roots = roots(workspace)
    return f"{column} IN ({','.join('?' for _ in scope_roots)})", scope_roots


def file_problem(data: bytes) -> str | None:
    """Why a file is not a clean workspace file (reported by verify --workspace)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start})"
    if "\x00" in text:
        return f"holds a NUL byte (byte {data.index(0)})"
    for n, line in enumerate(text.split("\n"), 1):
        if "<!-- mc:" in line and "-->" not in line:
            return f"line {n}: an unclosed <!-- mc: ... --> metadata comment"
    return None


#: Kinds of file whose sub-lines, numbered items and table rows are indexed too. Not the
#: daily files: capture writes quoted evidence under a line there, never an instruction.
_WHOLE: Final = frozenset({"memory", "topic", "fact", "episode"})


def _entries(scope: Scope, kind: str, path: Path, doc: Document) -> list[tuple[Any, ...]]:
    from .markdown import child_text, shown
    from .provenance import origin_of

    rows = []
    whole = kind in _WHOLE
    for e in doc.entries():
        meta = e.meta
        rows.append(
            (
                str(path),
                str(scope.root),
                scope.name,
                kind,
                shown(e.section),
                e.line,
                shown(e.text),
                int(e.stale),
                int(meta.untrusted),
                meta.seq,
                _shown(meta.get("added")),
                _shown(meta.get("confirmed")),
                _shown(meta.get("src")),
                estimate_tokens(e.text),
                origin_of(e),
                int(bool(meta.get("ok"))),
            )
        )
        if whole:
            # A person's sub-bullets: their own rows, as trusted as the entry above them.
            for k, child in enumerate(e.children, start=e.line + 1):
                text = child_text(child)
                if text and not text.startswith("<!--"):
                    rows.append(
                        _row(
                            scope,
                            kind,
                            path,
                            e.section,
                            k,
                            text,
                            int(meta.untrusted),
                            origin_of(e),
                            int(bool(meta.get("ok"))),
                        )
                    )
    if whole:
        for item in doc.items:
            rows.append(_row(scope, kind, path, item.section, item.line, item.text, 0))
    rows.sort(key=lambda r: r[5])  # file order
    return rows


def _row(
    scope: Scope,
    kind: str,
    path: Path,
    section: str,
    line: int,
    text: str,
    untrusted: int,
    origin: str = "person",
    approved: int = 0,
) -> tuple[Any, ...]:
    """An index row for a line that is not an entry: no metadata, never a chain entry."""
    from .markdown import shown

    return (
        str(path),
        str(scope.root),
        scope.name,
        kind,
        shown(section),
        line,
        shown(text),
        0,
        untrusted,
        None,
        None,
        None,
        None,
        estimate_tokens(text),
        origin,
        approved,
    )


def _drop(conn: sqlite3.Connection, path: str) -> None:
    conn.execute(
        "INSERT INTO ws_fts (ws_fts, rowid, text, section) "
        "SELECT 'delete', id, text, section FROM ws_entries WHERE path = ?",
        (path,),
    )
    conn.execute("DELETE FROM ws_entries WHERE path = ?", (path,))
    conn.execute("DELETE FROM ws_files WHERE path = ?", (path,))


def _index_file(
    conn: sqlite3.Connection, scope: Scope, kind: str, path: Path, st: os.stat_result, data: bytes
) -> None:
    key = str(path)
    _drop(conn, key)
    from .markdown import Document, decode, shown
    from .summary import make_summary, summary_of

    text = decode(data[:MAX_INDEXED_BYTES])
    doc = Document.parse(data) if len(data) <= MAX_INDEXED_BYTES else Document([])
    summary = shown(summary_of(text[:8192]) or make_summary(text[:8192]))
    conn.execute(
        "INSERT INTO ws_files (path, root, scope, kind, size, mtime_ns, ctime_ns, ino, hash, "
        "summary, lines, problem) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            str(scope.root),
            scope.name,
            kind,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_ino,
            _hash(data),
            summary,
            len(doc.lines),
            file_problem(data),
        ),
    )
    rows = _entries(scope, kind, path, doc)
    if rows:
        conn.executemany(
            "INSERT INTO ws_entries (path, root, scope, kind, section, line, text, stale, "
            "untrusted, seq, added, confirmed, source, tokens, origin, approved) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute(
            "INSERT INTO ws_fts (rowid, text, section) "
            "SELECT id, text, section FROM ws_entries WHERE path = ?",
            (key,),
        )


def _shown(value: str | None) -> str | None:
    from .markdown import shown

    return None if value is None else shown(value)


def _hash(data: bytes) -> str:
    import hashlib  # not on the path of a search that finds the files unchanged

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def sync_workspace(conn: sqlite3.Connection, workspace: Workspace) -> WsSync:
    """Bring ws_* up to date with the workspace's files (see the module docstring)."""
    where, scope_roots = in_roots(workspace)
    known = {
        r[0]: r[1:]
        for r in conn.execute(
            f"SELECT path, size, mtime_ns, ctime_ns, ino, hash FROM ws_files WHERE {where}",
            scope_roots,
        )
    }
    seen: set[str] = set()
    changed: list[tuple[Scope, str, Path, os.stat_result]] = []
    for scope in workspace.in_order():
        for kind, path in scope.files():
            key = str(path)
            try:
                st = os.stat(path)
            except OSError:
                continue
            seen.add(key)
            row = known.get(key)
            if row is not None and row[:4] == (
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
                st.st_ino,
            ):
                continue
            changed.append((scope, kind, path, st))
    gone = [p for p in known if p not in seen]
    if not changed and not gone:
        return WsSync(len(seen), 0, 0)
    parsed = 0
    with write_transaction(conn):
        for scope, kind, path, st in changed:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            row = known.get(str(path))
            if row is not None and row[4] == _hash(data):
                conn.execute(
                    "UPDATE ws_files SET size = ?, mtime_ns = ?, ctime_ns = ?, ino = ? "
                    "WHERE path = ?",
                    (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, str(path)),
                )
                continue
            _index_file(conn, scope, kind, path, st, data)
            parsed += 1
        for key in gone:
            _drop(conn, key)
    return WsSync(len(seen), parsed, len(gone))

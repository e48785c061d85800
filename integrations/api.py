"""memory_chain.integrations.Memory: the library's one door for agents and frameworks.

A small typed facade over one data directory and its markdown workspace,
used in-process by the hooks, the MCP server and the memory-tool adapter
(and by any Python agent framework), so none of them shells out::

    from memory_chain import Memory

    with Memory.open("~/.memory-chain") as memory:
        memory.remember("Use pnpm, not npm", section="Tool Usage")
        seq = memory.add("We deploy on Tuesdays", type="decision", tier="committed")["seq"]
        hits = memory.search("deploy")
        block = memory.context(query="deploy the web app")["markdown"]
        bundle = memory.prove(seq)

Results are plain JSON-able dicts (what the CLI prints with --json), typed
as TypedDicts (integrations/types.py: Added, Found, Entry, Verified ...);
type, tier, source, scope and origin are Literal types, so a misspelled
tier is a type error. Bad input raises MemoryChainError
(memory_chain.chain.format.errors: InputError and friends) with a one-line
``message`` and a ``hint``; nothing is written then. The index is opened
once and kept, so a long-running caller (the MCP server) pays for it once;
``close()`` (or ``with``) releases it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:  # the shapes of results (plain dicts at run time): not on the hooks' path
    from memory_chain.chain.format.keys import PassphraseSource
    from memory_chain.chain.store.ledger import Ledger
    from memory_chain.index.db import Index
    from memory_chain.workspace.scopes import Workspace

    from .types import (
        Added,
        ContentType,
        Entry,
        Found,
        Origin,
        Proof,
        Recent,
        Redacted,
        Remembered,
        Scope,
        Source,
        Tier,
        Verified,
        Waiting,
    )

__all__ = ["Memory"]


def _env_passphrase(_prompt: str, _confirm: bool) -> str:
    """The passphrase of an encrypted key: $MEMORY_CHAIN_PASSPHRASE, never a prompt."""
    from memory_chain.chain.format.errors import KeyAccessError
    from memory_chain.chain.format.keys import ENV_PASSPHRASE

    value = os.environ.get(ENV_PASSPHRASE)
    if value is None:
        raise KeyAccessError(
            "the signing key is encrypted and no passphrase was given",
            hint=f"set {ENV_PASSPHRASE}",
        )
    return value


class Memory:
    """One data directory (the chain and its index) and the workspace around it."""

    def __init__(
        self,
        data_dir: Path,
        *,
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | Literal[False] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        passphrase: PassphraseSource | str | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._workspace_arg = workspace
        self._project_arg = project
        self._cwd = Path(cwd) if cwd is not None else None
        if isinstance(passphrase, str):
            secret = passphrase
            self._passphrase: PassphraseSource = lambda _p, _c: secret
        else:
            self._passphrase = passphrase or _env_passphrase
        self._workspace: Workspace | None = None
        self._ledger: Ledger | None = None
        self._index: Index | None = None

    @classmethod
    def open(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | Literal[False] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        passphrase: PassphraseSource | str | None = None,
    ) -> Memory:
        """The data directory ``data_dir`` (default $MEMORY_CHAIN_DIR, else ~/.memory-chain).

        ``workspace``: the user workspace (default $MEMORY_CHAIN_WORKSPACE,
        config.json "workspace", else <data dir>/workspace). ``project``:
        the project root (default $CLAUDE_PROJECT_DIR, else the nearest
        folder above ``cwd`` with .git or .memory-chain; False: no project,
        only the user scope). ``passphrase``:
        for an encrypted key (a string, or a callable; default
        $MEMORY_CHAIN_PASSPHRASE). Nothing is read until first use.
        """
        from memory_chain.chain.format.config import resolve_dir

        return cls(
            resolve_dir(data_dir),
            workspace=workspace,
            project=project,
            cwd=cwd,
            passphrase=passphrase,
        )

    @classmethod
    def init(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        name: str = "agent",
        key_mode: Literal["raw", "encrypted", "env"] = "raw",
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | Literal[False] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        passphrase: PassphraseSource | str | None = None,
    ) -> Memory:
        """Create a data directory (a signing key, config.json and the genesis entry), as
        `memory-chain init` does, and open it; the arguments are ``open``'s.

        >>> memory = Memory.init("/tmp/my-agent", name="my-agent")  # doctest: +SKIP

        Refused (ChainStateError, nothing written) when ``data_dir`` already holds a chain.
        """
        from memory_chain.chain.store.ledger import Ledger

        memory = cls.open(
            data_dir, workspace=workspace, project=project, cwd=cwd, passphrase=passphrase
        )
        Ledger.init(
            memory.data_dir, name=name, key_mode=key_mode, passphrase=memory._passphrase
        ).close()
        return memory

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the index (access counts are flushed) and the ledger."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    # -- the parts, opened on first use ------------------------------------

    @property
    def has_chain(self) -> bool:
        from memory_chain.chain.format.config import Layout

        return Layout(self.data_dir).chain.exists()

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            from memory_chain.chain.format.config import Config, Layout
            from memory_chain.chain.format.errors import OperationalError
            from memory_chain.workspace.scopes import Workspace, resolve_user_root

            try:
                config = Config.load(Layout(self.data_dir)).data
            except OperationalError:  # no data directory yet: the workspace works alone
                config = {}
            if self._project_arg is False:
                root = resolve_user_root(self.data_dir, self._workspace_arg, config)
                self._workspace = Workspace(root, None)
                return self._workspace
            self._workspace = Workspace.resolve(
                self.data_dir,
                workspace=self._workspace_arg,
                project=self._project_arg,
                config=config,
                cwd=self._cwd,
            )
        return self._workspace

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            from memory_chain.chain.store.ledger import Ledger

            self._ledger = Ledger(self.data_dir, passphrase=self._passphrase)
        return self._ledger

    @property
    def index(self) -> Index:
        """The index, synced with the chain now (cheap when nothing changed)."""
        if self._index is None:
            from memory_chain.index.db import Index

            self._index = Index.open_or_empty(self.data_dir)
        elif self._index.chainless and self.has_chain:  # init ran since
            self._index.close()
            self._index = None
            return self.index
        else:
            self._index.sync()
        return self._index

    # -- the chain ---------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        type: ContentType = "memory",
        tier: Tier = "relationship",
        source: Source = "manual",
        importance: int | None = None,
        meta: dict[str, Any] | None = None,
        origin: Origin = "agent",
    ) -> Added:
        """Sign and append a memory to the chain: {"seq", "hash", "ts", "content"}.

        ``origin`` (signed as the metadata member of that name, unless ``meta``
        names one): where the words came from; a program writes as an agent.

        Refused (InputError, nothing written) when it looks like a secret, and
        (IntegrityError) when the chain does not verify: it is verified
        incrementally first, so nothing is signed on top of an edited chain.

        >>> added = memory.add("We deploy on Tuesdays", type="decision", tier="committed")
        >>> added["seq"], added["content"][:3]
        (1, 'b3:')
        """
        from memory_chain.chain.audit.verify_ledger import require_verified
        from memory_chain.chain.format.errors import InputError
        from memory_chain.chain.format.newentry import NewEntry

        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # found by the fuzz pass: it escaped as a crash
            raise InputError("the content is not valid Unicode text (a lone surrogate)") from None
        require_verified(self.ledger)
        r = self.ledger.add(
            NewEntry(
                content=data,
                type=type,
                tier=tier,
                source=source,
                importance=importance,
                meta={"origin": origin, **(meta or {})},
            )
        )
        assert r.content is not None  # a memory always has content
        added: Added = {"seq": r.seq, "hash": r.hash, "ts": r.ts, "content": r.content}
        return added

    def get(self, seq: int) -> Entry:
        """Entry ``seq`` as `show SEQ --content --json` prints it: the signed entry's
        members, ``text`` (absent when redacted or lost) and ``redacted_by`` (the
        redaction's seq, or None).

        >>> entry = memory.get(1)
        >>> entry["type"], entry["text"], entry["redacted_by"]
        ('decision', 'We deploy on Tuesdays', None)
        """
        from memory_chain.chain.store.views import entry_view

        return cast("Entry", entry_view(self.ledger, seq, with_content=True).as_dict())

    def supersede(
        self,
        seq: int,
        content: str,
        *,
        type: ContentType = "memory",
        tier: Tier = "relationship",
        source: Source = "manual",
        origin: Origin = "agent",
    ) -> Added:
        """Add ``content`` as the memory that replaces memory ``seq`` (signed metadata
        ``supersedes``: WORKSPACE.md 11). Entry ``seq`` stays in the chain, verifiable;
        search and the session start show the new one instead.

        Refused (InputError, nothing written) when ``seq`` is not a memory.

        >>> memory.supersede(1, "We deploy on Wednesdays", type="decision")["seq"]
        2
        """
        self.index.require_memory(seq, "supersedes")
        return self.add(
            content, type=type, tier=tier, source=source, meta={"supersedes": seq}, origin=origin
        )

    def recent(self, *, limit: int = 10) -> list[Recent]:
        """The newest ``limit`` memories of the chain that are shown (not redacted,
        archived, expired or replaced), newest first: seq, ts, type, tier, source, text.

        >>> [(m["seq"], m["text"]) for m in memory.recent(limit=5)]
        [(2, 'We deploy on Wednesdays')]
        """
        from memory_chain.index.db import visible

        index = self.index
        rows = index.conn.execute(
            "SELECT m.seq, m.ts, m.type, m.tier, m.source, m.content FROM memories m "
            f"WHERE {visible('m')} ORDER BY m.seq DESC LIMIT :limit",
            {"cutoff": index.cutoff(index.now()), "limit": max(limit, 0)},
        ).fetchall()
        keys = ("seq", "ts", "type", "tier", "source", "text")
        return [cast("Recent", dict(zip(keys, row, strict=True))) for row in rows]

    def verify(self, *, full: bool = False) -> Verified:
        """Verify the chain (incrementally unless ``full``): what `verify --json` prints.

        >>> checked = memory.verify(full=True)
        >>> checked["ok"], checked["entries"], checked["failure"]
        (True, 5, None)
        """
        from memory_chain.chain.audit.verify_ledger import verify_ledger

        return cast("Verified", verify_ledger(self.ledger, incremental=not full).as_dict())

    def prove(self, seq: int, *, with_content: bool = False) -> Proof:
        """A proof bundle for entry ``seq`` (as `prove` writes it), parsed.

        >>> bundle = memory.prove(2)
        >>> bundle["format"], bundle["checkpoint"].splitlines()[1]
        ('memory-chain-proof/1', '5')
        """
        import orjson

        from memory_chain.chain.audit.proofs import prove_entry

        return cast("Proof", orjson.loads(prove_entry(self.ledger, seq, with_content=with_content)))

    def redact(self, seq: int, reason: str) -> Redacted:
        """Withdraw the content of memory ``seq``: a signed redaction entry (with
        ``reason``, in clear) is appended, then the content's record is erased from its
        pack unless another shown memory holds the same words; the index forgets the
        text at once. The chain still verifies.

        Refused (InputError, nothing written) for a committed memory, a system entry,
        a seq the chain does not have, or one already redacted.

        >>> slip = memory.add("Dana's phone number is 555 0199", type="fact")["seq"]
        >>> memory.redact(slip, "a person's number")["erased_in"]
        ['content/packs/00000000.pack']
        """
        from memory_chain.chain.lifecycle.redact import redact
        from memory_chain.index.db import purge_redacted

        r = redact(self.ledger, seq, reason)
        if self._index is None:
            purge_redacted(self.data_dir)
        else:
            _ = self.index  # its sync deletes the text, its terms and its vector now
        redacted: Redacted = {
            "target": r.target,
            "seq": r.entry.seq if r.entry else None,
            "content": r.content,
            "erased": r.blob_removed,
            "erased_in": [f"content/{where}" for where in r.erased_in],
            "shared": r.blob_shared,
        }
        return redacted

    # -- both halves -------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        max_tokens: int | None = None,
        type: ContentType | None = None,
        tier: Tier | None = None,
        source: Source | None = None,
        scope: Scope | None = None,
        since: str | None = None,
        until: str | None = None,
        offset: int = 0,
    ) -> list[Found]:
        """The best ``limit`` memories of the chain and the workspace for ``query``, after
        the first ``offset``. ``type``, ``tier`` and ``source`` filter chain memories (the
        workspace is then not searched), ``scope`` workspace entries (the chain is then
        not searched); ``since`` / ``until`` (``YYYY-MM-DD``, until included) both.

        >>> [(f["kind"], f.get("seq"), f["text"]) for f in memory.search("when do we deploy")]
        [('provable', 2, 'We deploy on Wednesdays')]
        """
        from memory_chain.workspace.recall import search

        found = search(
            self.index,
            self.workspace,
            query,
            limit=limit,
            max_tokens=max_tokens,
            type_=type,
            tier=tier,
            source=source,
            scope=scope,
            since=_day(since, "since"),
            until=_day(until, "until"),
            offset=offset,
        )
        return [cast("Found", f.as_dict()) for f in found]

    def context(
        self,
        *,
        query: str | None = None,
        max_tokens: int = 2000,
        char_cap: int | None = None,
        verify: bool = True,
    ) -> dict[str, Any]:
        """The session-start block: {"markdown": ..., "integrity": ..., "items": ...}.

        With ``verify`` the chain is verified (incrementally) first and the
        block says so; entries from a failing seq on are left out.

        >>> block = memory.context(query="deploy the web app")["markdown"]
        >>> "We deploy on Wednesdays" in block, "Tuesdays" in block
        (True, False)
        """
        from memory_chain.workspace.context import DEFAULT_CHAR_CAP, session_context

        index = self.index
        if index.chainless:
            from memory_chain.index.integrity import no_chain

            integrity = no_chain()
        elif verify:
            from memory_chain.index.integrity import check_chain, integrity_of

            integrity = integrity_of(check_chain(self.ledger))
        else:
            from memory_chain.index.integrity import unchecked

            s = index.state()
            integrity = unchecked(s.size, s.head, s.chain_id)
        ctx = session_context(
            index,
            integrity,
            self.workspace,
            query=query,
            max_tokens=max_tokens,
            char_cap=DEFAULT_CHAR_CAP if char_cap is None else char_cap,
        )
        return {"markdown": ctx.markdown(), **ctx.as_dict()}

    # -- the workspace -----------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        scope: Scope = "user",
        section: str = "Notes",
        source: Source = "manual",
        confidence: float | None = None,
        untrusted: bool = False,
        origin: Origin = "agent",
    ) -> Remembered:
        """Add an entry to a scope's MEMORY.md unless one already says the same.

        ``origin``: where the words came from (workspace.provenance.ORIGINS); a
        program writes as an ``agent`` unless it says a person typed them.

        >>> memory.remember("Prefers short answers", section="User Preferences")["action"]
        'added'
        """
        from memory_chain.workspace.ops import remember

        outcome = remember(
            self.workspace.scope(scope),
            text,
            section=section,
            source=source,
            confidence=confidence,
            untrusted=untrusted,
            origin="tool" if untrusted else origin,
        )
        return cast("Remembered", outcome.as_dict())

    def review_queue(self) -> list[Waiting]:
        """What an agent or capture remembered that waits for a person (capture.review).

        >>> [(w["text"], w["origin"]) for w in memory.review_queue()]
        [('Prefers short answers', 'agent')]
        """
        from memory_chain.capture.review import pending

        return [cast("Waiting", w.as_dict()) for w in pending(self.workspace)]

    def files(self, request: dict[str, Any] | str | bytes) -> dict[str, Any]:
        """One memory-file tool call ({"tool": "read", "path": ...}): never raises.

        The reply is {"ok": true, "result": ...} or {"ok": false, "error": ...}.
        """
        from memory_chain.workspace.tools import call

        return call(self.workspace, request)

    def memory_tool(self, command: dict[str, Any]) -> dict[str, Any]:
        """One command of Anthropic's memory tool (view, create, str_replace, insert,
        delete, rename on /memories paths), sandboxed to a workspace scope.

        The reply is {"content": <the result text Claude expects>, "is_error": bool};
        hand it back as the tool_result. Never raises for bad input.
        """
        from memory_chain.workspace.memorytool import run_command

        if not isinstance(command, dict):
            return {"content": "the memory tool input must be a JSON object", "is_error": True}
        return run_command(self.workspace, command)

    # -- capture and curation ----------------------------------------------

    def chain_door(self) -> Any:
        """The chain as capture sees it (look up, commit), or None without a chain."""
        from memory_chain.capture.chaindoor import ChainDoor

        return ChainDoor.open(self.data_dir, passphrase=self._passphrase)

    def capture(
        self,
        transcript: str | os.PathLike[str],
        *,
        fmt: str = "auto",
        flush: str | None = None,
        session: str | None = None,
        threshold: float = 0.6,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Capture a transcript's new turns into today's daily file (see `capture`)."""
        from memory_chain.capture.capture import capture
        from memory_chain.index.settings import semantic_setting

        report = capture(
            self.workspace,
            Path(os.path.expanduser(os.fspath(transcript))).absolute(),
            fmt=fmt,
            chain=self.chain_door(),
            threshold=threshold,
            flush=flush,
            session=session,
            dry_run=dry_run,
            embeddings=semantic_setting(self.data_dir) is not False,
        )
        result: dict[str, Any] = report.as_dict()
        return result

    def capture_excerpt(
        self, text: str, *, session: str | None = None, person: bool = True
    ) -> dict[str, Any]:
        """Capture the session excerpt OpenClaw hands its reset hooks (excerpt_turns)."""
        from memory_chain.capture.capture import capture_excerpt
        from memory_chain.capture.transcripts import excerpt_turns
        from memory_chain.index.settings import semantic_setting

        name = f"<openclaw session {session[:8]}>" if session else "<openclaw session>"
        report = capture_excerpt(
            self.workspace,
            excerpt_turns(text, session=session, person=person),
            name=name,
            chain=self.chain_door(),
            embeddings=semantic_setting(self.data_dir) is not False,
        )
        result: dict[str, Any] = report.as_dict()
        return result

    def curate(
        self,
        *,
        days: int | None = None,
        threshold: float = 0.6,
        dry_run: bool = False,
        review: str | None = None,
    ) -> dict[str, Any]:
        """Curate daily files into MEMORY.md and the chain (see `curate`): every daily
        file not yet archived, or those of the last ``days`` days.

        ``review``: auto, review or off (default: config.json's "review", else review).
        """
        from memory_chain.capture.curate import curate, review_mode

        report = curate(
            self.workspace,
            chain=self.chain_door(),
            days=days,
            threshold=threshold,
            dry_run=dry_run,
            review=review_mode(self.data_dir, review),
        )
        result: dict[str, Any] = report.as_dict()
        return result


def _day(value: str | None, name: str) -> Any:
    """``YYYY-MM-DD`` as a date (InputError otherwise), or None."""
    if value is None:
        return None
    from datetime import date

    from memory_chain.chain.format.errors import InputError

    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} is a date, YYYY-MM-DD, not {value!r}") from None

"""Issue 22: nothing a person wrote is ever lost, whatever the agent does around it.

A hypothesis state machine interleaves a person's edits of MEMORY.md (new
lines, changed lines, a code block, a table, sub-bullets, CRLF endings, no
final newline) with every automatic write: remember (by an agent and by a
person), curation's merge_in, update and remove of automatic entries,
decay, consolidation and trim. After every step, each line the person
wrote still stands, word for word, in MEMORY.md, a topic file or the
archive, and MEMORY.md is whole markdown that the parser reads back.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memory_chain.chain.format.errors import MemoryChainError
from memory_chain.workspace.housekeeping import consolidate, decay, trim
from memory_chain.workspace.markdown import Document
from memory_chain.workspace.ops import NewMemory, merge_in, remember, remove, update
from memory_chain.workspace.scopes import Scope

WORDS = ["deploy", "tabs", "port", "pnpm", "staging", "review", "tests", "docs", "lint", "cache"]
SECTIONS = ["Notes", "User Preferences", "Workflow", "Project Conventions"]
START = date(2026, 1, 1)


def _text(words: list[str], n: int) -> str:
    return " ".join(words) + f" item{n}"


class PersonAndAgent(RuleBasedStateMachine):
    """One user scope; the person's lines are tracked, the agent's are not."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.scope = Scope("user", Path(self.tmp.name) / "ws")
        self.person: set[str] = set()  # texts the person wrote and has not changed since
        self.n = itertools.count()
        self.day = START

    def teardown(self) -> None:
        self.tmp.cleanup()

    # -- the person, with an editor (no lock, no metadata) -----------------------------

    def _append_raw(self, text: str) -> None:
        """What an editor does at the end of the file: a new line starts on a line of its own."""
        path = self.scope.memory_md
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.read_bytes() if path.exists() else b""
        with open(path, "ab") as f:
            f.write(
                ("\n" if before and not before.endswith(b"\n") else "").encode() + text.encode()
            )

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=5), crlf=st.booleans())
    def person_writes_a_line(self, words: list[str], crlf: bool) -> None:
        text = _text(words, next(self.n))
        nl = "\r\n" if crlf else "\n"
        if not self.scope.memory_md.exists():
            self._append_raw(f"# Memory{nl}{nl}## Notes{nl}")
        self._append_raw(f"- {text}{nl}")
        self.person.add(text)

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=4))
    def person_writes_structure(self, words: list[str]) -> None:
        """A table, a numbered item and a fenced block, closed; the texts are tracked."""
        n = next(self.n)
        row = f"{words[0]} row{n}"
        item = _text(words, n) + " numbered"
        if not self.scope.memory_md.exists():
            self._append_raw("# Memory\n\n## Notes\n")
        self._append_raw(f"\n| what | note |\n|---|---|\n| {row} | x |\n\n1. {item}\n\n")
        self._append_raw("```sh\nmake deploy\n```\n")
        self.person.update({row, item})

    @rule(pick=st.integers(0, 1000), words=st.lists(st.sampled_from(WORDS), min_size=2))
    def person_changes_a_line(self, pick: int, words: list[str]) -> None:
        path = self.scope.memory_md
        if not path.exists() or not self.person:
            return
        data = path.read_bytes().decode()
        old = sorted(self.person)[pick % len(self.person)]
        if f"- {old}" not in data:
            return
        new = _text(words, next(self.n)) + " changed"
        path.write_bytes(data.replace(f"- {old}", f"- {new}", 1).encode())
        self.person.discard(old)
        self.person.add(new)

    @rule()
    def person_drops_the_final_newline(self) -> None:
        path = self.scope.memory_md
        if path.exists():
            path.write_bytes(path.read_bytes().rstrip(b"\r\n"))

    # -- the agent ----------------------------------------------------------------

    def _attempt(self, fn: Callable[[], object]) -> None:
        # A refusal (a duplicate, a fence, a missing entry) writes nothing.
        with contextlib.suppress(MemoryChainError):
            fn()

    @rule(
        words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=5),
        section=st.sampled_from(SECTIONS),
        source=st.sampled_from(["auto", "manual", "curation"]),
    )
    def agent_remembers(self, words: list[str], section: str, source: str) -> None:
        text = _text(words, next(self.n))
        try:
            out = remember(self.scope, text, section=section, source=source, today=self.day)
        except MemoryChainError:
            return  # refused (an unclosed fence): nothing was written
        if source == "manual" and out.action in ("added", "superseded"):
            self.person.add(text)  # a person's remember is the person's word too

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=5), k=st.integers(1, 4))
    def curation_merges(self, words: list[str], k: int) -> None:
        new = [
            NewMemory(_text(words[::-1] if i % 2 else words, next(self.n)), source="curation")
            for i in range(k)
        ]
        self._attempt(lambda: merge_in(self.scope, new, today=self.day))

    @rule(pick=st.integers(0, 1000))
    def agent_updates_or_removes_its_own(self, pick: int) -> None:
        if not self.scope.memory_md.exists():
            return
        doc = Document.parse(self.scope.memory_md.read_bytes())
        auto = [e for e in doc.entries() if e.meta.get("src") in ("auto", "curation")]
        if not auto:
            return
        e = auto[pick % len(auto)]
        if pick % 2:
            self._attempt(lambda: update(self.scope, e.text, e.text + " v2", today=self.day))
        else:
            self._attempt(lambda: remove(self.scope, e.text, reason="stale", today=self.day))

    @rule(days=st.integers(1, 200))
    def time_passes_and_decay_runs(self, days: int) -> None:
        self.day += timedelta(days=days)
        self._attempt(lambda: decay(self.scope, today=self.day))

    @rule(cap=st.integers(10, 40))
    def consolidation_runs(self, cap: int) -> None:
        self._attempt(lambda: consolidate(self.scope, cap=cap, today=self.day))

    @rule(keep=st.integers(1, 10))
    def trim_runs(self, keep: int) -> None:
        self._attempt(lambda: trim(self.scope, max_entries=keep, today=self.day))

    # -- what must hold -------------------------------------------------------------

    @invariant()
    def nothing_the_person_wrote_is_lost(self) -> None:
        root = self.scope.root
        if not root.exists():
            return
        everything = "\n".join(
            p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*.md"))
        )
        lost = [t for t in self.person if t not in everything]
        assert not lost, lost

    @invariant()
    def memory_md_reads_back(self) -> None:
        path = self.scope.memory_md
        if path.exists():
            data = path.read_bytes()
            assert Document.parse(data).render() == data  # parses and renders byte-exact
            data.decode("utf-8")


#: More examples for a campaign (benchmarks/README.md): MEMORY_CHAIN_STATEFUL_EXAMPLES=2000.
EXAMPLES = int(os.environ.get("MEMORY_CHAIN_STATEFUL_EXAMPLES", "60"))

PersonAndAgent.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_nothing_a_person_wrote_is_lost = PersonAndAgent.TestCase

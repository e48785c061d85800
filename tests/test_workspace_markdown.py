"""MEMORY.md as data: byte-exact round trips for any input; edits touch only their lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.workspace.markdown import Document, Meta, entry_lines, format_meta

SAMPLE = (
    b"# Auto-Memories\n"
    b"\n"
    b"Intro text a human wrote.\n"
    b"\n"
    b"## User Preferences\n"
    b"- Prefers concise responses <!-- mc: added=2026-01-02 confirmed=2026-01-03 src=auto -->\n"
    b"- [?] Uses dark mode in all editors\n"
    b"  - Supporting detail\n"
    b"  - When this was learned\n"
    b"\n"
    b"## Corrections\n"
    b"* Do NOT suggest `npm install` -- this project uses pnpm\n"
    b"```\n"
    b"## not a heading (in a fence)\n"
    b"- not an entry\n"
    b"```\n"
    b"## Links ##\n"
    b"- [TypeScript patterns](memory/typescript.md)"
)

# Lines that look like our format, to make the generated files interesting.
_LINE = st.one_of(
    st.sampled_from(
        [
            "## User Preferences",
            "## Corrections",
            "##",
            "### deeper",
            "# Title",
            "- entry",
            "* star entry",
            "+ plus entry",
            "- [?] stale entry",
            "- with meta <!-- mc: added=2026-01-01 src=manual seq=4 -->",
            "  - child",
            "\tchild with tab",
            "```",
            "~~~",
            "",
            "   ## indented heading",
            "-not a bullet",
            "<!-- mc: stray -->",
        ]
    ),
    st.text(max_size=40),
)
_ENDING = st.sampled_from(["\n", "\r\n", "\r", ""])


@st.composite
def memory_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_LINE, _ENDING), max_size=30))
    text = "".join(a + b for a, b in lines)
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=400)
@given(st.binary(max_size=2000))
def test_any_bytes_round_trip(data: bytes) -> None:
    """Parsing then rendering any bytes at all (not UTF-8, not markdown) gives them back."""
    assert data == Document.parse(data).render()


@settings(max_examples=400)
@given(memory_files())
def test_memory_like_files_round_trip(data: bytes) -> None:
    """Files made of our format's lines, mixed with anything, render back byte-identical."""
    doc = Document.parse(data)
    assert data == doc.render()
    for s in doc.sections:
        for e in s.entries:
            assert s.start < e.start < e.end <= s.end


def test_sample_structure() -> None:
    """Sections, entries, sub-lines, stale marks, metadata and fences are read as specified."""
    doc = Document.parse(SAMPLE)
    assert ["User Preferences", "Corrections", "Links"] == [s.title for s in doc.sections]
    prefs = doc.sections[0].entries
    assert ["Prefers concise responses", "Uses dark mode in all editors"] == [e.text for e in prefs]
    assert "2026-01-03" == prefs[0].meta.get("confirmed")
    assert prefs[1].stale
    assert ("  - Supporting detail", "  - When this was learned") == prefs[1].children
    corrections = doc.sections[1].entries
    assert 1 == len(corrections)  # the fenced "- not an entry" is not one
    assert 6 == prefs[0].line


@settings(max_examples=200)
@given(memory_files(), st.text(min_size=1, max_size=30).filter(lambda t: "\n" not in t))
def test_append_changes_only_inserted_lines(data: bytes, text: str) -> None:
    """Appending an entry keeps every old line (at most the old last line gains a line ending)."""
    doc = Document.parse(data)
    new = doc.append_to_section("Corrections", entry_lines(text, Meta()))
    old = doc.lines
    added = len(new.lines) - len(old)
    assert added >= 1
    # Remove the inserted block: what is left is the old file, line for line.
    for i in range(len(new.lines) - added + 1):
        rest = new.lines[:i] + new.lines[i + added :]
        if rest == old:
            break
        # Or the old last line, which had no line ending, got one.
        if rest[:-1] == old[:-1] and rest[-1] in (old[-1] + "\n", old[-1] + "\r\n"):
            break
    else:
        raise AssertionError("the old lines are not all kept in order")


def test_rewrite_entry_touches_one_line() -> None:
    """Rewriting an entry changes its first line only, keeping the bullet char and sub-lines."""
    doc = Document.parse(SAMPLE)
    e = doc.sections[1].entries[0]
    new = doc.rewrite_entry(e, text="Use pnpm", meta=Meta().with_(src="manual"))
    diff = [i for i, (a, b) in enumerate(zip(doc.lines, new.lines, strict=True)) if a != b]
    assert [e.start] == diff
    assert "* Use pnpm <!-- mc: src=manual -->\n" == new.lines[e.start]


def test_crlf_file_keeps_crlf() -> None:
    """An entry added to a CRLF file uses CRLF; the old bytes are kept."""
    data = b"# M\r\n\r\n## Notes\r\n- one\r\n"
    doc = Document.parse(data)
    new = doc.append_to_section("Notes", entry_lines("two", Meta(), nl=doc.newline))
    assert b"# M\r\n\r\n## Notes\r\n- one\r\n- two\r\n" == new.render()


def test_new_section_goes_before_links() -> None:
    """A new section is added before ## Links, so links stay last."""
    doc = Document.parse(SAMPLE)
    new = doc.append_to_section("Workflow", entry_lines("Run pnpm lint first", Meta()))
    assert ["User Preferences", "Corrections", "Workflow", "Links"] == [
        s.title for s in new.sections
    ]


def test_missing_final_newline() -> None:
    """Appending after a last line without a newline gives it one; nothing else changes."""
    doc = Document.parse(b"## Notes\n- one")
    new = doc.append_to_section("Notes", entry_lines("two", Meta()))
    assert b"## Notes\n- one\n- two\n" == new.render()


@given(
    st.dictionaries(
        st.sampled_from(["added", "confirmed", "conf", "src", "seq", "trust", "zzz"]),
        st.from_regex(r"[A-Za-z0-9.:-]{1,12}", fullmatch=True),
    )
)
def test_meta_round_trip(values: dict[str, str]) -> None:
    """Metadata written by format_meta is read back the same."""
    meta = Meta().with_(**values)
    line = entry_lines("text", meta)[0]
    doc = Document.parse(b"## S\n" + line.encode())
    (e,) = doc.entries()
    assert meta == e.meta
    assert "text" == e.text
    assert (format_meta(meta) == "") == (not values)

"""Duplicates and contradictions (seed 000 section 4.3), and the merger's prefix filter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_chain.workspace.dedup import Merger, contradicts, same


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pnpm, not npm", "use PNPM, not npm."),
        ("Always run pnpm lint before committing", "Run pnpm lint before committing, always"),
        ("**Prefers** tabs", "prefers tabs"),
    ],
)
def test_same(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pnpm, not npm", "Use npm, not pnpm"),
        ("Timezone: UTC", "Timezone: Europe/Paris"),
        ("Use tabs for indentation", "Do not use tabs for indentation"),
        # Issue 22: a changed number is a changed fact, never a duplicate.
        (
            "The staging API token rotates every 30 days",
            "The staging API token rotates every 90 days",
        ),
        ("Postgres runs on port 5432 on this laptop", "Postgres runs on port 5433 on this laptop"),
    ],
)
def test_contradicts(a: str, b: str) -> None:
    assert contradicts(a, b)
    assert not same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pnpm, not npm", "Deploys go out on Tuesdays"),
        ("Timezone: UTC", "Editor: vim"),
        # Issue 22: one-letter names tell entries apart (both were "duplicate").
        ("Team A uses pnpm", "Team B uses pnpm"),
    ],
)
def test_unrelated(a: str, b: str) -> None:
    assert not same(a, b)
    assert not contradicts(a, b)


_WORDS = [
    "use",
    "pnpm",
    "npm",
    "tabs",
    "spaces",
    "deploy",
    "tuesday",
    "tests",
    "main",
    "port",
    "30",
    "90",
    "5433",
    "A",
    "B",
]
_TEXT = st.one_of(
    st.lists(st.sampled_from([*_WORDS, "not", "never", ",", "."]), min_size=1, max_size=7).map(
        lambda ws: " ".join(ws)
    ),
    st.tuples(st.sampled_from(["Timezone", "Editor", "Port"]), st.sampled_from(_WORDS)).map(
        lambda kv: f"{kv[0]}: {kv[1]}"
    ),
)


@settings(max_examples=300)
@given(st.lists(st.tuples(_TEXT, st.sampled_from(["user", "project", "local"])), max_size=25))
def test_merger_agrees_with_all_pairs(items: list[tuple[str, str]]) -> None:
    """The prefix-filtered merger keeps exactly what comparing every pair keeps."""
    merger = Merger(t for t, _ in items)
    brute: list[tuple[str, str]] = []
    for text, group in items:
        expect = any(g != group and (same(t, text) or contradicts(t, text)) for t, g in brute)
        got = merger.clash(text, other_than=group) is not None
        assert expect == got, (text, group, brute)
        if not got:
            merger.add(text, group)
            brute.append((text, group))

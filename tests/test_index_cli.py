"""The index commands as a user drives them: output, refusals, and the chain left alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.cli import Cli, assert_rejected, listing
from helpers.index import snapshot

INDEX_COMMANDS = ("search", "context", "reindex", "gc", "restore")


def test_commands_are_registered_with_examples(raw: Cli) -> None:
    """Each index command is in the tree and its --help carries an Example."""
    for name in INDEX_COMMANDS:
        out = raw.run(name, "--help")
        assert 0 == out.code and "Example:" in out.out, name


def test_search_command(populated: Cli) -> None:
    """search prints seq, score, kind and a preview; --json gives the scored hits."""
    out = populated.run("search", "port staging")
    assert (0, "") == (out.code, out.err)
    lines = out.out.splitlines()
    assert ["3", "4"] == sorted(line.split()[0] for line in lines)
    assert "fact/relationship  Staging is on 5433" in out.out
    hits = populated.run("search", "port staging", "--json", "--max-tokens", "5").json()
    assert 1 == len(hits) and 5 == hits[0]["tokens"]  # the second one no longer fits
    assert {"score", "parts", "tokens", "text", "access_count"} <= set(hits[0])
    assert "" == populated.run("search", "nothing-like-this").out


def test_search_filters_and_pages(populated: Cli) -> None:
    """Issue 25: --source, --since / --until and --offset; a bad date is one clear line."""
    every = populated.run("search", "port staging", "--json").json()
    second = populated.run("search", "port staging", "--json", "--offset", "1").json()
    assert [h["seq"] for h in every[1:]] == [h["seq"] for h in second]
    by_source = {
        src: populated.run("search", "port staging", "--json", "--source", src).json()
        for src in ("manual", "auto", "curation")
    }
    assert all(h["source"] == src for src, hits in by_source.items() for h in hits)
    assert sorted(h["seq"] for hits in by_source.values() for h in hits) == sorted(
        h["seq"] for h in every if h["kind"] == "provable"
    )
    assert [] == populated.run("search", "port staging", "--json", "--until", "2000-01-01").json()
    assert len(every) == len(
        populated.run("search", "port staging", "--json", "--since", "2000-01-01").json()
    )
    bad = populated.run("search", "port", "--since", "yesterday")
    assert 2 == bad.code and "--since" in bad.err and len(bad.err.strip().splitlines()) <= 2


def test_every_index_command_leaves_chain_and_content_identical(populated: Cli) -> None:
    """search, context, reindex, gc, restore and stats write only memory.db."""
    before = snapshot(populated.root)
    for args in (
        ("search", "pnpm"),
        ("context",),
        ("context", "--no-verify", "--query", "port"),
        ("reindex",),
        ("gc",),
        ("gc", "--dry-run", "--json"),
        ("restore", "--all"),
        ("stats",),
    ):
        out = populated.run(*args)
        assert 0 == out.code, (args, out.err)
    assert before == snapshot(populated.root)


def test_stats_shows_index_counts(populated: Cli) -> None:
    """stats keeps its output and adds the index's active/archived/expired/redacted counts."""
    populated.ok("redact", "3", "--reason", "wrong")
    info = populated.run("stats", "--json").json()
    assert 6 == info["entries"]
    assert {"active": 3, "archived": 0, "expired": 0, "redacted": 1, "indexed_entries": 6} == info[
        "index"
    ]
    text = populated.run("stats").out
    assert "entries  6" in text
    assert "index  active 3, archived 0, expired 0, redacted 1" in text


def test_gc_and_restore_commands(populated: Cli) -> None:
    """gc --ttl-hours expires the ephemeral memory; restore brings it back."""
    out = populated.run("gc", "--ttl-hours", "0.000001", "--json").json()
    assert (1, 0) == (out["expired"], out["archived"])
    assert [2] == [d["seq"] for d in out["decisions"]]
    assert "restored 1: seq 2" == populated.run("restore", "2").out.strip()
    assert "nothing to restore" == populated.run("restore", "--all").out.strip()


def test_reindex_command(populated: Cli) -> None:
    """reindex rebuilds and reports counts."""
    out = populated.run("reindex", "--json").json()
    assert (5, 4) == (out["entries"], out["active"])


def test_redact_command_purges_the_index(populated: Cli) -> None:
    """After `redact`, memory.db holds no copy of the redacted text."""
    populated.ok("add", "the door code is 8841-zulu")
    populated.run("search", "door")
    populated.run("redact", "5", "--reason", "secret")
    for path in populated.root.glob("memory.db*"):
        assert b"zulu" not in path.read_bytes(), path
    assert "" == populated.run("search", "door code").out


def test_replaced_chain_is_announced(
    populated: Cli, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A replaced chain: one warning line on stderr, the index rebuilt, exit 0."""
    populated.run("search", "pnpm")
    other = Cli(tmp_path_factory.mktemp("o") / "data", populated.root.parent / "home")
    other.ok("init", "--name", "other")
    other.ok("add", "a completely different memory")
    for name in ("chain.jsonl", "head.json", "config.json"):
        (populated.root / name).write_bytes((other.root / name).read_bytes())
    import shutil

    shutil.rmtree(populated.root / "content")
    shutil.copytree(other.root / "content", populated.root / "content")
    out = populated.run("search", "different")
    assert 0 == out.code
    assert 1 == len(out.err.splitlines()) and out.err.startswith("warning: the index no longer")
    assert "a completely different memory" in out.out


REJECTED = {
    "search-limit-0": ("search", "x", "--limit", "0"),
    "search-bad-type": ("search", "x", "--type", "bogus"),
    "search-max-tokens-0": ("search", "x", "--max-tokens", "0"),
    "search-weights-short": ("search", "x", "--weights", "1,2"),
    "search-weights-text": ("search", "x", "--weights", "a,b,c,d"),
    "search-weights-negative": ("search", "x", "--weights", "1,-1,0,0"),
    "search-weights-zero": ("search", "x", "--weights", "0,0,0,0"),
    "search-no-query": ("search",),
    "context-max-tokens-0": ("context", "--max-tokens", "0"),
    "restore-nothing": ("restore",),
    "restore-both": ("restore", "1", "--all"),
    "restore-system-entry": ("restore", "0"),
    "restore-unknown": ("restore", "99"),
    "restore-not-a-number": ("restore", "one"),
    "gc-ttl-0": ("gc", "--ttl-hours", "0"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_bad_input_is_rejected(populated: Cli, case: str) -> None:
    """Bad input: exit 2, one `error:` line (and a hint), chain.jsonl byte-identical."""
    populated.run("search", "warm")  # memory.db exists before, so the listing is comparable
    before = listing(populated.root)
    assert_rejected(populated, *REJECTED[case])
    assert before == listing(populated.root)


def test_no_chain_is_an_error(cli: Cli) -> None:
    """gc and reindex on a directory without a chain: exit 2 with a hint to init. search and
    context read the workspace before `init` (issue 22) and say that there is no chain."""
    for name in ("gc", "reindex"):
        out = cli.run(name)
        assert 2 == out.code
        assert out.err.startswith("error: no data directory") or out.err.startswith(
            "error: no chain"
        )
    assert (0, "") == (cli.run("search", "x").code, cli.run("search", "x").out)
    context = cli.run("context")
    assert 0 == context.code and "> Integrity: no chain yet" in context.out
    assert not cli.root.exists()  # nothing was created


def test_redacted_seq_cannot_be_restored(populated: Cli) -> None:
    """restore of a redacted memory is refused."""
    populated.ok("redact", "3", "--reason", "x")
    assert_rejected(populated, "restore", "3")


def _imports(cli: Cli, *argv: str) -> str:
    probe = (
        "import sys\n"
        "from memory_chain.cli.main import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout = sys.__stdout__\n"
        "print('\\nIMPORTED', 'sqlite_utils' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=cli.env, capture_output=True, text=True, timeout=60
    )
    return out.stdout.rsplit("IMPORTED", 1)[1].strip()


def test_add_and_context_do_not_import_sqlite_utils(populated: Cli) -> None:
    """sqlite_utils is imported only to create or migrate memory.db: never by add, and not by
    context or search on an existing index."""
    assert "False" == _imports(populated, "add", "lazy imports")
    assert "True" == _imports(populated, "search", "lazy")  # creates memory.db
    assert "False" == _imports(populated, "context")
    assert "False" == _imports(populated, "search", "lazy")


def test_a_conversation_added_as_the_readme_says_is_searched_as_one(raw: Cli) -> None:
    """README's conversation example: turns added with --batch, a session and a day; the
    reply to the question a search matches comes with it (lexically: the reply holds no
    word of the search)."""
    raw.env["MEMORY_CHAIN_SEMANTIC"] = "0"
    turns = [
        {"content": "Maya: I adopted a kitten from the shelter.", "meta": {"session": "6"}},
        {"content": "Ben: What did you name the kitten?", "meta": {"session": "6"}},
        {"content": "Maya: Pixel, after the video game.", "meta": {"session": "6"}},
        {"content": "Ben: The weather turned cold again.", "meta": {"session": "7"}},
    ]
    for turn in turns:
        turn["meta"]["date"] = "2023-05-08"
    path = raw.root.parent / "turns.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    raw.ok("add", "--batch", str(path))
    hits = raw.run("search", "what is the kitten's name", "--json").json()
    texts = [h["text"] for h in hits]
    assert "Maya: Pixel, after the video game." in texts
    assert "Ben: The weather turned cold again." not in texts

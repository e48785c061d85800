"""The `memory-chain` commands doing their jobs, driven as a user drives them.

init, add, add --batch, show, log, stats, redact, keys and verify, plus every
command's `--help` Example. Refusals and bad input are in test_cli_errors.py;
the ``Cli`` runner (which fails a test if a secret seed is ever printed) is
in tests/helpers/cli.py and the ``cli``/``raw``/``populated`` fixtures in
tests/conftest.py.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers.cli import BATCH, MAX_CONTENT, PASSPHRASE, Cli, jsonl, stored_blob
from nacl.signing import SigningKey

from memory_chain.cli.main import cli as root_command


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _walk(sub, (*path, name))


COMMAND_PATHS = list(_walk(root_command))


# -- help -------------------------------------------------------------------


def test_command_tree_has_the_documented_commands() -> None:
    """The walked command tree holds at least every command the README documents."""
    expected = {
        ("init",),
        ("add",),
        ("show",),
        ("log",),
        ("verify",),
        ("stats",),
        ("redact",),
        ("keys",),
        ("keys", "show"),
        ("keys", "rotate"),
        ("keys", "export-public"),
    }
    assert expected == expected & set(COMMAND_PATHS)


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p) or "memory-chain")
def test_every_command_help_has_an_example(path: tuple[str, ...]) -> None:
    """`--help` of every command and subcommand exits 0 and shows an Example: block."""
    result = CliRunner().invoke(root_command, [*path, "--help"], prog_name="memory-chain")
    assert 0 == result.exit_code, result.output
    assert "Example:" in result.output


# -- init -------------------------------------------------------------------


def test_init_raw(cli: Cli) -> None:
    """init creates a 0600 raw key, agent.pub and a one-entry chain, and reports them as JSON."""
    result = cli.run("init", "--name", "raw-agent", "--json")
    assert (0, "") == (result.code, result.err)
    info = result.json()
    assert "raw" == info["key_mode"]
    assert str(cli.root) == info["dir"]
    assert 0o600 == stat.S_IMODE((cli.root / "agent.key").stat().st_mode)
    assert info["key"] == (cli.root / "agent.pub").read_text().strip()
    assert 1 == len(cli.chain.read_bytes().splitlines())
    shown = cli.ok("show", "0", "--json").json()
    assert ("genesis", {"name": "raw-agent"}) == (shown["type"], shown["meta"])


def test_init_encrypted(cli: Cli) -> None:
    """An encrypted chain is created and written to with $MEMORY_CHAIN_PASSPHRASE."""
    env = {"MEMORY_CHAIN_PASSPHRASE": PASSPHRASE}
    info = cli.ok("init", "--key-mode", "encrypted", "--json", env=env).json()
    assert "encrypted" == info["key_mode"]
    assert [False, True] == [
        (cli.root / "agent.key").exists(),
        (cli.root / "agent.key.enc").exists(),
    ]
    assert 1 == cli.ok("add", "sealed memory", "--json", env=env).json()["seq"]
    assert info["key"] == cli.ok("keys", "show", "--json").json()["key"]
    assert 0 == cli.run("verify").code
    assert 1 == len(cli.secrets)  # the sealed seed was recovered and checked against output


def test_init_env(cli: Cli) -> None:
    """An env-mode chain takes its key from $MEMORY_CHAIN_SIGNING_KEY and stores no key file."""
    seed = bytes(range(32))
    env = {"MEMORY_CHAIN_SIGNING_KEY": seed.hex()}
    expected_key = "ed25519:" + bytes(SigningKey(seed).verify_key).hex()
    info = cli.ok("init", "--key-mode", "env", "--json", env=env).json()
    assert (expected_key, "env") == (info["key"], info["key_mode"])
    assert [] == sorted(p.name for p in cli.root.glob("agent.key*"))
    assert 1 == cli.ok("add", "from env", "--json", env=env).json()["seq"]
    assert None is cli.ok("keys", "show", "--json").json()["key_file"]
    assert 0 == cli.run("verify").code


# -- add --------------------------------------------------------------------


def test_add_text(raw: Cli) -> None:
    """add TEXT stores the exact text, non-ASCII included; --json reports seq, hash, ts, content."""
    added = raw.ok("add", "café ☕ notes", "--json").json()
    assert ["content", "hash", "seq", "ts"] == sorted(added)
    assert 1 == added["seq"]
    shown = raw.ok("show", "1", "--content", "--json").json()
    assert ("café ☕ notes", added["content"]) == (shown["text"], shown["content"])
    assert "added seq 2 b3:" in raw.ok("add", "plain output").out


def test_the_seed_command(raw: Cli) -> None:
    """The exact command `memory-chain add "<content>" --type decision --tier committed` works."""
    result = raw.run("add", "<content>", "--type", "decision", "--tier", "committed")
    assert (0, "") == (result.code, result.err)
    assert result.out.startswith("added seq 1 b3:")
    shown = raw.ok("show", "1", "--content", "--json").json()
    assert ("decision", "committed", "<content>") == (shown["type"], shown["tier"], shown["text"])


def test_add_stdin(raw: Cli) -> None:
    """add - reads the content from stdin, byte for byte."""
    result = raw.run("add", "-", "--type", "fact", stdin=b"line one\nline two")
    assert 0 == result.code
    assert "line one\nline two" == raw.ok("show", "1", "--content", "--json").json()["text"]


def test_add_meta_parsing(raw: Cli) -> None:
    """--meta values are JSON when they parse (ints, strings, objects, lists), else text."""
    raw.ok(
        "add", "with meta",
        "--meta", "n=2",
        "--meta", "env=staging",
        "--meta", 'q="7"',
        "--meta", 'o={"k":[1,"a"],"b":true}',
        "--meta", "neg=-3",
    )  # fmt: skip
    expected = {
        "n": 2,
        "env": "staging",
        "q": "7",
        "o": {"k": [1, "a"], "b": True},
        "neg": -3,
        "origin": "person",  # a person at a terminal (issue 23)
    }
    assert expected == raw.ok("show", "1", "--json").json()["meta"]


def test_add_importance(raw: Cli) -> None:
    """--importance sets the entry's importance; 0 and 100 are the bounds."""
    raw.ok("add", "low", "--importance", "0")
    raw.ok("add", "high", "--importance", "100")
    raw.ok("add", "mid", "--importance", "37")
    got = [raw.ok("show", str(seq), "--json").json()["importance"] for seq in (1, 2, 3)]
    assert [0, 100, 37] == got


def test_add_content_at_the_limit(raw: Cli) -> None:
    """Content of exactly max_content_bytes is accepted."""
    raw.ok("add", "-", stdin=b"x" * MAX_CONTENT)
    assert MAX_CONTENT == raw.ok("show", "1", "--json").json()["size"]


# -- add --batch --------------------------------------------------------------


def test_batch_from_file(raw: Cli, tmp_path: Path) -> None:
    """add --batch FILE adds every line in order with its fields."""
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(jsonl(BATCH))
    added = raw.ok("add", "--batch", str(batch), "--json").json()
    assert [1, 2, 3] == [a["seq"] for a in added]
    entries = raw.ok("log", "--json").json()[::-1][1:]
    assert [
        ("preference", "relationship", "manual", {"origin": "person"}),
        ("memory", "ephemeral", "auto", {"origin": "person"}),
        ("fact", "relationship", "manual", {"team": "infra", "k": 1, "origin": "person"}),
    ] == [(e["type"], e["tier"], e["source"], e["meta"]) for e in entries]
    assert [i["content"] for i in BATCH] == [e["text"] for e in entries]
    assert 40 == entries[1]["importance"]
    assert 0 == raw.run("verify").code


def test_batch_from_stdin(raw: Cli) -> None:
    """add --batch - reads JSON lines from stdin (blank lines ignored)."""
    result = raw.ok("add", "--batch", "-", stdin=b"\n" + jsonl(BATCH) + b"\n\n")
    assert "added 3 entries: seq 1..3" == result.out.strip()
    assert 4 == raw.ok("stats", "--json").json()["entries"]


# -- reading ------------------------------------------------------------------


def test_show(populated: Cli) -> None:
    """show SEQ prints the entry's fields; --content adds the text; --json has it as "text"."""
    plain = populated.ok("show", "3").out
    assert re.search(r"^\s*type  fact$", plain, re.M)
    assert "Staging is on 5433" not in plain
    with_content = populated.ok("show", "3", "--content").out
    assert "Staging is on 5433" == with_content.rstrip().splitlines()[-1]
    bare = populated.ok("show", "3", "--json").json()
    full = populated.ok("show", "3", "--content", "--json").json()
    assert (False, "Staging is on 5433") == ("text" in bare, full["text"])
    meta = {"env": "staging", "origin": "person"}
    assert (3, None, meta) == (full["seq"], full["redacted_by"], full["meta"])


def test_log_filters(populated: Cli) -> None:
    """log lists newest first; --limit, --type and --tier filter; --json parses."""

    def seqs(*args: str) -> list[int]:
        return [e["seq"] for e in populated.ok("log", *args, "--json").json()]

    assert [4, 3, 2, 1, 0] == seqs()
    assert [4, 3] == seqs("--limit", "2")
    assert [3, 2] == seqs("--type", "fact")
    assert [2] == seqs("--tier", "ephemeral")
    assert [1, 0] == seqs("--tier", "committed")
    assert [3] == seqs("--type", "fact", "--tier", "relationship")
    assert [] == seqs("--type", "episode")
    text = populated.ok("log", "--limit", "2").out.splitlines()
    assert 2 == len(text)
    assert "lesson/relationship  Check the port first" in text[0]


def test_stats_counts(populated: Cli) -> None:
    """stats --json counts entries by type, tier and source, and blobs."""
    info = populated.ok("stats", "--json").json()
    assert 5 == info["entries"]
    assert {"decision": 1, "fact": 2, "genesis": 1, "lesson": 1} == info["by_type"]
    assert {"committed": 2, "ephemeral": 1, "relationship": 2} == info["by_tier"]
    assert {"auto": 1, "curation": 1, "manual": 3} == info["by_source"]
    assert (4, 0, "raw") == (info["blobs"], info["redacted"], info["key_mode"])
    assert info["head"] == populated.ok("verify", "--json").json()["head"]


# -- redact -------------------------------------------------------------------


def test_redact_non_committed(populated: Cli) -> None:
    """Redacting a non-committed entry deletes its blob; the chain still verifies."""
    target = populated.ok("show", "2", "--json").json()
    info = populated.ok("redact", "2", "--reason", "held a token", "--json").json()
    assert (2, 5, True, False) == (
        info["target"],
        info["seq"],
        info["blob_removed"],
        info["blob_shared"],
    )
    assert info["erased_in"] == ["content/packs/00000000.pack"]
    assert stored_blob(populated.root, target["content"]) is None
    shown = populated.ok("show", "2", "--content", "--json").json()
    assert (5, False) == (shown["redacted_by"], "text" in shown)
    meta = populated.ok("show", "5", "--json").json()["meta"]
    assert {"target": 2, "content": target["content"], "reason": "held a token"} == meta
    assert 0 == populated.run("verify").code


def test_redact_keeps_a_shared_blob(raw: Cli) -> None:
    """A blob that another live entry shares survives the redaction of one holder."""
    raw.ok("add", "same words")
    raw.ok("add", "same words", "--type", "fact")
    info = raw.ok("redact", "1", "--reason", "duplicate", "--json").json()
    assert (False, True, []) == (info["blob_removed"], info["blob_shared"], info["erased_in"])
    assert "same words" == raw.ok("show", "2", "--content", "--json").json()["text"]
    assert 0 == raw.run("verify").code


def test_a_redaction_reason_holding_a_secret_is_refused(populated: Cli) -> None:
    """The reason is signed into the chain in clear: the secret gate holds for it (an agent
    redacting a leaked key over MCP wrote the key again as the reason)."""
    before = populated.chain.read_bytes()
    out = populated.run("redact", "2", "--reason", "it held AKIAQ7W2E4R6T8Y1U3I5")
    assert out.code != 0 and "the reason looks like it holds a secret" in out.err
    assert "AWS access key id" in out.err
    assert populated.chain.read_bytes() == before


def test_redact_says_what_happened_to_the_content(raw: Cli) -> None:
    """Issue 26: it said "blob deleted" though content lives in packs."""
    raw.ok("add", "a line to withdraw")
    out = raw.ok("redact", "1", "--reason", "wrong").out
    said = "redacted seq 1; its record erased (zeroed) in content/packs/00000000.pack"
    assert out.strip() == said


# -- keys ---------------------------------------------------------------------


def test_keys_show_and_export(raw: Cli, tmp_path: Path) -> None:
    """keys show and export-public print the public key (file and stdout), never the seed."""
    info = raw.ok("keys", "show", "--json").json()
    pub = (raw.root / "agent.pub").read_text().strip()
    assert (pub, "raw", str(raw.root / "agent.key")) == (
        info["key"],
        info["key_mode"],
        info["key_file"],
    )
    assert pub in raw.ok("keys", "show").out
    assert pub == raw.ok("keys", "export-public").out.strip()
    out = tmp_path / "agent.pub"
    written = raw.ok("keys", "export-public", "-o", str(out))
    assert pub + "\n" == out.read_text()
    # as prove -o does (issue 26): the note on stderr, stdout empty for what reads it
    assert ("", f"wrote {out}") == (written.out, written.err.strip())
    exported = raw.ok("keys", "export-public", "--json").json()
    assert {"key": pub, "chain_id": info["chain_id"]} == exported
    assert 1 == len(raw.secrets)


def test_keys_rotate(raw: Cli, tmp_path: Path) -> None:
    """rotate hands over to a new key; new adds use it; the genesis key still pins the chain."""
    genesis_pub = tmp_path / "genesis.pub"
    raw.ok("keys", "export-public", "-o", str(genesis_pub))
    old = genesis_pub.read_text().strip()
    rotated = raw.ok("keys", "rotate", "--json").json()
    assert (1, old) == (rotated["seq"], rotated["old_key"])
    assert old != rotated["new_key"]
    assert rotated["new_key"] == raw.ok("keys", "show", "--json").json()["key"]
    raw.ok("add", "signed by the new key")
    assert rotated["new_key"] == raw.ok("show", "2", "--json").json()["key"]
    assert "rotated at seq 3" in raw.ok("keys", "rotate").out
    assert 0 == raw.run("verify", "--trusted-key", str(genesis_pub)).code
    assert 3 == len(raw.secrets)  # genesis seed and two rotated-in seeds, all checked


def test_keys_rotate_encrypted(cli: Cli) -> None:
    """An encrypted key rotates to a new encrypted key; old and new seeds never print."""
    env = {"MEMORY_CHAIN_PASSPHRASE": PASSPHRASE}
    cli.ok("init", "--key-mode", "encrypted", env=env)
    cli.ok("keys", "rotate", env=env)
    cli.ok("add", "after rotation", env=env)
    assert 0 == cli.run("verify").code
    assert 2 == len(cli.secrets)


def test_keys_rotate_env(cli: Cli) -> None:
    """An env-mode key rotates to $MEMORY_CHAIN_NEW_SIGNING_KEY."""
    old, new = bytes(range(32)), bytes(range(1, 33))
    cli.ok("init", "--key-mode", "env", env={"MEMORY_CHAIN_SIGNING_KEY": old.hex()})
    both = {"MEMORY_CHAIN_SIGNING_KEY": old.hex(), "MEMORY_CHAIN_NEW_SIGNING_KEY": new.hex()}
    rotated = cli.ok("keys", "rotate", "--json", env=both).json()
    assert "ed25519:" + bytes(SigningKey(new).verify_key).hex() == rotated["new_key"]
    cli.ok("add", "signed by the new env key", env={"MEMORY_CHAIN_SIGNING_KEY": new.hex()})
    assert 0 == cli.run("verify").code


# -- verify -------------------------------------------------------------------


def test_verify_ok(populated: Cli) -> None:
    """verify exits 0 and says how many entries it checked."""
    result = populated.run("verify")
    assert 0 == result.code
    assert result.out.startswith("ok: 5 entries verified; head b3:")
    assert "" == result.err


def test_verify_json(populated: Cli) -> None:
    """verify --json reports ok, size, head, chain id and key."""
    result = populated.run("verify", "--json")
    assert 0 == result.code
    report = result.json()
    keys = populated.ok("keys", "show", "--json").json()
    assert (True, 5, None, 0) == (
        report["ok"],
        report["entries"],
        report["failure"],
        report["torn_tail_bytes"],
    )
    assert (keys["chain_id"], keys["key"]) == (report["chain_id"], report["key"])


def test_verify_trusted_key(populated: Cli, tmp_path: Path) -> None:
    """--trusted-key accepts a .pub file or ed25519:<hex>; another key fails at seq 0, exit 1."""
    pub = tmp_path / "agent.pub"
    populated.ok("keys", "export-public", "-o", str(pub))
    assert 0 == populated.run("verify", "--trusted-key", str(pub)).code
    assert 0 == populated.run("verify", "--trusted-key", pub.read_text().strip()).code
    stranger = "ed25519:" + bytes(SigningKey(bytes(32)).verify_key).hex()
    result = populated.run("verify", "--trusted-key", stranger)
    assert 1 == result.code
    assert result.err.startswith("FAILED at seq 0:")
    assert "" == result.out


def test_verify_chain_id(populated: Cli) -> None:
    """--chain-id must match the genesis hash: the right id exits 0, another exits 1."""
    chain_id = populated.ok("keys", "show", "--json").json()["chain_id"]
    assert 0 == populated.run("verify", "--chain-id", chain_id).code
    result = populated.run("verify", "--chain-id", "b3:" + "0" * 64)
    assert 1 == result.code
    assert "FAILED at seq 0" in result.err
    assert "chain-id" in result.err


def test_verify_from_and_workers(populated: Cli) -> None:
    """verify --from SEQ and --workers 2 both verify a good chain."""
    result = populated.run("verify", "--from", "2", "--json")
    assert 0 == result.code
    report = result.json()
    assert (True, 2, 5) == (report["ok"], report["verified_from"], report["entries"])
    assert 0 == populated.run("verify", "--workers", "2").code
    assert 0 == populated.run("verify", "--workers", "2", "--from", "3").code


def test_verify_tampered(populated: Cli) -> None:
    """An edited entry makes verify exit 1 with "FAILED at seq N" on stderr (and in --json)."""
    data = populated.chain.read_bytes()
    assert 1 == data.count(b'"env":"staging"')
    populated.chain.write_bytes(data.replace(b'"env":"staging"', b'"env":"prod!!!"'))
    result = populated.run("verify")
    assert 1 == result.code
    assert result.err.startswith("FAILED at seq 3:"), result.err
    report = populated.run("verify", "--json")
    assert 1 == report.code
    assert (False, 3) == (report.json()["ok"], report.json()["failure"]["seq"])
    result = populated.run("verify", "--workers", "2")
    assert (1, True) == (result.code, result.err.startswith("FAILED at seq 3:"))


def test_cli_enums_match_the_format() -> None:
    """The CLI's own copies of types, tiers and sources (kept for a fast --help) match chain's."""
    from memory_chain.chain.format import entry
    from memory_chain.cli import ledger_cmds

    assert entry.CONTENT_TYPES == ledger_cmds.TYPES
    assert entry.TIERS == ledger_cmds.TIERS
    assert entry.SOURCES == ledger_cmds.SOURCES

"""The `memory-chain` command line refusing bad input, as a user meets it.

Every refusal exits 2 with one `error:` line (at most a `hint:` line after it)
and leaves chain.jsonl byte-identical (``assert_rejected``); each runs the
installed console script in a subprocess. The ``Cli`` runner and helpers are
in tests/helpers/cli.py; the ``cli``/``raw``/``populated`` fixtures in
tests/conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import (
    BATCH,
    MAX_CONTENT,
    PASSPHRASE,
    Cli,
    assert_rejected,
    file_bytes,
    jsonl,
    listing,
    stored_blob,
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """One raw chain (genesis, a committed entry, a redacted one, the redaction) for the
    rejection tests."""
    tmp = tmp_path_factory.mktemp("shared")
    c = Cli(tmp / "data", tmp / "home")
    c.ok("init", "--name", "shared")
    c.ok("add", "a permanent decision", "--type", "decision", "--tier", "committed")
    c.ok("add", "an ordinary memory")
    c.ok("redact", "2", "--reason", "its content must go")
    return c


# -- bad input: exit 2, one error line, nothing written ------------------------

REJECTED: dict[str, tuple[tuple[str | bytes, ...], bytes]] = {
    "invalid-utf8": (("add", b"\xff"), b""),
    "nul-byte": (("add", "-"), b"a\x00b"),
    "over-size-limit": (("add", "-"), b"x" * (MAX_CONTENT + 1)),
    "empty-content": (("add", "-"), b""),
    "meta-too-deep": (("add", "x", "--meta", 'a={"b":{"c":{"d":{"e":1}}}}'), b""),
    "meta-float": (("add", "x", "--meta", "n=1.5"), b""),
    "meta-not-key-value": (("add", "x", "--meta", "novalue"), b""),
    "unknown-type": (("add", "x", "--type", "bogus"), b""),
    "unknown-tier": (("add", "x", "--tier", "bogus"), b""),
    "unknown-source": (("add", "x", "--source", "bogus"), b""),
    "importance-101": (("add", "x", "--importance", "101"), b""),
    "importance-negative": (("add", "x", "--importance=-1"), b""),
    "text-and-batch": (("add", "x", "--batch", "-"), b'{"content": "y"}\n'),
    "batch-missing-file": (("add", "--batch", "/nonexistent/batch.jsonl"), b""),
    "batch-empty": (("add", "--batch", "-"), b"\n"),
    "redact-missing-seq": (("redact", "99", "--reason", "gone"), b""),
    "redact-genesis": (("redact", "0", "--reason", "no"), b""),
    "show-missing-seq": (("show", "99"), b""),
    "init-existing-chain": (("init",), b""),
    "trusted-key-garbage": (("verify", "--trusted-key", "not-a-key"), b""),
    "prove-missing-seq": (("prove", "99"), b""),
    "prove-missing-checkpoint": (("prove", "1", "--checkpoint", "999"), b""),
    "consistency-missing-checkpoints": (("consistency", "1", "2"), b""),
    "verify-proof-missing-file": (
        ("verify-proof", "/nonexistent.json", "--chain-id", "b3:" + "0" * 64),
        b"",
    ),
    "verify-proof-bad-chain-id": (("verify-proof", "-", "--chain-id", "nope"), b"{}"),
    "verify-proof-unpinned": (("verify-proof", "-"), b"{}"),
    "verify-page-into-missing-folder": (("verify-page", "-o", "/nonexistent/page.html"), b""),
    "prove-html-missing-seq": (("prove", "99", "--html", "-o", "/tmp/never-written.html"), b""),
    "export-from-beyond-end": (("export", "/tmp/never-written.tar", "--from", "99"), b""),
    "import-missing-archive": (("import", "/nonexistent.tar", "--dir", "/tmp/never-made"), b""),
    # the workspace commands (issue 11): nothing in the data directory changes either
    "add-secret": (("add", "the CI key is AKIAQ7W2E4R6T8Y1U3I5"), b""),
    "batch-secret": (("add", "--batch", "-"), b'{"content": "password=hunter22"}\n'),
    "remember-empty": (("remember", " "), b""),
    "remember-two-lines": (("ws", "remember", "one\ntwo"), b""),
    "remember-secret": (("remember", "token ghp_x7Yb2Qm9Lk4Tz8Rw1Vn6Hs3Jd5Fg0Pc2Ae7B"), b""),
    "remember-bad-section": (("remember", "x", "--section", "# not a title"), b""),
    "ws-update-no-memory-file": (("ws", "update", "port", "Postgres is on 5433"), b""),
    "ws-remove-no-reason": (("ws", "remove", "port"), b""),
    "ws-supersede-no-memory-file": (("ws", "supersede", "a", "b", "--reason", "r"), b""),
    "ws-confirm-no-memory-file": (("ws", "confirm", "12"), b""),
    "ws-decay-zero-days": (("ws", "decay", "--days", "0"), b""),
    "ws-consolidate-tiny-cap": (("ws", "consolidate", "--cap", "3"), b""),
    "files-read-escape": (("files", "read", "../config.json"), b""),
    "files-read-absolute": (("files", "read", "/etc/passwd.md"), b""),
    "files-read-missing": (("files", "read", "facts/none.md"), b""),
    "files-write-secret": (
        ("files", "write", "facts/k.md", "-"),
        b"key sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    "files-write-not-markdown": (("files", "write", "notes.exe", "x"), b""),
    "files-patch-missing-file": (
        ("files", "patch", "memory/x.md", "--old", "a", "--new", "b"),
        b"",
    ),
    "files-patch-unpaired": (
        ("files", "patch", "memory/x.md", "--old", "a", "--old", "b", "--new", "c"),
        b"",
    ),
    "files-rename-missing": (("files", "rename", "memory/a.md", "memory/b.md"), b""),
    "context-tiny-char-cap": (("context", "--char-cap", "5"), b""),
    "capture-no-transcript": (("capture",), b""),
    "capture-missing-transcript": (("capture", "--transcript", "/nonexistent/s.jsonl"), b""),
    "capture-a-directory": (("capture", "--transcript", "/"), b""),
    "capture-bad-threshold": (("capture", "--transcript", "-", "--threshold", "0.1"), b""),
    "capture-bad-format": (("capture", "--transcript", "x.jsonl", "--format", "xml"), b""),
    "curate-zero-days": (("curate", "--days", "0"), b""),
    "hooks-unknown-agent": (("hooks", "install", "cursor"), b""),
    "hooks-project-scope-without-project": (
        ("hooks", "install", "claude-code", "--scope", "project"),
        b"",
    ),
    "mcp-install-local-without-project": (
        ("mcp", "install", "claude-code", "--scope", "local"),
        b"",
    ),
    "schedule-missing-transcripts": (
        ("schedule", "install", "--cron", "--transcripts", "/nonexistent/projects"),
        b"",
    ),
    "job-unknown": (("job", "defrag"), b""),
    # Issue 22, "files the CLI writes": every -o refuses the data directory, special files,
    # links and existing files (without --force), before any work. {data} is the data
    # directory, {ws} the user workspace, {tmp} a scratch folder holding "existing" (a
    # regular file), "fifo" (a FIFO) and "link" (a symbolic link to "existing").
    "export-public-over-the-signing-key": (
        ("keys", "export-public", "-o", "{data}/agent.key"),
        b"",
    ),
    "verify-page-over-the-chain": (("verify-page", "-o", "{data}/chain.jsonl"), b""),
    "prove-over-the-chain": (("prove", "1", "-o", "{data}/chain.jsonl"), b""),
    "prove-into-the-data-directory": (("prove", "1", "-o", "{data}/new.proof.json"), b""),
    "consistency-into-the-data-directory": (
        ("consistency", "1", "2", "-o", "{data}/c.json"),
        b"",
    ),
    "export-into-the-data-directory": (("export", "{data}/backup.tar"), b""),
    "verify-page-over-memory-md": (("verify-page", "-o", "{ws}/MEMORY.md"), b""),
    "prove-html-over-a-fifo": (("prove", "1", "--html", "-o", "{tmp}/fifo"), b""),
    "prove-over-a-symlink": (("prove", "1", "-o", "{tmp}/link"), b""),
    "prove-over-an-existing-file": (("prove", "1", "-o", "{tmp}/existing"), b""),
    "export-public-over-an-existing-file": (
        ("keys", "export-public", "-o", "{tmp}/existing"),
        b"",
    ),
    "prove-into-a-missing-folder": (("prove", "1", "-o", "/nonexistent/p.json"), b""),
    "prove-content-of-a-redacted-entry": (("prove", "2", "--content", "-o", "{tmp}/r.json"), b""),
    # Values bound for a unit file, a crontab or a setting are checked for that format.
    "schedule-transcripts-with-a-newline": (
        ("schedule", "install", "--systemd", "--print", "--transcripts", "{tmp}/evil\nExec=x"),
        b"",
    ),
    "schedule-unknown-anchor-network": (
        ("schedule", "install", "--cron", "--print", "--anchor", "nonet"),
        b"",
    ),
    "curate-threshold-above-one": (("curate", "--threshold", "7"), b""),
}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """{tmp} of the table: an existing regular file, a FIFO, a symbolic link, and a folder
    with a newline in its name."""
    tmp = tmp_path_factory.mktemp("outputs")
    (tmp / "existing").write_bytes(b"a file the user keeps\n")
    os.mkfifo(tmp / "fifo")
    (tmp / "link").symlink_to(tmp / "existing")
    (tmp / "evil\nExec=x").mkdir()  # a folder whose name would end a unit file's line
    return tmp


def _fill(arg: str | bytes, shared: Cli, scratch: Path) -> str | bytes:
    if isinstance(arg, bytes):
        return arg
    ws = shared.root / "workspace"
    for name, value in (("{data}", shared.root), ("{ws}", ws), ("{tmp}", scratch)):
        arg = arg.replace(name, str(value))
    return arg


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_bad_input_is_rejected(shared: Cli, scratch: Path, case: str) -> None:
    """Each bad input exits 2 with one `error:` line and leaves chain.jsonl, every other file
    of the data directory (the index cache aside) and the scratch files byte-identical."""
    args, stdin = REJECTED[case]
    args = tuple(_fill(a, shared, scratch) for a in args)
    before = (file_bytes(shared.root), file_bytes(scratch))
    assert_rejected(shared, *args, stdin=stdin)
    assert before == (file_bytes(shared.root), file_bytes(scratch))
    assert (scratch / "fifo").is_fifo() and (scratch / "link").is_symlink()


def test_wrong_passphrase(cli: Cli) -> None:
    """An encrypted chain refuses a wrong passphrase, and a missing one off a terminal."""
    cli.ok("init", "--key-mode", "encrypted", env={"MEMORY_CHAIN_PASSPHRASE": PASSPHRASE})
    wrong = assert_rejected(cli, "add", "x", env={"MEMORY_CHAIN_PASSPHRASE": "wrong"})
    assert "wrong passphrase" in wrong.err
    assert_rejected(cli, "add", "x")
    assert_rejected(cli, "keys", "rotate", env={"MEMORY_CHAIN_PASSPHRASE": "wrong"})


def test_group_readable_key_is_refused(raw: Cli) -> None:
    """A raw key file with mode 0640 is refused for signing (and named in the hint)."""
    (raw.root / "agent.key").chmod(0o640)
    result = assert_rejected(raw, "add", "x")
    assert "chmod 600" in result.err
    assert_rejected(raw, "keys", "rotate")


def test_malformed_env_key(cli: Cli) -> None:
    """In env mode a malformed or missing $MEMORY_CHAIN_SIGNING_KEY is refused."""
    cli.ok("init", "--key-mode", "env", env={"MEMORY_CHAIN_SIGNING_KEY": "ab" * 32})
    for value in ("zz" * 32, "ab" * 31, "not hex at all"):
        result = assert_rejected(cli, "add", "x", env={"MEMORY_CHAIN_SIGNING_KEY": value})
        assert value not in result.err
    assert_rejected(cli, "add", "x")
    assert_rejected(cli, "init", "--key-mode", "env", env={"MEMORY_CHAIN_SIGNING_KEY": "12"})


@pytest.mark.parametrize("args", [("add", "x"), ("log",), ("verify",), ("keys", "show")])
def test_missing_data_dir(cli: Cli, args: tuple[str, ...]) -> None:
    """Commands on a data directory that does not exist exit 2 and create nothing."""
    result = assert_rejected(cli, *args, only_error_lines=False)
    assert "no data directory" in result.err
    assert not cli.root.exists()


@pytest.mark.parametrize("args", [("add", "x"), ("verify",), ("init",)])
def test_data_dir_is_a_file(cli: Cli, args: tuple[str, ...]) -> None:
    """A data directory path that is a regular file is refused and the file left alone."""
    cli.root.write_bytes(b"not a directory\n")
    assert_rejected(cli, *args, watch=cli.root, only_error_lines=False)


@pytest.mark.parametrize("kind", ["missing", "regular-file"])
def test_bad_data_dir_prints_only_the_error(cli: Cli, kind: str) -> None:
    """A missing or non-directory data dir gives just the error and hint lines, no traceback."""
    if kind == "regular-file":
        cli.root.write_bytes(b"not a directory\n")
    assert_rejected(cli, "add", "x", watch=cli.root)


def test_unreadable_data_dir(raw: Cli) -> None:
    """A data directory with mode 000 is refused with exit 2 (not a traceback)."""
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from reading")
    before = raw.chain.read_bytes()
    raw.root.chmod(0)
    try:
        assert_rejected(raw, "add", "x")
        assert_rejected(raw, "verify")
    finally:
        raw.root.chmod(0o700)
    assert before == raw.chain.read_bytes()


def test_usage_errors_are_one_line(shared: Cli) -> None:
    """click usage errors (bad int, missing option, unknown command) follow the one-line rule."""
    for args in (("show", "abc"), ("redact", "1"), ("log", "--limit", "0"), ("bogus",)):
        assert_rejected(shared, *args)


# -- add --batch: all or nothing ----------------------------------------------

BAD_LINES = {
    "not-json": b"{not json",
    "unknown-type": b'{"content": "x", "type": "bogus"}',
    "float-meta": b'{"content": "x", "meta": {"f": 1.5}}',
    "no-content": b'{"type": "fact"}',
    "unknown-field": b'{"content": "x", "colour": "red"}',
    "lone-surrogate": b'{"content": "\\ud800"}',
    "nul-byte": b'{"content": "a\\u0000b"}',
    "importance-101": b'{"content": "x", "importance": 101}',
}


@pytest.mark.parametrize("n", range(len(BAD_LINES)), ids=sorted(BAD_LINES))
def test_batch_is_all_or_nothing(raw: Cli, tmp_path: Path, n: int) -> None:
    """One bad line anywhere (first, middle, last) rejects the whole batch; nothing is written."""
    lines = jsonl(BATCH).splitlines()
    position = (0, 1, 3)[n % 3]  # first, middle, last
    lines.insert(position, BAD_LINES[sorted(BAD_LINES)[n]])
    data = b"\n".join(lines) + b"\n"
    before = listing(raw.root)
    if n % 2:
        assert_rejected(raw, "add", "--batch", "-", stdin=data)
    else:
        batch = tmp_path / "bad.jsonl"
        batch.write_bytes(data)
        assert_rejected(raw, "add", "--batch", str(batch))
    assert before == listing(raw.root)


# -- redact: committed content --------------------------------------------------


def test_redact_committed_is_refused(populated: Cli) -> None:
    """Committed-tier content cannot be redacted: exit 2, nothing written, blob kept."""
    target = populated.ok("show", "1", "--json").json()
    result = assert_rejected(populated, "redact", "1", "--reason", "changed my mind")
    assert "committed" in result.err
    assert stored_blob(populated.root, target["content"]) is not None


def test_log_on_a_garbage_line_points_at_verify(tmp_path: Path) -> None:
    """log over a chain with a non-JSON line exits 1 with one error line naming verify."""
    import subprocess

    root = tmp_path / "garbage"
    subprocess.run(["memory-chain", "--dir", str(root), "init"], check=True, capture_output=True)
    with open(root / "chain.jsonl", "ab") as f:
        f.write(b"garbage\n")
    done = subprocess.run(["memory-chain", "--dir", str(root), "log"], capture_output=True)
    assert 1 == done.returncode
    assert done.stderr.decode().startswith("error: line 2 of chain.jsonl is not a JSON object")
    assert b"memory-chain verify" in done.stderr


@pytest.mark.parametrize("args", [("search", "deploy"), ("log",), ("context", "--no-verify")])
def test_a_reader_that_goes_away_is_not_a_failure(cli: Cli, args: tuple[str, ...]) -> None:
    """`memory-chain search X | grep -q Y` under `set -o pipefail`: the reader stops after
    the first line it wants, the next write meets a closed pipe. That is exit 0 and no
    word on stderr, by the click commands as by the fast path (click alone exits 1)."""
    import subprocess

    from helpers.cli import SCRIPT

    cli.ok("init", "--name", "pipe")
    cli.ok("add", "Deploys go out on Tuesdays")
    proc = subprocess.Popen(
        [SCRIPT, *args], env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # gone before the first write: EPIPE every time
    err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (0, b"")

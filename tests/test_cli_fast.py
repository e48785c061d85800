"""The fast entry (cli/fast.py): `hook EVENT`, an unchanged `capture` and `context` answered
before click is imported, with the answers the click command line gives.

Each comparison runs both doors as real processes: the installed console
script (the fast entry) and ``python -c "...cli.main import main..."`` (click
alone), on the same data directory and the same input.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import transcripts as cc
from helpers.cli import Cli

from memory_chain.cli.fast import (
    _CAPTURE_OPTIONS,
    _CONTEXT_OPTIONS,
    _HOOK_OPTIONS,
    _SEARCH_OPTIONS,
    _parse,
)

PAYLOADS = Path(__file__).resolve().parent / "fixtures" / "hook-payloads"


def _click(cli: Cli, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """The same command through click alone (no fast path)."""
    code = "import sys\nfrom memory_chain.cli.main import main\nmain(sys.argv[1:])\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        env=cli.env,
        capture_output=True,
        timeout=60,
    )


def _imports_click(cli: Cli, *args: str, stdin: bytes = b"") -> bool:
    """Whether the fast entry, run on ``args``, imported click."""
    code = (
        "import sys\nfrom memory_chain.cli.fast import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('CLICK=%s' % ('click' in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        env=cli.env,
        capture_output=True,
        timeout=60,
    )
    err = proc.stderr.decode()
    assert "CLICK=" in err, err
    return "CLICK=True" in err


@pytest.mark.parametrize(
    ("args", "fast"),
    [
        (["hook", "SessionStart"], (["SessionStart"], {})),
        (["--dir", "/d", "hook", "Stop"], (["Stop"], {"--dir": "/d"})),
        (["hook", "Stop", "--dir=/d"], (["Stop"], {"--dir": "/d"})),
        (["hook", "--help"], None),
        (["hook", "-h", "Stop"], None),
        (["hook", "Stop", "--dir"], None),  # no value
        (["hook", "Stop", "--dir", "--json"], None),  # an option where the value goes
        (["--dir", "/a", "hook", "Stop", "--dir", "/b"], None),  # twice
        (["--json", "hook", "Stop"], None),  # not an option of the group
        (["add", "hook"], None),
        ([], None),
    ],
)
def test_the_hook_shape_and_only_it_is_taken(
    args: list[str], fast: tuple[list[str], dict[str, str]] | None
) -> None:
    got = _parse(args, "hook", _HOOK_OPTIONS)
    assert (None if got is None else (got[1], got[0])) == fast


@pytest.mark.parametrize(
    ("args", "fast"),
    [
        (["capture", "--transcript", "t.jsonl"], {"--transcript": "t.jsonl"}),
        (["capture", "-t", "t.jsonl", "--json"], {"-t": "t.jsonl", "--json": ""}),
        (
            ["--dir", "d", "capture", "--transcript=t", "--project", "p", "--workspace", "w"],
            {"--dir": "d", "--transcript": "t", "--project": "p", "--workspace": "w"},
        ),
        (["capture", "--transcript", "t", "--dry-run"], None),
        (["capture", "--transcript", "t", "--flush"], None),
        (["capture", "--hook"], None),
        (["capture", "--transcript", "t", "--json=yes"], None),  # a flag takes no value
        (["capture", "-t=t.jsonl"], None),  # click reads the value "=t.jsonl"
        (["capture", "--transcript", "t", "--transcript", "u"], None),
        (["--project", "p", "capture", "--transcript", "t"], None),  # not the group's option
        (["capture", "--transcript", "t", "extra"], {"--transcript": "t"}),  # see below
    ],
)
def test_the_capture_shape_and_only_it_is_taken(
    args: list[str], fast: dict[str, str] | None
) -> None:
    got = _parse(args, "capture", _CAPTURE_OPTIONS)
    assert (None if got is None else got[0]) == fast
    if got is not None and got[1]:
        # a positional argument is parsed, and main() then leaves the line to click
        assert got[1] == ["extra"]


def test_a_hook_answers_as_the_click_command_does_without_importing_click(
    populated: Cli, tmp_path: Path
) -> None:
    populated.ok("remember", "Prefers short answers", "--section", "User Preferences")
    payload = json.loads((PAYLOADS / "SessionStart-1.json").read_text())
    payload["cwd"] = str(tmp_path)
    stdin = json.dumps(payload).encode()
    fast = populated.run("hook", "SessionStart", stdin=stdin)
    slow = _click(populated, "hook", "SessionStart", stdin=stdin)
    assert (0, 0) == (fast.code, slow.returncode)
    context = json.loads(fast.out)["hookSpecificOutput"]["additionalContext"]
    assert "Prefers short answers" in context
    assert fast.out == slow.stdout.decode()
    assert not _imports_click(populated, "hook", "SessionStart", stdin=stdin)
    # and a hook that fails still fails open, the same way through either door
    fast = populated.run("hook", "SessionStart", stdin=b"{not json")
    slow = _click(populated, "hook", "SessionStart", stdin=b"{not json")
    assert (0, 0) == (fast.code, slow.returncode)
    assert fast.err == slow.stderr.decode() != ""
    assert ("", b"") == (fast.out, slow.stdout)


@pytest.mark.parametrize("as_json", [False, True])
def test_an_unchanged_capture_answers_as_the_click_command_does(
    cli: Cli, tmp_path: Path, as_json: bool
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(cc.jsonl([cc.user("We always use ruff for linting in this repo.")]))
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    args = ["capture", "--transcript", str(transcript), "--project", str(project)]
    args += ["--json"] if as_json else []
    first = cli.run(*args)  # reads it: not the fast path
    assert 0 == first.code, first.err
    assert "nothing new in" not in first.out and '"unchanged": true' not in first.out

    fast = cli.run(*args)
    slow = _click(cli, *args)
    assert (0, 0) == (fast.code, slow.returncode)
    assert fast.out == slow.stdout.decode()
    assert ('"unchanged": true' if as_json else "nothing new in") in fast.out
    assert not _imports_click(cli, *args)

    # the transcript grows: the fast entry leaves it to click, which captures it
    with transcript.open("ab") as f:
        f.write(cc.jsonl([cc.user("Never push to main directly.")]))
    assert _imports_click(cli, *args)
    again = cli.run(*args)  # it was read by that capture: unchanged again
    assert ('"unchanged": true' if as_json else "nothing new in") in again.out
    daily = "\n".join(p.read_text() for p in project.rglob("memory/*.md"))
    assert "Never push to main directly" in daily


def test_a_shape_the_fast_entry_does_not_take_goes_to_click(cli: Cli) -> None:
    helped = cli.run("hook", "--help")
    assert 0 == helped.code
    assert "Usage: memory-chain hook" in helped.out
    bad = cli.run("capture", "--transcript", "/nonexistent/t.jsonl", "--project", "/nonexistent")
    assert 2 == bad.code
    assert bad.err.startswith("error: no such project folder")


@pytest.mark.parametrize(
    ("args", "fast"),
    [
        (["context"], {}),
        (
            ["--dir", "d", "context", "--json", "--no-verify"],
            {"--dir": "d", "--json": "", "--no-verify": ""},
        ),
        (
            ["context", "--max-tokens=500", "--project", "p"],
            {"--max-tokens": "500", "--project": "p"},
        ),
        (["context", "--query", "deploys"], None),  # ranked by a query: click
        (["context", "--weights", "1,0,0,0"], None),
        (["context", "--char-cap", "200"], None),
        (["context", "--help"], None),
        (["context", "--no-verify=1"], None),
    ],
)
def test_the_context_shape_and_only_it_is_taken(
    args: list[str], fast: dict[str, str] | None
) -> None:
    got = _parse(args, "context", _CONTEXT_OPTIONS)
    assert (None if got is None else got[0]) == fast


@pytest.mark.parametrize(
    "extra",
    [[], ["--json"], ["--no-verify"], ["--max-tokens", "60"]],
    ids=["plain", "json", "no-verify", "small budget"],
)
def test_context_answers_as_the_click_command_does_without_importing_click(
    populated: Cli, tmp_path: Path, extra: list[str]
) -> None:
    populated.ok("remember", "Prefers short answers", "--section", "User Preferences")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    args = ["context", "--project", str(project), *extra]
    fast = populated.run(*args)
    slow = _click(populated, *args)
    assert (0, 0) == (fast.code, slow.returncode), fast.err
    assert fast.out == slow.stdout.decode()
    assert fast.err == slow.stderr.decode()
    if extra != ["--max-tokens", "60"]:
        assert "Prefers short answers" in fast.out
    assert not _imports_click(populated, *args)


def test_a_context_that_fails_verification_exits_1_through_either_door(
    populated: Cli, tmp_path: Path
) -> None:
    chain = populated.root / "chain.jsonl"
    lines = chain.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"Staging", b"Stoging") if b"Staging" in lines[2] else lines[2]
    lines[2] = lines[2].replace(b'"importance":', b'"importance": ', 1)  # not canonical
    chain.write_bytes(b"\n".join(lines))
    fast = populated.run("context")
    slow = _click(populated, "context")
    assert (1, 1) == (fast.code, slow.returncode)
    assert fast.out == slow.stdout.decode() != ""
    assert not _imports_click(populated, "context")


def test_a_context_the_fast_entry_cannot_answer_goes_to_click(cli: Cli, tmp_path: Path) -> None:
    """A bad option value or an error: click says what is wrong, in one line."""
    bad = cli.run("context", "--max-tokens", "0")
    assert 2 == bad.code and "--max-tokens" in bad.err
    assert _imports_click(cli, "context", "--max-tokens", "0")
    missing = cli.run("context", "--project", str(tmp_path / "nowhere"))
    slow = _click(cli, "context", "--project", str(tmp_path / "nowhere"))
    assert (missing.code, missing.err) == (slow.returncode, slow.stderr.decode())
    assert missing.code == 2 and missing.err.startswith("error: ")


def test_a_max_tokens_of_other_digits_goes_to_click(cli: Cli) -> None:
    """ "²" is a digit to str.isdigit but no number to int(): click says so, no traceback."""
    out = cli.run("context", "--max-tokens", "²")
    assert out.code == 2 and out.err.startswith("error: ") and "Traceback" not in out.err


@pytest.mark.parametrize(
    ("args", "fast"),
    [
        (["search", "port"], ({}, ["port"])),
        (
            ["--dir", "d", "search", "staging port", "--json", "--limit=3"],
            ({"--dir": "d", "--json": "", "--limit": "3"}, ["staging port"]),
        ),
        (
            ["search", "--max-tokens", "50", "port", "--project", "p"],
            ({"--max-tokens": "50", "--project": "p"}, ["port"]),
        ),
        (["search", "port", "--type", "fact"], None),  # a filter: click
        (["search", "port", "--offset", "10"], None),
        (["search", "port", "--weights", "1,0,0,0"], None),
        (["search", "--help"], None),
        (["search", "--", "-port"], None),
        (["search", "port", "--json=1"], None),
    ],
)
def test_the_search_shape_and_only_it_is_taken(
    args: list[str], fast: tuple[dict[str, str], list[str]] | None
) -> None:
    assert _parse(args, "search", _SEARCH_OPTIONS) == fast


def _twin(cli: Cli, tmp_path: Path) -> Cli:
    """A copy of ``cli``'s data directory: a search records access, which moves the next
    search's scores, so each door searches its own copy."""
    shutil.copytree(cli.root, tmp_path / "twin")
    return Cli(tmp_path / "twin", tmp_path / "twin-home")


@pytest.mark.parametrize(
    "extra",
    [[], ["--json"], ["--limit", "2"], ["--max-tokens", "8"], ["--limit=1", "--json"]],
    ids=["plain", "json", "limit", "budget", "limit json"],
)
def test_search_answers_as_the_click_command_does_without_importing_click(
    populated: Cli, tmp_path: Path, extra: list[str]
) -> None:
    populated.ok("remember", "Staging deploys need the port open", "--section", "Notes")
    slow_cli = _twin(populated, tmp_path)
    args = ["search", "staging port", *extra]
    fast = populated.run(*args)
    slow = _click(slow_cli, *args)
    assert (0, 0) == (fast.code, slow.returncode), fast.err
    # the recency part (reported, weighed 0 here) moves with the clock between the runs
    fast_out, slow_out = (
        re.sub(r'"recency": [0-9.e-]+', '"recency": R', text)
        for text in (fast.out, slow.stdout.decode())
    )
    assert fast_out == slow_out.replace(str(slow_cli.root), str(populated.root))
    assert fast.err == slow.stderr.decode()
    assert "5433" in fast.out or extra[:1] in (["--limit"], ["--max-tokens"], ["--limit=1"])
    assert not _imports_click(_twin(populated, tmp_path / "third"), *args)


def test_a_search_that_finds_nothing_prints_nothing_through_either_door(
    populated: Cli,
) -> None:
    fast = populated.run("search", "zebra")
    slow = _click(populated, "search", "zebra")
    assert (0, "", "") == (fast.code, fast.out, fast.err)
    assert (0, b"", b"") == (slow.returncode, slow.stdout, slow.stderr)


def test_a_search_the_fast_entry_cannot_answer_goes_to_click(cli: Cli, tmp_path: Path) -> None:
    """A bad count, a missing project or no query: click says what is wrong, in one line."""
    for args in (["search", "x", "--limit", "0"], ["search", "x", "--max-tokens", "²"], ["search"]):
        bad = cli.run(*args)
        assert bad.code == 2 and bad.err.startswith(("error: ", "Usage:")), bad.err
        assert "Traceback" not in bad.err
        assert _imports_click(cli, *args)
    missing = cli.run("search", "x", "--project", str(tmp_path / "nowhere"))
    slow = _click(cli, "search", "x", "--project", str(tmp_path / "nowhere"))
    assert (missing.code, missing.err) == (slow.returncode, slow.stderr.decode())
    assert missing.code == 2 and missing.err.startswith("error: ")


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_the_command_line_keeps_numpy_blas_on_one_thread(given: str | None, seen: str) -> None:
    """The entry sets OPENBLAS_NUM_THREADS=1 unless the user set it: numpy's OpenBLAS would
    start a thread per core at import, which a search with vectors pays for and never
    uses (each product runs on one thread)."""
    code = (
        "import os, sys\nimport memory_chain.cli.fast as fast\n"
        "fast._answered = lambda args: print(os.environ.get('OPENBLAS_NUM_THREADS')) or True\n"
        "fast.main(['hook', 'Stop'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, timeout=60, check=False
    )
    assert (proc.returncode, proc.stdout.decode().strip()) == (0, seen), proc.stderr

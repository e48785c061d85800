"""`memory-chain --help` a newcomer can read (issue 26): every command under its task,
one sentence each, the handful to start with first, on one screen, fast."""

from __future__ import annotations

import ast
import subprocess
import sys

from click.testing import CliRunner

from memory_chain.cli.main import COMMANDS, SECTIONS, cli


def _help() -> list[str]:
    result = CliRunner().invoke(cli, ["--help"], prog_name="memory-chain", terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_every_command_is_under_one_task() -> None:
    listed = [name for _, rows in SECTIONS for name, _ in rows]
    assert sorted(listed) == sorted(COMMANDS)  # each once, none missing, none unknown
    titles = [title for title, _ in SECTIONS]
    assert titles[0] == "Start here"
    assert {"Workspace", "Capture", "Agents", "Audit", "Maintenance"} <= set(titles)


def test_each_command_is_one_full_sentence_on_one_line() -> None:
    lines = _help()
    for _, rows in SECTIONS:
        for name, sentence in rows:
            assert sentence[0].isupper() and sentence.endswith(".") and "..." not in sentence
            shown = [line for line in lines if line.split()[:1] == [name]]
            assert len(shown) == 1 and shown[0].rstrip().endswith(sentence), name


def test_the_help_fits_one_screen_and_starts_with_the_handful() -> None:
    lines = _help()
    assert len(lines) <= 56, len(lines)
    assert max(len(line) for line in lines) <= 80
    start = lines.index("Start here:")
    assert start < 20  # on the first screen of a 24-row terminal, with what follows it
    assert [line.split()[0] for line in lines[start + 1 : start + 8]] == [
        "init",
        "add",
        "search",
        "remember",
        "context",
        "verify",
        "doctor",
    ]


def test_help_imports_no_command() -> None:
    code = (
        "import sys\n"
        "from memory_chain.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('memory_chain.cli.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.endswith("_cmds") or m.endswith("_cmd")], loaded

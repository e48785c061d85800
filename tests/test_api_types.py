"""The typed Python API (issue 26): `from memory_chain import Memory`, Literal types for
a memory's fields, TypedDict results, Memory.init, and an example agent that mypy
--strict accepts and that runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

import memory_chain
from memory_chain.chain.format.entry import CONTENT_TYPES, ORIGINS, SOURCES, TIERS
from memory_chain.chain.format.errors import ChainStateError
from memory_chain.integrations import types
from memory_chain.workspace.scopes import SCOPES

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "agent.py"


def test_the_package_exports_memory_and_its_types() -> None:
    from memory_chain import Added, ContentType, Found, Memory, Origin, Scope, Source, Tier
    from memory_chain.integrations.api import Memory as TheMemory

    assert Memory is TheMemory
    assert (Added, Found) == (types.Added, types.Found)
    assert set(memory_chain.__all__) - {"Memory"} == set(types.__all__)
    assert all(getattr(memory_chain, name) is getattr(types, name) for name in types.__all__)
    assert get_args(ContentType) == CONTENT_TYPES
    assert get_args(Tier) == TIERS
    assert get_args(Source) == SOURCES
    assert get_args(Origin) == ORIGINS
    assert get_args(Scope) == tuple(SCOPES)
    with pytest.raises(AttributeError, match="no attribute 'Memroy'"):
        memory_chain.Memroy  # noqa: B018


def test_importing_the_package_imports_nothing_else() -> None:
    """The command line imports the package first: it must cost nothing (`--help`)."""
    code = (
        "import sys, memory_chain\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'memory_chain'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['memory_chain']"


def test_memory_init_creates_a_chain_once(tmp_path: Path) -> None:
    from memory_chain import Memory

    with Memory.init(tmp_path / "d", name="typed", project=False) as memory:
        added = memory.add("Deploys go out on Tuesdays", type="decision", tier="committed")
        assert added["seq"] == 1 and added["content"].startswith("b3:")
        found = memory.search("deploys")
        assert found[0]["kind"] == "provable" and found[0]["seq"] == 1
    before = (tmp_path / "d" / "chain.jsonl").read_bytes()
    with pytest.raises(ChainStateError, match="already exists"):
        Memory.init(tmp_path / "d", name="again")
    assert (tmp_path / "d" / "chain.jsonl").read_bytes() == before


def test_memory_redact_withdraws_the_words_and_refuses_twice(tmp_path: Path) -> None:
    from memory_chain import Memory
    from memory_chain.chain.format.errors import InputError

    with Memory.init(tmp_path / "d", name="typed", project=False) as memory:
        seq = memory.add("Dana's phone is 555 0199", type="fact")["seq"]
        assert memory.search("Dana phone")[0]["seq"] == seq  # the index holds it ...
        done = memory.redact(seq, "a person's number")
        assert done == {
            "target": seq,
            "seq": seq + 1,
            "content": done["content"],
            "erased": True,
            "erased_in": ["content/packs/00000000.pack"],
            "shared": False,
        }
        assert memory.search("Dana phone") == []  # ... and forgets it at once
        entry = memory.get(seq)
        assert entry["redacted_by"] == seq + 1 and "text" not in entry
        before = (tmp_path / "d" / "chain.jsonl").read_bytes()
        with pytest.raises(InputError, match="already redacted"):
            memory.redact(seq, "again")
        assert (tmp_path / "d" / "chain.jsonl").read_bytes() == before
        assert memory.verify(full=True)["ok"] is True


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package laid out as pip installs it (pyproject's package-dir, as links): mypy
    does not follow the editable install's import hook."""
    import tomllib

    root = tmp_path_factory.mktemp("site")
    dirs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    (root / "memory_chain").mkdir()
    for name, folder in dirs.items():
        target = REPO / folder
        if name == "memory_chain":
            for f in target.iterdir():
                (root / "memory_chain" / f.name).symlink_to(f)
        else:
            (root / name.replace(".", "/")).symlink_to(target, target_is_directory=True)
    return root


def _mypy(path: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on ``path`` as a user runs it, the package found in ``site``; errors
    inside the package are not this check's (CI checks it with its own settings)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--config-file=/dev/null",
            str(path),
        ],
        capture_output=True,
        text=True,
        cwd=site,
        timeout=300,
    )


def test_the_example_agent_type_checks_strictly_and_runs(tmp_path: Path, installed: Path) -> None:
    checked = _mypy(EXAMPLE, installed)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path / "agent")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "provable  seq 1: We deploy the web app on Tuesdays, never on Fridays"
    assert lines[-1] == "chain verified: True; decision 1 proved in a tree of 5 entries"
    again = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path / "agent")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1 and again.stderr.startswith("error: a chain already exists")
    assert "Traceback" not in again.stderr


def test_a_misspelled_tier_is_a_type_error(tmp_path: Path, installed: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from memory_chain import Memory\n"
        "\n"
        "def keep(memory: Memory) -> None:\n"
        '    memory.add("x", tier="comitted")\n'
    )
    checked = _mypy(wrong, installed)
    assert checked.returncode == 1
    assert 'Argument "tier" to "add" of "Memory" has incompatible type' in checked.stdout


#: The API's examples, in the order they build on each other (add makes seq 1, ...).
EXAMPLES = (
    "add",
    "get",
    "supersede",
    "recent",
    "search",
    "context",
    "redact",
    "verify",
    "prove",
    "remember",
    "review_queue",
)


def test_the_docstring_examples_are_true(tmp_path: Path) -> None:
    """Each public method of Memory shows an example; they run here, in turn, on one
    new chain (doctest would run them in alphabetical order)."""
    import doctest

    from memory_chain import Memory

    documented = {
        name
        for name in vars(Memory)
        if not name.startswith("_") and ">>>" in (getattr(Memory, name).__doc__ or "")
    }
    assert documented == set(EXAMPLES) | {"init"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with Memory.init(tmp_path / "d", name="doc", workspace=tmp_path / "ws", project=False) as m:
        globs = {"memory": m}
        for name in EXAMPLES:
            doc = getattr(Memory, name).__doc__
            runner.run(parser.get_doctest(doc, globs, name, None, 0), clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= len(EXAMPLES) + 5

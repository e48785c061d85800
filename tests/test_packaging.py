"""What `pip install .` ships: exactly memory_chain.*, a working console script, lazy imports."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Build from a clean copy: an in-tree build would write build/ into the
#: shared checkout, and setuptools never prunes build/lib, so stale modules
#: could leak into the wheel.
IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "results",  # benchmarks/results: cached benchmark chains, gitignored
    "node_modules",  # anvil and solc, from npm: test tools, not the package
)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository as a fresh clone would have it (no build artefacts)."""
    dest = tmp_path_factory.mktemp("src") / "memory-chain"
    shutil.copytree(REPO, dest, ignore=IGNORED)
    return dest


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel that `pip wheel` builds from the repository."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (out.parent / "build.log").write_text(done.stdout + done.stderr)
    (built,) = out.glob("memory_chain-*.whl")
    return built


def test_the_build_is_quiet(wheel: Path) -> None:
    """No wall of setuptools warnings: every folder that ships is declared."""
    log = (wheel.parent.parent / "build.log").read_text()
    assert "Warning" not in log and "!!" not in log, log


def test_wheel_installs_only_memory_chain(wheel: Path) -> None:
    """The wheel's only top-level package is memory_chain; its code is its __init__ (top/:
    `from memory_chain import Memory`), chain/, index/, anchor/, workspace/, capture/,
    integrations/, auditor/ and cli/."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    code = [n for n in names if ".dist-info/" not in n]
    assert {"memory_chain"} == {n.split("/")[0] for n in code}
    assert [] == [
        n
        for n in code
        if n.endswith(".py")
        and n != "memory_chain/__init__.py"
        and not n.startswith(
            (
                "memory_chain/anchor/",
                "memory_chain/auditor/",
                "memory_chain/capture/",
                "memory_chain/chain/",
                "memory_chain/cli/",
                "memory_chain/index/",
                "memory_chain/integrations/",
                "memory_chain/workspace/",
            )
        )
    ]
    assert {
        "memory_chain/__init__.py",
        "memory_chain/py.typed",
        "memory_chain/chain/__init__.py",
        "memory_chain/cli/main.py",
        "memory_chain/index/__init__.py",
        "memory_chain/index/db.py",
        "memory_chain/workspace/markdown.py",
    } <= set(code)
    assert {
        "memory_chain/anchor/py.typed",
        "memory_chain/anchor/contracts/MemoryChainAnchors.json",
        "memory_chain/anchor/contracts/MemoryChainAnchors.sol",
        "memory_chain/chain/py.typed",
        "memory_chain/index/py.typed",
        "memory_chain/workspace/py.typed",
        "memory_chain/capture/py.typed",
        "memory_chain/capture/prompts/extract.txt",
        "memory_chain/capture/scorer_weights.json",
        "memory_chain/integrations/py.typed",
        "memory_chain/auditor/py.typed",
        "memory_chain/auditor/page.html",
        "memory_chain/auditor/verifier-js/bundle.js",
        "memory_chain/integrations/openclaw-hooks/memory-chain.js",
        "memory_chain/integrations/openclaw-hooks/memory-chain-bootstrap/HOOK.md",
        "memory_chain/integrations/openclaw-hooks/memory-chain-bootstrap/handler.js",
        "memory_chain/integrations/openclaw-hooks/memory-chain-reset/HOOK.md",
        "memory_chain/integrations/openclaw-hooks/memory-chain-reset/handler.js",
    } <= set(code)


def test_wheel_declares_the_console_script(wheel: Path) -> None:
    """entry_points.txt maps memory-chain to memory_chain.cli.fast:main (then click)."""
    with zipfile.ZipFile(wheel) as zf:
        (entry_points,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = zf.read(entry_points).decode()
    parser = configparser.ConfigParser()
    parser.read_string(text)
    assert {"memory-chain": "memory_chain.cli.fast:main"} == dict(parser["console_scripts"])


@pytest.mark.slow
def test_plain_install_into_a_fresh_venv(source: Path, tmp_path: Path) -> None:
    """`pip install <repo>` into a new venv gives a working memory-chain and importable packages."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert 0 == install.returncode, install.stderr
    helped = subprocess.run(
        [str(venv / "bin" / "memory-chain"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert 0 == helped.returncode, helped.stderr
    assert "Example:" in helped.stdout
    imported = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import memory_chain.chain, memory_chain.cli, memory_chain.cli.main, "
            "memory_chain.index.db, memory_chain.anchor.post\n"
            "from memory_chain.anchor.artifact import load_artifact\n"
            "assert load_artifact().deployed_bytecode",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert 0 == imported.returncode, imported.stderr


def test_cli_import_is_lazy() -> None:
    """Importing the CLI entry point loads no heavy module (web3, sqlite_utils, the verifier)."""
    heavy = ["web3", "sqlite_utils", "memory_chain.chain.verify.lines"]
    probe = (
        "import sys\n"
        "import memory_chain.cli.main\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
        # control: the probe does see the verifier load
        "import memory_chain.chain.audit.verify_ledger\n"
        "print('memory_chain.chain.verify.lines' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert ["", "True"] == result.stdout.split("\n")[:2]


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["add", "a memory", "--type", "decision"],
        ["anchor", "status"],
        ["anchor", "--help"],
        ["verify"],
    ],
    ids=" ".join,
)
def test_commands_other_than_anchoring_do_not_import_web3(argv: list[str], tmp_path: Path) -> None:
    """Only the anchoring commands load web3: add, verify, status and help run without it."""
    data = tmp_path / "data"
    probe = (
        "import sys\n"
        "from memory_chain.cli.main import main\n"
        f"for argv in (['init', '--name', 't'], {argv!r}):\n"
        "    try:\n"
        f"        main(['--dir', {str(data)!r}, *argv])\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
        "print('web3' in sys.modules, 'eth_account' in sys.modules)\n"
        "import memory_chain.anchor.rpc  # control: the probe does see web3 load\n"
        "from memory_chain.anchor.networks import BUILT_IN\n"
        "memory_chain.anchor.rpc.Rpc(BUILT_IN['anvil'], 'http://127.0.0.1:1')\n"
        "print('web3' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert 0 == result.returncode, result.stderr
    assert ["False False", "True"] == result.stdout.strip().splitlines()[-2:]

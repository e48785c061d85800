"""The auditor's page (`prove --html`, `verify-page`) in real headless Chromium.

Chromium comes from Debian's packages (.ci/test installs it) and is driven
by playwright-core (tests/helpers/page_check.mjs), offline: a page that
asked for anything over the network would show it in ``requests``.
Screenshots of a passing and a failing page go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import js_agreement as agreement
import pytest
from helpers.cli import Cli

from memory_chain.auditor import EMPTY_SLOT, page

ROOT = Path(__file__).resolve().parent.parent
HELPER = ROOT / "tests" / "helpers" / "page_check.mjs"
ARTIFACTS = Path(os.environ.get("MEMORY_CHAIN_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
MAX_PAGE_BYTES = 200 * 1024


def visit(visits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Open each page in one headless Chromium; what each showed."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/test does)")
    out = subprocess.run(
        ["node", str(HELPER)],
        input=json.dumps(visits),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    assert 0 == out.returncode, out.stderr
    shown: list[dict[str, Any]] = json.loads(out.stdout)
    for s in shown:
        assert ([], []) == (s["requests"], s["errors"])
    return shown


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[agreement.Builder, Path]:
    folder = tmp_path_factory.mktemp("page")
    b = agreement.Builder(folder)
    b.bundles()
    b.archives()
    return b, folder


def test_the_page_is_built_from_its_sources() -> None:
    """auditor/page.html is what `node auditor/build.mjs` makes of verifier-js/ now."""
    out = subprocess.run(
        ["node", str(ROOT / "auditor" / "build.mjs"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert (0, "auditor/page.html is current\n") == (out.returncode, out.stdout)


def test_the_page_is_small_and_fetches_nothing() -> None:
    html = page().decode()
    assert len(html.encode()) < MAX_PAGE_BYTES
    assert EMPTY_SLOT in html
    assert "default-src 'none'" in html  # the browser refuses any load
    for needle in ("<link", " src=", "<iframe", "<img", "@import"):
        assert needle not in html


def test_the_page_embeds_exact_bytes() -> None:
    """Any bytes go in as base64, and the name is escaped: nothing ends the script early."""
    nasty = b"</script><script>alert(1)</script>\x00\xff"
    html = page(nasty, name='"><b>x').decode()
    assert 2 == html.count("</script>") - page().decode().count("</script>") + 2
    assert "<script>alert(1)" not in html
    assert 'data-name="&quot;&gt;&lt;b&gt;x"' in html


def test_cli_writes_the_pages(cli: Cli, tmp_path: Path) -> None:
    cli.ok("init", "--name", "page-agent")
    cli.ok("add", "Deploys go out on Tuesdays", "--type", "fact")
    proof = tmp_path / "p.html"
    cli.ok("prove", "1", "--content", "--html", "-o", str(proof))
    bare = tmp_path / "bare.html"
    cli.ok("verify-page", "-o", str(bare))
    assert bare.read_bytes() == page()
    assert proof.read_bytes().startswith(b"<!doctype html>")
    assert EMPTY_SLOT.encode() not in proof.read_bytes()
    key = cli.ok("keys", "export-public").out.strip()
    chain_id = json.loads(cli.ok("verify", "--json").out)["chain_id"]
    fail_shot = ARTIFACTS / "auditor-page-not-pinned.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shown = visit(
        [
            {"url": proof.as_uri(), "pin": key, "pin_by": "field"},
            {"url": proof.as_uri() + "#chain=" + chain_id},
            {"url": proof.as_uri() + "#key=" + key},
            {"url": proof.as_uri(), "screenshot": str(fail_shot)},
        ]
    )
    assert ["pass", "pass", "pass", "waiting"] == [s["verdict"] for s in shown]
    assert "Deploys go out on Tuesdays" in shown[0]["memory"]
    assert "fact" in shown[0]["memory"]
    assert ("unpinned", 1) == (shown[3]["reason"], shown[3]["step"])


def test_every_bundle_case_shows_the_reference_verdict(
    built: tuple[agreement.Builder, Path],
) -> None:
    """Each named bundle of the agreement cases, as a page with the pin typed in:
    the verdict, step and reason the page shows are the Python verifier's."""
    b, folder = built
    cases = [c for c in b.cases if c.kind == "bundle" and c.python["reason"] != "unpinned"]
    visits = []
    for i, c in enumerate(cases):
        path = folder / f"case-{i}.html"
        path.write_bytes(page(Path(c.path).read_bytes(), name=c.name))
        pin = c.trusted_key or c.chain_id or ""
        v: dict[str, Any] = {"url": path.as_uri(), "pin": pin, "pin_by": "field"}
        if c.name == "valid bundle, key pinned":
            v["screenshot"] = str(ARTIFACTS / "auditor-page-pass.png")
        if c.name == "changed content":
            v["screenshot"] = str(ARTIFACTS / "auditor-page-fail.png")
        visits.append(v)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shown = visit(visits)
    got = [
        (c.name, s["verdict"], s["step"], s["reason"]) for c, s in zip(cases, shown, strict=True)
    ]
    want = [
        (
            c.name,
            "pass" if c.python["ok"] else "fail",
            c.python["step"],
            c.python["reason"],
        )
        for c in cases
    ]
    assert want == got
    failing = [s for c, s in zip(cases, shown, strict=True) if not c.python["ok"]]
    assert len(failing) >= 15
    for s in failing:  # the failed step is named, in words, with why
        bad = [st for st in s["steps"] if st["status"] == "fail"]
        assert 1 == len(bad)
        assert s["title"] == "Not verified" and f"Step {s['step']} failed" in s["detail"]


def test_archives_dropped_on_the_page(
    built: tuple[agreement.Builder, Path], tmp_path: Path
) -> None:
    """verify-page takes an export archive (chosen as a file, as a drop does)."""
    b, _ = built
    bare = tmp_path / "bare.html"
    bare.write_bytes(page())
    cases = [c for c in b.cases if c.kind == "archive"]
    visits = [
        {
            "url": bare.as_uri(),
            "archive": c.path,
            "pin": c.trusted_key or c.chain_id or "",
            "pin_by": "field",
        }
        for c in cases
    ]
    shown = visit(visits)
    got = [(c.name, s["verdict"], s["reason"]) for c, s in zip(cases, shown, strict=True)]
    want = [(c.name, "pass" if c.python["ok"] else "fail", c.python["reason"]) for c in cases]
    assert want == got

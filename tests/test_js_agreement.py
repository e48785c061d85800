"""The JavaScript verifier (auditor/verifier-js, written from specs/FORMAT.md)
agrees with the reference verifier on every case of tests/js_agreement.py:
the golden vectors, each named attack on a chain, a bundle, a consistency
proof and an export archive, and seeded random byte changes of each.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import js_agreement as agreement
import pytest

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[agreement.Case], list[dict]]:
    folder = tmp_path_factory.mktemp("agreement")
    cases = agreement.build(folder)
    return cases, agreement.run_js(cases, folder)


def test_every_case_agrees(results: tuple[list[agreement.Case], list[dict]]) -> None:
    cases, js = results
    disagree = [
        (c.name, c.python, agreement.agreed(j))
        for c, j in zip(cases, js, strict=True)
        if agreement.agreed(j) != c.python
    ]
    assert [] == disagree


def test_the_cases_cover_each_verdict(results: tuple[list[agreement.Case], list[dict]]) -> None:
    """Valid and failing cases of every kind, and every attack the issue names fails."""
    cases, _ = results
    reasons = {c.python["reason"] for c in cases}
    for reason in (
        None,
        "bad-signature",
        "seq-gap",
        "untrusted-key",
        "truncated",
        "rewritten",
        "bad-inclusion",
        "bad-checkpoint-signature",
        "content-mismatch",
        "inconsistent",
        "bad-archive",
        "missing-content",
    ):
        assert reason in reasons
    assert {"chain", "bundle", "consistency", "archive"} == {c.kind for c in cases}


def test_the_table_is_current(results: tuple[list[agreement.Case], list[dict]]) -> None:
    """specs/VERIFIER-AGREEMENT.md is what `python tests/js_agreement.py --write` writes."""
    cases, js = results
    assert agreement.TABLE.read_text() == agreement.table(cases, js)
    assert "**NO**" not in agreement.TABLE.read_text()


def test_golden_vector_heads_agree(tmp_path: Path) -> None:
    """The JS verifier computes the golden chain's head and root as FORMAT.md says."""
    import json
    import subprocess

    out = subprocess.run(
        ["node", str(agreement.CLI_JS), "chain", str(agreement.GOLDEN)],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    expected = json.loads((agreement.GOLDEN / "expected.json").read_text())
    assert (True, expected["size"], expected["head"]) == (got["ok"], got["entries"], got["head"])

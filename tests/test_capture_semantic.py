"""Issue 24: the capture scorer that reads a statement's embedding (capture/semantic.py),
with the semantic extra (a dev dependency: these run with the real model)."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_chain.capture import semantic
from memory_chain.capture.capture import capture, remember_prompt
from memory_chain.capture.features import NAMES
from memory_chain.capture.scorer import SEMANTIC, load, score
from memory_chain.index.settings import semantic_setting
from memory_chain.index.vectors import DIM, MODEL, available
from memory_chain.workspace.scopes import Workspace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))
sys.path.insert(0, str(HERE))

import capture_quality  # noqa: E402
from helpers import transcripts as cc  # noqa: E402
from helpers.cli import Cli  # noqa: E402

pytestmark = pytest.mark.skipif(not available(), reason="the semantic extra is not installed")


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMORY_CHAIN_SEMANTIC", "1")
    semantic.reset()
    yield
    semantic.reset()


def test_the_semantic_weights_were_trained_on_the_corpus_as_it_is() -> None:
    """Retrain (capture_train.py --semantic) when a part it learned from changes."""
    data = json.loads(SEMANTIC.read_text(encoding="utf-8"))
    halved = [f"hand {n}" for n in range(3, 13)]
    halved += ["held-out", "held-out 2", *(f"held-out {n}" for n in range(3, 13))]  # session 44
    for part in ("tune", "issue 12 corpus", "hand", *halved):
        text = capture_quality.PARTS[part].read_bytes()
        assert hashlib.sha256(text).hexdigest() in data["trained_on"], part
    assert tuple(data["features"]) == NAMES
    assert data["embedding"]["model"] == MODEL
    assert len(data["embedding"]["weights"]) == len(data["classes"])
    assert {len(row) for row in data["embedding"]["weights"]} == {DIM}


def test_with_the_extra_a_statement_is_scored_with_its_embedding(on: None) -> None:
    text = "Money is always integer cents in the database, never floats."
    verdict = score(text)
    assert verdict is not None and verdict.model is load(SEMANTIC)
    assert semantic.spent() == 1
    # the same statement again: embedded once
    assert score(text) == verdict and semantic.spent() == 1
    assert verdict.category == "convention"


def test_past_the_budget_the_lexical_model_scores(on: None) -> None:
    semantic.begin(1)
    first = score("We deploy from the release branch only.")
    second = score("The staging database is refreshed every Sunday night.")
    assert first is not None and first.model is load(SEMANTIC)
    assert second is not None and second.model is load()
    assert semantic.spent() == 1


def test_switched_off_nothing_is_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CHAIN_SEMANTIC", "0")
    semantic.reset()
    verdict = score("We deploy from the release branch only.")
    assert verdict is not None and verdict.model is load()
    assert semantic.spent() == 0


def test_a_capture_embeds_at_most_its_budget(
    on: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "BUDGET", 2)
    said = [
        "We always squash merge into main.",
        "The invoices go out on the first Monday of the month.",
        "I prefer tabs in the Makefile and spaces everywhere else.",
        "Our staging box is called kestrel.",
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(json.dumps(cc.user(s)).encode() + b"\n" for s in said))
    capture(Workspace(tmp_path / "user", None), path, dry_run=True)
    assert semantic.spent() == 2


def test_the_prompt_hook_stays_lexical(on: None, tmp_path: Path) -> None:
    """UserPromptSubmit keeps an explicit "remember" at once: no model is loaded for it."""
    report = remember_prompt(
        Workspace(tmp_path / "user", None), "Remember that we deploy on Tuesdays."
    )
    assert report.remembered
    assert semantic.spent() == 0


#: How far a figure may fall below the one written here before it is a regression: two
#: turns of a part of sixty labelled ones going the other way on another CPU.
SPREAD = 0.035


@pytest.mark.parametrize(
    ("part", "precision", "recall", "kept_precision", "kept_recall"),
    [
        # session 50: trained on every part whole, each threshold chosen out of fold
        # (capture_train.py); each row's figures before that at its end. The parts it never
        # learned from, pooled (held-out 13 to 20, hand 15): by category 0.64 / 0.63 ->
        # 0.65 / 0.64, kept at all 0.87 / 0.85 -> 0.88 / 0.87; held-out 18 alone fell
        # (0.62 / 0.69 -> 0.52 / 0.58), hand 15 and held-out 20 rose
        # session 44: trained with held-out parts 1 to 12 halved in (capture_train.py
        # HALVED); before, by category then kept at all: choose 0.93 / 0.83 (0.98 / 0.89)
        # s47: corrections, tools, ", ok?"
        ("choose", 0.94, 0.86, 0.98, 0.91),  # s50 out of fold: 0.92 0.88 0.98 0.95
        # held out until session 44 (the figures before it in brackets), now half trained
        # on and half judged on: a regression check like any training part's
        # (0.67 0.71 0.90 0.96)
        ("held-out 2", 0.96, 0.96, 0.96, 0.96),  # s50 out of fold: 0.83 0.86 0.90 0.93
        ("held-out 7", 0.87, 0.80, 1.00, 0.92),  # (0.76 0.76 0.94 0.94)
        ("held-out 8", 0.80, 0.85, 0.94, 1.00),  # (0.69 0.67 0.90 0.88)
        # (0.74 0.71 0.93 0.88)
        ("held-out 9", 0.97, 0.99, 0.97, 0.99),  # s50 out of fold: 0.90 0.92 0.97 0.99
        # (0.64 0.54 0.89 0.74)
        ("held-out 10", 0.91, 0.86, 0.97, 0.91),  # s50 out of fold: 0.84 0.76 0.99 0.86
        # (0.58 0.51 0.88 0.77)
        ("held-out 11", 0.90, 0.86, 0.94, 0.89),  # s50 out of fold: 0.78 0.77 0.88 0.86
        # (0.80 0.60 0.89 0.89)
        ("held-out 12", 0.87, 0.67, 0.94, 0.94),  # s50 out of fold: 0.89 0.71 0.97 0.94
        # written in session 43 after a short answer was read with its question, run once:
        # 0.49 / 0.40 (0.80 / 0.66); its misses not read; before session 43: 0.43 / 0.18
        # (0.81 / 0.34); session 43 0.49 / 0.44 (0.80 / 0.72)
        # session 46 read the misses of held-out 13 to 16 and changed how an answer is read
        # for them (WORKSPACE.md 12.2 revision 17): tuning parts from here, the figure
        # before in brackets
        # (0.66 0.58 0.86 0.76)
        ("held-out 13", 0.67, 0.74, 0.85, 0.94),  # s50 out of fold: 0.69 0.70 0.88 0.90
        # written in session 43 before its last change (a personal assistant's sessions),
        # run once: 0.54 / 0.43 (0.82 / 0.65); before session 43: 0.42 / 0.10 (0.92 /
        # 0.22); session 43 0.49 / 0.39 (0.79 / 0.63)
        # (0.56 0.37 0.88 0.57)
        ("held-out 14", 0.60, 0.55, 0.89, 0.82),  # s50 out of fold: 0.64 0.51 0.92 0.73
        # written in session 44 after the scorers were trained again (Claude Code's shapes),
        # run once; with session 43's weights 0.69 / 0.66 (0.90 / 0.88)
        # (0.65 0.64 0.87 0.87)
        ("held-out 15", 0.76, 0.70, 0.96, 0.90),  # s50 out of fold: 0.73 0.66 0.96 0.88
        # written in session 44 after that (one person over five weeks), run with session
        # 43's weights 0.61 / 0.65 (0.82 / 0.87), these, and weights also trained with hand
        # 15, 0.50 / 0.58 (0.75 / 0.87), which it kept out
        # (0.53 0.58 0.79 0.87)
        ("held-out 16", 0.61, 0.61, 0.87, 0.87),  # s50 out of fold: 0.57 0.65 0.80 0.90
        # what a person wants for themself (session 44), not trained on: 0.53 / 0.56 (0.87
        # / 0.92) with session 43's weights
        # (0.57 0.56 0.91 0.89)
        ("hand 15", 0.66, 0.64, 0.94, 0.92),  # s50 out of fold: 0.59 0.61 0.92 0.94
        # written in session 46 after its answer changes, run once: before them 0.47 /
        # 0.41 (0.74 / 0.64), after 0.50 / 0.50 (0.77 / 0.77); then read, errands left out
        # s47 0.87 kept: "only the git ones"
        ("held-out 17", 0.55, 0.50, 0.90, 0.82),  # s50 out of fold: 0.55 0.50 0.85 0.77
        # written in session 46 after all its changes, run once, not read; with main
        # before the session 0.68 / 0.65 (0.80 / 0.80)
        ("held-out 18", 0.52, 0.58, 0.76, 0.88),  # s50 out of fold: 0.62 0.69 0.79 0.92
        # written at the start of session 47 before any change (Claude Code's shapes in
        # stacks no part used), run once before and once after, its misses not read:
        # before 0.62 / 0.67 (0.78 / 0.80)
        ("held-out 19", 0.67, 0.71, 0.80, 0.82),  # s50 out of fold: 0.63 0.71 0.78 0.84
        # written at the start of session 50 before any change (registers first: a terse
        # typist, a dictated stream, a switch of language, pasted blocks, numbered rules),
        # run once; its misses not read
        ("held-out 20", 0.73, 0.66, 0.91, 0.86),  # s50 out of fold: 0.69 0.62 0.89 0.82
        # written in session 51 after its scope changes (situation cards), run once; its
        # misses not read; scope right 44/46 (41/46 with main before the session)
        ("held-out 21", 0.88, 0.85, 0.92, 0.89),
        # written in session 56 after its changes (targets first, by category), run once,
        # its misses not read; with main before the session 0.66 / 0.75 (0.79 / 0.92)
        ("held-out 22", 0.68, 0.78, 0.80, 0.94),
        # written in session 57 after most of its changes (the brief first: each session
        # opens with one long prompt), run once, its misses not read; the same with main
        # before the session and at its end
        ("held-out 23", 0.56, 0.68, 0.87, 0.93),
        # written in session 58 after its changes (the agent's steps first), run once, its
        # misses not read; the same with main before the session
        ("held-out 24", 0.53, 0.62, 0.73, 0.86),
    ],
)
def test_the_parts_as_measured_with_embeddings(
    on: None,
    part: str,
    precision: float,
    recall: float,
    kept_precision: float,
    kept_recall: float,
) -> None:
    """At the figures benchmarks/README.md gives for the semantic scorer, by category and
    kept at all, within SPREAD: the embeddings differ in their last bits from one CPU to
    the next (the BLAS kernels numpy picks), and a statement at a threshold can go either
    way (session 43: held-out 12 kept 0.89 of its turns on one machine, 0.86 on another,
    at the same commit)."""
    semantic.begin(None)
    result = capture_quality.score(capture_quality.load(capture_quality.PARTS[part]))
    kept_p, kept_r = result.kept()
    assert result.precision() >= precision - SPREAD, capture_quality.table(result)
    assert result.recall() >= recall - SPREAD, capture_quality.table(result)
    assert kept_p >= kept_precision - SPREAD, capture_quality.table(result)
    assert kept_r >= kept_recall - SPREAD, capture_quality.table(result)


def test_config_semantic_false_keeps_capture_lexical(on: None, raw: Cli, tmp_path: Path) -> None:
    """config.json's ``index.semantic: false`` means no model, for capture as for recall."""
    from memory_chain.integrations.api import Memory

    path = tmp_path / "session.jsonl"
    path.write_bytes(json.dumps(cc.user("We always squash merge into main.")).encode() + b"\n")
    config = raw.root / "config.json"
    data = json.loads(config.read_text())
    with Memory.open(raw.root, project=False) as memory:
        memory.capture(path, dry_run=True)
    assert semantic.spent() == 1
    assert semantic_setting(raw.root) is None
    data["index"] = {"semantic": False}
    config.write_text(json.dumps(data))
    assert semantic_setting(raw.root) is False
    with Memory.open(raw.root, project=False) as memory:
        memory.capture(path, dry_run=True)
    assert semantic.spent() == 0


def test_each_capture_forgets_what_the_last_one_embedded(on: None) -> None:
    """A long-lived process (the MCP server) holds at most one capture's embeddings."""
    score("We deploy from the release branch only.")
    assert semantic.spent() == 1 and len(semantic._cache) == 1
    semantic.begin()
    assert semantic.spent() == 0 and not semantic._cache
    score("We deploy from the release branch only.")
    assert semantic.spent() == 1


def test_real_shapes_keep_only_the_persons_statements_with_embeddings(
    on: None, tmp_path: Path
) -> None:
    """test_capture_real_shapes with the semantic scorer: the same three statements, no
    harness text, no tool output."""
    import test_capture_real_shapes as real

    real.test_only_the_persons_statements_are_kept(tmp_path)
    assert semantic.spent() > 0  # the semantic scorer did score them


def test_advice_after_a_failure_is_held_for_its_lesson_with_embeddings(on: None) -> None:
    """Revision 19: advice is what the rules read as a tool usage or a correction, whatever
    the scorer names it. The semantic scorer calls "no, always run the specs with
    bin/rspec" a convention; it was stored at once as one, and the lesson of the failure
    it was said about never named it."""
    from memory_chain.capture.detector import Detector
    from memory_chain.capture.transcripts import Turn

    def run(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
        roles = {"U": "user", "C": "tool_use", "T": "tool_result", "E": "tool_result"}
        detector = Detector()
        return [
            (d.category, d.text)
            for i, (r, text) in enumerate(pairs)
            for d in detector.turn(Turn(roles[r], text, f"s/{i:08d}", i + 1, "s", error=r == "E"))
        ]

    failing = (
        ("C", "Bash: bundle exec rspec"),
        ("E", "ActiveRecord::NoDatabaseError: database app_test does not exist"),
    )
    advice = ("U", "no, always run the specs with bin/rspec")
    verdict = score("no, always run the specs with bin/rspec", rule="correction")
    assert verdict is not None and verdict.category != "correction"  # the case this is about
    assert [] == run(*failing, advice)  # held, should the specs pass
    passed = (("C", "Bash: bundle exec rspec"), ("T", "42 examples, 0 failures"))
    assert [
        (
            "error-fix",
            "`ActiveRecord::NoDatabaseError: database app_test does not exist` -> "
            "Always run the specs with bin/rspec",
        )
    ] == run(*failing, advice, *passed)

"""How well the learning detector does on the labelled corpus (issue 12).

    .venv/bin/python benchmarks/capture_quality.py [--misses]

Runs memory_chain.capture.detector over benchmarks/capture_corpus.txt (the
corpus the rules were written against) and benchmarks/capture_heldout.txt
(written afterwards, never tuned on), one session per `## name` block, and
prints precision and recall per category of what it would *store*
(confidence >= 0.6) against the labels, as markdown tables for
benchmarks/README.md. --misses lists every false
positive and false negative. tests/test_capture_detector.py holds the
targets (precision >= 0.9 overall; recall >= 0.8 on remember, preference
and correction).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memory_chain.capture.detector import CATEGORIES, Detector
from memory_chain.capture.transcripts import Turn

CORPUS = Path(__file__).resolve().parent / "capture_corpus.txt"
#: Written after the rules were tuned on CORPUS, and not used to tune them.
HELDOUT = Path(__file__).resolve().parent / "capture_heldout.txt"
STORE_FROM = 0.6
ROLES = {"U": "user", "A": "assistant", "C": "tool_use", "T": "tool_result", "E": "tool_result"}


@dataclass
class Session:
    name: str
    turns: list[Turn] = field(default_factory=list)
    labels: list[set[str]] = field(default_factory=list)  # stored categories per turn
    candidates: list[set[str]] = field(default_factory=list)


def load(path: Path = CORPUS) -> list[Session]:
    sessions: list[Session] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            sessions.append(Session(line[3:].strip()))
            continue
        if not line or line.startswith("#"):
            continue
        role, sep, rest = line.partition(":")
        if role not in ROLES or not sep:
            raise ValueError(f"{path}:{number}: not a turn: {line!r}")
        text, stored, cand = rest.strip(), set[str](), set[str]()
        for mark, bucket in (("=>", stored), ("~>", cand)):
            if f" {mark} " in f" {text} ":
                text, _, labels = text.partition(mark)
                text = text.strip()
                bucket.update(x.strip() for x in labels.split(",") if x.strip())
        unknown = (stored | cand) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"{path}:{number}: unknown label {sorted(unknown)}")
        s = sessions[-1]
        i = len(s.turns)
        s.turns.append(Turn(ROLES[role], text, f"{s.name}#{i}", number, s.name, error=role == "E"))
        s.labels.append(stored)
        s.candidates.append(cand)
    return sessions


@dataclass
class Score:
    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    turns: int = 0
    empty: int = 0
    misses: list[str] = field(default_factory=list)

    def precision(self, c: str | None = None) -> float:
        tp = self.tp[c] if c else sum(self.tp.values())
        fp = self.fp[c] if c else sum(self.fp.values())
        return tp / (tp + fp) if tp + fp else 1.0

    def recall(self, c: str | None = None) -> float:
        tp = self.tp[c] if c else sum(self.tp.values())
        fn = self.fn[c] if c else sum(self.fn.values())
        return tp / (tp + fn) if tp + fn else 1.0


def score(sessions: list[Session]) -> Score:
    result = Score()
    for s in sessions:
        detector = Detector()
        for i, turn in enumerate(s.turns):
            got: set[str] = set()
            for d in detector.turn(turn):
                if d.confidence >= STORE_FROM:
                    got.add(d.category)
                    if d.kind != d.category:
                        got.add(d.kind)
            want = s.labels[i]
            result.turns += 1
            result.empty += not want
            for c in got & want:
                result.tp[c] += 1
            for c in got - want:
                result.fp[c] += 1
                result.misses.append(f"FP {c:<11} {s.name}: {turn.text}")
            for c in want - got:
                result.fn[c] += 1
                result.misses.append(f"FN {c:<11} {s.name}: {turn.text}")
    return result


def table(result: Score) -> str:
    rows = [
        "| category | labelled | stored right | stored wrong | precision | recall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in CATEGORIES:
        labelled = result.tp[c] + result.fn[c]
        rows.append(
            f"| {c} | {labelled} | {result.tp[c]} | {result.fp[c]} | "
            f"{result.precision(c):.2f} | {result.recall(c):.2f} |"
        )
    labelled = sum(result.tp.values()) + sum(result.fn.values())
    rows.append(
        f"| **all** | {labelled} | {sum(result.tp.values())} | {sum(result.fp.values())} | "
        f"**{result.precision():.2f}** | **{result.recall():.2f}** |"
    )
    return "\n".join(rows)


def main() -> None:
    for name, path in (("corpus", CORPUS), ("held-out set", HELDOUT)):
        sessions = load(path)
        result = score(sessions)
        print(
            f"{name} ({path.name}): {result.turns} turns in {len(sessions)} sessions, "
            f"{result.empty} ({100 * result.empty / result.turns:.0f} %) with nothing to store\n"
        )
        print(table(result))
        print()
        if "--misses" in sys.argv:
            print("\n".join(result.misses))
            print()


if __name__ == "__main__":
    main()

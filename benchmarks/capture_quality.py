"""How well the learning detector does on the labelled corpus (issue 12).

    .venv/bin/python benchmarks/capture_quality.py [--misses] [--only=PART ...] [--pooled]
        [--model=NAME] [--lexical]

Runs memory_chain.capture.detector over every part (PARTS: issue 12's
corpus and held-out set in benchmarks/; issue 24's generated, hand-written
and held-out parts in tests/corpora/), one session per `## name` block, and
prints precision and recall per category of what it would *store*
(confidence >= 0.6) against the labels, how often the scope was right and
a reason kept, as markdown tables for benchmarks/README.md. --misses lists
every false positive, false negative, wrong scope and lost reason;
--pooled adds the figures of all the parts run, counted together;
--model=NAME scores `capture --model NAME` (an `llm` model) instead of the
rules and the scorer. tests/test_capture_detector.py and
tests/test_capture_scorer.py hold the targets and the measured figures.

    .venv/bin/python benchmarks/capture_quality.py --baseline=REF [--only=PART ...] [--lexical]

runs the same parts a second time with memory_chain as it was at the git
revision REF (a temporary worktree, imported in a child process; the parts,
labels and scoring are this tree's), and prints the two side by side: the
same run of the previous release.

    .venv/bin/python benchmarks/capture_quality.py --transcripts PATH [PATH ...]

runs the whole capture (capture.capture, dry run) over real transcripts
(JSONL files, or directories searched for them: ~/.claude/projects for
Claude Code's) and counts the junk in what it would store: harness text
(what the agent runtime writes in the person's place, a file tool's own
error) and tool-output text (40 characters or more found in a tool result
and in none of the person's turns; an error-fix lesson's quoted error line
is not counted when it says that something went wrong, in the benchmark's
own words for that so that an older release is judged alike, and its fix
is read like any memory). No transcript is in the repository: they hold
people's work.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_chain.capture.detector import CATEGORIES, Detection, Detector
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
    scopes: list[dict[str, str]] = field(default_factory=list)  # category -> scope, if given
    reasons: list[str | None] = field(default_factory=list)  # a word the text must keep


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
        reason = None
        if " | reason: " in text:
            text, _, reason = text.rpartition(" | reason: ")
            reason = reason.strip()
        scopes: dict[str, str] = {}
        for mark, bucket in (("=>", stored), ("~>", cand)):
            if f" {mark} " in f" {text} ":
                text, _, labels = text.partition(mark)
                text = text.strip()
                for label in (x.strip() for x in labels.split(",") if x.strip()):
                    category, _, scope = label.partition("@")
                    bucket.add(category)
                    if scope:
                        scopes[category] = scope
        text = text.replace("\\n", "\n")
        unknown = (stored | cand) - set(CATEGORIES) - {"fact"}  # an older detector lacks fact
        if unknown:
            raise ValueError(f"{path}:{number}: unknown label {sorted(unknown)}")
        s = sessions[-1]
        i = len(s.turns)
        s.turns.append(Turn(ROLES[role], text, f"{s.name}#{i}", number, s.name, error=role == "E"))
        s.labels.append(stored)
        s.candidates.append(cand)
        s.scopes.append(scopes)
        s.reasons.append(reason)
    return sessions


@dataclass
class Score:
    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    turns: int = 0
    empty: int = 0
    misses: list[str] = field(default_factory=list)
    scope_right: int = 0
    scope_total: int = 0
    reason_kept: int = 0
    reason_total: int = 0
    # turn level, whatever the category: a labelled turn of which something was stored,
    # one that stores nothing but got something, and a labelled turn that got nothing
    kept_tp: int = 0
    kept_fp: int = 0
    kept_fn: int = 0

    def scope(self) -> float:
        return self.scope_right / self.scope_total if self.scope_total else 1.0

    def reasons(self) -> float:
        return self.reason_kept / self.reason_total if self.reason_total else 1.0

    def kept(self) -> tuple[float, float]:
        """Precision and recall of what is kept at all, whatever its category."""
        tp, fp, fn = self.kept_tp, self.kept_fp, self.kept_fn
        return (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0)

    def precision(self, c: str | None = None) -> float:
        tp = self.tp[c] if c else sum(self.tp.values())
        fp = self.fp[c] if c else sum(self.fp.values())
        return tp / (tp + fp) if tp + fp else 1.0

    def recall(self, c: str | None = None) -> float:
        tp = self.tp[c] if c else sum(self.tp.values())
        fn = self.fn[c] if c else sum(self.fn.values())
        return tp / (tp + fn) if tp + fn else 1.0


def score(sessions: list[Session], model: str | None = None) -> Score:
    """What the detector stores, turn by turn, against the labels. With ``model`` (an
    ``llm`` model name), the model finds the statements (capture --model) and the rules
    only the error-fix pairs, as capture runs it; where the model cannot answer, the
    rules stand in and ``result.misses`` says why."""
    result = Score()
    for s in sessions:
        detector = Detector()
        by_ref: dict[str, list[Detection]] | None = None
        if model is not None:
            from memory_chain.capture.model import extract

            answer = extract(s.turns, model)
            if answer.detections is None:
                result.misses.append(f"MODEL {s.name}: {answer.why}; the rules stood in")
            else:
                by_ref = {}
                for d in answer.detections:
                    by_ref.setdefault(d.ref, []).append(d)
        # each detection is counted on the turn it names (its ref): advice held for a
        # failure's lesson comes back later, as its own memory, when no lesson holds it
        # (revision 20), from a later turn or from finish()
        of: dict[str, list[Detection]] = {}
        for turn in s.turns:
            found = detector.turn(turn)
            if by_ref is not None and turn.role not in ("tool_use", "tool_result"):
                found = by_ref.get(turn.ref, [])
            for d in found:
                of.setdefault(d.ref, []).append(d)
        for d in detector.finish():
            of.setdefault(d.ref, []).append(d)
        for i, turn in enumerate(s.turns):
            got: set[str] = set()
            texts: list[str] = []
            want = s.labels[i]
            found = of.get(turn.ref, [])
            for d in found:
                if d.confidence >= STORE_FROM:
                    got.add(d.category)
                    if d.kind != d.category:
                        got.add(d.kind)
                    texts.append(d.text)
                    expected = s.scopes[i].get(d.category) or s.scopes[i].get(d.kind)
                    if expected and (d.category in want or d.kind in want):
                        result.scope_total += 1
                        result.scope_right += d.scope == expected
                        if d.scope != expected:
                            result.misses.append(f"SCOPE {d.scope}!={expected} {s.name}: {d.text}")
            reason = s.reasons[i]
            if reason and want and texts:  # of what was stored, did the reason stay
                result.reason_total += 1
                kept = any(reason.casefold() in t.casefold() for t in texts)
                result.reason_kept += kept
                if not kept and texts:
                    result.misses.append(f"REASON {reason} {s.name}: {texts}")
            result.turns += 1
            result.empty += not want
            if got and want:
                result.kept_tp += 1
            elif got and not s.candidates[i]:  # a candidate-only turn is neither
                result.kept_fp += 1
            elif want and not got:
                result.kept_fn += 1
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
    for c in (*CATEGORIES, *(["fact"] if "fact" not in CATEGORIES else [])):
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
    kept_p, kept_r = result.kept()
    rows.append(
        f"\nkept at all, whatever the category (turns): precision {kept_p:.2f}, recall {kept_r:.2f}"
    )
    if result.scope_total:
        rows.append(
            f"scope right: {result.scope_right}/{result.scope_total} = {result.scope():.2f}"
        )
    if result.reason_total:
        rows.append(
            f"reason kept: {result.reason_kept}/{result.reason_total} = {result.reasons():.2f}"
        )
    return "\n".join(rows)


CORPORA = Path(__file__).resolve().parents[1] / "tests" / "corpora"
#: Issue 24's parts: generated from two disjoint halves of frames and words (tune, choose),
#: a held-out part written by hand after tuning, a hand-written part to tune on (second
#: slice), and a second held-out part written after that tuning; in the third slice, hand
#: parts 3 to 9 (half of each trained on, half judged on: benchmarks/capture_train.py)
#: and held-out parts 3 to 5, each written after the weights it first measured, by
#: another method (each file's header says which, and how it has been used since). Since
#: session 44 held-out parts 1 to 12 are halved into the training too; 13 on are held out.
PARTS = {
    "issue 12 corpus": CORPUS,
    "issue 12 held-out": HELDOUT,
    "tune": CORPORA / "capture-tune.txt",
    "choose": CORPORA / "capture-choose.txt",
    "held-out": CORPORA / "capture-heldout.txt",
    "hand": CORPORA / "capture-hand.txt",
    "held-out 2": CORPORA / "capture-heldout2.txt",
    "hand 3": CORPORA / "capture-hand3.txt",
    "hand 4": CORPORA / "capture-hand4.txt",
    "hand 5": CORPORA / "capture-hand5.txt",
    "hand 6": CORPORA / "capture-hand6.txt",
    "hand 7": CORPORA / "capture-hand7.txt",
    "hand 8": CORPORA / "capture-hand8.txt",
    "hand 9": CORPORA / "capture-hand9.txt",
    "hand 10": CORPORA / "capture-hand10.txt",
    "hand 11": CORPORA / "capture-hand11.txt",
    "hand 12": CORPORA / "capture-hand12.txt",
    "hand 13": CORPORA / "capture-hand13.txt",
    "hand 14": CORPORA / "capture-hand14.txt",
    "hand 15": CORPORA / "capture-hand15.txt",
    "held-out 3": CORPORA / "capture-heldout3.txt",
    "held-out 4": CORPORA / "capture-heldout4.txt",
    "held-out 5": CORPORA / "capture-heldout5.txt",
    "held-out 6": CORPORA / "capture-heldout6.txt",
    "held-out 7": CORPORA / "capture-heldout7.txt",
    "held-out 8": CORPORA / "capture-heldout8.txt",
    "held-out 9": CORPORA / "capture-heldout9.txt",
    "held-out 10": CORPORA / "capture-heldout10.txt",
    "held-out 11": CORPORA / "capture-heldout11.txt",
    "held-out 12": CORPORA / "capture-heldout12.txt",
    "held-out 13": CORPORA / "capture-heldout13.txt",
    "held-out 14": CORPORA / "capture-heldout14.txt",
    "held-out 15": CORPORA / "capture-heldout15.txt",
    "held-out 16": CORPORA / "capture-heldout16.txt",
    "held-out 17": CORPORA / "capture-heldout17.txt",
    "held-out 18": CORPORA / "capture-heldout18.txt",
    "held-out 19": CORPORA / "capture-heldout19.txt",
    "held-out 20": CORPORA / "capture-heldout20.txt",
    "held-out 21": CORPORA / "capture-heldout21.txt",
    "held-out 22": CORPORA / "capture-heldout22.txt",
    "held-out 23": CORPORA / "capture-heldout23.txt",
    "held-out 24": CORPORA / "capture-heldout24.txt",
    "told fixes": CORPORA / "capture-told-fixes.txt",
}


#: Text the agent runtime writes in the person's place or around a tool call, and a file
#: tool's own complaints (the benchmark's own list, so an older release is judged alike).
_HARNESS = re.compile(
    r"<(?:system-reminder|command-name|command-message|command-args|local-command-std\w+|"
    r"bash-input|bash-std\w+|task-notification|user-prompt-submit-hook|ide_\w+|"
    r"tool_use_error)>|Caveat: The messages below|\[Request interrupted|"
    r"This session is being continued|No response requested|API Error: \d{3}|"
    r"File has not been read yet|String to replace not found|"
    r"Found \d+ matches of the string to replace|The user doesn't want to proceed|"
    r"was blocked by a hook|Permission to use \w+ has been denied"
)
#: A run of this many characters of a memory found in a tool result makes it tool output.
TOOL_RUN = 40
#: What a lesson's quoted error line says when it says that something went wrong: the
#: benchmark's own words, not the detector's, so that an older release is judged alike.
_WENT_WRONG = re.compile(
    r"error|exception|traceback|fail|fatal|panic|abort|denied|refused|forbidden|"
    r"not found|no such|cannot|can't|could not|couldn't|unable|invalid|missing|undefined|"
    r"unexpected|unknown|timed out|timeout|killed|segmentation|exit (?:code|status) [1-9]",
    re.I,
)
_ERRNO = re.compile(r"\bE[A-Z]{4,}\b")


def junk(text: str, category: str, person: str, tools: str) -> str | None:
    """Why a memory's ``text`` is junk ("harness" or "tool output"), or None. ``person``
    and ``tools`` are the person's turns and the tool results, whitespace flattened."""
    if _HARNESS.search(text):
        return "harness"
    flat = " ".join(text.split())
    if category == "error-fix" and flat.startswith("`") and "` -> " in flat:
        # a lesson quotes its error line (what went wrong, as inert text): tool output
        # unless it says that something went wrong; what fixed it is read as any memory
        line, flat = flat[1:].split("` -> ", 1)
        line = line.removesuffix("...")
        if not (_WENT_WRONG.search(line) or _ERRNO.search(line)):
            return "tool output"
    for start in range(0, max(len(flat) - TOOL_RUN, 0) + 1, 10):
        run = flat[start : start + TOOL_RUN]
        if len(run) == TOOL_RUN and run in tools and run not in person:
            return "tool output"
    return None


def transcript_files(paths: list[str]) -> list[Path]:
    """The JSONL files named, and those under the directories named, in order."""
    out: list[Path] = []
    for name in paths:
        path = Path(name).expanduser()
        out.extend(sorted(path.rglob("*.jsonl")) if path.is_dir() else [path])
    return out


def junk_report(files: list[Path]) -> list[dict[str, Any]]:
    """Per transcript: its turns, the person's turns, what capture would store (memories
    and candidates) and which of it is junk (``junk``)."""
    import tempfile

    from memory_chain.capture import transcripts
    from memory_chain.capture.capture import capture
    from memory_chain.workspace.scopes import Workspace

    rows: list[dict[str, Any]] = []
    for path in files:
        batch = transcripts.read(path)
        own = [t for t in batch.turns if t.role in ("user", "note") and not t.meta]
        person = " ".join(" ".join(t.text.split()) for t in own)
        tools = " ".join(" ".join(t.text.split()) for t in batch.turns if t.role == "tool_result")
        with tempfile.TemporaryDirectory(prefix="mc-junk-") as tmp:
            report = capture(Workspace(Path(tmp) / "user", None), path, dry_run=True)
        found = [*report.captured, *report.candidates]
        why = [(m, junk(str(m["text"]), str(m["category"]), person, tools)) for m in found]
        rows.append(
            {
                "transcript": str(path),
                "turns": len(batch.turns),
                "person": len(own),
                "stored": len(report.captured),
                "candidates": len(report.candidates),
                "harness": sum(1 for _, w in why if w == "harness"),
                "tool output": sum(1 for _, w in why if w == "tool output"),
                "junk": [f"{w}: {m['text']}" for m, w in why if w],
            }
        )
    return rows


def print_junk(rows: list[dict[str, Any]]) -> None:
    print("| transcript | turns | person's turns | stored | candidates | harness | tool output |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [Path(r["transcript"]).name] + [
            str(r[k]) for k in ("turns", "person", "stored", "candidates", "harness", "tool output")
        ]
        print("| " + " | ".join(cells) + " |")
    n = max(len(rows), 1)
    bad = sum(r["harness"] + r["tool output"] for r in rows)
    print(f"\njunk per transcript: {bad / n:.2f} ({bad} in {len(rows)} transcripts)")
    for r in rows:
        for line in r["junk"]:
            print(f"JUNK {Path(r['transcript']).name}: {line}")


def summary(result: Score) -> dict[str, object]:
    """A part's figures as JSON (for --json and --baseline)."""
    kept_p, kept_r = result.kept()
    return {
        "precision": result.precision(),
        "recall": result.recall(),
        "kept": [kept_p, kept_r],
        "scope": [result.scope_right, result.scope_total],
        "categories": {
            c: [result.precision(c), result.recall(c)]
            for c in CATEGORIES
            if result.tp[c] + result.fp[c] + result.fn[c]
        },
    }


def baseline(ref: str, argv: list[str]) -> dict[str, dict[str, object]]:
    """The figures of the same parts with memory_chain as at git revision ``ref``: a
    temporary worktree, imported by this script in a child process (``--json``)."""
    import json
    import shutil
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parent.parent
    tmp = Path(tempfile.mkdtemp(prefix="mc-baseline-"))
    tree = tmp / "tree"
    try:
        added = subprocess.run(
            ["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(tree), ref],
            capture_output=True,
            text=True,
        )
        if added.returncode != 0:
            why = (added.stderr.strip().splitlines() or ["git worktree add failed"])[-1]
            sys.exit(f"capture_quality: cannot check out {ref!r}: {why}")
        (tmp / "pkg").mkdir()
        (tmp / "pkg" / "memory_chain").symlink_to(tree)
        env = {**os.environ, "PYTHONPATH": str(tmp / "pkg")}
        args = [a for a in argv if not a.startswith("--baseline=")]
        run = subprocess.run(
            [sys.executable, __file__, *args, "--json"], env=env, capture_output=True, text=True
        )
        if run.returncode != 0:
            why = (run.stderr.strip().splitlines() or ["no output"])[-1]
            sys.exit(f"capture_quality: the run at {ref!r} failed: {why}")
        figures: dict[str, dict[str, object]] = json.loads(run.stdout.splitlines()[-1])
        return figures
    finally:
        subprocess.run(
            ["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
        )
        shutil.rmtree(tmp, ignore_errors=True)


def _cell(f: dict[str, object]) -> str:
    kept = f["kept"]
    scope = f["scope"]
    assert isinstance(kept, list) and isinstance(scope, list)
    return (
        f"{f['precision']:.3f} / {f['recall']:.3f}, {kept[0]:.3f} / {kept[1]:.3f}, "
        f"{scope[0]}/{scope[1]}"
    )


def main() -> None:
    if "--transcripts" in sys.argv:
        names = sys.argv[sys.argv.index("--transcripts") + 1 :]
        files = transcript_files([n for n in names if not n.startswith("--")])
        if not files:
            sys.exit("capture_quality: no transcript (JSONL) found in " + " ".join(names))
        print_junk(junk_report(files))
        return
    only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]
    models = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--model=")]
    if "--lexical" in sys.argv:  # the scorer without embeddings, as without the extra
        os.environ["MEMORY_CHAIN_SEMANTIC"] = "0"
    from memory_chain.capture import semantic

    semantic.begin(None)  # every statement embedded (the hooks' budget is a cost cap)
    print("scorer:", "semantic" if semantic.wanted() else "lexical", "\n")
    pooled, names = Score(), []
    figures: dict[str, dict[str, object]] = {}
    for name, path in PARTS.items():
        if (only and name not in only) or not path.exists():
            continue
        sessions = load(path)
        result = score(sessions, models[0] if models else None)
        how = f", model {models[0]}" if models else ""
        print(
            f"{name} ({path.name}{how}): {result.turns} turns in {len(sessions)} sessions, "
            f"{result.empty} ({100 * result.empty / result.turns:.0f} %) with nothing to store\n"
        )
        print(table(result))
        print()
        if "--misses" in sys.argv:
            print("\n".join(result.misses))
            print()
        pool(pooled, result)
        names.append(name)
        figures[name] = summary(result)
    if len(names) > 1:
        figures["pooled"] = summary(pooled)
    if "--pooled" in sys.argv and len(names) > 1:
        print(f"pooled ({', '.join(names)}):\n")
        print(table(pooled))
    refs = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--baseline=")]
    if refs:
        before = baseline(refs[0], sys.argv[1:])
        print(
            f"\nbefore ({refs[0]}) and now, by category precision / recall, kept at all, scope:\n"
        )
        print(f"| part | {refs[0]} | now |")
        print("|---|---|---|")
        for name, now in figures.items():
            was = before.get(name)
            print(f"| {name} | {_cell(was) if was else '-'} | {_cell(now)} |")
    if "--json" in sys.argv:
        import json

        print(json.dumps(figures))


def pool(into: Score, result: Score) -> None:
    """Add ``result``'s counts to ``into`` (figures over several parts at once)."""
    into.tp.update(result.tp)
    into.fp.update(result.fp)
    into.fn.update(result.fn)
    for name in ("turns", "empty", "scope_right", "scope_total", "reason_kept", "reason_total"):
        setattr(into, name, getattr(into, name) + getattr(result, name))
    into.kept_tp += result.kept_tp
    into.kept_fp += result.kept_fp
    into.kept_fn += result.kept_fn


if __name__ == "__main__":
    main()

"""The learning detector: rules that find what in a conversation is worth remembering.

Seed 000 section 4. Each user statement is split into sentences; a sentence
is dropped when it is a question, a hypothetical, reported speech or a
negated claim, and otherwise matched against one rule per category, in
order: explicit remember requests, identity, decisions, commitments,
corrections, tool usage, project conventions, preferences. A sentence no
rule claims goes to the scorer (capture.scorer, issue 24: a linear model
over general features of a statement), and a long sentence's clauses one
by one. Error-fix pairs come from shell commands: a failing command, what
was run or edited after it, and the same command succeeding; the runtime's
own complaints and advice about something else are never lessons.

Confidence (seed 000 section 4.2): an explicit statement 0.9, a correction
seen before (in this session or as an earlier candidate) 0.8, an error-fix
pair 0.7, an implicit preference 0.5, a single correction 0.4. At most
``MAX_PER_TURN`` detections per turn, the surest.

What is *not* a user statement: the assistant's words (what it proposed),
tool results and fetched pages (untrusted: they never become a memory;
instruction-like text in a failed one, whose error line could be kept, is
counted), text the agent runtime inserted,
a subagent's conversation, fenced code and quoted lines. A turn that holds
a secret yields nothing, whatever else it says: the secret filter decides
before anything is kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, NamedTuple

from memory_chain.chain.format.secrets import scan as scan_secrets
from memory_chain.workspace.dedup import normalize, profile, same

from .transcripts import Turn, person_text, runtime_text

__all__ = [
    "CATEGORIES",
    "CHAIN_TYPES",
    "MAX_PER_TURN",
    "SECTION_OF",
    "Detection",
    "Detector",
    "detect",
    "statements_of",
]

MAX_PER_TURN: Final = 3
MAX_MEMORY_CHARS: Final = 240

#: Category -> MEMORY.md section (seed 000 section 3.3, plus Commitments and Notes).
SECTION_OF: Final = {
    "remember": "Notes",
    "identity": "People & Roles",
    "decision": "Architecture Decisions",
    "commitment": "Commitments",
    "correction": "Corrections",
    "tool": "Tool Usage",
    "convention": "Project Conventions",
    "preference": "User Preferences",
    "error-fix": "Error Patterns",
    "fact": "Facts",
}
CATEGORIES: Final = tuple(SECTION_OF)
#: What goes to the chain, and as which entry type (seed 001 tier 3).
CHAIN_TYPES: Final = {
    "identity": "identity",
    "decision": "decision",
    "commitment": "commitment",
    "error-fix": "lesson",
}

EXPLICIT: Final = 0.9
REPEATED: Final = 0.8
ERROR_FIX: Final = 0.7
IMPLICIT: Final = 0.5
SINGLE_CORRECTION: Final = 0.4


class Detection(NamedTuple):
    """One thing worth remembering, normalised, with where it came from."""

    text: str  # the memory, one short line ("Use pnpm, not npm")
    category: str  # one of CATEGORIES
    confidence: float
    scope: str  # user, project or local
    ref: str  # the source record (Turn.ref)
    kind: str  # for "remember": the category of what is to be remembered, else category
    session: str | None = None
    ts: str | None = None
    #: where the words came from (workspace.provenance): ``person`` for the person's own
    #: explicit "remember ...", ``capture`` for what a rule found in their words.
    origin: str = "capture"
    #: the category the rules read in the sentence, before the scorer named it (None: no
    #: rule fired); never written anywhere: the advice held for a failure's lesson reads it
    rule: str | None = None

    @property
    def section(self) -> str:
        return SECTION_OF[self.kind if self.category == "remember" else self.category]

    def with_confidence(self, value: float) -> Detection:
        return self._replace(confidence=value)


class _Sightings:
    """Candidates met before, (text, ref), found again by what ``same()`` needs to match
    (workspace.dedup): the same normalised text, or the same numbers and one-letter names.
    A candidate is compared with those only, not with every one met in a long session."""

    __slots__ = ("_by_norm", "_by_values")

    def __init__(self, met: Iterable[tuple[str, str]] = ()) -> None:
        self._by_norm: dict[str, list[tuple[str, str]]] = {}
        self._by_values: dict[tuple[frozenset[str], frozenset[str]], list[tuple[str, str]]] = {}
        for text, ref in met:
            self.add(text, ref)

    def add(self, text: str, ref: str) -> None:
        p = profile(text)
        self._by_norm.setdefault(p.norm, []).append((text, ref))
        self._by_values.setdefault((p.numbers, p.names), []).append((text, ref))

    def met_elsewhere(self, text: str, ref: str) -> bool:
        """Whether a candidate of another turn than ``ref`` is the same as ``text``."""
        p = profile(text)
        for bucket in (
            self._by_norm.get(p.norm, ()),
            self._by_values.get((p.numbers, p.names), ()),
        ):
            if any(r != ref and same(text, t) for t, r in bucket):
                return True
        return False

    def drop(self, ref: str) -> None:
        """Forget the candidates of one turn (it held a secret)."""
        for norm, bucket in self._by_norm.items():
            self._by_norm[norm] = [m for m in bucket if m[1] != ref]
        for values, bucket in self._by_values.items():
            self._by_values[values] = [m for m in bucket if m[1] != ref]


@dataclass(slots=True)
class Detector:
    """Runs the rules over turns in order; remembers corrections to spot repeats.

    ``earlier`` are (text, ref) of candidates already kept (from the daily
    files): a correction or implicit preference that recurs, from another
    record, is promoted to REPEATED.
    """

    earlier: list[tuple[str, str]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    _seen: list[tuple[str, str]] = field(default_factory=list)  # candidates met in this run
    _sightings: _Sightings | None = None  # _seen and earlier, looked up as same() needs
    _error: tuple[str, str] | None = None  # (failing command, error signature)
    _since: list[str] = field(default_factory=list)  # commands run since that error
    _command: str | None = None  # the last tool call, until its result arrives
    _guidance: str | None = None  # a user's advice given after the error
    # the advice held for the error's lesson, each a memory of its own should the hold end
    # without a lesson that holds it (revision 20)
    _held: list[Detection] = field(default_factory=list)
    _error_text: str = ""  # the failing tool result (a fix it suggests is not a lesson)
    _said: list[str] = field(default_factory=list)  # the person's own words since the error
    # what the agent's last turn asked, when it ended asking (the person's next turn answers)
    _asked: str | None = None

    def run(self, turns: Iterable[Turn]) -> list[Detection]:
        out: list[Detection] = []
        last: list[Detection] = []  # what the person's last turn gave
        last_ref: str | None = None  # and which turn that was
        for turn in turns:
            if self._forgets(turn):
                # "Don't remember that" / "forget that": what was just found goes, and the
                # request itself is never stored; advice of that turn held for a lesson too
                out = [d for d in out if d not in last]
                taken = [d for d in self._held if d.ref == last_ref]
                if taken:
                    self._held = [d for d in self._held if d.ref != last_ref]
                    if self._guidance in {d.text for d in taken}:
                        self._guidance = None
                self.counts["forgotten"] += len(last) + len(taken)
                last, last_ref = [], None
                if _replaces_what_was_said(turn):
                    # "scratch that, we use pnpm now": taken back, and said again otherwise
                    # (revision 22): the rest of the turn is read as a correction
                    found = self._said_or_done(turn)
                    out.extend(found)
                    last, last_ref = list(found), turn.ref
                continue
            found = self._said_or_done(turn)
            out.extend(found)
            if turn.role in ("user", "note") and not turn.meta and not turn.sidechain:
                # a forget request takes back the person's turn just before it, only
                last, last_ref = list(found), turn.ref
        return out + self.finish()

    def finish(self) -> list[Detection]:
        """What is still held when what is read ends: the advice held for the lesson of a
        command that has not passed yet, each a memory of its own (revision 20; the
        detector's state does not outlive a capture, so the lesson could never come)."""
        return self._release()

    def _release(self, kept: str | None = None) -> list[Detection]:
        """The advice held for a lesson, less the one whose text ``kept`` is in the lesson:
        each a memory of its own (revision 20), and none held any more."""
        held, self._held = self._held, []
        return [d for d in held if d.text != kept]

    def _forgets(self, turn: Turn) -> bool:
        if turn.role not in ("user", "note") or turn.meta or turn.sidechain:
            return False
        if _FORGET_WORDS.search(turn.text) is None:
            return False  # every forget request holds one of these words: skip own_words
        return _FORGET.match(own_words(person_text(turn.text)).strip()) is not None

    def turn(self, turn: Turn) -> list[Detection]:
        if self._forgets(turn):
            return []  # never stored; run() takes back what the turn before it gave
        return self._said_or_done(turn)

    def _said_or_done(self, turn: Turn) -> list[Detection]:
        """turn() of a turn that is not a forget request."""
        asked = self._asked
        if turn.role == "assistant" and not turn.meta and not turn.sidechain:
            self._asked = _question_asked(turn.text)
        elif not turn.meta and not turn.sidechain:
            self._asked = None  # answered, or work went on: the question is behind
        if turn.role == "tool_use":
            if self._command is not None:
                self._unanswered(self._command)
            self._command = turn.text
            return []
        if turn.role == "tool_result":
            return self._tool_result(turn)
        if turn.role not in ("user", "note") or turn.meta or turn.sidechain:
            if turn.role == "assistant":
                self.counts["assistant"] += 1
            return []
        found: list[Detection] = []
        text = person_text(turn.text)  # the runtime's blocks in it are not the person's
        if runtime_text(text) or not text.strip():  # harness text in the person's place
            self.counts["runtime"] += 1
            return []
        words = own_words(text)
        if self._error is not None:
            self._said.append(words)
        if len(words) < len(text.strip()) // 2:
            self.counts["quoted"] += 1
        said = [_OK_TAG.sub("", x) for x in _told_fixes_joined(sentences(words))]
        ruled = _items_under_rules(words)
        short = None
        if asked is not None and said and _replies_to_offer(said[0], asked):
            # "Want me to add tests too?" "no, that's all for now": the work at hand
            # declined or let go ahead (revision 25); what the turn says after it is read
            self.counts["reply-to-offer"] += 1
            said, asked = said[1:], None
        if asked is not None and said:
            if len(said) == 1 and len(said[0].split()) <= MAX_ANSWER_WORDS:
                # "1.22" after "Which Go version?", "a 2017 Skoda Octavia estate" after
                # "Which car is it?": read with the question when it says nothing alone
                short = said[0]
            # "no, we don't do discounts" after "Should I offer a discount?" answers the
            # question: the "no" is not a correction, what follows it is the statement
            said[0] = _answer(said[0], asked)
        for n, sentence in enumerate(said):
            answer = n == 0 and short is not None and asked is not None
            # a short answer is read with its question before the forms read it alone
            # (revision 27: "50, sempre 50" after "Aulas de 45 ou 60 minutos?")
            d = self._sentence(sentence, turn, forms=not answer)
            if d is None and answer and short is not None and asked is not None:
                d = self._answered(short, asked, turn)
                if (
                    d is None
                    and _by_form(sentence, None) is not None
                    and not not_a_statement(sentence)
                    and not errand(sentence)
                ):
                    d = self._sentence(sentence, turn)  # read once more, by the forms
            if (
                (d is None or d.confidence < LEARNED or d.category in ("fact", "correction"))
                and ruled
                and _ruled(sentence, ruled)
            ):
                # an item of a list the person heads as rules ("house rules:\n- invoices
                # in EUR only"): a rule of the place, however short, not a fact, nor a
                # correction ("- no exclamation marks in headlines") (revision 27)
                d = self._detection(
                    ("convention", "convention", _unfilled(sentence).strip(), LEARNED), turn
                )
            if d is not None and not any(same(d.text, f.text) for f in found):
                found.append(d)
        if len(found) > MAX_PER_TURN:
            # the surest MAX_PER_TURN, in the order said (revision 26: not the first ones,
            # which dropped "I'm going to demo it on Friday" at 0.9 after three finds the
            # scorer made at 0.7)
            surest = sorted(found, key=lambda d: -d.confidence)[:MAX_PER_TURN]
            found = [d for d in found if d in surest]
        # The secret filter: a turn that holds a secret yields nothing at all (it
        # is scanned only when a rule fired: the answer is the same, and cheaper).
        if found and scan_secrets(turn.text):
            self.counts["secret"] += 1
            self._seen = [seen for seen in self._seen if seen[1] != turn.ref]
            if self._sightings is not None:
                self._sightings.drop(turn.ref)
            return []
        if self._error is not None and found:
            # advice given while a command is failing, about that failure (given in the
            # person's first ADVICE_TURNS turns after it, or sharing a word with the
            # command or its error line), becomes part of the lesson when the command
            # passes, not a memory of its own; later advice about anything else is a
            # memory like any other (revision 18)
            failed, sig = self._error
            soon = len(self._said) <= ADVICE_TURNS
            # advice as the rules read it, whatever the scorer named it (revision 19: "no,
            # always run the specs with bin/rspec" is a correction to the rules, and the
            # scorers call it a convention)
            advice = [
                d
                for d in found
                if (d.category in _ADVICE or d.rule in _ADVICE)
                and (soon or _related(d.text, failed, sig, []))
            ]
            if advice:
                self._guidance = advice[0].text
                self._held.extend(advice)
                found = [d for d in found if d not in advice]
        return found

    # -- statements --------------------------------------------------------

    def _sentence(self, sentence: str, turn: Turn, *, forms: bool = True) -> Detection | None:
        """The memory in one sentence of a person's turn (``forms``: read by the forms of
        revisions 26 and 27 too)."""
        if not_a_statement(sentence):
            self.counts["not-a-statement"] += 1
            return None
        if errand(sentence):
            self.counts["errand"] += 1
            return None
        hit = judged(sentence)
        if hit is _VETOED:
            self.counts["vetoed"] += 1
            return None
        hit = hit or _in_a_clause(sentence)
        if forms:
            hit = _by_form(sentence, hit)
        if decided(sentence) and not errand(sentence):
            if hit is None and len(sentence.split()) >= LEARNED_MIN_WORDS:
                # "decidimos usar drizzle para la cola": a choice made, whatever else the
                # rules and the scorer make of it
                text = _FILLER.sub("", sentence.strip()).strip()
                hit = ("decision", "decision", text, LEARNED)
            elif hit is not None and hit[0] in _MAY_BE_DECIDED:
                # "we went with node 22 for everything, use that": the choice is the memory
                hit = ("decision", "decision", hit[2], hit[3])
        elif hit is not None and hit[0] == "decision" and _UNDECIDED.search(sentence):
            return None  # "nothing's decided about the stall yet": no choice to keep
        if hit is None:
            return None
        if _todays(hit[0], sentence):
            # "don't change the tests in this PR": how to do today's piece of work; "the
            # tests are flaky since yesterday": today's news
            self.counts["one-off"] += 1
            return None
        rule = classify(sentence)  # as judged() read it (cached)
        return self._detection(hit, turn, rule[0] if rule is not None else None)

    def _answered(self, answer: str, asked: str, turn: Turn) -> Detection | None:
        """A short answer read with the question it answers (WORKSPACE.md 12.2, revision
        14): "Which Go version is it on?" and "1.22" are the statement "Which Go version is
        it on? 1.22", kept from the scorer's ``answer`` threshold. The agent's words become
        part of a memory only with the person's answer after them, only from a question of
        at most MAX_QUESTION_WORDS words that does not ask what to work on, and never one
        that reads as an instruction to the agent or holds a secret."""
        if (
            _NO_ANSWER.fullmatch(answer)  # "yes pls", "not yet", "no thanks"
            or _DEFERRED.match(answer)  # "let me check", "no idea", "ask Priya"
            or _INDIFFERENT.match(answer)  # "whatever", "either is fine"
            or not_a_statement(answer)  # "not sure", "which one?"
            or _TASK_QUESTION.search(asked)  # "Which box first?": today's task
            or _reports_malfunction(answer)
            or len(asked.split()) > MAX_QUESTION_WORDS
            or instruction_like(asked)
            or scan_secrets(asked)
        ):
            return None
        question = _FILLER.sub("", asked)
        if _WENT.match(question):
            return None  # "Was the deploy green?" "no, red": how something went
        open_ = _OPEN_QUESTION.match(question) is not None
        if not open_ and _NEXT_ACT.search(question) and not _ANSWER_NORM.search(answer):
            # "Should I make a tab for them?" "yes, call it Wiener": a go-ahead for the work
            # at hand; "Should I round the totals?" "always": a rule of the place
            return None
        statement = f"{asked} {answer}"
        hit = learned(statement, answer=True)
        if hit is None and not open_ and _ANSWER_NORM.search(_NEVER_MIND.sub("", answer)):
            # "Should I mention brand names of the creams?" "never": a yes-or-no question
            # about how to do something, answered with a rule word, is a rule of the place
            # however unsure the scorer is of a question and one word (revision 18)
            hit = ("convention", "convention", _FILLER.sub("", statement.strip()).strip(), LEARNED)
        if hit is None:
            if (
                not _VALUE_QUESTION.match(question)
                or _NEXT_ACT.search(question)
                or _TODAY.search(question)
                or _CARRIES_PAYLOAD.search(statement)
            ):
                return None
            # a question for a value that stands ("Which wiki do you use?"), not about what
            # the agent is to do next ("Which page should I copy?") nor about how today went
            # ("Which tests failed?"), answered: a fact the agent asked for, however unsure
            # the scorer is of a question and a name
            hit = ("fact", "fact", _FILLER.sub("", statement.strip()).strip(), LEARNED)
        # The scorer says whether it is worth keeping; what as, the question says: a value
        # given for an open question ("Which CMS?" "Ghost") is how things are, a fact; an
        # answer with "always", "only", "never", ..., or one to a yes-or-no question about
        # how to do something ("Should timestamps go in the notes?" "always"), a rule of
        # the place, a convention.
        _, _, text, confidence = hit
        if _TASTE.search(question):
            category = "preference"  # "Any foods you can't stand?" "coriander"
        elif _ANSWER_NORM.search(answer) or not open_ or _PRESCRIBED.search(question):
            category = "preference" if _own_reason(answer) else "convention"
        else:
            category = "fact"
        found = self._detection((category, category, text, confidence), turn)
        if (
            found is not None
            and found.scope == "project"
            and category == "fact"
            and _ASKS_YOU.search(question)
            and not _PROJECT.search(statement)
            and not _WORK_THING.search(question)
        ):
            # "Which bank are you with?" "Triodos": asked about the person, not the work
            found = found._replace(scope="user")
        return found

    def _detection(
        self, hit: tuple[str, str, str, float], turn: Turn, rule: str | None = None
    ) -> Detection | None:
        """The Detection of a find in a person's turn (None when its text is empty or too
        long), ``rule`` the category the rules read in its sentence; a candidate seen before
        in another turn is promoted."""
        category, kind, text, confidence = hit
        text = tidy(text)
        if not text or len(text) > MAX_MEMORY_CHARS:
            return None
        if confidence < EXPLICIT:  # a candidate: promoted when it recurs
            if self._sightings is None:
                self._sightings = _Sightings(self.earlier)
            if self._sightings.met_elsewhere(text, turn.ref):
                confidence = REPEATED
            self._seen.append((text, turn.ref))
            self._sightings.add(text, turn.ref)
        scope = scope_of(category if category != "remember" else kind, text)
        # the person's own explicit "remember ..." (a rule matched it) is theirs
        origin = "person" if category == "remember" and confidence >= EXPLICIT else "capture"
        return Detection(
            text, category, confidence, scope, turn.ref, kind, turn.session, turn.ts, origin, rule
        )

    # -- error, then fix ---------------------------------------------------

    def _unanswered(self, command: str) -> None:
        """A call whose result never came before the next call (a transcript written by
        hand leaves out what an edit or a quiet command printed): it passed without a
        word, a step on the way to the fix of a failure waiting for one, never the pass
        that closes it. ``go mod tidy`` run at the person's word and then ``go build``
        again: the lesson is made when ``go build`` passes (a result was seen), from
        ``go mod tidy``, and not when the next call shows ``go mod tidy`` was quiet."""
        self._command = None
        if self._error is None:
            return
        tool, argument = _tool_parts(command)
        if tool in EDIT_TOOLS:
            if argument:
                self._since.append(f"edit:{argument}")
        elif tool in SHELL_TOOLS:
            self._since.append(command)

    def _tool_result(self, turn: Turn) -> list[Detection]:
        command, self._command = self._command, None
        failure = (
            turn.error
            or _looks_failed(turn.text)
            or (command is not None and _failed_behind_a_pipe(command, turn.text))
        )
        if not failure and (self._error is None or command is None):
            return []  # a call that passed with no failure waiting for its fix
        tool, argument = _tool_parts(command)
        shell = command is not None and tool in SHELL_TOOLS
        if failure:
            if instruction_like(turn.text):
                self.counts["untrusted-instruction"] += 1
            if not shell or _HARNESS_ERROR.search(turn.text, 0, 600):
                # a file tool's complaint ("File has not been read yet") is the harness's
                # bookkeeping, not a lesson about the project
                self.counts["harness-error"] += 1
                return []
            sig = error_signature(turn.text)
            if self._error is None or command != self._error[0]:
                self._error = (command or "", sig) if sig else None
                self._error_text = turn.text if sig else ""
                self._since = []
                self._said = []
                self._guidance = None
                return self._release()  # another failure: the advice held is kept as said
            return []
        if self._error is None or command is None:
            return []
        if not shell:
            if tool in EDIT_TOOLS and argument:
                self._since.append(f"edit:{argument}")  # a file changed since the error
            return []
        failed, sig = self._error
        said = " ".join(self._said)
        replaces = _replaces(command, failed, said)
        if _same_target(command, failed) and any(not _same_command(c, failed) for c in self._since):
            # the failing command run again with other options after a fix: the fix is
            # what came between, the run only shows it worked
            command = failed
        if not (_same_command(command, failed) or _extends(command, failed) or replaces):
            steps = _steps(command)
            if len(steps) > 1 and (_same_command(steps[-1], failed) or _extends(steps[-1], failed)):
                # "export ANDROID_HOME=... && ./gradlew build": the steps before the failing
                # command, run in the same call, are fixes as if run one by one before it
                self._since.extend(steps[:-1])
                command = steps[-1]
        if _same_command(command, failed) or _extends(command, failed) or replaces:
            fixes = [c for c in self._since if not _same_command(c, failed)]
            if _extends(command, failed) or replaces:
                # the failing command run another way: that way is the fix (and the
                # files edited on the way to it)
                fixes = [*(c for c in fixes if c.startswith("edit:")), command]
            self._error, self._since, self._said = None, [], []
            if any(_suggested_by(c, self._error_text) and not _said_by(c, said) for c in fixes):
                # The fix is what the failing tool's own output told the agent to run: tool
                # output must not become a lesson (a poisoned error line would persist).
                self.counts["tool-suggested-fix"] += 1
                self._guidance = None
                return self._release()
            fix = _fix_text(fixes[:2]) if fixes else None
            guidance, self._guidance = self._guidance, None
            if guidance is not None and not _related(guidance, failed, sig, fixes):
                self.counts["unrelated-advice"] += 1
                guidance = None  # an unrelated remark is not how the error was fixed
            if fix is None and guidance is None:
                return self._release()
            text = _lesson(sig, fix, guidance)
            if text is None:
                return self._release()
            scope = scope_of("error-fix", text)
            d = Detection(text, "error-fix", ERROR_FIX, scope, turn.ref, "error-fix")
            return [d._replace(session=turn.session, ts=turn.ts), *self._release(guidance)]
        self._since.append(command)
        return []


def detect(turns: Iterable[Turn], *, earlier: Sequence[tuple[str, str]] = ()) -> list[Detection]:
    """The detections of ``turns`` (one session, in order)."""
    return Detector(earlier=list(earlier)).run(turns)


# -- sentences and what is not a statement -----------------------------------

_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?(^ {0,3}\1[ \t]*$|\Z)", re.M | re.S)
#: Where a sentence ends: after ".", "!" or "?" and a space, before anything a sentence can
#: start with (people type to an agent in lower case: "great. btw, every change needs a
#: review" is two sentences), unless the word before the point is an abbreviation
#: ("e.g.", "etc.", "vs.") or a single letter (an initial); and at a line break.
_SENTENCE_END: Final = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)(?<!\bfig\.)"
    r"(?<!\b[A-Za-z]\.)\s+(?=[\w¿¡\"'`(])|(?<=\?)\s+|\n+"
)
#: A list item's mark: "- ", "* ", "1. ".
_ITEM_MARK: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


_ZERO_WIDTH: Final = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_MD_LINK: Final = re.compile(r"!?\[([^\]\n]{0,200})\]\([^)\s]{0,500}(?:\s+\"[^\"]*\")?\)")
#: A request about text that follows it: what follows is the text's, not the person's.
_ABOUT_TEXT: Final = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|please|pls|can you|could you|would you|will you|can u|"
    r"i need you to|i want you to|help me)[,\s]+)*"
    r"(?:summari[sz]e|translate|review|explain|rewrite|proofread|paraphrase|analy[sz]e|check|"
    r"look at|read|fix|reply to|respond to|answer|classify|tl;?dr|what does|what do you make of|"
    r"what's wrong with|debug|extract|format|shorten|condense|compare)\b",
    re.I,
)
#: What a request names when the text it is about comes after it: this, the following,
#: below, or a kind of text (an e-mail, a message, a comment, a draft, ...).
_TEXT_TO_COME: Final = re.compile(
    r"\b(?:this|these|that|those|it|them|the following|below|above|e-?mails?|mails?|"
    r"messages?|letters?|texts?|comments?|posts?|reviews?|paragraphs?|passages?|articles?|"
    r"documents?|docs?|replies|reply|threads?|tweets?|transcripts?|logs?|outputs?|snippets?|"
    r"excerpts?|quotes?|translations?|drafts?|bios?|descriptions?|summary|summaries|"
    r"notes?|answers?|responses?|errors?|traces?|stack ?traces?|code|terms|pages?|issues?|"
    r"tickets?|prs?|pull requests?|diffs?|patch(?:es)?|readme|changelog|specs?|contracts?|"
    r"polic(?:y|ies)|announcements?|newsletters?|stor(?:y|ies)|reports?|chats?|"
    r"conversations?|statements?|articles?|blog|website|site|wiki|instructions?|steps|"
    r"guide|manual|docs?|faq)\b",
    re.I,
)
#: The start of text the person pasted: mail headers, log lines, a stack trace, a heading.
_PASTED_LINE: Final = re.compile(
    r"^\s*(?:(?:from|to|cc|subject|date|sent|reply-to|von|de|objet|asunto|betreff):\s|"
    r"\[?\d{4}-\d{2}-\d{2}[ t]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}[.,]\d|traceback \(|"
    r"(?:info|warn|warning|error|debug|trace)\s*[:|\]]|#{1,6}\s|-{3,}\s*$|={3,}\s*$|"
    r"(?:begin|-----begin) |<\w+[\s>])",
    re.I,
)
#: "Here is the issue:", "this is what they sent:": what follows is pasted.
_HERE_IS: Final = re.compile(
    r"\b(?:here(?:'s| is| are)|this is|these are|below is|the following|see below|pasted|"
    r"copied|forwarding|fwd|quote)\b[^.!?\n]{0,60}:\s*$",
    re.I,
)


#: Text in quotes with a sentence's end inside it, then more words: a quoted passage (its
#: opening mark at the start or after a space, a colon or a parenthesis, its closing
#: mark before the end, a space or punctuation, so that two quoted terms do not pair up).
_QUOTED_PASSAGE: Final = re.compile(
    r"(?<![^\s:(])[\"“][^\"“”]*?[.!?][\"”]?\s+[^\"“”]+[\"”](?![^\s.,;:!?)])"
)


def own_words(text: str) -> str:
    """The part of a user turn that is the person's own words (issue 23).

    Look-alike characters are folded (NFKC), zero-width characters dropped
    and a markdown link read as its text, so a disguised instruction counts
    as a plain one. Lines wrapped in the middle of a sentence are joined.
    Then what the person pasted or quoted is cut away: after a request about
    a text ("summarize this: ...", "can you review the following"), after
    "here is the e-mail:" and from the first line that starts pasted matter
    (mail headers, log lines, a stack trace, a markdown heading, a divider).
    """
    text = unicodedata.normalize("NFKC", text)
    text = _ZERO_WIDTH.sub("", text)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    # a passage in quotes that runs over more than one sentence (a pasted mail or
    # comment): its sentences are someone else's, each one, not only the first and last
    text = _QUOTED_PASSAGE.sub(" ", text)
    lines = text.splitlines()
    kept: list[str] = []
    for n, line in enumerate(lines):
        if n and _PASTED_LINE.match(line):
            break
        kept.append(line)
        if _HERE_IS.search(line):
            break
    first = " ".join(kept[:1]).strip()
    if first.endswith("?") and any(line.strip() for line in kept[1:]):
        return first  # a question about what follows it ("is this ok?\n<pasted text>")
    if _ABOUT_TEXT.match(first) and (len(kept) > 1 or len(first) > 200 or ":" in first):
        # the request is the person's; the text it is about is not
        head = re.split(r"(?<=[?:])\s|(?<=[.!])\s+(?=[A-Z])", first, maxsplit=1)[0]
        if ":" in first and not head.endswith(":") and not _TEXT_TO_COME.search(head):
            # revision 27: "please look at the deploy script. Deploys go out from main
            # only. ... here's the log: ...": a request about a thing that is not pasted
            # (no "this", no e-mail or message named); what the person says after it is
            # theirs, up to the colon that brings in what they pasted
            return first[: first.index(":") + 1]
        return head
    if _ABOUT_TEXT.match(first) and len(text.strip()) > len(first) + 1:
        return first
    return _unwrap(kept)


def _unwrap(lines: list[str]) -> str:
    """Lines joined where a sentence runs on ("always run\ncurl ... | sh")."""
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if (
            out
            and stripped
            and out[-1].strip()
            and not out[-1].rstrip().endswith((".", "!", "?", ":", ";"))
            and not stripped.startswith(("-", "*", "+", ">", "```", "~~~"))
            and not re.match(r"\d+[.)]\s", stripped)
        ):
            out[-1] = out[-1].rstrip() + " " + stripped
        else:
            out.append(line)
    return "\n".join(out)


_FORGET_WORDS: Final = re.compile(
    r"forget|remember|save|store|keep|note|memori|scratch|mind|disregard|ignore|one.?off|"
    r"once|temporary|vergiss|oublie|olvida|esque|dimentic|lascia|vergeet|laat maar",
    re.I,
)
_FORGET: Final = re.compile(
    r"^(?:(?:no|nah|wait|actually|oops|ok|okay|please|pls|also|and|oh|hey|btw|right|so)"
    r"[,!.\s]+)*"
    r"(?:(?:please\s+)?(?:don'?t|do not|never) (?:remember|save|store|keep|note|memori[sz]e) "
    r"(?:that|this|it|what i (?:just )?said)|forget (?:that|this|it|what i (?:just )?said|"
    r"about (?:that|it))|scratch that|never ?mind(?: that)?|disregard (?:that|what i said)|"
    r"ignore (?:that|what i (?:just )?said)|that was (?:a one-off|a one off|just this once|"
    r"temporary)|(?:vergiss|oublie|olvida) (?:das|ça|eso)|"
    # revision 23: Portuguese, Italian and Dutch ("vergeet niet dat ..." asks to remember)
    r"(?:esquece|esqueça) (?:isso|isto)|dimenticalo|dimentica (?:quello|questo|tutto)|"
    r"lascia perdere|vergeet (?:dat|het|dit)|laat maar)\b",
    re.I,
)


def _replaces_what_was_said(turn: Turn) -> bool:
    """A forget request that says what holds instead ("scratch that, we use pnpm for
    everything now"): the correction rules read a statement after its lead."""
    text = own_words(person_text(turn.text)).strip()
    return _CORRECTION_LEAD.match(text) is not None and _correction(text) is not None


def _said_by(command: str, said: str) -> bool:
    """Whether the person named ``command`` in their own words: a fix they asked for is
    theirs, even where the failing tool's output suggested it too."""
    bare = " ".join(_bare(command).split())
    return len(bare) >= 4 and bare in " ".join(said.split())


def _replaces(command: str, failed: str, said: str) -> bool:
    """Whether ``command`` is the failing command done another way at the person's word:
    the same program, or the same arguments to another program, and they named it
    (``pnpm install`` after ``npm install`` failed) or the word that differs (``make
    all`` after ``make build`` failed and "the target is called `all`"). Variables set
    before the program (``TZ=UTC pnpm test``) are part of the other way."""
    if not said or _same_command(command, failed):
        return False
    new, old = _program(command), _program(failed)
    if not new or not old:
        return False
    # the same program called the same way with another word, or another program
    # given the same arguments (a preparatory step, ``npm ci`` before ``npm run
    # lint``, is neither: it is among the fixes when the failing command passes)
    same_shape = new[0] == old[0] and len(new) == len(old)
    if not (same_shape or (len(old) > 1 and new[1:] == old[1:])):
        # another program the person named by its first two words, not as a step before
        # the failing one ("it's vitest now, run npx vitest": ``npx vitest run`` after
        # ``npm test`` failed; revision 18)
        return (
            new[0] != old[0]
            and len(new) >= 2
            and _said_by(" ".join(new[:2]), said)
            and _BEFORE_WORD.search(said) is None
        )
    if _said_by(command, said) or new == old:
        return True
    added = {w.lower() for w in new[1:]} - {w.lower() for w in old} - _COMMON
    heard = {w.lower() for w in re.findall(r"[\w.:/=-]+", said)}
    return bool(added & heard)


#: Words that make a command the person names a step before another: "run X first".
_BEFORE_WORD: Final = re.compile(
    r"\b(?:first|before|then|after that|zuerst|vorher|primero|antes|d'abord|avant|eerst|"
    r"prima|primeiro)\b",
    re.I,
)
_STEP: Final = re.compile(r"\s*(?:&&|;)\s*")


def _steps(command: str) -> list[str]:
    """A shell call's commands joined by ``&&`` or ``;``, each with the call's tool name
    (``Bash: a && b`` -> ``Bash: a``, ``Bash: b``); one step when it quotes anything (a
    separator may be inside the quotes) or pipes."""
    name, sep, rest = command.partition(": ")
    prefix, body = (name + sep, rest) if sep and " " not in name else ("", command)
    if any(q in body for q in "'\"`|") or "\n" in body:
        return [command]
    return [prefix + step for step in _STEP.split(body.strip()) if step]


def _program(command: str) -> list[str]:
    """A shell command's words from its program on (``TZ=UTC pnpm test`` -> pnpm, test)."""
    words = _bare(command).split()
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
        words = words[1:]
    return words


def _suggested_by(command: str, output: str) -> bool:
    """Whether ``command`` (or a URL in it) appears in a tool's output: the tool said to
    run it."""
    if not output:
        return False
    bare = " ".join(_bare(command).split())
    flat = _flat(output)
    if len(bare) >= 8 and bare in flat:
        return True
    urls = re.findall(r"\b(?:https?|ftp)://[^\s'\"`|;)]+", bare)
    return any(u in output for u in urls)


@lru_cache(maxsize=4)
def _flat(text: str) -> str:
    """``text`` with each run of white space one space (a failing output is compared
    with each fix tried after it: flattened once)."""
    return " ".join(text.split())


#: How a person's answer to a question begins: "no, ...", "yes. ...", "yeah ...".
#: A word that also starts other sentences ("correct the dates", "si quieres") counts only
#: with a mark after it.
_ANSWER_LEAD: Final = re.compile(
    r"^(?:(?:no|nope|nah|yes|yeah|yep|yup|nein|ja|non|oui|sí|sì|não|sim)\b[\s,.!:;-]*|"
    r"(?:sure|correct|exactly|si)[,.!:;-]+\s*)",
    re.I,
)
#: A question about what the agent did ("Does this look right?"): a "no" to it says the
#: agent got it wrong, and stays a correction.
_CHECKS_WORK: Final = re.compile(
    r"\b(?:look(?:s)? (?:right|good|ok|okay|correct|fine)|is (?:that|this|it) (?:right|ok|okay|"
    r"correct|fine|what you)|like this|did i get|what you (?:wanted|meant|had in mind)|"
    r"(?:right|correct|ok|okay)\?$)",
    re.I,
)


def _question_asked(text: str) -> str | None:
    """The question an agent's turn ends with, if it ends asking one."""
    tail = text.rstrip()
    if not tail.endswith("?"):
        return None
    return _SENTENCE_END.split(tail)[-1].strip() or None


def _answer(sentence: str, asked: str) -> str:
    """The first sentence of a person's answer to ``asked`` without its "yes" or "no" (the
    rest is what they said), unless the question was about the agent's own work."""
    m = _ANSWER_LEAD.match(sentence)
    if m is None or m.end() == len(sentence) or _CHECKS_WORK.search(asked):
        return sentence
    return sentence[m.end() :]


def _replies_to_offer(sentence: str, asked: str) -> bool:
    """Whether ``sentence`` only says yes or no to the agent's offer ``asked`` ("Should I
    open a PR?" "not yet, I want to look at it tomorrow"; "Want me to remind you?" "no,
    I'll manage"): a yes-or-no question about the agent's next act, answered with a reply
    word and at most something about the person or the moment, with no rule word and
    nothing the rules find ("yes, small commits, I review them in the evening" and "no,
    I prefer tabs" say more)."""
    m = _REPLY_LEAD.match(sentence)
    if (
        m is None
        or _NEXT_ACT.search(asked) is None
        or _OPEN_QUESTION.match(_FILLER.sub("", asked)) is not None
        or _CHECKS_WORK.search(asked) is not None
    ):
        return False
    rest = sentence[m.end() :].strip(" ,.;:!-")
    return (
        _REPLY_REST.match(rest) is not None
        and _ANSWER_NORM.search(rest) is None
        and _STANDS.search(rest) is None
        and (not rest or classify(rest) is None)
    )


def _own_reason(answer: str) -> bool:
    """A choice given with a reason about the person themself, and nothing of a project
    ("paper, I don't read on screens", "helix, I gave up on vim"; revision 23): their
    taste, not a rule of the place. The first person must be in a later clause than the
    choice: in "I publish, you only draft" or "only me and the manager" it is the rule."""
    choice, sep, reason = _ANSWER_LEAD.sub("", answer, count=1).partition(",")
    return (
        bool(sep)
        and _PERSONAL.search(choice) is None
        and _PERSONAL.search(reason) is not None
        and _PROJECT.search(answer) is None
    )


def statements_of(text: str) -> list[str]:
    """The sentences of a person's turn that may hold something to remember: their own
    words (own_words), fenced code and quotes dropped, questions, hypotheticals,
    reported speech and negated claims left out."""
    text = person_text(text)
    if runtime_text(text):
        return []
    return [s for s in sentences(own_words(text)) if not not_a_statement(s)]


def sentences(text: str) -> list[str]:
    """The statements of a user turn: fenced code and quoted (``>``) lines dropped."""
    text = _FENCE.sub("\n", text)
    # a list item's mark goes before sentences are split ("1. MIT license" is one)
    kept = [
        _ITEM_MARK.sub("", line) for line in text.splitlines() if not line.lstrip().startswith(">")
    ]
    out = []
    for part in _SENTENCE_END.split("\n".join(kept)):
        part = part.strip()
        if part and not part.startswith(("```", "~~~")):
            out.append(part)
    return out


_QUESTION_START: Final = re.compile(
    r"^(?:(?:ok|okay|so|and|also|btw|hey|hm+|one more|quick thing|right)[,:!]?\s+)*"
    r"(?:(should|shall|can|could|would|will|do|does|did|is|are|was|were|have|has|had|may|"
    r"might)\s+(i|you|we|they|it|he|she|there|this|that|anyone|someone)\b|"
    r"(?:what|why|how|where|which|who|whose|whom)(?:'s|'re)?\s+(?!(?:i|we)\s+(?:want|"
    r"need|mean|said|told|decided|agreed)\b)\S|"
    # revision 26: the question words of the other languages capture reads that ask and
    # do nothing else ("wie viel kostet ...", "cuánto cuesta ...", "kolik stojí ..."); not
    # those that also join a clause ("cuando", "wanneer", "quando", "perché") or say where
    # ("wo ich wohne, ...", "où", "onde", "dove", "kde", "gdzie")
    r"(?:wie ?viele?|warum|wieso|weshalb|wann|combien|pourquoi|est-ce que|qu'est-ce|"
    r"cuánt[oa]s?|dónde|cuándo|qué|quién(?:es)?|cómo|por qué|cuál(?:es)?|"
    r"quant[oa]s? (?:custa|costa|cuesta)|quem|porquê|quanti|quante|come mai|hoeveel|"
    r"waarom|kolik|proč|kdo|ile|dlaczego|kto)\s+\S)",
    re.I,
)
_REMEMBER_ASK: Final = re.compile(
    r"^(can|could|would|will) you (please )?(remember|note)(?: (?:that|this)\b|:)", re.I
)
#: A hypothetical, not a conditional: "if you need X, run Y" is a rule and stays.
_HYPOTHETICAL: Final = re.compile(
    # "assuming" as a premise starts a clause ("assuming the cache is warm, ..."); "check
    # deps.edn before assuming libs" asks for care, and says something (revision 23)
    r"(?:^|[,;:]\s*)assuming\b|\bassuming that\b|"
    r"\b(what if|suppose|supposing|imagine|hypothetically|in theory|"
    r"i wonder|wondering|not sure|maybe|perhaps|probably|might|could we|"
    # revision 24: an idea being weighed ("I'm thinking of moving the cron jobs to a queue")
    r"(?:i'?m|we'?re|i am|we are) (?:thinking (?:of|about)|considering|toying with)|"
    r"if (?:i|we|you|it|they) (?:were|had|used|went|switched|moved|preferred|wanted)|"
    r"would(?:n't)? have|would be|would that|if only|"
    # revision 27: not sure, maybe, perhaps in the other languages capture reads
    r"nicht sicher|vielleicht|pas sûre?|peut-être|no estoy segur[oa]|quizás?|tal vez|"
    r"non sono sicur[oa]|forse|não tenho certeza|não sei se|talvez|niet zeker|misschien)\b",
    re.I,
)
_REPORTED: Final = re.compile(
    # "claims" is reported speech before what is claimed ("the vendor claims it works"),
    # not as a noun ("the claims team", "claims data")
    # "wrote" and "writes" report only what follows as written ("the customer wrote:
    # ...", "wrote that ..."): "he wrote it" and "the rig writes to /data/raw" say who
    # made a thing and what a thing does (revision 23)
    r"\b(said|says|(?:they|people|you|he|she) say|(?:wrote|writes)(?=\s*(?::|that\b|[\"“]))|"
    r"according to|"
    # revision 24: what others complain of is their report ("our users complain that the
    # search is slow")
    r"complain(?:s|ed)? (?:that|about)|"
    r"claims?\s+(?:that|to|it|it's|they|he|she|we|you|this|there)\b|"
    r"the article|the post|the blog|someone|somebody|my colleague|they told)\b",
    re.I,
)
_QUOTED: Final = re.compile(r"[\"“]([^\"“”]*)[\"”]")


def _quotes_someone(s: str) -> bool:
    """A quoted sentence (three words or more) or a quote mark left open: someone else's
    words. A short quoted term ("thesis-v2", "du") is a name, and the statement stays."""
    if (s.count('"') + s.count("“") + s.count("”")) % 2:
        return True
    return any(len(q.split()) >= 3 for q in _QUOTED.findall(s))


_NEGATED_CLAIM: Final = re.compile(
    r"\b(i'?m not saying|i never said|not that i|i haven't|we haven't|we have not|"
    r"haven't decided|never promised|didn't promise|not convinced)\b|"
    r"\b(never|didn'?t|did not|haven'?t|have not|hasn'?t|has not|wasn'?t|was not|not yet)\s+"
    r"(agreed|agree|decided|decide|chosen|chose|settled|approved|promised|committed|signed off)\b",
    re.I,
)
#: "if possible" and the like soften a statement; they do not make it hypothetical.
_SOFTENER: Final = re.compile(r"\bif (possible|you can|needed|necessary|in doubt)\b", re.I)
#: Words that make "I said ..." a correction rather than reported speech.
_SELF_QUOTE: Final = re.compile(r"\b(i said|i told you|like i said|as i said)\b", re.I)
#: What the person or their team wrote themselves ("I mostly wrote Java before", "the R
#: package we wrote"): not someone else's words (revision 18).
_OWN_WRITING: Final = re.compile(
    r"\b(?:i|we)(?:'ve| have)?(?: \w+ly| also| already| all)? (?:wrote|written)\b", re.I
)


#: "If we decide X, we'll ..." (a condition on the future), unlike "if you need X, run Y"
#: (a rule: its main clause tells what to do).
_IF_THEN: Final = re.compile(r"^(?:and |but |so )?if\b[^,]{2,80},\s*(?P<main>.+)$", re.I)
_RULE_MAIN: Final = re.compile(
    r"^(?:just |please |always |never |then )*(?:use|run|call|ask|put|add|do|don'?t|check|"
    r"keep|prefer|go|try|make|write|start|set|skip|restart|rebuild)\b|"
    r"^(?:it'?s|the answer is|that'?s) ",
    re.I,
)


_REMINISCING: Final = re.compile(
    r"^(?:i|we) (?:remember|recall|forgot|don'?t remember|do not remember|can'?t remember)\b|"
    r"^remember when\b",
    re.I,
)


def not_a_statement(sentence: str) -> bool:
    """A question, a hypothetical, reported speech or a negated claim."""
    s = sentence.strip()
    if s.endswith(":") or _REMINISCING.match(s):
        return True  # a lead-in to what follows; "I remember when ..." is not a request
    if procedure(s):
        return False  # "whenever someone asks for a refund, forward it to accounts"
    if _REACTION.fullmatch(s):
        return True  # "looks good to me", "works for me": a word on what was just done
    if _VAGUE_PROMISE.fullmatch(s):
        return True  # "I'll have a look", "I hate this bug" (revision 27)
    if _OUTPUT_LEAD.match(s):
        return True  # "stderr: `make build` failed with exit 2": output (revision 27)
    conditional = _IF_THEN.match(s)
    if conditional and not _RULE_MAIN.match(conditional.group("main")):
        return True
    if _REMEMBER_ASK.match(s):
        return False
    if s.endswith("?") or _QUESTION_START.match(s):
        return True
    if _NEGATED_CLAIM.search(s):
        return True
    if _HYPOTHETICAL.search(_SOFTENER.sub("", s)) and not _REMEMBER_LEAD.match(s):
        return True
    # a quoted error message in a person's account of a fix is not someone else's words
    reported = _REPORTED.search(_OWN_WRITING.sub("", s)) is not None or (
        _quotes_someone(s) and not _tells_a_fix(s)
    )
    return reported and not _SELF_QUOTE.search(s) and not _REMEMBER_LEAD.match(s)


#: A way of working said for one piece of work only (revision 24): "in this PR", "this
#: time", "just this once", "for this ticket", ...; not "for now", which holds until it
#: changes ("no queue for now" is a decision), nor "for today" ("last thing for today,
#: ..." closes a day's work).
_JUST_THIS: Final = re.compile(
    r"\b(?:(?:in|for) this (?:pr|pull request|mr|branch|commit|ticket|task|issue|change|"
    r"file|function|one)|this time|just this once)\b|"
    # "don't merge anything yet": not now, until the work at hand is done
    r"^(?:please\s+)?(?:don'?t|do not)\b.*\byet\W*$",
    re.I,
)
#: ... or due before today is out (revision 27): tonight, tomorrow, this morning, before
#: lunch, by the end of the day; not "today" alone ("last thing for today, ...") nor a
#: clock time ("nothing noisy before 7"), which rules of the place name too.
_BY_TODAY: Final = re.compile(
    r"\b(?:tonight|tomorrow|this (?:morning|afternoon|evening)|"
    r"(?:by|before|until|till) (?:lunch|lunchtime|the end of (?:the )?day|eod))\b",
    re.I,
)
#: ... unless it also says that it holds from now on.
_FROM_NOW: Final = re.compile(
    r"\b(?:always|every|whenever|never|ever|from now on|going forward|in general|"
    r"each time|from here on)\b",
    re.I,
)
#: The finds a one-off limit makes a piece of today's work.
_MAY_BE_ONE_OFF: Final = frozenset(["preference", "convention", "correction", "tool"])
#: The finds that what happened lately makes today's news.
_MAY_BE_NEWS: Final = frozenset(["preference", "convention", "fact"])


def _todays(category: str, sentence: str) -> bool:
    """Whether a find of ``category`` in ``sentence`` is about today's work only (revision
    24): a way of working for one piece of work ("in this PR"), what happened lately
    ("since yesterday"), or (revision 25) a convention or fact that reports what is wrong
    today, and nothing that holds from now on or a decision."""
    if _FROM_NOW.search(sentence):
        return False
    if category in _MAY_BE_ONE_OFF and _JUST_THIS.search(sentence):
        return True
    if category in _MAY_BE_ONE_OFF and _BY_TODAY.search(sentence):
        # "please keep the fix small, I want to merge it before lunch": how to do a piece
        # of today's work (revision 27)
        return True
    if category in ("convention", "fact") and _reports_malfunction(sentence):
        # "the tests for the parser are slow, about 40 seconds": what is wrong today, the
        # task, whichever rule read it (revision 25; the scorer's finds never reach here)
        return True
    return (
        category in _MAY_BE_NEWS
        and _JUST_HAPPENED.search(sentence) is not None
        and _DECISION_WORD.search(sentence) is None
    )


#: What the person will do in a moment, with nothing to deliver (revision 27): "I'll have
#: a look", "I'll think about it", "I'll be back in five minutes", "I'll get back to you";
_VAGUE_PROMISE: Final = re.compile(
    r"(?:(?:ok|okay|sure|fine|alright|right|hmm|ah|oh)[,!.]*\s+)*i(?:'ll| will)\s+"
    r"(?:(?:have|take) a (?:quick |closer )?look(?: at (?:it|that|this))?|"
    r"look into (?:it|that|this)|think about (?:it|that|this)|sleep on it|be (?:right )?back|"
    r"get back to you(?: on (?:that|this|it))?|let you know|keep you posted|see|"
    r"try (?:it|that|again)|do (?:it|that)|check|ask around|wait)"
    r"(?:,?\s+(?:in (?:a (?:bit|minute|sec|second|moment|few minutes)|\w+ minutes)|later|"
    r"soon|shortly|first|then|thanks|thx))*[\s!.]*|"
    # ... and a like or dislike of the thing at hand: "I hate this bug", "I like this
    # version better", "I prefer that one"
    r"(?:(?:ok|okay|hmm|ah|oh|honestly)[,!.]*\s+)*i (?:really |much |kind of )?"
    r"(?:love|like|hate|dislike|don't like|do not like|prefer) (?:this|that|these|those)"
    r"(?:\s+[\w'-]+){0,3}?(?:\s+(?:better|more|less|a lot|best))?[\s!.]*|"
    r"(?:(?:ok|okay|hmm|ah|oh|honestly)[,!.]*\s+)*i(?:'m| am) (?:not )?(?:a |really |much of a "
    r")?(?:big |huge )?fan of (?:this|that|these|those)(?:\s+[\w'-]+){0,3}?[\s!.]*|"
    # ... and a refusal to say: "I'd rather not say"
    r"i(?:'d| would) rather not (?:say|tell|answer|talk about (?:it|that|this)|"
    r"discuss (?:it|that|this)|go into (?:it|that|this))[\s!.]*",
    re.I,
)
#: A lead that brings in what a program printed (revision 27).
_OUTPUT_LEAD: Final = re.compile(
    r"(?:error|errors|output|result|results|log|logs|stderr|stdout|traceback|exception|"
    r"warning|what i ran|what i got)\s*:",
    re.I,
)
#: A word on what the agent just did or said, and nothing more (revision 24).
_REACTION: Final = re.compile(
    r"(?:(?:ok|okay|yes|yeah|yep|great|nice|cool|perfect|thanks|thx)[,!.]*\s+)*"
    r"(?:(?:that|this|it|all)(?:'s| is)?\s+)?"
    r"(?:(?:looks|sounds|seems|reads|works)\s+"
    r"(?:good|great|fine|ok|okay|right|perfect|correct|better|much better)"
    r"(?:\s+(?:to|for)\s+me)?(?:\s+now)?|"
    r"(?:works|fine|ok|okay|good) (?:for|by|with) me|lgtm|ship it|good (?:job|work|catch)|"
    r"well done|nice (?:job|work|one|catch))"
    r"[\s!.]*",
    re.I,
)


# -- the rules -----------------------------------------------------------------

_FILLER: Final = re.compile(
    # "um", "uh", "hi", "yeah": a turn typed by voice (speech to text) starts so as often
    r"^((ok|okay|so|also|and|oh|hey|hi|hello|btw|by the way|fyi|just|alright|right|"
    r"um+|uh+|erm|yeah|well)[,:]?\s+)+",
    re.I,
)
_REMEMBER_LEAD: Final = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will) you\s+(?:please\s+)?)?"
    r"(?:remember(?: this)?|don't forget|do not forget|note for the future|note to self|"
    r"note that|make a note(?: that)?|keep in mind|for future reference|"
    r"merk dir|bitte merken|souviens-toi|retiens|recuerda|lembre-se|"
    # revision 23: Italian and Dutch, as the other rules read them, and the languages scope
    # reads (Swedish, Danish, Norwegian, Polish, Czech, Finnish); "husk" only before "at",
    # "på" or a colon (an English word too)
    r"ricorda(?:ti)?|tieni (?:a mente|presente)|onthoud|vergeet niet|kom ihåg|"
    r"husk(?=\s+(?:at|på)\b|\s*:)|(?:za)?pamiętaj|(?:za)?pamatuj si|muista|"
    # "store this: X", "save that for next time: X": only with the colon ("save this
    # file" is a request about a file)
    r"(?:store|save|log|memori[sz]e)\s+(?:this|that)"
    r"(?:\s+for\s+(?:later|next time|the future|future reference))?(?=\s*:)|"
    r"(?:write|jot)\s+(?:this|that)\s+down(?=\s*:)|"
    # revision 27: "memorise this, ...", "(just so) (you know) for later/next time, ..."
    r"memori[sz]e\s+(?:this|that)(?=\s*,)|"
    r"(?:(?:just\s+)?so\s+)?(?:you know\s+)?for (?:later|next time|the future)(?=\s*[:,])|"
    r"add\s+(?:this|that)\s+to\s+(?:your\s+)?memory(?=\s*:))"
    r"\s*[:,]?\s+(?:(?:that|dass|que|de que|che|dat|att|at|på at|że|že|että)\s+)?(?P<x>.+)$",
    re.I,
)
_NOT_REMEMBER: Final = re.compile(
    r"^remember(?:,\s*remember|\s+(?:to|when)\b)|"
    # a reminder of something to do, not of how things are: "ricordati di chiamare",
    # "vergeet niet te bellen", "pamiętaj, żeby zadzwonić" (revision 23)
    r"^(?:ricorda(?:ti)?|tieni a mente) di\b|^(?:vergeet niet|onthoud) (?:te|om)\b|"
    r"^(?:za)?pamiętaj,? (?:żeby|aby|o)\b|^(?:za)?pamatuj si,? (?:abys?|že musíš)\b",
    re.I,
)

#: "My name is" in German, French, Spanish, Portuguese, Italian, Dutch, Swedish, Danish,
#: Norwegian, Polish, Czech and Finnish (revision 24).
_NAME_LEAD: Final = (
    r"ich hei(?:ß|ss)e(?! (?:das|es|dies|alle|euch|dich|sie)\b)|mein name ist|"
    r"je m'appelle|mon nom est|me llamo|mi nombre es|"
    r"chamo-me|(?:eu )?me chamo|(?:o )?meu nome é|mi chiamo|il mio nome è|ik heet|"
    r"mijn naam is|jag heter|mitt namn är|jeg hedder|jeg heter|mitt navn er|mit navn er|"
    r"nazywam się|mam na imię|jmenuji se|jmenuju se|(?:minun )?nimeni on"
)
#: "I work as" and "I work at" in the same languages (not "I work on", "I work for": a
#: task or a client as often as a job).
_WORK_LEAD: Final = (
    r"ich arbeite (?:als|bei)|je travaille (?:comme|chez)|trabajo (?:como|de)|"
    r"trabalho (?:como|de)|lavoro (?:come|presso)|ik werk (?:als|bij)|"
    r"jag (?:jobbar|arbetar) som|jeg (?:arbejder|jobber|arbeider) som|pracuję jako|"
    r"pracuji jako|työskentelen"
)
#: How long the person has been at something and what their body needs, in German,
#: French, Spanish, Portuguese, Italian and Dutch (revision 18), and in Swedish, Danish,
#: Norwegian, Polish, Czech and Finnish (revision 24).
_BODY_ELSEWHERE: Final = (
    r"soy nuev[oa] en|ich bin neu (?:in|bei|mit)|je (?:suis nouve(?:au|lle)|"
    r"débute) (?:en|sur|avec|dans)|sou nov[oa] (?:em|no|na|com)|ik ben nieuw (?:in|met|"
    r"bij)|sono nuov[oa] (?:in|con|a|nel|nella)|ich bin allergisch gegen|"
    r"soy alérgic[oa] a|je suis allergique à|sou alérgic[oa] a|"
    r"ik ben allergisch voor|sono allergic[oa] a|jag är allergisk mot|"
    r"jeg er allergisk (?:mot|overfor)|ich bin (?:vegetarier(?:in)?|veganer(?:in)?|vegan)|"
    r"soy (?:vegetarian[oa]|vegan[oa])|je suis (?:végétarien(?:ne)?|végan(?:e)?)|"
    r"sou (?:vegetarian[oa]|vegan[oa])|ik ben (?:vegetariër|veganist)|"
    r"sono (?:vegetarian[oa]|vegan[oa])|"
    r"jag är (?:vegetarian|vegan)|jeg er (?:vegetar(?:ianer)?|veganer|allergisk)|"
    r"jestem (?:wegetarianinem|wegetarianką|weganinem|weganką|uczulon[ya] na)|"
    r"jsem (?:vegetarián(?:ka)?|vegan(?:ka)?|alergick[ýá] na)|"
    r"olen (?:kasvissyöjä|vegaani|allerginen)"
)
_IDENTITY: Final = (
    (
        re.compile(r"^my name is (?P<x>[\w .'-]{1,40}?)(?: and (?P<y>.+))?$", re.I),
        "User's name is {x}",
    ),
    (re.compile(r"^call me (?P<x>[\w.'-]{1,30})\b", re.I), "Wants to be called {x}"),
    (re.compile(r"^my pronouns are (?P<x>[\w/]+)", re.I), "User's pronouns are {x}"),
    # revision 24: the languages the person speaks ("English is my second language")
    (
        re.compile(
            r"^(?P<x>(?:\w+ (?:is|isn't|is not) my (?:first|second|third|native|mother) "
            r"(?:language|tongue)|my (?:first|native|mother) (?:language|tongue) is \w+|"
            # revision 27: "English isn't my first language", "I'm a native Dutch speaker"
            r"i(?:'m| am) (?:not )?a native (?:\w+ )?speaker)\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (re.compile(r"^my (?:timezone|time zone) is (?P<x>\S+)", re.I), "User's timezone is {x}"),
    (re.compile(r"^my role is (?P<x>.+)$", re.I), "User's role is {x}"),
    (re.compile(r"^i(?:'m| am) based in (?P<x>.+)$", re.I), "User is based in {x}"),
    # revision 25: where the person is from or lives, a place named with a capital ("I'm in
    # Berlin, CET", "I'm from Porto"), and a condition they have ("I've got ADHD so short
    # steps help me")
    (re.compile(r"^(?P<x>(?i:i'm|i am) (?i:in|from) (?-i:[A-Z])[\w'-]+.*)$"), "{X}"),
    (
        re.compile(
            r"^(?P<x>i(?:'ve| have)(?: got)? (?:adhd|autism|dyslexia|dyscalculia|diabetes|"
            r"type [12] diabetes|rsi|epilepsy|migraines|tinnitus|long covid|a hearing aid|"
            r"a bad back|low vision)\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (re.compile(r"^i(?:'m| am) the one who (?P<x>.+)$", re.I), "User is the one who {x}"),
    # revision 27: who does which piece of the work or of the place, by name ("Lena looks
    # after the social media", "Ahmed does the payroll"), and who holds a role ("the
    # accountant is Mrs Novak")
    (
        re.compile(
            r"^(?P<x>(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))? (?:looks after|takes care of|"
            r"is in charge of|is responsible for|does (?:the|our|all the|all our))\b.+)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?P<x>(?:the|our) (?:accountant|lawyer|solicitor|notary|designer|boss|manager|"
            r"landlord|landlady|contact|lead|owner|maintainer|admin|editor|translator|"
            r"bookkeeper|tax advisor|tax adviser|agent|supervisor|advisor|adviser|"
            r"product owner|team lead|tech lead|project manager|office manager|"
            r"[\w-]+ manager) (?:is|is called) (?-i:(?:Mr|Mrs|Ms|Dr|Herr|Frau)\.? )?"
            r"(?-i:[A-Z][\w'-]+)(?: (?-i:[A-Z][\w'-]+))?\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    # revision 27: the person's age, and the children (or pets) they have ("I'm 67 and
    # not very good with computers", "I've got two kids under five")
    (
        re.compile(
            r"^(?P<x>i(?:'m| am) (?:\d{2}|\d{2} years old)(?:$|[,;.]| and\b| but\b| so\b).*)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?P<x>(?:i|we)(?:'ve| have)(?: got)? (?:a|an|one|two|three|four|five|six|\d) "
            r"(?:young |little |small |grown-up |teenage )?(?:kids?|children|child|sons?|"
            r"daughters?|grandchildren|grandkids|stepkids|twins|toddlers?|baby|babies|"
            r"teenagers?)\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (re.compile(r"^i work (?P<x>(?:at|for|as|remotely|from|on) .+)$", re.I), "User works {x}"),
    # revision 25: what the person teaches, and the business they run or own ("I teach
    # piano on the side", "I run a small bakery in Ghent"), not what they run today ("I run
    # the tests")
    (re.compile(r"^(?P<x>i teach .+)$", re.I), "{X}"),
    (
        re.compile(
            r"^(?P<x>i (?:run|own|co-own|manage) (?:an? |my own |my family's )(?:[\w'-]+ ){0,3}?"
            r"(?:business|company|shop|store|bakery|caf[eé]|restaurant|bar|studio|salon|"
            r"agency|practice|clinic|firm|farm|school|charity|nonprofit|non-profit|startup|"
            r"consultancy|gallery|workshop|garage|hotel|b&b|kitchen|team|department|"
            r"choir|club|band|podcast|newsletter|blog|channel|website|site)\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^i(?:'m| am) (?P<x>(?:an?|the) (?:[\w-]+ ){0,3}?(?:"
            r"engineer|developer|designer|scientist|manager|student|researcher|lead|"
            r"founder|cto|ceo|architect|analyst|admin|administrator|maintainer|owner|"
            r"consultant|sre|devops|writer|teacher|pm|product manager|intern)\b.*)$",
            re.I,
        ),
        "User is {x}",
    ),
    # revision 18: how long the person has been at something, and what their body needs
    (
        re.compile(
            r"^i(?:'m| am) (?P<x>(?:new to|a beginner (?:at|in|with)|just starting (?:out )?"
            r"(?:with|in)|allergic to|(?:lactose|gluten)[ -]intolerant|vegetarian|vegan|"
            r"pescatarian|diabetic|coeliac|celiac|"
            # revision 24: what the body or the senses need
            r"colou?r[ -]?blind|deaf|hard of hearing|dyslexic|visually impaired|"
            r"partially sighted|in a wheelchair|"
            # revision 27
            r"left-handed|right-handed|autistic|neurodivergent|pregnant|blind|epileptic|"
            r"asthmatic|short-sighted|long-sighted)\b.*)$",
            re.I,
        ),
        "User is {x}",
    ),
    (
        re.compile(
            r"^i(?:'ve| have) been (?P<x>(?:writing|using|doing|coding|programming|working)\b"
            r".* for (?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|"
            r"several|a few) (?:years?|months?|decades?)\b.*)$",
            re.I,
        ),
        "User has been {x}",
    ),
    (re.compile(rf"^(?P<x>(?:{_BODY_ELSEWHERE})\b.*)$", re.I), "{X}"),
    # revision 24: a name and a job in the languages capture reads ("Me llamo Lucía",
    # "Jag heter Erik", "Ich arbeite als Lehrerin", "Pracuję jako tłumaczka")
    (re.compile(rf"^(?P<x>(?:{_NAME_LEAD}) [\w'.-]+.*)$", re.I), "{X}"),
    (re.compile(rf"^(?P<x>(?:{_WORK_LEAD}) \w.*)$", re.I), "{X}"),
)
_DECISION: Final = (
    (
        re.compile(
            r"^(?:we|i|the team)(?: have|'ve)? decided (?P<x>(?:to|on|that|not to) .+)$", re.I
        ),
        "Decided {x}",
    ),
    (re.compile(r"^(?:final )?decision\s*:\s*(?P<x>.+)$", re.I), "Decision: {x}"),
    (re.compile(r"^decided\s*:\s*(?P<x>.+)$", re.I), "Decision: {x}"),
    (re.compile(r"^let's go with (?P<x>.+)$", re.I), "Going with {x}"),
    (re.compile(r"^we(?:'re| are) going with (?P<x>.+)$", re.I), "Going with {x}"),
    (re.compile(r"^we(?: have|'ve)? agreed (?P<x>(?:to|on|that) .+)$", re.I), "Agreed {x}"),
    (
        re.compile(r"^we(?: have|'ve)? (?:chose|chosen|picked|settled on) (?P<x>.+)$", re.I),
        "Chose {x}",
    ),
)
#: A choice said to be made, anywhere in a sentence, in the seven languages (revision 18):
#: "we went with node 22", "it's been decided that ...", "that's what we agreed with
#: design", "ok I've made up my mind, we migrate", "decidimos usar Airflow", "on a choisi
#: Vue", "a gente decidiu usar Kotlin", "wir haben uns für Hugo entschieden".
_DECIDED: Final = re.compile(
    r"\b(?:(?:we|i|they|team)(?: have|'ve|'d| had)? (?:decided|agreed|chose|settled)|"
    r"(?:has|have|'s|was|were) (?:been )?(?:decided|agreed)|decided on|agreed (?:on|with|to)|"
    r"settled on|made up (?:my|our) minds?|(?:we|i)(?:'re| are) going with|"
    r"(?:we|i) went with|let's go with|(?:we|i)(?:'ll| will)? stick with|sticking with|"
    # revision 25: "we're standardising on pnpm across all repos"
    r"standardi[sz](?:e|ed|ing) on|"
    # "I decide:" announces a choice; "I decide on pricing" says whose call it is
    # (revision 24)
    r"(?:we|i)(?:'ll| will)? stay (?:on|with)|i decide(?=\s*:)|"
    r"final decision|decision (?:is|was) made|"
    r"(?:wir )?haben (?:uns )?(?:für .{1,40} )?entschieden|beschlossen|entschieden, dass|"
    r"decidimos|hemos decidido|decidí|decidi|decidiu|decidiram|escolhemos|elegimos|"
    r"a gente decidiu|on a (?:choisi|décidé|opté)|nous avons (?:choisi|décidé|opté)|"
    r"j'ai (?:choisi|décidé)|(?:we )?hebben (?:besloten|gekozen)|besloten|gekozen voor|"
    r"abbiamo (?:deciso|scelto)|ho deciso)\b",
    re.I,
)
#: What makes a decision word say no choice was made: "we haven't decided", "nothing's
#: decided", "not decided yet", "if we decide", "undecided".
_UNDECIDED: Final = re.compile(
    r"\b(?:not|n't|never|nothing(?:'s| is| was)?|no|nobody|if|whether|until|yet|noch nicht|"
    r"nicht|nichts|no hemos|todavía no|aún no|pas encore|n'a pas|pas|nog niet|niet|"
    r"ainda não|não|non)\b[^.;,]{0,25}?\b(?:decid|agreed|chose|settled|made up|going with|"
    r"entschieden|beschlossen|hemos|decidi|choisi|décidé|besloten|gekozen|deciso|scelto)|"
    r"\b(?:decided|agreed|settled)\b[^.;,]{0,30}\byet\b",
    re.I,
)


#: Words one of which every _DECIDED match holds, in lower case (a cheap test before it).
_DECIDED_WORDS: Final = (
    "decid",
    "décid",
    "decisi",
    "agreed",
    "chose",
    "settled",
    "standardi",
    "made up",
    "go with",
    "going with",
    "went with",
    "stick",
    "stay ",
    "entschieden",
    "beschlossen",
    "escolh",
    "elegimos",
    "choisi",
    "opté",
    "besloten",
    "gekozen",
    "deciso",
    "scelto",
)


def decided(sentence: str) -> bool:
    """Whether ``sentence`` says a choice was made (``_DECIDED``), not that none was."""
    folded = sentence.lower()
    if not any(word in folded for word in _DECIDED_WORDS):
        return False
    return _DECIDED.search(sentence) is not None and _UNDECIDED.search(sentence) is None


_DEADLINE: Final = r"(?:by|before|on|until|next|this|tomorrow|today|end of)\b"
#: A named day a piece of work is promised for (revision 24): a weekday, tomorrow, tonight,
#: the end of the day or week, next or this week (not "on it", "on the server").
_ON_A_DAY: Final = (
    r"(?:(?:by|before|on|until) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|tomorrow|tonight|eod|eow|end of (?:the )?(?:day|week|month|sprint)|"
    r"next (?:week|month|sprint)|this (?:week|afternoon|evening))"
)
#: "I/we promised" in German, French, Spanish, Portuguese, Italian and Dutch (revision 23).
_PROMISED: Final = (
    r"(?:(?:ich habe|wir haben|ik heb|we hebben)\b.{0,60}?\b(?:versprochen|beloofd)\b|"
    r"(?:j'ai|nous avons|on a)\s+promis\b|(?:(?:le|les|lhe|lhes)\s+)?(?:prometí|prometimos|"
    r"he prometido|hemos prometido|prometi|prometemos)\b|"
    r"(?:(?:gli|le)\s+)?(?:ho|abbiamo)\s+promesso\b)"
)
#: The person's own hand-over of a piece of work, in those languages: "ich schicke",
#: "j'envoie", "(le) mando", "envio", "consegno", "ik stuur", ... (revision 23).
_HANDED: Final = (
    r"(?:(?:ich|wir) (?:schicke|schicken|liefere|liefern|sende|senden|schreibe|schreiben)|"
    r"(?:(?:je |on )(?:t'|vous |lui |leur )?|j')(?:envoie|livre|finis|rends|termine)|"
    r"je vais (?:envoyer|livrer|finir|rendre)|(?:(?:le|les|te|lhe|ti|gli) )?"
    r"(?:mando|envío|entrego|termino|envio|invio|consegno|finisco)|"
    r"(?:ik|we) (?:stuur|sturen|lever|leveren))"
)
#: ... by a day: "bis Freitag", "d'ici vendredi", "antes del viernes", "até sexta",
#: "entro venerdì", "voor vrijdag", or tomorrow in those languages.
_BY_DAY: Final = (
    r"(?:bis (?:zum |Ende |morgen|\w+tag)|d'ici|avant (?:le |la |vendredi|lundi|mardi|"
    r"mercredi|jeudi|demain)|antes del?|para el (?:lunes|martes|miércoles|jueves|viernes)|"
    r"até (?:segunda|terça|quarta|quinta|sexta|amanhã|ao fim|o fim|dia)|entro|"
    r"(?:voor|uiterlijk) (?:maandag|dinsdag|woensdag|donderdag|vrijdag|morgen|het eind)|"
    r"morgen|demain|mañana|amanhã|domani)"
)
_COMMITMENT: Final = (
    (re.compile(r"^(?P<w>i|we) promised (?P<x>.+)$", re.I), "Promised {x}"),
    (re.compile(r"^(?P<w>i|we)(?: have|'ve)? committed to (?P<x>.+)$", re.I), "Committed to {x}"),
    (
        re.compile(r"^(?P<w>i|we) told (?P<x>.+?) (?:we'd|we would|i'd|i would) (?P<y>.+)$", re.I),
        "Told {x} we would {y}",
    ),
    (re.compile(r"^(?P<w>we) owe (?P<x>.+ " + _DEADLINE + r".*)$", re.I), "Owe {x}"),
    (
        re.compile(
            r"^(?P<w>i|we)(?:'ll| will) (?P<x>(?:send|deliver|finish|ship|publish|review|"
            r"write|hand over|have) .+ " + _DEADLINE + r".*)$",
            re.I,
        ),
        "Will {x}",
    ),
    # revision 24: any piece of work the person says they will do by a named day ("I'm
    # going to talk to the design team on Monday", "we'll migrate the billing db next
    # week"), not what they will be ("I'll be off on Friday") or may do, nor "it"
    (
        re.compile(
            r"^(?P<w>i|we)(?:'ll| will|'m going to| am going to|'re going to| are going to|"
            r"'m gonna) (?!be\b|have to\b|need to\b|try\b|probably\b|maybe\b|see\b|"
            r"the\b|a\b|my\b|bed\b|sleep\b)(?P<x>\w+\b"
            # a piece of work named, not only "it" ("we'll do it this afternoon")
            r"(?! (?:(?:at|on|to|into|over|through|with) )?(?:it|that|this|them) "
            + _ON_A_DAY
            + r")"
            r".{0,80}?\b" + _ON_A_DAY + r"\b.*)$",
            re.I,
        ),
        "Will {x}",
    ),
    (re.compile(r"^(?:the )?deadline for (?P<x>.+) is (?P<y>.+)$", re.I), "Deadline for {x}: {y}"),
    # revision 23: a promise, and work handed over by a day, in the six other languages the
    # rules read ("ich habe dem Kunden versprochen, ...", "j'envoie la facture d'ici
    # vendredi", "le mando la factura antes del viernes", "ik stuur de factuur voor vrijdag")
    (re.compile(r"^(?P<x>" + _PROMISED + r".+)$", re.I), "{X}"),
    (re.compile(r"^(?P<x>" + _HANDED + r"\b.{3,80}?\b" + _BY_DAY + r"\b.*)$", re.I), "{X}"),
    (
        re.compile(r"^(?:the )?(?P<x>.+?) is due (?P<y>(?:by|on|before) .+)$", re.I),
        "{x} is due {y}",
    ),
)
_CORRECTION_LEAD: Final = re.compile(
    r"^(?:(?:no|nope|nein|wrong(?: again)?|not that|that's wrong|that's not right|actually|"
    # revision 23: "no" in French, Portuguese and Dutch ("nein", Spanish and Italian "no"
    # above)
    r"non|não|nee)"
    r"\s*[,:!.-]+\s*|(?:i said|i told you|like i said|as i said|again|once more)\b[\s,:!.-]*|"
    # a person taking back what they just said (revision 22): "actually no wait,",
    # "no wait,", "wait, no,", "scratch that,", "correction:", "sorry, I meant"
    r"(?:actually,?\s+(?:no,?\s+)?wait|actually,?\s+no|no,?\s+wait|wait,?\s+no|"
    r"scratch that|correction|(?:sorry|oops|my bad|my mistake)[,!.]*\s+i meant|i meant|"
    # revision 27: "you've got it backwards:", "you mixed them up,", "small correction:",
    # "not quite,"
    r"you(?:'ve| have)? got it backwards|you have it backwards|"
    r"you(?:'ve| have)? mixed (?:them|it|those|these|the two) up|"
    r"(?:small|quick|one|a small|a quick) correction|not quite(?=\s*[,:!.-]))"
    r"\b[\s,:!.-]*)",
    re.I,
)
_CORRECTION_TAIL: Final = re.compile(
    r"[,.]?\s*(?:i already told you|like i said|as i said|again)[.!]*$", re.I
)
_NOT_CORRECTION: Final = re.compile(
    r"^(?:worries|problem|thanks|i don't|i think|still|never mind|nevermind|that's fine)\b", re.I
)
#: "X, not Y" in the six other languages the rules read, after a correction's lead:
#: "nein, nimm pnpm, nicht npm", "non, utilise pnpm, pas npm", "nee, gebruik pnpm, niet
#: npm" (revision 23).
_THIS_NOT_THAT: Final = re.compile(
    r"\S,\s+(?:nicht|kein|keine|pas|no|não|non|niet|geen)\s+\S", re.I
)
_STOP_DOING: Final = re.compile(r"^(?:please\s+)?stop (?P<x>\w+ing\b.+)$", re.I)
_RULE_WORDS: Final = re.compile(r"\b(always|never|from now on|every time|in this project)\b", re.I)
#: Programs a person names as the way to do something (revision 18): a command after "run"
#: or "use" without backticks is a tool usage only when it starts with one of these or ./.
_PROGRAM: Final = (
    r"\./[\w.-]+|npm|pnpm|yarn|npx|pip|pipx|uv|poetry|python3?|pytest|make|cargo|go|docker|"
    r"docker-compose|kubectl|git|gradle|mvn|bundle|rake|rails|mix|dotnet|terraform|"
    r"ansible-playbook|helm|just|deno|bun|node|tox|nox|ruff|mypy|eslint|prettier|composer|"
    r"php|brew|bazel|nix|flutter|dart|swift|xcodebuild|fastlane|rebar3|stack|cabal|sbt|lein|"
    r"dune|opam|conda|mamba|Rscript|julia|psql|mysql|sqlite3|redis-cli|aws|gcloud|az|"
    r"firebase|vercel|netlify|heroku|fly|wrangler|turbo|nx|vite|jest|vitest|playwright|"
    r"cypress|rspec|phpunit|ctest|cmake|ninja|meson|west|pio|arduino-cli|hugo|jekyll|"
    r"latexmk|pandoc|ffmpeg|rsync|ssh|scp|systemctl|journalctl|crontab|"
    # revision 24: more of the programs developers name
    r"mkdocs|sphinx-build|alembic|pre-commit|black|isort|flake8|pylint|golangci-lint|"
    r"gofmt|rustfmt|gem|pod|expo|eas|ng|nest|skaffold|tilt|colima|podman|buildah|"
    r"minikube|kind|k3d|ansible|packer|vagrant|pulumi|sam|cdk|serverless|gh|glab|"
    r"npm-run-all|lerna|changeset|semantic-release|prisma|drizzle-kit|sequelize|knex|"
    r"flyway|liquibase|dbt|airflow|celery|gunicorn|uvicorn|hatch|pdm|rye|pixi"
)
#: A word of the sentence around a program's name, not its first argument ("built with
#: mkdocs and deployed", "we use go for the backend"; revision 24).
_NOT_AN_ARGUMENT: Final = (
    r"(?:and|or|but|for|to|in|on|at|the|a|an|with|from|by|of|so|because|when|if|then|is|"
    r"are|was|were|as|instead|not|too|only|here|there|now|again|locally|first)"
)
#: A script named by its file ("deploy.sh", "./bin/seed.py").
_SCRIPT: Final = (
    r"(?:\./)?[\w./-]+\.(?:sh|py|rb|js|mjs|ts|pl|ps1|bat|cmd|mk)|"
    # revision 25: a script by its path, without an extension ("./bin/reset --seed")
    r"\./[\w.-]+(?:/[\w.-]+)*|(?:bin|scripts?|tools)/[\w.-]+"
)
#: Words a sentence may open with before what it says (revision 25): "ok, good, use ...".
_OPENERS: Final = (
    r"^(?:please\s+)?(?:(?:ok|okay|good|great|right|cool|thanks|and|also|oh|so)\b[,.!]?\s+)*"
)
#: ... and how it may end saying that it holds from now on (revision 25).
_FROM_NOW_ON: Final = (
    r",?\s+(?:from now on|going forward|from here on|from today on)(?:,? please)?)[.!]*$"
)
#: A command named without backticks: a known program and what follows it, or a script.
_UNQUOTED: Final = (
    r"(?:(?:" + _PROGRAM + r")\s+(?!" + _NOT_AN_ARGUMENT + r"\b)[\w:./@=-]+|" + _SCRIPT + r"|"
    # revision 24: a program not listed, known by an option among its first words ("py-spy
    # record -o profile.svg", "openapi-generator-cli generate -i api.yaml")
    r"[a-z][\w.-]{1,30}(?:\s+(?!-)(?!" + _NOT_AN_ARGUMENT + r"\b)[\w:./@=-]+){0,3}"
    r"\s+--?[a-z][\w=.-]*)\b"
)
_TOOL: Final = (
    re.compile(
        r"^(?P<x>(?:run|build|deploy|release|profile|seed|type-check|regenerate|lint|"
        r"format|start|test)\b.*? (?:with|via|using) `[^`]+`.*)$",
        re.I,
    ),
    re.compile(r"^(?P<x>(?:to|for) [^,`]+, (?:run|use) `[^`]+`.*)$", re.I),
    re.compile(r"^(?P<x>use `[^`]+` (?:to|for) .+)$", re.I),
    re.compile(
        r"^(?P<x>.+ (?:(?:is|are|can be|should be|must be|has to be|have to be) (?:run|done|"
        r"built|generated|deployed|tested|linted|"
        r"formatted|published|released|started|served|compiled|bundled|migrated|seeded|"
        r"loaded|applied|created|reset|refreshed|imported|exported|updated|cleaned|"
        r"restored|backed up)|"
        r"runs?) (?:with|via|using) "
        # revision 24: or a command named without backticks ("the e2e tests run with npx
        # playwright test")
        r"(?:`[^`]+`|" + _UNQUOTED + r").*)$",
        re.I,
    ),
    re.compile(r"^(?P<x>on (?:my|this) (?:laptop|machine).*`[^`]+`.*)$", re.I),
    # revision 18: a command named without backticks, with what it is for ("if you need
    # to refresh the fixtures, just run docker compose up -d", "use pnpm test to profile
    # the worker, not the IDE button")
    re.compile(
        r"^(?P<x>(?:(?:if|when|whenever) (?:you )?(?:need|want) to|to|for) [^,]{2,60},\s*"
        r"(?:just |then |always )?(?:run|use) (?:" + _PROGRAM + r")\b.*)$",
        re.I,
    ),
    # revision 24: the same without the comma, the command with what follows it ("to start
    # the dev server use npm run dev")
    re.compile(
        r"^(?P<x>(?:(?:if|when|whenever) (?:you )?(?:need|want) to|to|for an?) [^,;]{2,60}? "
        # revision 25: "for a quick smoke test just hit make smoke"
        r"(?:just |then |always )?(?:run|use|hit|type) " + _UNQUOTED + r".*)$",
        re.I,
    ),
    # ... and what the agent can or must do with a command or a script ("you can reset the
    # local db with ./scripts/reset-db.sh", "you have to run them with python -m pytest")
    re.compile(
        r"^(?P<x>you (?:can|could|have to|need to|should|must) (?:always |just )?"
        r"[a-z]+\b[^,;`]{0,40}? (?:with|via|using) (?:the (?:script|command) )?"
        + _UNQUOTED
        + r".*)$",
        re.I,
    ),
    re.compile(
        r"^(?P<x>(?:just |always )?(?:run|use) (?:" + _PROGRAM + r")\b[^,;]{0,60}? "
        r"(?:to|for) (?!now\b|today\b|me\b|us\b|this\b|that\b|the moment\b).+)$",
        re.I,
    ),
    # revision 23: how a piece of work is run, with a command named without backticks
    # ("run it with deno task dev, plain deno run misses the permissions flags", "on
    # staging we seed with php artisan db:seed --class=DemoSeeder", "I deploy always with
    # the script deploy.sh"): the verb of the work, then with, via or using, then a
    # program and what follows it, or a script by its file name
    re.compile(
        r"^(?P<x>(?:(?:on|in|for) [\w.-]+,? )?(?:(?:we|i|you) (?:always |usually |only )?)?"
        r"(?:run|build|deploy|release|profile|seed|type-check|regenerate|lint|format|start|"
        r"test|publish|bootstrap|migrate|package|ship|serve|bump|generate|"
        # revision 24
        r"debug|check|verify|benchmark|install|update|upgrade|clean|reset|restart|backup|"
        r"restore|inspect|watch|compile|bundle|preview|export|import|sync)s?\b[^,;`]{0,40}? "
        r"(?:always |only )?(?:with|via|using) (?:the (?:script|command) )?"
        r"(?:`[^`]+`|" + _UNQUOTED + r").*)$",
        re.I,
    ),
    # revision 25: an option or a command to use or pass from now on ("use --fast for local
    # builds from now on", "pass --no-cache to docker build going forward")
    re.compile(
        _OPENERS + r"(?P<x>(?:always |just )?(?:use|run|pass|add|call|start) [^,;]{0,40}?"
        r"(?:(?<![\w-])--?[a-z][\w=.-]*|`[^`]+`|" + _UNQUOTED + r")[^;]*?" + _FROM_NOW_ON,
        re.I,
    ),
    # revision 25: a verb of any work done with a command known by an option ("attach it
    # with py-spy top --pid", "we trace it with strace -f"), not what was done ("I ran it
    # with pytest -x")
    re.compile(
        # (never a URL nor a pipe into a shell: what a poisoned text wants kept)
        r"^(?!.*(?:://|\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b))"
        r"(?P<x>(?!(?:we |you |i )?(?:ran|tried|did|used|had|was|were)\b)"
        r"(?:(?:we|you|i) (?:always |usually |just )?)?[a-z]+\b[^,;`]{0,40}? (?:with|via|using) "
        r"[a-z][\w.-]{1,30}(?:\s+(?!-)[\w:./@=-]+){0,3}"
        r"\s+--?[a-z][\w=.-]*\b.*)$",
        re.I,
    ),
    # "the way to run a single test here is pytest -k name", "the command to update the
    # lockfile is uv lock": how a thing is done, named as such
    re.compile(
        r"^(?P<x>(?:the )?(?:way|command|script) to [^,;]{3,60}? (?:here )?is "
        r"(?:to run |running )?(?:`[^`]+`|" + _UNQUOTED + r").*)$",
        re.I,
    ),
    # ... and the same in German, French, Spanish, Portuguese, Italian and Dutch: "führ die
    # Tests mit pnpm test aus", "lance les tests avec pnpm test", "ejecuta los tests con
    # pnpm test", "draai de tests met pnpm test"
    re.compile(
        r"^(?P<x>(?:bitte )?(?:führ|führe|starte|baue|teste|deploye|lance|lancez|exécute|"
        r"construis|déploie|ejecuta|corre|lanza|compila|despliega|roda|rode|executa|"
        r"execute|lancia|esegui|fai girare|draai|bouw|start)\b[^,;`]{0,40}? "
        r"(?:mit|avec|con|com|met|via|tramite) " + _UNQUOTED + r".*)$",
        re.I,
    ),
)
_CONVENTION: Final = (
    (
        re.compile(
            r"^(?:in|for) (?:this|our|the) (?:repo|repository|project|codebase)\s*,?\s*"
            r"(?P<x>.+)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?:this|the) (?:project|repo|repository|codebase) (?P<x>(?:uses|has|needs|"
            r"requires|follows) .+)$",
            re.I,
        ),
        "The project {x}",
    ),
    (
        re.compile(
            r"^we (?P<x>(?:use|don't use|do not use|follow|name|keep|don't merge|never|"
            r"always|usually|squash) .+)$",
            re.I,
        ),
        "{X}",
    ),
    # revision 24: more of what a team does the same way every time, in their words ("we
    # squash-merge everything into main", "we pin every dependency", "we tag releases as
    # vX.Y.Z")
    (
        re.compile(
            r"^(?P<x>we (?:squash-merge|merge|rebase|tag|pin|vendor|version|prefix|write|"
            r"review|store|release|deploy|ship|require|avoid|prefer|document|log|test) .+)$",
            re.I,
        ),
        "{X}",
    ),
    # ... and what a kind of thing follows ("commit messages follow conventional commits",
    # "the API follows JSON:API")
    (
        re.compile(
            r"^(?P<x>(?:the |all |every |each |our )?[\w -]{2,40}? (?:follows?|must follow|"
            r"should follow|adheres? to|conforms? to|sticks? to) .+)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^our (?P<x>.+?) (?P<v>follow|are named|are|is|always|go|live|lives|use)\b"
            r"(?P<y>.*)$",
            re.I,
        ),
        "The {x} {v}{y}",
    ),
    (
        re.compile(
            r"^(?P<x>(?:(?:the )?(?:tests|docs|api|main branch|feature flags|"
            r"environment variables|all timestamps)|the [\w/.-]+ folder)\b.*? "
            r"(?:are|is|live|lives|go|goes|called|prefixed)\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?P<x>.*(?:\bport \d{2,5}\b|\blocalhost:\d{2,5}\b|/home/\S+|/Users/\S+).*)$", re.I
        ),
        "{X}",
    ),
    (
        re.compile(r"^(?:right, )?it's (?P<x>.+) in this repo\b(?P<y>.*)$", re.I),
        "In this repo it's {x}{y}",
    ),
)
#: "I prefer" in Swedish, Danish, Norwegian, Polish, Czech and Finnish (revision 24).
_PREFER_ELSEWHERE: Final = (
    r"jag föredrar|jag vill hellre|jeg foretrækker|jeg foretrekker|jeg vil hell?ere|wolę|"
    r"preferuję|preferuji|dávám přednost|raději|suosin|mieluummin"
)
#: "I like" and "I don't like" in the same languages.
_LIKE_ELSEWHERE: Final = (
    r"jag gillar(?: inte)?|jag tycker (?:inte )?om|jeg kan(?: godt| ikke)? lide|"
    r"jeg liker(?: ikke)?|(?:nie )?lubię|(?:ne)?mám r[áa]da?|en pidä|pidän"
)
#: "Answer me (always) in <language>" (revision 24): a verb of answering or writing to the
#: person, then a language.
_ANSWER_ME: Final = (
    r"(?:answer|reply to|respond to|write to|talk to|speak to) me (?:always |only )?in "
    r"(?:english|german|french|spanish|portuguese|italian|dutch|swedish|danish|norwegian|"
    r"polish|czech|finnish|turkish|greek|russian|ukrainian|japanese|chinese|korean|arabic|"
    r"hebrew|hindi)|"
    r"(?:antworte|schreib|sprich) mir (?:bitte )?(?:immer |nur )?auf \w+|"
    r"(?:réponds|écris|parle)-moi (?:toujours |uniquement )?en \w+|"
    r"(?:respóndeme|contéstame|escríbeme|háblame) (?:siempre |solo )?en \w+|"
    r"(?:responda-me|responde-me|escreva-me|fala comigo) (?:sempre )?em \w+|"
    r"(?:rispondimi|scrivimi|parlami) (?:sempre |solo )?in \w+|"
    r"(?:antwoord|schrijf) me (?:altijd )?in het \w+|"
    r"(?:svara|skriv till) mig (?:alltid )?på \w+|(?:svar|skriv til) meg (?:alltid )?på \w+|"
    r"(?:svar|skriv til) mig (?:altid )?på \w+|"
    r"(?:odpowiadaj|pisz do) mi(?:nie)? (?:zawsze )?po \w+|"
    r"(?:odpovídej|piš) mi (?:vždy )?\w+|vastaa (?:minulle )?(?:aina )?\w+ksi"
)
#: What a like is about when it is about what was just said or done ("jag gillar det").
_JUST_SAID: Final = r"det|den|dem|detta|dette|to|tego|tohle|tuto|sitä|tätä|siitä|tästä"
#: What a dislike cannot start with: the thing at hand (revision 27).
_NOT_AT_HAND: Final = r"(?!(?:this|that|these|those)\b|it\b(?! when\b))"
_PREFERENCE: Final = (
    (re.compile(r"^i(?:'d| would)? prefer (?:that )?(?P<x>.+)$", re.I), "Prefers {x}"),
    (re.compile(r"^my preference is (?:for )?(?P<x>.+)$", re.I), "Prefers {x}"),
    # revision 27: how the person works best, and what time or way suits them best
    (
        re.compile(
            r"^(?P<x>i (?:work|think|focus|learn|concentrate|read) best (?:with|when|in|at|"
            r"after|before|if|on|from) .+)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?P<x>(?!(?:this|that|it|these|those)\b)[\w' -]{2,40}? (?:is|are|works?) "
            r"(?:best|better) for (?:[\w-]+ ){0,3}?(?:with )?me\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (re.compile(r"^i(?:'d| would) rather (?P<x>.+)$", re.I), "Would rather {x}"),
    (re.compile(r"^i(?:'d| would) like you to (?P<x>.+)$", re.I), "Wants you to {x}"),
    (
        re.compile(
            r"^i (?:really )?like (?P<x>(?:it when|my|to|using|the|uppercase|lowercase) .+)$", re.I
        ),
        "Likes {x}",
    ),
    (re.compile(r"^when (?P<w>.+?), i (?:really )?like (?P<x>.+)$", re.I), "Likes {x} when {w}"),
    # (revision 27: not a dislike of the thing at hand, "I hate this bug", "I don't like
    # that", unless "it when")
    (
        re.compile(r"^i (?:really )?(?:hate|dislike) " + _NOT_AT_HAND + r"(?P<x>.+)$", re.I),
        "Dislikes {x}",
    ),
    # revision 25: "i'm more of a tabs person", "I'm not a morning person"
    (
        re.compile(
            r"^(?P<x>i(?:'m| am) (?:more of |very much |not really |not )?an? [\w-]+ person\b.*)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(r"^i (?:really )?don't like " + _NOT_AT_HAND + r"(?P<x>.+)$", re.I),
        "Dislikes {x}",
    ),
    (
        re.compile(
            r"^(?:please\s+)?(?P<x>(?:always|never|don't|do not) (?!know|mind|worry)[\w-]+ .+)$",
            re.I,
        ),
        "{X}",
    ),
    (re.compile(r"^(?:please\s+)?(?P<x>from now on,? .+)$", re.I), "{X}"),
    # revision 25: what holds from now on said at the end ("use --fast for local builds
    # from now on"), and what the person always or never wants ("i always want the build
    # size printed after each build")
    (
        re.compile(
            _OPENERS + r"(?P<x>(?!let's\b|let us\b)[a-z][\w'-]* .+?" + _FROM_NOW_ON,
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(r"^(?P<x>i (?:always|never) (?:want|need|expect|like) .+)$", re.I),
        "{X}",
    ),
    (
        re.compile(
            r"^(?:please\s+)?(?P<x>keep (?:your |the )?(?:answers|responses|replies|"
            r"explanations|it|code comments)\b.+)$",
            re.I,
        ),
        "{X}",
    ),
    (
        re.compile(
            r"^(?:ich bevorzuge|je préfère|prefiero|prefiro|preferisco|ik heb liever|"
            rf"ik wil liever|{_PREFER_ELSEWHERE}),? (?P<x>.+)$",
            re.I,
        ),
        "Prefers: {x}",
    ),
    # revision 24: the language the agent is to answer the person in, in English and in
    # the languages capture reads ("please write to me in French", "antworte mir bitte
    # immer auf Deutsch", "réponds-moi toujours en français", "respóndeme en español")
    (re.compile(rf"^(?:please |bitte |por favor )?(?P<x>(?:{_ANSWER_ME})\b.*)$", re.I), "{X}"),
    # revision 24: what the person likes or does not, in the languages capture reads,
    # about a thing rather than what was just said ("Mám rád krátké odpovědi", "Jeg liker
    # ikke lange e-poster"; not "jag gillar det", "lubię to")
    (re.compile(rf"^(?P<x>(?:{_LIKE_ELSEWHERE}) (?!{_JUST_SAID}\b)\w.*)$", re.I), "{X}"),
)
_RULES: Final = {
    "identity": _IDENTITY,
    "decision": _DECISION,
    "commitment": _COMMITMENT,
    "tool": tuple((rx, "{X}") for rx in _TOOL),
    "convention": _CONVENTION,
    "preference": _PREFERENCE,
}
#: The order the rules are tried in: the first that matches wins.
_ORDER: Final = (
    "identity",
    "decision",
    "commitment",
    "correction",
    "tool",
    "convention",
    "preference",
)
_IMPLICIT: Final = re.compile(r"^(?:please\s+)?(?P<x>use (?!`)[\w .,'-]+)$", re.I)


def _fill(template: str, m: re.Match[str]) -> str:
    groups = {k: (v or "") for k, v in m.groupdict().items()}
    x = groups.get("x", "")
    return template.format(X=x[:1].upper() + x[1:], **groups).strip()


def _first(rules: Iterable[tuple[re.Pattern[str], str]], s: str) -> str | None:
    for rx, template in rules:
        m = rx.match(s)
        if m:
            return _fill(template, m)
    return None


#: An error a person names in their own words: an error word, an exception's name
#: ("ModuleNotFoundError"), an errno code ("EACCES"), an exit code.
_ERROR_SAID: Final = re.compile(
    r"(?i:\b(?:errors?|exceptions?|fail(?:s|ed|ing|ure)?|crash(?:es|ed|ing)?|broke|broken|"
    r"timed out|time ?outs?|denied|refused|not found|segfault|panic(?:s|ked)?|"
    r"stack ?trace|exit (?:code|status) \d+)\b)|\b\w+(?:Error|Exception)\b|\bE[A-Z]{3,}\b"
)
#: How it was fixed, said with it: "fixed it with X", "solved by X", "the fix was X",
#: "X -> Y", "reinstalling X fixed it", "`cmd` solved it".
_FIX_SAID: Final = re.compile(
    r"(?i:\b(?:fixed|solved|resolved|sorted)(?: (?:it|that|this|them))? (?:by|with|using)\b|"
    r"\bthe (?:fix|workaround|solution)\b[^.;]{0,60}\b(?:is|was)\b|\bwhat (?:fixed|solved) it\b|"
    r"\b\w+ing\b[^.;]{0,80}\b(?:fixed|fixes|solved|solves|resolved|resolves) "
    r"(?:it|that|this|them|the (?:issue|problem|error|build|tests?))\b|"
    r"\b\w+ing\b[^.;]{0,80}\b(?:made|makes) (?:it|that|this|them|the \w+) "
    r"(?:go away|work|pass)\b)|"
    r"`[^`]+`\s+(?i:fixed|fixes|solved|solves|resolved|resolves)\b|\s->\s"
)
#: "If you get EACCES, run ...": a lesson in the form of an order.
_IF_YOU_GET: Final = re.compile(
    r"^(?:and |but |so )?(?:if|when(?:ever)?) [^,]{0,60}\b(?:get|gets|see|sees|hit|hits|"
    r"run into|throws?|fails?|crash(?:es)?|says?|shows?)\b[^,]{2,100},\s*(?:just |then |always )?"
    r"(?:run|use|do|add|set|delete|remove|restart|reinstall|install|clear|upgrade|"
    r"downgrade|pin|export|source|start|stop|kill|rebuild|rerun|re-run)\b",
    re.I,
)


#: The categories a decision word makes a decision (revision 18); a correction, a
#: commitment, an error told with its fix and a "remember" stay what they are.
_MAY_BE_DECIDED: Final = frozenset(["fact", "convention", "preference", "identity", "tool"])


def _told_fixes_joined(said: list[str]) -> list[str]:
    """``said`` with an error told in one sentence and how it was fixed told in the next
    ("the migration failed on prod. we fixed it by splitting it") joined into one."""
    out: list[str] = []
    for sentence in said:
        if (
            out
            and _ERROR_SAID.search(out[-1])
            and _FIX_SAID.search(out[-1]) is None
            and _FIX_SAID.search(sentence)
        ) or (
            out
            and _NOT_THAT.match(out[-1])
            and _NOT_THAT_BUT.match(f"{out[-1].rstrip()} {sentence.lstrip()}")
        ):
            out[-1] = f"{out[-1].rstrip()} {sentence.lstrip()}"
        else:
            out.append(sentence)
    return out


#: "not npm!" before the short sentence that says what instead ("not npm! pnpm"): one
#: correction (revision 18).
_NOT_THAT: Final = re.compile(r"^not [\w .+#/@-]{1,30}!+$", re.I)
#: ... and read so: "not npm! pnpm" -> "Pnpm, not npm".
_NOT_THAT_BUT: Final = re.compile(
    r"^not (?!(?:now|yet|that|this|like that|like this|again|today|here|there|so)!)"
    r"(?P<old>[\w.+#/@-]{1,30}(?: [\w.+#/@-]{1,30})?)!+\s*"
    r"(?P<new>[\w.+#/@-]{1,30}(?: [\w.+#/@-]{1,30})?)[!.]*$",
    re.I,
)


def _tells_a_fix(s: str) -> bool:
    """Whether ``s`` is a person's own account of an error and how it was fixed, in one
    sentence (issue 24: "npm install failed with EACCES, I fixed it with sudo chown -R
    $USER ~/.npm"). A fix that only pipes something into a shell or names a URL is kept
    only when they ask in so many words (a "remember")."""
    return (
        _ERROR_SAID.search(s) is not None
        and (_FIX_SAID.search(s) is not None or _IF_YOU_GET.match(s) is not None)
        and _CARRIES_PAYLOAD.search(s) is None
    )


@lru_cache(maxsize=256)
def classify(sentence: str) -> tuple[str, str, str, float] | None:
    """(category, kind, memory text, confidence) of one sentence, or None (cached: a
    sentence is read by judged() and again for its Detection's ``rule``)."""
    s = _FILLER.sub("", sentence.strip()).strip()
    m = _REMEMBER_LEAD.match(s)
    if m and not _NOT_REMEMBER.match(s):
        inner = m.group("x").strip()
        sub = classify(inner) if len(inner) > 3 else None
        kind = sub[0] if sub and sub[0] in ("identity", "decision", "commitment") else "remember"
        text = sub[2] if kind != "remember" and sub else _first_person(inner)
        return "remember", kind, text, EXPLICIT
    if _tells_a_fix(s):
        return "error-fix", "error-fix", s, ERROR_FIX
    for step in _ORDER:
        if step == "correction":
            correction = _correction(s)
            if correction is not None:
                return correction
            continue
        found = _first(_RULES[step], s)
        if found is not None:
            return step, step, found, EXPLICIT
    m = _IMPLICIT.match(s)
    if m:
        return "preference", "preference", _fill("{X}", m), IMPLICIT
    return None


#: "..., ok?" after a statement asks the agent to take it in, not a question (revision 18):
#: ok, okay, alright, got it, understood, d'accord, vale, va bene, capisce, oké, okej. Not
#: "right?", "yeah?", "no?", "ja?", which ask whether it holds.
_OK_TAG: Final = re.compile(
    r"(?<=\S),\s*(?:ok|okay|alright|got it|understood|d'accord|vale|¿vale|va bene|capisce|"
    r"oké|okej)\?+(?=\s*$)",
    re.I,
)
#: Advice in the person's first this many turns after a failure is about it (revision 18).
ADVICE_TURNS: Final = 2
#: What the rules or the scorer read as advice: a tool usage or a correction.
_ADVICE: Final = frozenset(["tool", "correction"])
#: Confidence of what the scorer finds: stored (seed 000 4.2's "high", below an explicit
#: statement a rule matched), or kept as a candidate until it recurs.
LEARNED: Final = 0.7
LEARNED_CANDIDATE: Final = 0.5
#: The scorer keeps no statement shorter than this (in words).
LEARNED_MIN_WORDS: Final = 4
#: A word that makes a short answer a rule of the place (Detector._answered).
_ANSWER_NORM: Final = re.compile(
    r"\b(?:always|never|only|every\w*|each|no exceptions|min(?:imum)?|max(?:imum)?|at least|"
    r"at most|immer|nie|niemals|nur|jede[nrs]?|siempre|nunca|solo|sólo|cada|toujours|jamais|"
    r"seulement|uniquement|chaque|altijd|nooit|alleen|elke|sempre|só|apenas|mai)\b",
    re.I,
)
#: "never mind", "nie mehr", ...: a rule word that states no rule.
_NEVER_MIND: Final = re.compile(r"\bnever ?mind\b|\bnevermind\b", re.I)
#: What follows English "was" where it asks yes or no ("Was the ...?"), not German "was"
#: ("what").
_WAS_ASKS: Final = r"\s+(?:the|it|this|that|there|he|she|they|you|your|my|a|an|any)\b"
#: The words a question for a value starts with (which, what, where, who), in the seven
#: languages; German "was" not where English "Was the ...?" asks yes or no.
_VALUE_WORDS: Final = (
    r"which|what|where|who|welche[rsnm]?|wo|wer|"
    rf"was(?!{_WAS_ASKS})|"
    r"quel(?:le)?s?|où|qui|qu['e]|que|qué|cuál|cuáles|dónde|quién|welk|welke|waar|wat|"
    r"qual|quais|onde|quem|quale|dove|chi"
)
#: A question for a value, not how, when or whether (Detector._answered).
_VALUE_QUESTION: Final = re.compile(rf"^[¿]?(?:{_VALUE_WORDS})\b", re.I)
#: An open question (it asks for a value, a way, a time: not a yes or no); "and the test
#: runner?" asks for one too.
_OPEN_QUESTION: Final = re.compile(
    rf"^[¿]?(?:{_VALUE_WORDS}|whom|whose|when|how|and|wie|wann|womit|worin|quand|comment|"
    r"combien|cuándo|cómo|cuánto|cuántos|wanneer|hoe|quando|quanto|come)\b",
    re.I,
)
#: The agent asks what to work on or what to do first ("How can I help?", "Which box
#: first?"): the answer is about today's task, not something to keep (Detector._answered).
_TASK_QUESTION: Final = re.compile(
    r"\b(?:how can i help|what can i (?:help|do)|what do you need|what(?:'s| is) the task|"
    r"what are we (?:working on|doing)|what (?:do you want|would you like) (?:me )?to do|"
    r"what should i (?:do|work on)|what(?:'s| is) next|where (?:should|do) i start|"
    r"(?:first|next|start with|begin with)\s*\?$|worum geht es|wie kann ich helfen|"
    # which of the things at hand, and what is wrong with it ("Which one?", "What's the
    # issue?", "Which year are we doing?", "What should the dashboard show?")
    r"\b(?:which|what) one\b|\b(?:this|that) one\b|\bin this\b|\bso far\b|"
    r"\bthis (?!project|repo|app|codebase|site|team|company|business|shop)\w+\?|"
    r"\bis (?:it|this|that) for\b|^(?:which|welche[rs]?|cuál(?:es)?|quel(?:le)?|laquelle|"
    r"lequel|które|który|która|quale|qual|welke)\s*\?$|empezamos|commençons|"
    r"beginnen wir|(?:start|begin)\s*\?$|"
    r"\bare we (?:doing|on)\b|\bwhere is it\b|what(?:'s| is) (?:wrong|the (?:issue|problem))|"
    r"what(?:'s| is) (?:going on|up with)|\b(?:do you want|would you like) to (?:change|add|"
    r"fix|do)\b|\bshould (?:the|this|it) \w+ (?:show|say|contain|include|cover|be about)\b|"
    r"\bshould (?:this|it) be about\b|ne va pas|\bwas ist (?:los|kaputt|das problem)|"
    r"fangen wir an|qué (?:quieres|te gustaría) cambiar|qué pasa|qu'est-ce qui (?:se passe|"
    r"ne marche pas)|\b(?:zuerst|primero|d'abord|en premier|eerst|primeiro)\s*\?$|"
    r"womit kann ich|te ayudo|en qué (?:te |le )?puedo ayudar|sur quoi travaillons|"
    r"comment (?:puis-je|je peux) (?:vous |t')?aider|vad kan jag hjälpa|w czym mogę pomóc|"
    r"(?:como|em que) posso ajudar|come posso aiutar|waarmee kan ik|hoe kan ik (?:je |u )?helpen)",
    re.I,
)
#: An answer of nothing but yes, no, thanks and when ("yes pls", "not yet", "no thanks",
#: "ja gern"): it takes or declines an offer, and keeps nothing (Detector._answered).
_NO_ANSWER: Final = re.compile(
    r"(?:\W*\b(?:yes|yeah|yep|yup|no|nope|nah|ok|okay|sure|please|pls|plz|thanks|thank|you|"
    r"thx|cheers|not|now|yet|later|go|ahead|fine|great|good|perfect|do|it|maybe|for|exactly|"
    r"correct|right|ja|nein|danke|bitte|gern|gerne|noch|nicht|genau|richtig|klar|oui|non|"
    r"merci|pas|encore|exactement|d'accord|sí|si|gracias|vale|claro|todavía|exacto|sim|não|"
    r"obrigad[oa]|ainda|exato|isso|grazie|certo|ancora|esatto|giusto|nee|graag|dank|je|"
    r"bedankt|prima|nog|niet|precies|klopt)\b)+\W*",
    re.I,
)
#: An open question about what the agent is to do next ("Which file should I open?"),
#: not about how things are ("Which wiki do you use?") (Detector._answered).
_NEXT_ACT: Final = re.compile(
    r"\b(?:should|shall|can|may|must) (?:i|we)\b|\b(?:do you want|would you like) me\b|"
    r"\bfor (?:today|now|this)\b|\b(?:soll|sollen|darf|kann) ich\b|\b(?:debo|puedo)\b|"
    r"\b(?:dois-je|puis-je|je dois)\b|\b(?:moet|mag|kan|zal) ik\b|\b(?:devo|posso)\b|"
    # revision 25: "Want me to add tests too?", "Anything else?", "Je lance les tests ?"
    r"\b(?:want|need|like) me to\b|\banything else\b|^(?:je|ich|ik|io) \w+[^?]*\?$",
    re.I,
)
#: What may follow the reply word when it says no more than yes or no: nothing, or the
#: person or the moment ("I'll manage", "it's fine", "that's it", "not today", "I need to
#: ask the board first", "aujourd'hui") (revision 25).
_REPLY_REST: Final = re.compile(
    r"^(?:(?:please|pls|thanks|thank you|danke|bitte|merci|gracias|grazie|bedankt)\b[\s,.!]*)?"
    r"(?:(?:i|i'll|i'm|i'd|i've|i will|i need|i want|let me|let's|we'll|it|it's|that|"
    r"that's|this|nothing|not|no|just|maybe|later|now|today|tonight|tomorrow|all good|fine|"
    r"good|perfect|great|go ahead|do it|aujourd'hui|demain|heute|morgen|hoy|mañana|oggi|"
    r"domani|vandaag|hoje|amanhã)\b.*)?$",
    re.I | re.S,
)
#: How a reply to the agent's offer begins ("no, that's all", "not yet", "sure, go ahead",
#: "no need"): with nothing that stands after it, a go-ahead or a refusal for the work at
#: hand (revision 25).
_REPLY_LEAD: Final = re.compile(
    r"^\W*(?:no|nope|nah|yes|yeah|yep|yup|sure|ok|okay|not (?:yet|now|today|for now|this time)|"
    r"go ahead|please do|do it|ja|nein|noch nicht|oui|non|pas encore|sí|si|vale|todavía no|"
    r"nee|nog niet|sì|ancora no|sim|não|ainda não)\b",
    re.I,
)
#: An answer put off or passed on ("let me check", "one sec", "no idea", "ask Priya",
#: "I'll find out"): it answers nothing yet (Detector._answered).
_DEFERRED: Final = re.compile(
    r"\W*(?:let me (?:check|see|look|think|ask|find out)|one sec|hold on|just a sec|"
    r"i'?ll (?:check|ask|see|look|find out|get back)|no idea|dunno|idk|not sure|ask \w+|"
    r"check with|depends|it depends|keine ahnung|moment|ni idea|pas sûr|aucune idée|geen idee|"
    r"non lo so|não sei)\b",
    re.I,
)
#: An answer that leaves the choice to the agent ("whatever, I just need it to run Figma",
#: "either is fine", "egal"): no preference to keep (Detector._answered).
_INDIFFERENT: Final = re.compile(
    r"\W*(?:whatever|either(?: one| is fine| way)?|any(?: one| is fine)?|doesn'?t matter|"
    r"not really(?:\W*$|\W+(?:i )?(?:never|haven'?t) thought)|"
    r"(?:i )?(?:never|haven'?t) thought about it|"
    r"don'?t care|i don'?t mind|up to you|your call|egal|ist mir egal|me da igual|da igual|"
    r"cualquiera|peu importe|n'importe|maakt niet uit|non importa|tanto faz|qualquer)\b",
    re.I,
)
#: A question about how today's work went or stands ("Which tests failed?", "What's
#: missing?", "What happened to the export?"): its answer is not a standing fact.
_TODAY: Final = re.compile(
    r"\b(?:happen(?:ed|s)?|fail(?:ed|ing|s)?|broke|broken|went|did|was|were|wrong|missing|"
    r"left|still|again|today|tonight|now|yet|this time|currently|at the moment|so far|"
    r"latest|last|just|error|errors|crash(?:ed|es)?|first|next)\b",
    re.I,
)
#: A yes-or-no question about how something went ("Was the deploy green?", "Did the import
#: finish?"): its answer is about that once, not how things stand (Detector._answered).
_WENT: Final = re.compile(
    rf"^(?:were|did|had|war|waren|fue|fueron|was(?={_WAS_ASKS}))\b",
    re.I,
)
#: The longest question of the agent's a short answer is read with (Detector._answered).
MAX_QUESTION_WORDS: Final = 20
#: A question put to the person in the second person singular ("Which phone do you
#: have?", "Qui est ton agence ?"), less the words that are something else in another
#: language ("je", "u", "su", "te").
_ASKS_YOU: Final = re.compile(
    r"\b(?:you|your|yours|du|dein|deine|deinen|deiner|dir|dich|tu|ton|ta|tes|toi|ti|tuo|"
    r"tua|tuoi|tue|tú|tus|jij|jouw|você|seu|sua|teu)\b",
    re.I,
)
#: What a person asked about their tools asks about the work ("Which wiki do you use?",
#: "Where do you keep the volunteer list?"): its answer is the project's.
_WORK_THING: Final = re.compile(
    r"\b(?:(?:tool|wiki|system|program|platform|editor|ide|language|framework|server|host|"
    r"stack|cms|crm|format|version|werkzeug|programm|outil|logiciel|herramienta|programa|"
    r"strumento|ferramenta)s?|software|library|libraries|hosting|keep|store|use|support)\b",
    re.I,
)
#: An open question for how the work is to be done ("Which date format should I normalise
#: to?", "Which citation style does your department want?"): its answer is a rule of the
#: place, not how things are (Detector._answered).
_PRESCRIBED: Final = re.compile(
    r"\b(?:should|soll(?:en|te)?|doit|doivent|debe|deben|deve|devono|moet|moeten)\b|"
    r"\b(?:does|do) (?!you\b)(?:\w+ ){1,3}(?:want|expect|require|prefer)\b",
    re.I,
)
#: The longest answer read with the question it answers when it says nothing alone
#: (Detector._answered).
MAX_ANSWER_WORDS: Final = 8
#: A question about the person's own taste ("Any airline you avoid?", "Do you want the
#: cheapest or full cover?", "Magst du ...?"): its answer is what they want, a preference.
_TASTE: Final = re.compile(
    r"\b(?:you|du|tu|vous|usted|u|je|dich|dir|te|ti)\b.{0,40}?\b(?:(?:want|like)(?! me\b)|"
    r"prefer|love|hate|enjoy|avoid|mind|rather|can'?t stand|cannot stand|willst|möchtest|"
    r"magst|bevorzugst|vermeidest|quieres|prefieres|gusta|evitas|veux|préfères|préférez|"
    r"aimes|aimez|évites|wil|wilt|liever|vermijd|vuoi|preferisci|piace|eviti|queres|"
    r"preferes|gosta)\b|\bfavou?rite\b",
    re.I,
)


#: Where a long sentence joins clauses: "; ", ", and ", ", but ", a dash.
_CLAUSE: Final = re.compile(r";\s+|,\s+(?:and|but|plus|also)\s+|\s+(?:—|–|--)\s+")


def _in_a_clause(sentence: str) -> tuple[str, str, str, float] | None:
    """A statement inside a longer sentence ("the reports page is slow, and the reports
    db is a read replica"): each clause that is a statement of its own, the first kept."""
    parts = [p.strip() for p in _CLAUSE.split(sentence)]
    if len(parts) < 2:
        return None
    for part in parts:
        if len(part.split()) < 4 or not_a_statement(part):
            continue
        hit = judged(part)
        if hit is not None and hit is not _VETOED:
            return hit
    return None


#: What judged() returns for a statement a rule found and the scorer is sure holds nothing.
_VETOED: Final = ("", "", "", 0.0)


#: What a rule finds as one of these stays it, whatever category the scorer reads in the
#: sentence (revision 23): a tool rule names a command and what it is for ("to refresh the
#: fixtures, just run docker compose up -d" is how to run a thing, not a rule of the
#: place). Not identity: "I'm the office manager, so please explain things simply" is
#: what the person wants, as the scorer reads it.
_STANDS_AS: Final = frozenset(["tool"])
#: A promise or a piece of work due by a day in the six other languages (the commitment
#: rules of revision 23) stays a commitment too: the lexical scorer has almost no words of
#: those languages, and read "ich schicke dem Kunden die Rechnung bis Freitag" as an
#: identity, "ik stuur de klant de factuur voor vrijdag" as a preference.
_PROMISED_ELSEWHERE: Final = re.compile(rf"(?:{_PROMISED}|{_HANDED}\b)", re.I)
#: Who the person is and what they want, said in another language than English (revision
#: 24): the lexical scorer knows few of its words, and names such a find anything.
_OWN_ELSEWHERE: Final = re.compile(
    rf"(?:{_NAME_LEAD}|{_WORK_LEAD}|{_BODY_ELSEWHERE}|{_PREFER_ELSEWHERE}|{_LIKE_ELSEWHERE}|"
    r"ich bevorzuge|je préfère|prefiero|prefiro|preferisco|ik heb liever|ik wil liever|"
    rf"{_ANSWER_ME})\b",
    re.I,
)


#: How the person works best, what suits them best (revision 27): a preference, whatever
#: the scorer reads in "I work ..." (an identity to it).
_SUITS_ME: Final = re.compile(
    r"i (?:work|think|focus|learn|concentrate|read) best\b|.{2,40}? (?:is|are|works?) "
    r"(?:best|better) for (?:[\w-]+ ){0,3}?(?:with )?me\b",
    re.I,
)


def judged(sentence: str) -> tuple[str, str, str, float] | None:
    """The rules' verdict on a sentence, weighed by the scorer, or the scorer's alone.

    A rule's find keeps its text; the scorer, told which rule fired, names its category
    (a person's "remember ..." stays theirs), stores at LEARNED what the rules hold for a
    candidate when it would store it on its own (a single correction, WORKSPACE.md 12.2
    revision 11), and drops it (``_VETOED``) when it is sure nothing in it is worth
    keeping. Without the scorer's file the rules decide alone."""
    from .scorer import score, thresholds

    rule = classify(sentence)
    if rule is None:
        return learned(sentence)
    category, _, text, confidence = rule
    if category in ("remember", "error-fix"):
        return rule  # the person's own "remember", or their account of a fix
    verdict = score(sentence, rule=category)
    if verdict is None:
        return rule
    if verdict.none >= thresholds(category, verdict.model).veto:
        return _VETOED
    better = verdict.category
    if (
        better is not None
        and better not in (category, "remember")
        and category not in _STANDS_AS
        and not (category == "commitment" and _PROMISED_ELSEWHERE.match(sentence))
        and not (category in ("identity", "preference") and _OWN_ELSEWHERE.match(sentence))
        and not (category == "preference" and _SUITS_ME.match(sentence))
    ):
        category = better
    if (
        confidence < LEARNED
        and better == category
        and verdict.p >= thresholds(category, verdict.model).store
    ):
        # a find the rules hold for a candidate (a single correction, an implicit
        # preference) that the scorer would store on its own: stored
        confidence = LEARNED
    return category, category, text, confidence


def errand(sentence: str) -> bool:
    """A sentence that asks the agent for one piece of work now ("book me a hotel in
    Porto", "ich brauche Hilfe mit meinen Rechnungen"), not how things are or what the
    person wants always (nothing in it says always, never, every, so, because, ...), and
    no request to remember."""
    if _STANDS.search(sentence) or _REMEMBER_WORD.search(sentence) is not None:
        return False
    if _ERRAND.match(sentence) is not None:
        return True
    # revision 26: the thing named first ("garden centre site, I want to add a page for the
    # bulbs", "wedding seating plan, help me fit 80 people on 9 tables"): a few words that
    # say nothing of their own (no one does, is or has anything in them), then the errand
    lead = _TOPIC_LEAD.match(sentence)
    return (
        lead is not None
        and _TOPIC_SAYS.search(lead.group()) is None
        and _ERRAND.match(sentence, lead.end()) is not None
    )


def _by_form(
    sentence: str, hit: tuple[str, str, str, float] | None
) -> tuple[str, str, str, float] | None:
    """``hit`` read again by the forms of revision 26, in turn: a procedure ("when you add a
    dependency, pin the exact version") and a rule said as one ("prefer composition over
    inheritance") are conventions, the person's own ("if I ask for a summary, ...")
    preferences; which tool does a piece of the work ("we lint with ruff") is a tool
    usage; how the person wants to be answered ("please be concise") a preference; and
    (revision 27) where a thing is kept ("payments go through Stripe") a fact. Each
    form takes the place of no find, a candidate, or the finds it names (``_FORMS``)."""
    if _CARRIES_PAYLOAD.search(sentence):
        return hit  # a URL or a command piped into a shell: only a rule that asks keeps it
    for reader, replaces, category in _FORMS:
        if (hit is None or hit[3] < LEARNED or hit[0] in replaces) and reader(sentence):
            if _the_persons_own(reader, sentence):
                category = "preference"
            hit = (category, category, _unfilled(sentence).strip(), LEARNED)
    return hit


def _items_under_rules(words: str) -> list[str]:
    """The items of a list the person heads as rules (revision 27): a line that names
    rules, conventions, guidelines, a house style, how things are done here, what to note
    or keep in mind, and ends with a colon, then the items marked "-", "*", "+", "•",
    "1." or "1)" under it, up to the first line that is neither an item nor blank."""
    if ":" not in words:
        return []
    items: list[str] = []
    under = False
    for line in words.splitlines():
        if _RULES_LEAD.search(line):
            under = True
        elif under and _ITEM_MARK.match(line):
            items.append(_ITEM_MARK.sub("", line).strip())
        elif line.strip():
            under = False  # a line that is no item ends the list
    return items


def _ruled(sentence: str, items: list[str]) -> bool:
    """Whether ``sentence`` is (part of) one of ``items``, and a statement at all: not a
    question, an errand, a word on the moment, a URL or a piped shell, and two words or
    more."""
    s = sentence.strip()
    return (
        len(s.split()) >= 2
        and any(s in item for item in items)
        and not not_a_statement(s)
        and not errand(s)
        and _CARRIES_PAYLOAD.search(s) is None
        and not _reports_malfunction(s)
    )


#: A line that heads a list of rules: "house rules:", "a few conventions:", "how we do
#: things here:", "please note:", "keep in mind:", in English and the other languages
#: capture reads; not a list of today's tasks or steps.
_RULES_LEAD: Final = re.compile(
    r"^(?!.*\b(?:todo|to-do|to do|today|tonight|tasks?|steps?|plan|agenda|errands?)\b)"
    r".{0,60}\b(?:rules?|conventions?|guidelines?|house style|style guide|standards?|"
    r"polic(?:y|ies)|how we (?:do|work|write|name)|the way we|please note|keep in mind|"
    r"things to know|note these|remember these|dos and don'?ts|regeln|règles|reglas|regole|"
    r"regels|regras|konventionen)\b[^:\n]{0,40}:\s*$",
    re.I,
)


def _the_persons_own(reader: Callable[[str], bool], sentence: str) -> bool:
    """Whether what ``reader`` found is the person's own way, a preference: a procedure
    or a rule said as one with I, me or my in it, or what always holds said of themselves
    alone in another language ("ich trinke immer schwarzen Kaffee")."""
    if reader in _MINE_OR_OURS:
        return _PROCEDURE_MINE.search(sentence) is not None
    return (
        reader is always_elsewhere
        and _I_ELSEWHERE.search(sentence) is not None
        and _WE_ELSEWHERE.search(sentence) is None
    )


@lru_cache(maxsize=512)
def _unfilled(sentence: str) -> str:
    """``sentence`` without the words a typed or dictated turn starts with (``_FILLER``):
    what the readers of revisions 26 and 27 look at, once per sentence."""
    return _FILLER.sub("", sentence.strip())


def procedure(sentence: str) -> bool:
    """What to do whenever a situation comes up (revision 26): "when/whenever/if/each time/
    every time/before/after <a situation>, <what to do>" (or a colon for the comma: "before
    you merge anything to main: run the e2e suite"), the step said in the imperative ("if a
    test is flaky, mark it and open a ticket"), the situation not the work at hand ("if it
    compiles, ...", "when you're done, ...", "if you have time, ...") and the step not just
    that work ("..., merge it") nor telling the person ("..., tell me")."""
    m = _PROCEDURE.match(_unfilled(sentence))
    if m is None:
        return _procedure_elsewhere(sentence)
    if _AT_HAND.match(m.group("when")):
        return False
    if not m.group("always") and _JUST_THAT.match(m.group("do")):
        return False  # "whenever someone asks for a refund, forward it to accounts" stands
    verb, after = m.group("verb"), m.group("after")
    return (
        (verb.islower() or m.group("sep") == ":")  # a name ("..., Priya decides") is none
        and verb.casefold() not in _NOT_A_STEP
        and not verb.casefold().endswith(("ing", "ed", "ly"))
        and (after is None or after.casefold() not in _SUBJECT_OF)
    )


def standing_step(sentence: str) -> bool:
    """A step in the imperative said to hold whenever its moment comes (revision 27): "run
    the tests after every change", "check the README before changing the build", "use
    type hints everywhere", "ask me one question at a time", a convention (the person's
    preference when it speaks of them). The step's first word as a procedure's; the
    sentence ends with what makes it general: after/before every or each ..., before
    doing ..., every time or whenever ..., everywhere, at all times, in or for all/every/
    each ..., one ... at a time. Never with today's time, nor for one piece of work."""
    s = _unfilled(sentence)
    m = _STANDING_STEP.match(s)
    if m is None or _ONE_OFF_TIME.search(s) or _JUST_THIS.search(s):
        return False
    verb = m.group("verb")
    return (
        verb.islower()
        and verb.casefold() not in _NOT_A_STEP
        and not verb.casefold().endswith(("ing", "ed", "ly"))
        and m.group("after").casefold() not in _SUBJECT_OF
    )


_STANDING_STEP: Final = re.compile(
    r"^(?:(?:please|pls|always|just)\s+)?(?P<verb>[a-z][a-z-]*)\s+(?P<after>[\w'-]+)\b"
    r"[^,;:!?]{0,80}?\s+(?:(?:after|before) (?:every|each|any) \w+(?: \w+)?|"
    r"before (?:you |we )?\w+ing\b[^,;:!?]{0,40}|(?:every|each) time\b[^,;:!?]{0,40}|"
    r"whenever\b[^,;:!?]{0,60}|everywhere|at all times|"
    r"(?:in|for) (?:all|every|each) \w+(?: \w+)?|one \w+ at a time)\s*[.!]?$",
)


def everyone_does(sentence: str) -> bool:
    """What everyone, or no one, here does (revision 27): "nobody deploys on Fridays", "no
    one touches the billing module without Greg", "everyone signs the visitor book", a
    convention. A verb in the present after nobody, no one, everyone, everybody or each of
    us, and not one of being, knowing or feeling ("no one is here yet", "nobody knows
    why", "everyone loves it"); never with today's time."""
    s = _unfilled(sentence)
    return (
        _EVERYONE_DOES.match(s) is not None
        and _ONE_OFF_TIME.search(s) is None
        and _PAST.search(s) is None
        and not _reports_malfunction(s)
    )


_EVERYONE_DOES: Final = re.compile(
    r"^(?:nobody|no one|no-one|everyone|everybody|each of us|all of us)\s+"
    r"(?:(?:ever|always|only|usually)\s+)?"
    r"(?!(?:is|was|has|does|knows|loves|likes|hates|wants|thinks|seems|looks|feels|cares|"
    r"gets it|says|said|told|tells|asks|asked|answered|remembers|understands|needs)\b)"
    r"[a-z]+(?<!ss)s\s+\S.*$",
    re.I,
)


def _procedure_elsewhere(sentence: str) -> bool:
    """A procedure in German, French, Spanish, Portuguese, Italian or Dutch (revision 26):
    "wenn/cuando/quand/quando/se/als ... <situation>, <step>", the step's first word lower
    case and not an article, a pronoun, an auxiliary or a common verb of a statement
    ("si llueve, el partido se cancela", "wenn es regnet, fällt das Training aus"); in German
    not a verb in -t either (a statement puts its verb first after such a clause)."""
    m = _PROCEDURE_ELSEWHERE.match(sentence.strip())
    if m is None or _AT_HAND_ELSEWHERE.match(m.group("when")):
        return False
    step = m.group("step")
    if not step.islower() or step.casefold() in _NOT_A_STEP_ELSEWHERE:
        return False
    if _TELL_ME_ELSEWHERE.match(step):
        return False  # "cuando termines, avísame": telling the person
    if _WE_DO.search(step) or _WE_AFTER.match(sentence.strip(), m.end()):
        return False  # "se piove, restiamo a casa": a plan of ours, not a step (revision 27)
    german = m.group("lead").casefold() in _GERMAN_LEADS
    return not (german and step.endswith("t"))


_PROCEDURE_ELSEWHERE: Final = re.compile(
    r"^(?P<lead>immer wenn|jedes mal wenn|wenn|sobald|falls|bevor|nachdem|"
    r"à chaque fois que|chaque fois que|quand|lorsque|si|avant de|après|"
    r"siempre que|cada vez que|cuando|antes de|después de|"
    r"sempre que|depois de|ogni volta che|quando|se|prima di|dopo|"
    r"telkens als|elke keer als|wanneer|zodra|als|voordat|nadat)\s+"
    r"(?P<when>[^,;:.!?]{3,100})[,:]\s*"
    r"(?:(?:bitte|dann|immer|nie|por favor|entonces|siempre|nunca|s'il te plaît|alors|"
    r"toujours|jamais|per favore|allora|sempre|mai|então|alsjeblieft|dan|altijd|nooit)\s+)*"
    r"(?P<step>[^\W\d_][\w'’-]*)",
    re.I,
)
#: A step that only tells the person ("avísame", "sag mir Bescheid", "préviens-moi").
_TELL_ME_ELSEWHERE: Final = re.compile(
    r"(?:avísame|avisame|dime|dímelo|sag|gib mir|dis-moi|préviens-moi|previens-moi|"
    r"dimmi|avvisami|fammi|avisa-me|diz-me|laat|zeg)\b",
    re.I,
)
#: A step in the first person plural: what we will do then ("vamos al cine", "restiamo a
#: casa", "allons à la plage", "ficamos em casa"), in Spanish, Portuguese, Italian and
#: French, ...
_WE_DO: Final = re.compile(r"(?:amos|emos|imos|iamo|ons)$", re.I)
#: ... and in German and Dutch, the pronoun after the verb ("bleiben wir", "blijven we").
_WE_AFTER: Final = re.compile(r"\s+(?:wir|we|wij)\b", re.I)
_GERMAN_LEADS: Final = frozenset(
    ["immer wenn", "jedes mal wenn", "wenn", "sobald", "falls", "bevor", "nachdem"]
)
#: ... the work at hand: it, that, done, time, in these languages.
_AT_HAND_ELSEWHERE: Final = re.compile(
    r"(?:es|das|fertig|du fertig|du zeit|c'est|ça|cela|tu as fini|tu as le temps|"
    r"eso|esto|está listo|tienes tiempo|termin\w*|acab\w*|isso|isto|tiver tempo|"
    r"questo|quello|è pronto|hai tempo|hai finito|dat|dit|het|klaar|je tijd|je klaar)\b",
    re.I,
)
#: Words that do not start a step in those languages: articles, pronouns, auxiliaries,
#: copulas and the verbs a statement after such a clause most often starts with.
_NOT_A_STEP_ELSEWHERE: Final = frozenset(
    [
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "einem",
        "ich",
        "du",
        "er",
        "sie",
        "es",
        "wir",
        "ihr",
        "man",
        "ist",
        "sind",
        "war",
        "waren",
        "wird",
        "werden",
        "hat",
        "haben",
        "kann",
        "können",
        "muss",
        "müssen",
        "soll",
        "sollen",
        "darf",
        "gibt",
        "geht",
        "kommt",
        "läuft",
        "fällt",
        "bleibt",
        "le",
        "la",
        "les",
        "l'",
        "un",
        "une",
        "des",
        "je",
        "tu",
        "il",
        "elle",
        "on",
        "nous",
        "vous",
        "ils",
        "elles",
        "c'est",
        "ce",
        "ça",
        "cela",
        "est",
        "sont",
        "était",
        "a",
        "ont",
        "va",
        "vont",
        "peut",
        "peuvent",
        "doit",
        "faut",
        "il",
        "y",
        "el",
        "los",
        "las",
        "lo",
        "uno",
        "una",
        "unos",
        "unas",
        "yo",
        "tú",
        "él",
        "ella",
        "nosotros",
        "vosotros",
        "ellos",
        "ellas",
        "es",
        "son",
        "era",
        "está",
        "están",
        "hay",
        "ha",
        "han",
        "va",
        "van",
        "puede",
        "pueden",
        "debe",
        "se",
        "me",
        "te",
        "nos",
        "le",
        "o",
        "os",
        "as",
        "um",
        "uma",
        "eu",
        "ele",
        "nós",
        "eles",
        "elas",
        "é",
        "são",
        "era",
        "está",
        "estão",
        "há",
        "tem",
        "têm",
        "vai",
        "vão",
        "pode",
        "podem",
        "deve",
        "il",
        "lo",
        "gli",
        "i",
        "un",
        "uno",
        "io",
        "lui",
        "lei",
        "noi",
        "voi",
        "loro",
        "è",
        "sono",
        "era",
        "c'è",
        "ci",
        "ha",
        "hanno",
        "va",
        "vanno",
        "può",
        "possono",
        "deve",
        "de",
        "het",
        "een",
        "ik",
        "jij",
        "je",
        "hij",
        "zij",
        "ze",
        "wij",
        "we",
        "jullie",
        "is",
        "zijn",
        "was",
        "waren",
        "wordt",
        "worden",
        "heeft",
        "hebben",
        "kan",
        "kunnen",
        "moet",
        "moeten",
        "zal",
        "zullen",
        "gaat",
        "komt",
        "blijft",
        "er",
    ]
)


def tooled(sentence: str) -> bool:
    """Which tool does a piece of the work (revision 26): "we/I (always) <lint, format,
    test, build, ...> (X) with, using, via or through <a tool>", "<builds, tests,
    migrations, ...> run, go, are run or happen through, with, via or in <a tool>",
    "<X> is/are linted, tested, deployed, ... with, using or by <a tool>" (not "built
    with": "the mobile apps are built with Flutter" is a fact). The tool is one to three
    words with no article, no pronoun and no word of manner ("with care"), and not today's
    time."""
    s = _unfilled(sentence)
    m = _TOOLED.match(s)
    if m is None or _ONE_OFF_TIME.search(s):
        return False
    return _NOT_A_TOOL.match(m.group("tool")) is None


_WORK_VERB: Final = (
    r"(?:lint|format|test|build|deploy|release|ship|publish|package|bundle|compile|"
    r"type-?check|typecheck|profile|benchmark|migrate|manage|provision|run|serve|"
    r"generate|document|install|version|tag|containeri[sz]e|orchestrate|schedule)"
)
_WORK_NOUN: Final = (
    r"(?:builds?|tests?|unit tests|e2e tests|integration tests|migrations?|deploys?|"
    r"deployments?|releases?|linting|formatting|type ?checks?|packaging|bundling|ci|"
    r"benchmarks?|docs|the docs|documentation|dependencies|deps|infra|infrastructure|"
    r"secrets|containers|cron jobs|jobs|backups)"
)
_TOOLED: Final = re.compile(
    r"^(?:(?:we|i)\s+(?:always\s+|usually\s+|only\s+)?"
    + _WORK_VERB
    + r"\w*(?:\s+[\w-]+){0,3}?\s+(?:with|using|via|through)\s+|"
    r"(?:(?:the|our|all)\s+)?"
    + _WORK_NOUN
    + r"\s+(?:(?:are|is)\s+)?(?:run|runs|go|goes|happen|happens|done|handled|managed)\s+"
    r"(?:through|with|via|in|by)\s+|"
    r"(?:(?:the|our|all)\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|gets?)\s+"
    r"(?:linted|formatted|tested|deployed|released|shipped|published|packaged|"
    r"bundled|compiled|type-?checked|profiled|benchmarked|migrated|managed|provisioned|"
    r"run|served|generated|documented|installed|versioned|tagged|containeri[sz]ed|"
    r"orchestrated|scheduled)\s+(?:with|using|by|via|through)\s+)"
    r"(?P<tool>[\w.@/-]+(?:\s+[\w.@/-]+){0,2})\s*[.!]?$",
    re.I,
)
#: ... what is no tool: an article or a pronoun first, or a word of manner or company.
_NOT_A_TOOL: Final = re.compile(
    r"(?:the|a|an|this|that|these|those|my|your|our|their|his|her|it|them|me|us|care|"
    r"caution|love|help|patience|friends|colleagues|others|everyone|people|hand)\b",
    re.I,
)
#: The finds "tooled" reads as a tool usage.
_TOOLED_OVER: Final = frozenset(["convention", "decision", "fact"])


def manner(sentence: str) -> bool:
    """How the person wants the agent to answer them, said to it (revision 26): "(please)
    be/stay concise, brief, direct, ...", "skip/drop/cut the pleasantries, preamble, ...",
    "talk/speak/write/explain things to me like/as if ...", "give/show me X first, Y after",
    "no need to apologise/thank me/repeat ..."; never with today's time."""
    s = _unfilled(sentence)
    return _MANNER.match(s) is not None and _ONE_OFF_TIME.search(s) is None


_MANNER: Final = re.compile(
    r"^(?:please\s+|pls\s+|just\s+)?(?:"
    r"(?:be|stay)\s+(?:more\s+|very\s+|really\s+|a bit more\s+)?(?:concise|brief|short|"
    r"direct|terse|honest|blunt|succinct|straightforward|to the point|formal|informal|casual|"
    r"friendly|polite|critical|precise)\b|"
    r"(?:skip|drop|cut|leave out|spare me)\s+(?:the\s+|all\s+(?:the\s+)?|any\s+)?"
    r"(?:pleasantries|small talk|preamble|intros?|introductions|fluff|filler|apologies|"
    r"disclaimers|caveats|chit-?chat|compliments|praise|flattery|recaps?|summaries)\b|"
    r"(?:talk|speak|write|explain things|answer|reply)\s+(?:to me\s+)?(?:like|as if|as though|"
    r"as you would)\b|"
    r"(?:give|show|send|tell)\s+me\s+[^,.;]{1,40}\bfirst\b[^.;]*\b(?:after|afterwards|then|"
    r"later|below|second)\b|"
    r"no need to (?:apologi[sz]e|thank me|repeat|restate|summari[sz]e|ask (?:me )?for "
    r"permission|explain (?:the basics|basics)|be polite|sugarcoat))",
    re.I,
)
#: The finds "manner" reads as the person's own way of being answered.
_MANNER_OVER: Final = frozenset(["convention", "fact", "correction", "decision"])


def placed(sentence: str) -> bool:
    """Where a thing is kept, or what carries, handles or owns it (revision 27): "payments
    go through Stripe", "auth is handled by Auth0", "config lives in config/settings.toml",
    "logs end up in Datadog", "the billing service owns the invoices table", a fact. The
    subject is one to three words after an optional article, none of them a pronoun, an
    auxiliary, a question word or a negation; the verb in the present; nothing in it
    wrong (an error, a bug, the wrong one), and never with today's time or a day."""
    s = _unfilled(sentence)
    return (
        (_PLACED.match(s) is not None or _PLACED_ELSEWHERE.match(s) is not None)
        and _ONE_OFF_TIME.search(s) is None
        and _PLACED_NOT.search(s) is None
    )


#: A word the subject of "placed" cannot hold: a pronoun, an auxiliary, a question word,
#: a negation or a word that leads a request.
_NOT_A_SUBJECT: Final = (
    r"(?:i|you|he|she|it|we|they|this|that|these|those|there|here|what|which|who|where|"
    r"when|how|why|do|does|did|don't|doesn't|is|are|was|were|can|could|should|would|will|"
    r"won't|if|so|and|but|or|not|no|never|let|please|just|also|then|maybe)"
)
_PLACED: Final = re.compile(
    r"^(?:(?:the|our|all|all the|all our|my|your|their)\s+)?"
    r"(?!" + _NOT_A_SUBJECT + r"\b)[\w./-]+(?:\s+(?!" + _NOT_A_SUBJECT + r"\b)[\w./-]+){0,2}\s+"
    r"(?:(?:always|all|only|usually)\s+)?"
    r"(?:go(?:es)?\s+(?:out\s+|in\s+)?(?:through|via)|"
    r"comes?\s+(?:in\s+)?(?:through|via|from)|"
    r"(?:is|are)\s+(?:handled|processed|sent|served|hosted|stored|kept|routed|logged|"
    r"tracked|backed\s+up|synced|mirrored|delivered|managed|registered|archived|filed)\s+"
    r"(?:by|with|through|via|on|in|at|to|from|under)|"
    r"lives?\s+(?:in|on|at|under)|ends?\s+up\s+(?:in|on|at)|runs?\s+on|"
    r"sits?\s+(?:in|on|behind)|talks?\s+to|owns?|points?\s+(?:to|at))\s+"
    r"[^,;:!?]{1,60}?\s*[.!]?$",
    re.I,
)
#: ... and what goes through something, in German, Spanish, French, Italian, Dutch and
#: Portuguese (revision 27): "die Zahlungen laufen über Stripe", "los pagos van por
#: Stripe", "les paiements passent par Stripe", "de betalingen lopen via Stripe".
_PLACED_ELSEWHERE: Final = re.compile(
    r"^(?:(?:die|der|das|unsere?|alle|los|las|nuestr[oa]s|les|nos|tous les|toutes les|i|"
    r"gli|le|nostri|nostre|tutti i|tutte le|de|het|onze|os|as|nossos|nossas|todos os|"
    r"todas as)\s+)?[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,2}?\s+"
    r"(?:immer\s+|siempre\s+|toujours\s+|sempre\s+|altijd\s+)?"
    r"(?:laufen|läuft|gehen|geht|van|va|pasan|pasa|passent|passe|passano|passa|lopen|loopt|"
    r"gaan|gaat|passam)\s+(?:über|por|par|da|per|attraverso|via|pelo|pela)\s+"
    r"[^,;:!?]{1,60}?\s*[.!]?$",
    re.I,
)
#: ... what says it is something wrong, or one delivery: a day or a date.
_PLACED_NOT: Final = re.compile(
    r"\b(?:wrong|broken|bug|bugs|error|errors|crash|crashes|issue|problem|fail\w*|typo|"
    r"glitch|missing|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"next|last|yesterday)\b",
    re.I,
)


def habitual(sentence: str) -> bool:
    """What a kind of thing always is or does, said of the kind (revision 27): "invoices are
    numbered by year", "file names are all lowercase with dashes", "commit messages start
    with the ticket number", "every shift ends with a handover note", "expenses under 50
    euros don't need a receipt", a convention. The subject is a bare plural (one or two
    words before it, no article, pronoun or quantifier of some), or every, each, no or any
    and a noun; then a verb from a short list of what a kind of thing is, has, needs or
    does in the present. Not a state of the moment ("are done", "are getting"), nothing
    wrong, nothing past and never with today's time."""
    s = _unfilled(sentence)
    m = _HABITUAL.match(s)
    if m is None:
        return False
    at = m.start("one") if m.group("one") else m.start("many")
    if _MOMENT.match(s, at) or _ONLY_SO.match(s, at):
        return False  # "builds are done", "tickets are getting lost", "promises are cheap"
    return (
        _ONE_OFF_TIME.search(s) is None and _PAST.search(s) is None and not _reports_malfunction(s)
    )


_HABIT_VERBS: Final = (
    "get",
    "go",
    "start",
    "end",
    "follow",
    "include",
    "use",
    "carry",
    "keep",
    "stay",
    "live",
    "take",
    "come",
    "contain",
    "require",
    "begin",
    "open",
    "close",
    "pay",
    "cost",
    "expire",
    "last",
    "list",
    "show",
    "say",
    "mention",
    "belong",
    "sit",
    "lead",
    "point",
    "count",
    "run",
    "match",
    "need",
    "receive",
    "mean",
    "renew",
    "reset",
    "repeat",
    "rotate",
    "ship",
    "arrive",
    "leave",
)


def _third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


#: A word that is no head of a bare plural subject: it ends in -s but is no noun in the
#: plural, or names people whose doings are news, not a rule.
_NOT_A_PLURAL: Final = (
    r"(?:this|these|those|its|his|hers|ours|yours|theirs|was|has|does|is|as|us|yes|thus|plus|"
    r"always|sometimes|perhaps|lots|less|unless|news|series|whereas|besides|towards|"
    r"afterwards|thanks|pleas|things|guys|folks|people|kids)"
)
#: ... and what none of the words before it can be: an article, a pronoun, a quantifier
#: of some, a question word.
_NOT_OF_A_KIND: Final = (
    r"(?!(?:the|this|that|these|those|my|your|his|her|their|its|our|a|an|i|we|you|they|he|"
    r"she|it|some|many|most|few|both|two|three|several|there|here|what|which|who|when|where|"
    r"why|how|if|so|and|but|or)\b)"
)
_KIND_WORD: Final = r"[a-z][\w-]*"
#: A phrase after the noun that says which of the kind ("expenses under 50 euros").
_WHICH_OF: Final = (
    r"(?:\s+(?:on|in|for|under|over|from|of|to|with|at|about)\s+(?:the\s+|a\s+|an\s+|our\s+)?"
    r"[\w'-]+(?:\s+[\w'-]+)?)?"
)
_HABIT_ADVERB: Final = r"\s+(?:(?:always|never|usually|only|also|all|normally|generally)\s+)?"
_HABITUAL: Final = re.compile(
    r"^(?:(?:every|each|no|any)\s+"
    + _KIND_WORD
    + r"(?:\s+"
    + _KIND_WORD
    + r"){0,2}?"
    + _WHICH_OF
    + _HABIT_ADVERB
    + r"(?P<one>(?:is|has|must|should|can't|cannot|never|has to|needs to|does not|doesn't|"
    + "|".join(_third_person(v) for v in _HABIT_VERBS)
    + r"))\s+\S.*?|"
    r"(?:all\s+)?(?:"
    + _NOT_OF_A_KIND
    + _KIND_WORD
    + r"\s+){0,2}"
    + _NOT_OF_A_KIND
    + r"(?!"
    + _NOT_A_PLURAL
    + r"\b)[a-z][a-z-]*[^su'\W]s"
    + _WHICH_OF
    + _HABIT_ADVERB
    + r"(?P<many>(?:are|have|must|should|can't|cannot|never|have to|need to|do not|don't|"
    + "|".join(_HABIT_VERBS)
    + r"))\s+\S.*?)[.!]?$",
    re.I,
)
#: A state of the moment after the verb: "are done", "are getting", "are still".
_MOMENT: Final = re.compile(
    r"(?:are|is|do|does|don't|doesn't)\s+(?:ok|okay|fine|good|great|done|ready|broken|missing|"
    r"wrong|slow|fast|down|up|back|gone|here|there|empty|full|late|early|weird|odd|off|out|"
    r"still|now|really|so|too|very|not|a|an|the|\w+ing)\b",
    re.I,
)
#: "are" or "is" with no more than a word of how it is: an opinion ("promises are cheap",
#: "saturdays are better"), unless the word is made (a participle: "are numbered"), says
#: where or how, or all, always, never or only lead it.
_ONLY_SO: Final = re.compile(
    r"(?:are|is)\s+(?!(?:all|always|never|only|usually|in|on|at|from|to|under|by|per|with|"
    r"without|kept|sent|built|paid|made|written|held|set|put|shown|run|done|named|called|"
    r"lowercase|lower case|uppercase|upper case|sentence case|title case|snake_case|"
    r"camelcase|kebab-case|pascalcase)\b)(?!\w+(?:ed|en)\b)\w+",
    re.I,
)
#: What happened or is to happen once, not what holds.
_PAST: Final = re.compile(
    r"\b(?:yesterday|ago|(?:last|next) (?:week|month|year|night|time|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday))\b",
    re.I,
)


def recurring(sentence: str) -> bool:
    """What happens on a schedule (revision 27): "the dog goes to daycare on Wednesdays",
    "the gym closes at 10 on weekdays", "bin collection is every other Tuesday", "we have
    standup every day at 9:30", a fact. A subject that is not I or you (an article, our,
    my, we or a bare noun first), a verb in the present, and a time that comes round:
    on Mondays (a weekday in the plural), weekdays or weekends, every or each day, week,
    month, morning, ... or weekday, twice or once a week, daily, weekly, monthly; nothing
    wrong and never today's time."""
    s = _unfilled(sentence)
    return (
        _RECURRING_SUBJECT.match(s) is not None
        and _COMES_ROUND.search(s) is not None
        and _TODAYS_TIME.search(s) is None
        and _JUST_THIS.search(s) is None
        and _PAST.search(s) is None
        and not _reports_malfunction(s)
    )


_RECURRING_SUBJECT: Final = re.compile(
    r"^(?:(?:the|our|my|their|all)(?:\s+(?!(?:that|which|who)\b)[\w'-]+){1,3}?|we|"
    r"(?!(?:i|you|it|this|that|there|here|what|when|where|how|why|please|can|could|do|"
    r"does|is|are|let's|on|in|at|for|by|with|from|to|of|and|or|but|so|yes|no|ok|okay)\b)"
    r"[a-z][\w-]+(?:\s+(?!(?:that|which|who)\b)[a-z][\w-]+)?)\s+"
    r"(?:(?:always|usually|only|normally)\s+)?"
    r"(?:is|are|has|have|(?!(?:was|has|does|is|this|his|yes|us|its|thus|plus|always|"
    r"sometimes|perhaps|unless|less|across|news|as|whereas)\b)[a-z]+(?<!ed)(?<!ing)(?<!ly)s|"
    r"go|meet|come|close|open|start|end|run|happen|take|get|do)\b(?!,)",
    re.I,
)
#: ... a time of today that makes it one event; a clock time does not ("the gym closes at
#: 10 on weekdays").
_TODAYS_TIME: Final = re.compile(
    r"\b(?:today|tonight|tomorrow|this (?:morning|afternoon|evening|week|time)|right now|"
    r"for now)\b",
    re.I,
)
_COMES_ROUND: Final = re.compile(
    r"\b(?:on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|"
    r"weekends)|(?:every|each) (?:other )?(?:day|week|month|year|morning|afternoon|evening|"
    r"night|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"quarter)|(?:once|twice|three times) a (?:day|week|month|year)|daily|weekly|monthly|"
    r"fortnightly|yearly|annually)\b",
    re.I,
)


def always_elsewhere(sentence: str) -> bool:
    """What always or never holds, said in German, French, Spanish, Portuguese, Italian or
    Dutch (revision 27): "Rechnungen werden immer nach Jahr nummeriert", "on paie toujours
    le 5 du mois suivant", "as legendas nunca passam de 42 caracteres por linha", a
    convention (the person's preference when they speak of themselves alone: "ich trinke
    immer schwarzen Kaffee"). The lexical scorer knows few words of these languages; the
    parts label such sentences conventions. Not "as always" (wie immer, comme toujours,
    como siempre, come sempre, zoals altijd), and at least three words."""
    s = _unfilled(sentence)
    return (
        len(s.split()) >= 3
        and _ALWAYS_ELSEWHERE.search(s) is not None
        and _AS_ALWAYS.search(s) is None
    )


_ALWAYS_ELSEWHERE: Final = re.compile(
    r"\b(?:immer|stets|niemals|siempre|nunca|jamás|toujours|jamais|sempre|altijd|nooit)\b",
    re.I,
)
_AS_ALWAYS: Final = re.compile(
    r"\b(?:wie immer|comme toujours|como siempre|como sempre|come sempre|zoals altijd|"
    r"für immer|pour toujours|para siempre|para sempre|per sempre|voor altijd|"
    r"de siempre|di sempre|immer noch|toujours pas|sempre più|ainda|encore)\b|"
    # ... nor thanks or a word about the agent ("grazie mille, sei sempre gentile")
    r"^(?:grazie|danke|merci|gracias|obrigad[oa]|bedankt|dank je)\b|"
    r"\b(?:du bist|tu es|sei|eres|você é|je bent|vous êtes)\s+(?:immer|toujours|sempre|"
    r"siempre|altijd)\b",
    re.I,
)
#: ... the person alone, in those languages: "ich", "je", "yo", "eu", "io", "ik" and no
#: "we" of theirs.
_I_ELSEWHERE: Final = re.compile(r"\b(?:ich|je|j'|yo|eu|io|ik|mir|mich|moi|me)\b", re.I)
_WE_ELSEWHERE: Final = re.compile(
    r"\b(?:wir|uns|nous|on|nosotros|nosotras|nos|a gente|noi|ci|we|wij|ons)\b", re.I
)


def tool_for(sentence: str) -> bool:
    """Which tool for which piece of the work, in shorthand (revision 27): "poetry for deps,
    pytest for tests", "alembic for migrations", "Sentry for errors, Grafana for metrics",
    a tool usage: one or more "<a tool of one or two words> for <a piece of the work>"
    joined by commas, "and" or semicolons, and nothing else."""
    return _TOOL_FOR.match(_unfilled(sentence)) is not None


_WORK_PIECE: Final = (
    r"(?:(?:the |all |our )?(?:unit |e2e |integration |end-to-end )?"
    r"(?:deps|dependencies|packages|package management|tests|testing|linting|lint|"
    r"formatting|format|migrations|errors|error tracking|logs|logging|metrics|monitoring|"
    r"alerts|alerting|deploys|deployments|deploying|builds|building|ci|docs|documentation|"
    r"auth|authentication|payments|billing|emails?|mail|queues?|jobs|background jobs|cron|"
    r"caching|cache|search|storage|hosting|analytics|state|state management|routing|"
    r"styling|styles|css|types|type ?checking|bundling|releases|secrets|backups|"
    r"feature flags|translations|i18n|forms|validation|orm|database|db|dns|cdn|"
    r"screenshots|load tests|benchmarks|profiling|scheduling|invoices|invoicing|"
    r"newsletters?|bookings?|accounting|bookkeeping|chat|support tickets|tickets))"
)
_A_TOOL: Final = (
    r"(?!(?:the|a|an|this|that|one|two|three|thanks|thank|me|you|us|them|it|coffee|"
    r"tickets?)\b)[\w.@/+-]+(?:\s+(?!for\b)[\w.@/+-]+)?"
)
_TOOL_FOR: Final = re.compile(
    r"^"
    + _A_TOOL
    + r"\s+for\s+"
    + _WORK_PIECE
    + r"(?:\s*(?:,|;|\band\b|,\s*and\b)\s*"
    + _A_TOOL
    + r"\s+for\s+"
    + _WORK_PIECE
    + r")*\s*[.!]?$",
    re.I,
)


def labelled_command(sentence: str) -> bool:
    """A command under what it is for (revision 27): "to run the app locally: docker compose
    up", "local dev: `make dev`", "build with: cargo build --release", "deploy =
    ./deploy.sh prod", a tool usage. What it is for is "to/for ..." or one to four words,
    not a word that brings in output or a step of today's work (error, output, log, step
    1, today, ...); the command is in backticks or starts with a known program or a
    script, and only its arguments follow it."""
    s = _unfilled(sentence)
    m = _LABELLED_COMMAND.match(s)
    return m is not None and _NOT_A_PURPOSE.match(m.group("label")) is None


_LABELLED_COMMAND: Final = re.compile(
    r"^(?P<label>(?:to|for) [^:=`]{2,50}?|[a-z][\w'/-]*(?: [\w'/-]+){0,3}?)\s*(?::|=|->|→)\s*"
    r"(?:`[^`]+`|(?:" + _UNQUOTED + r"|" + _SCRIPT + r")(?:\s+[\w:./@=-]+)*)\s*[.!]?$",
    re.I,
)
#: ... what does not say what a command is for: output, an error, a step of today's work.
_NOT_A_PURPOSE: Final = re.compile(
    r"(?:error|errors|output|result|results|log|logs|stderr|stdout|traceback|trace|"
    r"exception|warning|message|step|today|now|todo|problem|issue|bug|it|this|that|i|you|"
    r"we|try|tried|ran|run)\b",
    re.I,
)


def normative(sentence: str) -> bool:
    """How things are to be done, said as a rule (revision 26): a verb of policy in the
    imperative ("prefer composition over inheritance", "avoid global state in the
    scheduler", "default to British spelling", "treat warnings as errors"), "make sure" with
    every, each, all, always or a time it holds ("make sure you run the linter before
    committing"), "it's important/essential/crucial that/to ...", "the rule (here) is ...",
    "house rule: ...", "use X for" things in the plural ("use kebab-case for file names"),
    or what a kind of thing must or should do ("each component must have a story", "log
    lines must not contain personal data")."""
    s = _unfilled(sentence)
    if _ONE_OFF_TIME.search(s):
        return False  # "avoid the M25 today", "the kids should be home by six"
    m = _NORMATIVE.match(s)
    if m is not None:
        # "stick with the current wording", "prefer the second draft": one thing chosen,
        # unless what follows says it holds for all ("stick to the style guide for all
        # press releases")
        return m.group("the") is None or _ALL_OF.search(s, m.end()) is not None
    return _MUST_DO.match(s) is not None


_NORMATIVE: Final = re.compile(
    r"^(?:please\s+|pls\s+)?(?:"
    r"(?:prefer|avoid|favou?r|default to|stick (?:to|with)|treat|steer clear of|"
    r"stay away from)\s+(?!(?:it|them|him|her|me|us|yourself|myself|ourselves)\b)"
    r"(?P<the>(?:the|this|that|these|those|my|your|his|her|our|their)\s+)?\w|"
    r"(?:make sure|ensure|be sure)\b[^.!?]*\b(?:every|each|all|always|any time|whenever|"
    r"(?:before|after) (?:\w+ing|you \w+|we \w+))\b|"
    r"it'?s\s+(?:really\s+|very\s+|super\s+)?(?:important|essential|crucial|critical|vital|"
    r"key|mandatory|required)\s+(?:that|to)\s+\w|"
    r"(?:the|our|a|house|team|golden|general|one)\s+rule\s*(?:here\s+|of thumb\s+)?"
    r"(?:is\b|:)\s*\w|"
    r"use\s+[\w.-]+(?:\s+[\w.-]+)?\s+for\s+(?:all\s+|every\s+|each\s+|any\s+)?"
    r"(?!(?:the|this|that|these|those|it|my|your|now|today|tonight|me)\b)"
    r"(?:[a-z][\w-]*\s+)?[a-z][\w-]*s\b)",
    re.I,
)
#: A time that makes what is to be done a piece of today's work.
_ONE_OFF_TIME: Final = re.compile(
    r"\b(?:today|tonight|tomorrow|this (?:morning|afternoon|evening|week|time|one)|"
    r"right now|for now|now|(?:by|at|before|after|until) (?:\d|noon|midnight|lunch|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\w*)\b",
    re.I,
)
#: ... and what says a thing chosen holds for all of its kind.
_ALL_OF: Final = re.compile(r"\b(?:all|every|each|any|always|never|whenever)\b", re.I)
#: "<a kind of thing> must/should/has to/must not/... <verb>": every/each/all/any/no and
#: a noun, or a noun in the plural (after at most one word): "log lines must not ...".
_MUST_DO: Final = re.compile(
    r"^(?:(?:every|each|all|any|no)\s+[\w-]+(?:\s+[\w-]+)?|"
    r"(?:(?!(?:the|this|that|these|those|my|your|his|her|their)\b)[a-z][\w-]*\s+)?"
    r"(?!(?:this|is|was|has|does|us|yes|its|his|hers|ours|yours|theirs)\b)[a-z][\w-]*s)\s+"
    r"(?:must|should|shall|needs? to|ha(?:ve|s) to|must not|mustn't|should not|shouldn't|"
    r"may not|cannot|can't|are to|is to)\s+(?:always\s+|never\s+|not\s+)?\w",
    re.I,
)


#: "when/whenever/if/each time/every time/before/after <situation>, (then) (please/just/
#: always/never/first/don't) <verb> <word> ...".
_PROCEDURE: Final = re.compile(
    r"^(?:(?P<always>whenever|each time|every time|any ?time)|when|if|before|after)\s+"
    r"(?P<when>[^,;:.!?]{3,100})(?P<sep>[,:])\s*"
    r"(?:then\s+)?(?P<do>(?:(?:please|pls|just|always|never|first|don'?t|do not)\s+)*"
    r"(?P<verb>[A-Za-z]+)\b(?:\s+(?P<after>[\w']+))?.*)$",
    re.I,
)
#: A second word that shows the first is the subject of a statement: "..., tests are
#: skipped", "..., staging will page us".
_SUBJECT_OF: Final = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "will",
        "would",
        "can",
        "could",
        "should",
        "must",
        "may",
        "might",
        "has",
        "have",
        "had",
        "does",
        "did",
        "doesn't",
        "don't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "won't",
        "can't",
        "couldn't",
        "shouldn't",
        "hasn't",
        "haven't",
    ]
)
#: A word that does not start a step: "if the cache is cold, everything is slow", "...,
#: the build fails", "..., it's fine" (and the auxiliaries above).
_NOT_A_STEP: Final = _SUBJECT_OF | frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "it's",
        "i",
        "i'm",
        "we",
        "we're",
        "you",
        "you're",
        "they",
        "they're",
        "he",
        "she",
        "there",
        "there's",
        "here",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "me",
        "us",
        "them",
        "be",
        "been",
        "being",
        "am",
        "shall",
        "do",
        "not",
        "no",
        "so",
        "then",
        "and",
        "but",
        "or",
        "nothing",
        "everything",
        "something",
        "anything",
        "all",
        "both",
        "each",
        "every",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "everyone",
        "everybody",
        "nobody",
        "none",
        "one",
        "some",
        "any",
        "many",
        "few",
        "most",
        "several",
        "only",
        "also",
        "even",
        "too",
        "because",
        "since",
        "although",
        "though",
        "while",
        "as",
        "like",
        "which",
        "who",
        "whose",
        "where",
        "what",
        "why",
        "how",
        "yes",
    ]
)
#: ... a situation that is the work at hand: what was just done or said, the agent being
#: done, having time, "if you can".
_AT_HAND: Final = re.compile(
    r"(?:it|it's|its|that|that's|this|these|those|they|they're|so|done|ready|needed|"
    r"necessary|possible|everything|all (?:is|that|of it)|you(?:'re| are) (?:done|finished|"
    r"ready|back|there)|you(?:'ve| have)? (?:finished|done|got|time)|you (?:can|could|want|"
    r"like|have time|get a chance|finish)|you get (?:to it|a chance|there)|"
    r"(?:[A-Z][a-z]+) (?:replies|answers|calls|writes|gets back|confirms|says))\b",
    re.I,
)
#: ... and a step that is only that work ("..., merge it", "..., push it to staging"),
#: telling the person ("if the build fails, just tell me and stop") or what to do together
#: now ("after lunch, let's look at the API").
_JUST_THAT: Final = re.compile(
    r"^(?:(?:please|pls|just|then)\s+)*(?:[a-z]+\s+(?:it|that|this|them)\b"
    r"(?:\s+(?:now|then|too|as well|for me|please|(?:to|on|in|into) [\w-]+))?\W*$|"
    r"(?:tell|ask) me\b|let me know\b|let'?s\b|let us\b)",
    re.I,
)
#: The finds a procedure's reading replaces (a step is none of these); any other stays as
#: the rules and the scorer found it: a tool usage ("if you need to refresh the fixtures,
#: just run docker compose up -d"), a fix told in words, a decision, a correction.
_NOT_A_PROCEDURE: Final = frozenset(["fact", "identity", "commitment"])
#: A procedure of the person's own ("if I ask for a summary, give me bullet points").
_PROCEDURE_MINE: Final = re.compile(r"\b(?:i|i'm|i've|me|my)\b", re.I)


#: The forms ``_by_form`` reads, each with the finds it replaces and what it keeps: a
#: procedure replaces a fact, who the person is or a promise (a step is none of them); a
#: rule said as one only no find or a candidate.
_FORMS: Final = (
    (procedure, _NOT_A_PROCEDURE, "convention"),
    (normative, frozenset[str](), "convention"),
    (tooled, _TOOLED_OVER, "tool"),
    (manner, _MANNER_OVER, "preference"),
    (placed, frozenset[str](), "fact"),
    (habitual, frozenset[str](), "convention"),
    (labelled_command, _TOOLED_OVER, "tool"),
    (recurring, frozenset[str](), "fact"),
    (tool_for, _TOOLED_OVER, "tool"),
    (standing_step, frozenset[str](), "convention"),
    (everyone_does, frozenset(["fact", "correction", "identity"]), "convention"),
    (always_elsewhere, frozenset[str](), "convention"),
)
#: The forms whose rule is the person's own when they speak of themselves ("if I ask for a
#: summary, give me bullet points"); not what a kind of thing does ("patient records are
#: kept in the box on my desk" is no preference).
_MINE_OR_OURS: Final = (procedure, normative, standing_step)


#: What a sentence may name before the errand it asks for: one to five words, a comma
#: (revision 27: or a colon, "quick one: translate ...").
_TOPIC_LEAD: Final = re.compile(r"[^\W\d_][^,.!?;:\n]{0,39}?[,:]\s+")
#: ... unless those words say something (a subject, a verb of being, doing or having, a
#: rule word or from when on: "we use pnpm, I want to keep it" is a statement and its
#: wish, "going forward, write ..." a rule), open with where the wish holds ("in this
#: repo, I want every PR to ...", "for emails, ..."), with what it is for (revision 27: "to
#: clean the cache, run ...") or with what it is not ("not the
#: ORM, write it in raw SQL": a correction).
_TOPIC_SAYS: Final = re.compile(
    r"\b(?:i|i'm|we|we're|you|they|he|she|it|it's|is|are|was|were|be|been|has|have|had|"
    r"do|does|did|use|uses|used|run|runs|always|never|every|going forward|from now on|"
    r"in future|next time|by default)\b|"
    r"^(?:in|on|for|at|with|from|by|when|if|whenever|during|after|before|not|no|to)\b|"
    r"(?:\S+\s+){5}",
    re.I,
)


_REMEMBER_WORD: Final = re.compile(
    r"\b(?:remember|note|merk|recuerda|retiens|ricorda|onthoud)", re.I
)


def learned(sentence: str, answer: bool = False) -> tuple[str, str, str, float] | None:
    """What the scorer (capture.scorer) makes of a sentence no rule claimed.

    ``answer``: the sentence is a short answer read with the agent's question
    (Detector._answered), kept from the model's ``answer`` threshold rather than its
    ``sure`` (WORKSPACE.md 12.2)."""
    from .scorer import score, thresholds

    if len(sentence.split()) < LEARNED_MIN_WORDS:
        return None  # "No.", "yes please": a memory needs something to remember
    if _CARRIES_PAYLOAD.search(sentence):
        # a URL or a command piped into a shell is kept only when a person asks for it in so
        # many words (a rule's "remember ..."): it is what a poisoned text wants kept
        return None
    verdict = score(sentence, rule=None)
    if verdict is None or verdict.category is None:
        return None
    t = thresholds(verdict.category, verdict.model)
    worth = 1.0 - verdict.none
    sure = worth >= (t.answer if answer else t.sure)
    if not sure and (verdict.p < t.candidate or worth < t.worth):
        return None
    s = _FILLER.sub("", sentence.strip()).strip()
    if _reports_malfunction(s):
        # "laravel shop, checkout throws on the staging box": what is wrong today, the task,
        # not how things stand (an error-fix lesson is made from its fix, not from this)
        return None
    if _JUST_HAPPENED.search(s) and not _FROM_NOW.search(s) and not _DECISION_WORD.search(s):
        # "the tests are flaky since yesterday", "the build takes 10 minutes now, it used to
        # be 3": what changed lately, today's news (revision 24)
        return None
    if verdict.category == "remember":
        s = _after_remember(s)
    confidence = LEARNED if sure or verdict.p >= t.store else LEARNED_CANDIDATE
    return verdict.category, verdict.category, s, confidence


#: A decision named as such ("team decision from this morning: ...").
_DECISION_WORD: Final = re.compile(r"\b(?:decision|decided|agreed)\b", re.I)
#: What happened lately (revision 24): since yesterday, this morning, last night, the
#: merge, the deploy, ...; yesterday; just now; "it used to be" (learned).
_JUST_HAPPENED: Final = re.compile(
    r"\b(?:since (?:yesterday|this morning|last night|today|the (?:merge|deploy|update|"
    r"upgrade|release|migration))|yesterday|last night|this morning|earlier today|just now|"
    r"an hour ago|it used to (?:be|take))\b",
    re.I,
)
#: Something not working, said in the present ("it OOMs on the big days", "the window is
#: white on startup", "checkout throws"): a report of today's problem (learned).
_MALFUNCTION: Final = re.compile(
    r"\b(?:throws|fails?|failing|crash(?:es|ing)|chokes|choking|OOMs?|hangs|hanging|freezes|"
    r"is (?:broken|slow|down|white|blank|stuck|failing)|keeps (?:failing|crashing|dying)|"
    # revision 24: numbers that are wrong, a page that looks wrong, what breaks, leaks or
    # happens twice
    r"(?:don'?t|doesn'?t|do not|does not) add up|(?:is|are) off by|"
    r"looks? (?:ugly|broken|wrong|weird|off)|(?:is|are) (?:empty|broken|down)|"
    r"breaks when|memory leak|leaks|(?:fires|runs|goes out|go out|sends?|is sent) twice|"
    r"(?:doesn'?t|does not|won'?t|can'?t|cannot) (?:work|start|load|build|connect|compile|"
    r"open|run|boot)|refuses|errors out|times out|in a loop|ne (?:va|marche|fonctionne) pas|"
    r"funktioniert nicht|geht nicht|kaputt|stürzt ab|no funciona|falla|se cuelga|"
    r"non funziona|não funciona|werkt niet|"
    # revision 25: slow said with force, what never happens, what comes out wrong, what
    # looks or feels wrong, what stopped
    r"(?:is|are|'s|'re|feels?|got|gets|getting|runs?) (?:(?:really|super|very|so|pretty|way|"
    r"too|painfully|incredibly|extremely|quite|kinda|kind of|a bit|a little|insanely|"
    r"unbearably) )+(?:slow|sluggish|laggy)|(?:taking|takes|took) (?:forever|ages)|"
    r"panics|panicking|segfaults?|core dumps?|never (?:arrives?|installs?|loads?|finish(?:es)?|"
    r"shows? up|appears?|completes?|saves?|sends?|gets? sent|fires?|triggers?|returns?|"
    r"ends?|starts?|stops?|works?|updates?|responds?)|(?:gives|returns|produces|outputs|"
    r"spits out) (?:me )?(?:nans?|nulls?|nil|undefined|garbage|nonsense|zeros|the wrong)|"
    r"(?<!\bthe )(?<!\ba )broken|flicker(?:s|ing)|stutter(?:s|ing)|glitch(?:es|y)|janky|"
    r"feels? (?:floaty|laggy|sluggish|janky|off)|falls? through|(?:got|gets|am|'m|is|are) "
    r"stuck|does nothing|stopped (?:working|loading|syncing|sending|showing)|"
    r"(?:didn'?t|did not) (?:run|fire|work|start|finish|arrive|send|save|load)|cuts? off|"
    r"(?:gets?|got) dropped|(?:the|our|my|its|their) (?!(?:[\w-]+ )?ones? (?:is|are)\b)"
    r"(?:[\w-]+ ){1,4}(?:is|are) "
    r"(?:wrong|incorrect)|"
    # revision 27: what comes out in the wrong order, format, currency, ...
    r"in the wrong (?!way\b)\w+|ist (?:total |sehr |echt |zu |so )?langsam|(?:es|está|va) "
    r"(?:muy |súper |demasiado )?lent[oa]|est (?:très |super |trop )?lente?|"
    r"è (?:molto |troppo |super )?lent[oa]|is (?:erg |heel |te |zo )?traag|"
    # revision 26: what looks odd, is a mess or gone, what clashes
    r"(?:is|are|looks?|seems?) (?:(?:a bit|kind of|kinda|really|super|so|very|totally) )?"
    r"(?:odd|weird|strange|garbled|scrambled|corrupt(?:ed)?|confusing|out of sync)|"
    r"(?:is|are) (?:(?:a|such a) (?:total |complete |bit of a )?mess|all over the place|"
    r"gone)|clash(?:es|ing)?)\b",
    re.I,
)
#: What the agent did, told back to it (revision 27): a correction, not a report.
_YOU_DID: Final = re.compile(
    r"\W*you(?:'ve| have)?\s+(?:put|placed|saved|added|wrote|created|moved|named|used|set|"
    r"made|changed)\b",
    re.I,
)
#: A time something started from ("since I added the chapter", "since the update"): not
#: the "since" of a reason (_STANDS) in a report of what is wrong (revision 25).
_SINCE_THEN: Final = re.compile(
    r"\bsince (?:i|we|you|they|he|she|it) \w+ed\b|\bsince (?:the|my|our|last|this) \w+",
    re.I,
)


def _reports_malfunction(text: str) -> bool:
    """Whether ``text`` says something is not working today ("the rust service panics on
    startup", "reset mails never arrive") and nothing that stands beside it ("..., so
    always warm it first"): the words of the failure itself ("never arrives", "is so slow")
    and a time it started from are not read as a rule or a reason."""
    if _MALFUNCTION.search(text) is None or procedure(text):
        return False  # "if the deploy fails, roll back first": what to do when it does
    if _YOU_DID.match(text):
        return False  # "you put the migration in the wrong folder, ...": the agent's doing

    return _STANDS.search(_MALFUNCTION.sub(" ", _SINCE_THEN.sub(" ", text))) is None


#: A sentence that asks the agent for one piece of work ("book me a hotel", "help me
#: answer emails faster", "write a reply to the supplier") or for help ("I need help
#: with", "ich brauche Hilfe", "mi serve una mano") (learned).
_ERRAND: Final = re.compile(
    r"(?:(?:hi|hello|hey|hallo|hola|ciao|salut|bonjour|hoi|hej|moin|servus)[,!.]?\s+)?"
    r"(?:please\s+|pls\s+)?(?:remind me (?:what|when|how|who|where|which|of)\b|"
    r"(?:book|find|get|help|write|draft|plan|order|buy|translate|"
    r"proofread|rewrite|summari[sz]e|compare|calculate|hilf|buch|schreib|finde|ayúdame|"
    r"escribe|reserva|busca|aide-moi|écris|réserve|trouve|aiutami|scrivi|prenota|trova|"
    r"help|schrijf|boek|zoek)\b(?:\s+(?:me|us|mir|uns|me|nous|mi|ci|ons))?\s+\w|"
    r"i need (?:some )?help\b|can you help\b|ich brauche (?:deine |eure )?hilfe\b|"
    # revision 24: something the person wants made or done ("I want a script that renames
    # the photos", "I'd like to add dark mode", "I want to learn a bit of python"), not how
    # they want to be treated ("I want to be asked first") nor what they have to deliver
    # ("I need to get the plan to Priya by Friday")
    r"i(?: want| need|'d like| would like) an? \w|i(?: want|'d like| would like) to (?!be\b)\w|"
    # revision 27: how the thing at hand should come out ("I'd like the success message to
    # be friendlier")
    r"i(?: want|'d like| would like) (?:the|this|that|these|those) [^,.;!?]{1,40}? to "
    r"(?:be|look|say|read|have|show|sound|feel|fit|match)\b|"
    r"necesito (?:tu )?ayuda\b|j'ai besoin d'aide\b|j'ai besoin de ton aide\b|"
    r"mi serve (?:una mano|aiuto|il tuo aiuto)\b|ik heb hulp nodig\b|kun je me helpen\b|"
    # revision 24: the order of today's work ("let's do the migration first, then the API")
    r"let'?s (?:do|start with|begin with|tackle|fix|look at|finish|handle|work on)\b"
    r"[^.!?]*\b(?:first|next|then|after that)\b|"
    # revision 25: something tried to see what happens ("let's upgrade React to 19 on a
    # branch and see what breaks")
    r"let'?s (?:try|upgrade|bump|check|test|see|spike|prototype|experiment|play|switch|"
    r"move|update|install)\b.*?\b(?:and see|to see|on a (?:new |separate )?branch|"
    r"in a branch|what breaks|if it (?:works|helps|breaks)|whether)\b|"
    # revision 27: a command to run once, for the person ("run `npm test` please", "rerun
    # make lint for me"): nothing after it but its options or paths and a word of asking
    r"(?:can you |could you )?(?:run|rerun|re-run|execute)\s+(?:`[^`]+`|"
    + _UNQUOTED
    + r"(?:\s+(?:-[\w=.-]+|[\w.-]*[/.=:][\w:./@=-]*))*)"
    r"(?:[\s,]+(?:for me|for us|please|pls|again|now|once more|real quick|quickly|"
    r"one more time))*\s*[.!]*$)",
    re.I,
)
#: What makes a report of something not working a standing fact or a rule: it always
#: happens, or it says what to do about it ("..., so build on the runner").
_STANDS: Final = re.compile(
    r"\b(?:always|every|whenever|each time|usually|sometimes|flaky|intermittent\w*|randomly|"
    r"known|never|so|because|since|that'?s why|use|don'?t|do not|must|should|has to|have to|"
    r"only|immer|nie|siempre|nunca|toujours|jamais)\b|\b\d+ in \d+\b|, not\b|"
    # revision 27: what took the place of what is gone ("Mailchimp is gone, we moved to
    # Buttondown in the spring")
    r"\b(?:moved|switched|migrated) (?:over )?to\b|\breplaced (?:by|with)\b",
    re.I,
)
_CARRIES_PAYLOAD: Final = re.compile(
    r"\b[a-z][a-z0-9+.-]*://|\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\b(?:curl|wget|iwr)\b[^\n]*\|",
    re.I,
)
_REMEMBER_HEAD: Final = re.compile(
    r"^[^:]{0,40}\b(?:remember|remembering|note|mind|forget|reference|later|next time|"
    r"memo|fyi|save this)\b[^:]{0,12}:\s*(?P<x>.+)$",
    re.I,
)


def _after_remember(s: str) -> str:
    """ "save this for next time: X" -> "X"; a rule's lead phrases are stripped the same way."""
    m = _REMEMBER_LEAD.match(s) or _REMEMBER_HEAD.match(s)
    return _first_person(m.group("x").strip()) if m else s


def _correction(s: str) -> tuple[str, str, str, float] | None:
    m = _STOP_DOING.match(s)
    if m:
        return "correction", "correction", "Do not keep " + m.group("x"), EXPLICIT
    m = _NOT_THAT_BUT.match(s)
    if m:
        new = m.group("new").strip().rstrip(".")
        text = f"{new[:1].upper()}{new[1:]}, not {m.group('old').strip()}"
        return "correction", "correction", text, SINGLE_CORRECTION
    m = _CORRECTION_LEAD.match(s)
    if not m or m.end() == 0:
        return None
    rest = s[m.end() :]
    again = _CORRECTION_LEAD.match(rest)  # "No, I said ..."
    if again:
        rest = rest[again.end() :]
    rest = _CORRECTION_TAIL.sub("", rest).strip(" ,.!")
    rest = re.sub(r"^(?:that's wrong|it's wrong|wrong)\s*[:,]\s*", "", rest, flags=re.I)
    words = rest.split()
    if len(words) < 3 or _NOT_CORRECTION.match(rest):
        return None
    if not re.search(
        r"\b(use|put|call|write|run|always|never|don't|do not|is|are|goes|lives|"
        r"should|instead|it's|that's|they're|only)\b",
        rest,
        re.I,
    ) and not _THIS_NOT_THAT.search(rest):
        return None
    text = re.sub(r"(\w) not (\S)", r"\1, not \2", rest[:1].upper() + rest[1:])
    confidence = EXPLICIT if _RULE_WORDS.search(rest) else SINGLE_CORRECTION
    return "correction", "correction", text, confidence


_FIRST_PERSON: Final = (
    (re.compile(r"^i(?:'m| am) "), "User is "),
    (re.compile(r"^i "), "User "),
    (re.compile(r"^my "), "User's "),
    (re.compile(r"^our "), "The "),
)


def _first_person(text: str) -> str:
    for rx, repl in _FIRST_PERSON:
        m = rx.match(text.lower())
        if m:
            return repl + text[m.end() :]
    return text


def tidy(text: str) -> str:
    """One clean line: spaces folded, final punctuation and trailing fillers dropped.

    A reason stays (issue 24): "the laptop is an M2 Mac, so build images for
    linux/amd64" is one memory, and without its second half it misleads."""
    text = " ".join(text.split()).strip(" ,;:")
    text = re.sub(r",?\s*(please|thanks|thank you|everyone does)[.!]*$", "", text, flags=re.I)
    text = re.sub(r"[.!?]+$", "", text).strip()
    return text[:1].upper() + text[1:]


# -- scope ---------------------------------------------------------------------

_LOCAL: Final = re.compile(
    r"(/home/|/Users/|[A-Z]:\\|~/|\blocalhost\b|127\.0\.0\.1|0\.0\.0\.0|"
    r"\bthis (?:machine|laptop|box|computer)\b|\bmy (?:laptop|machine|workstation|computer|"
    r"mac|box|dev box|setup)\b|\bon this box\b|\bport \d{2,5} (?:here|locally)\b|"
    # this machine in the six other languages (revision 18)
    r"\b(?:auf|an) meinem (?:rechner|laptop|mac|computer|pc)\b|\bbei mir lokal\b|"
    r"\ben mi (?:máquina|maquina|portátil|portatil|ordenador|computadora|mac|pc)\b|"
    r"\bsur (?:ma machine|mon (?:portable|ordi|ordinateur|mac|pc))\b|"
    r"\b(?:na minha máquina|no meu (?:computador|portátil|notebook|mac|pc))\b|"
    r"\bop mijn (?:laptop|machine|computer|mac|pc)\b|"
    r"\b(?:sul mio (?:portatile|computer|mac|pc)|sulla mia macchina)\b)",
    re.I,
)
#: Words that make a statement about the project (its code, team, services, places).
_PROJECT: Final = re.compile(
    r"\b(we|we're|we'll|our|us|team|repo|repository|project|codebase|monorepo|service|"
    r"services|app|api|backend|frontend|database|db|ci|staging|prod|production|main|build|"
    r"tests?|prs?|pull requests?|branch(?:es)?|deploys?|release|module|package|packages|"
    r"folder|directory|migrations?|schema|endpoint|docs|code|cluster|pipeline|cron|"
    r"customers?|clients?|sprint|roadmap)\b|`[^`]+`|[\w.-]+/[\w./-]*",
    re.I,
)
#: A statement scoped to the project in so many words ("in this repo", "we", "our").
_PROJECT_SAID: Final = re.compile(
    r"\b(we|we're|we'll|our|us|the team|this (?:project|repo|repository|codebase)|"
    r"in this (?:project|repo|repository|codebase)|here)\b",
    re.I,
)
#: About the person: the rules' own wording ("User's ...", "Prefers ...") or I/my/me.
_PERSONAL: Final = re.compile(
    r"^(?:user(?:'s)?|prefers|wants|likes|dislikes|would rather)\b|"
    r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine)\b|"
    # the first person in the other languages capture reads (German, French, Spanish,
    # Portuguese, Italian, Dutch), without the words that are also something else in a
    # working text ("eu-west-1", "acme.io", "mes" a month, "mon" Monday, "ma", "mi", "soy")
    r"\b(?:ich|mein|meine|meinen|meiner|mir|mich|je|moi|yo|estoy|meu|minha|sou|mio|ik|"
    r"mijn|"
    # and Swedish, Danish, Norwegian, Polish, Czech and Finnish (revision 16), less "min"
    # (minutes), "ja" (yes), "mam", "meg", "mig" and "ben" (names and other words)
    r"jag|jeg|mitt|mina|jestem|mój|moja|moje|mnie|jsem|můj|moji|mně|minä|minun|olen)\b|\bj'|"
    # Spanish "soy" and Italian "sono" where a sentence or a clause starts with them
    # ("Hola, soy Lucía", "Ciao, sono Giulia"), not the bean nor "they are" inside a
    # clause; Italian "mi chiamo" (revision 21)
    r"(?:^|[,;.!¡]\s*)(?:soy|sono)\b|\bmi chiamo\b",
    re.I,
)


#: A fix that changes this machine rather than the project: a package or a runtime
#: installed, an environment variable set, a service started, system files changed
#: (revision 21). Read at the start of a command in backquotes, as lessons write them.
_MACHINE_FIX: Final = re.compile(
    r"`(?:sudo\b|export \w+=|[A-Z][A-Z0-9_]*=\S* |set -a\b|\. ~|source ~|"
    r"(?:python3? -m )?pip3? install\b|pipx install\b|brew\b|apt(?:-get)? install\b|"
    r"(?:pyenv|nvm|rbenv|asdf|sdk|rustup|volta) |conda install\b|"
    r"(?:npm|pnpm|yarn) (?:i|install|add) (?:-g|--global)\b|gem install\b|"
    r"open -a\b|systemctl\b|service \S+ (?:start|restart)|launchctl\b)"
)


def _error_fix_scope(text: str) -> str:
    """An error-fix lesson is this machine's when its fix is (a path or host of this
    machine, or a change to the machine itself); the error's own text does not decide
    (a CMake error under /home/... fixed by editing app/prj.conf is the project's)."""
    how = text.rpartition("` -> ")[2]
    return "local" if _LOCAL.search(how) or _MACHINE_FIX.search(how) else "project"


def scope_of(category: str, text: str) -> str:
    """user, project or local (seed 000): this machine's paths and hosts are local;
    personal preferences and who the person is are the user's, unless the words scope
    them to the project; conventions, tools, decisions, lessons, commitments and facts
    of the project are the project's, and so is "remember that ..." about it."""
    if category == "error-fix":
        return _error_fix_scope(text)
    if _LOCAL.search(text):
        return "local"
    personal = _PERSONAL.search(text) is not None
    if category == "preference":
        return "project" if _PROJECT_SAID.search(text) else "user"
    if category == "identity":
        return "user" if personal else "project"
    if category in ("remember", "fact"):
        # revision 27: or of the person's life, said without "my" ("the dog goes to daycare
        # on Wednesdays", "our landlord only takes bank transfers")
        life = _LIFE.search(text) is not None
        rest = _LIFE.sub(" ", text) if life else text  # "our landlord" is not the team's
        return "user" if (personal or life) and not _PROJECT.search(rest) else "project"
    return "project"


#: What belongs to a person's life, not to a piece of work (revision 27).
_LIFE: Final = re.compile(
    r"\b(?:the|our)\s+(?:dogs?|cats?|kids|children|son|daughter|twins|baby|wife|husband|"
    r"mum|mom|dad|parents|grandparents|dentist|doctor|gp|p(?:a)?ediatrician|gym|"
    r"landlord|landlady|cleaner|babysitter|nanny|flat|apartment|allotment|neighbours?|"
    r"neighbors?|car|rent|mortgage)\b|\bbin (?:collection|day)\b|\bschool run\b",
    re.I,
)


# -- tool output ----------------------------------------------------------------

#: A line that says what went wrong: an error, an exception, a refusal, an errno code in
#: capitals (revision 24: case-blind and anywhere in a word, "E[A-Z]{4,}" took "example",
#: "vendor" and "every" for one, and so nearly any line of a failed result for its error
#: line, random text included).
_ERROR_LINE: Final = re.compile(
    r"(error|exception|fatal|denied|not found|cannot|can't|could not|couldn't|refused|"
    r"(?-i:\bE[A-Z]{4,}\b)|no rule to make|\*\*\* |needed; to update|"
    r"unknown (?:command|option|target)|fault|panic|abort(?:ed)?|does not exist|"
    r"doesn't exist|no such|forbidden|not provided|not allowed|not permitted|rejected|"
    r"timed out|killed|unresolved|incompatible|violat|disabled|unsupported|not supported|"
    r"invalid|undefined|unexpected|mismatch|conflict|missing|unable|"
    r"exit (?:code|status) [1-9]|errno)",
    re.I,
)
#: ... else a line that says a run failed ("FAIL src/a.test.ts > adds", "31 offenses
#: detected", "1) Scheduler does not overlap shows"): read when no line says what went
#: wrong.
_FAILED_WORD: Final = re.compile(
    r"\bfail(?:ed|ure|ures|s|ing)?\b|offen[cs]es? detected|\btimeout\b|"
    # a test runner's numbered failure ("1) Scheduler does not overlap shows") and what it
    # expected
    r"^\d+\) \w|\bexpected\b.*\b(?:got|but was|received|actual)\b",
    re.I,
)
#: A heading over what failed, not what failed ("Failures:", "Errors:", "Traceback (most
#: recent call last):").
_HEADING: Final = re.compile(r"(?:\w+\s*){1,2}:|traceback \(most recent call last\):", re.I)
#: _ERROR_LINE and _FAILED_WORD as an ASCII line made lower case reads them: the same
#: finds, four times faster (``re`` tries every word of a case-blind pattern at every
#: character; a failed result's first 40 lines are read for them).
_ERRNO: Final = re.compile(r"\bE[A-Z]{4,}\b")
_ERROR_LOWER: Final = re.compile(_ERROR_LINE.pattern.replace(r"(?-i:\bE[A-Z]{4,}\b)|", ""))
_FAILED_LOWER: Final = re.compile(_FAILED_WORD.pattern)
_INSTRUCTION: Final = re.compile(
    r"\b(remember (that|this)|ignore (all |the |your |any )?(previous|prior)|you must|"
    r"always (run|use|send)|"
    r"note to the (ai|assistant)|system prompt|as an ai)\b",
    re.I,
)


#: Words one of which every _INSTRUCTION match holds (a cheap test before the regex).
_INSTRUCTION_WORDS: Final = ("remember", "ignore", "must", "always", "note to", "prompt", "as an")


def instruction_like(text: str) -> bool:
    """Text in a tool result that reads like an instruction to the agent."""
    folded = text.lower()
    if not any(w in folded for w in _INSTRUCTION_WORDS):
        return False
    return bool(_INSTRUCTION.search(folded))


#: How a failed tool result starts, after any white space: matched within its first 400
#: characters.
_FAILED_START: Final = re.compile(r"\s*(?:error|fatal|traceback|exception)\b", re.I)


def _looks_failed(text: str) -> bool:
    """Whether a tool result not marked as an error starts like one."""
    return _FAILED_START.match(text, 0, 400) is not None


#: A call whose output goes through tail or head: the shell reports the exit status of
#: the last program of a pipe, so a failing test run "passes" (revision 18).
_CUT_BY_TAIL: Final = re.compile(r"\|\s*(?:tail|head)\b[^|]*$")
#: A line of a test or build run's output that says it failed: "FAILED tests/...",
#: "FAIL src/...", "--- FAIL", "1 failed, 3 passed", "2 failing", "3 errors",
#: "npm ERR!", "error[E0308]:", "error TS2345:", a traceback, "ValueError: ..." at the
#: start of a line.
_FAILED_LINE: Final = re.compile(
    r"^\s*(?:FAIL(?:ED)?\b|--- FAIL|npm ERR!|error(?:\[\w+\]| TS\d+)?:|"
    r"Traceback \(most recent call last\)|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):)|"
    r"\b[1-9]\d* (?:failed|failing|errors?)\b",
    re.M,
)


def _failed_behind_a_pipe(command: str, text: str) -> bool:
    """Whether a call whose output was cut by tail or head printed a failure."""
    return (
        "|" in command
        and _CUT_BY_TAIL.search(command) is not None
        and _FAILED_LINE.search(text, 0, 20_000) is not None
    )


def error_signature(text: str) -> str | None:
    """The first line of a failed tool result (of its first 40) that says what went wrong,
    else the first that says it failed (revision 24), as inert quoted text."""
    lines = [line.strip() for line in text.splitlines()[:40]]
    line = _line_with(lines, _says_error) or _line_with(lines, _says_failed)
    if line is None:
        return None
    head = _before_instruction(line) if instruction_like(line) else line
    if head is None:
        return None
    clean = "".join(c for c in head if c.isprintable() and c != "`")
    return clean[:120].rstrip()


def _line_with(lines: list[str], says: Callable[[str], bool]) -> str | None:
    """The first of ``lines`` that ``says`` something and that is not a heading."""
    return next((x for x in lines if x and says(x) and not _HEADING.fullmatch(x)), None)


def _says_error(line: str) -> bool:
    """Whether ``line`` says what went wrong (``_ERROR_LINE`` finds something in it)."""
    if line.isascii():
        return _ERRNO.search(line) is not None or _ERROR_LOWER.search(line.lower()) is not None
    return _ERROR_LINE.search(line) is not None


def _says_failed(line: str) -> bool:
    """Whether ``line`` says a run failed (``_FAILED_WORD`` finds something in it)."""
    if line.isascii():
        return _FAILED_LOWER.search(line.lower()) is not None
    return _FAILED_WORD.search(line) is not None


def _before_instruction(line: str) -> str | None:
    """An error line cut before the clause that reads as an instruction ("ValueError:
    Excel file format cannot be determined, you must specify an engine manually." ->
    "ValueError: Excel file format cannot be determined"), when what is left still says
    what went wrong in at least three words; else None (the line stays out of memory)."""
    m = _INSTRUCTION.search(line)
    if m is None:
        return line
    head = line[: m.start()]
    cut = max(head.rfind(mark) for mark in (",", ";", ". ", " - ", " -- ", "("))
    if cut < 0:
        return None
    head = head[:cut].rstrip(" .,;:-(")
    if len(head.split()) < 3 or not _says_error(head) or instruction_like(head):
        return None
    return head


#: Tools whose failure can teach a lesson: commands run in a shell.
SHELL_TOOLS: Final = frozenset(
    [
        "bash",
        "shell",
        "sh",
        "zsh",
        "exec",
        "execute",
        "run",
        "run_command",
        "terminal",
        "command",
        "powershell",
        "cmd",
        "local_shell",
        "exec_command",
    ]
)
#: Tools that change a file: an edit made after an error may be its fix.
EDIT_TOOLS: Final = frozenset(
    ["edit", "multiedit", "write", "str_replace_editor", "apply_patch", "notebookedit"]
)
#: What the agent runtime answers when a file tool is misused: never a lesson.
_HARNESS_ERROR: Final = re.compile(
    r"<tool_use_error>|File has not been read yet|String to replace not found|"
    r"Found \d+ matches of the string to replace|The user doesn't want to proceed|"
    r"was blocked by a hook|Permission to use \w+ has been denied",
    re.I,
)
_FILE_PATH: Final = re.compile(r'"(?:file_path|path|notebook_path)"\s*:\s*"([^"]{1,300})"')


def _tool_parts(command: str | None) -> tuple[str, str]:
    """(tool name in lower case, its argument): ``Bash: make`` -> ("bash", "make"); an
    edit's argument is its file's path; a call with no tool name is a shell command."""
    if command is None:
        return "", ""
    name, sep, rest = command.partition(": ")
    if not sep or " " in name or not name:
        return "bash", command
    tool = name.lower()
    if tool in EDIT_TOOLS:
        m = _FILE_PATH.search(rest)
        if m is None and re.fullmatch(r"[\w./~-]*[./][\w./~-]*", rest.strip()):
            return tool, rest.strip()  # a bare path, as a transcript written by hand gives it
        return tool, m.group(1) if m else ""
    return tool, rest


#: An error line cut to this many characters when the whole lesson would be too long.
_SHORT_SIGNATURE: Final = 72


def _lesson(sig: str, fix: str | None, guidance: str | None) -> str | None:
    """The lesson's text: the error line, then how it was fixed (the commands and edits,
    else the person's advice); the error line cut short when the whole would pass
    MAX_MEMORY_CHARS, and None when it is still too long."""
    how = f"fixed by {fix}" if fix else guidance
    for line in (sig, sig[:_SHORT_SIGNATURE].rstrip() + "..."):
        text = f"`{line}` -> {how}"
        if len(text) <= MAX_MEMORY_CHARS:
            return text
        if len(sig) <= _SHORT_SIGNATURE:
            break
    return None


def _fix_text(fixes: list[str]) -> str:
    """How the error was fixed, in the lesson's words: the commands run, the files edited."""
    parts = []
    for c in fixes:
        if c.startswith("edit:"):
            parts.append(f"editing `{c[5:][:100]}`")
        else:
            parts.append(f"`{_bare(c)}`")
    return " && ".join(parts)


_WORD: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{2,}")
_COMMON: Final = frozenset(
    [
        "the",
        "and",
        "you",
        "need",
        "run",
        "first",
        "then",
        "with",
        "for",
        "this",
        "that",
        "not",
        "use",
        "error",
        "failed",
    ]
)


def _related(advice: str, failed: str, sig: str, fixes: list[str]) -> bool:
    """Advice concerns the failure when it shares a word with the failing command, its
    error line or a fix that was run (the person named the fix the agent then ran)."""
    said = {w.lower() for w in _WORD.findall(advice)} - _COMMON
    seen = {w.lower() for w in _WORD.findall(" ".join([failed, sig, *fixes]))} - _COMMON
    return bool(said & seen)


def _bare(command: str) -> str:
    """A tool call without its tool name (``Bash: make all`` -> ``make all``)."""
    name, sep, rest = command.partition(": ")
    return (rest if sep and " " not in name else command).replace("`", "")[:100]


#: What a shell call puts around the command it runs without changing what runs (revision
#: 18): its output cut, filtered or saved (``2>&1 | tail -20``, ``| grep FAIL``, ``>
#: build.log``), and a time limit before it (``timeout 120``).
_OUTPUT_AROUND: Final = re.compile(
    r"(?:\s+\d?>&\d|\s+(?:\d|&)?>>?\s*[\w./~-]+|\s*\|\s*(?:tail|head|grep|egrep|rg|less|more|"
    r"cat|tee|sort|uniq|wc|cut|column)\b(?:'[^']*'|\"[^\"]*\"|[^|;&'\"])*)+\s*$"
)
_TIME_LIMIT: Final = re.compile(r"^(?P<tool>[\w-]+: )?timeout (?:-\w+ )*\d+[smh]? ")


@lru_cache(maxsize=512)
def _core(command: str) -> str:
    """A call as what it runs, normalized: ``Bash: timeout 120 pytest -x 2>&1 | tail -30``
    -> ``bash: pytest -x``."""
    core = _OUTPUT_AROUND.sub("", command)
    core = _TIME_LIMIT.sub(lambda m: m.group("tool") or "", core)
    return normalize(core)


def _same_command(a: str, b: str) -> bool:
    return a == b or _core(a) == _core(b)


def _same_target(command: str, failed: str) -> bool:
    """``command`` runs what failed with other options (revision 18): the same words but
    those starting with ``-`` (``go test ./orders/ -run TestSync -count=50 -race`` after
    ``go test ./orders/ -run TestSync -count=20``), nothing joined to it."""
    new, old = _core(command).split(), _core(failed).split()
    if any(w in _JOINS for w in new) or new == old:
        return False
    return [w for w in new if not w.startswith("-")] == [w for w in old if not w.startswith("-")]


def _extends(command: str, failed: str) -> bool:
    """``command`` is the failing one run again with more arguments (not followed by
    another command: ``make && make test`` is not ``make`` another way)."""
    a, b = _core(command), _core(failed)
    if not b:
        return False
    if a.startswith(b + " "):
        return not a[len(b) + 1 :].startswith(("&", ";", "|"))
    # the same program with arguments put in among the old ones ("python clean.py
    # --encoding latin-1 shop.csv" after "python clean.py shop.csv" failed)
    new, old = a.split(), b.split()
    if len(new) <= len(old) or new[0] != old[0] or any(w in _JOINS for w in new):
        return False
    words = iter(new)
    return all(w in words for w in old)


#: Shell words that join commands: a command holding one is not the old one run again.
_JOINS: Final = frozenset(["&&", "||", ";", "|", "&"])

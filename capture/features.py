"""What a statement looks like, as numbers: the features the capture scorer weighs.

Issue 24: the rules fire on narrow English lead phrases, so a statement
said any other way was missed. These features describe a statement by what
generalises across phrasings: the kind of words it holds (cue families
written from how people state preferences, rules, decisions, promises,
roles and facts, in English and six other languages, not from any corpus),
its form (a question, an imperative, who the subject is, a modal or a
normative word, a contrast "X, not Y"), and what it is about (code in
backticks, a command, a path, a port, a person's name, a date). Each
feature is 0 or 1 (length is bucketed), so the scorer (capture.scorer) is
a dot product.

Pure and cheap: a handful of regular expressions per statement, no import
beyond ``re``.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Final

__all__ = ["NAMES", "features", "keys"]


class _Cues:
    """Every cue family at once, as one index of words and phrases.

    Each plain word or phrase of a family (``|``-separated alternatives, matched as
    whole words, case-insensitively) maps to the set of families that hold it, as bits
    of an int. A statement's words and its phrases (runs of words joined by one space
    or hyphen, from a word that starts some phrase) are looked up once each, so the cost
    is a hash per word, not a regular expression per family: a family of a hundred
    alternatives would cost a hundred tries at every position. What is not plain after
    its optional parts are spelled out (``\\w+``, ``\\d``, a comma) stays one
    expression per family, tried only when the family's bit is not set yet. A match is
    a whole word: not inside a longer word, nor before or after an apostrophe (``it``
    does not match ``it's``).
    """

    __slots__ = ("index", "leads", "longest", "names", "patterns")

    def __init__(self, families: tuple[tuple[str, str], ...]) -> None:
        self.names = tuple(name for name, _ in families)
        self.index: dict[str, int] = {}
        self.patterns: list[tuple[int, re.Pattern[str]]] = []
        leads: set[str] = set()
        longest = 1
        for bit, (_, alternatives) in enumerate(families):
            rest: list[str] = []
            for alt in (v for a in _top_level(alternatives) for v in _variants(a)):
                if _PLAIN_PHRASE.fullmatch(alt):
                    key = alt.casefold()
                    self.index[key] = self.index.get(key, 0) | 1 << bit
                    words = _TOKEN.findall(key)
                    if len(words) > 1:
                        leads.add(words[0])
                        longest = max(longest, len(words))
                else:
                    rest.append(alt)
            if rest:
                self.patterns.append((bit, _whole(rest)))
        self.leads = frozenset(leads)
        self.longest = longest

    def find(self, body: str) -> tuple[int, frozenset[str]]:
        """The bits of the families ``body`` holds a cue of, and its words (casefolded)."""
        folded = body.casefold()
        found = [(m.group(), m.end(), m.start()) for m in _TOKEN.finditer(folded)]
        words = frozenset(w for w, _, _ in found)
        index, bits = self.index, 0
        for word in words:
            bits |= index.get(word, 0)
        if not self.leads.isdisjoint(words):
            leads = self.leads
            for i, (word, end, _) in enumerate(found):
                if word not in leads:
                    continue
                phrase = word
                for nxt, nxt_end, nxt_start in found[i + 1 : i + self.longest]:
                    between = folded[end:nxt_start]
                    if between != " " and between != "-":
                        break
                    phrase = f"{phrase}{between}{nxt}"
                    bits |= index.get(phrase, 0)
                    end = nxt_end
        for bit, pattern in self.patterns:
            if not bits >> bit & 1 and pattern.search(body) is not None:
                bits |= 1 << bit
        return bits, words


def _whole(alternatives: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'])(?:" + "|".join(alternatives) + r")(?![\w'])", re.I)


#: A plain word or phrase: words of letters, digits and apostrophes (starting with a
#: letter) joined by one space or hyphen.
_PLAIN_PHRASE: Final = re.compile(r"[^\W\d_][\w']*(?:[ -][\w']+)*")
#: A statement's words, as the families see them.
_TOKEN: Final = re.compile(r"[\w']+")


def _top_level(pattern: str) -> list[str]:
    """The alternatives of ``pattern`` at depth 0 (``a|b(?:c|d)|e`` -> a, b(?:c|d), e)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(pattern):
        if c == "\\":
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    return out


_OPTIONAL: Final = re.compile(r"\(\?:([^()]*)\)\?|([\w'-])\?")
_GROUP: Final = re.compile(r"\(\?:([^()]*)\)")
#: A class of single characters or a range of them: ``[sz]``, ``[1-4]``.
_CLASS: Final = re.compile(r"\[(\w(?:-\w)?(?:\w(?:-\w)?)*)\]")
_SIMPLE: Final = re.compile(r"[\w' -]+")


def _variants(alt: str) -> list[str]:
    """The plain spellings an alternative stands for (``i'?ll`` -> ``ill``, ``i'll``;
    ``standardi[sz]e``; ``q[1-4]``), so that they are looked up as words; an alternative
    with other syntax is kept whole."""
    out = _expand(alt)
    if len(out) > 16 or not all(_SIMPLE.fullmatch(v) for v in out):
        return [alt]
    return out


def _expand(alt: str) -> list[str]:
    m = _OPTIONAL.search(alt)
    if m is not None:
        options = ["", *m.group(1).split("|")] if m.group(1) is not None else ["", m.group(2)]
    elif (m := _GROUP.search(alt)) is not None:
        options = m.group(1).split("|")
    elif (m := _CLASS.search(alt)) is not None:
        spec, options, i = m.group(1), [], 0
        while i < len(spec):
            if i + 2 < len(spec) and spec[i + 1] == "-":
                options += [chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1)]
                i += 3
            else:
                options.append(spec[i])
                i += 1
    else:
        return [alt]
    return [v for o in options for v in _expand(alt[: m.start()] + o + alt[m.end() :])]


#: Cue families: (name, pattern). Written from general usage, not from a corpus.
_FAMILIES: Final[tuple[tuple[str, str], ...]] = (
    (
        "pref",
        (
            r"prefer|prefers|preferred|preference|rather|like it|i like|i love|i hate|hate it|"
            r"don'?t like|do not like|not like|hate|love|appreciate|personally|more of a|"
            r"person than|going forward|"
            r"dislike|can'?t stand|cannot stand|not a fan|fan of|drives me|annoy(?:s|ing)?|"
            r"i want|i'?d like|would like|favou?rite|enjoy|works better|for me|to me|bugs me|"
            r"can'?t bear|habit|my taste|i find"
        ),
    ),
    (
        "norm",
        (
            r"always|never|must|mustn'?t|have to|has to|need to|needs to|should|shouldn'?t|"
            r"make sure|ensure|avoid|only|every time|whenever|from now on|going forward|"
            r"no more|required|mandatory|not allowed|forbidden|at all times|by default|"
            r"ever|nowhere else|no exceptions|in general|as a rule|everywhere|all new|"
            r"every|each"
        ),
    ),
    (
        "decide",
        (
            r"decided|decide|decision|going with|go with|chose|chosen|choose|picked|pick|"
            r"settled|agreed|agree|final|standardi[sz]e|it is|deprecate|adopt|adopted|"
            r"switch(?:ed)? to|moving to|move to|approved|the plan is|we'?ll use|drop|ditch|"
            r"retire|replace|in favou?r of|agreed on|agree on|we'?re dropping|dropping|"
            r"switching to|it'?s decided|is out|we'?re switching"
        ),
    ),
    (
        "commit",
        (
            r"promised|promise|i'?ll|i will|we'?ll|we will|deadline|due|owe|on the hook|"
            r"committed|commit to|deliver|hand over|hand in|ship|by|before|until|i'?m on it"
        ),
    ),
    (
        "when",
        (
            r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
            r"today|next week|this week|end of (?:the )?(?:day|week|month|sprint|quarter)|"
            r"eod|eow|sprint|quarter|q[1-4]|january|february|march|april|may|june|july|"
            r"august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|"
            r"oct|nov|dec|\d{1,2}(?:st|nd|rd|th)|month"
        ),
    ),
    (
        "who",
        (
            r"my name|call me|i'?m a|i am a|i'?m an|i am an|i'?m the|i am the|i work|"
            r"engineer|developer|lead|manager|designer|owner|owns|own|in charge|"
            r"responsible for|ask \w+ about|timezone|time zone|based in|i live|pronouns|"
            r"my role|my job|my team|the only one|maintainer|architect|on-?call|reviewer|"
            r"new to|i'?m from|i come from|background|takes care of|take care of|looks after|"
            r"look after|handles|maintains|on the \w+ team|been (?:writing|doing|working)|"
            r"years of|point of contact|go-?to person|leads|runs the|mostly do|mostly work|"
            r"is our|are our|i'?m new|i do|my background"
        ),
    ),
    (
        "fix",
        (
            r"no|nope|nah|wrong|actually|that'?s not|not that|i said|again|stop|instead|"
            r"keep (?:using|reaching|suggesting|adding|doing)|switched|mistake|incorrect|"
            r"isn'?t right|not right|we don'?t|we do not|don'?t use|not how|you used|"
            r"got (?:that|it) wrong|wrong (?:tool|folder|file|one|place|again)|has to be|"
            r"should be|not what|you did"
        ),
    ),
    (
        "tooling",
        (
            r"run|runs|running|command|script|cli|invoke|target|task|make|npm|pnpm|yarn|npx|"
            r"uv|pip|pipx|poetry|hatch|tox|nox|cargo|rustup|go|gradle|gradlew|mvn|maven|"
            r"bazel|deno|bun|nx|turbo|just|rake|bundle|docker|podman|kubectl|helm|"
            r"terraform|ansible|pytest|jest|vitest|mocha|rspec|alembic|flyway|ruff|black|"
            r"eslint|prettier|biome|mypy|tsc|git|gh|brew|apt|systemctl|psql|redis-cli|"
            r"curl|make target|shell|terminal|alias|flag|option"
        ),
    ),
    (
        "project",
        (
            r"we|our|us|the team|this (?:repo|repository|project|codebase|service|app)|"
            r"in this repo|here|the repo|the project|the codebase|the service|the app|"
            r"the api|the backend|the frontend|the database|the db|ci|staging|prod|"
            r"production|main|the build|the tests|pull requests?|prs?|branch(?:es)?|"
            r"module|package|folder|directory|file|files|schema|migrations?|endpoint"
        ),
    ),
    (
        "shape",
        (
            r"named|naming|name|called|prefixed|suffixed|prefix|suffix|case|camelcase|"
            r"snake_case|kebab-case|pascalcase|format|formatted|style|pattern|layout|"
            r"live|lives|go in|goes in|belong|belongs|under|inside|stored|kept|put|"
            r"structure|convention|per|one .{1,20} per|layer|through|rule|rules|without|"
            r"nothing gets|by convention|policy|standard"
        ),
    ),
    (
        "state",
        (
            r"is|are|was|runs on|run on|has|have|there'?s|there is|there are|since|about|"
            r"version|located|hosted|lives on|sits|uses|allow|allows|limit|only|still"
        ),
    ),
    (
        "schedule",
        (
            r"every (?:night|day|morning|evening|week|month|hour|sunday|monday|tuesday|"
            r"wednesday|thursday|friday|saturday)|nightly|daily|weekly|hourly|monthly|"
            r"at \d{1,2}(?::\d\d)? ?(?:am|pm)|utc|cron|until|since|gets (?:wiped|reset|"
            r"rebuilt|refreshed)|is (?:down|read-only|protected|frozen)|freeze|region|"
            r"eu-\w+-\d|us-\w+-\d|version|v\d+|per (?:second|minute|hour|day)|limit"
        ),
    ),
    (
        "remember",
        (
            r"remember|note|noted|keep in mind|bear in mind|don'?t forget|do not forget|"
            r"for future reference|for later|for next time|save this|worth remembering|"
            r"memo|fyi|heads up|take note|write (?:this|that) down"
        ),
    ),
    (
        "ask",
        (
            r"what|why|how|where|which|who|when|can you|could you|would you|will you|"
            r"do you|did you|are you|is there|any idea|wonder|wondering"
        ),
    ),
    (
        "oneoff",
        (
            r"this one|that one|this time|for now|right now|now|today|for me|for this|"
            r"this task|these changes|the last|just this|once|please|pls|look at|check|"
            r"fix|open|revert|rename|refactor|add a|update the|write a|for this task"
        ),
    ),
    (
        "chat",
        (
            r"thanks|thank you|thx|ty|cool|nice|great|perfect|awesome|lol|haha|ok|okay|yep|"
            r"yes|yeah|sure|sounds good|good morning|hi|hello|hey|brb|ugh|hmm|oops|wow|"
            r"coffee|tired|lunch|no worries|no problem|no thanks|no rush|not relevant|"
            r"still failing|close|not exactly|what i asked|what i meant|the other (?:one|file)"
        ),
    ),
    (
        "maybe",
        (
            r"maybe|perhaps|might|could|what if|i guess|not sure|option|later|think about|"
            r"should we|shall we|how about|considering|consider|idea|possibly|probably"
        ),
    ),
    (
        "other",
        (
            r"said|says|say|claims?|according to|the blog|the article|the post|someone|"
            r"somebody|they told|told me|heard|read that|apparently"
        ),
    ),
    (
        "recall",
        (
            r"i remember|i recall|i forgot|i don'?t remember|remember when|reminds me|"
            r"remember to|if you remember|remember, remember|i'?m a (?:little|bit) confused|"
            r"i'?d be curious|curious|interesting|some projects|some people|in general"
        ),
    ),
    (
        "deny",
        (
            r"never agreed|not saying|haven'?t decided|didn'?t decide|did not decide|"
            r"not decided|not sure|not yet|didn'?t agree|no decision"
        ),
    ),
    # other languages: German, French, Spanish, Portuguese, Italian, Dutch
    (
        "l_norm",
        (
            r"immer|nie|niemals|nur|stets|jede|jeder|jedes|kein|keine|muss|müssen|bitte|"
            r"toujours|jamais|chaque|seulement|il faut|doit|doivent|obligatoire|"
            r"s'il te plaît|siempre|nunca|cada|solo|hay que|debe|deben|obligatorio|"
            r"por favor|sempre|só|tem que|precisa|deve|devem|obrigatório|"
            r"mai|ogni|bisogna|devono|obbligatorio|per favore|"
            r"altijd|nooit|alleen|elke|moet|moeten|verplicht|graag"
        ),
    ),
    (
        "l_pref",
        (
            r"bevorzuge|lieber|mag|hätte gern|ich möchte|préfère|préfèrent|aime|j'aimerais|"
            r"prefiero|prefiere|me gusta|me gustaría|prefiro|gosto|gostaria|preferisco|"
            r"mi piace|preferirei|liever|voorkeur|ik hou van"
        ),
    ),
    (
        "l_project",
        (
            r"wir|unser|unsere|hier|projekt|on|nous|notre|ici|projet|ce projet|"
            r"usamos|nuestro|nuestra|aquí|proyecto|este repo|a gente|nosso|nossa|aqui|"
            r"projeto|verwenden|utilise|utilisons|usa|uso|noi|nostro|nostra|qui|progetto|"
            r"usiamo|wij|ons|onze|gebruiken"
        ),
    ),
    (
        "l_decide",
        (
            r"entschieden|beschlossen|décidé|choisi|decidimos|decidido|elegimos|escolhemos|"
            r"decidiu|deciso|abbiamo deciso|scelto|besloten|gekozen"
        ),
    ),
    (
        "l_remember",
        (
            r"merk dir|vergiss nicht|souviens-toi|n'oublie pas|recuerda|no olvides|"
            r"lembre-se|lembra|não esqueça|ricordati|ricorda|non dimenticare|onthoud|"
            r"vergeet niet"
        ),
    ),
    (
        "l_commit",
        (
            r"ich werde|ich mache|ich schreibe|ich kümmere mich|je vais|je m'occupe|je ferai|"
            r"voy a|me encargo|preparo|reviso|eu vou|vou|vamos|farò|mi occupo io|scrivo io|"
            r"ik ga|ik regel|ik zal|morgen|demain|ce soir|mañana|esta tarde|amanhã|hoje|"
            r"domani|stasera"
        ),
    ),
    (
        "l_fix",
        (
            r"nein|falsch|schon wieder|non|faux|pas le bon|c'est pas|tu t'es trompé|encore|"
            r"no es|incorrecto|te equivocaste|otra vez|errado|não é|de novo|sbagliato|"
            r"hai sbagliato|non è|di nuovo|nee|fout|klopt niet|verkeerde|weer"
        ),
    ),
    (
        "l_who",
        (
            r"ich bin|ich heiße|je suis|je m'appelle|moi c'est|soy|me llamo|trabajo en|"
            r"eu sou|sou a|sou o|cuido|sono|mi chiamo|mi occupo|ik ben|ik heet|ik werk|"
            r"ik doe"
        ),
    ),
)

_CUES: Final = _Cues(_FAMILIES)

_IMPERATIVE: Final = re.compile(
    r"^(?:please\s+|pls\s+|just\s+|and\s+|also\s+)?(?:use|put|keep|run|add|write|call|make|"
    r"avoid|prefer|fix|rename|update|refactor|deploy|look|open|revert|skip|check|create|"
    r"delete|remove|change|move|try|show|tell|explain|give|build|test|push|commit|merge|"
    r"install|start|stop|let'?s|do|don'?t|never|always|ask|send|go|get|set|leave|drop|"
    r"lint|format|name|store|mention|link|review)\b",
    re.I,
)
_SUBJECT: Final = (
    ("s_i", re.compile(r"^(?:i|i'm|i'd|i'll|i've|im|me)\b", re.I)),
    ("s_my", re.compile(r"^my\b", re.I)),
    ("s_we", re.compile(r"^(?:we|we're|we'll|we've|we'd|let's|us)\b", re.I)),
    ("s_our", re.compile(r"^our\b", re.I)),
    ("s_you", re.compile(r"^(?:you|you're|you'll|your)\b", re.I)),
    ("s_the", re.compile(r"^(?:the|this|that|these|those|all|every|each|no)\b", re.I)),
    ("s_it", re.compile(r"^(?:it|it's|there|there's|here)\b", re.I)),
)
_FILLER: Final = re.compile(
    r"^(?:(?:ok|okay|so|also|and|oh|hey|btw|fyi|right|well|hm+|quick thing|one more|"
    r"one more thing|by the way|just|alright)[,:!.]?\s+)+",
    re.I,
)
#: "No worries", "no problem": courtesy, not a correction or a contrast.
_COURTESY: Final = re.compile(r"\bno (?:worries|problems?|thanks|rush|idea|biggie)\b", re.I)
_CODE: Final = re.compile(r"`[^`]+`")
_PATH: Final = re.compile(
    r"(?:^|\s)(?:\.{0,2}/)?[\w.-]+/[\w./-]*|\b[\w-]+\.(?:py|ts|tsx|js|go|rs|rb|java|kt|md|json|ya?ml|toml|sql|sh|cfg|ini)\b"
)
_NUMBER: Final = re.compile(r"\b\d+(?:[.,:]\d+)*\b")
_PORT: Final = re.compile(r"\bport \d{2,5}\b|:\d{4,5}\b", re.I)
_URL: Final = re.compile(r"https?://\S+")
_NAME: Final = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{2,}\b")
_CONTRAST: Final = re.compile(
    r"\b(?:not|never|instead of|rather than|over|nicht|pas|no|não)\s+[\w`@./-]+", re.I
)
_REASON: Final = re.compile(r",?\s+(?:so|because|since|as|weil|car|porque|pois)\s+\w", re.I)
_FIX_START: Final = re.compile(
    r"^(?:no|nope|nah|nein|non|wrong|not|again|actually|stop|that'?s (?:not|wrong)|"
    r"i said|i told you|hm+,? no|no no|incorrect)\b",  # courtesy ("no worries") is gone by now
    re.I,
)
_COMMAND: Final = re.compile(
    r"\b(?:npm|pnpm|yarn|npx|bun|uv|pip|pipx|poetry|hatch|tox|nox|cargo|go|make|just|"
    r"docker|podman|kubectl|helm|terraform|pytest|gradle|\./gradlew|mvn|bazel|deno|nx|turbo|"
    r"bundle|rake|rails|python|node|ruby|git|gh|psql|alembic)\s+[\w:./@=-]+|(?:^|\s)\./[\w./-]+",
    re.I,
)
_COMMAND_WORDS: Final = frozenset(
    [
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "bun",
        "uv",
        "pip",
        "pipx",
        "poetry",
        "hatch",
        "tox",
        "nox",
        "cargo",
        "go",
        "make",
        "just",
        "docker",
        "podman",
        "kubectl",
        "helm",
        "terraform",
        "pytest",
        "gradle",
        "gradlew",
        "mvn",
        "bazel",
        "deno",
        "nx",
        "turbo",
        "bundle",
        "rake",
        "rails",
        "python",
        "node",
        "ruby",
        "git",
        "gh",
        "psql",
        "alembic",
    ]
)
_COMMIT_ACTOR: Final = re.compile(
    r"^(?:i|we)(?:'ll| will| promised| owe| committed| have committed|'m on the hook|"
    r" am on the hook| have to (?:hand|deliver|ship|send|finish)| told)\b",
    re.I,
)
_DUE_WORDS: Final = frozenset(["due", "deadline", "promise", "promised", "owe"])
_YOU: Final = re.compile(r"\b(?:you|your)\b", re.I)
#: The words one of which each pattern's match is (casefolded; features() tries a pattern
#: only when the statement holds one of them as a word, or an apostrophe).
_YOU_WORDS: Final = frozenset(["you", "your"])
_CONTRAST_WORDS: Final = frozenset(
    ["not", "never", "instead", "rather", "over", "nicht", "pas", "no", "não"]
)
_REASON_WORDS: Final = frozenset(["so", "because", "since", "as", "weil", "car", "porque", "pois"])
_NEGATED_WORDS: Final = frozenset(["not", "never", "no"])
_IT_IS_END: Final = re.compile(r"\bit is\W*$|\bit'?s settled\W*$", re.I)
_LETS: Final = re.compile(r"^let'?s\b|^let us\b", re.I)
_NEGATED: Final = re.compile(r"\b(?:not|n't|never|no)\b", re.I)

NAMES: Final[tuple[str, ...]] = (
    "bias",
    *_CUES.names,
    "imperative",
    *(name for name, _ in _SUBJECT),
    "question",
    "exclaim",
    "code",
    "path",
    "number",
    "port",
    "url",
    "person",
    "contrast",
    "reason",
    "negated",
    "len_1_3",
    "len_4_7",
    "len_8_15",
    "len_16",
    "colon",
    "comma",
    "lower",
    "ascii",
    "pair_pref_norm",
    "pair_project_norm",
    "pair_project_state",
    "pair_i_pref",
    "pair_we_decide",
    "pair_fix_contrast",
    "pair_imperative_oneoff",
    "pair_commit_when",
    "pair_who_person",
    "pair_tool_code",
    "it_is_end",
    "lets",
    "fix_start",
    "command_like",
    "commit_actor",
    "due",
    "state_number",
    "imperative_norm",
    "we_norm",
    "tool_state",
    "tool_imperative",
    "pref_you",
)


def features(statement: str) -> list[float]:
    """The feature vector of one statement (in the order of NAMES)."""
    text = statement.strip()
    body = _COURTESY.sub("okay", _FILLER.sub("", text))
    bits, tokens = _CUES.find(body)
    cues = [float(bits >> i & 1) for i in range(len(_CUES.names))]
    cue = dict(zip(_CUES.names, cues, strict=True))
    imperative = 1.0 if _IMPERATIVE.match(body) else 0.0
    subjects = [1.0 if rx.match(body) else 0.0 for _, rx in _SUBJECT]
    n = len(body.split())
    low = body.lower()
    # Each pattern below is tried only where what it needs is there: the word it starts
    # with among the statement's words (``tokens``; an apostrophe joins words into one,
    # so with one anywhere the pattern is tried), a digit, a slash or a point.
    quote = "'" in body
    code = 1.0 if _CODE.search(body) else 0.0
    contrast = (
        1.0 if (quote or not tokens.isdisjoint(_CONTRAST_WORDS)) and _CONTRAST.search(body) else 0.0
    )
    person = 1.0 if body != low and _NAME.search(body) else 0.0
    number = 1.0 if _NUMBER.search(body) else 0.0
    oneoff = cue["oneoff"]
    command = (
        1.0
        if code
        or ((not tokens.isdisjoint(_COMMAND_WORDS) or "./" in body) and _COMMAND.search(body))
        else 0.0
    )
    return [
        1.0,
        *cues,
        imperative,
        *subjects,
        1.0 if body.rstrip().endswith("?") else 0.0,
        1.0 if "!" in body else 0.0,
        code,
        1.0 if ("/" in body or "." in body) and _PATH.search(body) else 0.0,
        number,
        1.0 if (":" in body or "port" in low) and _PORT.search(body) else 0.0,
        1.0 if _URL.search(body) else 0.0,
        person,
        contrast,
        1.0 if not tokens.isdisjoint(_REASON_WORDS) and _REASON.search(body) else 0.0,
        1.0 if (quote or not tokens.isdisjoint(_NEGATED_WORDS)) and _NEGATED.search(body) else 0.0,
        1.0 if n <= 3 else 0.0,
        1.0 if 4 <= n <= 7 else 0.0,
        1.0 if 8 <= n <= 15 else 0.0,
        1.0 if n >= 16 else 0.0,
        1.0 if ":" in body else 0.0,
        1.0 if "," in body else 0.0,
        1.0 if body == low else 0.0,
        1.0 if body.isascii() else 0.0,
        cue["pref"] * cue["norm"],
        cue["project"] * cue["norm"],
        cue["project"] * cue["state"],
        subjects[0] * cue["pref"],
        (subjects[2] + subjects[3] > 0) * cue["decide"],
        cue["fix"] * contrast,
        imperative * oneoff,
        cue["commit"] * cue["when"],
        cue["who"] * person,
        cue["tooling"] * code,
        1.0 if (quote or "it" in tokens or "its" in tokens) and _IT_IS_END.search(body) else 0.0,
        1.0 if _LETS.match(body) else 0.0,
        1.0 if _FIX_START.match(body) else 0.0,
        command,
        1.0 if _COMMIT_ACTOR.match(body) else 0.0,
        1.0 if not tokens.isdisjoint(_DUE_WORDS) or "on the hook" in body.casefold() else 0.0,
        cue["state"] * number,
        imperative * cue["norm"],
        (subjects[2] + subjects[3] > 0) * cue["norm"],
        command * cue["state"],
        command * imperative,
        cue["pref"]
        * (1.0 if (quote or not tokens.isdisjoint(_YOU_WORDS)) and _YOU.search(body) else 0.0),
    ]


#: A word as a lexical key: letters, digits, apostrophes; numbers become one key.
_WORD: Final = re.compile(r"[^\W\d_][\w']*|\d+")


def keys(statement: str) -> list[str]:
    """The statement's lexical keys, for the scorer's learned vocabulary: each word
    (casefolded), each pair of adjacent words (``we_use``), and the first word and
    first two words marked as leads (``^please``, ``^from_now``). Numbers are one key,
    ``0``; code in backticks is one key, ``code_``. Which keys carry weight is the
    trained model's business (capture.scorer): this only names them."""
    body = _CODE.sub(" code_ ", _FILLER.sub("", statement.strip())).casefold()
    words = ["0" if w.isdigit() else w for w in _WORD.findall(body)]
    out = [*words, *(f"{a}_{b}" for a, b in pairwise(words))]
    if words:
        out.append("^" + words[0])
        if len(words) > 1:
            out.append(f"^{words[0]}_{words[1]}")
    return out

"""The time a text speaks of (issue 25): "last Tuesday", said on 8 May 2023, is 2 May 2023.

``spoken_of(text, said)`` reads the first expression of time in a memory
and resolves it against the day the memory was said; ``asked_about(query,
today)`` reads the days a question asks about. Both give a range of days
(first, last), inclusive, or None. What is read (English only, case-insensitive):

* dates: ``2023-05-02``, ``2 May 2023``, ``May 2, 2023``, ``May 2nd``,
  ``2 May`` (a date without a year is in the year it was said, or the
  year before when that would put it after the day said);
* months: ``May 2023``, ``in May`` (the last May on or before the day said);
  years: ``in 2023``;
* days relative to the day said: ``today``, ``tonight``, ``this morning``,
  ``yesterday``, ``the day before yesterday``, ``N days ago`` (a number in
  digits or words up to ten), ``last <weekday>`` (the last one before the
  day said; "on Friday" may be the next one, and is not read), ``last
  weekend``, ``last week``, ``N weeks ago``, ``last month``, ``last year``.

Anything else (``soon``, ``next Friday``, ``in a while``) is not read: a
memory without a readable time is ranked as before.
"""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta
from typing import Final

__all__ = ["FTS_TRIGGERS", "Days", "asked_about", "spoken_of"]

Days = tuple[date, date]

_MONTHS: Final = {
    m: n
    for n, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for m in names
}
_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS: Final = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}
_MONTH: Final = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY: Final = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR: Final = r"((?:19|20)\d{2})"
_NUM: Final = r"(\d{1,2}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_WEEKDAY: Final = "(" + "|".join(_WEEKDAYS) + ")"

#: (kind, pattern source, flags); compiled on first use (_compiled): importing stays cheap.
_SOURCES: Final = [
    ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b", 0),
    ("d m y", rf"\b{_DAY} (?:of )?{_MONTH},? {_YEAR}\b", re.I),
    ("m d y", rf"\b{_MONTH} {_DAY},? {_YEAR}\b", re.I),
    ("m y", rf"\b{_MONTH},? {_YEAR}\b", re.I),
    ("m d", rf"\b{_MONTH} {_DAY}\b(?!:)", re.I),
    ("d m", rf"\b{_DAY} (?:of )?{_MONTH}\b", re.I),
    ("in m", rf"\b(?:in|during|since|of|last) {_MONTH}(?:,? {_YEAR})?\b", re.I),
    ("in y", rf"\b(?:in|during|since) {_YEAR}\b", re.I),
    ("before yesterday", r"\bthe day before yesterday\b", re.I),
    ("yesterday", r"\byesterday\b", re.I),
    ("today", r"\b(?:today|tonight|this morning|this afternoon|this evening)\b", re.I),
    ("days ago", rf"\b{_NUM} days? ago\b", re.I),
    ("weeks ago", rf"\b{_NUM} weeks? ago\b", re.I),
    ("weekday", rf"\b(?:last|this past) {_WEEKDAY}\b", re.I),
    ("weekend", r"\b(?:last|this past|over the) weekend\b", re.I),
    ("last week", r"\blast week\b", re.I),
    ("last month", r"\blast month\b", re.I),
    ("last year", r"\blast year\b", re.I),
]


_MAY: Final = re.compile(r"\bmay\b", re.I)
_MAY_NAME: Final = re.compile(r"\bMay\b")


def _number(word: str) -> int | None:
    word = word.casefold()
    if word.isdigit():
        return int(word)
    return _NUMBERS.get(word)


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month(year: int, month: int) -> Days:
    first = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def _last_month_named(month: int, said: date) -> Days:
    year = said.year if month <= said.month else said.year - 1
    return _month(year, month)


def _dated(day: date | None) -> Days | None:
    return None if day is None else (day, day)


def _resolve(kind: str, m: re.Match[str], said: date) -> Days | None:
    g = m.groups()
    if kind == "iso":
        return _dated(_day(int(g[0]), int(g[1]), int(g[2])))
    if kind == "d m y":
        return _dated(_day(int(g[2]), _MONTHS[g[1].casefold()], int(g[0])))
    if kind == "m d y":
        return _dated(_day(int(g[2]), _MONTHS[g[0].casefold()], int(g[1])))
    if kind == "m y":
        return _month(int(g[1]), _MONTHS[g[0].casefold()])
    if kind in ("m d", "d m"):
        month, day = (g[0], g[1]) if kind == "m d" else (g[1], g[0])
        found = _day(said.year, _MONTHS[month.casefold()], int(day))
        if found is not None and found > said:
            found = _day(said.year - 1, _MONTHS[month.casefold()], int(day))
        return _dated(found)
    if kind == "in m":
        if g[1]:
            return _month(int(g[1]), _MONTHS[g[0].casefold()])
        return _last_month_named(_MONTHS[g[0].casefold()], said)
    if kind == "in y":
        return date(int(g[0]), 1, 1), date(int(g[0]), 12, 31)
    if kind == "before yesterday":
        return _dated(said - timedelta(days=2))
    if kind == "yesterday":
        return _dated(said - timedelta(days=1))
    if kind == "today":
        return _dated(said)
    if kind == "days ago":
        n = _number(g[0])
        return None if n is None else _dated(said - timedelta(days=n))
    if kind == "weeks ago":
        n = _number(g[0])
        if n is None:
            return None
        start = said - timedelta(days=7 * n + said.weekday())
        return start, start + timedelta(days=6)
    if kind == "weekday":
        want = _WEEKDAYS.index(g[0].casefold())
        back = (said.weekday() - want) % 7 or 7
        return _dated(said - timedelta(days=back))
    if kind == "weekend":
        back = (said.weekday() - 5) % 7 or 7  # the last Saturday before the day said
        saturday = said - timedelta(days=back)
        return saturday, saturday + timedelta(days=1)
    if kind == "last week":
        start = said - timedelta(days=7 + said.weekday())
        return start, start + timedelta(days=6)
    if kind == "last month":
        first = said.replace(day=1) - timedelta(days=1)
        return _month(first.year, first.month)
    if kind == "last year":
        return date(said.year - 1, 1, 1), date(said.year - 1, 12, 31)
    return None


_TOKEN: Final = re.compile(r"\w+")
_YEAR_WORD: Final = re.compile(r"\b(?:19|20)\d\d\b")
#: An expression starts at most this many words before its trigger ("a couple of days ago").
_REACH: Final = 4


def _trigger_groups() -> dict[str, frozenset[str]]:
    """A substring of the casefolded text -> the trigger words that hold it: every
    expression holds one of these words or a year."""
    groups: dict[str, list[str]] = {
        "day": ["yesterday", "today", *_WEEKDAYS],
        "ago": ["ago"],
        "week": ["week", "weekend"],
        "month": ["month"],
        "year": ["year"],
        "tonight": ["tonight"],
        "morning": ["morning"],
        "afternoon": ["afternoon"],
        "evening": ["evening"],
    }
    for name in _MONTHS:
        groups.setdefault(name[:3], []).append(name)
    return {key: frozenset(words) for key, words in groups.items()}


_TRIGGER_GROUPS: Final = _trigger_groups()
_ANY_TRIGGER: Final = re.compile(
    r"\b(?:"
    + "|".join(sorted(set().union(*_TRIGGER_GROUPS.values()), key=len, reverse=True))
    + r")\b",
    re.I,
)


#: An FTS5 query for the texts that may hold an expression of time (a superset: the
#: index reads only those after a rebuild, index.query.read_times).
FTS_TRIGGERS: Final = " OR ".join(
    [*(f'"{w}"' for w in sorted(set().union(*_TRIGGER_GROUPS.values()))), '"19"*', '"20"*']
)


def _triggers(text: str) -> list[int]:
    """Where the words that can hold an expression of time are in ``text``, in order.

    Found with str.find in the casefolded text (the hot path of a rebuild: most texts
    hold none); a text that casefolding changes in length is scanned with a regex.
    """
    low = text.casefold()
    if len(low) != len(text):
        found = [m.start() for m in _ANY_TRIGGER.finditer(text)]
    else:
        found = []
        for key, words in _TRIGGER_GROUPS.items():
            at = low.find(key)
            while at != -1:
                begin = at
                while begin and (low[begin - 1].isalnum() or low[begin - 1] == "_"):
                    begin -= 1
                word = _TOKEN.match(low, begin)
                if word is not None and word.group() in words:
                    found.append(begin)
                at = low.find(key, at + len(key))
    if "1" in low or "2" in low:
        found += [m.start() for m in _YEAR_WORD.finditer(text)]
    return sorted(set(found))


@functools.cache
def _compiled() -> tuple[
    list[tuple[str, re.Pattern[str]]], dict[str, re.Pattern[str]], re.Pattern[str]
]:
    """The patterns, compiled once: each kind's, those that can start with a word (the
    first word of an expression -> one alternation of its patterns, longer forms first,
    so that a place is tried only against those), and those that start with a number."""
    patterns = [(kind, re.compile(source, flags)) for kind, source, flags in _SOURCES]
    kinds_by_word: dict[str, list[int]] = {}

    def add(words: list[str], *kinds: str) -> None:
        for word in words:
            kinds_by_word.setdefault(word, [])
            for n, (kind, _) in enumerate(patterns):
                if kind in kinds and n not in kinds_by_word[word]:
                    kinds_by_word[word].append(n)

    numbers = [w for w in _NUMBERS if " " not in w] + ["couple", "few"]
    add(list(_MONTHS), "m d y", "m y", "m d")
    add(["in", "during", "since", "of", "last"], "in m", "in y")
    add(["last"], "weekday", "weekend", "last week", "last month", "last year")
    add(["this"], "today", "weekday", "weekend")
    add(["over"], "weekend")
    add(["the"], "before yesterday")
    add(["yesterday"], "yesterday")
    add(["today", "tonight"], "today")
    add(numbers, "days ago", "weeks ago")
    by_word = {}
    for word, ns in kinds_by_word.items():
        ns.sort()
        by_word[word] = re.compile(
            "|".join(f"(?P<k{n}>{patterns[n][1].pattern})" for n in ns), re.I
        )
    by_number = re.compile(
        "|".join(
            f"(?P<k{n}>{p.pattern})"
            for n, (kind, p) in enumerate(patterns)
            if kind in ("iso", "d m y", "d m", "days ago", "weeks ago")
        ),
        re.I,
    )
    return patterns, by_word, by_number


def _candidates(word: str) -> re.Pattern[str] | None:
    _, by_word, by_number = _compiled()
    if word[:1].isdigit():
        return by_number
    return by_word.get(word.casefold())


def spoken_of(text: str, said: date) -> Days | None:
    """The days the first readable expression of time in ``text`` names, said on ``said``."""
    tried: set[int] = set()
    for pos in _triggers(text):  # most texts have none: a few substring tests
        starts = [m.start() for m in _TOKEN.finditer(text, max(0, pos - 48), pos)]
        for start in [*starts[-_REACH:], pos]:
            if start in tried:
                continue
            tried.add(start)
            first = _TOKEN.match(text, start)
            patterns = None if first is None else _candidates(first.group())
            m = None if patterns is None else patterns.match(text, start)
            if m is None or (_MAY.search(m.group()) and not _MAY_NAME.search(m.group())):
                continue  # "you may", "2 may be enough": the month is written May
            kind, pattern = _compiled()[0][int((m.lastgroup or "k0")[1:])]
            own = pattern.match(text, start)
            days = None if own is None else _resolve(kind, own, said)
            if days is not None:
                return days
    return None


def asked_about(query: str, today: date) -> Days | None:
    """The days a question asks about ("what did Ana do in May 2023?"), or None."""
    return spoken_of(query, today)

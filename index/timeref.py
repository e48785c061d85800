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

import re
from datetime import date, timedelta
from typing import Final

__all__ = ["Days", "asked_about", "spoken_of"]

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

_PATTERNS: Final = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("d m y", re.compile(rf"\b{_DAY} (?:of )?{_MONTH},? {_YEAR}\b", re.I)),
    ("m d y", re.compile(rf"\b{_MONTH} {_DAY},? {_YEAR}\b", re.I)),
    ("m y", re.compile(rf"\b{_MONTH},? {_YEAR}\b", re.I)),
    ("m d", re.compile(rf"\b{_MONTH} {_DAY}\b(?!:)", re.I)),
    ("d m", re.compile(rf"\b{_DAY} (?:of )?{_MONTH}\b", re.I)),
    ("in m", re.compile(rf"\b(?:in|during|since|of|last) {_MONTH}\b", re.I)),
    ("in y", re.compile(rf"\b(?:in|during|since) {_YEAR}\b", re.I)),
    ("before yesterday", re.compile(r"\bthe day before yesterday\b", re.I)),
    ("yesterday", re.compile(r"\byesterday\b", re.I)),
    ("today", re.compile(r"\b(?:today|tonight|this morning|this afternoon|this evening)\b", re.I)),
    ("days ago", re.compile(rf"\b{_NUM} days? ago\b", re.I)),
    ("weeks ago", re.compile(rf"\b{_NUM} weeks? ago\b", re.I)),
    ("weekday", re.compile(rf"\b(?:last|this past) {_WEEKDAY}\b", re.I)),
    ("weekend", re.compile(r"\b(?:last|this past|over the) weekend\b", re.I)),
    ("last week", re.compile(r"\blast week\b", re.I)),
    ("last month", re.compile(r"\blast month\b", re.I)),
    ("last year", re.compile(r"\blast year\b", re.I)),
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


def spoken_of(text: str, said: date) -> Days | None:
    """The days the first readable expression of time in ``text`` names, said on ``said``."""
    best: tuple[int, Days] | None = None
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue  # inside a longer expression read before ("2 May 2023" holds "May 2023")
            if _MAY.search(m.group()) and not _MAY_NAME.search(m.group()):
                continue  # "you may", "2 may be enough": the month is written May
            taken.append(m.span())
            days = _resolve(kind, m, said)
            if days is not None and (best is None or m.start() < best[0]):
                best = (m.start(), days)
    return None if best is None else best[1]


def asked_about(query: str, today: date) -> Days | None:
    """The days a question asks about ("what did Ana do in May 2023?"), or None."""
    return spoken_of(query, today)

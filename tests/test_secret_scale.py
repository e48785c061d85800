"""The secret screen reads a text in passes whose cost grows with its length, not its square.

Rule 3 looked for the clause around every secret word by searching the text
again from that word, and took every word to the clause's end; the table
rule read every line below each header-like line again. A text naming a
secret word on every line (a pasted config, a list of "password, token"
rows) took about 3 s for 20 KB and 80 s for 100 KB, in `add` and in every
capture. The work is counted here, not timed (benchmarks/trust.py times it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from memory_chain.chain.format import secrets


class _Counted:
    """A compiled pattern that counts the matches its callers take, and its searches."""

    def __init__(self, rx: Any) -> None:
        self.rx, self.taken, self.chars, self.searches, self.passes = rx, 0, 0, 0, 0

    def finditer(self, *args: Any) -> Iterator[re.Match[str]]:
        self.passes += 1
        for m in self.rx.finditer(*args):
            self.taken += 1
            self.chars += m.end() - m.start()
            yield m

    def search(self, *args: Any) -> re.Match[str] | None:
        self.searches += 1
        return self.rx.search(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rx, name)


SHAPES = {
    "assignments": "password=abc ",
    "names with colons": "token: x ",
    "a name a line": "password\n",
    "flags": "--password x ",
    "another script": "パスワード abc ",
    "a script without spaces": "パスワード",
    "one long token": ")pw",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_rule_3_reads_a_bounded_window_around_each_name(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    unit = SHAPES[shape]
    text = unit * (40_000 // len(unit))
    names = len(secrets._PROSE_NAME.findall(text))
    words = _Counted(secrets._WORD)
    ends = _Counted(secrets._CLAUSE_END)
    starts = _Counted(secrets._CLAUSE_START)
    monkeypatch.setattr(secrets, "_WORD", words)
    monkeypatch.setattr(secrets, "_CLAUSE_END", ends)
    monkeypatch.setattr(secrets, "_CLAUSE_START", starts)
    secrets._named(text, [])
    assert names > 1000, names
    # each name reads the words of its own clause, at most _REACH characters on each side,
    # never the rest of the text
    assert words.chars <= 2 * (secrets._REACH + 64) * names
    # and the clause marks are found in one pass each, not searched for from every name
    assert ends.passes <= 1 and ends.searches == 0 and starts.passes <= 1


def test_a_table_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line that names a secret column could head the lines below it; they are read
    in one pass, each once."""
    lines = ["password,abc,def"] * 3000
    calls = 0
    cells = secrets._cells

    def counted(line: str) -> list[str]:
        nonlocal calls
        calls += 1
        return cells(line)

    monkeypatch.setattr(secrets, "_cells", counted)
    secrets._tables("\n".join(lines), [])
    assert calls == len(lines)


def test_a_row_that_comes_again_is_found_where_it_is() -> None:
    """A row of a secret column that repeats an earlier row is reported at its own place
    (it was reported at the first copy's, and so not at all)."""
    text = "user,password\nalice,Zq8#mK2vLp9\nbob,Xr7$kP3wQz5\nalice,Zq8#mK2vLp9"
    spans = [(f.start, f.end) for f in secrets.scan(text)]
    last = text.rindex("Zq8#mK2vLp9")
    assert (last, last + len("Zq8#mK2vLp9")) in spans
    first = text.index("Zq8#mK2vLp9")
    assert any(a <= first < b for a, b in spans)  # the first copy too, by whichever rule


def test_a_long_text_still_finds_its_secret() -> None:
    """The windows keep what the rule saw: a secret after 40 KB of names is found, at its
    place."""
    text = "password=abc " * 3000 + "the db password is Zq8#mK2vLp9 for now"
    found = secrets.scan(text)
    at = text.index("Zq8#mK2vLp9")
    assert [(f.start, f.end) for f in found if f.start >= at - 1] == [(at, at + 11)]

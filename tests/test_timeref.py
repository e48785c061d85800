"""The time a memory speaks of (issue 25, index/timeref.py) and recall by it."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.store.ledger import Ledger
from memory_chain.index.db import Index
from memory_chain.index.query import read_times, search
from memory_chain.index.timeref import spoken_of

MONDAY = date(2023, 5, 8)

READ = [
    ("I adopted a cat last Tuesday", (date(2023, 5, 2), date(2023, 5, 2))),
    ("we met yesterday", (date(2023, 5, 7), date(2023, 5, 7))),
    ("the day before yesterday it rained", (date(2023, 5, 6), date(2023, 5, 6))),
    ("I finished it two days ago", (date(2023, 5, 6), date(2023, 5, 6))),
    ("3 days ago", (date(2023, 5, 5), date(2023, 5, 5))),
    ("went hiking last week", (date(2023, 5, 1), date(2023, 5, 7))),
    ("2 weeks ago", (date(2023, 4, 24), date(2023, 4, 30))),
    ("last weekend was fun", (date(2023, 5, 6), date(2023, 5, 7))),
    ("last month", (date(2023, 4, 1), date(2023, 4, 30))),
    ("last year", (date(2022, 1, 1), date(2022, 12, 31))),
    ("today I shipped it", (MONDAY, MONDAY)),
    ("on 2 May 2023 we moved", (date(2023, 5, 2), date(2023, 5, 2))),
    ("May 2, 2023", (date(2023, 5, 2), date(2023, 5, 2))),
    ("the 2023-04-01 deploy", (date(2023, 4, 1), date(2023, 4, 1))),
    ("March 3rd", (date(2023, 3, 3), date(2023, 3, 3))),
    ("on 20 December", (date(2022, 12, 20), date(2022, 12, 20))),  # no year: the last one
    ("back in May", (date(2023, 5, 1), date(2023, 5, 31))),
    ("in June", (date(2022, 6, 1), date(2022, 6, 30))),
    ("May 2023 was busy", (date(2023, 5, 1), date(2023, 5, 31))),
    ("since 2021", (date(2021, 1, 1), date(2021, 12, 31))),
    ("yesterday, not last week", (date(2023, 5, 7), date(2023, 5, 7))),  # the first one
]
NOT_READ = [
    "you may like it",
    "2 may be enough",
    "it is 10:30",
    "version 2.3 released",
    "I start on Friday",
    "see you next week",
    "port 5433",
    "Feb 30, 2023",
]


@pytest.mark.parametrize(("text", "days"), READ)
def test_a_time_is_read_against_the_day_it_was_said(text: str, days: tuple[date, date]) -> None:
    assert spoken_of(text, MONDAY) == days


@pytest.mark.parametrize("text", NOT_READ)
def test_what_is_not_a_time_is_not_read(text: str) -> None:
    assert spoken_of(text, MONDAY) is None


@given(
    st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)),
    st.sampled_from([t for t, _ in READ if not any(c.isdigit() for c in t)]),
)
def test_a_relative_time_is_a_range_in_the_past(said: date, text: str) -> None:
    days = spoken_of(text, said)
    assert days is not None
    first, last = days
    assert first <= last and first <= said  # "in May", said on 1 May: all of this May
    assert said - first <= timedelta(days=731)


@given(st.text(max_size=80), st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)))
def test_any_text_reads_or_not_without_error(text: str, said: date) -> None:
    days = spoken_of(text, said)
    assert days is None or days[0] <= days[1]


TURNS = [
    ("Ana: I adopted a kitten named Miso last Tuesday", "2023-05-08"),
    ("Ana: the weather was lovely, we walked by the river", "2023-05-08"),
    ("Ana: work was busy, so many meetings with the team", "2023-04-01"),
    ("Ana: I started rowing at the club near the office", "2023-06-12"),
]


@pytest.fixture
def turns(ledger: Ledger, data_dir: Path) -> Path:
    ledger.add_batch(
        [
            NewEntry(
                content=t.encode(),
                type="memory",
                tier="relationship",
                source="auto",
                meta={"date": day},
            )
            for t, day in TURNS
        ]
    )
    ledger.close()
    return data_dir


def test_the_index_keeps_the_day_said_and_the_days_spoken_of(turns: Path) -> None:
    def rows(index: Index) -> list[tuple[object, ...]]:
        return index.conn.execute(
            "SELECT seq, said, about_from, about_to FROM memories ORDER BY seq"
        ).fetchall()

    with Index.open(turns) as index:
        # a rebuild (the first open) leaves the reading to the first query that names days
        assert [r[2] for r in rows(index)] == [None] * 4
        assert read_times(index) == 1
        assert read_times(index) == 0  # all are read now
        read = rows(index)
    ledger = Ledger(turns)
    ledger.add(NewEntry(content=b"Ana: we moved house yesterday", meta={"date": "2023-07-01"}))
    ledger.close()
    with Index.open(turns) as index:  # an incremental sync reads at once
        assert rows(index)[-1] == (5, "2023-07-01", "2023-06-30", "2023-06-30")
    assert read == [
        (1, "2023-05-08", "2023-05-02", "2023-05-02"),
        (2, "2023-05-08", None, None),
        (3, "2023-04-01", None, None),
        (4, "2023-06-12", None, None),
    ]


def test_a_question_that_names_a_day_finds_what_happened_then(turns: Path) -> None:
    with Index.open(turns) as index:
        hits = search(index, "What did Ana do on May 2, 2023?", limit=2, record=False)
        assert hits[0].seq == 1  # "last Tuesday", said on 8 May
        hits = search(index, "What did Ana do in June 2023?", limit=1, record=False)
        assert hits[0].seq == 4  # said in June


def test_a_redaction_forgets_the_days_its_text_spoke_of(raw_chain: Path) -> None:
    from memory_chain.cli.main import main

    with Index.open(raw_chain) as index:
        read_times(index)
        assert index.conn.execute("SELECT about_from FROM memories WHERE seq = 1").fetchone()[0]
    with pytest.raises(SystemExit) as done:
        main(["--dir", str(raw_chain), "redact", "1", "--reason", "private"])
    assert done.value.code == 0
    with Index.open(raw_chain) as index:
        row = index.conn.execute("SELECT about_from, about_to FROM memories WHERE seq = 1")
        assert row.fetchone() == (None, None)


@pytest.fixture
def raw_chain(ledger: Ledger, data_dir: Path) -> Path:
    ledger.add(NewEntry(content=b"The incident was last Tuesday", type="memory"))
    ledger.close()
    return data_dir


TODAY = date(2026, 11, 26)


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("2023-05-08", date(2023, 5, 8)),
        ("2023-05-08T13:56:00", date(2023, 5, 8)),
        ("2023-05-08 13:56", date(2023, 5, 8)),
        ("2023/05/08", date(2023, 5, 8)),
        ("1:56 pm on 8 May, 2023", date(2023, 5, 8)),  # a conversation dataset's own form
        ("10:37 am on 27 June, 2023", date(2023, 6, 27)),
        ("May 8, 2023", date(2023, 5, 8)),
        ("Monday, May 8, 2023 1:56 PM", date(2023, 5, 8)),
        # not one day: the day of ts
        ("yesterday", TODAY),  # relative: to what?
        ("May 2023", TODAY),  # a month
        ("2023-02-30", TODAY),  # no such day
        ("2023-05-08x", TODAY),
        ("8 May", TODAY),  # no year
        ("x" * 65, TODAY),
        (20230508, TODAY),
        (None, TODAY),
    ],
)
def test_meta_date_names_the_day_said(written: object, day: date) -> None:
    from memory_chain.index.sync import said_on

    assert said_on(written, TODAY) == day


def test_a_date_written_out_is_the_day_last_tuesday_is_read_against(
    ledger: Ledger, data_dir: Path
) -> None:
    """A conversation imported with its sessions' dates as the dataset writes them."""
    ledger.add(
        NewEntry(
            content=b"Ana: I adopted a kitten named Miso last Tuesday",
            meta={"session": "1", "date": "1:56 pm on 8 May, 2023"},
        )
    )
    ledger.close()
    with Index.open(data_dir) as index:
        read_times(index)
        row = index.conn.execute("SELECT said, about_from, about_to FROM memories").fetchone()
    assert row == ("2023-05-08", "2023-05-02", "2023-05-02")

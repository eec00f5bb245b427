"""Time expressions resolved against the message time, across month, year and leap-day boundaries."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from hermes_memory.extract.temporal import as_phrase, find_temporal


def at(year: int, month: int, day: int, hour: int = 12) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def one(text: str, now: datetime) -> tuple[date, date, str, bool, str]:
    mentions = find_temporal(text, now)
    assert len(mentions) == 1, mentions
    m = mentions[0]
    return m.start.date(), m.end.date(), m.granularity, m.is_relative, m.label


@pytest.mark.parametrize(
    ("text", "now", "start", "end", "granularity"),
    [
        ("yesterday", at(2024, 3, 1), date(2024, 2, 29), date(2024, 3, 1), "day"),  # leap day
        ("yesterday", at(2023, 3, 1), date(2023, 2, 28), date(2023, 3, 1), "day"),
        ("yesterday", at(2023, 1, 1), date(2022, 12, 31), date(2023, 1, 1), "day"),
        ("tomorrow", at(2023, 12, 31), date(2024, 1, 1), date(2024, 1, 2), "day"),
        ("the day before yesterday", at(2024, 3, 1), date(2024, 2, 28), date(2024, 2, 29), "day"),
        ("last month", at(2023, 1, 15), date(2022, 12, 1), date(2023, 1, 1), "month"),
        ("next month", at(2023, 12, 15), date(2024, 1, 1), date(2024, 2, 1), "month"),
        ("this month", at(2024, 2, 10), date(2024, 2, 1), date(2024, 3, 1), "month"),
        ("last year", at(2023, 1, 1), date(2022, 1, 1), date(2023, 1, 1), "year"),
        ("two years ago", at(2023, 5, 8), date(2021, 1, 1), date(2022, 1, 1), "year"),
        ("3 days ago", at(2023, 3, 2), date(2023, 2, 27), date(2023, 2, 28), "day"),
        ("3 months ago", at(2023, 2, 10), date(2022, 11, 1), date(2022, 12, 1), "month"),
        ("a week ago", at(2023, 1, 4), date(2022, 12, 26), date(2023, 1, 2), "week"),
        ("last week", at(2023, 1, 4), date(2022, 12, 26), date(2023, 1, 2), "week"),  # Monday start
        ("last weekend", at(2023, 5, 8), date(2023, 5, 6), date(2023, 5, 8), "week"),
        ("this weekend", at(2023, 5, 10), date(2023, 5, 13), date(2023, 5, 15), "week"),
        ("this Friday", at(2023, 5, 8), date(2023, 5, 12), date(2023, 5, 13), "day"),
        ("last Friday", at(2023, 5, 8), date(2023, 5, 5), date(2023, 5, 6), "day"),
        ("last Monday", at(2023, 5, 8), date(2023, 5, 1), date(2023, 5, 2), "day"),  # today is Monday
        ("last summer", at(2023, 5, 8), date(2022, 6, 1), date(2022, 9, 1), "month"),
        ("last summer", at(2023, 7, 1), date(2022, 6, 1), date(2022, 9, 1), "month"),  # in summer now
        ("last winter", at(2023, 5, 8), date(2022, 12, 1), date(2023, 3, 1), "month"),
        ("this summer", at(2023, 5, 8), date(2023, 6, 1), date(2023, 9, 1), "month"),
    ],
)
def test_relative_expressions_resolve_across_boundaries(
    text: str, now: datetime, start: date, end: date, granularity: str,
) -> None:
    got = one(f"The plan covers {text}.", now)
    assert got[:3] == (start, end, granularity)
    assert got[3] is True


@pytest.mark.parametrize(
    ("text", "now", "label", "relative"),
    [
        ("on 8 May 2023", at(2024, 1, 1), "8 May 2023", False),
        ("on 8th of May, 2023", at(2024, 1, 1), "8 May 2023", False),
        ("on May 8, 2023", at(2024, 1, 1), "8 May 2023", False),
        ("on 2023-05-08", at(2024, 1, 1), "8 May 2023", False),
        ("in May 2023", at(2024, 1, 1), "May 2023", False),
        ("in 2022", at(2024, 1, 1), "2022", False),
        ("in the summer of 2019", at(2024, 1, 1), "summer 2019", False),
        ("on May 8", at(2023, 6, 1), "8 May 2023", True),
        ("on December 20", at(2024, 1, 5), "20 December 2023", True),  # closest year is the past one
        ("in December", at(2024, 1, 5), "December 2023", True),
        ("in May", at(2023, 5, 8), "May 2023", True),
        ("last May", at(2023, 5, 8), "May 2022", True),
        ("next May", at(2023, 5, 8), "May 2024", True),
    ],
)
def test_dates_and_months(text: str, now: datetime, label: str, relative: bool) -> None:
    got = one(f"It happened {text}.", now)
    assert got[4] == label
    assert got[3] is relative


@pytest.mark.parametrize(
    "text",
    [
        "It was on February 30, 2023.",  # no such day
        "It was in 3000.",  # out of range
        "You may come in may.",  # "may" the verb
        "We raised money from 2000 people.",
        "Nothing temporal here at all.",
        "",
    ],
)
def test_unparsable_or_absent_times_yield_no_mention(text: str) -> None:
    assert find_temporal(text, at(2023, 5, 8)) == []


def test_spans_point_into_the_text_with_offset() -> None:
    text = "We hiked last weekend and then yesterday too."
    mentions = find_temporal(text, at(2023, 5, 8), offset=100)
    assert [m.text for m in mentions] == ["last weekend", "yesterday"]
    for m in mentions:
        assert text[m.span[0] - 100:m.span[1] - 100] == m.text


def test_in_month_keeps_the_preposition_outside_the_span() -> None:
    [m] = find_temporal("I moved in May.", at(2023, 6, 1))
    assert m.text == "May"


def test_resolution_uses_utc_calendar_of_aware_times() -> None:
    from datetime import timedelta, timezone

    local = datetime(2023, 5, 8, 1, 0, tzinfo=timezone(timedelta(hours=5)))  # 7 May 20:00 UTC
    [m] = find_temporal("yesterday", local)
    assert m.start.date() == date(2023, 5, 6)
    assert m.start.tzinfo is UTC


def test_as_phrase_renders_adverbials() -> None:
    now = at(2023, 5, 8)
    phrases = [as_phrase(m) for m in find_temporal("yesterday, last week, last year, last weekend", now)]
    assert phrases == [
        "on 7 May 2023", "in the week of 1 May 2023", "in 2022", "on the weekend of 6 May 2023",
    ]

"""Cron expressions: parsing (fields, ranges, steps, lists, names, macros), Vixie's day-of-month OR
day-of-week rule, and the next fire time across hours, days, weeks, months, years and a DST change."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from hermes_memory.cron.expression import CronExpression
from hermes_memory.errors import ValidationError


def ts(text: str, tz: ZoneInfo | None = None) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=tz or UTC).timestamp()


def next_fire(expr: str, after: str) -> str | None:
    fire = CronExpression.parse(expr).next_after(ts(after), UTC)
    return None if fire is None else datetime.fromtimestamp(fire, UTC).strftime("%Y-%m-%d %H:%M %a")


def test_every_five_minutes() -> None:
    expr = CronExpression.parse("*/5 * * * *")
    assert sorted(expr.minutes) == list(range(0, 60, 5))
    assert next_fire("*/5 * * * *", "2024-01-01 12:03") == "2024-01-01 12:05 Mon"
    # strictly after: a run at a fire time does not make the same fire time due again
    assert next_fire("*/5 * * * *", "2024-01-01 12:05") == "2024-01-01 12:10 Mon"
    assert next_fire("*/5 * * * *", "2024-01-01 23:58") == "2024-01-02 00:00 Tue"


def test_daily_at_three() -> None:
    assert next_fire("0 3 * * *", "2024-01-01 02:59") == "2024-01-01 03:00 Mon"
    assert next_fire("0 3 * * *", "2024-01-01 03:00") == "2024-01-02 03:00 Tue"


def test_day_of_week_sunday_as_0_or_7_and_names() -> None:
    # 2024-01-03 is a Wednesday; the seed's graph refresh runs Sundays at 04:00
    assert next_fire("0 4 * * 0", "2024-01-03 10:00") == "2024-01-07 04:00 Sun"
    assert next_fire("0 4 * * 7", "2024-01-03 10:00") == "2024-01-07 04:00 Sun"
    assert next_fire("0 4 * * sun", "2024-01-03 10:00") == "2024-01-07 04:00 Sun"
    assert next_fire("30 9 * * mon-fri", "2024-01-05 10:00") == "2024-01-08 09:30 Mon"


def test_monthly_rolls_over_the_year() -> None:
    assert next_fire("0 2 1 * *", "2024-01-15 00:00") == "2024-02-01 02:00 Thu"
    assert next_fire("0 2 1 * *", "2024-12-01 02:00") == "2025-01-01 02:00 Wed"
    assert next_fire("@monthly", "2024-03-05 00:00") == "2024-04-01 00:00 Mon"


def test_both_day_fields_restricted_means_either() -> None:
    # Vixie cron: the 13th OR any Friday
    expr = CronExpression.parse("0 0 13 * 5")
    assert expr.matches(datetime(2024, 1, 13))  # a Saturday, but the 13th
    assert expr.matches(datetime(2024, 1, 5))  # a Friday
    assert not expr.matches(datetime(2024, 1, 6))
    assert next_fire("0 0 13 * 5", "2024-01-06 00:00") == "2024-01-12 00:00 Fri"
    # only one restricted: only that one counts
    assert not CronExpression.parse("0 0 13 * *").matches(datetime(2024, 1, 5))


def test_lists_ranges_and_stepped_ranges() -> None:
    expr = CronExpression.parse("0,15,40-45/2 8-10 * jan,jul *")
    assert sorted(expr.minutes) == [0, 15, 40, 42, 44]
    assert sorted(expr.hours) == [8, 9, 10]
    assert sorted(expr.months) == [1, 7]
    assert sorted(CronExpression.parse("5/20 * * * *").minutes) == [5, 25, 45]
    assert next_fire("0 8 * jan,jul *", "2024-01-31 09:00") == "2024-07-01 08:00 Mon"


def test_leap_day_and_impossible_dates() -> None:
    assert next_fire("0 0 29 2 *", "2025-03-01 00:00") == "2028-02-29 00:00 Tue"
    assert next_fire("0 0 31 2 *", "2024-01-01 00:00") is None


@pytest.mark.parametrize(
    ("macro", "after", "expected"),
    [
        ("@hourly", "2024-01-01 10:30", "2024-01-01 11:00 Mon"),
        ("@daily", "2024-01-01 10:30", "2024-01-02 00:00 Tue"),
        ("@weekly", "2024-01-01 10:30", "2024-01-07 00:00 Sun"),
        ("@yearly", "2024-01-01 10:30", "2025-01-01 00:00 Wed"),
    ],
)
def test_macros(macro: str, after: str, expected: str) -> None:
    assert next_fire(macro, after) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("* * * *", "4 fields"),
        ("60 * * * *", "outside 0-59"),
        ("* 24 * * *", "outside 0-23"),
        ("* * 0 * *", "outside 1-31"),
        ("*/0 * * * *", "step must be >= 1"),
        ("5-1 * * * *", "backwards"),
        ("x * * * *", "not a number"),
        ("1,,2 * * * *", "empty list item"),
        ("@every5m", "unknown cron macro"),
        ("", "non-empty"),
    ],
)
def test_malformed_expressions_are_refused(text: str, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        CronExpression.parse(text)


def test_wall_clock_of_a_zone_across_dst() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    expr = CronExpression.parse("0 3 * * *")
    # 2024-03-31: clocks jump from 02:00 to 03:00 CEST (UTC+2)
    fire = expr.next_after(ts("2024-03-30 12:00", berlin), berlin)
    assert fire is not None and fire == ts("2024-03-31 03:00", berlin)
    assert datetime.fromtimestamp(fire, UTC).hour == 1
    # 2024-10-27: back to CET (UTC+1)
    fire = expr.next_after(ts("2024-10-26 12:00", berlin), berlin)
    assert fire is not None and datetime.fromtimestamp(fire, UTC).hour == 2


def test_default_zone_is_the_local_wall_clock() -> None:
    start = datetime(2024, 6, 1, 12, 3).timestamp()  # naive: local time
    fire = CronExpression.parse("30 14 * * *").next_after(start)
    assert fire is not None
    local = datetime.fromtimestamp(fire)
    assert (local.day, local.hour, local.minute) == (1, 14, 30)

"""Calendar periods for resolved time expressions: days, weeks, months, seasons, parts and ranges.

A ``Period`` is [start, end) in dates with a granularity (the unit of its parts: "day", "week",
"month", "year") and a label that reads as an absolute date ("May 2026", "late May 2026"). A
``Direction`` says which occurrence of a cyclic expression (a month, a day of the year, a weekday,
a season) is meant: "past" the most recent one that has begun by today, "future" the first one that
has not ended by today, "nearest" the one closest to today (ties go to the past).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

Direction = Literal["past", "future", "nearest"]

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "winter": 12}
MIN_YEAR, MAX_YEAR = 1900, 2100
# Thirds of a month ("early/mid/late May") and of a year ("early/mid/late 2026"), as month-day bounds.
_PARTS = ("early", "mid", "late")


@dataclass(frozen=True, slots=True)
class Period:
    """[start, end) with the unit of its parts and an absolute label."""

    start: date
    end: date
    granularity: str
    label: str


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def day_label(d: date) -> str:
    return f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


def in_range(year: int) -> bool:
    return MIN_YEAR <= year <= MAX_YEAR


def day(d: date) -> Period:
    return Period(d, d + timedelta(days=1), "day", day_label(d))


def week(d: date) -> Period:
    monday = d - timedelta(days=d.weekday())
    return Period(monday, monday + timedelta(days=7), "week", f"the week of {day_label(monday)}")


def weekend(d: date) -> Period:
    """The weekend (Saturday and Sunday) of the Monday-started week holding ``d``."""
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return Period(saturday, saturday + timedelta(days=2), "week", f"the weekend of {day_label(saturday)}")


def month(year: int, month_: int) -> Period | None:
    if not in_range(year):
        return None
    ny, nm = add_months(year, month_, 1)
    return Period(date(year, month_, 1), date(ny, nm, 1), "month", f"{MONTH_NAMES[month_ - 1]} {year}")


def year(year_: int) -> Period | None:
    if not in_range(year_):
        return None
    return Period(date(year_, 1, 1), date(year_ + 1, 1, 1), "year", str(year_))


def season(name: str, year_: int) -> Period | None:
    """The meteorological season; winter is named by the year its December falls in."""
    if not in_range(year_):
        return None
    first = SEASON_START[name]
    ey, em = add_months(year_, first, 3)
    label = f"winter {year_}/{(year_ + 1) % 100:02d}" if name == "winter" else f"{name} {year_}"
    return Period(date(year_, first, 1), date(ey, em, 1), "month", label)


def part_of_month(part: str, whole: Period) -> Period:
    """The early (1-10), mid (11-20) or late (21-end) part of a month period."""
    first = whole.start
    bounds = {"early": (1, 11), "mid": (11, 21)}
    if part == "late":
        start, end = first.replace(day=21), whole.end
    else:
        a, b = bounds[part]
        start, end = first.replace(day=a), first.replace(day=b)
    joiner = "-" if part == "mid" else " "
    return Period(start, end, "week", f"{part}{joiner}{whole.label}")


def part_of_year(part: str, year_: int) -> Period | None:
    """The early (Jan-Apr), mid (May-Aug) or late (Sep-Dec) part of a year."""
    if not in_range(year_):
        return None
    first = 1 + 4 * _PARTS.index(part)
    ey, em = add_months(year_, first, 4)
    return Period(date(year_, first, 1), date(ey, em, 1), "month", f"{part} {year_}")


def span(first: Period, last: Period, label: str) -> Period:
    """From the start of ``first`` to the end of ``last``."""
    return Period(first.start, last.end, first.granularity, label)


# -- which occurrence of a cyclic expression ------------------------------------------------------


def _pick(candidates: list[Period], direction: Direction, today: date) -> Period | None:
    """The candidate a direction means; "past"/"future" include the period holding today."""
    if direction == "past":
        began = [p for p in candidates if p.start <= today]
        return max(began, key=lambda p: p.start) if began else None
    if direction == "future":
        open_ = [p for p in candidates if p.end > today]
        return min(open_, key=lambda p: p.start) if open_ else None
    if not candidates:
        return None

    def distance(p: Period) -> tuple[int, int]:
        if p.start <= today < p.end:
            return 0, 0
        gap = (p.start - today).days if p.start > today else (today - p.end).days + 1
        return gap, 1 if p.start > today else 0

    return min(candidates, key=distance)


def month_in(month_: int, direction: Direction, today: date) -> Period | None:
    """Which May "in May" means in a direction (the current month counts for past and future)."""
    candidates = [p for y in range(today.year - 1, today.year + 2) if (p := month(y, month_)) is not None]
    if direction == "nearest":
        # judged from the middle of the month, so "in May" said in November is the coming May only
        # when it is nearer than the last one
        mid = [(abs((p.start + timedelta(days=14) - today).days), p.start > today, p) for p in candidates]
        return min(mid, key=lambda t: (t[0], t[1]))[2] if mid else None
    return _pick(candidates, direction, today)


def date_in(month_: int, day_: int, direction: Direction, today: date) -> Period | None:
    """Which day "May 8" (no year) means; 29 February looks up to eight years either way."""
    candidates: list[Period] = []
    # Every other date has a candidate in each of the years around today.
    reach = 8 if (month_, day_) == (2, 29) else 1
    years = range(today.year - reach, today.year + reach + 1)
    for y in years:
        try:
            d = date(y, month_, day_)
        except ValueError:
            continue
        if in_range(y):
            candidates.append(day(d))
    if direction == "nearest":
        candidates = [p for p in candidates if abs(p.start.year - today.year) <= 1]
    return _pick(candidates, direction, today)


def day_of_month(day_: int, direction: Direction, today: date) -> Period | None:
    """Which day "on the 5th" means: in the current month, the one before or the one after."""
    candidates: list[Period] = []
    for delta in (-1, 0, 1):
        y, m = add_months(today.year, today.month, delta)
        try:
            candidates.append(day(date(y, m, day_)))
        except ValueError:
            continue
    return _pick(candidates, direction, today)


def weekday_date(
    weekday: int, day_: int, month_: int | None, direction: Direction, today: date
) -> Period | None:
    """Which day "Saturday the 14th" (``month_`` None) or "Friday 13 March" means: the 14th that is a
    Saturday, of the month or year the direction points to (the weekday picks the month or year the
    date alone leaves open); None when no such day is near."""
    candidates: list[Period] = []
    steps = (
        [(today.year + k, month_) for k in (-2, -1, 0, 1, 2)]
        if month_
        else [add_months(today.year, today.month, k) for k in range(-13, 14)]
    )
    for y, m in steps:
        try:
            d = date(y, m, day_)
        except ValueError:
            continue
        if d.weekday() == weekday and in_range(y):
            candidates.append(day(d))
    return _pick(candidates, direction, today)


def _seasons(name: str, today: date) -> list[Period]:
    """The seasons of that name around today, oldest first."""
    return [p for y in range(today.year - 2, today.year + 2) if (p := season(name, y)) is not None]


def season_in(name: str, direction: Direction, today: date) -> Period | None:
    """Which summer "in the summer" means in a direction."""
    if direction == "nearest":
        return this_season(name, today)
    return _pick(_seasons(name, today), direction, today)


def this_season(name: str, today: date) -> Period | None:
    """Which "this summer": the one holding today, else the coming one this year, else the latest one."""
    seasons = _seasons(name, today)
    for p in seasons:
        if p.start <= today < p.end:
            return p
    upcoming = [p for p in seasons if p.start > today and p.start.year == today.year]
    if upcoming:
        return upcoming[0]
    return last_season(name, today)


def last_season(name: str, today: date) -> Period | None:
    """Which "last summer": the latest one that has ended."""
    past = [p for p in _seasons(name, today) if p.end <= today]
    return past[-1] if past else None


def next_season(name: str, today: date) -> Period | None:
    """Which "next summer": the first one that has not begun."""
    future = [p for p in _seasons(name, today) if p.start > today]
    return future[0] if future else None


def weekday_in(index: int, direction: Direction, today: date) -> Period:
    """Which "on Friday": the latest one before today (past) or the first one after today (otherwise)."""
    if direction == "past":
        return day(today - timedelta(days=(today.weekday() - index) % 7 or 7))
    return day(today + timedelta(days=(index - today.weekday()) % 7 or 7))


# -- periods relative to today -------------------------------------------------------------------


def rolling(unit: str, today: date) -> Period | None:
    days = {"week": 7, "weekend": 7, "month": 30, "year": 365}.get(unit)
    if days is None:
        return None
    granularity = "week" if unit == "weekend" else unit
    return Period(
        today - timedelta(days=days), today + timedelta(days=1), granularity,
        f"the {unit} up to {day_label(today)}",
    )  # fmt: skip


def offset(n: int, unit: str, sign: int, today: date, *, vague: bool = False) -> Period | None:
    """``n`` ``unit``s (day, week, month, year, decade) before (sign -1) or after (sign 1) today, at the
    unit's granularity; a ``vague`` amount ("a few days") widens it to the next unit."""
    if n > 200:
        return None
    try:
        if unit == "day":
            target = today + timedelta(days=sign * n)
            return week(target) if vague else day(target)
        if unit == "week":
            target = today + timedelta(weeks=sign * n)
            return month(target.year, target.month) if vague else week(target)
        if unit == "month":
            return month(*add_months(today.year, today.month, sign * n))
        return year(today.year + sign * n * (10 if unit == "decade" else 1))
    except OverflowError:
        return None


def part_of(part: str, qualifier: str, unit: str, today: date) -> Period | None:
    """A part of a month or year around today: "the end of the month", "the beginning of next year"."""
    step = {"last": -1, "next": 1}.get(qualifier, 0)
    third = {"end": "late", "beginning": "early", "start": "early", "middle": "mid"}[part]
    if unit == "year":
        return part_of_year(third, today.year + step)
    whole = month(*add_months(today.year, today.month, step))
    return None if whole is None else part_of_month(third, whole)


def part_now(which: str, unit: str, today: date) -> Period:
    """Earlier (its start up to today) or later (today to its end) in this week, month or year."""
    if unit == "week":
        whole = week(today)
    elif unit == "month":
        whole = month(today.year, today.month) or day(today)
    else:
        whole = year(today.year) or day(today)
    name = whole.label
    granularity = "day" if unit != "year" else "month"
    if which == "earlier":
        return Period(whole.start, today + timedelta(days=1), granularity, f"earlier in {name}")
    return Period(today, whole.end, granularity, f"later in {name}")


def join(first: Period, last: Period, past: bool, cycle: int) -> Period | None:
    """A range from ``first`` to ``last``; an end that falls before the start moves ``cycle`` days
    (7 for weekdays, 365 for months and dates): the start back in the past tense, else the end on."""
    if last.start < first.start:
        if past:
            first = _shifted(first, -cycle) or first
        else:
            last = _shifted(last, cycle) or last
        if last.start < first.start:
            return None
    if first.label == last.label:
        return first
    return span(first, last, f"from {first.label} to {last.label}")


def _shifted(period: Period, days: int) -> Period | None:
    """The same weekday a week on/back (``days`` = ±7), else the same day or month a year on/back."""
    if abs(days) == 7:
        return day(period.start + timedelta(days=days))
    moved_year = period.start.year + (1 if days > 0 else -1)
    if period.granularity == "month":
        return month(moved_year, period.start.month)
    try:
        return day(period.start.replace(year=moved_year))
    except ValueError:
        return None


__all__ = [
    "MONTH_NAMES",
    "SEASON_START",
    "Direction",
    "Period",
    "add_months",
    "date_in",
    "day",
    "day_label",
    "day_of_month",
    "join",
    "month",
    "month_in",
    "offset",
    "part_now",
    "part_of",
    "part_of_month",
    "part_of_year",
    "rolling",
    "season",
    "season_in",
    "span",
    "this_season",
    "week",
    "weekday_in",
    "weekend",
    "year",
]

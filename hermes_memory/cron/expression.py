"""Five-field cron expressions (``minute hour day-of-month month day-of-week``), as Vixie cron reads them.

Supported: ``*``, numbers, ranges ``a-b``, steps ``*/n`` and ``a-b/n`` (and ``a/n``, meaning ``a-max/n``),
lists ``a,b-c``, month and weekday names (``jan``, ``mon``), Sunday as 0 or 7, and the macros
``@yearly``/``@annually``, ``@monthly``, ``@weekly``, ``@daily``/``@midnight``, ``@hourly``.
As in cron, when both day fields are restricted a day matches if EITHER matches (``0 0 1 * mon`` fires on
the 1st and on every Monday); when one of them is ``*`` only the other counts.

Times are evaluated on the wall clock of a time zone (default: the machine's local zone, like cron).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from hermes_memory.errors import ValidationError

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {name: i + 1 for i, name in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {name: i for i, name in enumerate("sun mon tue wed thu fri sat".split())}
# (name, lowest, highest, names) per field; weekday 7 is folded into 0 (Sunday) after parsing.
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day-of-month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day-of-week", 0, 7, _DAYS),
)
# Search horizon for the next fire time: "0 0 29 2 *" can wait 8 years (2096 -> 2104); a schedule with no
# fire time within this many years never fires (e.g. "0 0 31 2 *").
_HORIZON_YEARS = 9


def _number(text: str, field: str, names: dict[str, int]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names[lowered]
    if not text.isdigit():
        raise ValidationError(f"cron {field} field: {text!r} is not a number")
    return int(text)


def _parse_field(text: str, field: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        if not part:
            raise ValidationError(f"cron {field} field: empty list item in {text!r}")
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            step = _number(step_text, field, {})
            if step < 1:
                raise ValidationError(f"cron {field} field: step must be >= 1 in {part!r}")
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _number(first, field, names), _number(last, field, names)
        else:
            start = _number(base, field, names)
            end = high if step_text else start  # "5/15" means 5-max/15, as in Vixie cron
        for value in (start, end):
            if not low <= value <= high:
                raise ValidationError(f"cron {field} field: {value} is outside {low}-{high} in {part!r}")
        if start > end:
            raise ValidationError(f"cron {field} field: range {part!r} runs backwards")
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class CronExpression:
    """A parsed schedule. ``CronExpression.parse("*/5 * * * *")``; raises ValidationError when malformed."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday ... 6 = Saturday
    days_restricted: bool
    weekdays_restricted: bool

    @classmethod
    def parse(cls, text: str) -> CronExpression:
        """Parse a 5-field expression or macro. Raises ValidationError naming the bad field."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError(f"a cron expression must be a non-empty string, got {text!r}")
        source = text.strip()
        expanded = _MACROS.get(source.lower(), source)
        if expanded.startswith("@"):
            raise ValidationError(f"unknown cron macro {source!r}; known: {', '.join(sorted(_MACROS))}")
        parts = expanded.split()
        if len(parts) != 5:
            raise ValidationError(
                f"cron expression {source!r} has {len(parts)} fields; expected 5 "
                "(minute hour day-of-month month day-of-week)"
            )
        sets = [
            _parse_field(part, name, low, high, names)
            for part, (name, low, high, names) in zip(parts, _FIELDS, strict=True)
        ]
        weekdays = frozenset(d % 7 for d in sets[4])
        return cls(
            text=source,
            minutes=sets[0],
            hours=sets[1],
            days=sets[2],
            months=sets[3],
            weekdays=weekdays,
            days_restricted=not parts[2].startswith("*"),
            weekdays_restricted=not parts[4].startswith("*"),
        )

    def _day_matches(self, day: dt.date) -> bool:
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays  # Python: Monday = 0; cron: Sunday = 0
        if self.days_restricted and self.weekdays_restricted:
            return in_month or in_week
        if self.days_restricted:
            return in_month
        if self.weekdays_restricted:
            return in_week
        return True

    def matches(self, when: dt.datetime) -> bool:
        """Whether the schedule fires in the minute of ``when`` (a wall-clock datetime)."""
        return (
            when.minute in self.minutes
            and when.hour in self.hours
            and when.month in self.months
            and self._day_matches(when.date())
        )

    def next_after(self, timestamp: float, tz: dt.tzinfo | None = None) -> float | None:
        """The first fire time strictly after ``timestamp`` (Unix seconds), or None if it never fires.

        ``tz`` is the zone whose wall clock the fields describe (None: the machine's local zone).
        """
        # Naive datetimes from fromtimestamp() without a zone are local wall time, and .timestamp() maps
        # them back through the platform's DST-aware local zone.
        if tz is None:
            start = dt.datetime.fromtimestamp(timestamp)
        else:
            start = dt.datetime.fromtimestamp(timestamp, tz).replace(tzinfo=None)
        # Candidates are whole minutes after `start`; work on the naive wall clock, convert at the end.
        current = start.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        limit = current.replace(year=current.year + _HORIZON_YEARS, month=1, day=1, hour=0, minute=0)
        minutes, hours = sorted(self.minutes), sorted(self.hours)
        while current < limit:
            if current.month not in self.months:
                year, month = divmod(current.month, 12)  # first day of the next month
                current = dt.datetime(current.year + year, month + 1, 1)
                continue
            if not self._day_matches(current.date()):
                current = dt.datetime(current.year, current.month, current.day) + dt.timedelta(days=1)
                continue
            hour = next((h for h in hours if h >= current.hour), None)
            if hour is None:
                current = dt.datetime(current.year, current.month, current.day) + dt.timedelta(days=1)
                continue
            if hour != current.hour:
                current = current.replace(hour=hour, minute=0)
            minute = next((m for m in minutes if m >= current.minute), None)
            if minute is None:
                current = current.replace(minute=0) + dt.timedelta(hours=1)
                continue
            wall = current.replace(minute=minute)
            fire = (wall if tz is None else wall.replace(tzinfo=tz)).timestamp()
            if fire > timestamp:
                return fire
            # A wall-clock minute repeated by a DST change can map to a time already passed.
            current = current.replace(minute=minute) + dt.timedelta(minutes=1)
        return None

    def __str__(self) -> str:
        return self.text


__all__ = ["CronExpression"]

"""Find time expressions and resolve them against the message time.

Resolution uses the UTC calendar of the message time (the speaker's time zone is unknown). Weeks
start on Monday; seasons are northern-hemisphere meteorological (spring = Mar-May, summer =
Jun-Aug, fall = Sep-Nov, winter = Dec-Feb, named by the year its December falls in). Year-less
dates ("May 8", "in May") take the year that puts them closest to the message time, ties going
to the past. Anything that cannot be resolved (31 February, year 3000) yields no mention.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, timedelta

from hermes_memory.extract.types import Span, TemporalMention

_MONTH_NAMES = (
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
_MONTHS: dict[str, int] = {name.lower(): i + 1 for i, name in enumerate(_MONTH_NAMES)}
_MONTHS.update({name.lower()[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)})
_MONTHS["sept"] = 9
# Month words that are also common English words: only a capitalised form counts as a month.
_NEEDS_CAPITAL = frozenset({"may", "march", "august", *(n.lower()[:3] for n in _MONTH_NAMES)})
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_NUMBERS = {
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
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
    "a few": 3,
    "few": 3,
}
_MIN_YEAR, _MAX_YEAR = 1900, 2100
# Every expression the pattern knows contains a digit or one of these substrings.
_CUES = re.compile(
    r"\d|yesterday|today|tonight|tomorrow|last|this|next|past|coming|ago|jan|feb|mar|apr|may|jun|jul|aug"
    r"|sep|oct|nov|dec|spring|summer|fall|autumn|winter"
)
# Words an expression can start with; the full pattern is only tried at word starts beginning so.
_STARTS = (
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
    "spring",
    "summer",
    "fall",
    "autumn",
    "winter",
    "last",
    "this",
    "next",
    "in",
    "during",
    "since",
    "until",
    "till",
    "by",
    "early",
    "late",
    "mid",
    "the",
    "end",
    "beginning",
    "start",
    "middle",
    "from",
    "around",
    "before",
    "after",
    "circa",
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "past",
    "coming",
    "a",
    "an",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "fifteen",
    "twenty",
    "thirty",
    "couple",
    "few",
    "about",
    "around",
    "roughly",
    "nearly",
    "almost",
    "over",
    "just",
    "like",
)
_WORD_START = re.compile(r"\b\w")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_MONTH_RE = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_NUM_RE = (
    r"(?:\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|an?|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
)
_UNIT_RE = r"(?:week|weekend|month|year|summer|winter|spring|fall|autumn|" + "|".join(_WEEKDAYS) + ")"


@functools.cache
def _pattern() -> re.Pattern[str]:
    # Alternatives are ordered longest-first; every quantifier is bounded, so no backtracking blow-up.
    m = _MONTH_RE
    return re.compile(
        rf"""
        (?P<iso>\b(?P<iso_y>\d{{4}})-(?P<iso_m>\d{{1,2}})-(?P<iso_d>\d{{1,2}})\b)
      | (?P<slash>\b(?P<sl_a>\d{{1,2}})/(?P<sl_b>\d{{1,2}})/(?P<sl_y>\d{{4}})\b)
      | (?P<dmy>\b(?P<dmy_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dmy_m>{m})\b\.?
                (?:,?\s+(?P<dmy_y>\d{{4}})\b)?)
      | (?P<mdy>\b(?P<mdy_m>{m})\b\.?\s+(?P<mdy_d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<mdy_y>\d{{4}})\b)?)
      | (?P<monyear>\b(?P<my_m>{m})\b\.?,?\s+(?:of\s+)?(?P<my_y>\d{{4}})\b)
      | (?P<seasonyear>\b(?P<sy_s>summer|winter|spring|fall|autumn)\s+(?:of\s+)?(?P<sy_y>\d{{4}})\b)
      | (?P<relmon>\b(?P<rm_q>last|this|next|in|during|since|until|till|by|early|late|mid|
                     (?:the\s+)?(?:end|beginning|start|middle)\s+of)(?:\s+|-)(?P<rm_m>{m})\b(?!\.?,?\s*\d))
      | (?P<year>\b(?P<yr_q>in|since|from|until|till|by|during|around|before|after|circa)\s+
                 (?P<yr_y>(?:19|20)\d{{2}})\b(?!\s*(?:%|\$|dollars|people|miles|km|feet)))
      | (?P<dayword>\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today
                   |tonight|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))\b)
      | (?P<relp>\b(?P<rp_q>this\s+past|the\s+past|the\s+coming|last|this|next|past|coming)\s+
                 (?P<rp_u>{_UNIT_RE})\b)
      | (?P<ago>\b(?:(?:about|around|roughly|nearly|almost|over|just|like)\s+)?
               (?P<ago_n>{_NUM_RE})\s+(?P<ago_u>day|week|month|year|decade)s?\s+ago\b)
        """,
        re.VERBOSE,  # matched against ASCII-lower-cased text: case-insensitive patterns are much slower
    )


# -- calendar helpers -------------------------------------------------------------------------------


def _dt(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _day_label(d: date) -> str:
    return f"{d.day} {_MONTH_NAMES[d.month - 1]} {d.year}"


def _closest_year(now: date, month: int, day: int = 1) -> int | None:
    """The year (now.year - 1 .. + 1) putting month/day closest to now; ties go to the past."""
    best: tuple[int, int] | None = None
    for year in (now.year - 1, now.year, now.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        distance = abs((candidate - now).days) * 2 + (1 if candidate > now else 0)
        if best is None or distance < best[0]:
            best = (distance, year)
    return None if best is None else best[1]


# A resolved period: start date, end date (exclusive), granularity, label.
_Period = tuple[date, date, str, str]


def _day(d: date) -> _Period:
    return d, d + timedelta(days=1), "day", _day_label(d)


def _week(d: date) -> _Period:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=7), "week", f"the week of {_day_label(monday)}"


def _weekend(monday: date) -> _Period:
    saturday = monday + timedelta(days=5)
    return saturday, saturday + timedelta(days=2), "week", f"the weekend of {_day_label(saturday)}"


def _month(year: int, month: int) -> _Period | None:
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    ny, nm = _add_months(year, month, 1)
    return date(year, month, 1), date(ny, nm, 1), "month", f"{_MONTH_NAMES[month - 1]} {year}"


def _year(year: int) -> _Period | None:
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    return date(year, 1, 1), date(year + 1, 1, 1), "year", str(year)


def _season(name: str, year: int) -> _Period | None:
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    first = _SEASON_START[name]
    start = date(year, first, 1)
    ey, em = _add_months(year, first, 3)
    label = f"winter {year}/{(year + 1) % 100:02d}" if name == "winter" else f"{name} {year}"
    return start, date(ey, em, 1), "month", label


def _season_relative(name: str, qualifier: str, today: date) -> _Period | None:
    # Candidate seasons around today; pick by qualifier.
    seasons = [p for y in range(today.year - 2, today.year + 2) if (p := _season(name, y)) is not None]
    if qualifier == "last":
        past = [p for p in seasons if p[1] <= today]
        return past[-1] if past else None
    if qualifier == "next":
        future = [p for p in seasons if p[0] > today]
        return future[0] if future else None
    # "this summer": the one containing today, else the next one this year, else the latest.
    for p in seasons:
        if p[0] <= today < p[1]:
            return p
    upcoming = [p for p in seasons if p[0] > today and p[0].year == today.year]
    if upcoming:
        return upcoming[0]
    past = [p for p in seasons if p[1] <= today]
    return past[-1] if past else None


def _weekday(index: int, qualifier: str, today: date) -> _Period:
    if qualifier == "last":
        delta = (today.weekday() - index) % 7 or 7
        return _day(today - timedelta(days=delta))
    if qualifier == "next":
        delta = (index - today.weekday()) % 7 or 7
        return _day(today + timedelta(days=delta))
    return _day(today - timedelta(days=today.weekday()) + timedelta(days=index))


def _number(text: str) -> int | None:
    key = " ".join(text.lower().split())
    if key.isdigit():
        return int(key)
    return _NUMBERS.get(key)


# -- resolution per alternative -------------------------------------------------------------------


def _resolve_relp(qualifier: str, unit: str, today: date) -> _Period | None:
    q = " ".join(qualifier.lower().split())
    if q in ("the past", "past"):
        return _rolling(unit, today)
    q = {"this past": "last", "coming": "next", "the coming": "next"}.get(q, q)
    step = {"last": -1, "this": 0, "next": 1}[q]
    if unit == "week":
        return _week(today + timedelta(days=7 * step))
    if unit == "weekend":
        return _weekend(today - timedelta(days=today.weekday()) + timedelta(days=7 * step))
    if unit == "month":
        return _month(*_add_months(today.year, today.month, step))
    if unit == "year":
        return _year(today.year + step)
    if unit in _SEASON_START:
        return _season_relative(unit, q, today)
    return _weekday(_WEEKDAYS.index(unit), q, today)


def _rolling(unit: str, today: date) -> _Period | None:
    days = {"week": 7, "weekend": 7, "month": 30, "year": 365}.get(unit)
    if days is None:
        return None
    granularity = "week" if unit == "weekend" else unit
    return (
        today - timedelta(days=days),
        today + timedelta(days=1),
        granularity,
        f"the {unit} up to {_day_label(today)}",
    )


def _resolve_ago(amount: str, unit: str, today: date) -> _Period | None:
    n = _number(amount)
    if n is None or n > 200:
        return None
    vague = "few" in amount.lower()
    unit = unit.lower()
    try:
        if unit == "day":
            target = today - timedelta(days=n)
            return _week(target) if vague else _day(target)
        if unit == "week":
            target = today - timedelta(weeks=n)
            return _month(target.year, target.month) if vague else _week(target)
        if unit == "month":
            return _month(*_add_months(today.year, today.month, -n))
        return _year(today.year - n * (10 if unit == "decade" else 1))
    except OverflowError:
        return None


def _resolve_month(qualifier: str, month: int, today: date) -> _Period | None:
    q = qualifier.lower()
    if q == "last":
        year = today.year if month < today.month else today.year - 1
    elif q == "next":
        year = today.year if month > today.month else today.year + 1
    elif q == "this":
        year = today.year
    else:
        found = _closest_year(today, month, 15)
        if found is None:
            return None
        year = found
    return _month(year, month)


def _resolve_date(year: int | None, month: int, day: int, today: date) -> tuple[_Period, bool] | None:
    if year is None:
        year = _closest_year(today, month, day)
        if year is None:
            return None
        relative = True
    else:
        relative = False
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    try:
        return _day(date(year, month, day)), relative
    except ValueError:
        return None


def _month_of(word: str) -> int | None:
    key = word.rstrip(".").lower()
    if key in _NEEDS_CAPITAL and not word[:1].isupper():
        return None
    return _MONTHS.get(key)


def _resolve(match: re.Match[str], text: str, today: date) -> tuple[_Period, bool, Span] | None:
    """(period, is_relative, span within the sentence) for one match, or None if unresolvable.

    ``match`` ran on the lower-cased text; month words are read from the original ``text`` because
    "May" the month and "may" the verb differ only in case.
    """
    kind = match.lastgroup
    span = match.span()

    def g(name: str) -> str:
        s, e = match.span(name)
        return text[s:e] if s >= 0 else ""

    found: tuple[_Period, bool] | None = None
    period: _Period | None = None
    month: int | None
    if kind == "iso":
        if 1 <= int(g("iso_m")) <= 12:
            found = _resolve_date(int(g("iso_y")), int(g("iso_m")), int(g("iso_d")), today)
    elif kind == "slash":
        a, b = int(g("sl_a")), int(g("sl_b"))
        m, d = (b, a) if a > 12 else (a, b)  # US order unless the first part cannot be a month
        found = _resolve_date(int(g("sl_y")), m, d, today) if 1 <= m <= 12 else None
    elif kind in ("dmy", "mdy"):
        month = _month_of(g(f"{kind}_m"))
        year = g(f"{kind}_y")
        if month is not None:
            found = _resolve_date(int(year) if year else None, month, int(g(f"{kind}_d")), today)
    elif kind == "monyear":
        month = _month_of(g("my_m"))
        period = None if month is None else _month(int(g("my_y")), month)
        return None if period is None else (period, False, span)
    elif kind == "seasonyear":
        period = _season(g("sy_s").lower().replace("autumn", "fall"), int(g("sy_y")))
        return None if period is None else (period, False, span)
    elif kind == "relmon":
        month = _month_of(g("rm_m"))
        qualifier = " ".join(g("rm_q").lower().split())
        if month is None:
            return None
        if qualifier not in ("last", "this", "next"):
            span = match.span("rm_m")  # "in May": the preposition stays outside the mention
        period = _resolve_month(qualifier, month, today)
        return None if period is None else (period, True, span)
    elif kind == "year":
        period = _year(int(g("yr_y")))
        return None if period is None else (period, False, match.span("yr_y"))
    elif kind == "dayword":
        word = " ".join(g("dayword").lower().split())
        offset = {
            "yesterday": -1,
            "last night": -1,
            "tomorrow": 1,
            "the day before yesterday": -2,
            "the day after tomorrow": 2,
        }.get(word, 0)
        return _day(today + timedelta(days=offset)), True, span
    elif kind == "relp":
        unit = g("rp_u").lower().replace("autumn", "fall")
        period = _resolve_relp(g("rp_q"), unit, today)
        return None if period is None else (period, True, span)
    elif kind == "ago":
        period = _resolve_ago(g("ago_n"), g("ago_u"), today)
        return None if period is None else (period, True, span)
    else:
        return None
    if found is None:
        return None
    return found[0], found[1], span


def find_temporal(text: str, now: datetime, offset: int = 0) -> list[TemporalMention]:
    """Time expressions in ``text`` resolved against ``now`` (aware); spans are shifted by ``offset``.

    Never raises on odd text: an expression that cannot be resolved is simply left out.
    """
    low = text.translate(_ASCII_LOWER)  # same length, so spans carry over
    if _CUES.search(low) is None:
        return []  # cheap test first: most sentences carry no time at all
    today = now.astimezone(UTC).date()
    mentions: list[TemporalMention] = []
    pattern = _pattern()
    consumed = 0
    for word in _WORD_START.finditer(low):
        pos = word.start()
        if pos < consumed or not low.startswith(_STARTS, pos):
            continue
        match = pattern.match(low, pos)
        if match is None:
            continue
        consumed = match.end()
        resolved = _resolve(match, text, today)
        if resolved is None:
            continue
        (start, end, granularity, label), relative, (s, e) = resolved
        mentions.append(
            TemporalMention(
                text=text[s:e],
                start=_dt(start),
                end=_dt(end),
                granularity=granularity,
                is_relative=relative,
                span=(s + offset, e + offset),
                label=label,
            )
        )
    return mentions


def as_phrase(mention: TemporalMention) -> str:
    """The mention as an adverbial phrase for a fact: "on 8 May 2023", "in May 2023", "in 2022"."""
    if mention.granularity == "day" or mention.label.startswith("the weekend"):
        return f"on {mention.label}"
    return f"in {mention.label}"


__all__ = ["as_phrase", "find_temporal"]

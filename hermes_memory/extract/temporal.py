"""Find time expressions and resolve them against the message time and the tense they are said in.

Resolution uses the UTC calendar of the message time (the speaker's time zone is unknown). Weeks
start on Monday; seasons are northern-hemisphere meteorological (spring = Mar-May, summer =
Jun-Aug, fall = Sep-Nov, winter = Dec-Feb, named by the year its December falls in).

Cyclic expressions without a year ("in May", "May 8", "on Friday", "in the summer") are resolved
by the tense of their clause (``tense.clause_tense``):
- past tense: the most recent one; the current month or season counts ("I moved here in May" said
  in May is this May, "on May 8" said on May 8 is today), but a weekday is before today;
- future tense: the coming one, again counting the current month or season;
- present tense: the closest month or season (ties go to the past), but the coming day, weekday or
  range ("The exam is on May 3" schedules it).
A day named after "for" is the nearest one whatever the tense: the day something is booked or planned for
("I booked flights for the 3rd of June"), not when that was told. A weekday with a day of the month
("Saturday the 14th", "Friday 13 March") is the day of that number that falls on that weekday, in the
month or year the tense points to; "the 20th of June next year" is in next year.
"last"/"next"/"this" decide by themselves: "last May" is the latest May before this month, "next
May" the first after it, "next Friday" the Friday of next week, "this coming Friday" the next
Friday, "last Friday" the latest Friday before today, "this weekend" in the past tense before
Saturday the one just gone. "in two weeks" is an offset into the future unless the clause is past
("I did it in two weeks" is a duration, not a date). "Over the weekend" is the weekend just gone in
the past tense, or when said without a tense early in the week (Monday to Wednesday: "Anything fun
over the weekend?", but not "Any plans for the weekend?"); otherwise the current or coming one.
Ranges ("from May to July", "May 3-5", "between Monday and Wednesday") are one mention from the
start of the first to the end of the last; an end before the start moves a year (a week for
weekdays). Anything that cannot be resolved (31 February, year 3000) yields no mention.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from hermes_memory.extract import periods as P
from hermes_memory.extract.periods import Direction, Period
from hermes_memory.extract.temporal_pattern import (
    ASCII_LOWER,
    BARE_HOLIDAYS,
    CUES,
    HOLIDAY_CUE,
    HOLIDAYS,
    ITEM_PARTS,
    MONTHS,
    NEEDS_CAPITAL,
    NUMBERS,
    PART_OF_DAY,
    STARTS,
    WEEKDAYS,
    WORD_START,
    expressions,
)
from hermes_memory.extract.tense import Tense, clause_tense
from hermes_memory.extract.types import Span, TemporalMention

# -- small readers ---------------------------------------------------------------------------------


_DIRECTION: dict[Tense, Direction] = {"past": "past", "future": "future", "present": "nearest"}


def _direction(tense: Tense) -> Direction:
    return _DIRECTION[tense]


def _day_direction(tense: Tense) -> Direction:
    """A day or a range in the present tense is a scheduled one: "The exam is on May 3" is the coming one."""
    return "past" if tense == "past" else "future"


def _number(text: str) -> int | None:
    key = " ".join(text.lower().split())
    if key.isdigit():
        return int(key)
    return NUMBERS.get(key)


def _offset(amount: str, unit: str, sign: int, today: date) -> Period | None:
    n = _number(amount)
    return None if n is None else P.offset(n, unit.lower(), sign, today, vague="few" in amount.lower())


def _month_of(word: str) -> int | None:
    key = word.rstrip(".").lower()
    if key in NEEDS_CAPITAL and not word[:1].isupper():
        return None
    return MONTHS.get(key)


def _explicit_date(year: int, month: int, day: int) -> Period | None:
    if not P.in_range(year) or not 1 <= month <= 12:
        return None
    try:
        return P.day(date(year, month, day))
    except ValueError:
        return None


def _date(year: str, month: int | None, day: int, direction: Direction, today: date) -> Period | None:
    if month is None:
        return None
    if year:
        return _explicit_date(int(year), month, day)
    return P.date_in(month, day, direction, today)


# -- resolution of the relative alternatives ------------------------------------------------------


def _resolve_relp(qualifier: str, unit: str, tense: Tense, today: date) -> Period | None:
    q = " ".join(qualifier.lower().split())
    if q in ("the past", "past"):
        return P.rolling(unit, today)
    if q in ("this coming", "coming", "the coming") and unit in WEEKDAYS:
        return P.weekday_in(WEEKDAYS.index(unit), "future", today)  # "this coming Friday": the next one
    q = {"this past": "last", "coming": "next", "the coming": "next", "this coming": "next"}.get(q, q)
    step = {"last": -1, "this": 0, "next": 1}[q]
    if unit == "week":
        return P.week(today + timedelta(days=7 * step))
    if unit == "weekend":
        if q == "this" and tense == "past" and today.weekday() < 5:
            step = -1  # "I went hiking this weekend", said on a Wednesday: the one just gone
        return P.weekend(today + timedelta(days=7 * step))
    if unit == "month":
        return P.month(*P.add_months(today.year, today.month, step))
    if unit == "year":
        return P.year(today.year + step)
    if unit in P.SEASON_START:
        if q == "last":
            return P.last_season(unit, today)
        if q == "next":
            return P.next_season(unit, today)
        return P.season_in(unit, "future", today) if tense == "future" else P.this_season(unit, today)
    index = WEEKDAYS.index(unit)
    if q == "last":
        return P.weekday_in(index, "past", today)
    if q == "next":
        return P.day(today - timedelta(days=today.weekday()) + timedelta(days=7 + index))
    # "this Friday": the one of this week, unless the tense points across today
    this = today - timedelta(days=today.weekday()) + timedelta(days=index)
    if tense == "future" and this < today:
        this += timedelta(days=7)
    elif tense == "past" and this > today:
        this -= timedelta(days=7)
    return P.day(this)


def _resolve_month(qualifier: str, month: int, tense: Tense, today: date) -> Period | None:
    q = " ".join(qualifier.lower().split())
    if q == "last":
        return P.month(today.year if month < today.month else today.year - 1, month)
    if q == "next":
        return P.month(today.year if month > today.month else today.year + 1, month)
    if q == "this":
        return P.month(today.year, month)
    whole = P.month_in(month, "past" if q == "since" else _direction(tense), today)
    if whole is None:
        return None
    part = {"early": "early", "beginning of": "early", "start of": "early", "mid": "mid", "middle of": "mid",
            "late": "late", "end of": "late"}.get(q.removeprefix("the "))  # fmt: skip
    return P.part_of_month(part, whole) if part else whole


def _resolve_item(item: str, text_item: str, direction: Direction, today: date) -> Period | None:
    """One end of a range; ``item`` is lower-cased, ``text_item`` the original words."""
    parts = ITEM_PARTS.match(item)
    if parts is None:
        return None

    def original(name: str) -> str:
        s, e = parts.span(name)
        return text_item[s:e] if s >= 0 else ""

    year = parts.group("y") or ""
    if parts.group("yo"):
        return P.year(int(parts.group("yo")))
    if parts.group("wd"):
        return P.weekday_in(WEEKDAYS.index(parts.group("wd")), direction, today)
    if parts.group("d1"):
        return _date(year, _month_of(original("m1")), int(parts.group("d1")), direction, today)
    month = _month_of(original("m2"))
    if month is None:
        return None
    if parts.group("d2"):
        return _date(year, month, int(parts.group("d2")), direction, today)
    return P.month(int(year), month) if year else P.month_in(month, direction, today)


# -- one match -------------------------------------------------------------------------------------

# (period, is_relative, span within the sentence) of one match
_Resolved = tuple[Period, bool, Span]


class _Match:
    """One pattern match with the original text (month words need their case) and a lazy tense."""

    def __init__(self, match: re.Match[str], text: str, tense_of: Callable[[], Tense]):
        self.match = match
        self.text = text
        self._tense_of = tense_of
        self._tense: Tense | None = None

    def g(self, name: str) -> str:
        s, e = self.match.span(name)
        return self.text[s:e] if s >= 0 else ""

    def low(self, name: str) -> str:
        return " ".join(self.g(name).lower().split())

    @property
    def tense(self) -> Tense:
        if self._tense is None:
            self._tense = self._tense_of()
        return self._tense


def _r_dayrange(m: _Match, today: date) -> _Resolved | None:
    month = _month_of(m.g("dr_m1") or m.g("dr_m2"))
    if month is None or (m.g("dr_m1") and m.g("dr_m2")):
        return None
    a, b = int(m.g("dr_a") or m.g("dr_a2")), int(m.g("dr_b"))
    if b <= a:
        return None
    year = m.g("dr_y")
    first = _date(year, month, a, _day_direction(m.tense), today)
    if first is None:
        return None
    last = _explicit_date(first.start.year, month, b)
    if last is None:
        return None
    label = f"from {first.label} to {last.label}"
    return Period(first.start, last.end, "day", label), not year, m.match.span()


def _r_range(m: _Match, today: date) -> _Resolved | None:
    direction = _day_direction(m.tense)
    a_low, b_low = m.low("rg_a"), m.low("rg_b")
    first = _resolve_item(a_low, " ".join(m.g("rg_a").split()), direction, today)
    last = _resolve_item(b_low, " ".join(m.g("rg_b").split()), direction, today)
    if first is None or last is None:
        return None
    weekdays = any(a_low.startswith(w) for w in WEEKDAYS)
    joined = P.join(first, last, m.tense == "past", 7 if weekdays else 365)
    relative = not re.search(r"\d{4}", a_low + " " + b_low)
    return None if joined is None else (joined, relative, m.match.span())


def _r_iso(m: _Match, today: date) -> _Resolved | None:
    found = _explicit_date(int(m.g("iso_y")), int(m.g("iso_m")), int(m.g("iso_d")))
    return None if found is None else (found, False, m.match.span())


def _r_slash(m: _Match, today: date) -> _Resolved | None:
    a, b = int(m.g("sl_a")), int(m.g("sl_b"))
    month, day = (b, a) if a > 12 else (a, b)  # US order unless the first part cannot be a month
    found = _explicit_date(int(m.g("sl_y")), month, day)
    return None if found is None else (found, False, m.match.span())


def _r_dmy(m: _Match, today: date) -> _Resolved | None:
    return _day_month(m, "dmy", today)


def _r_mdy(m: _Match, today: date) -> _Resolved | None:
    return _day_month(m, "mdy", today)


def _day_month(m: _Match, kind: str, today: date) -> _Resolved | None:
    month = _month_of(m.g(f"{kind}_m"))
    if month is None:
        return None
    year = m.g(f"{kind}_y")
    if m.low(f"{kind}_q"):  # "the 20th of June next year"
        year = str(today.year + {"last": -1, "this": 0, "next": 1}[m.low(f"{kind}_q")])
    found = _date(year, month, int(m.g(f"{kind}_d")), "nearest" if year else _arranged(m, today), today)
    return None if found is None else (found, not m.g(f"{kind}_y"), m.match.span())


def _arranged(m: _Match, today: date) -> Direction:
    """The direction of a day named without a year: the tense's, but the nearest one after "for", whatever
    the tense: the day something was booked or planned for ("I booked flights for the 3rd of June" may be a
    day to come), not when the booking was told."""
    before = m.text[max(0, m.match.start() - 12) : m.match.start()].lower().split()
    if before and before[-1] == "the":
        before.pop()
    return "nearest" if before and before[-1] == "for" else _day_direction(m.tense)


def _r_wdord(m: _Match, today: date) -> _Resolved | None:
    """ "Saturday the 14th", "Friday 13 March": the day of that number that falls on that weekday."""
    number = m.g("wo_a") or m.g("wo_b") or m.g("wo_c")
    named = m.g("wo_m") or m.g("wo_m2")
    month = _month_of(named) if named else None
    if named and month is None:
        return None
    if m.g("wo_y") and month is not None:  # "Saturday the 14th of March 2027": the date says it all
        found = _explicit_date(int(m.g("wo_y")), month, int(number))
        return None if found is None else (found, False, (m.match.start("wo_d"), m.match.end()))
    weekday = WEEKDAYS.index(m.low("wo_d"))
    direction = _arranged(m, today)
    found = P.weekday_date(weekday, int(number), month, direction, today)
    if found is None:  # no such day near: the date as said
        found = (
            _date("", month, int(number), direction, today)
            if month
            else P.day_of_month(int(number), direction, today)
        )
    return None if found is None else (found, True, (m.match.start("wo_d"), m.match.end()))


def _r_monyear(m: _Match, today: date) -> _Resolved | None:
    month = _month_of(m.g("my_m"))
    found = None if month is None else P.month(int(m.g("my_y")), month)
    return None if found is None else (found, False, m.match.span())


def _r_seasonyear(m: _Match, today: date) -> _Resolved | None:
    found = P.season(m.low("sy_s").replace("autumn", "fall"), int(m.g("sy_y")))
    return None if found is None else (found, False, m.match.span())


def _r_partyear(m: _Match, today: date) -> _Resolved | None:
    found = P.part_of_year(m.low("py_p"), int(m.g("py_y")))
    return None if found is None else (found, False, m.match.span())


def _r_relmon(m: _Match, today: date) -> _Resolved | None:
    month = _month_of(m.g("rm_m"))
    qualifier = m.low("rm_q")
    if month is None:
        return None
    span = m.match.span()
    if qualifier in ("in", "during", "since", "until", "till", "by"):
        span = m.match.span("rm_m")  # "in May": the preposition stays outside the mention
    found = _resolve_month(qualifier, month, m.tense, today)
    return None if found is None else (found, True, span)


def _r_year(m: _Match, today: date) -> _Resolved | None:
    found = P.year(int(m.g("yr_y")))
    return None if found is None else (found, False, m.match.span("yr_y"))


def _r_partof(m: _Match, today: date) -> _Resolved | None:
    found = P.part_of(m.low("po_p"), m.low("po_q"), m.low("po_u"), today)
    return None if found is None else (found, True, m.match.span())


def _r_partnow(m: _Match, today: date) -> _Resolved | None:
    return P.part_now(m.low("pn_q"), m.low("pn_u"), today), True, m.match.span()


def _r_dayword(m: _Match, today: date) -> _Resolved | None:
    offset = {"yesterday": -1, "last night": -1, "tomorrow": 1, "the day before yesterday": -2,
              "the day after tomorrow": 2}.get(m.low("dayword"), 0)  # fmt: skip
    return P.day(today + timedelta(days=offset)), True, m.match.span()


def _r_relp(m: _Match, today: date) -> _Resolved | None:
    found = _resolve_relp(m.g("rp_q"), m.low("rp_u").replace("autumn", "fall"), m.tense, today)
    return None if found is None else (found, True, m.match.span())


def _r_theweekend(m: _Match, today: date) -> _Resolved | None:
    # past: the latest weekend that has begun; otherwise this one if it is on, else the coming one
    # a question with no tense ("Anything fun over the weekend?") early in the week asks about the last one
    asked_early = m.tense == "present" and today.weekday() < 3 and not m.low("theweekend").startswith("for")
    if today.weekday() < 5 and (m.tense == "past" or asked_early):
        return P.weekend(today - timedelta(days=7)), True, m.match.span()
    return P.weekend(today), True, m.match.span()


def _r_seasonin(m: _Match, today: date) -> _Resolved | None:
    direction = "past" if m.low("si_q") == "since" else _direction(m.tense)
    found = P.season_in(m.low("si_s").replace("autumn", "fall"), direction, today)
    words = m.text[m.match.end("si_q") : m.match.end()]
    span = (m.match.end() - len(words.lstrip()), m.match.end())  # "the summer": the preposition stays out
    return None if found is None else (found, True, span)


def _r_weekday(m: _Match, today: date) -> _Resolved | None:
    direction: Direction = "past" if m.low("wd_q") == "since" else _day_direction(m.tense)
    found = P.weekday_in(WEEKDAYS.index(m.low("wd_d")), direction, today)
    return found, True, m.match.span("wd_d")


def _r_weekdaypart(m: _Match, today: date) -> _Resolved | None:
    # The day alone: ``find_temporal`` adds the part of the day after it to the mention and its label.
    day = WEEKDAYS.index(m.low("wp_d"))
    return P.weekday_in(day, _day_direction(m.tense), today), True, m.match.span("wp_d")


def _r_holiday(m: _Match, today: date) -> _Resolved | None:
    key = re.sub(r"[.'\u2019]", "", m.low("hd"))
    month, day, name = HOLIDAYS[key]
    qualifier = m.low("hq")
    if not qualifier and key in BARE_HOLIDAYS:
        before = m.text[max(0, m.match.start() - 16) : m.match.start()].lower().split()
        if not before or before[-1] not in HOLIDAY_CUE:
            return None
    found = _holiday_day(month, day, qualifier, m.tense, today)
    if found is None:
        return None
    labelled = Period(found.start, found.end, "day", f"{name} {found.start.year}")
    return labelled, True, m.match.span() if qualifier else m.match.span("hd")


def _holiday_day(month: int, day: int, qualifier: str, tense: Tense, today: date) -> Period | None:
    if qualifier == "this":
        return _explicit_date(today.year, month, day)
    # "last"/"next" never mean today: look from the day before or after.
    if qualifier == "last":
        return P.date_in(month, day, "past", today - timedelta(days=1))
    if qualifier == "next":
        return P.date_in(month, day, "future", today + timedelta(days=1))
    return P.date_in(month, day, _day_direction(tense), today)


def _r_ordday(m: _Match, today: date) -> _Resolved | None:
    found = P.day_of_month(int(m.g("od_d")), _day_direction(m.tense), today)
    return None if found is None else (found, True, (m.match.start("od_d"), m.match.end()))


def _r_ago(m: _Match, today: date) -> _Resolved | None:
    found = _offset(m.g("ago_n"), m.g("ago_u"), -1, today)
    return None if found is None else (found, True, m.match.span())


def _r_fromnow(m: _Match, today: date) -> _Resolved | None:
    found = _offset(m.g("fn_n"), m.g("fn_u"), 1, today)
    return None if found is None else (found, True, m.match.span())


def _r_inoffset(m: _Match, today: date) -> _Resolved | None:
    before = m.text[max(0, m.match.start() - 24) : m.match.start()]
    if m.tense == "past" or _SPAN_NOT_DATE_BEFORE.search(before):
        return None  # "I finished it in two weeks", "the first time in two years": a span, not a date
    found = _offset(m.g("io_n"), m.g("io_u"), 1, today)
    return None if found is None else (found, True, m.match.span())


_RESOLVERS: dict[str, Callable[[_Match, date], _Resolved | None]] = {
    name.removeprefix("_r_"): fn for name, fn in globals().items() if name.startswith("_r_") and callable(fn)
}
# A weekday after one of these words is not a date: "every Friday", "Black Friday", "Good Friday".
# "in two years" after one of these words is a span of time: "the first time in two years".
_SPAN_NOT_DATE_BEFORE = re.compile(r"\b(?:time|ever|once|twice|best|worst|most|least|longest)\s+$", re.I)
_NOT_A_DATE_BEFORE = re.compile(r"(?:every|each|black|good|cyber|easter|palm|ash|super)\s+$")


def _named(text: str, pos: int) -> bool:
    """Whether the word at ``pos`` is capitalised inside a sentence, as a name ("reading Tomorrow, and
    Tomorrow"); not at a sentence's start, nor in text written in capitals."""
    before = text[:pos].rstrip(" \t'\"\u2018\u201c(")
    capitalised = text[pos].isupper() and text[pos + 1 : pos + 2].islower()
    return capitalised and bool(before) and before[-1] not in ".!?:;\n\u2014-"


def find_temporal(text: str, now: datetime, offset: int = 0) -> list[TemporalMention]:
    """Time expressions in ``text`` resolved against ``now`` (aware) and the tense of their clause;
    spans are shifted by ``offset``.

    Never raises on odd text: an expression that cannot be resolved is simply left out.
    """
    low = text.translate(ASCII_LOWER)  # same length, so spans carry over
    if CUES.search(low) is None:
        return []  # cheap test first: most sentences carry no time at all
    today = now.astimezone(UTC).date()
    mentions: list[TemporalMention] = []
    pattern = expressions()
    consumed = 0
    for word in WORD_START.finditer(low):
        pos = word.start()
        if pos < consumed or not low.startswith(STARTS, pos):
            continue
        match = pattern.match(low, pos)
        if match is None or match.lastgroup is None:
            continue
        if match.lastgroup.startswith("weekday") and _NOT_A_DATE_BEFORE.search(low[max(0, pos - 12) : pos]):
            continue
        if match.lastgroup == "dayword" and _named(text, pos):
            continue  # a title
        consumed = match.end()
        s0, e0 = match.span()
        resolved = _RESOLVERS[match.lastgroup](
            _Match(match, text, functools.partial(clause_tense, text, s0, e0)), today
        )
        if resolved is None:
            continue
        period, relative, (s, e) = resolved
        part = PART_OF_DAY.match(low, e) if period.granularity == "day" else None
        if part is not None:  # "Sunday morning": the morning of that day, not "on 29 November morning"
            e = consumed = max(consumed, part.end())
        label = period.label if part is None else f"the {part.group(1)} of {period.label}"
        mentions.append(TemporalMention(text=text[s:e], start=_dt(period.start), end=_dt(period.end),
                                        granularity=period.granularity, is_relative=relative,
                                        span=(s + offset, e + offset), label=label))  # fmt: skip
    return mentions


def _dt(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


# Labels that already read as an adverbial phrase ("from May 2026 to July 2026", "earlier in 2026").
_ADVERBIAL_LABEL = ("from ", "earlier in ", "later in ")
_HOLIDAY_NAMES = frozenset(name for _, _, name in HOLIDAYS.values())


def as_phrase(mention: TemporalMention) -> str:
    """The mention as an adverbial phrase for a fact: "on 8 May 2023", "in May 2023", "in 2022"."""
    if mention.label.startswith(_ADVERBIAL_LABEL) or mention.label.rsplit(" ", 1)[0] in _HOLIDAY_NAMES:
        return mention.label  # "Christmas 2026" reads after any verb or preposition
    if mention.granularity == "day" or mention.label.startswith("the weekend"):
        return f"on {mention.label}"
    return f"in {mention.label}"


__all__ = ["as_phrase", "find_temporal"]

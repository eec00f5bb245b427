"""The pattern of the time expressions ``temporal`` finds, and the words it is made of: months,
weekdays, holidays, number words, and the cheap tests tried before the full pattern."""

from __future__ import annotations

import functools
import re

from hermes_memory.extract import periods as P

MONTHS: dict[str, int] = {name.lower(): i + 1 for i, name in enumerate(P.MONTH_NAMES)}
MONTHS.update({name.lower()[:3]: i + 1 for i, name in enumerate(P.MONTH_NAMES)})
MONTHS["sept"] = 9
# Month words that are also common English words: only a capitalised form counts as a month.
NEEDS_CAPITAL = frozenset({"may", "march", "august", *(n.lower()[:3] for n in P.MONTH_NAMES)})
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
PART_OF_DAY = re.compile(r"\s+(morning|afternoon|evening|night)\b")  # after a day: "Sunday morning"
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3,
}  # fmt: skip
# Every expression the pattern knows contains a digit or one of these substrings.
CUES = re.compile(
    r"\d|yesterday|today|tonight|tomorrow|last|this|next|past|coming|ago|jan|feb|mar|apr|may|jun|jul|aug"
    r"|sep|oct|nov|dec|spring|summer|fall|autumn|winter|day|week|month|year|christmas|halloween|july"
)
# Words an expression can start with; the full pattern is only tried at word starts beginning so.
STARTS = (
    *"0123456789",
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    "spring", "summer", "fall", "autumn", "winter", "last", "this", "next", "in", "during", "since",
    "until", "till", "by", "early", "late", "mid", "the", "end", "beginning", "start", "middle", "from",
    "between", "around", "before", "after", "circa", "yesterday", "today", "tonight", "tomorrow", "past",
    "coming", "a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "fifteen", "twenty", "thirty", "couple", "few", "about", "roughly", "nearly",
    "almost", "over", "just", "like", "on", "at", "for", "earlier", "later",
    "christmas", "new", "halloween", "valentine", "boxing", "st", "saint", "independence", *WEEKDAYS,
)  # fmt: skip
WORD_START = re.compile(r"\b\w")
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_MONTH_RE = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# Holidays on a fixed day: (month, day, name). A bare "Christmas", "Halloween" or "New Year's" is a date
# only after "last/this/next" or one of HOLIDAY_CUE ("I love Christmas" dates nothing).
HOLIDAYS: dict[str, tuple[int, int, str]] = {
    "christmas eve": (12, 24, "Christmas Eve"), "christmas day": (12, 25, "Christmas Day"),
    "christmas": (12, 25, "Christmas"), "new years eve": (12, 31, "New Year's Eve"),
    "new years day": (1, 1, "New Year's Day"), "new years": (1, 1, "New Year's Day"),
    "halloween": (10, 31, "Halloween"), "valentines day": (2, 14, "Valentine's Day"),
    "boxing day": (12, 26, "Boxing Day"), "st patricks day": (3, 17, "St Patrick's Day"),
    "saint patricks day": (3, 17, "St Patrick's Day"), "independence day": (7, 4, "Independence Day"),
    "the fourth of july": (7, 4, "the Fourth of July"),
}  # fmt: skip
BARE_HOLIDAYS = frozenset({"christmas", "halloween", "new years"})
HOLIDAY_CUE = frozenset(
    "on at for over during since until till before after around by spend spent spending celebrate "
    "celebrated celebrating".split()
)
# "Christmas tree", "Halloween costume": the holiday names a thing, not a day.
_HOLIDAY_NOUNS = (
    r"(?:trees?|presents?|gifts?|cards?|music|songs?|carols?|movies?|films?|markets?|lights|decorations?"
    r"|sweaters?|jumpers?|lists?|shopping|season|spirit|cookies|cakes?|costumes?|parties|party|candy|special"
    r"|albums?|bonus|break|holidays?|vibes|mood|themed?|stuff|traditions?|ornaments?|stockings?|dinner|eve"
    r"|day|resolutions?)"
)
# After a month word: a word end, and a full stop only after an abbreviation ("Jan.", "Sept.").
_MDOT = r"\b(?:(?<=\b\w{3})\.|(?<=\bsept)\.)?"
_NUM_RE = (
    r"(?:\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|an?|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
)
_WEEKDAY_RE = "(?:" + "|".join(WEEKDAYS) + ")"
_SEASON_RE = r"(?:summer|winter|spring|fall|autumn)"
_UNIT_RE = rf"(?:week|weekend|month|year|{_SEASON_RE[3:-1]}|{_WEEKDAY_RE[3:-1]})"
_ORD = r"(?:st|nd|rd|th)?"
_TO = r"\s*(?:-|\u2013|to|and|until|till|through|thru)\s*"
# One end of a "from X to Y" range: a date, a month (with a year or not), a weekday or a year.
_ITEM = (
    rf"(?:\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH_RE}\b(?:,?\s+\d{{4}})?|{_MONTH_RE}{_MDOT}(?:\s+\d{{1,2}}{_ORD}\b)?"
    rf"(?:,?\s+\d{{4}})?|{_WEEKDAY_RE}|(?:19|20)\d{{2}})"
)
ITEM_PARTS = re.compile(
    rf"(?:(?P<d1>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m1>{_MONTH_RE})|(?P<m2>{_MONTH_RE})\.?(?:\s+(?P<d2>\d{{1,2}}){_ORD})?"
    rf"|(?P<wd>{_WEEKDAY_RE})|(?P<yo>(?:19|20)\d{{2}}))(?:,?\s+(?P<y>\d{{4}}))?$"
)


@functools.cache
def expressions() -> re.Pattern[str]:
    # Alternatives are ordered longest-first; every quantifier is bounded, so no backtracking blow-up.
    m, n = _MONTH_RE, _NUM_RE
    return re.compile(
        rf"""
        (?P<dayrange>\b(?:(?:from|between)\s+)?(?:(?P<dr_m1>{m}){_MDOT}\s+(?P<dr_a>\d{{1,2}}){_ORD}
                    |(?P<dr_a2>\d{{1,2}}){_ORD}){_TO}(?P<dr_b>\d{{1,2}}){_ORD}\b
                    (?:\s+(?:of\s+)?(?P<dr_m2>{m})\b)?(?:,?\s+(?P<dr_y>\d{{4}})\b)?)
      | (?P<range>\b(?:from|between)\s+(?P<rg_a>{_ITEM}){_TO}(?P<rg_b>{_ITEM})\b)
      | (?P<iso>\b(?P<iso_y>\d{{4}})-(?P<iso_m>\d{{1,2}})-(?P<iso_d>\d{{1,2}})\b)
      | (?P<slash>\b(?P<sl_a>\d{{1,2}})/(?P<sl_b>\d{{1,2}})/(?P<sl_y>\d{{4}})\b)
      | (?P<wdord>\b(?:(?:on|since|until|till|by)\s+)?(?P<wo_d>{_WEEKDAY_RE}),?\s+
                 (?:the\s+(?P<wo_a>\d{{1,2}})(?:st|nd|rd|th)\b(?:\s+of\s+(?P<wo_m>{m}){_MDOT})?|(?P<wo_b>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<wo_m2>{m}){_MDOT}
                 |(?P<wo_c>\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{m}\b))(?:,?\s+(?P<wo_y>\d{{4}})\b)?)
      | (?P<dmy>\b(?P<dmy_d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<dmy_m>{m}){_MDOT}(?:,?\s+(?P<dmy_y>\d{{4}})\b
                 |\s+(?P<dmy_q>next|last|this)\s+year\b)?)
      | (?P<mdy>\b(?P<mdy_m>{m}){_MDOT}\s+(?P<mdy_d>\d{{1,2}}){_ORD}\b(?!\s*:)(?:,?\s+(?P<mdy_y>\d{{4}})\b
                 |\s+(?P<mdy_q>next|last|this)\s+year\b)?)
      | (?P<monyear>\b(?P<my_m>{m}){_MDOT},?\s+(?:of\s+)?(?P<my_y>\d{{4}})\b)
      | (?P<seasonyear>\b(?P<sy_s>{_SEASON_RE})\s+(?:of\s+)?(?P<sy_y>\d{{4}})\b)
      | (?P<partyear>\b(?P<py_p>early|mid|late)[-\s](?P<py_y>(?:19|20)\d{{2}})\b)
      | (?P<relmon>\b(?P<rm_q>last|this|next|in|during|since|until|till|by|early|late|mid|
                     (?:the\s+)?(?:end|beginning|start|middle)\s+of)(?:\s+|-)(?P<rm_m>{m})\b(?!\.?,?\s*\d))
      | (?P<year>\b(?P<yr_q>in|since|from|until|till|by|during|around|before|after|circa)\s+
                 (?P<yr_y>(?:19|20)\d{{2}})\b(?!\s*(?:%|\$|dollars|people|miles|km|feet)))
      | (?P<partof>\b(?:at\s+)?(?:the\s+)?(?P<po_p>end|beginning|start|middle)\s+of\s+
                   (?P<po_q>the|this|next|last)\s+(?P<po_u>month|year)\b)
      | (?P<partnow>\b(?P<pn_q>earlier|later)\s+(?:this|in\s+the)\s+(?P<pn_u>week|month|year)\b)
      | (?P<dayword>\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today
                   |tonight|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))\b)
      | (?P<relp>\b(?P<rp_q>this\s+past|this\s+coming|the\s+past|the\s+coming|last|this|next|past|coming)\s+
                 (?P<rp_u>{_UNIT_RE})\b)
      | (?P<theweekend>\b(?:over|on|at|during|for)\s+the\s+weekend\b)
      | (?P<seasonin>\b(?P<si_q>in|during|over|since|until|by\s+the)\s+(?:the\s+)?(?P<si_s>{_SEASON_RE})\b
                     (?!\s+(?:of\s+)?\d))
      | (?P<weekday>\b(?P<wd_q>on|since|until|till|by)\s+(?P<wd_d>{_WEEKDAY_RE})\b
                    (?!\s+(?:morning|afternoon|evening|night)s\b))
      | (?P<weekdaypart>\b(?P<wp_d>{_WEEKDAY_RE})\s+(?:morning|afternoon|evening|night)\b)
      | (?P<holiday>\b(?:(?P<hq>last|this|next)\s+)?(?P<hd>christmas\s+eve|christmas\s+day|christmas
                    |new\s+year['\u2019]?s(?:\s+eve|\s+day)?|halloween|valentine['\u2019]?s\s+day|boxing\s+day
                    |(?:st\.?|saint)\s+patrick['\u2019]?s\s+day|independence\s+day|the\s+fourth\s+of\s+july)\b
                    (?!['\u2019]s\b|\s+{_HOLIDAY_NOUNS}\b))
      | (?P<ordday>\bon\s+the\s+(?P<od_d>\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{m}\b))
      | (?P<ago>\b(?:(?:about|around|roughly|nearly|almost|over|just|like)\s+)?
               (?P<ago_n>{n})\s+(?P<ago_u>day|week|month|year|decade)s?\s+ago\b)
      | (?P<fromnow>\b(?P<fn_n>{n})\s+(?P<fn_u>day|week|month|year)s?\s+from\s+(?:now|today)\b)
      | (?P<inoffset>\bin\s+(?:(?:about|around|roughly|just|another)\s+)?(?P<io_n>{n})\s+
                    (?P<io_u>day|week|month|year)s?\b(?!\s+(?:old|time)\b))
        """,
        re.VERBOSE,  # matched against ASCII-lower-cased text: case-insensitive patterns are much slower
    )


__all__ = [
    "ASCII_LOWER",
    "BARE_HOLIDAYS",
    "CUES",
    "HOLIDAYS",
    "HOLIDAY_CUE",
    "ITEM_PARTS",
    "MONTHS",
    "NEEDS_CAPITAL",
    "NUMBERS",
    "PART_OF_DAY",
    "STARTS",
    "WEEKDAYS",
    "WORD_START",
    "expressions",
]

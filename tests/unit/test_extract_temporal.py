"""Time expressions resolved against the message time, across month, year and leap-day boundaries."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.temporal import as_phrase, find_temporal
from hermes_memory.extract.tense import clause_tense


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
    text: str,
    now: datetime,
    start: date,
    end: date,
    granularity: str,
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
        assert text[m.span[0] - 100 : m.span[1] - 100] == m.text


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
        "on 7 May 2023",
        "in the week of 1 May 2023",
        "in 2022",
        "on the weekend of 6 May 2023",
    ]


@pytest.mark.parametrize(
    ("sentence", "expression", "tense"),
    [
        ("I moved to Lisbon in May.", "May", "past"),
        ("In May, I moved to Lisbon.", "May", "past"),  # the clause after the comma carries the verb
        ("I have lived here since May.", "May", "past"),
        ("We were excited about May.", "May", "past"),
        ("I used to swim in May.", "May", "past"),
        ("I was going to move in May.", "May", "past"),  # a plan in the past
        ("I will never forget what happened in May.", "May", "past"),  # the nearest verb wins
        ("Did you travel in May?", "May", "past"),
        ("I quit smoking in May.", "May", "past"),
        ("I'm moving to Berlin in May.", "May", "future"),
        ("I will move to Berlin in May.", "May", "future"),
        ("I'll quit smoking in May.", "May", "future"),  # "quit" after a modal is not a past form
        ("I said I will move in May.", "May", "future"),
        ("We are going to Japan in May.", "May", "future"),
        ("I plan to run a marathon in May.", "May", "future"),
        ("I want to visit Rome in May.", "May", "future"),
        ("We might go in May.", "May", "future"),
        ("I will have finished by May.", "May", "future"),
        ("I lived in Hamburg, but I'm moving in May.", "May", "future"),
        ("I moved in May and will stay.", "May", "past"),
        ("My birthday is in May.", "May", "present"),
        ("I'm excited about May.", "May", "present"),  # "excited" after "I'm" is an adjective
        ("The festival is in May.", "May", "present"),
        ("May.", "May", "present"),
        # A verb whose past is its base form reads as past, unless anything else says otherwise.
        ("Noor and I split up in May.", "May", "past"),
        ("I hurt my knee skiing in May.", "May", "past"),
        ("I'm going to split the bill in May.", "May", "future"),
        ("We will shut the cafe in May.", "May", "future"),
        ("The launch is set for May.", "May", "present"),  # after "is": an adjective
        ("My haircut is in May, a cut and colour.", "May", "present"),
    ],
)
def test_clause_tense(sentence: str, expression: str, tense: str) -> None:
    start = sentence.index(expression)
    assert clause_tense(sentence, start, start + len(expression)) == tense


def test_clause_tense_refuses_a_span_outside_the_text() -> None:
    with pytest.raises(ValueError, match="not inside"):
        clause_tense("I moved in May.", 10, 40)


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        ("I moved to Lisbon in May.", "May 2026"),  # the bug users saw: it was shown as May 2027
        ("I adopted a dog in April.", "April 2026"),
        ("I'm moving to Lisbon in May.", "May 2027"),
        ("My birthday is in May.", "May 2027"),  # present tense: the nearer May (mid-May 2027)
        ("I'll visit my parents in November.", "November 2026"),  # the current month counts
        ("I visited my parents in November.", "November 2026"),
    ],
)
def test_a_month_without_a_year_follows_the_tense(sentence: str, label: str) -> None:
    [m] = find_temporal(sentence, at(2026, 11, 24))
    assert m.label == label


def test_ranges_read_as_phrases() -> None:
    [m] = find_temporal("We were in Spain from May to July.", at(2026, 11, 24))
    assert (m.text, m.label, m.granularity) == ("from May to July", "from May 2026 to July 2026", "month")
    assert as_phrase(m) == "from May 2026 to July 2026"
    [m] = find_temporal("Earlier this year I changed jobs.", at(2026, 11, 24))
    assert as_phrase(m) == "earlier in 2026"
    [m] = find_temporal("I moved in late May.", at(2026, 11, 24))
    assert as_phrase(m) == "in late May 2026"


def test_a_fact_from_a_past_statement_is_dated_in_the_past() -> None:
    said = at(2026, 11, 24)
    message = MessageInput(text="I moved to Lisbon in May.", time=said, speaker="user", role="user")
    facts = extract(message).facts
    assert facts and all(f.when is not None and f.when.start < said for f in facts)
    assert any("May 2026" in f.content for f in facts)


def test_a_verb_whose_past_is_its_base_is_dated_and_worded_in_the_past() -> None:
    said = at(2026, 11, 24)
    message = MessageInput(text="I split up with Noor in March.", time=said, speaker="user", role="user")
    facts = extract(message).facts
    assert [f.content.split(" ", 1)[1] for f in facts] == ["split up with Noor in March 2026"], facts


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("I'm halfway through Tomorrow, and Tomorrow, and Tomorrow.", []),  # a title, inside a sentence
        ("She was interviewed on the Today programme.", []),
        ("Tomorrow the movers come at eight.", ["Tomorrow"]),  # a sentence's first word
        ("Big week. Tonight we celebrate.", ["Tonight"]),
        ('"Yesterday," he said, "was a mess."', ["Yesterday"]),
        ("CALL ME TOMORROW", ["TOMORROW"]),  # written in capitals: no name
        ("the dentist moved my check-up to tomorrow", ["tomorrow"]),
    ],
)
def test_a_day_word_capitalised_inside_a_sentence_is_a_name_not_a_date(text: str, found: list[str]) -> None:
    assert [m.text for m in find_temporal(text, at(2026, 3, 2))] == found


def test_a_title_that_reads_like_a_day_is_kept_in_the_fact() -> None:
    message = MessageInput(
        text="I'm reading Tomorrow, and Tomorrow, and Tomorrow by Gabrielle Zevin.",
        time=at(2026, 3, 2), speaker="user", role="user",
    )  # fmt: skip
    contents = [f.content for f in extract(message).facts]
    assert not any("2026" in c for c in contents), contents


@pytest.mark.parametrize(
    ("said", "worded"),
    [
        ("I moved to Bristol on the 3rd of last month.", "on 3 February 2026"),
        ("Our housewarming is on the 14th of next month.", "on 14 April 2026"),
        ("I started the new job on the 2nd of this month.", "on 2 March 2026"),
        ("My retreat is on the 9th of May.", "on 9 May 2026"),
    ],
)
def test_a_day_of_a_month_reads_as_one_date(said: str, worded: str) -> None:
    """"the 3rd of last month" is the 3rd of that month, said once; "on the 9th of May" keeps one "on"."""
    now = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
    contents = [f.content for f in extract(MessageInput(said, now)).facts]
    assert any(worded in c for c in contents), contents
    assert not any(" of " + worded.split()[-2] in c or "on the on" in c for c in contents), contents


@pytest.mark.parametrize(
    ("sentence", "now", "label"),
    [
        # A weekday with a day of the month is one day: the one of that number that falls on that weekday.
        ("We're getting married on Saturday the 14th.", at(2026, 3, 2), "14 March 2026"),
        ("We got married on Saturday the 14th.", at(2026, 3, 2), "14 February 2026"),
        ("The hearing is on Thursday the 30th.", at(2026, 3, 2), "30 April 2026"),
        ("Her birthday party was on Sunday, the 5th.", at(2026, 7, 20), "5 July 2026"),
        ("I'm flying out on Friday the 13th of November.", at(2026, 3, 2), "13 November 2026"),
        ("The gig is on Tuesday 9 June.", at(2026, 3, 2), "9 June 2026"),
        ("It opened on Saturday the 14th of March 2027.", at(2026, 3, 2), "14 March 2027"),
        # A day and month with "next/last/this year" is in that year.
        ("The wedding is on the 20th of June next year.", at(2026, 3, 2), "20 June 2027"),
        ("We met on August 3rd last year.", at(2026, 3, 2), "3 August 2025"),
        # The day something was booked for is the nearest one, whatever the tense of the booking.
        ("I booked the ferry for the 3rd of June.", at(2026, 3, 2), "3 June 2026"),
        ("We reserved a table for May 30th.", at(2026, 6, 2), "30 May 2026"),
    ],
)
def test_a_day_named_with_its_weekday_year_or_purpose_is_one_day(
    sentence: str, now: datetime, label: str
) -> None:
    found = find_temporal(sentence, now)
    assert [m.label for m in found] == [label]


def test_a_weekday_before_a_number_that_is_no_day_stays_the_weekday() -> None:
    found = find_temporal("On Saturday 3 people came.", at(2026, 3, 2))
    assert [(m.text, m.label) for m in found] == [("Saturday", "28 February 2026")]

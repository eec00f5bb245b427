"""The whole ingest chain dates what a turn says by the turn's own time and tense: the fact's valid_from
and the timeline event are the most recent past month for "I moved to Lisbon in May." said in
November (not next year's May), the coming one for a plan."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI

SAID = datetime(2026, 11, 24, 10, 2, tzinfo=UTC)  # a Tuesday


def ts(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, tzinfo=UTC).timestamp()


def remember(api: MemoryAPI, text: str, when: datetime, session: str) -> None:
    assert api.remember_turn(text, "Noted.", session, when)["success"]


def event_about(api: MemoryAPI, word: str) -> dict[str, Any]:
    events = [e for e in api.timeline_query(limit=100)["data"] if word in e["title"]]
    assert len(events) == 1, events
    return events[0]


def facts_about(api: MemoryAPI, word: str) -> list[dict[str, Any]]:
    return [f for f in api.fact_query(limit=100, min_confidence=0.0)["data"] if word in f["content"]]


@pytest.fixture
def api(open_api: Callable[..., MemoryAPI]) -> MemoryAPI:
    opened = open_api()
    remember(opened, "I moved to Lisbon in May.", SAID, "s1")
    remember(opened, "I'm moving to Berlin in March.", SAID, "s2")
    remember(opened, "I have a dentist appointment next Friday.", SAID, "s3")
    remember(opened, "I started a new job at Acme two weeks ago.", SAID, "s4")
    remember(opened, "We adopted a puppy in December.", datetime(2027, 1, 5, 9, 0, tzinfo=UTC), "s5")
    assert opened.flush()["success"]
    return opened


def test_a_past_month_is_the_most_recent_one_not_next_year(api: MemoryAPI) -> None:
    event = event_about(api, "Lisbon")
    assert event["timestamp"] == ts(2026, 5, 1)
    assert "May 2026" in event["title"]
    assert event["description"] == "May 2026 (from 'May')"
    lisbon = facts_about(api, "Lisbon")
    assert {f["predicate"] for f in lisbon} == {"moved_to", "lives_in"}
    assert all(f["valid_from"] == ts(2026, 5, 1) for f in lisbon)
    assert all("2027" not in f["content"] for f in lisbon)


def test_a_past_month_across_the_new_year_is_last_december(api: MemoryAPI) -> None:
    event = event_about(api, "puppy")
    assert event["timestamp"] == ts(2026, 12, 1)
    [fact] = facts_about(api, "puppy")
    assert fact["valid_from"] == ts(2026, 12, 1)


def test_a_future_month_is_the_coming_one_and_does_not_move_the_user_yet(api: MemoryAPI) -> None:
    event = event_about(api, "Berlin")
    assert event["timestamp"] == ts(2027, 3, 1)
    predicates = {f["predicate"]: f for f in facts_about(api, "Berlin")}
    # "I'm moving to": a change still ahead is a plan (extract.relations), dated at the coming March.
    assert predicates["plans"]["valid_from"] == ts(2027, 3, 1)
    assert predicates["plans"]["object"] == "move to Berlin"
    assert "lives_in" not in predicates  # a plan: the user still lives in Lisbon
    assert [f["content"] for f in facts_about(api, "lives in")] == ["The user lives in Lisbon"]


def test_next_friday_is_the_friday_of_next_week(api: MemoryAPI) -> None:
    event = event_about(api, "dentist")
    assert event["timestamp"] == ts(2026, 12, 4)
    assert event["description"] == "4 December 2026 (from 'next Friday')"
    [fact] = facts_about(api, "dentist")
    assert fact["valid_from"] == ts(2026, 12, 4)


def test_two_weeks_ago_is_the_week_two_weeks_back(api: MemoryAPI) -> None:
    event = event_about(api, "Acme")
    assert event["timestamp"] == ts(2026, 11, 9)
    assert all(f["valid_from"] == ts(2026, 11, 9) for f in facts_about(api, "Acme"))


def test_no_past_statement_is_dated_after_it_was_said(api: MemoryAPI) -> None:
    past = ("Lisbon", "Acme", "puppy")
    for event in api.timeline_query(limit=100)["data"]:
        if any(word in event["title"] for word in past):
            assert event["timestamp"] < ts(2027, 1, 5)


def test_a_move_to_an_organisation_is_no_new_home(open_api: Callable[..., MemoryAPI]) -> None:
    """"Moved to Lisbon" means the user lives there from then on; "moved to the Royal Marsden hospital"
    (an organisation) says where someone works, not where they live."""
    api = open_api()
    remember(api, "My sister Ines moved to the Royal Marsden hospital last month.", SAID, "s1")
    remember(api, "I moved to Porto in May.", SAID, "s2")
    assert api.flush()["success"]
    assert [f["content"] for f in facts_about(api, " lives in ")] == ["The user lives in Porto"]

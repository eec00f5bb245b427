"""Run-on facts: a clause told of a group with the speaker in it ("we", "Priya and I") makes a fact
about the speaker, one holder, and a request tacked onto a statement never runs into its fact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hermes_memory.extract import ExtractedFact, MessageInput, extract

NOW = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)


def facts(text: str) -> list[ExtractedFact]:
    return list(extract(MessageInput(text, NOW)).facts)


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("We own a small bakery near the station.", "The user owns a small bakery near the station"),
        ("We're expecting our first baby.", "The user is expecting their first baby"),
        ("My husband and I live near the harbour in Porto.", "The user lives near the harbour in Porto with"),
        ("Priya and I started a book club.", "The user started a book club with Priya"),
        ("My daughter and I both play the cello.", "The user plays the cello with their daughter"),
        ("Tom and I don't drink coffee.", "The user, like Tom, doesn't drink coffee"),
        ("We lent Tom our van.", "The user lent Tom"),  # an irregular past stays as said
        # what two do to each other is said of both, the speaker first
        ("My brother and I text each other most nights.", "The user and their brother text each other"),
    ],
)
def test_a_group_with_the_speaker_makes_a_fact_about_the_speaker(said: str, expected: str) -> None:
    found = facts(said)
    assert any(f.content.startswith(expected) for f in found), [f.content for f in found]
    for fact in found:
        assert "and others" not in fact.content, fact.content
        assert "and the user" not in fact.content.lower(), fact.content
        assert fact.subject == "the user", (fact.subject, fact.content)


@pytest.mark.parametrize(
    ("said", "statement", "request_word"),
    [
        ("I teach maths at a high school, so remind me about grading.", "The user teaches maths", "remind"),
        ("I'm allergic to shellfish, so never suggest paella.", "The user is allergic to", "paella"),
        ("I play the cello and send me concert tips when you can.", "The user plays the cello", "tips"),
        ("I coach a junior football team and keep your replies brief.", "The user coaches", "brief"),
    ],
)
def test_a_request_joined_to_a_statement_is_not_part_of_its_fact(
    said: str, statement: str, request_word: str
) -> None:
    contents = [f.content for f in facts(said)]
    assert any(c.startswith(statement) for c in contents), contents
    assert not [c for c in contents if request_word in c], contents


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # the same subject goes on: a verb after "and" is still the speaker's
        ("I live in Oslo and work at Hooli.", "The user lives in Oslo and works at Hooli"),
        ("I grew up in Lyon, so I speak French.", "The user speaks French"),
    ],
)
def test_a_statement_that_goes_on_is_kept_whole(said: str, expected: str) -> None:
    assert expected in [f.content for f in facts(said)]


def test_what_we_do_among_ourselves_makes_no_fact_of_one_holder() -> None:
    """ "we finally see each other" holds of no one member of the group alone, and names no one to say it
    of with the speaker: no fact (a fact of the user alone would read "The user finally sees each other")."""
    found = facts("Dana got a day job at the bakery, so we finally see each other.")
    assert not any("each other" in f.content for f in found), [f.content for f in found]

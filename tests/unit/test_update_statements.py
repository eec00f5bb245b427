"""How a clause is read for updates: whose attribute it is about, and whether it asserts anything now.

The sentences here are written for these tests; none is taken from the labelled corpus.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hermes_memory.updates.statement import USER, clauses, read, same_holder

SAID = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "holder"),
    [
        ("I cycle to the office most days", USER),
        ("my laptop is a ThinkPad X1", USER),
        ("Nowadays it's oat milk for me", USER),
        ("Priya is my line manager now", USER),  # naming one of the user's people: the user's attribute
        ("my new team lead is Kofi", USER),
        ("We keep our sprint board in Asana", USER),
        ("Mateo moved to Valencia", "Mateo"),
        ("my cousin Leila teaches in Rabat", "Leila"),
        ("my dog Pretzel only eats salmon kibble", "Pretzel"),
        ("Mateo's band plays jazz", "Mateo"),
        ("my brother bought a Fairphone", "user's brother"),
        ("she lives in Oslo now", None),  # a pronoun alone names nobody
        ("The user's phone is a Pixel 6", USER),  # a stored fact reads like the user's own words
    ],
)
def test_the_holder_is_read_from_structure(text: str, holder: str | None) -> None:
    assert read(text).holder == holder


def test_the_speakers_own_name_means_the_user() -> None:
    assert read("Rosa works at the library", speaker="Rosa").holder == USER
    assert read("I work at the library", speaker="Rosa").holder == USER


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("should I get a standing desk?", "question"),
        ("Do you think I'd like Rust?", "question"),
        ("I may swap my Kindle for a Kobo", "hypothetical"),
        ("maybe I'll take up climbing", "hypothetical"),
        ("I'm considering a move to Leeds", "hypothetical"),
        ("I wanna try keto", "hypothetical"),
        ("I didn't quit the choir", "negated"),
        ("I never switched to Linux after all", "negated"),
        ("my aunt keeps saying I should learn Dutch", "reported"),
        ("a colleague said Figma is better than Sketch", "reported"),
    ],
)
def test_what_asserts_nothing_now_is_gated(text: str, why: str) -> None:
    statement = read(text, when=SAID)
    assert not statement.asserts
    assert statement.why_not == why


@pytest.mark.parametrize(
    "text",
    [
        "I don't eat dairy anymore",  # a negated state ends the old value: no gate
        "I haven't had a cigarette since March",  # a negated perfect with a duration: a state that ended
        "I moved to Leeds in May",  # the month, not the modal
        "I switched to a Kobo last week",
        "these days I run before work",
    ],
)
def test_statements_that_can_update_pass_the_gates(text: str) -> None:
    assert read(text, when=SAID).asserts, read(text, when=SAID).why_not


def test_a_time_after_the_statement_makes_it_a_plan() -> None:
    assert read("I start at Bosch next month", when=SAID).why_not == "plan"
    assert read("I started at Bosch last month", when=SAID).asserts


def test_a_negated_state_is_marked_negated() -> None:
    assert read("I don't drive anymore").negated
    assert not read("I drive a Corolla").negated


def test_first_and_third_person_read_alike() -> None:
    assert read("I play the cello").normal == read("The user play the cello").normal
    assert read("my car is a Fiat").normal == "the user's car is a Fiat"


def test_values_are_masked() -> None:
    assert read("my dentist is Dr. Haddad in Leeds").masked == "the user's dentist is something in something"
    assert read("I run 10 km on Sundays").masked == "the user run something km on something"


def test_unknown_holders_never_match() -> None:
    assert not same_holder(None, None)
    assert not same_holder(USER, None)
    assert same_holder("Mateo", "mateo")
    assert not same_holder(USER, "user's brother")


def test_clauses_split_at_sentences_and_semicolons() -> None:
    assert clauses("I quit the gym; these days I swim. Also got a bike!") == [
        "I quit the gym",
        "these days I swim",
        "Also got a bike",
    ]
    assert clauses("ok") == []

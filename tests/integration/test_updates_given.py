"""What a question, a wish or a plan takes as given: "how do I stop my Pixel 8 from dimming" asks nothing
of the phone, yet takes the Pixel 8 as the user's. Such a thing is weighed as news of the attribute, with
the real MiniLM embedder; it is never stored as a fact of its own. Sentences written for this test."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.updates.message import given, read_message

DAY = 86400.0


@pytest.mark.parametrize(
    ("clause", "things"),
    [
        ("how do i stop my Pixel 8 from dimming the screen", ["my Pixel 8"]),
        ("Zoe's Year 4 teacher wants a shoebox diorama", ["Zoe's Year 4 teacher"]),
        ("is it worth fixing Omar's flat in Leeds before we sell", ["Omar's flat in Leeds"]),
        ("should I cancel my gym membership", []),  # no name or number: nothing to weigh
        ("can my sister come too", []),
    ],
)
def test_a_thing_of_ones_own_named_by_a_value_is_taken_as_given(clause: str, things: list[str]) -> None:
    assert given(clause) == things


def test_only_a_clause_that_asserts_nothing_adds_what_it_takes_as_given() -> None:
    asked = read_message("how do i stop my Pixel 8 from dimming the screen?")
    assert [s.normal for _, s in asked if s.presupposed] == ["the user's Pixel 8"]
    said = read_message("My Pixel 8 dims the screen all the time.")
    assert not any(s.presupposed for _, s in said)  # the clause itself says it


def _closed(home: Path, earlier: str, later: str) -> tuple[list[str], list[str]]:
    start = time.time() - 10 * DAY
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        api.remember_turn(earlier, "Noted.", "s1", start)
        api.remember_turn(later, "Sure.", "s1", start + DAY)
        assert api.flush()["success"]
        closed = [f.content for f in api.tier2.facts.superseded(limit=10)]
        facts = [f.content for f in api.tier2.facts.believed_about(["the user"], limit=100)]
        return closed, facts


def test_a_new_value_taken_as_given_in_a_question_replaces_the_old(tmp_path: Path) -> None:
    asked = "how do i stop my Pixel 8 from dimming?"
    closed, _ = _closed(tmp_path, "My phone is a Samsung Galaxy S21.", asked)
    assert closed == ["The user's phone is a Samsung Galaxy S21"]


def test_the_old_value_taken_as_given_is_kept(tmp_path: Path) -> None:
    closed, _ = _closed(tmp_path, "I use LastPass.", "what happens to my LastPass vault if I stop paying?")
    assert closed == []


def test_what_is_taken_as_given_is_no_fact_of_its_own(tmp_path: Path) -> None:
    closed, facts = _closed(tmp_path, "I drive a Skoda Octavia.", "Should I sell my Octavia or keep it?")
    assert closed == [] and facts, facts
    assert not any(f.lower().startswith("the user's octavia") for f in facts), facts

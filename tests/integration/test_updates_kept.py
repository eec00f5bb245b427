"""What a new message leaves as it was: the old statement said whole in another clause of the message, a
name that only closes a call, a pet's own news, and a change arranged for a time to come. Through the
real write path with the real MiniLM embedder; the sentences are written for this test, not taken from
the corpus."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from chat_closures import closed_in_chat

DAY = 86400.0
START = time.time() - 40 * DAY


def _closed(home: Path, said: list[tuple[str, str]]) -> list[Any]:
    """The facts a chat (speaker, message), one message a day, closes."""
    return closed_in_chat(home, said, START, DAY)


def test_a_message_that_says_the_old_statement_again_keeps_it(tmp_path: Path) -> None:
    """ "Since I'm lactose intolerant, I've swapped to oat milk instead" changes the milk, not the
    intolerance; "I still live in Leeds, but these days I work in York" changes the work, not the home.
    A message that says the old predicate whole, in the present, keeps it, whatever cue the rest of the
    message carries. Saying it in the past ("I used to live in Leeds") still ends it."""
    kept = [
        ("Ines", "I'm lactose intolerant."),
        ("Ines", "I live in Leeds."),
        ("Ines", "Since I'm lactose intolerant, I've swapped cow's milk for oat milk instead."),
        ("Ines", "I still live in Leeds, but these days I work in York."),
    ]
    closed = _closed(tmp_path / "kept", kept)
    assert not closed, [f.content for f in closed]
    ended = [("Ines", "I live in Leeds."), ("Ines", "I used to live in Leeds, but now I live in York.")]
    closed = _closed(tmp_path / "ended", ended)
    assert [f.content for f in closed] == ["Ines lives in Leeds"], [f.content for f in closed]


def test_a_name_closing_small_talk_is_spoken_to(tmp_path: Path) -> None:
    """ "Sure thing Nate" and "Yeah, same here Caroline" call the friend by name: they say nothing of
    Nate's love of a series or of what Caroline agreed with."""
    said = [
        ("Nate", "I really love this series."),
        ("Caroline", "Totally agree with that, Mel."),
        ("Joanna", "Sure thing Nate"),
        ("Melanie", "Yeah, same here Caroline"),
    ]
    closed = _closed(tmp_path, said)
    assert not closed, [f.content for f in closed]


def test_a_pets_own_news_leaves_the_pet_the_users(tmp_path: Path) -> None:
    """A pet's diet, age or illness is news of the pet: the user still has it, as a partner's new job
    leaves the partner. What the pet eats now is its own attribute, and a new food still replaces it."""
    said = [
        ("Joe", "We have a beagle called Rolo and a cat called Mochi."),
        ("Joe", "Rolo is on a diet, the vet says he's too heavy."),
        ("Joe", "Mochi is sixteen now and mostly sleeps."),
    ]
    closed = _closed(tmp_path / "news", said)
    assert not closed, [f.content for f in closed]
    food = [("Joe", "My cat Mochi eats Felix pouches."), ("Joe", "Mochi is on Royal Canin renal food now.")]
    closed = _closed(tmp_path / "food", food)
    assert [f.content for f in closed] == ["Joe's cat Mochi eats Felix pouches"], [f.content for f in closed]


def test_a_change_arranged_for_next_week_is_not_made_yet(tmp_path: Path) -> None:
    """ "I booked a first appointment with a new dentist for next week" arranges a change; the old dentist
    is still the user's until it is made ("Dr. Moss is my dentist now")."""
    said = [
        ("Joe", "My dentist is Dr. Ali in Neustadt."),
        ("Joe", "I booked a first appointment with a new dentist, Dr. Moss, for next week."),
    ]
    closed = _closed(tmp_path / "booked", said)
    assert not closed, [f.content for f in closed]
    closed = _closed(tmp_path / "made", [*said, ("Joe", "Dr. Moss is my dentist now, she's great.")])
    assert [f.content for f in closed] == ["Joe's dentist is Dr. Ali in Neustadt"], closed

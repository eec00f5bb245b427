"""A user often says something new of themselves on the way to a question, in one sentence: "I'm on a
Lyca SIM now, can I ...?". What comes before the comma asserts, so it can end what the user said before;
a question, a supposition or a phrase with no verb of its own ends nothing. Through the write path with
the real MiniLM embedder; sentences written for this test."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_state import closed_after


@pytest.mark.parametrize(
    ("earlier", "later", "ended"),
    [
        ("I'm on a Vodafone contract.",
         "I'm on a Lyca SIM only deal, can I use it in Morocco without roaming charges?", "Vodafone"),
        ("My accountant is Petra Novak.", "my accountant is a guy called Imran Shah, when's the self "
         "assessment deadline again?", "Petra Novak"),
        ("My cat Pickle eats Royal Canin.",
         "Pickle eats Lily's Kitchen pouches, how many a day for a 4kg cat?", "Royal Canin"),
        ("My mobile is with Lebara.",
         "my Giffgaff sim keeps losing signal in the flat, is there a way to boost it?", "Lebara"),
    ],
)  # fmt: skip
def test_news_told_before_a_question_ends_the_old_value(
    tmp_path: Path, earlier: str, later: str, ended: str
) -> None:
    closed = closed_after(tmp_path, earlier, later)
    assert len(closed) == 1 and ended in closed[0], closed


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I live in Bristol.", "suppose I'm living in Glasgow by spring, which schools should I look at?"),
        ("I read on a Kindle Paperwhite.", "As a Kobo fan, what would you say the Kindle does better?"),
        ("My landlord is Greg Hollis.", "Is Greg Hollis still the landlord, or did the agency take over?"),
        ("I'm on a Vodafone contract.", "my contract's with Vodafone, is it?"),
    ],
)
def test_a_question_a_supposition_or_a_phrase_before_one_ends_nothing(
    tmp_path: Path, earlier: str, later: str
) -> None:
    assert closed_after(tmp_path, earlier, later) == []

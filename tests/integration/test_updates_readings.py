"""Readings of a clause that decide whose attribute it speaks of, through the real write path with the
real MiniLM embedder: a name set off by the speaker's role for it, what is so "for me", a clause that
"so" or "but" opens after a comma, a title before a name. The sentences are written for this test, not
taken from the corpus."""

from __future__ import annotations

import time
from pathlib import Path

from chat_closures import closed_in_chat

DAY = 86400.0
START = time.time() - 40 * DAY


def _closed(home: Path, said: list[str]) -> list[str]:
    """What the facts a user's messages (one a day) close said."""
    return [f.content for f in closed_in_chat(home, [("Ines", text) for text in said], START, DAY)]


def test_a_name_set_off_by_a_role_is_whom_the_clause_is_about(tmp_path: Path) -> None:
    """ "Nadia, my cousin, teaches in Lyon" says where Nadia teaches (and that she is the user's cousin):
    her move replaces where she teaches, not the cousin."""
    said = ["Nadia, my cousin, teaches in Lyon.", "Nadia moved to a school in Geneva last spring."]
    closed = _closed(tmp_path, said)
    assert len(closed) == 1 and "lyon" in closed[0].lower(), closed


def test_what_is_so_for_the_speaker_is_theirs_whatever_the_word_order(tmp_path: Path) -> None:
    said = ["I have black coffee with breakfast.", "It's matcha for me at breakfast these days."]
    closed = _closed(tmp_path, said)
    assert len(closed) == 1 and "coffee" in closed[0].lower(), closed


def test_a_clause_after_so_speaks_of_the_attribute_its_subject_names(tmp_path: Path) -> None:
    said = ["My dentist is Dr Ferreira.", "The practice was taken over, so the dentist's a Dr Kaur now."]
    closed = _closed(tmp_path, said)
    assert len(closed) == 1 and "ferreira" in closed[0].lower(), closed

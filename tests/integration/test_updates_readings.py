"""Readings of a clause that decide whose attribute it speaks of, through the real write path with the
real MiniLM embedder: a name set off by the speaker's role for it, what is so "for me", a clause that
"so" or "but" opens after a comma, a title before a name, a verb answering a question about a thing.
The sentences are written for this test, not taken from the corpus."""

from __future__ import annotations

import time
from pathlib import Path

from chat_closures import called_in_probe, closed_in_chat

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


HOLDERS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_holders_probe.json"
HOLDERS_PROBE_2 = Path(__file__).resolve().parents[1] / "data" / "updates_holders_probe2.json"
HOLDERS_PROBE_3 = Path(__file__).resolve().parents[1] / "data" / "updates_holders_probe3.json"
OWN_WORDS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_own_words_probe.json"
GROUPS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_groups_probe.json"


def test_whose_attribute_in_pairs_read_to_find_the_readings() -> None:
    """``updates_holders_probe.json``: 40 pairs by another author who saw neither code nor corpus, about
    who a clause speaks of when it is said indirectly. Read to find the readings above, so not held out:
    18 of its 21 updates caught (12 before them), one addition closed ("it's more like 10k for me on
    sundays" after "I run 5k most mornings")."""
    wrong, caught, pairs = called_in_probe(HOLDERS_PROBE)
    assert pairs == 40
    assert len(wrong) <= 1, wrong
    assert caught >= 18, caught


def test_whose_attribute_in_pairs_of_a_second_author() -> None:
    """``updates_holders_probe2.json``: 44 pairs by a second author. Scored as it came after the readings
    (14 of 23 caught, 4 closed wrongly; main before them 12 and 4), then read: a title before a possessive
    name and what an insertion says neither negating nor asking came from it, so it is held out no longer."""
    wrong, caught, pairs = called_in_probe(HOLDERS_PROBE_2)
    assert pairs == 44
    assert len(wrong) <= 3, wrong
    assert caught >= 16, caught


def test_whose_attribute_in_pairs_the_readings_were_not_written_from() -> None:
    """``updates_holders_probe3.json``: 44 pairs by a third author, written after every reading above and
    scored (12 of 23 updates caught, 11 before them; one question closes something, 2 before). Then read:
    a question with no verb answered by a verb ("Coffee? Quit.") came from it, so it is held out no
    longer: 15 caught."""
    wrong, caught, pairs = called_in_probe(HOLDERS_PROBE_3)
    assert pairs == 44
    assert len(wrong) <= 1, wrong
    assert caught >= 15, caught


def test_what_a_verb_answering_a_topic_does_to_it(tmp_path: Path) -> None:
    """ "Gym membership? Cancelled." says the gym membership was cancelled: it ends what the user said of
    it, and a question about a thing with no answer of that kind ends nothing."""
    said = ["I'm a member at the Crunch gym on 5th.", "Crunch? Cancelled. Running outside is free."]
    closed = _closed(tmp_path, said)
    assert len(closed) == 1 and "crunch" in closed[0].lower(), closed
    kept = ["I'm a member at the Crunch gym on 5th.", "Crunch? Packed again tonight, ugh."]
    assert _closed(tmp_path / "kept", kept) == []


def test_updates_in_own_words_the_readings_were_not_written_from() -> None:
    """Held out (``updates_own_words_probe.json``: 56 pairs by an author who saw neither code, corpus nor
    any other probe, written while the verb-answer reading was built and only scored): 15 of its 28
    updates caught (13 before that reading). The decision fitted on the corpus alone closed none of its 28
    other pairs; fitted on the everyday sets too it closes one ("standup ran 40 minutes today, kill me"
    ends "Our team has standup at 9:30 every day"), and no more is allowed."""
    wrong, caught, pairs = called_in_probe(OWN_WORDS_PROBE)
    assert pairs == 56
    assert len(wrong) <= 1, wrong
    assert caught >= 15, caught


def test_things_of_the_speakers_world_named_with_the() -> None:
    """``updates_groups_probe.json``: 48 pairs by an author who saw neither code, corpus nor any other
    probe, given the kinds only (a team, household or band named with "the", someone one sees for care, a
    negated verb with its "I" dropped, everyday others). Scored first after the reading of "the team ..."
    as the speaker's was built (9 of its 24 updates caught, as before it), then read to find that people
    write it in lower case too ("the kids go to ..."), so it is no longer held out: 12 caught now, and one
    of the 24 others closed ("spotify put the price up AGAIN ... still paying it tho"), as before."""
    wrong, caught, pairs = called_in_probe(GROUPS_PROBE)
    assert pairs == 48
    assert len(wrong) <= 1, wrong
    assert caught >= 12, caught


def test_what_one_gave_up_is_closed_and_an_episode_with_it_is_not(tmp_path: Path) -> None:
    """Leaving the trio one plays in ends playing in it, whatever else the message goes on to say; quitting
    an app to restart it is an episode with it (read along the learned ending direction), and so is a
    thing left somewhere or for a while."""
    trio = ["I play bass in a jazz trio on Fridays.",
            "I left the trio; these days I sing in a community choir."]  # fmt: skip
    closed = _closed(tmp_path / "trio", trio)
    assert len(closed) == 1 and "trio" in closed[0], closed
    app = ["I write everything in Scrivener.",
           "Quit Scrivener this morning because it froze, reopened it at ten."]  # fmt: skip
    assert _closed(tmp_path / "app", app) == []
    for name, said in {
        "figma": ["I design everything in Figma.", "Quit Figma for a bit, my laptop was overheating."],
        "bass": ["I play the bass guitar.", "I left my bass at Tom's place after the gig."],
    }.items():  # left somewhere or for a while: an episode with the thing
        assert _closed(tmp_path / name, said) == [], name

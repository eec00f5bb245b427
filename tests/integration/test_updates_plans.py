"""A plan is dated by the day it names, which lies after the words that made it: the memory still weighs
it as said when it was said, so a plan given up or changed before its day is closed by the message that
says so, and no reader shows it, or its dated event, as current. Through the real write path with the
real MiniLM embedder; the sentences are written for this test, not taken from the corpus. Then the decision
on arrangements another author wrote (``updates_plans_probe.json``), what it reaches and what it does not."""

from __future__ import annotations

import time
from pathlib import Path

from chat_closures import called_in_probe

from hermes_memory import MemoryAPI

DAY = 86400.0
START = time.time() - 20 * DAY


def _told(api: MemoryAPI, said: list[str]) -> None:
    for i, text in enumerate(said):
        assert api.remember_message(text, "chat", START + i * DAY, speaker="Noor")["success"]
    assert api.flush()["success"]


def _closed(home: Path, said: list[str]) -> list[str]:
    """What the memory closed after being told ``said``, one message a day: the closed facts' texts."""
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        _told(api, said)
        return [f.content for f in api.tier2.facts.superseded(limit=10)]


def test_a_plan_given_up_before_its_day_is_closed_when_the_user_says_so(tmp_path: Path) -> None:
    """"I'm off to a ceramics retreat in the Lake District next month", then, a day later, the retreat is
    called off for a boat trip: the retreat's fact is closed at the second message's time (though its day
    had not come), recall marks its turn by what replaced it, and its timeline event is left out."""
    said = [
        "I'm off to a ceramics retreat in the Lake District next month.",
        "I called off the ceramics retreat, I've booked a sailing week in Croatia for the spring instead.",
    ]
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        _told(api, said)
        closed = api.tier2.facts.superseded(limit=10)
        assert [f.content for f in closed if "retreat" in f.content and "Lake District" in f.content], [
            f.content for f in closed
        ]
        (retreat,) = [f for f in closed if "Lake District" in f.content]
        assert retreat.valid_to == START + DAY and retreat.valid_from is not None
        assert retreat.valid_from > retreat.valid_to  # dated later than the words that gave it up
        assert any("Lake District" in e["title"] for e in api.timeline_query(limit=10)["data"])
        hits = api.recall("What trip am I doing?", limit=10)["data"]["hits"]
        about = [h for h in hits if "Lake District" in h["text"]]
        assert about and all(h["metadata"].get("superseded_by") for h in about if h["kind"] != "fact"), about
        assert not [h for h in about if h["kind"] == "event"], about
        assert not [h for h in about if h["kind"] == "fact"], about  # a replaced fact is no candidate now


def test_an_arrangement_said_anew_for_another_day_replaces_the_earlier_one(tmp_path: Path) -> None:
    """"The christening is on the 16th of May now" names a day to come, so it asserts nothing yet of what
    holds now ("I'm switching to Emacs next month" leaves today's editor), but it is what the christening
    arranged for the 9th is now: it replaces that arrangement, and only an arrangement still to come."""
    said = [
        "My nephew's christening is on the 9th of May at St Mary's.",
        "The christening is on the 16th of May now, same church.",
    ]
    closed = _closed(tmp_path, said)
    assert [c for c in closed if "9 May" in c], closed


def test_a_plan_for_later_is_still_not_ended_by_a_new_one_for_another_day(tmp_path: Path) -> None:
    """Two plans for two days both hold: a second trip booked ends nothing of the first."""
    said = [
        "I'm flying to Lisbon for a wedding in three weeks.",
        "I've also booked a weekend in Ghent for the end of the month.",
    ]
    closed = _closed(tmp_path, said)
    assert not closed, closed


def test_an_arrangement_told_in_the_past_or_as_someone_elses_plan_can_be_given_up(tmp_path: Path) -> None:
    """An arrangement holds until its day however it was told: a booking told in the past ("I booked a
    cabin ... for next month") is given up by "the cabin is cancelled", and a relative's plan ("is going to
    Marrakesh next month") is replaced by the plan said anew for them; someone else's plan stays."""
    said = [
        "I booked a cabin in the Cairngorms for next month.",
        "My cousin Farid is going to Marrakesh next month.",
        "My neighbour Ingrid is going to Oslo next month.",
        "The Cairngorms cabin is cancelled, the owner double-booked it.",
        "Farid is going to Fez next month instead, the Marrakesh flights were too pricey.",
    ]
    closed = _closed(tmp_path, said)
    assert [c for c in closed if "Cairngorms" in c], closed
    assert [c for c in closed if "Marrakesh" in c], closed
    assert not [c for c in closed if "Oslo" in c], closed


def test_an_arrangement_that_names_no_one_is_the_speakers_and_can_be_moved(tmp_path: Path) -> None:
    """Chat drops the subject of an arrangement ("Boiler service booked for the 28th ..."): naming no one,
    it is a day on the speaker's own calendar, so the arrangement said anew for another day replaces it.
    A friend's arrangement in between is left alone."""
    said = [
        "Boiler service booked for the 28th of next month, 8 till 12.",
        "My mate Dara's stag do is next month in Riga.",
        "Boiler service is now on the 30th of next month, the engineer rang.",
    ]
    closed = _closed(tmp_path, said)
    assert [c for c in closed if "Boiler service booked" in c], closed
    assert not [c for c in closed if "Riga" in c or "30" in c], closed


PLANS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_plans_probe.json"
PLANS_PROBE_2 = Path(__file__).resolve().parents[1] / "data" / "updates_plans_probe2.json"
PLANS_PROBE_3 = Path(__file__).resolve().parents[1] / "data" / "updates_plans_probe3.json"


def test_arrangements_in_words_nobody_fitted_on() -> None:
    """Held out (``tests/data/updates_plans_probe.json``: 32 pairs about trips and dated arrangements,
    written by another author and never fitted on). The shipped decision calls none of the 14 others
    an update (a second trip, the deposit paid, "we haven't called off the party", advice to move it,
    someone else's trip) and catches 11 of the 18 given up, moved or corrected: "Not going to the lakes
    anymore", "Frankfurt got pushed back a week", "Moved book club to Sarah's", "Class reunion is the 25th
    of October" after "on the 11th", "Ana's cancelled Japan" after her plan. Of the others, some say it
    is off in words it has not learned ("the Lisbon thing is off"), and three arrangements' days have
    passed when the later statement is read (a month after the earlier one; "My flatmate Leah's hosting a
    games night at ours on Tuesday" is one since a flatmate is a person whose statement gets its fact,
    dated). This guards what is reached."""
    wrong, caught, pairs = called_in_probe(PLANS_PROBE)
    assert pairs == 32
    assert not wrong, wrong
    assert caught >= 11, caught


def test_arrangements_of_a_second_author() -> None:
    """``tests/data/updates_plans_probe2.json``: 36 pairs about outings and appointments by a second
    author who saw neither the code, the corpus nor the first probe: 20 arrangements given up, moved or
    corrected, 16 left standing or someone else's. Scored first after arrangements held as states (7 of
    20 caught; 1 before), then read to find where the rest stop: a named relative's thing ("my son Kai's
    driving test") and an arrangement that names no one ("book club dinner at Dishoom on the 28th") were
    read since, so this set is no longer held out (the third is). None of the 16 is called an update."""
    wrong, caught, pairs = called_in_probe(PLANS_PROBE_2)
    assert pairs == 36
    assert not wrong, wrong
    assert caught >= 8, caught


def test_arrangements_of_a_third_author_the_rules_were_not_written_from() -> None:
    """Held out (``tests/data/updates_plans_probe3.json``: 36 pairs about errands, bookings, meet-ups and
    parties by a third author who saw neither the code, the corpus nor the other probes, written after
    every rule for arrangements and only scored): none of the 16 left standing or someone else's is
    called an update, and 7 of the 20 given up, moved or corrected are caught (2 by the rules before
    arrangements were held as states)."""
    wrong, caught, pairs = called_in_probe(PLANS_PROBE_3)
    assert pairs == 36
    assert not wrong, wrong
    assert caught >= 7, caught

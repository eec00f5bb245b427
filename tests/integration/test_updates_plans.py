"""A plan is dated by the day it names, which lies after the words that made it: the memory still weighs
it as said when it was said, so a plan given up or changed before its day is closed by the message that
says so, and no reader shows it, or its dated event, as current. Through the real write path with the
real MiniLM embedder; the sentences are written for this test, not taken from the corpus. Then the decision
on arrangements another author wrote (``updates_plans_probe.json``), what it reaches and what it does not."""

from __future__ import annotations

import time
from pathlib import Path

from hermes_memory import MemoryAPI

DAY = 86400.0
START = time.time() - 20 * DAY


def _told(api: MemoryAPI, said: list[str]) -> None:
    for i, text in enumerate(said):
        assert api.remember_message(text, "chat", START + i * DAY, speaker="Noor")["success"]
    assert api.flush()["success"]


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
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        _told(api, said)
        closed = [f.content for f in api.tier2.facts.superseded(limit=10)]
        assert [c for c in closed if "9 May" in c], closed


def test_a_plan_for_later_is_still_not_ended_by_a_new_one_for_another_day(tmp_path: Path) -> None:
    """Two plans for two days both hold: a second trip booked ends nothing of the first."""
    said = [
        "I'm flying to Lisbon for a wedding in three weeks.",
        "I've also booked a weekend in Ghent for the end of the month.",
    ]
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        _told(api, said)
        assert not api.tier2.facts.superseded(limit=10), [f.content for f in api.tier2.facts.superseded()]


PLANS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_plans_probe.json"


def test_arrangements_in_words_nobody_fitted_on() -> None:
    """Held out (``tests/data/updates_plans_probe.json``: 32 pairs about trips and dated arrangements,
    written by another author and never fitted on). The shipped decision calls none of the 14 others
    an update (a second trip, the deposit paid, "we haven't called off the party", advice to move it,
    someone else's trip) and catches 8 of the 18 given up, moved or corrected: "Not going to the lakes
    anymore", "Frankfurt got pushed back a week", "Moved book club to Sarah's", "Class reunion is the 25th
    of October" after "on the 11th" (an arrangement said anew; 7 before that reading). Of the others, four
    arrangements were never stored as a statement, and some say it is off in words it has not learned
    ("the Lisbon thing is off"). This guards what is reached."""
    from hermes_memory.bench import updates as bench
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    pairs = bench.load(PLANS_PROBE)
    assert len(pairs) == 32 and {p.family for p in pairs} == {"trip_plan", "event_plan"}
    called = {p.id: bench.decide(detector, p, [])[0] for p in pairs}
    wrong = [p.raw["later"] for p in pairs if called[p.id] and not p.update]
    caught = sum(1 for p in pairs if called[p.id] and p.update)
    assert not wrong, wrong
    assert caught >= 8, caught

"""What a message tells anew and what it only says in passing, through the real write path with the real
MiniLM embedder: the replaced fact points at what the message first told, and an occasion in someone's
day ends nothing of theirs. Sentences are written for this test, not taken from the corpus."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from chat_closures import closed_in_chat

from hermes_memory import MemoryAPI

DAY = 86400.0
START = time.time() - 40 * DAY


def test_the_old_fact_points_at_what_the_message_first_told(tmp_path: Path) -> None:
    """A promotion at the same firm: the new message says again where the user works (extraction's
    fact of it is the one the first message stored) and names the new role. The old role's fact points
    at the new role, not at the workplace fact an earlier message told."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I'm a junior analyst at Lindqvist & Berg in Malmö.", "Okay.", "s1", START)
        api.remember_turn("Got the promotion, I'm a senior analyst at Lindqvist & Berg now.", "Okay.", "s2",
                          START + DAY)  # fmt: skip
        assert api.flush()["success"]
        closed = [f for f in api.tier2.facts.superseded(limit=10) if "junior" in f.content]
        assert len(closed) == 1 and closed[0].superseded_by, closed
        by = api.tier2.facts.get_many([closed[0].superseded_by])
        assert "senior" in next(iter(by.values())).content, by


@pytest.mark.parametrize(
    "occasion", ["Tomasz had a nosebleed in class today.", "Tomasz was off sick on Monday."]
)
def test_a_day_of_someones_ends_nothing_of_theirs_and_a_move_does(tmp_path: Path, occasion: str) -> None:
    """An event of one day that names only the person is an occasion in their life: the school they are at
    still holds. A move on a given day to a place of its own ends where they lived."""
    said = [
        "Our son Tomasz is in year three at Brookfield Primary.",
        "My friend Oyelaran lives in Bristol.",
        occasion,
        "Oyelaran moved to Cardiff on Saturday.",
    ]
    closed = [f.content for f in closed_in_chat(tmp_path, [("Ines", t) for t in said], START, DAY)]
    assert len(closed) == 1 and "Bristol" in closed[0], closed


def test_a_remark_after_news_leaves_it_told_and_a_relatives_news_is_theirs(tmp_path: Path) -> None:
    """A report after a comma that closes news told in the past is a remark on it: the news ends what he
    ran. News of a named neighbour's relative (a name of two words with its "'s") is no news of the
    neighbour, whom the user still has."""
    said = [
        "My uncle Karim still runs a bakery in Tunis.",
        "Our neighbour Señora Ruiz brought us figs this morning.",
        "Señora Ruiz's nephew is opening a bike shop in Gràcia.",
        "Karim sold the bakery in May, he says he's ready to rest.",
    ]
    closed = [f.content for f in closed_in_chat(tmp_path, [("Ines", t) for t in said], START, DAY)]
    assert len(closed) == 1 and "bakery" in closed[0], closed


def test_a_first_mention_ends_no_tie_to_someone(tmp_path: Path) -> None:
    """A car told for the first time, in a store of a few statements, ends no tie to someone: the husband
    the user has stays, whether the message is told alone or as a turn with the agent's reply (only another
    person in the role, or what befalls him, ends that)."""
    said = [
        "I'm retired and live in a small flat in Alfama with my husband Rui.",
        "Rui still does a bit of consulting for an engineering firm in Porto.",
        "I teach English conversation to adults twice a week at the parish hall.",
        "My granddaughter Inês is studying architecture in Coimbra.",
        "I drive an old Renault Clio.",
    ]
    closed = [f.content for f in closed_in_chat(tmp_path / "chat", [("Ines", t) for t in said], START, DAY)]
    assert not [c for c in closed if "husband" in c], closed
    with MemoryAPI(hermes_home=tmp_path / "turns", **{"tier3.backend": "memory"}) as api:
        for i, text in enumerate(said):
            api.remember_turn(text, "Noted.", f"s{i}", START + i * 60)
            assert api.flush()["success"]
        closed = [f.content for f in api.tier2.facts.superseded(limit=10)]
    assert "The user has a husband named Rui" not in closed, closed


def test_what_it_is_to_a_name_is_said_of_it_not_of_the_users_attribute(tmp_path: Path) -> None:
    """A remark whose subject is "it" (a place being talked about) names the value of one of the user's
    statements inside a noun phrase of its own: it ends nothing. "It's all X now", with the name as the
    complement, still says what the user's world runs on."""
    said = [
        "I'm a huge fan of the Moomin books.",
        "We keep our team docs in Confluence.",
        "We spent the weekend in Naantali. It's the home of a Moomin theme park and the harbour is lovely.",
        "We dropped Confluence, it's pretty much all Notion now.",
    ]
    closed = [f.content for f in closed_in_chat(tmp_path, [("Aino", t) for t in said], START, DAY)]
    assert len(closed) == 1 and "Confluence" in closed[0], closed

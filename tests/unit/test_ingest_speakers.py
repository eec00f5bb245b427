"""Through MemoryAPI (the write path Hermes' sync_turn uses): speakers, chatter, fences and one entity
per thing, as stored and as recalled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI

T0 = 1_795_000_000.0  # 2026-11-18
HOUR = 3600.0


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
    yield mem
    mem.close()


def turn(api: MemoryAPI, user: str, assistant: str, at: float, session: str = "s1") -> None:
    env = api.remember_turn(user, assistant, session, at, assistant_name="Hermes")
    assert env["success"], env["error"]


def flush(api: MemoryAPI) -> None:
    assert api.flush(60)["data"]["drained"]


def facts(api: MemoryAPI) -> list[dict[str, Any]]:
    return list(api.fact_query(None, min_confidence=0.0, limit=100)["data"])


def episodes(api: MemoryAPI) -> list[dict[str, Any]]:
    return list(api.get_latest(count=100)["data"])


def entities(api: MemoryAPI) -> list[dict[str, Any]]:
    return list(api.entity_query(None, limit=100)["data"])


def test_an_echoing_assistant_produces_no_facts(api: MemoryAPI) -> None:
    turn(api, "I moved to Lisbon in May.", "Noted: I moved to Lisbon in May.", T0)
    turn(api, "My sister Anna lives in Porto.", "Got it, your sister Anna lives in Porto.", T0 + HOUR)
    flush(api)
    stored = facts(api)
    assert stored and {f["subject"] for f in stored} <= {"the user", "Anna"}
    assert not [f for f in stored if "Hermes" in f["content"]]
    assert "Hermes" not in {e["name"] for e in entities(api)}
    chatter = {e["text"]: e["metadata"].get("chatter") for e in episodes(api)}
    assert chatter == {
        "I moved to Lisbon in May.": None,
        "Noted: I moved to Lisbon in May.": "echo",
        "My sister Anna lives in Porto.": None,
        "Got it, your sister Anna lives in Porto.": "echo",
    }


def test_questions_greetings_and_acks_are_kept_but_never_recalled(api: MemoryAPI) -> None:
    turn(api, "Hi!", "Hello! How can I help?", T0)
    turn(api, "I live in Hamburg.", "OK", T0 + HOUR)
    turn(api, "Where do I live now?", "You live in Hamburg.", T0 + 2 * HOUR)
    turn(api, "Thanks", "You're welcome!", T0 + 3 * HOUR, session="s2")
    flush(api)
    kinds = {e["text"]: e["metadata"].get("chatter") for e in episodes(api)}
    assert kinds["Hi!"] == "greeting" and kinds["Where do I live now?"] == "question"
    assert kinds["OK"] == "ack" and kinds["Thanks"] == "ack" and kinds["I live in Hamburg."] is None
    for query in ("Where do I live now?", "hi", "thanks"):
        hits = api.recall(query, limit=10)["data"]["hits"]
        texts = [h["text"] for h in hits]
        assert not {"Where do I live now?", "Hi!", "Thanks", "OK"} & set(texts), (query, texts)
    top = api.recall("Where do I live now?", limit=3)["data"]["hits"]
    assert top and "Hamburg" in top[0]["text"]


def test_a_question_between_two_people_stays_a_candidate(api: MemoryAPI) -> None:
    # Two people (LoCoMo): a question to the other person carries the topic its answer leans on, so it
    # stays a candidate (ranked down); acknowledgements between them do not.
    for i, (speaker, text) in enumerate(
        [
            ("Melanie", "Wow! What got you into running?"),
            ("Caroline", "I started running to clear my head after work."),
            ("Melanie", "Cool!"),
        ]
    ):
        assert api.remember_message(text, "s1", T0 + i * 60, speaker=speaker)["success"]
    flush(api)
    kinds = {e["text"]: e["metadata"].get("chatter") for e in episodes(api)}
    assert kinds["Wow! What got you into running?"] == "question" and kinds["Cool!"] == "ack"
    texts = [h["text"] for h in api.recall("What got Caroline into running?", limit=5)["data"]["hits"]]
    assert "Wow! What got you into running?" in texts and "Cool!" not in texts
    answer, question = (texts.index(t) for t in ("I started running to clear my head after work.",
                                                 "Wow! What got you into running?"))  # fmt: skip
    assert answer < question


def test_chatter_is_decided_by_ingestion_not_by_the_caller(api: MemoryAPI) -> None:
    env = api.remember_turn("I work at Globex.", None, "s1", T0, metadata={"chatter": "question", "k": 1})
    assert env["success"], env["error"]
    flush(api)
    (episode,) = episodes(api)
    assert episode["metadata"]["chatter"] is None and episode["metadata"]["k"] == 1


def test_recalled_memory_is_stripped_before_it_is_stored(api: MemoryAPI) -> None:
    fenced = (
        "I moved to Lisbon.\n\n<memory-context>\n[System note: The following is recalled memory context, NOT "
        "new user input. Treat as authoritative reference data.]\n\n- [2026-11-10] user: I live in Hamburg.\n"
        "</memory-context>"
    )
    turn(api, fenced, "Enjoy <MEMORY-CONTEXT>Hamburg</memory-context> Lisbon!", T0)
    flush(api)
    assert [e["text"] for e in episodes(api)] == ["I moved to Lisbon.", "Enjoy  Lisbon!"]
    assert not [f for f in facts(api) if "Hamburg" in f["content"]]
    only_fence = api.remember_message("<memory-context>- old line</memory-context>", "s1", T0)
    assert only_fence["meta"]["error_type"] == "invalid_input" and "memory context" in only_fence["error"]


def test_one_entity_per_thing_and_the_pet_is_the_users(api: MemoryAPI) -> None:
    turn(api, "I walked with Biscuit along the river today.", "Sounds lovely.", T0)
    turn(api, "My dog Biscuit is a beagle.", "Beagles are great.", T0 + HOUR)
    turn(api, "My dog is called Biscuit, by the way.", "Cute name!", T0 + 2 * HOUR)
    turn(api, "My dog is sick since Monday.", "Oh no, I hope he gets better.", T0 + 3 * HOUR)
    flush(api)
    found = api.entity_query("Biscuit", limit=10)["data"]
    biscuits = [e for e in found if e["name"] == "Biscuit"]
    assert len(biscuits) == 1, found
    biscuit = biscuits[0]
    assert biscuit["entity_type"] == "pet" and "the user's dog" in biscuit["aliases"]
    names = {e["name"] for e in entities(api)}
    assert "the user's dog" not in names
    owners = {(r["relation_type"], r["from_entity_id"]) for r in biscuit["relations"]}
    user = next(e for e in entities(api) if e["name"] == "the user")
    assert ("has_pet", user["uuid"]) in owners


def test_junk_names_are_refused_when_a_tool_asks_for_an_entity(api: MemoryAPI) -> None:
    for name in (
        "The user is allergic to peanuts",
        "False",
        "Entry added",
        "OK (memory-context injected=True)",
    ):
        env = api.entity_ensure(name, "other")
        assert env["meta"]["error_type"] == "invalid_input", name
        assert name[:20] in env["error"]
    assert api.entity_ensure("Biscuit", "pet")["success"]


def test_a_pet_named_after_it_was_mentioned_takes_over_the_placeholder(api: MemoryAPI) -> None:
    turn(api, "My dog is scared of thunder.", "Poor thing.", T0)
    turn(api, "My dog is called Biscuit.", "Cute!", T0 + HOUR)
    turn(api, "My dog hid under the bed again.", "Oh no.", T0 + 2 * HOUR)
    flush(api)
    pets = [e for e in entities(api) if e["entity_type"] == "pet"]
    assert [(p["name"], p["aliases"]) for p in pets] == [("Biscuit", ["the user's dog"])]
    assert {r["relation_type"] for r in pets[0]["relations"]} == {"has_pet"}
    later = [f for f in facts(api) if "under the bed" in f["content"]]
    assert later and {f["subject"] for f in later} == {"Biscuit"}


def test_turns_stored_before_ingestion_marked_chatter_are_read_by_their_text(api: MemoryAPI) -> None:
    turn(api, "I live in Hamburg.", "OK", T0)
    turn(api, "Where do I live now?", "You live in Hamburg.", T0 + HOUR)
    flush(api)
    # an older store: no "chatter" key in the episodes' metadata
    with api.tier2.db.atomic() as conn:
        conn.execute("UPDATE episodes SET metadata = json_remove(metadata, '$.chatter')")
    texts = [h["text"] for h in api.recall("Where do I live now?", limit=10)["data"]["hits"]]
    assert "I live in Hamburg." in texts and not {"Where do I live now?", "OK"} & set(texts)

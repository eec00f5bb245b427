"""The assistant's words are never evidence, and the assistant is never a person of the user's world.

An assistant reply repeats memory ("From memory: I work at Siemens ..." said for the user), tool
results or the user; read as statements in the first person they made facts about "Hermes" that reached
the block for "Where do I work now?", and "Hermes (person)" among the people who matter. Extraction
decides by role: nothing of an assistant message becomes a fact, a relation or a new entity.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_settings import api_of

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.extract import MessageInput, extract

NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
REPLIES = [
    ("Where do I work?", "From memory: I work at Siemens as a software engineer."),
    ("Where do you live?", "As an AI, I live in the cloud."),
    ("Who is my sister?", "I have a sister called Lena who lives in Porto."),
    ("Any plans?", "I moved to Berlin last year and I love my dog Rex."),
]


def _subjects(db: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(db)
    try:
        return [(r[0] or "", r[1]) for r in conn.execute("SELECT subject, content FROM facts")]
    finally:
        conn.close()


def test_an_assistant_message_yields_no_fact_relation_or_new_entity() -> None:
    for user, reply in REPLIES:
        result = extract(
            MessageInput(reply, NOW, speaker="Hermes", role="assistant", addressee="Maya", replying_to=user)
        )
        assert result.facts == () and result.relations == (), (reply, result.facts, result.relations)
        assert not [e.name for e in result.entities], (reply, result.entities)


def test_stored_turns_make_no_fact_about_the_assistant_and_no_assistant_entity(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    assert api.remember_turn("I work at Siemens as a software engineer.", "Noted.", "s1",
                             user_name="Maya", assistant_name="Hermes")["success"]  # fmt: skip
    for user, reply in REPLIES:
        assert api.remember_turn(user, reply, "s1", user_name="Maya", assistant_name="Hermes")["success"]
    assert api.flush(60)["success"]
    facts = _subjects(api.config.db_path)
    assert not [f for f in facts if "hermes" in f[0].casefold() or "Hermes" in f[1]], facts
    assert not [f for f in facts if "cloud" in f[1] or "Lena" in f[1] or "Berlin" in f[1]], facts
    assert any("Siemens" in content for _, content in facts), facts  # the user's own statement stays
    names = {e["name"] for e in api.entity_query(None, limit=100)["data"]}
    assert "Hermes" not in names and "Lena" not in names and "Rex" not in names, names
    recalled = api.recall("Where do I work now?")
    assert recalled["success"]
    assert "Hermes works" not in recalled["data"]["rendered"], recalled["data"]["rendered"]


def test_the_system_prompt_never_lists_the_assistant_among_the_people(home: Path, make: Any) -> None:
    first = make("s1")
    for user, reply in [("My colleague Tom works with me at Siemens.", "Noted."), *REPLIES]:
        first.sync_turn(user, reply, session_id="s1")
    assert api_of(home).flush(60)["success"]
    second = make("s2")
    prompt = second.system_prompt_block()
    assert "Hermes (person)" not in prompt and "Hermes works" not in prompt, prompt

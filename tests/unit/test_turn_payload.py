"""The queued turn is a typed record (``TurnPayload``) inside, and the same JSON on disk as every release
wrote: a row queued today is byte-identical to before, and rows queued by older releases (no scope, no
metadata, no speaker) are still read and written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import StorageError
from hermes_memory.ingest.turns import episode_uuid
from hermes_memory.records import TurnMessage, TurnPayload
from hermes_memory.tier2 import Tier2

HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}

# A row as remember_turn has queued it since scoping (sorted keys, compact separators).
TODAY = (
    '{"messages":[{"role":"user","speaker":"Ann","text":"I moved to Porto in May."},'
    '{"role":"assistant","speaker":null,"text":"Porto is lovely."}],'
    '"metadata":{"source":"chat"},"scope":"default","session_id":"s1","time":1700000000.5}'
)
# Rows queued before scoping and metadata existed, and one without a speaker key.
OLDER = (
    '{"messages":[{"role":"user","text":"My sister Lena plays the cello."}],'
    '"session_id":"s0","time":1600000000}'
)


def _raw_rows(t2: Tier2) -> list[str]:
    t2.ingest_queue.absorb()
    return [r["payload"] for r in t2.db.query("SELECT payload FROM ingest_queue ORDER BY id")]


def test_a_queued_turn_is_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    t2 = Tier2.open(tmp_path / "memory.db")
    try:
        said = (
            TurnMessage("user", "I moved to Porto in May.", "Ann"),
            TurnMessage("assistant", "Porto is lovely."),
        )
        payload = TurnPayload("s1", 1700000000.5, said, {"source": "chat"})
        assert t2.ingest_queue.enqueue("t1", payload)
        assert _raw_rows(t2) == [TODAY]
        [item] = t2.ingest_queue.pending(10)
        assert item.payload == TurnPayload(
            payload.session_id, payload.time, payload.messages, payload.metadata, scope="default"
        )
    finally:
        t2.close()


def test_remember_turn_queues_todays_format(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, **HASHING) as api:
        queued = api.remember_turn(
            "I moved to Porto in May.", "Porto is lovely.", "s1", 1700000000.5,
            user_name="Ann", metadata={"source": "chat"}, turn_id="t1",
        )  # fmt: skip
        assert queued["success"], queued
        assert _raw_rows(api.tier2) == [TODAY]


def test_turns_queued_in_older_formats_are_still_written(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, **HASHING) as api:
        with api.tier2.db.atomic() as conn:
            conn.executemany(
                "INSERT INTO ingest_queue(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)",
                [("old", OLDER, 1.0), ("today", TODAY, 2.0)],
            )
        written = api.ingest_pending(timeout=None)
        assert written["success"] and written["data"]["written"] == 2, written
        episodes = {e["uuid"]: e for e in api.get_latest(10)["data"]}
        old = episodes[episode_uuid("old", 0)]
        assert (old["session_id"], old["role"], old["speaker"], old["timestamp"], old["scope"]) == (
            "s0", "user", None, 1600000000.0, "default",
        )  # fmt: skip
        assert old["text"] == "My sister Lena plays the cello."
        assert old["metadata"]["turn_uuid"] == "old" and old["metadata"]["index"] == 0
        user, assistant = episodes[episode_uuid("today", 0)], episodes[episode_uuid("today", 1)]
        assert (user["speaker"], user["text"]) == ("Ann", "I moved to Porto in May.")
        assert user["timestamp"] == 1700000000.5
        assert user["metadata"]["source"] == "chat" and assistant["text"] == "Porto is lovely."
        assert api.pending()["data"]["turns"] == 0


@pytest.mark.parametrize(
    "raw",
    [
        '{"messages":[],"time":1}',  # no session id
        '{"session_id":"s","time":"soon","messages":[]}',
        '{"session_id":"s","time":1,"messages":[{"role":"user"}]}',
        '{"session_id":"s","time":1,"messages":[],"metadata":[]}',
    ],
)
def test_a_damaged_queue_row_is_a_storage_error_naming_the_turn(tmp_path: Path, raw: str) -> None:
    t2 = Tier2.open(tmp_path / "memory.db")
    try:
        with t2.db.atomic() as conn:
            conn.execute(
                "INSERT INTO ingest_queue(turn_uuid, payload, enqueued_at) VALUES ('bad', ?, 1)", (raw,)
            )
        with pytest.raises(StorageError, match="queued turn 'bad' has an unreadable payload"):
            t2.ingest_queue.pending(10)
    finally:
        t2.close()


def test_payload_round_trips_through_json() -> None:
    payload = TurnPayload("s", 5.0, (TurnMessage("user", "hi", None),), {"a": [1]}, "agent")
    assert TurnPayload.from_dict(json.loads(json.dumps(payload.to_dict()))) == payload

"""Bitemporal facts on a scripted life story: moves and job changes close old facts, never delete them;
``as_of`` answers what memory believed on a date; ``why``, ``fact_history``, ``contradictions`` explain it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hermes_memory import MemoryAPI


def ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


STORY = [
    ("2021-03-01T10:00:00", "I live in Boston."),
    ("2021-03-01T10:05:00", "I work at Acme."),
    ("2022-07-15T09:00:00", "I just moved to Denver!"),
    ("2023-02-10T18:00:00", "I got a new job at Globex."),
]


@pytest.fixture
def api(tmp_path: Path) -> MemoryAPI:
    mem = MemoryAPI(hermes_home=tmp_path, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
    for when, text in STORY:
        assert mem.remember_message(text, "life", when, speaker="Caroline")["success"]
    assert mem.flush(60)["data"]["drained"]
    yield mem
    mem.close()


def _states(api: MemoryAPI, predicate: str) -> list[tuple[str, str]]:
    return [
        (f["object"], f["status"])
        for f in api.fact_history("Caroline")["data"]
        if f["predicate"] == predicate
    ]


def test_moves_and_job_changes_supersede_without_deleting(api: MemoryAPI) -> None:
    assert _states(api, "lives_in") == [("Boston", "superseded"), ("Denver", "active")]
    assert _states(api, "works_at") == [("Acme", "superseded"), ("Globex", "active")]
    pairs = {(c["old"]["object"], c["new"]["object"]) for c in api.contradictions()["data"]}
    assert pairs == {("Boston", "Denver"), ("Acme", "Globex")}
    # never deleted: the superseded rows are still there with their validity closed
    boston = next(f for f in api.fact_history("Caroline")["data"] if f["object"] == "Boston")
    assert boston["valid_to"] is not None and boston["superseded_by"]


def test_as_of_answers_what_was_believed_then(api: MemoryAPI) -> None:
    # system time: what had memory recorded, and not yet superseded, at that moment
    rows = api.tier2.db.query(
        "SELECT object, recorded_at, superseded_at FROM facts WHERE predicate = 'lives_in'"
    )
    boston = next(r for r in rows if r["object"] == "Boston")
    denver = next(r for r in rows if r["object"] == "Denver")
    between = (boston["recorded_at"] + denver["recorded_at"]) / 2
    then = {f["content"] for f in api.fact_query("Caroline lives", as_of=between, min_confidence=0)["data"]}
    now = {f["content"] for f in api.fact_query("Caroline lives", min_confidence=0)["data"]}
    assert "Caroline lives in Boston" in then and "Caroline lives in Denver" not in then
    assert "Caroline lives in Denver" in now and "Caroline lives in Boston" not in now


def test_world_time_validity_follows_the_story(api: MemoryAPI) -> None:
    boston = next(f for f in api.fact_history("Caroline")["data"] if f["object"] == "Boston")
    assert boston["valid_from"] == pytest.approx(ts("2021-03-01T10:00:00"))
    assert boston["valid_to"] == pytest.approx(ts("2022-07-15T09:00:00"))


def test_why_names_the_source_turn_and_extractor(api: MemoryAPI) -> None:
    denver = next(
        f
        for f in api.fact_history("Caroline")["data"]
        if f["object"] == "Denver" and f["predicate"] == "lives_in"
    )
    why = api.why(denver["uuid"])["data"]
    assert why["source_episodes"][0]["text"] == "I just moved to Denver!"
    assert why["extractor"].startswith("rules")
    assert [f["object"] for f in why["supersedes"]] == ["Boston"]
    assert why["learned_at"] is not None


def test_timeline_of_an_entity_is_in_time_order(api: MemoryAPI) -> None:
    items = api.timeline("Caroline")["data"]
    times = [i["time"] for i in items]
    assert times == sorted(times) and len(items) >= 4


def test_why_of_unknown_fact_is_not_found(api: MemoryAPI) -> None:
    env = api.why("no-such-uuid")
    assert not env["success"] and env["meta"]["error_type"] == "not_found"

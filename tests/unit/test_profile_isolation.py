"""Two profiles under one HERMES_HOME: each has its own Tier 2 database file, and nothing written
through profile A (facts, entities, relations, events, audit entries) is readable through profile B."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api import MemoryAPI


@pytest.fixture
def profiles(tmp_path: Path) -> Iterator[tuple[MemoryAPI, MemoryAPI]]:
    a = MemoryAPI(hermes_home=tmp_path, profile="alice", actor="alice-agent")
    b = MemoryAPI(hermes_home=tmp_path, profile="bob", actor="bob-agent")
    yield a, b
    a.close()
    b.close()


def data(env: dict[str, Any]) -> Any:
    assert env["success"] is True, env["error"]
    return env["data"]


def test_each_profile_has_its_own_db_file(profiles: tuple[MemoryAPI, MemoryAPI], tmp_path: Path) -> None:
    a, b = profiles
    assert a.tier2.db.path == tmp_path / "alice" / "memory" / "tier2.db"
    assert b.tier2.db.path == tmp_path / "bob" / "memory" / "tier2.db"
    assert a.tier2.db.path.is_file() and b.tier2.db.path.is_file()
    assert not a.tier2.db.path.samefile(b.tier2.db.path)


def test_nothing_of_a_is_readable_through_b(profiles: tuple[MemoryAPI, MemoryAPI], tmp_path: Path) -> None:
    a, b = profiles
    secret = data(a.fact_store("Alice's bank PIN hint is the name of her first cat."))
    data(a.entity_ensure("Whiskers", "pet", ["the cat"], "Alice's first cat"))
    data(a.entity_ensure("Alice", "person"))
    data(a.entity_link("Alice", "Whiskers", "owns"))
    data(
        a.timeline_add(
            "milestone", "Alice adopted Whiskers", related_entities=["Whiskers"], timestamp=1_600_000_000.0
        )
    )

    # By text, by listing, by uuid, by name: B sees nothing.
    assert data(b.fact_query("bank PIN cat")) == []
    assert data(b.fact_query()) == []
    missing = b.fact_get(secret["uuid"])
    assert missing["success"] is False and missing["meta"]["error_type"] == "not_found"
    assert b.fact_update(secret["uuid"], confidence=0.1)["meta"]["error_type"] == "not_found"
    assert b.fact_delete(secret["uuid"])["meta"]["error_type"] == "not_found"
    assert data(b.entity_query("whiskers")) == []
    assert data(b.entity_query()) == []
    assert b.entity_link("Alice", "Whiskers", "owns")["meta"]["error_type"] == "not_found"
    assert data(b.timeline_query()) == []
    assert b.timeline_query(entity="Whiskers")["meta"]["error_type"] == "not_found"
    assert data(b.audit_log(limit=1000)) == []
    assert data(b.audit_log(target_uuid=secret["uuid"])) == []

    stats_b = data(b.stats())
    t2 = stats_b["tier2"]
    assert (t2["facts"], t2["entities"], t2["relations"], t2["timeline_events"], t2["audit_entries"]) == (
        0,
        0,
        0,
        0,
        0,
    )
    assert stats_b["profile"] == "bob"

    # A still sees all of it, untouched by B's failed attempts.
    assert [f["uuid"] for f in data(a.fact_query("bank PIN"))] == [secret["uuid"]]
    assert data(a.fact_get(secret["uuid"]))["confidence"] == 1.0


def test_same_content_in_both_profiles_is_two_independent_facts(
    profiles: tuple[MemoryAPI, MemoryAPI],
) -> None:
    a, b = profiles
    fa = data(a.fact_store("Both profiles know the office is in Hamburg."))
    fb = data(b.fact_store("Both profiles know the office is in Hamburg."))
    assert fb["created"] is True and fa["uuid"] != fb["uuid"]  # no cross-profile dedup
    data(a.fact_delete(fa["uuid"], soft=False))
    assert [f["uuid"] for f in data(b.fact_query("office hamburg"))] == [fb["uuid"]]


def test_b_db_file_contains_none_of_a_bytes(profiles: tuple[MemoryAPI, MemoryAPI]) -> None:
    a, b = profiles
    marker = "zebracorn-7f3e91"
    data(a.fact_store(f"The unique marker is {marker}."))
    data(a.entity_ensure(marker, "concept"))
    a.close()
    b.close()
    a_path, b_path = a.config.db_path, b.config.db_path
    for path, expected in ((a_path, True), (b_path, False)):
        conn = sqlite3.connect(path)
        try:
            dump = "\n".join(conn.iterdump())
        finally:
            conn.close()
        assert (marker in dump) is expected, path


def test_reopening_a_profile_sees_only_its_own_data(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, profile="alice") as a:
        data(a.fact_store("Only Alice knows this."))
    with MemoryAPI(hermes_home=tmp_path, profile="bob") as b:
        data(b.fact_store("Only Bob knows this."))
    with MemoryAPI(hermes_home=tmp_path, profile="alice") as a:
        assert [f["content"] for f in data(a.fact_query("knows"))] == ["Only Alice knows this."]
    with MemoryAPI(hermes_home=tmp_path, profile="bob") as b:
        assert [f["content"] for f in data(b.fact_query("knows"))] == ["Only Bob knows this."]

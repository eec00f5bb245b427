"""Every MemoryAPI method of tiers 1 and 2, called through the envelope, on real SQLite files and real
curated markdown files under tmp_path: facts (dedup, TTL, access tracking, soft/hard delete,
supersession), entities, relations, timeline, curated stores, stats and the audit log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api import MemoryAPI

ENVELOPE_KEYS = {"success", "data", "tier", "meta", "error"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    memory = MemoryAPI(hermes_home=tmp_path, actor="tester")
    yield memory
    memory.close()


def ok(env: dict[str, Any], tier: str = "tier2") -> Any:
    """Assert a successful envelope of the seed's shape and return its data."""
    assert set(env) == ENVELOPE_KEYS, env
    assert env["success"] is True, env["error"]
    assert env["error"] is None
    assert env["tier"] == tier
    meta = env["meta"]
    assert isinstance(meta["query_time_ms"], float) and meta["query_time_ms"] >= 0.0
    assert tier in meta["tiers_queried"] or tier == "multi"
    data = env["data"]
    expected = len(data) if isinstance(data, list) else (0 if data is None else 1)
    assert meta["results_count"] == expected
    return data


def failed(env: dict[str, Any], error_type: str) -> str:
    """Assert a failed envelope with this error type and return its message."""
    assert set(env) == ENVELOPE_KEYS, env
    assert env["success"] is False, env
    assert env["meta"]["error_type"] == error_type, env
    assert env["meta"]["results_count"] == 0
    assert isinstance(env["error"], str) and env["error"]
    return str(env["error"])


def contents(rows: list[dict[str, Any]]) -> list[str]:
    return [r["content"] for r in rows]


def audit_actions(api: MemoryAPI) -> list[str]:
    return [e["action"] for e in reversed(ok(api.audit_log(limit=1000)))]


# -- facts --------------------------------------------------------------------------------------


def test_fact_store_returns_the_stored_fact(api: MemoryAPI) -> None:
    data = ok(api.fact_store("Maya works at Nordlicht Labs.", "user", 0.9, "session", source_id="s-1"))
    assert data["created"] is True
    assert data["content"] == "Maya works at Nordlicht Labs."
    assert (data["category"], data["confidence"], data["source_type"], data["source_id"]) == (
        "user",
        0.9,
        "session",
        "s-1",
    )
    assert len(data["content_hash"]) == 64
    assert data["access_count"] == 0 and data["last_accessed"] is None
    assert data["is_archived"] is False and data["superseded_at"] is None
    assert data["recorded_at"] == data["created_at"]
    assert api.tier2.db.engine != "sqlite" or api.tier2.db.path.is_file()


def test_fact_store_strips_surrounding_whitespace(api: MemoryAPI) -> None:
    assert ok(api.fact_store("   padded fact \n"))["content"] == "padded fact"


@pytest.mark.parametrize(
    "variant",
    [
        "maya works at nordlicht labs.",
        "  MAYA   works\tat   Nordlicht Labs.  ",
        "Ｍａｙａ works at Nordlicht Labs.",
    ],
    ids=["case", "whitespace", "nfkc-fullwidth"],
)
def test_dedup_by_normalised_content(api: MemoryAPI, variant: str) -> None:
    first = ok(api.fact_store("Maya works at Nordlicht Labs.", confidence=0.6))
    again = ok(api.fact_store(variant, confidence=0.8))
    assert again["created"] is False
    assert again["uuid"] == first["uuid"]
    assert again["content_hash"] == first["content_hash"]
    assert again["confidence"] == 0.8  # the stronger statement wins
    assert api.tier2.facts.count() == 1
    assert "fact_dedupe" in audit_actions(api)


def test_different_content_is_a_different_fact(api: MemoryAPI) -> None:
    a = ok(api.fact_store("Maya works at Nordlicht Labs."))
    b = ok(api.fact_store("Maya worked at Nordlicht Labs."))
    assert a["uuid"] != b["uuid"] and b["created"] is True
    assert api.tier2.facts.count() == 2


def test_fact_query_full_text_and_filters(api: MemoryAPI) -> None:
    ok(api.fact_store("Atlas stores routes in Postgres.", "project", 0.95))
    ok(api.fact_store("Maya prefers pytest over unittest.", "preference", 0.85))
    ok(api.fact_store("Maya's sister Lena lives in Lisbon.", "relationship", 0.4))
    ok(api.fact_store("Atlas is deployed on Kubernetes.", "project", 0.9))

    assert contents(ok(api.fact_query("postgres"))) == ["Atlas stores routes in Postgres."]
    assert sorted(contents(ok(api.fact_query("atlas")))) == [
        "Atlas is deployed on Kubernetes.",
        "Atlas stores routes in Postgres.",
    ]
    assert contents(ok(api.fact_query("maya", category="preference"))) == [
        "Maya prefers pytest over unittest."
    ]
    # Default min_confidence (0.5) hides the weak fact; lowering it shows it.
    assert contents(ok(api.fact_query("lisbon"))) == []
    assert contents(ok(api.fact_query("lisbon", min_confidence=0.0))) == [
        "Maya's sister Lena lives in Lisbon."
    ]
    assert len(ok(api.fact_query("atlas", limit=1))) == 1
    rows = ok(api.fact_query("atlas postgres"))
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
    assert rows[0]["content"] == "Atlas stores routes in Postgres."
    assert ok(api.fact_query("nothing matches this")) == []


def test_fact_query_without_text_returns_the_newest_first(api: MemoryAPI) -> None:
    for i in range(3):
        ok(api.fact_store(f"Numbered fact {i}."))
    assert contents(ok(api.fact_query())) == ["Numbered fact 2.", "Numbered fact 1.", "Numbered fact 0."]
    assert contents(ok(api.fact_query(None, limit=2))) == ["Numbered fact 2.", "Numbered fact 1."]


def test_fact_get_and_access_tracking(api: MemoryAPI) -> None:
    uuid = ok(api.fact_store("Access counts rise on every read."))["uuid"]
    other = ok(api.fact_store("An unread neighbour fact."))["uuid"]
    first = ok(api.fact_get(uuid))
    assert first["access_count"] == 1 and first["last_accessed"] is not None
    second = ok(api.fact_get(uuid))
    assert second["access_count"] == 2 and second["last_accessed"] >= first["last_accessed"]
    ok(api.fact_query("access counts"))  # a search hit is a read as well
    assert api.tier2.facts.get(uuid, touch=False).access_count == 3
    assert api.tier2.facts.get(other, touch=False).access_count == 0


def test_fact_get_unknown_uuid(api: MemoryAPI) -> None:
    message = failed(api.fact_get("00000000-0000-0000-0000-000000000000"), "not_found")
    assert "00000000-0000-0000-0000-000000000000" in message


def test_fact_update(api: MemoryAPI) -> None:
    before = ok(api.fact_store("Atlas caches routes in Redis.", "project", 0.7))
    after = ok(
        api.fact_update(
            before["uuid"],
            content="Atlas caches routes in Memcached.",
            category="tool",
            confidence=0.9,
            importance=0.8,
        )
    )
    assert after["uuid"] == before["uuid"]
    assert (after["content"], after["category"], after["confidence"], after["importance"]) == (
        "Atlas caches routes in Memcached.",
        "tool",
        0.9,
        0.8,
    )
    assert after["content_hash"] != before["content_hash"]
    assert after["updated_at"] >= before["updated_at"]
    assert contents(ok(api.fact_query("redis"))) == []
    assert contents(ok(api.fact_query("memcached"))) == ["Atlas caches routes in Memcached."]
    entry = ok(api.audit_log(target_uuid=before["uuid"]))[0]
    assert entry["action"] == "fact_update"
    assert entry["diff"]["old"]["content"] == "Atlas caches routes in Redis."
    assert entry["diff"]["new"]["content"] == "Atlas caches routes in Memcached."


def test_fact_update_refusals(api: MemoryAPI) -> None:
    uuid = ok(api.fact_store("Immutable fields stay immutable."))["uuid"]
    assert "created_at" in failed(api.fact_update(uuid, created_at=0.0), "invalid_input")
    assert "content_hash" in failed(api.fact_update(uuid, content_hash="0" * 64), "invalid_input")
    assert "at least one" in failed(api.fact_update(uuid), "invalid_input")
    failed(api.fact_update("no-such-uuid", content="x y z"), "not_found")
    assert ok(api.fact_get(uuid))["content"] == "Immutable fields stay immutable."


def test_fact_soft_delete_archives(api: MemoryAPI) -> None:
    uuid = ok(api.fact_store("Soft-deleted facts are archived, not removed."))["uuid"]
    assert ok(api.fact_delete(uuid)) == {"uuid": uuid, "deleted": True, "soft": True}
    assert ok(api.fact_get(uuid))["is_archived"] is True
    assert ok(api.fact_query("archived")) == []
    stats = ok(api.stats(), "multi")["tier2"]
    assert (stats["facts"], stats["facts_active"]) == (1, 0)
    # Stating it again makes a new, active fact; the archived one stays archived.
    again = ok(api.fact_store("Soft-deleted facts are archived, not removed."))
    assert again["created"] is True and again["uuid"] != uuid


def test_fact_hard_delete_removes(api: MemoryAPI) -> None:
    uuid = ok(api.fact_store("Hard-deleted facts are gone."))["uuid"]
    assert ok(api.fact_delete(uuid, soft=False))["soft"] is False
    failed(api.fact_get(uuid), "not_found")
    assert api.tier2.facts.count() == 0
    failed(api.fact_delete(uuid, soft=False), "not_found")
    entry = ok(api.audit_log(target_uuid=uuid))[0]
    assert entry["action"] == "fact_delete" and entry["diff"] == {"soft": False}
    # The audit log records that a deletion happened, never the deleted content.
    assert all(
        "Hard-deleted" not in str(e["diff"]) for e in ok(api.audit_log()) if e["action"] == "fact_delete"
    )


def test_ttl_expiry_hides_a_fact(api: MemoryAPI) -> None:
    past = time.time() - 60
    expired = ok(api.fact_store("The door code was 4711.", expires_at=past))["uuid"]
    live = ok(api.fact_store("The door code is 8080.", ttl_days=1))
    assert live["expires_at"] == pytest.approx(time.time() + 86400, abs=60)
    assert contents(ok(api.fact_query("door code"))) == ["The door code is 8080."]
    assert ok(api.fact_get(expired))["content"] == "The door code was 4711."  # still addressable
    stats = ok(api.stats(), "multi")["tier2"]
    assert (stats["facts"], stats["facts_active"]) == (2, 1)
    # Expiring a live fact by update hides it too.
    ok(api.fact_update(live["uuid"], expires_at=past))
    assert ok(api.fact_query("door code")) == []


def test_restating_an_expired_fact_makes_it_visible_again(api: MemoryAPI) -> None:
    old = ok(api.fact_store("The wifi network is called Nordlicht.", expires_at=time.time() - 1))
    again = ok(api.fact_store("The wifi network is called Nordlicht."))
    assert again["created"] is True and again["uuid"] != old["uuid"]
    assert contents(ok(api.fact_query("wifi network"))) == ["The wifi network is called Nordlicht."]


def test_supersession_closes_the_old_fact_and_never_deletes_it(api: MemoryAPI) -> None:
    facts = api.tier2.facts
    berlin = facts.store("Maya lives in Berlin.", subject="Maya", predicate="lives_in", object="Berlin")
    pet = facts.store("Maya owns a beagle.", subject="Maya", predicate="owns", object="beagle")
    lisbon = facts.store("Maya lives in Lisbon.", subject="maya", predicate="LIVES_IN", object="Lisbon")
    assert lisbon.superseded == (berlin.fact.uuid,)

    old = ok(api.fact_get(berlin.fact.uuid))
    assert old["superseded_by"] == lisbon.fact.uuid
    assert old["superseded_at"] is not None and old["valid_to"] is not None
    assert old["is_archived"] is False  # closed, not deleted or archived
    assert ok(api.fact_get(pet.fact.uuid))["superseded_at"] is None  # another predicate is untouched
    assert api.tier2.facts.count() == 3

    assert contents(ok(api.fact_query("lives"))) == ["Maya lives in Lisbon."]
    believed_then = ok(api.fact_query("lives", as_of=berlin.fact.recorded_at))
    assert contents(believed_then) == ["Maya lives in Berlin."]
    assert [f.content for f in facts.history("Maya")] == [
        "Maya lives in Berlin.",
        "Maya owns a beagle.",
        "Maya lives in Lisbon.",
    ]
    entry = ok(api.audit_log(target_uuid=berlin.fact.uuid))[0]
    assert entry["action"] == "fact_supersede" and entry["diff"] == {"superseded_by": lisbon.fact.uuid}


def test_same_object_does_not_supersede(api: MemoryAPI) -> None:
    facts = api.tier2.facts
    a = facts.store("Maya lives in Lisbon.", subject="Maya", predicate="lives_in", object="Lisbon")
    b = facts.store("Maya is living in Lisbon now.", subject="Maya", predicate="lives_in", object="lisbon")
    assert b.superseded == ()
    assert facts.get(a.fact.uuid, touch=False).is_active


# -- entities and relations ---------------------------------------------------------------------


def test_entity_ensure_creates_then_returns_the_same_entity(api: MemoryAPI) -> None:
    created = ok(api.entity_ensure("Maya Okafor", "person", ["Maya", "M. Okafor"], "the user"))
    assert created["created"] is True
    assert created["aliases"] == ["Maya", "M. Okafor"]
    assert created["description"] == "the user" and created["occurrence_count"] == 1
    for ref in ("maya okafor", "MAYA", "m. okafor", "  Maya  "):
        again = ok(api.entity_ensure(ref, "person"))
        assert again["created"] is False and again["uuid"] == created["uuid"], ref
    assert api.tier2.entities.count() == 1
    assert api.tier2.entities.get(created["uuid"]).occurrence_count == 5


def test_entity_ensure_merges_new_aliases(api: MemoryAPI) -> None:
    uuid = ok(api.entity_ensure("Postgres", "tech"))["uuid"]
    merged = ok(api.entity_ensure("postgres", "tech", ["PostgreSQL", "pg", "POSTGRES"]))
    assert merged["uuid"] == uuid
    assert merged["aliases"] == ["PostgreSQL", "pg"]  # the name itself is not an alias
    assert ok(api.entity_query("PG"))[0]["uuid"] == uuid
    entry = ok(api.audit_log(target_uuid=uuid))[0]
    assert entry["action"] == "entity_update"
    assert entry["diff"] == {"old": {"aliases": []}, "new": {"aliases": ["PostgreSQL", "pg"]}}


def test_same_name_different_types_are_different_entities(api: MemoryAPI) -> None:
    planet = ok(api.entity_ensure("Mercury", "place"))
    tech = ok(api.entity_ensure("Mercury", "tech", description="a message broker"))
    assert planet["uuid"] != tech["uuid"] and tech["created"] is True
    found = ok(api.entity_query("mercury"))
    assert {e["entity_type"] for e in found} == {"place", "tech"}
    assert [e["uuid"] for e in ok(api.entity_query("mercury", entity_type="tech"))] == [tech["uuid"]]
    ok(api.entity_ensure("Atlas", "project"))
    # An ambiguous name in a link is refused, listing the candidates; a uuid disambiguates.
    message = failed(api.entity_link("Atlas", "Mercury", "uses"), "conflict")
    assert planet["uuid"] in message and tech["uuid"] in message
    assert ok(api.entity_link("Atlas", tech["uuid"], "uses"))["to_entity_id"] == tech["uuid"]


def test_entity_link_by_name_alias_or_uuid(api: MemoryAPI) -> None:
    maya = ok(api.entity_ensure("Maya Okafor", "person", ["Maya"]))
    org = ok(api.entity_ensure("Nordlicht Labs", "org", ["Nordlicht"]))
    rel = ok(api.entity_link("maya", "NORDLICHT", "works at", 0.8))
    assert rel["created"] is True
    assert (rel["from_entity_id"], rel["to_entity_id"]) == (maya["uuid"], org["uuid"])
    assert (rel["relation_type"], rel["strength"]) == ("works_at", 0.8)
    assert (rel["from_name"], rel["to_name"]) == ("Maya Okafor", "Nordlicht Labs")
    again = ok(api.entity_link(maya["uuid"], "Nordlicht Labs", "works_at", 0.95))
    assert again["created"] is False and again["uuid"] == rel["uuid"] and again["strength"] == 0.95
    assert api.tier2.relations.count() == 1


def test_entity_link_with_evidence_fact(api: MemoryAPI) -> None:
    ok(api.entity_ensure("Atlas", "project"))
    ok(api.entity_ensure("Postgres", "tech"))
    fact = ok(api.fact_store("Atlas stores routes in Postgres."))["uuid"]
    rel = ok(api.entity_link("Atlas", "Postgres", "depends_on", evidence_fact_id=fact))
    assert rel["evidence_fact_id"] == fact
    failed(api.entity_link("Atlas", "Postgres", "uses", evidence_fact_id="missing-fact"), "not_found")
    assert api.tier2.relations.count() == 1


def test_entity_link_unknown_entity_names_close_matches(api: MemoryAPI) -> None:
    ok(api.entity_ensure("Maya Okafor", "person", ["Maya"]))
    ok(api.entity_ensure("Nordlicht Labs", "org"))
    message = failed(api.entity_link("Mayaa", "Nordlicht Labs", "works_at"), "not_found")
    assert "Mayaa" in message and "maya" in message.lower()
    message = failed(api.entity_link("Maya", "Nordlict Labs", "works_at"), "not_found")
    assert "nordlicht labs" in message.lower()
    assert "did you mean" not in failed(api.entity_link("Maya", "Zebra", "likes"), "not_found")
    assert api.tier2.relations.count() == 0


def test_entity_query(api: MemoryAPI) -> None:
    maya = ok(api.entity_ensure("Maya Okafor", "person", ["Maya"], "backend engineer"))
    ok(api.entity_ensure("Lena", "person", description="Maya's sister"))
    ok(api.entity_ensure("Lisbon", "place"))
    ok(api.entity_link("Maya", "Lena", "sibling_of"))

    exact = ok(api.entity_query("MAYA"))
    assert exact[0]["uuid"] == maya["uuid"] and exact[0]["score"] == 1.0
    assert [r["relation_type"] for r in exact[0]["relations"]] == ["sibling_of"]
    # Full text reaches descriptions too: Lena's mentions Maya.
    assert {e["name"] for e in exact} == {"Maya Okafor", "Lena"}
    assert [e["name"] for e in ok(api.entity_query("engineer"))] == ["Maya Okafor"]
    assert {e["name"] for e in ok(api.entity_query(entity_type="person"))} == {"Maya Okafor", "Lena"}
    assert [e["name"] for e in ok(api.entity_query(None, "place"))] == ["Lisbon"]
    assert len(ok(api.entity_query(limit=2))) == 2
    assert ok(api.entity_query("nobody by this name")) == []


# -- timeline -----------------------------------------------------------------------------------

DAY = 86400.0
T0 = 1_700_000_000.0


@pytest.fixture
def timeline_api(api: MemoryAPI) -> MemoryAPI:
    ok(api.entity_ensure("Atlas", "project", ["Project Atlas"]))
    ok(api.entity_ensure("Maya Okafor", "person", ["Maya"]))
    ok(api.timeline_add("milestone", "Atlas kickoff", "first commit", 0.6, ["Project Atlas"], timestamp=T0))
    ok(api.timeline_add("decision", "Drop Redis", None, 0.8, ["Atlas", "Maya"], timestamp=T0 + DAY))
    ok(
        api.timeline_add(
            "milestone",
            "Maya adopts Biscuit",
            importance=0.3,
            related_entities=["Maya"],
            timestamp=T0 + 2 * DAY,
            session_id="sess-9",
        )
    )
    return api


def test_timeline_add_returns_the_event(api: MemoryAPI) -> None:
    atlas = ok(api.entity_ensure("Atlas", "project"))["uuid"]
    event = ok(
        api.timeline_add(
            "milestone", "Atlas 2.0 released", "big day", 0.9, ["atlas"], timestamp=T0, session_id="s1"
        )
    )
    assert (event["event_type"], event["title"], event["description"]) == (
        "milestone",
        "Atlas 2.0 released",
        "big day",
    )
    assert event["related_entities"] == [atlas]
    assert (event["timestamp"], event["importance"], event["session_id"]) == (T0, 0.9, "s1")
    now_event = ok(api.timeline_add("insight", "No timestamp means now"))
    assert now_event["timestamp"] == pytest.approx(time.time(), abs=60)


def test_timeline_query_by_range_type_and_entity(timeline_api: MemoryAPI) -> None:
    api = timeline_api

    def titles(env: dict[str, Any]) -> list[str]:
        return [e["title"] for e in ok(env)]

    assert titles(api.timeline_query()) == ["Maya adopts Biscuit", "Drop Redis", "Atlas kickoff"]
    assert titles(api.timeline_query(T0, T0 + DAY)) == ["Drop Redis", "Atlas kickoff"]  # inclusive
    assert titles(api.timeline_query(start=T0 + 1)) == ["Maya adopts Biscuit", "Drop Redis"]
    assert titles(api.timeline_query(end=T0 - 1)) == []
    assert titles(api.timeline_query(event_type="milestone")) == ["Maya adopts Biscuit", "Atlas kickoff"]
    assert titles(api.timeline_query(entity="atlas")) == ["Drop Redis", "Atlas kickoff"]
    assert titles(api.timeline_query(entity="Maya", event_type="decision")) == ["Drop Redis"]
    assert titles(api.timeline_query(limit=1)) == ["Maya adopts Biscuit"]
    failed(api.timeline_query(entity="Nobody"), "not_found")
    assert "after end" in failed(api.timeline_query(T0 + DAY, T0), "invalid_input")


def test_timeline_add_with_unknown_entity_writes_nothing(api: MemoryAPI) -> None:
    message = failed(api.timeline_add("event", "Orphan event", related_entities=["Ghost"]), "not_found")
    assert "Ghost" in message
    assert api.tier2.timeline.count() == 0


# -- tier 1 through the API ---------------------------------------------------------------------


def test_curated_methods_through_the_api(api: MemoryAPI, tmp_path: Path) -> None:
    assert ok(api.curated_get(), "tier1") == ""
    added = ok(api.curated_add("Project Atlas deploys on Fridays."), "tier1")
    assert added["changed"] is True and added["entries"] == ["Project Atlas deploys on Fridays."]
    ok(api.curated_add("Maya prefers short answers.", "user"), "tier1")
    ok(api.curated_add("The staging cluster is in Frankfurt."), "tier1")
    duplicate = ok(api.curated_add("Project Atlas deploys on Fridays."), "tier1")
    assert duplicate["changed"] is False
    assert ok(api.curated_get("memory"), "tier1") == (
        "Project Atlas deploys on Fridays.\n§\nThe staging cluster is in Frankfurt."
    )
    assert (tmp_path / "memories" / "MEMORY.md").read_text(encoding="utf-8") == ok(api.curated_get(), "tier1")
    assert (tmp_path / "memories" / "USER.md").read_text(encoding="utf-8") == "Maya prefers short answers."

    replaced = ok(api.curated_replace("Fridays", "Project Atlas deploys on Thursdays."), "tier1")
    assert replaced["entries"][0] == "Project Atlas deploys on Thursdays."
    removed = ok(api.curated_remove("Frankfurt"), "tier1")
    assert removed["entries"] == ["Project Atlas deploys on Thursdays."]
    assert ok(api.curated_entries("memory"), "tier1") == ["Project Atlas deploys on Thursdays."]
    assert ok(api.curated_entries("user"), "tier1") == ["Maya prefers short answers."]

    failed(api.curated_remove("not in any entry"), "not_found")
    failed(api.curated_add("x", store="diary"), "invalid_input")


def test_curated_limit_refusal_returns_the_current_entries(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, tier1={"memory_char_limit": 40}) as api:
        ok(api.curated_add("A short entry."), "tier1")
        env = api.curated_add("This entry is far too long to fit in the remaining space.")
        failed(env, "conflict")
        assert env["data"] == {"current_entries": ["A short entry."]}
        assert ok(api.curated_entries(), "tier1") == ["A short entry."]


def test_curated_snapshot_is_frozen_at_open(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path) as first:
        ok(first.curated_add("Known before the session started."), "tier1")
    with MemoryAPI(hermes_home=tmp_path) as api:
        ok(api.curated_add("Added during the session."), "tier1")
        snap = ok(api.curated_snapshot(), "tier1")
        assert snap["memory"] == ["Known before the session started."]
        assert snap["user"] == [] and snap["blocked"] == 0
        assert "Known before the session started." in snap["rendered"]
        assert "Added during the session." not in snap["rendered"]
        assert ok(api.curated_entries(), "tier1") == [
            "Known before the session started.",
            "Added during the session.",
        ]


# -- stats and the audit log --------------------------------------------------------------------


def test_stats_counts_every_tier(api: MemoryAPI) -> None:
    ok(api.curated_add("One curated entry."), "tier1")
    ok(api.fact_store("First fact."))
    ok(api.fact_store("Second fact."))
    ok(api.entity_ensure("Atlas", "project"))
    ok(api.entity_ensure("Postgres", "tech"))
    ok(api.entity_link("Atlas", "Postgres", "uses"))
    ok(api.timeline_add("event", "Something happened", timestamp=T0))
    env = api.stats()
    data = ok(env, "multi")
    assert {"tier1", "tier2"} <= set(env["meta"]["tiers_queried"])
    assert data["profile"] == "default"
    assert data["tier1"]["memory"]["entries"] == 1 and data["tier1"]["memory"]["limit"] == 2200
    assert data["tier1"]["user"] == {
        "entries": 0,
        "usage_chars": 0,
        "limit": 1375,
        "usage": data["tier1"]["user"]["usage"],
    }
    t2 = data["tier2"]
    assert (t2["facts"], t2["facts_active"], t2["entities"], t2["relations"], t2["timeline_events"]) == (
        2,
        2,
        2,
        1,
        1,
    )
    assert t2["schema_version"] >= 1
    assert t2["audit_entries"] == len(ok(api.audit_log(limit=1000)))
    assert (t2["db_engine"], t2["db_path"]) == (api.tier2.db.engine, api.tier2.db.location)


def test_every_write_lands_in_the_audit_log(api: MemoryAPI) -> None:
    fact = ok(api.fact_store("Audited fact."))["uuid"]
    ok(api.fact_store("audited   FACT."))
    ok(api.fact_update(fact, confidence=0.5))
    maya = ok(api.entity_ensure("Maya", "person"))["uuid"]
    ok(api.entity_ensure("Maya", "person", ["Maya O."]))
    atlas = ok(api.entity_ensure("Atlas", "project"))["uuid"]
    rel = ok(api.entity_link("Maya", "Atlas", "leads"))["uuid"]
    ok(api.entity_link("Maya", "Atlas", "leads", 0.5))
    event = ok(api.timeline_add("decision", "Audited decision", timestamp=T0))["uuid"]
    ok(api.curated_add("Audited curated entry."), "tier1")
    ok(api.curated_replace("Audited curated", "Replaced curated entry."), "tier1")
    ok(api.curated_remove("Replaced curated"), "tier1")
    ok(api.fact_delete(fact))
    ok(api.fact_delete(fact, soft=False))

    entries = list(reversed(ok(api.audit_log(limit=1000))))
    expected = [
        ("fact_store", "tier2", fact),
        ("fact_dedupe", "tier2", fact),
        ("fact_update", "tier2", fact),
        ("entity_create", "tier2", maya),
        ("entity_update", "tier2", maya),
        ("entity_create", "tier2", atlas),
        ("relation_create", "tier2", rel),
        ("relation_update", "tier2", rel),
        ("timeline_add", "tier2", event),
        ("curated_add", "tier1", None),
        ("curated_replace", "tier1", None),
        ("curated_remove", "tier1", None),
        ("fact_delete", "tier2", fact),
        ("fact_delete", "tier2", fact),
    ]
    assert [(e["action"], e["tier"], e["target_uuid"]) for e in entries] == expected
    assert all(e["actor"] == "tester" and e["success"] is True for e in entries)
    assert all(isinstance(e["diff"], dict) for e in entries)
    stamps = [e["timestamp"] for e in entries]
    assert stamps == sorted(stamps)
    by_action = {e["action"]: e["diff"] for e in entries}
    assert by_action["fact_store"]["new"]["content"] == "Audited fact."
    assert by_action["fact_update"] == {"old": {"confidence": 1.0}, "new": {"confidence": 0.5}}
    assert by_action["relation_update"] == {"old": {"strength": 1.0}, "new": {"strength": 0.5}}
    assert by_action["curated_add"] == {"store": "memory", "new": "Audited curated entry."}
    assert by_action["curated_remove"] == {"store": "memory"}


def test_refused_and_no_op_writes_add_no_audit_entries(api: MemoryAPI) -> None:
    ok(api.curated_add("Only once."), "tier1")
    before = len(ok(api.audit_log(limit=1000)))
    ok(api.curated_add("Only once."), "tier1")  # duplicate: no-op
    failed(api.fact_store(""), "invalid_input")
    failed(api.fact_update("missing", content="x y"), "not_found")
    failed(api.entity_link("A", "B", "rel"), "not_found")
    assert len(ok(api.audit_log(limit=1000))) == before


def test_audit_log_limit_and_target_filter(api: MemoryAPI) -> None:
    uuids = [ok(api.fact_store(f"Fact number {i}."))["uuid"] for i in range(5)]
    newest = ok(api.audit_log(limit=2))
    assert [e["target_uuid"] for e in newest] == [uuids[4], uuids[3]]
    assert [e["target_uuid"] for e in ok(api.audit_log(target_uuid=uuids[1]))] == [uuids[1]]
    assert ok(api.audit_log(target_uuid="unknown")) == []


def test_the_actor_is_recorded_per_api(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, actor="cron") as api:
        uuid = ok(api.fact_store("Written by the cron actor."))["uuid"]
        assert ok(api.audit_log(target_uuid=uuid))[0]["actor"] == "cron"

"""Isolation proof for scopes (issue 7): several agents on ONE store (one hermes_home, one profile, one
database file, one vector store). Nothing stored under scope A is returned, counted or exported under
scope B, on every read path (recall over every tier, fact/entity/timeline queries, lookups by uuid,
history, contradictions, semantic and hybrid search, every graph query, stats, export, the audit log,
the Hermes tools), and B cannot change or forget A's rows. With ``scope.facts: shared`` agents read the
shared facts, never each other's episodes.

Tier 1 (MEMORY.md / USER.md) is per Hermes home and shared by design (Hermes itself reads those files
for every agent of the home), so curated entries are not part of the isolation claim.

A coverage test enumerates MemoryAPI's public methods: a new method must be classified (read path
covered here, write, store-wide admin, Tier 1 or lifecycle) or the suite fails, so isolation cannot
silently regress. Hashing embedder + in-process backend for speed; one case on the default qdrant engine.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes.tools import ToolContext, call_tool

FAST: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
# Words that occur only in what agent A stored; none of them may appear in anything B gets back.
SECRETS = ("zanzibar", "quentin", "oberholzer", "bluefinch", "lisbon", "marzipan")
T0 = 1_700_000_000.0


@dataclass
class World:
    home: Path
    a: MemoryAPI
    b: MemoryAPI
    a_uuids: set[str]
    a_fact: str
    b_fact: str


def ok(env: dict[str, Any]) -> Any:
    assert env["success"] is True, env["error"]
    return env["data"]


def not_found(env: dict[str, Any]) -> None:
    assert env["success"] is False, env
    assert env["meta"]["error_type"] == "not_found", env


def _uuids(value: Any, out: set[str]) -> set[str]:
    """Every string under a key naming an id (uuid, *_uuid, *_id, ids lists) in exported data."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key == "uuid" or key.endswith(("_uuid", "_id"))) and len(item) > 8:
                out.add(item)
            else:
                _uuids(item, out)
    elif isinstance(value, list):
        for item in value:
            _uuids(item, out)
    return out


def leaked(world: World, data: Any) -> list[str]:
    """What of A's (secret words, A's record ids) appears in ``data``."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    lowered = text.casefold()
    found = [w for w in SECRETS if w in lowered]
    found += sorted(u for u in world.a_uuids if u in text)
    return found


# What the reads below ask for; an error message may repeat the question, never add an answer.
ASKED = ("Q. Oberholzer", "Quentin Oberholzer", "Quentin", "Zanzibar", "Bluefinch")


def leaked_in_error(world: World, message: str) -> list[str]:
    """What of A's an error message reveals beyond the name or id it was asked about."""
    for asked in (*ASKED, *world.a_uuids):
        message = message.replace(repr(asked), "").replace(f'"{asked}"', "")
    return leaked(world, message)


def _store_under_a(a: MemoryAPI) -> str:
    """Write through every write path of A; returns the uuid of a manual fact."""
    ok(a.remember_turn("I moved to Lisbon in 2021.", "Nice!", "a-s1", T0, user_name="Quentin Oberholzer",
                       assistant_name="Bot"))  # fmt: skip
    ok(a.remember_turn("I moved to Zanzibar last week with my dog Marzipan.", "Exciting!", "a-s1", T0 + 3600,
                       user_name="Quentin Oberholzer", assistant_name="Bot"))  # fmt: skip
    ok(a.remember_message("Quentin works at Bluefinch since May.", "a-s2", T0 + 7200, speaker="Quentin"))
    ok(a.flush(timeout=60))
    fact = ok(a.fact_store("Quentin Oberholzer prefers Zanzibar coffee.", "preference"))["uuid"]
    ok(a.entity_ensure("Quentin Oberholzer", "person", aliases=["Q. Oberholzer"]))
    ok(a.entity_ensure("Bluefinch", "org", description="Quentin's employer"))
    ok(a.entity_link("Quentin Oberholzer", "Bluefinch", "works_at"))
    ok(a.timeline_add("milestone", "Quentin launched Bluefinch in Zanzibar",
                      related_entities=["Quentin Oberholzer"], timestamp=T0 + 86400))  # fmt: skip
    ok(a.semantic_index("Zanzibar field notes by Quentin.", session_id="a-s3"))
    ok(a.embed_pending())
    return str(fact)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("scoped-home")
    a = MemoryAPI(hermes_home=home, scope="agent-a", **FAST)
    b = MemoryAPI(hermes_home=home, scope="agent-b", **FAST)
    assert a.tier2.db.path == b.tier2.db.path  # one store
    b_fact = ok(b.fact_store("Bob keeps his tea in the blue tin.", "preference"))["uuid"]
    a_fact = _store_under_a(a)
    ok(b.flush(timeout=30))
    a_uuids = _uuids(ok(a.export_json())["tier2"], set())
    a_uuids -= _uuids(ok(b.export_json())["tier2"], set())
    assert a_fact in a_uuids and len(a_uuids) > 20
    yield World(home, a, b, a_uuids, a_fact, b_fact)
    b.close()
    a.close()


# -- every read path of MemoryAPI ----------------------------------------------------------------------
Read = Callable[[World, MemoryAPI], Any]

READ_PATHS: dict[str, list[Read]] = {
    "recall": [
        lambda w, api: api.recall("Where does Quentin live? Zanzibar Bluefinch Marzipan", limit=50),
        lambda w, api: api.recall("Zanzibar", tiers=["tier2"], limit=50),
        lambda w, api: api.recall("Zanzibar Quentin", tiers=["tier3"], limit=50),
        lambda w, api: api.recall("Quentin Oberholzer Bluefinch", tiers=["graph"], limit=50),
        lambda w, api: api.recall("What happened last week?", limit=50, budget_tokens=500),
    ],
    "fact_query": [
        lambda w, api: api.fact_query("Zanzibar coffee", min_confidence=0.0),
        lambda w, api: api.fact_query(None, limit=1000, min_confidence=0.0),
        lambda w, api: api.fact_query("Quentin", as_of=T0 + 10**9, min_confidence=0.0),
    ],
    "fact_get": [lambda w, api: api.fact_get(w.a_fact)],
    "why": [lambda w, api: api.why(w.a_fact)],
    "fact_history": [
        lambda w, api: api.fact_history("Quentin Oberholzer"),
        lambda w, api: api.fact_history("Quentin"),
        lambda w, api: api.fact_history("Q. Oberholzer"),
    ],
    "contradictions": [lambda w, api: api.contradictions(limit=1000)],
    "entity_query": [
        lambda w, api: api.entity_query("Quentin"),
        lambda w, api: api.entity_query(None, limit=1000),
        lambda w, api: api.entity_query("Bluefinch", entity_type="org"),
    ],
    "timeline_query": [
        lambda w, api: api.timeline_query(limit=1000),
        lambda w, api: api.timeline_query(entity="Quentin Oberholzer"),
    ],
    "timeline": [lambda w, api: api.timeline("Quentin Oberholzer")],
    "get_latest": [lambda w, api: api.get_latest(1000)],
    "latest": [lambda w, api: api.latest(1, 1000)],
    "semantic_search": [
        lambda w, api: api.semantic_search("Zanzibar Quentin", limit=100, min_score=0.0),
        # a caller-given scope filter cannot widen the view
        lambda w, api: api.semantic_search("Zanzibar", limit=99, min_score=0.0, filters={"scope": "agent-a"}),
    ],
    "semantic_hybrid": [lambda w, api: api.semantic_hybrid("Zanzibar Quentin Bluefinch", limit=100)],
    "graph_traverse": [lambda w, api: api.graph_traverse("Quentin Oberholzer", depth=3)],
    "graph_shortest_path": [lambda w, api: api.graph_shortest_path("Quentin Oberholzer", "Bluefinch")],
    "graph_central_entities": [lambda w, api: api.graph_central_entities(limit=1000, algorithm="degree")],
    "graph_communities": [lambda w, api: api.graph_communities()],
    "graph_spread": [lambda w, api: api.graph_spread(["Quentin Oberholzer"])],
    "knowledge_graph": [lambda w, api: [api.knowledge_graph().entity_summary(u) for u in _nodes(api)]],
    "stats": [lambda w, api: api.stats()],
    "pending": [lambda w, api: api.pending()],
    "export_json": [lambda w, api: api.export_json()],
    "audit_log": [
        lambda w, api: api.audit_log(limit=1000),
        lambda w, api: api.audit_log(target_uuid=w.a_fact),
    ],
    "core_memory": [lambda w, api: api.core_memory()],
    "as_of": [
        lambda w, api: api.as_of(subject="Quentin Oberholzer"),
        lambda w, api: api.as_of(valid=T0 + 86400, query="Zanzibar coffee"),
        lambda w, api: api.as_of(valid="2030-01-01", known="2030-01-01", limit=1000),
    ],
    "working_memory": [lambda w, api: api.working_memory("a-s1"), lambda w, api: api.working_memory("a-s2")],
    "list_agents": [lambda w, api: [row for row in api.list_agents()["data"] if not row["own"]]],
    "reconstruct": [lambda w, api: api.reconstruct("Where does Quentin live?")],
    "forget": [
        lambda w, api: api.forget(w.a_fact),  # preview
        lambda w, api: api.forget(w.a_fact, confirm=True),
    ],
    "forget_entity": [
        lambda w, api: api.forget_entity("Quentin"),
        lambda w, api: api.forget_entity("Zanzibar", confirm=True),
    ],
}

# The rest of the public surface, classified. Writes land in the caller's own scope (checked below);
# admin methods are store-wide by design (maintenance, integrity, whole-store backup: see scoping.py);
# Tier 1 is per Hermes home and shared by design.
WRITES = {"remember_turn", "remember_message", "fact_store", "fact_update", "fact_delete", "entity_ensure",
          "entity_link", "timeline_add", "semantic_index", "import_json", "core_memory_update", "flush",
          "embed_pending", "graph_rebuild", "mirror_curated_write", "ingest_pending", "observe_many",
          "assert_fact", "end_session", "compress", "reflect", "add", "curated_migrate",
          "fact_correct"}  # fmt: skip
ADMIN = {"backup", "restore", "doctor", "maintain", "maintain_due", "consolidate", "prune", "reindex",
         "maintenance_context", "maintenance_runs", "maintenance_status", "finish_erasures"}  # fmt: skip
TIER1 = {"curated_add", "curated_entries", "curated_get", "curated_remove", "curated_replace",
         "curated_snapshot"}  # fmt: skip
LIFECYCLE = {"close", "core", "enabled_tiers", "tier2", "wait_closed"}


def _nodes(api: MemoryAPI) -> list[str]:
    kg = api.knowledge_graph()
    return [str(row["uuid"]) for row in kg.central_entities(10_000, "degree")]


def test_every_public_method_is_classified() -> None:
    public = {name for name, _ in inspect.getmembers(MemoryAPI) if not name.startswith("_")}
    classified = set(READ_PATHS) | WRITES | ADMIN | TIER1 | LIFECYCLE
    assert public - classified == set(), "new MemoryAPI method(s): add them to READ_PATHS or a class here"
    assert classified - public == set(), "classified methods that no longer exist"


@pytest.mark.parametrize("method", sorted(READ_PATHS))
def test_b_reads_nothing_of_a(world: World, method: str) -> None:
    for read in READ_PATHS[method]:
        env = read(world, world.b)
        data = env["data"] if isinstance(env, dict) and "success" in env else env
        assert leaked(world, data) == [], f"{method} under B returned A's data: {data!r:.400}"
        if isinstance(env, dict) and "success" in env and not env["success"]:
            assert env["meta"]["error_type"] == "not_found", env
            assert leaked_in_error(world, env["error"]) == [], env["error"]


def test_the_same_reads_under_a_do_see_a(world: World) -> None:
    # The isolation test above could pass by returning nothing at all: A must see its own data.
    a = world.a
    assert ok(a.fact_get(world.a_fact))["uuid"] == world.a_fact
    assert ok(a.why(world.a_fact))["fact"]["uuid"] == world.a_fact
    assert leaked(world, ok(a.fact_query("Zanzibar coffee", min_confidence=0.0)))
    assert leaked(world, ok(a.recall("Where does Quentin live? Zanzibar", limit=20)))
    assert leaked(world, ok(a.semantic_search("Zanzibar Quentin", min_score=0.0)))
    assert leaked(world, ok(a.semantic_hybrid("Zanzibar Quentin")))
    assert leaked(world, ok(a.graph_traverse("Quentin Oberholzer")))
    assert leaked(world, ok(a.contradictions()))
    assert leaked(world, ok(a.get_latest(5)))
    assert leaked(world, ok(a.timeline("Quentin Oberholzer")))
    assert leaked(world, ok(a.audit_log(target_uuid=world.a_fact)))
    assert ok(a.stats())["tier2"]["facts"] > 1


def test_b_counts_only_its_own_rows(world: World) -> None:
    stats = ok(world.b.stats())
    t2, t3 = stats["tier2"], stats["tier3"]
    assert (t2["facts"], t2["facts_active"], t2["entities"], t2["relations"]) == (1, 1, 0, 0)
    assert (t2["timeline_events"], t2["episodes"], t2["chunks"]) == (0, 0, 1)
    assert (t2["embed_pending"], t2["ingest_pending"], t2["audit_entries"]) == (0, 0, 1)
    assert (t3["chunks"], t3["memory_chunks"], t3["embed_pending"]) == (1, 1, 0)
    assert stats["scope"] == "agent-b"
    counts = {t: len(rows) for t, rows in ok(world.b.export_json())["tier2"].items()}
    assert counts["facts"] == 1 and counts["episodes"] == counts["entities"] == counts["timeline"] == 0
    assert world.b.knowledge_graph().entity_count == 0
    assert ok(world.a.stats())["tier2"]["episodes"] >= 4


def test_b_cannot_change_or_forget_a(world: World) -> None:
    a, b = world.a, world.b
    not_found(b.fact_update(world.a_fact, confidence=0.1))
    not_found(b.fact_correct(world.a_fact, "Quentin Oberholzer lives in Oslo"))
    not_found(b.fact_delete(world.a_fact, soft=False))
    not_found(b.entity_link("Quentin Oberholzer", "Bluefinch", "owns"))
    not_found(b.timeline_add("milestone", "Bob's event", related_entities=["Quentin Oberholzer"]))
    not_found(b.forget(world.a_fact, confirm=True))
    not_found(b.forget_entity("Quentin Oberholzer", confirm=True))
    # B's curated notes replace B's facts only: A's statement about Zanzibar stays believed.
    ok(b.mirror_curated_write("add", "user", "Quentin Oberholzer prefers Zanzibar coffee."))
    ok(b.mirror_curated_write("replace", "user", "Quentin Oberholzer lives in Oslo", "Zanzibar coffee"))
    ok(b.mirror_curated_write("remove", "user", "", "lives in Oslo"))
    ok(b.fact_query("Zanzibar"))  # B's reads touch nothing of A (access counts unchanged)
    fact = ok(a.fact_get(world.a_fact))
    assert fact["confidence"] == 1.0 and fact["is_archived"] is False and fact["superseded_at"] is None
    believed = [f["content"] for f in ok(a.fact_query("Zanzibar", limit=50))]
    assert "Quentin Oberholzer lives in Zanzibar" in believed
    assert ok(a.entity_query("Quentin Oberholzer"))[0]["relations"]
    events = ok(a.timeline_query(entity="Quentin Oberholzer"))
    assert "Quentin launched Bluefinch in Zanzibar" in [e["title"] for e in events]


def test_hermes_tools_under_b_see_nothing_of_a(world: World) -> None:
    ctx = ToolContext(api=world.b, session_id="b-sess", writable=True, after_write=lambda: None)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("nextlevel_search", {"query": "Where does Quentin live? Zanzibar"}),
        *[("nextlevel_memory", {"action": action, **args}) for action, args in (
            ("recall", {"query": "Zanzibar Quentin Bluefinch"}),
            ("fact_query", {"query": "Zanzibar"}),
            ("entity_query", {"name": "Quentin"}),
            ("timeline_query", {}),
            ("semantic_search", {"query": "Zanzibar", "min_score": 0.0}),
            ("graph_traverse", {"entity": "Quentin Oberholzer"}),
            ("graph_path", {"from_entity": "Quentin Oberholzer", "to_entity": "Bluefinch"}),
            ("graph_central", {}),
            ("stats", {}),
            ("why", {"uuid": world.a_fact}),
            ("history", {"subject": "Quentin Oberholzer"}),
            ("forget", {"uuid": world.a_fact}),
            ("forget", {"name": "Quentin", "confirm": True}),
        )],
    ]  # fmt: skip
    for tool, args in calls:
        result = json.loads(call_tool(ctx, tool, args))
        if "error" in result:
            assert result["error_type"] == "not_found", (tool, args, result)
            assert leaked_in_error(world, result["error"]) == [], (tool, args, result)
        else:
            assert leaked(world, result) == [], (tool, args, result)
    # the tools are not blind: B's own fact is found
    found = json.loads(call_tool(ctx, "nextlevel_memory", {"action": "fact_query", "query": "tea tin"}))
    assert found["result"][0]["uuid"] == world.b_fact


def test_turns_are_drained_by_their_own_scope_only(world: World) -> None:
    a, b = world.a, world.b
    ok(a.remember_message("Quentin booked a flight to Zanzibar again.", "a-s4", T0 + 9000))
    ok(b.flush(timeout=10))  # B's worker must leave A's turn alone
    assert ok(b.stats())["tier2"]["episodes"] == 0
    assert ok(a.stats())["tier2"]["ingest_pending"] == 1
    before = ok(a.stats())["tier2"]["episodes"]
    ok(a.flush(timeout=30))
    assert ok(a.stats())["tier2"]["episodes"] == before + 1
    # the same turn id in two scopes is two turns, not a duplicate
    assert ok(b.remember_message("Bob's note", "b-s1", T0, turn_id="t-1"))["queued"] is True
    assert ok(a.remember_message("Quentin's note", "a-s5", T0, turn_id="t-1"))["queued"] is True
    ok(a.flush(timeout=30))
    ok(b.flush(timeout=30))
    assert [e["text"] for e in ok(b.get_latest(10))] == ["Bob's note"]


def test_maintenance_never_merges_across_scopes(world: World) -> None:
    a, b = world.a, world.b
    same = "The office plant needs water on Fridays."
    in_a, in_b = ok(a.fact_store(same))["uuid"], ok(b.fact_store(same))["uuid"]
    assert in_a != in_b  # dedup works within a scope only
    ok(b.consolidate())
    ok(b.prune())
    assert ok(a.fact_get(in_a))["is_archived"] is False
    assert ok(b.fact_get(in_b))["is_archived"] is False
    ok(b.flush(timeout=30))  # drains every scope's pending vectors (the embed queue is shared work)
    report = ok(b.doctor())
    assert report["clean"], [f for f in report["findings"] if f["status"] != "ok"]


def test_import_writes_into_the_importers_scope(world: World, tmp_path: Path) -> None:
    doc = ok(world.a.export_json())
    other = MemoryAPI(hermes_home=tmp_path, scope="agent-import", **FAST)
    bystander = MemoryAPI(hermes_home=tmp_path, scope="agent-b", **FAST)
    try:
        ok(other.import_json(doc, merge=False))
        assert ok(other.fact_get(world.a_fact))["scope"] == "agent-import"
        assert ok(other.stats())["tier2"]["episodes"] == ok(world.a.stats())["tier2"]["episodes"]
        assert leaked(world, ok(bystander.export_json())) == []
        assert ok(bystander.stats())["tier2"]["facts"] == 0
    finally:
        bystander.close()
        other.close()


# -- shared facts --------------------------------------------------------------------------------------
def test_shared_facts_are_read_by_every_sharing_agent_but_episodes_stay_private(tmp_path: Path) -> None:
    shared: dict[str, Any] = {**FAST, "scope.facts": "shared"}
    c = MemoryAPI(hermes_home=tmp_path, scope="agent-c", **shared)
    d = MemoryAPI(hermes_home=tmp_path, scope="agent-d", **shared)
    private = MemoryAPI(hermes_home=tmp_path, scope="agent-p", **FAST)
    try:
        fact = ok(c.fact_store("The team standup moved to 9:30."))["uuid"]
        ok(c.remember_message("My secret diary: I adore marzipan.", "c-s1", T0, speaker="Carol"))
        ok(c.flush(timeout=30))
        assert ok(d.fact_get(fact))["scope"] == "shared"
        assert [f["uuid"] for f in ok(d.fact_query("standup"))] == [fact]
        assert any(h["source_ids"] == [fact] for h in ok(d.semantic_search("standup", min_score=0.0)))
        # C's episodes (and their chunks) are C's alone; what was extracted from them is a fact, and
        # facts are shared in this mode.
        diary = [e["uuid"] for e in ok(c.get_latest(10))]
        assert len(diary) == 1
        assert ok(d.get_latest(10)) == []
        for env in (d.recall("marzipan diary", limit=50), d.semantic_search("marzipan diary", min_score=0.0),
                    d.semantic_hybrid("marzipan diary")):  # fmt: skip
            hits = ok(env)["hits"] if isinstance(ok(env), dict) else ok(env)
            assert hits, "the shared fact about marzipan is found"
            assert all(h["kind"] not in ("episode", "episode_window") for h in hits), hits
            assert all(diary[0] not in h["source_ids"] for h in hits if h["kind"] != "fact"), hits
        exported = ok(d.export_json())["tier2"]
        assert exported["episodes"] == [] and all(c["source_kind"] == "fact" for c in exported["chunks"])
        assert any(h["kind"] == "episode" for h in ok(c.semantic_search("secret diary", min_score=0.0)))
        # an agent with private facts sees neither
        not_found(private.fact_get(fact))
        assert ok(private.fact_query("standup")) == []
        assert ok(private.stats())["tier2"]["facts"] == 0
    finally:
        for api in (c, d, private):
            api.close()


# -- the default engine ---------------------------------------------------------------------------------
def test_isolation_on_the_embedded_qdrant_engine(tmp_path: Path) -> None:
    opts: dict[str, Any] = {
        "tier3.embedding_model": "hashing",
        "tier3.backend": "qdrant",
        "tier3.engine_min_vectors": 0,
    }
    a = MemoryAPI(hermes_home=tmp_path, scope="agent-a", **opts)
    b = MemoryAPI(hermes_home=tmp_path, scope="agent-b", **opts)
    try:
        ok(a.fact_store("Quentin hides the spare key under the Zanzibar mat."))
        ok(b.fact_store("Bob waters the plants."))
        ok(a.embed_pending())
        found_a = ok(a.semantic_search("spare key Zanzibar", min_score=0.0))
        assert any("zanzibar" in h["text"].casefold() for h in found_a)
        for env in (b.semantic_search("spare key Zanzibar", limit=50, min_score=0.0),
                    b.semantic_hybrid("spare key Zanzibar", limit=50),
                    b.recall("spare key Zanzibar", limit=50)):  # fmt: skip
            assert "zanzibar" not in json.dumps(ok(env)).casefold()
        assert ok(b.stats())["tier3"]["memory_chunks"] == 1
    finally:
        b.close()
        a.close()

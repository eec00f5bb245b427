"""The consolidate job on a real store: duplicates and near-duplicates merged into the oldest fact,
single-valued conflicts resolved keeping the newest, alias entities merged with their relations, links
and timeline references; running it twice equals once; an interrupted run leaves a consistent store and
the next run finishes the work."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cron import consolidate, entity_merge
from hermes_memory.extract.dedup import NEAR_DUPLICATE_THRESHOLD, content_tokens, jaccard
from hermes_memory.records import Fact

Opener = Callable[..., MemoryAPI]


@pytest.fixture
def open_api(tmp_path: Path) -> Iterator[Opener]:
    opened: list[MemoryAPI] = []

    def opener(name: str = "home", **overrides: Any) -> MemoryAPI:
        settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory", **overrides}
        api = MemoryAPI(hermes_home=tmp_path / name, **settings)
        opened.append(api)
        return api

    yield opener
    for api in reversed(opened):
        api.close()


def ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def get(api: MemoryAPI, uuid: str) -> Fact:
    return api.tier2.facts.get(uuid, touch=False)


def store(api: MemoryAPI, content: str, **kwargs: Any) -> Fact:
    return api.tier2.facts.store(content, **kwargs).fact


def chunk_count(api: MemoryAPI, fact_uuid: str) -> int:
    row = api.tier2.db.query_one(
        "SELECT count(*) AS n FROM chunks WHERE source_kind = 'fact' AND source_uuid = ?", (fact_uuid,)
    )
    assert row is not None
    return int(row["n"])


# -- facts ------------------------------------------------------------------------------------------


def test_exact_duplicates_merge_into_the_oldest_and_leave_the_vector_index(open_api: Opener) -> None:
    api = open_api(**{"tier2.auto_dedupe": False})
    first = ok(api.fact_store("Maya adopted a beagle puppy.", confidence=0.6, importance=0.4))
    second = ok(api.fact_store("Maya adopted a beagle puppy.", confidence=0.9, importance=0.7))
    assert chunk_count(api, second["uuid"]) == 1

    data = ok(api.consolidate())
    assert data["duplicates_merged"] == 1 and data["near_duplicates_merged"] == 0

    kept, dup = get(api, first["uuid"]), get(api, second["uuid"])
    assert kept.is_active and (kept.confidence, kept.importance) == (0.9, 0.7)
    assert kept.access_count == 1  # the restatement counts as one use
    assert dup.is_archived and dup.superseded_by == kept.uuid and dup.superseded_at is None
    assert chunk_count(api, dup.uuid) == 0 and chunk_count(api, kept.uuid) == 1
    queued = api.tier2.db.query("SELECT op FROM embed_queue WHERE collection = 'memory_chunks'")
    assert "delete" in {r["op"] for r in queued}
    assert [f["uuid"] for f in ok(api.fact_query("beagle"))] == [kept.uuid]
    assert api.tier2.audit.entries(target_uuid=dup.uuid, action="fact_merge")[0].diff == {
        "merged_into": kept.uuid,
        "kind": "exact",
    }


def test_near_duplicates_merge_with_provenance_links_and_references(open_api: Opener) -> None:
    api = open_api()
    t2 = api.tier2
    maya = t2.entities.ensure("Maya", "person").entity
    beagle = t2.entities.ensure("Rex", "animal").entity
    kept = store(api, "Maya really loves hiking in the Alps", subject="Maya", source_episodes=["ep-1"])
    dup = t2.facts.store(
        "maya loves hiking in the alps!",
        subject="Maya",
        source_episodes=["ep-2", "ep-1"],
        entity_uuids=[maya.uuid],
    ).fact
    relation, _ = t2.relations.link(maya.uuid, beagle.uuid, "owns", evidence_fact_id=dup.uuid)
    event = t2.timeline.add("event", "hike", related_facts=[dup.uuid, kept.uuid])

    data = ok(api.consolidate())
    assert data["near_duplicates_merged"] == 1

    after = get(api, kept.uuid)
    assert after.source_episodes == ("ep-1", "ep-2")
    assert get(api, dup.uuid).superseded_by == kept.uuid
    assert [f.uuid for f in t2.facts.about_entity(maya.uuid)] == [kept.uuid, dup.uuid]
    assert t2.relations.get(relation.uuid).evidence_fact_id == kept.uuid
    assert t2.timeline.get(event.uuid).related_facts == (kept.uuid,)


def test_similar_wording_about_different_things_is_not_merged(open_api: Opener) -> None:
    api = open_api()
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = [
        # only the subjects tell these apart
        (
            {"content": "Caroline went to the big pottery class downtown with friends on Saturday",
             "subject": "Caroline"},
            {"content": "Melanie went to the big pottery class downtown with friends on Saturday",
             "subject": "Melanie"},
        ),
        # numbers, negation
        ({"content": "Maya ran 5 km in the park this morning before work with her dog Rex"},
         {"content": "Maya ran 10 km in the park this morning before work with her dog Rex"}),
        ({"content": "Tom is a fan of spicy ramen from the corner shop near the station"},
         {"content": "Tom is not a fan of spicy ramen from the corner shop near the station"}),
        # another value of the same predicate (a non-exclusive one: both stay true)
        (
            {"content": "Ana plays the old grand piano in the concert hall every Sunday evening",
             "subject": "Ana", "predicate": "plays", "object": "piano", "exclusive": False},
            {"content": "Ana plays the old grand guitar in the concert hall every Sunday evening",
             "subject": "Ana", "predicate": "plays", "object": "guitar", "exclusive": False},
        ),
    ]  # fmt: skip
    stored = []
    for a, b in pairs:
        # the premise: by wording alone these would count as near-duplicates
        assert jaccard(content_tokens(a["content"]), content_tokens(b["content"])) >= NEAR_DUPLICATE_THRESHOLD
        stored += [store(api, **a), store(api, **b)]

    data = ok(api.consolidate())
    assert data["duplicates_merged"] + data["near_duplicates_merged"] == 0
    assert all(get(api, x.uuid).is_active for x in stored)


def test_exclusive_conflicts_keep_the_newest_by_valid_from(open_api: Opener) -> None:
    api = open_api()
    structured = {"subject": "Maya", "predicate": "lives_in", "exclusive": False}
    boston = store(api, "Maya lives in Boston", object="Boston", valid_from=1_600_000_000.0, **structured)
    denver = store(api, "Maya lives in Denver", object="Denver", valid_from=1_700_000_000.0, **structured)
    # recorded last, but true from an earlier date: it does not win
    austin = store(api, "Maya lives in Austin", object="Austin", valid_from=1_650_000_000.0, **structured)
    same = store(
        api,
        "Maya has made her home in denver since spring",
        object="denver",
        valid_from=1_690_000_000.0,
        **structured,
    )
    likes = [
        store(api, f"Maya likes {x}", subject="Maya", predicate="likes", object=x, exclusive=False)
        for x in ("tea", "jazz")
    ]

    data = ok(api.consolidate())
    assert data["conflicts_resolved"] == 2

    for old in (boston, austin):
        closed = get(api, old.uuid)
        assert closed.superseded_by == denver.uuid
        assert closed.valid_to == 1_700_000_000.0 and closed.superseded_at is not None
        assert not closed.is_archived  # history, not deleted
    assert get(api, denver.uuid).is_active
    assert get(api, same.uuid).is_active  # the same value is no conflict
    assert all(get(api, f.uuid).is_active for f in likes)  # likes is not single-valued
    contradictions = ok(api.contradictions())
    assert {c["old"]["uuid"] for c in contradictions} == {boston.uuid, austin.uuid}


# -- entities ---------------------------------------------------------------------------------------


def test_alias_entity_merge_moves_relations_links_and_references(open_api: Opener) -> None:
    api = open_api()
    t2 = api.tier2
    bob = t2.entities.ensure("Bob", "person", description="plays chess").entity
    alice = t2.entities.ensure("Alice", "person").entity
    acme = t2.entities.ensure("Acme", "organization").entity
    t2.relations.link(bob.uuid, alice.uuid, "knows", strength=0.9)
    works, _ = t2.relations.link(bob.uuid, acme.uuid, "works_at", strength=0.8)
    fact = t2.facts.store("Bob joined Acme", subject="Bob", entity_uuids=[bob.uuid]).fact
    event = t2.timeline.add("event", "Bob joined Acme", related_entities=[bob.uuid, alice.uuid])
    robert = t2.entities.ensure("Robert", "person", aliases=["Bob", "Rob"]).entity
    t2.relations.link(robert.uuid, alice.uuid, "knows", strength=0.3)
    t2.relations.link(bob.uuid, robert.uuid, "same_as")
    assert ok(api.graph_traverse("Robert", 1))  # load the graph so it must follow incrementally

    data = ok(api.consolidate())
    assert (data["entities_merged"], data["relations_moved"]) == (1, 1)
    assert (data["relations_absorbed"], data["relations_dropped"]) == (1, 1)

    assert t2.entities.resolve("Bob").uuid == robert.uuid
    merged = t2.entities.get(robert.uuid)
    assert set(merged.aliases) == {"Bob", "Rob"} and merged.description == "plays chess"
    assert merged.occurrence_count == 2
    assert t2.entities.find("Bob", entity_type="person") == [merged]
    relations = {(r.from_entity_id, r.to_entity_id, r.relation_type): r for r in t2.relations.all()}
    assert set(relations) == {(robert.uuid, alice.uuid, "knows"), (robert.uuid, acme.uuid, "works_at")}
    assert relations[(robert.uuid, alice.uuid, "knows")].strength == 0.9
    assert relations[(robert.uuid, acme.uuid, "works_at")].uuid == works.uuid
    assert [f.uuid for f in t2.facts.about_entity(robert.uuid)] == [fact.uuid]
    assert t2.timeline.get(event.uuid).related_entities == (robert.uuid, alice.uuid)
    diff = t2.audit.entries(target_uuid=robert.uuid, action="entity_merge")[0].diff
    assert diff is not None and diff["merged"] == bob.uuid
    queued = {(r["item_uuid"], r["op"]) for r in t2.db.query("SELECT * FROM embed_queue")}
    assert (bob.uuid, "delete") in queued and (robert.uuid, "upsert") in queued
    # the loaded graph followed, and agrees with a rebuild from Tier 2
    reached = {r["entity"]["name"] for r in ok(api.graph_traverse("Robert", 1))["results"]}
    assert {"Alice", "Acme"} <= reached and "Bob" not in reached
    before = api.knowledge_graph().snapshot()
    ok(api.graph_rebuild())
    assert api.knowledge_graph().snapshot() == before


def test_ambiguous_or_cross_type_aliases_are_left_alone(open_api: Opener) -> None:
    api = open_api()
    t2 = api.tier2
    mom = t2.entities.ensure("Mom", "person").entity
    t2.entities.ensure("Linda", "person", aliases=["Mom"])
    t2.entities.ensure("Susan", "person", aliases=["Mom"])
    paris = t2.entities.ensure("Paris", "location").entity
    t2.entities.ensure("Paris Hilton", "person", aliases=["Paris"])
    assert ok(api.consolidate())["entities_merged"] == 0
    assert t2.entities.get(mom.uuid).name == "Mom" and t2.entities.get(paris.uuid).name == "Paris"


def test_alias_chains_and_mutual_aliases_collapse_to_one(open_api: Opener) -> None:
    api = open_api()
    t2 = api.tier2
    t2.entities.ensure("Bobby", "person")
    t2.entities.ensure("Bob", "person", aliases=["Bobby"])
    robert = t2.entities.ensure("Robert", "person", aliases=["Bob"]).entity
    for _ in range(3):
        t2.entities.ensure("Robert", "person")  # seen more often: the survivor of a mutual pair
    liz = t2.entities.ensure("Liz", "person").entity
    t2.entities.ensure("Elizabeth", "person", aliases=["Liz"])
    t2.entities.ensure("Liz", "person", aliases=["Elizabeth"])  # now each names the other

    assert ok(api.consolidate())["entities_merged"] == 3
    people = {e.name: e for e in t2.entities.all()}
    assert set(people) == {"Robert", "Liz"}
    assert people["Robert"].uuid == robert.uuid and set(people["Robert"].aliases) == {"Bob", "Bobby"}
    assert people["Liz"].uuid == liz.uuid


# -- idempotence and interruption -------------------------------------------------------------------


def build_messy_store(api: MemoryAPI) -> None:
    t2 = api.tier2
    for i in range(6):
        api.fact_store(f"Project Atlas milestone {i} shipped on time")
        api.fact_store(f"project atlas milestone {i} shipped on time!")
        store(api, f"The team really celebrated milestone {i} of Atlas", subject="team")
        store(api, f"The team celebrated milestone {i} of Atlas", subject="team")
    structured = {"subject": "Maya", "predicate": "works_at", "exclusive": False}
    store(api, "Maya works at Initech", object="Initech", valid_from=1.0, **structured)
    store(api, "Maya works at Globex", object="Globex", valid_from=2.0, **structured)
    t2.entities.ensure("Bob", "person")
    t2.entities.ensure("Robert", "person", aliases=["Bob"])


def state(api: MemoryAPI) -> dict[str, Any]:
    """Everything consolidation may change, with uuids replaced by content (stores differ in uuids)."""
    facts = {f["uuid"]: f for f in map(dict, api.tier2.db.query("SELECT * FROM facts"))}
    content = {u: f["content"] for u, f in facts.items()}

    def status(f: dict[str, Any]) -> str:
        return "archived" if f["is_archived"] else "superseded" if f["superseded_at"] else "active"

    return {
        "facts": sorted(
            (f["content"], status(f), content.get(f["superseded_by"] or ""), f["access_count"])
            for f in facts.values()
        ),
        "entities": sorted((e.name, tuple(sorted(e.aliases))) for e in api.tier2.entities.all()),
        "chunks": sorted(
            content[r["source_uuid"]]
            for r in api.tier2.db.query("SELECT source_uuid FROM chunks WHERE source_kind = 'fact'")
        ),
    }


def test_running_twice_equals_running_once(open_api: Opener) -> None:
    api = open_api()
    build_messy_store(api)
    first = ok(api.consolidate())
    assert first["duplicates_merged"] + first["near_duplicates_merged"] == 12
    assert (first["conflicts_resolved"], first["entities_merged"]) == (1, 1)
    once = state(api)
    second = ok(api.consolidate())
    assert {k: v for k, v in second.items() if k != "facts_scanned"} == dict.fromkeys(
        [k for k in second if k != "facts_scanned"], 0
    )
    assert state(api) == once


def test_an_interrupted_run_leaves_a_consistent_store_and_the_next_run_completes(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = open_api("clean")
    build_messy_store(clean)
    ok(clean.consolidate())

    api = open_api("interrupted")
    build_messy_store(api)
    before = state(api)
    monkeypatch.setattr("hermes_memory.cron.context.BATCH", 5)
    real_merge = consolidate.merge_fact
    calls = {"n": 0}

    def failing_merge(*args: Any, **kwargs: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 8:  # in the middle of the second batch
            raise RuntimeError("power cut")
        return real_merge(*args, **kwargs)

    monkeypatch.setattr(consolidate, "merge_fact", failing_merge)
    with pytest.raises(RuntimeError, match="power cut"):
        api.consolidate()
    partial = state(api)
    # the first batch (5 merges) committed as a whole; the second rolled back as a whole
    archived = [f for f in partial["facts"] if f[1] == "archived"]
    assert len(archived) == 5 and all(f[2] is not None for f in archived)
    assert partial["entities"] == before["entities"]
    assert len(partial["chunks"]) == len(before["chunks"]) - sum(
        1 for f in archived if f[0] in before["chunks"]
    )
    run = ok(api.maintenance_runs(job="consolidate"))[0]
    assert run["status"] == "failed" and "power cut" in run["error"]

    monkeypatch.setattr(consolidate, "merge_fact", real_merge)
    ok(api.consolidate())
    assert state(api) == state(clean)


def test_an_interrupted_entity_merge_rolls_back_whole(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api()
    t2 = api.tier2
    bob = t2.entities.ensure("Bob", "person").entity
    alice = t2.entities.ensure("Alice", "person").entity
    t2.relations.link(bob.uuid, alice.uuid, "knows")
    robert = t2.entities.ensure("Robert", "person", aliases=["Bob"]).entity

    def broken(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(entity_merge, "replace_in_timeline", broken)  # after relations moved
    with pytest.raises(RuntimeError):
        api.consolidate()
    assert t2.entities.get(bob.uuid).name == "Bob"
    assert [r.from_entity_id for r in t2.relations.all()] == [bob.uuid]
    monkeypatch.undo()
    assert ok(api.consolidate())["entities_merged"] == 1
    assert [r.from_entity_id for r in t2.relations.all()] == [robert.uuid]


def test_one_name_with_a_generic_and_a_specific_type_becomes_one_entity(open_api: Opener) -> None:
    # A store written before extraction reused a name across types: "Biscuit" (other) and the pet.
    api = open_api()
    t2 = api.tier2
    bare = t2.entities.ensure("Biscuit", "other").entity
    pet = t2.entities.ensure("Biscuit", "pet", aliases=["the user's dog"]).entity
    user = t2.entities.ensure("the user", "person").entity
    t2.relations.link(user.uuid, pet.uuid, "has_pet")
    t2.relations.link(user.uuid, bare.uuid, "walks_with")
    jordan = t2.entities.ensure("Jordan", "other").entity
    t2.entities.ensure("Jordan", "person")
    t2.entities.ensure("Jordan", "place")  # two specific types: ambiguous, left alone
    data = ok(api.consolidate())
    assert data["entities_merged"] == 1
    biscuits = t2.entities.find("Biscuit")
    assert [(e.uuid, e.entity_type) for e in biscuits] == [(pet.uuid, "pet")]
    assert {r.relation_type for r in t2.relations.for_entity(pet.uuid)} == {"has_pet", "walks_with"}
    assert t2.entities.get(jordan.uuid).entity_type == "other"
    assert ok(api.consolidate())["entities_merged"] == 0

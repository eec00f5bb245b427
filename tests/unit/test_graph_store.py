"""KnowledgeGraph: incremental updates equal a rebuild, resolution, persistence, GraphML."""

from __future__ import annotations

import json
import os
import pickle
import random
from pathlib import Path

import networkx as nx
import pytest

from hermes_memory.errors import ConflictError, NotFoundError, StorageError, ValidationError
from hermes_memory.graph import (
    AmbiguousEntityError,
    EntityNotFoundError,
    KnowledgeGraph,
    LoadStatus,
    graph_fingerprint,
)
from hermes_memory.records import Entity, Relation


def ent(
    uuid: str,
    name: str,
    entity_type: str = "person",
    aliases: tuple[str, ...] = (),
    occurrences: int = 1,
    description: str | None = None,
    metadata: dict[str, object] | None = None,
) -> Entity:
    return Entity(uuid, name, entity_type, aliases, description, 100.0, 200.0, occurrences, metadata or {})


def rel(uuid: str, source: str, target: str, relation_type: str = "knows", strength: float = 1.0) -> Relation:
    return Relation(uuid, source, target, relation_type, strength, f"fact-{uuid}", 100.0, 150.0)


ENTITIES = [
    ent("e-alice", "Alice", aliases=("Ali",), occurrences=5, metadata={"team": "core", "tags": ["a"]}),
    ent("e-bob", "Bob", description="builder"),
    ent("e-alpha", "Projekt Alpha", "project", aliases=("Alpha", "PA")),
    ent("e-py", "Python", "tech"),
    ent("e-apple-org", "Apple", "org", occurrences=9),
    ent("e-apple-fruit", "Apple", "concept", occurrences=2),
]
RELATIONS = [
    rel("r-ab", "e-alice", "e-bob"),
    rel("r-a-alpha", "e-alice", "e-alpha", "works_on", 0.9),
    rel("r-a-alpha-lead", "e-alice", "e-alpha", "leads", 0.4),  # second relation, same pair
    rel("r-alpha-py", "e-alpha", "e-py", "depends_on", 0.7),
    rel("r-self", "e-py", "e-py", "related_to", 0.3),
]


@pytest.fixture
def kg(tmp_path: Path) -> KnowledgeGraph:
    graph = KnowledgeGraph(tmp_path)
    graph.rebuild(ENTITIES, RELATIONS)
    return graph


def test_incremental_updates_equal_full_rebuild(tmp_path: Path) -> None:
    final_entities = {e.uuid: e for e in ENTITIES}
    final_relations = {r.uuid: r for r in RELATIONS}
    incremental = KnowledgeGraph()
    rng = random.Random(7)
    entities = list(ENTITIES)
    rng.shuffle(entities)
    for entity in entities:
        incremental.upsert_entity(entity)
    relations = list(RELATIONS)
    rng.shuffle(relations)
    for relation in relations:
        incremental.upsert_relation(relation)
    for uuid in final_entities:  # fill the per-entity caches so the updates below must invalidate them
        incremental.traverse(uuid, depth=3)
        incremental.spread([uuid])
    # updates: rename, move a relation to other endpoints, change a strength, delete things
    renamed = ent("e-bob", "Robert", aliases=("Bob",), occurrences=3)
    incremental.upsert_entity(renamed)
    final_entities["e-bob"] = renamed
    moved = rel("r-ab", "e-bob", "e-py", "uses", 0.5)
    incremental.upsert_relation(moved)
    final_relations["r-ab"] = moved
    weaker = rel("r-alpha-py", "e-alpha", "e-py", "depends_on", 0.2)
    incremental.upsert_relation(weaker)
    final_relations["r-alpha-py"] = weaker
    assert incremental.remove_relation("r-a-alpha-lead") is True
    del final_relations["r-a-alpha-lead"]
    assert incremental.remove_entity("e-apple-fruit") == []
    del final_entities["e-apple-fruit"]

    full = KnowledgeGraph()
    full.rebuild(final_entities.values(), final_relations.values())
    assert incremental.snapshot() == full.snapshot()
    assert incremental.entity_count == 5
    assert incremental.relation_count == 4
    for uuid, entity in final_entities.items():
        assert incremental.traverse(uuid, depth=3) == full.traverse(uuid, depth=3)
        assert incremental.spread([uuid], threshold=0.0) == full.spread([uuid], threshold=0.0)
        for ref in (entity.name, *entity.aliases):
            assert incremental.resolve(ref, entity.entity_type) == full.resolve(ref, entity.entity_type)
    with pytest.raises(NotFoundError):
        incremental.resolve("Apple", entity_type="concept")  # the removed entity is gone from the index


def test_node_and_edge_attributes_follow_the_seed_schema(kg: KnowledgeGraph) -> None:
    snap = kg.snapshot()
    alice = snap["nodes"]["e-alice"]
    assert alice["node_type"] == "entity"
    assert {"uuid", "name", "entity_type", "weight", "created_at", "last_seen", "aliases", "metadata"} <= set(
        alice
    )
    assert alice["aliases"] == ["Ali"]
    assert alice["metadata"] == {"team": "core", "tags": ["a"]}
    assert alice["weight"] == 5.0
    edge = snap["edges"]["r-a-alpha"]
    assert edge == {
        "from": "e-alice",
        "to": "e-alpha",
        "uuid": "r-a-alpha",
        "relation_type": "works_on",
        "strength": 0.9,
        "evidence": "fact-r-a-alpha",
        "first_seen": 100.0,
        "last_seen": 150.0,
        "bidirectional": False,
    }
    assert snap["edges"]["r-ab"]["bidirectional"] is True  # "knows" is symmetric


def test_parallel_relations_between_one_pair_are_separate_edges(kg: KnowledgeGraph) -> None:
    assert kg.relation_dict("r-a-alpha")["relation_type"] == "works_on"
    assert kg.relation_dict("r-a-alpha-lead")["relation_type"] == "leads"
    kg.remove_relation("r-a-alpha")
    assert kg.relation_dict("r-a-alpha-lead")["strength"] == 0.4
    with pytest.raises(NotFoundError):
        kg.relation_dict("r-a-alpha")


def test_remove_entity_drops_its_relations_and_name(kg: KnowledgeGraph) -> None:
    assert kg.remove_entity("e-alpha") == ["r-a-alpha", "r-a-alpha-lead", "r-alpha-py"]
    assert "e-alpha" not in kg
    assert kg.relation_count == 2
    with pytest.raises(NotFoundError):
        kg.resolve("Alpha")
    assert kg.remove_entity("e-alpha") == []
    assert kg.remove_relation("r-alpha-py") is False


def test_relation_to_unknown_entity_is_refused_by_upsert_and_skipped_by_rebuild() -> None:
    kg = KnowledgeGraph()
    kg.upsert_entity(ent("e-1", "One"))
    with pytest.raises(NotFoundError):
        kg.upsert_relation(rel("r-x", "e-1", "e-missing"))
    report = kg.rebuild([ent("e-1", "One")], [rel("r-x", "e-1", "e-missing"), rel("r-ok", "e-1", "e-1")])
    assert report["skipped_relations"] == ["r-x"]
    assert report["relations"] == 1


def test_malformed_records_raise_validation_error() -> None:
    kg = KnowledgeGraph()
    with pytest.raises(ValidationError):
        kg.upsert_entity(ent("", "Nameless"))
    with pytest.raises(ValidationError):
        kg.upsert_entity(ent("e-1", "   "))
    kg.upsert_entity(ent("e-1", "One"))
    with pytest.raises(ValidationError):
        kg.upsert_relation(rel("r-1", "e-1", "e-1", strength=float("nan")))
    kg.upsert_relation(rel("r-2", "e-1", "e-1", strength=3.0))
    assert kg.relation_dict("r-2")["strength"] == 1.0  # clamped into [0, 1]


def test_resolve_by_uuid_name_alias_any_case(kg: KnowledgeGraph) -> None:
    assert kg.resolve("e-alpha") == "e-alpha"
    assert kg.resolve("projekt alpha") == "e-alpha"
    assert kg.resolve("  PROJEKT   Alpha ") == "e-alpha"
    assert kg.resolve("pa") == "e-alpha"
    assert kg.resolve("ali") == "e-alice"


def test_canonical_name_beats_an_alias(kg: KnowledgeGraph) -> None:
    kg.upsert_entity(ent("e-ali", "Ali", "person"))
    assert kg.resolve("Ali") == "e-ali"


def test_ambiguous_name_lists_candidates_and_entity_type_disambiguates(kg: KnowledgeGraph) -> None:
    with pytest.raises(AmbiguousEntityError) as info:
        kg.resolve("apple")
    error = info.value
    assert isinstance(error, ConflictError)
    assert [c["uuid"] for c in error.candidates] == ["e-apple-org", "e-apple-fruit"]  # most seen first
    assert "org" in str(error) and "concept" in str(error) and "entity_type" in str(error)
    assert kg.resolve("Apple", entity_type="ORG") == "e-apple-org"
    assert kg.resolve("apple", entity_type="concept") == "e-apple-fruit"


def test_unknown_entity_names_close_matches(kg: KnowledgeGraph) -> None:
    with pytest.raises(EntityNotFoundError) as info:
        kg.resolve("Pyhton")
    assert info.value.suggestions == ["Python"]
    assert '"Python"' in str(info.value)
    with pytest.raises(NotFoundError, match="close matches: none"):
        kg.resolve("zzzzzz")
    with pytest.raises(EntityNotFoundError):
        kg.resolve("Python", entity_type="person")


def test_save_load_round_trip(kg: KnowledgeGraph, tmp_path: Path) -> None:
    fingerprint = graph_fingerprint(6, 5, 150.0)
    path = kg.save(fingerprint)
    assert path == tmp_path / "knowledge_graph.pickle"
    assert [p.name for p in tmp_path.iterdir()] == ["knowledge_graph.pickle"]  # no temp file left
    fresh = KnowledgeGraph(tmp_path)
    result = fresh.load(expected_fingerprint=fingerprint)
    assert result.ok and result.status is LoadStatus.LOADED
    assert (result.entities, result.relations) == (6, 5)
    assert fresh.snapshot() == kg.snapshot()
    assert fresh.resolve("alpha") == "e-alpha"
    assert fresh.fingerprint == fingerprint
    assert json.loads(json.dumps(result.to_dict()))["status"] == "loaded"


def test_load_reports_missing_file(tmp_path: Path) -> None:
    result = KnowledgeGraph(tmp_path / "nowhere").load()
    assert result.status is LoadStatus.MISSING and not result.ok


@pytest.mark.parametrize(
    "content",
    [b"", b"not a pickle at all", pickle.dumps({"format": "something else"}), pickle.dumps([1, 2])],
)
def test_load_reports_corrupt_file_and_keeps_the_graph(
    kg: KnowledgeGraph, tmp_path: Path, content: bytes
) -> None:
    before = kg.snapshot()
    (tmp_path / "knowledge_graph.pickle").write_bytes(content)
    result = kg.load()
    assert result.status is LoadStatus.CORRUPT
    assert kg.snapshot() == before


def test_load_reports_truncated_file(kg: KnowledgeGraph, tmp_path: Path) -> None:
    path = kg.save()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert KnowledgeGraph(tmp_path).load().status is LoadStatus.CORRUPT


def test_load_refuses_a_pickle_that_would_run_code(tmp_path: Path) -> None:
    class Boom:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.getenv, ("HOME",))  # any global is refused, harmless or not

    payload = {
        "format": "hermes-memory/graph",
        "version": 1,
        "fingerprint": None,
        "nodes": [Boom()],
        "edges": [],
    }
    (tmp_path / "knowledge_graph.pickle").write_bytes(pickle.dumps(payload))
    result = KnowledgeGraph(tmp_path).load()
    assert result.status is LoadStatus.CORRUPT
    assert "refusing global" in result.detail


def test_load_reports_stale_and_incompatible_files(kg: KnowledgeGraph, tmp_path: Path) -> None:
    kg.save("e=6;r=5;t=1")
    fresh = KnowledgeGraph(tmp_path)
    stale = fresh.load(expected_fingerprint="e=7;r=5;t=2")
    assert stale.status is LoadStatus.STALE
    assert fresh.entity_count == 0
    payload = {"format": "hermes-memory/graph", "version": 999, "nodes": [], "edges": []}
    (tmp_path / "knowledge_graph.pickle").write_bytes(pickle.dumps(payload))
    assert fresh.load().status is LoadStatus.INCOMPATIBLE


def test_save_without_directory_raises_storage_error() -> None:
    with pytest.raises(StorageError):
        KnowledgeGraph().save()


def test_graphml_is_written_and_readable(kg: KnowledgeGraph, tmp_path: Path) -> None:
    kg.save("fp", graphml=True)
    path = tmp_path / "knowledge_graph.graphml"
    back = nx.read_graphml(path, force_multigraph=True)
    assert set(back.nodes) == {e.uuid for e in ENTITIES}
    assert {k for _, _, k in back.edges(keys=True)} == {r.uuid for r in RELATIONS}
    alice = back.nodes["e-alice"]
    assert alice["name"] == "Alice"
    assert json.loads(alice["aliases"]) == ["Ali"]
    assert json.loads(alice["metadata"]) == {"team": "core", "tags": ["a"]}
    assert "description" not in alice  # None is omitted, not written as "None"
    assert back.nodes["e-bob"]["description"] == "builder"
    edge = back.edges["e-alice", "e-alpha", "r-a-alpha"]
    assert edge["relation_type"] == "works_on"
    assert edge["strength"] == pytest.approx(0.9)
    assert back.graph["fingerprint"] == "fp"

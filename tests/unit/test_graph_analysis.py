"""Centrality and communities on graphs whose answer is obvious."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.graph import KnowledgeGraph, centrality
from hermes_memory.records import Entity, Relation


def ent(uuid: str, name: str | None = None) -> Entity:
    return Entity(uuid, name or uuid.upper(), "thing", (), None, 1.0, 2.0, 1, {})


def rel(
    uuid: str, source: str, target: str, strength: float = 1.0, relation_type: str = "related_to"
) -> Relation:
    return Relation(uuid, source, target, relation_type, strength, None, 1.0, 2.0)


def hub_graph() -> KnowledgeGraph:
    """hub joins two short chains and a few leaves: most central by every measure."""
    entities = [ent(u) for u in ("hub", "a1", "a2", "b1", "b2", "l1", "l2", "l3")]
    relations = [
        rel("r1", "a2", "a1"),
        rel("r2", "a1", "hub"),
        rel("r3", "hub", "b1"),
        rel("r4", "b1", "b2"),
        rel("r5", "l1", "hub"),
        rel("r6", "hub", "l2"),
        rel("r7", "l3", "hub", 0.5),
        rel("r8", "hub", "hub"),  # a self-loop must not count
        rel("r9", "a1", "hub", 0.3, "also"),  # a parallel relation must not double-count
    ]
    kg = KnowledgeGraph()
    kg.rebuild(entities, relations)
    return kg


def two_clusters(order_seed: int | None = None) -> KnowledgeGraph:
    """a 5-clique and a 4-clique joined by one weak relation."""
    left = [f"l{i}" for i in range(5)]
    right = [f"r{i}" for i in range(4)]
    entities = [ent(u) for u in left + right]
    relations = []
    for group in (left, right):
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                relations.append(rel(f"{a}-{b}", a, b, 0.9))
    relations.append(rel("bridge", "l0", "r0", 0.1))
    relations.append(rel("loop", "l1", "l1"))
    kg = KnowledgeGraph()
    if order_seed is None:
        kg.rebuild(entities, relations)
    else:
        rng = random.Random(order_seed)
        rng.shuffle(entities)
        rng.shuffle(relations)
        for entity in entities:
            kg.upsert_entity(entity)
        for relation in relations:
            kg.upsert_relation(relation)
    return kg


@pytest.mark.parametrize("algorithm", ["degree", "pagerank", "betweenness"])
def test_hub_is_most_central(algorithm: str) -> None:
    top = hub_graph().central_entities(limit=3, algorithm=algorithm)
    assert top[0]["entity"]["uuid"] == "hub"
    assert top[0]["rank"] == 1 and top[0]["algorithm"] == algorithm
    assert top[0]["score"] > top[1]["score"]
    assert len(top) == 3


def test_degree_counts_distinct_neighbours() -> None:
    scores = centrality.scores(hub_graph(), "degree")
    assert scores["hub"] == pytest.approx(5 / 7)  # a1, b1, l1, l2, l3 out of 7 others


def test_pagerank_matches_networkx() -> None:
    pytest.importorskip("scipy")  # nx.pagerank needs scipy; ours does not
    kg = two_clusters()
    ours = centrality.scores(kg, "pagerank")
    theirs = nx.pagerank(centrality.analysis_graph(kg), weight="weight", tol=1e-10, max_iter=1000)
    assert ours == pytest.approx(theirs, abs=1e-8)


def test_betweenness_above_the_exact_limit_is_sampled_deterministically(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(centrality, "BETWEENNESS_EXACT_MAX", 4)
    monkeypatch.setattr(centrality, "BETWEENNESS_SAMPLES", 4)
    first = hub_graph().central_entities(limit=8, algorithm="betweenness")
    second = hub_graph().central_entities(limit=8, algorithm="betweenness")
    assert first[0]["approximate"] is True
    assert first == second


def test_scores_are_recomputed_after_a_change() -> None:
    kg = hub_graph()
    assert kg.central_entities(1, "degree")[0]["entity"]["uuid"] == "hub"
    for i in range(8):
        kg.upsert_entity(ent(f"n{i}"))
        kg.upsert_relation(rel(f"rn{i}", "b2", f"n{i}"))
    assert kg.central_entities(1, "degree")[0]["entity"]["uuid"] == "b2"


def test_bad_algorithm_and_limit() -> None:
    kg = hub_graph()
    with pytest.raises(ValidationError, match="pagerank"):
        kg.central_entities(algorithm="closeness")
    with pytest.raises(ValidationError):
        kg.central_entities(limit=0)


def test_empty_graph_has_no_central_entities_or_communities() -> None:
    kg = KnowledgeGraph()
    for algorithm in centrality.ALGORITHMS:
        assert kg.central_entities(algorithm=algorithm) == []
    assert kg.communities() == []


def test_two_obvious_clusters_are_two_communities() -> None:
    groups = two_clusters().communities()
    assert [[m["uuid"] for m in g] for g in groups] == [
        ["l0", "l1", "l2", "l3", "l4"],
        ["r0", "r1", "r2", "r3"],
    ]
    assert set(groups[0][0]) == {"uuid", "name", "entity_type"}


def test_communities_do_not_depend_on_write_order() -> None:
    expected = two_clusters().communities()
    for seed in (1, 2, 3):
        assert two_clusters(order_seed=seed).communities() == expected


def test_isolated_entities_are_singletons_and_min_size_drops_them() -> None:
    kg = two_clusters()
    kg.upsert_entity(ent("alone"))
    assert [len(g) for g in kg.communities()] == [5, 4, 1]
    assert [len(g) for g in kg.communities(min_size=2)] == [5, 4]
    with pytest.raises(ValidationError):
        kg.communities(resolution=0)

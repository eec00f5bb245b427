"""Spreading activation (closer > farther, stronger > weaker) and Hebbian reinforcement."""

from __future__ import annotations

import random

import pytest

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.graph import KnowledgeGraph
from hermes_memory.records import Entity, Relation


def ent(uuid: str, name: str | None = None) -> Entity:
    return Entity(uuid, name or uuid.capitalize(), "thing", (), None, 1.0, 2.0, 1, {})


def rel(uuid: str, source: str, target: str, strength: float = 1.0, relation_type: str = "knows") -> Relation:
    return Relation(uuid, source, target, relation_type, strength, None, 1.0, 2.0)


# seed -(1.0)- near -(1.0)- far -(1.0)- farthest ; seed -(0.9)- strong ; weak -(0.2)-> seed (reverse)
# other -(0.5)- near (unrelated to the seed directly); island has no relations
ENTITIES = [ent(u) for u in ("seed", "near", "far", "farthest", "strong", "weak", "other", "island")]
RELATIONS = [
    rel("r-sn", "seed", "near"),
    rel("r-nf", "near", "far"),
    rel("r-ff", "far", "farthest"),
    rel("r-ss", "seed", "strong", 0.9),
    rel("r-ws", "weak", "seed", 0.2, "mentions"),
    rel("r-on", "other", "near", 0.5),
]


@pytest.fixture
def kg() -> KnowledgeGraph:
    graph = KnowledgeGraph()
    graph.rebuild(ENTITIES, RELATIONS)
    return graph


def test_closer_entities_get_more_activation(kg: KnowledgeGraph) -> None:
    act = kg.spread(["seed"], decay=0.5, max_hops=3, threshold=0.0)
    assert act["seed"] == 1.0
    assert act["near"] > act["far"] > act["farthest"] > 0
    assert "island" not in act


def test_stronger_relations_pass_more_activation_both_directions(kg: KnowledgeGraph) -> None:
    act = kg.spread(["seed"], max_hops=1, threshold=0.0)
    assert act["near"] > act["strong"] > act["weak"] > 0  # 1.0 > 0.9 > 0.2, weak is reached backwards
    assert set(act) == {"seed", "near", "strong", "weak"}
    # the seed hands on at most activation * decay in total
    assert act["near"] + act["strong"] + act["weak"] == pytest.approx(0.5)


def test_result_is_sorted_and_thresholded(kg: KnowledgeGraph) -> None:
    act = kg.spread({"seed": 1.0}, threshold=0.05)
    assert list(act.values()) == sorted(act.values(), reverse=True)
    assert all(v >= 0.05 for v in act.values())
    assert "farthest" not in act


def test_max_hops_limits_the_reach(kg: KnowledgeGraph) -> None:
    assert kg.spread(["seed"], max_hops=0) == {"seed": 1.0}
    assert "far" not in kg.spread(["seed"], max_hops=1, threshold=0.0)


def test_weighted_seeds_and_two_paths_add_up(kg: KnowledgeGraph) -> None:
    one = kg.spread({"seed": 1.0}, max_hops=1, threshold=0.0)
    two = kg.spread({"seed": 1.0, "other": 1.0}, max_hops=1, threshold=0.0)
    assert two["near"] > one["near"]
    scaled = kg.spread({"Seed": 0.5}, max_hops=1, threshold=0.0)  # names resolve too
    assert scaled["near"] == pytest.approx(one["near"] / 2)


def test_relation_filter_restricts_spreading(kg: KnowledgeGraph) -> None:
    act = kg.spread(["seed"], threshold=0.0, relation_filter="mentions")
    assert set(act) == {"seed", "weak"}


def test_spreading_is_deterministic_across_write_orders(kg: KnowledgeGraph) -> None:
    other = KnowledgeGraph()
    entities, relations = list(ENTITIES), list(RELATIONS)
    random.Random(5).shuffle(entities)
    random.Random(6).shuffle(relations)
    for entity in entities:
        other.upsert_entity(entity)
    for relation in relations:
        other.upsert_relation(relation)
    seeds = {"seed": 1.0, "other": 0.3}
    assert list(other.spread(seeds, threshold=0.0).items()) == list(kg.spread(seeds, threshold=0.0).items())


def test_spread_validates_its_input(kg: KnowledgeGraph) -> None:
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValidationError):
            kg.spread(["seed"], decay=bad)
    with pytest.raises(ValidationError):
        kg.spread(["seed"], max_hops=-1)
    with pytest.raises(ValidationError):
        kg.spread(["seed"], threshold=-0.1)
    with pytest.raises(ValidationError):
        kg.spread({"seed": -1.0})
    with pytest.raises(NotFoundError):
        kg.spread(["nobody"])
    assert kg.spread([]) == {}


def test_reinforce_strengthens_relations_among_recalled_entities(kg: KnowledgeGraph) -> None:
    updates = kg.reinforce(["seed", "near", "weak", "island"], rate=0.1)
    assert [relation for relation, _ in updates] == ["r-sn", "r-ws"]
    assert updates[0][1] == 1.0
    assert updates[1][1] == pytest.approx(0.2 + 0.1 * 0.8)
    assert kg.relation_dict("r-ws")["strength"] == pytest.approx(0.28)
    assert kg.relation_dict("r-nf")["strength"] == 1.0  # far was not recalled
    assert kg.relation_dict("r-ss")["strength"] == 0.9


def test_reinforce_is_capped_at_one(kg: KnowledgeGraph) -> None:
    for _ in range(200):
        updates = kg.reinforce(["other", "near"], rate=0.5)
    assert updates == [("r-on", 1.0)]
    assert kg.relation_dict("r-on")["strength"] <= 1.0


def test_reinforce_without_apply_leaves_the_graph_alone(kg: KnowledgeGraph) -> None:
    version = kg.structure_version
    updates = kg.reinforce(["other", "near"], apply=False)
    assert [relation for relation, _ in updates] == ["r-on"]
    assert updates[0][1] == pytest.approx(0.55)
    assert kg.relation_dict("r-on")["strength"] == 0.5
    assert kg.structure_version == version
    kg.reinforce(["other", "near"])
    assert kg.structure_version > version  # caches depending on strengths are dropped


def test_reinforce_needs_two_entities_and_a_sane_rate(kg: KnowledgeGraph) -> None:
    assert kg.reinforce(["seed"]) == []
    assert kg.reinforce(["seed", "seed"]) == []
    with pytest.raises(ValidationError):
        kg.reinforce(["seed", "near"], rate=0)
    with pytest.raises(NotFoundError):
        kg.reinforce(["seed", "ghost"])

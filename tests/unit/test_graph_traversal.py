"""Traversal and shortest paths on small hand-built graphs with known answers."""

from __future__ import annotations

import itertools
import json
import random

import networkx as nx
import pytest

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.graph import KnowledgeGraph
from hermes_memory.graph.traversal import MAX_DEPTH
from hermes_memory.records import Entity, Relation


def ent(uuid: str, name: str, entity_type: str = "thing", aliases: tuple[str, ...] = ()) -> Entity:
    return Entity(uuid, name, entity_type, aliases, None, 1.0, 2.0, 1, {})


def rel(uuid: str, source: str, target: str, relation_type: str = "knows", strength: float = 1.0) -> Relation:
    return Relation(uuid, source, target, relation_type, strength, None, 1.0, 2.0)


# A -knows- B -knows- C -knows- D ; A -works_on-> P -part_of-> Q ; B -uses(0.2)-> W ; C -uses(0.9)-> S
# X -> Y -> Z -> X is a cycle on its own; A has a self-loop. Chain N0 .. N8 is longer than MAX_DEPTH.
ENTITIES = [
    ent("a", "Alice", "person", aliases=("Ali",)),
    ent("b", "Bob", "person"),
    ent("c", "Carol", "person"),
    ent("d", "Dave", "person"),
    ent("p", "Projekt Alpha", "project", aliases=("Alpha",)),
    ent("q", "Programme", "project"),
    ent("w", "Weak", "tech"),
    ent("s", "Strong", "tech"),
    ent("x", "X", "tech"),
    ent("y", "Y", "tech"),
    ent("z", "Z", "tech"),
    *[ent(f"n{i}", f"Node{i}") for i in range(9)],
]
RELATIONS = [
    rel("r-ab", "a", "b"),
    rel("r-bc", "b", "c"),
    rel("r-cd", "c", "d"),
    rel("r-ap", "a", "p", "works_on"),
    rel("r-pq", "p", "q", "part_of"),
    rel("r-bw", "b", "w", "uses", 0.2),
    rel("r-as", "a", "s", "uses", 0.9),
    rel("r-aa", "a", "a", "related_to"),
    rel("r-xy", "x", "y"),
    rel("r-yz", "y", "z"),
    rel("r-zx", "z", "x"),
    *[rel(f"r-n{i}", f"n{i}", f"n{i + 1}") for i in range(8)],
]


@pytest.fixture
def kg() -> KnowledgeGraph:
    graph = KnowledgeGraph()
    graph.rebuild(ENTITIES, RELATIONS)
    return graph


def names(result: dict[str, object]) -> dict[str, int]:
    items = result["results"]
    assert isinstance(items, list)
    return {item["entity"]["name"]: item["hops"] for item in items}


def test_traverse_depth_one_and_two(kg: KnowledgeGraph) -> None:
    assert names(kg.traverse("Alice", depth=1)) == {"Bob": 1, "Projekt Alpha": 1, "Strong": 1}
    assert names(kg.traverse("Alice", depth=2)) == {
        "Bob": 1,
        "Projekt Alpha": 1,
        "Strong": 1,
        "Carol": 2,
        "Programme": 2,
        "Weak": 2,
    }


def test_traverse_orders_by_hops_then_strength(kg: KnowledgeGraph) -> None:
    result = kg.traverse("a", depth=2)
    ordered = [item["entity"]["name"] for item in result["results"]]
    assert ordered[:3] == ["Bob", "Projekt Alpha", "Strong"]  # strengths 1.0, 1.0, 0.9
    assert ordered[3:] == ["Carol", "Programme", "Weak"]  # strengths 1.0, 1.0, 0.2


def test_traverse_reports_paths_and_relations(kg: KnowledgeGraph) -> None:
    items = {i["entity"]["uuid"]: i for i in kg.traverse("Alice", depth=3)["results"]}
    assert items["d"]["path"] == ["a", "b", "c", "d"]
    assert items["d"]["path_names"] == ["Alice", "Bob", "Carol", "Dave"]
    assert items["q"]["via"] == {
        "relation_uuid": "r-pq",
        "relation_type": "part_of",
        "strength": 1.0,
        "from": "p",
        "to": "q",
        "direction": "out",
    }


def test_traverse_follows_relations_backwards(kg: KnowledgeGraph) -> None:
    items = {i["entity"]["uuid"]: i for i in kg.traverse("Programme", depth=2)["results"]}
    assert set(items) == {"p", "a"}
    assert items["a"]["via"]["direction"] == "in"
    assert items["a"]["via"]["from"] == "a" and items["a"]["via"]["to"] == "p"


def test_traverse_relation_filter(kg: KnowledgeGraph) -> None:
    assert names(kg.traverse("Alice", depth=3, relation_filter="knows")) == {"Bob": 1, "Carol": 2, "Dave": 3}
    both = kg.traverse("Alice", depth=2, relation_filter=["WORKS_ON", "part_of"])
    assert names(both) == {"Projekt Alpha": 1, "Programme": 2}
    assert both["relation_filter"] == ["part_of", "works_on"]
    assert names(kg.traverse("Alice", depth=2, relation_filter="works_on,uses")) == {
        "Projekt Alpha": 1,
        "Strong": 1,
    }
    assert kg.traverse("Alice", depth=2, relation_filter="no_such_type")["results"] == []
    with pytest.raises(ValidationError):
        kg.traverse("Alice", relation_filter=[])


def test_traverse_depth_zero_negative_and_huge(kg: KnowledgeGraph) -> None:
    assert kg.traverse("Alice", depth=0)["results"] == []
    with pytest.raises(ValidationError):
        kg.traverse("Alice", depth=-1)
    with pytest.raises(ValidationError):
        kg.traverse("Alice", depth="2")  # type: ignore[arg-type]
    result = kg.traverse("Node0", depth=10_000)
    assert result["depth_capped"] is True
    assert result["depth"] == MAX_DEPTH == 6
    assert result["requested_depth"] == 10_000
    assert names(result) == {f"Node{i}": i for i in range(1, MAX_DEPTH + 1)}


def test_traverse_limit_truncates(kg: KnowledgeGraph) -> None:
    result = kg.traverse("Alice", depth=3, limit=2)
    assert result["truncated"] is True
    assert result["count"] == 2
    assert kg.traverse("Alice", depth=1, limit=3)["truncated"] is False
    with pytest.raises(ValidationError):
        kg.traverse("Alice", limit=0)


def test_cycles_and_self_loops_are_visited_once(kg: KnowledgeGraph) -> None:
    assert names(kg.traverse("X", depth=5)) == {"Y": 1, "Z": 1}
    assert "Alice" not in names(kg.traverse("Alice", depth=2))


def test_traverse_unknown_start(kg: KnowledgeGraph) -> None:
    with pytest.raises(NotFoundError, match="Alice"):
        kg.traverse("Alcie")


def test_shortest_path_lists_entities_and_relations(kg: KnowledgeGraph) -> None:
    steps = kg.shortest_path("Alice", "Dave")
    assert [s["entity"]["name"] for s in steps] == ["Alice", "Bob", "Carol", "Dave"]
    assert [s["hops"] for s in steps] == [0, 1, 2, 3]
    assert steps[0]["via"] is None
    assert [s["via"]["relation_uuid"] for s in steps[1:]] == ["r-ab", "r-bc", "r-cd"]


def test_shortest_path_goes_against_relation_direction(kg: KnowledgeGraph) -> None:
    steps = kg.shortest_path("Programme", "Bob")
    assert [s["entity"]["uuid"] for s in steps] == ["q", "p", "a", "b"]
    assert steps[1]["via"]["direction"] == "in"


def test_shortest_path_no_path_self_alias_case(kg: KnowledgeGraph) -> None:
    assert kg.shortest_path("Alice", "X") == []
    same = kg.shortest_path("Alice", "ali")
    assert len(same) == 1 and same[0]["entity"]["uuid"] == "a" and same[0]["via"] is None
    via_alias = kg.shortest_path("ALPHA", "carol")
    assert [s["entity"]["uuid"] for s in via_alias] == ["p", "a", "b", "c"]
    assert kg.shortest_path("Alice", "Dave", relation_filter="works_on") == []
    with pytest.raises(NotFoundError):
        kg.shortest_path("Alice", "Nobody")


def test_results_do_not_depend_on_write_order(kg: KnowledgeGraph) -> None:
    other = KnowledgeGraph()
    entities, relations = list(ENTITIES), list(RELATIONS)
    random.Random(3).shuffle(entities)
    random.Random(4).shuffle(relations)
    for entity in entities:
        other.upsert_entity(entity)
    for relation in relations:
        other.upsert_relation(relation)
    assert other.traverse("Alice", depth=3) == kg.traverse("Alice", depth=3)
    assert other.shortest_path("Weak", "Programme") == kg.shortest_path("Weak", "Programme")


def test_around_builds_the_neighbourhood_subgraph(kg: KnowledgeGraph) -> None:
    sub = kg.around("Bob", depth=1)
    assert set(sub.snapshot()["nodes"]) == {"a", "b", "c", "w"}
    assert set(sub.snapshot()["edges"]) == {"r-ab", "r-bc", "r-bw", "r-aa"}
    assert sub.resolve("ali") == "a"


def test_shortest_path_lengths_match_networkx_on_a_random_graph() -> None:
    rng = random.Random(11)
    entities = [ent(f"v{i}", f"V{i}") for i in range(60)]
    relations = [
        rel(f"e{j}", f"v{rng.randrange(60)}", f"v{rng.randrange(60)}", strength=rng.random())
        for j in range(80)
    ]
    kg = KnowledgeGraph()
    kg.rebuild(entities, relations)
    reference = nx.Graph()
    reference.add_nodes_from(e.uuid for e in entities)
    reference.add_edges_from((r.from_entity_id, r.to_entity_id) for r in relations)
    ends = {r.uuid: {r.from_entity_id, r.to_entity_id} for r in relations}
    for _ in range(150):
        a, b = f"v{rng.randrange(60)}", f"v{rng.randrange(60)}"
        steps = kg.shortest_path(a, b)
        if not nx.has_path(reference, a, b):
            assert steps == []
            continue
        assert len(steps) - 1 == nx.shortest_path_length(reference, a, b)
        assert steps[0]["entity"]["uuid"] == a and steps[-1]["entity"]["uuid"] == b
        for previous, step in itertools.pairwise(steps):
            via = step["via"]
            assert ends[via["relation_uuid"]] == {previous["entity"]["uuid"], step["entity"]["uuid"]}
            assert {via["from"], via["to"]} == ends[via["relation_uuid"]]


def test_query_results_are_json_serialisable(kg: KnowledgeGraph) -> None:
    outputs = [
        kg.traverse("Alice", depth=2),
        kg.shortest_path("Alice", "Dave"),
        kg.central_entities(3),
        kg.communities(),
        kg.spread(["Alice"]),
        kg.reinforce(["Alice", "Bob"], apply=False),
    ]
    assert json.loads(json.dumps(outputs))[0]["start"]["name"] == "Alice"

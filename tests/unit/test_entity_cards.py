"""An entity card checks only its entity's strongest relations (``tier2.entity_cards``) and still shows
what checking every relation would: the strongest believed ones, whatever number of the strongest were
replaced, and a role alias leaves it only through a relation of the type the role implies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.tier2 import Tier2, entity_cards
from hermes_memory.tier2.entity_cards import CHECKED_PER_PLACE


@pytest.fixture
def api(open_api: Callable[..., MemoryAPI]) -> MemoryAPI:
    return open_api()


def _hub(api: MemoryAPI, relations: int) -> tuple[str, list[tuple[float, str, str, str]]]:
    """An entity with ``relations`` relations, every other one pointing at it, each with its own strength
    and evidence fact; returns its uuid and (strength, shown type, other name, fact uuid) of each."""
    t2 = api.tier2
    hub = api.entity_ensure("Hub", "project")["data"]["uuid"]
    made = []
    for i in range(relations):
        name = f"Person{i:02d}"
        other = api.entity_ensure(name, "person")["data"]["uuid"]
        fact = t2.facts.store(f"{name} works with Hub number {i}", subject=name, predicate="states").fact
        strength = 0.1 + 0.8 * (i * 7 % relations) / relations  # strengths out of insertion order
        if i % 2:
            t2.relations.link(other, hub, "works_with", strength=strength, evidence_fact_id=fact.uuid)
            made.append((strength, "<-works_with", name, fact.uuid))
        else:
            t2.relations.link(hub, other, "helps", strength=strength, evidence_fact_id=fact.uuid)
            made.append((strength, "helps", name, fact.uuid))
    return hub, made


def _replace(t2: Tier2, fact_uuids: list[str]) -> None:
    for i, old in enumerate(fact_uuids):
        text = f"correction {i} to an earlier statement"
        new = t2.facts.store(text, subject="Hub", predicate="states").fact
        assert t2.facts.supersede(old, new.uuid, actor="ingest")


def _expected(
    made: list[tuple[float, str, str, str]], replaced: set[str], count: int
) -> list[tuple[str, str]]:
    """What reading every relation gives: the believed ones, strongest first."""
    believed = sorted((r for r in made if r[3] not in replaced), key=lambda r: -r[0])
    return [(kind, name) for _, kind, name, _ in believed[:count]]


def test_a_card_shows_the_strongest_believed_relations_of_many(api: MemoryAPI) -> None:
    hub, made = _hub(api, 40)
    strongest = sorted(made, key=lambda r: -r[0])
    replaced = [strongest[0][3], strongest[2][3]]  # two of the five strongest
    _replace(api.tier2, replaced)
    for count in (1, 5):
        card = api.tier2.entities.cards([hub], relations=count)[hub][1]
        assert card == _expected(made, set(replaced), count), count


def test_a_card_whose_strongest_relations_were_all_replaced_reads_the_rest(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More of the strongest replaced than the card checks at first: every relation is read."""
    shown = 3
    hub, made = _hub(api, 4 * shown * CHECKED_PER_PLACE)
    strongest = sorted(made, key=lambda r: -r[0])
    replaced = [r[3] for r in strongest[: 2 * shown * CHECKED_PER_PLACE]]
    _replace(api.tier2, replaced)
    reads: list[int | None] = []
    real = entity_cards._read

    def spy(*args: Any) -> Any:
        reads.append(args[-1])
        return real(*args)

    monkeypatch.setattr(entity_cards, "_read", spy)
    card = api.tier2.entities.cards([hub], relations=shown)[hub][1]
    assert card == _expected(made, set(replaced), shown)
    assert len(card) == shown
    assert reads == [shown, None]  # the best few each way, then every relation


def test_cards_of_several_entities_each_keep_their_own(api: MemoryAPI) -> None:
    """Entities with many, few and no relations asked together: each card as asked alone."""
    hub, made = _hub(api, 30)
    lone = api.entity_ensure("Lone", "concept")["data"]["uuid"]
    pair = api.entity_ensure("Pair", "concept")["data"]["uuid"]
    api.tier2.relations.link(pair, lone, "near")
    cards = api.tier2.entities.cards([hub, lone, pair, hub], relations=4)
    assert cards[hub][1] == _expected(made, set(), 4)
    assert cards[lone][1] == [("<-near", "Pair")]
    assert cards[pair][1] == [("near", "Lone")]
    alone = api.tier2.entities.cards([lone], relations=4)
    assert alone[lone][1] == cards[lone][1]


def test_a_role_alias_stays_while_only_relations_of_other_types_were_replaced(api: MemoryAPI) -> None:
    """Greta is "the user's boss" through ``reports_to``; a replaced ``knows`` from the user to her does not
    take that role away."""
    t2 = api.tier2
    user = api.entity_ensure("the user", "person")["data"]["uuid"]
    greta = api.entity_ensure("Greta", "person", aliases=["the user's boss"])["data"]["uuid"]
    boss = t2.facts.store("the user has a boss named Greta", subject="the user", predicate="reports_to").fact
    t2.relations.link(user, greta, "reports_to", evidence_fact_id=boss.uuid)
    knows = t2.facts.store("the user knows Greta from school", subject="the user", predicate="knows").fact
    t2.relations.link(user, greta, "knows", evidence_fact_id=knows.uuid)
    _replace(t2, [knows.uuid])
    card = t2.entities.cards([greta], relations=5)[greta]
    assert card[0].aliases == ("the user's boss",)
    assert card[1] == [("<-reports_to", "the user")]

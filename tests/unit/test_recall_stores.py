"""Recall reaches every store (issue 16): chunks indexed with ``semantic_index``, timeline events and
entity cards come back beside turns, facts and curated entries, ranked by one fusion; every hit says
its kind and source; the seed's ``recall(query, tiers=None, limit_per_tier=5)`` works beside ``limit``."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.hermes.tools import ToolContext, call_tool
from hermes_memory.recall import render
from hermes_memory.records import Hit

T0 = 1_683_540_000.0  # 2023-05-08
DAY = 86400.0
KINDS = {"episode", "fact", "curated", "chunk", "event", "entity"}


@pytest.fixture
def api(open_api: Callable[..., MemoryAPI]) -> MemoryAPI:
    return open_api()


def _probe(api: MemoryAPI) -> None:
    """The issue's probe: a chunk, an event and an entity, each naming Orion (no turn, no fact)."""
    assert api.semantic_index("The Orion invoices are generated on the first of each month.",
                              source_type="document", timestamp=T0)["success"]  # fmt: skip
    orion = api.entity_ensure("Orion", "project", aliases=["ORN"], description="the billing rewrite")
    assert orion["success"]
    assert api.entity_ensure("Alice", "person")["success"]
    assert api.entity_link("Alice", "Orion", "works_on")["success"]
    assert api.timeline_add("milestone", "Orion billing went live", related_entities=["Orion"],
                            timestamp=T0 + DAY)["success"]  # fmt: skip


def _mixed(api: MemoryAPI) -> None:
    """The probe plus turns, a fact and a curated entry about Orion."""
    _probe(api)
    when = T0 + 2 * DAY
    api.remember_message("Alice said the Orion billing migration is finished.", "s1", when, speaker="Bo")
    api.remember_message("Great, then Orion can invoice in euros now.", "s1", T0 + 2 * DAY + 60, speaker="Cy")
    assert api.flush(60)["data"]["drained"]
    assert api.fact_store("Orion billing runs on Stripe.", category="project")["success"]
    assert api.curated_add("Orion billing questions go to Alice.", "memory")["success"]


def _kinds(hits: list[dict[str, Any]]) -> set[str]:
    return {h["kind"] for h in hits}


def test_a_chunk_an_event_and_an_entity_come_back_from_recall(api: MemoryAPI) -> None:
    _probe(api)
    env = api.recall("Orion billing")
    assert env["success"], env["error"]
    hits = env["data"]["hits"]
    assert {"chunk", "event", "entity"} <= _kinds(hits), hits
    by_kind = {h["kind"]: h for h in hits}
    assert "invoices" in by_kind["chunk"]["text"] and by_kind["chunk"]["source"] == "indexed text, document"
    assert by_kind["chunk"]["tier"] in ("tier2", "tier3")
    event = by_kind["event"]
    assert event["text"].startswith("Orion billing went live") and event["timestamp"] == T0 + DAY
    assert event["metadata"]["entities"] == ["Orion"] and event["source"] == "event about Orion"
    card = by_kind["entity"]["text"]  # name, type, aliases, description, key relations
    assert card.startswith("Orion (project; also: ORN)") and "billing rewrite" in card
    assert "Alice is working on Orion" in card  # worded as a fact is, not "Alice works on it"
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)  # one fused ranking


def test_a_chunk_an_event_and_an_entity_come_back_from_nextlevel_search(api: MemoryAPI) -> None:
    _probe(api)
    ctx = ToolContext(api=api, session_id="sess-1", writable=True, after_write=lambda: None)
    out = json.loads(call_tool(ctx, "nextlevel_search", {"query": "Orion billing"}))
    assert out["count"] >= 3, out
    assert {"chunk", "event", "entity"} <= {r["kind"] for r in out["results"]}
    assert all(r["source"] and r["kind"] for r in out["results"])
    per_tier = json.loads(call_tool(ctx, "nextlevel_search", {"query": "Orion billing", "limit_per_tier": 1}))
    tiers = Counter(r["tier"] for r in per_tier["results"])
    assert per_tier["count"] >= 2 and max(tiers.values()) == 1, per_tier
    both = json.loads(call_tool(ctx, "nextlevel_search", {"query": "Orion", "limit": 3, "limit_per_tier": 1}))
    assert both["error_type"] == "invalid_input" and "not both" in both["error"]


def test_the_seed_signature_returns_up_to_n_hits_per_tier_in_one_ranking(api: MemoryAPI) -> None:
    _mixed(api)
    env = api.recall("Orion billing", tiers=None, limit_per_tier=2)
    assert env["success"], env["error"]
    hits = env["data"]["hits"]
    counts = Counter(h["tier"] for h in hits)
    assert set(counts) <= set(env["meta"]["tiers_queried"]) and max(counts.values()) <= 2
    assert {"tier1", "tier2", "tier3"} <= set(counts), counts  # curated, lexical and vector hits
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    # More per tier gives more hits; one tier asked gives that tier's hits only.
    assert len(api.recall("Orion billing", limit_per_tier=5)["data"]["hits"]) > len(hits)
    only = api.recall("Orion billing", tiers=["tier3"], limit_per_tier=3)["data"]["hits"]
    assert only and len(only) <= 3 and {h["tier"] for h in only} == {"tier3"}
    # ``limit`` keeps its meaning: hits in all.
    assert len(api.recall("Orion billing", limit=3)["data"]["hits"]) == 3
    assert len(api.recall("Orion billing")["data"]["hits"]) > 3  # default 10 in all


def test_limit_and_limit_per_tier_together_are_refused(api: MemoryAPI) -> None:
    _probe(api)
    env = api.recall("Orion", limit=3, limit_per_tier=2)
    assert not env["success"] and env["meta"]["error_type"] == "invalid_input"
    assert "not both" in env["error"]
    bad = api.recall("Orion", limit_per_tier=0)
    assert not bad["success"] and "limit_per_tier" in bad["error"]


def test_every_hit_says_its_kind_and_source_in_the_dict_and_the_line(api: MemoryAPI) -> None:
    _mixed(api)
    env = api.recall("Orion billing", limit=30)
    hits = env["data"]["hits"]
    assert {"episode", "fact", "curated", "chunk", "event", "entity"} <= _kinds(hits), _kinds(hits)
    lines = env["data"]["rendered"].splitlines()
    assert len(lines) == len(hits)
    for hit, line in zip(hits, lines, strict=True):
        assert hit["kind"] in KINDS and hit["source"], hit
        assert line.endswith(f"({hit['source']})"), (line, hit)
    sources = {h["kind"]: h["source"] for h in hits}
    assert sources["episode"] == "turn, s1" and sources["curated"] == "curated memory"
    assert sources["fact"].startswith("fact") and sources["entity"] == "entity card"


def test_source_in_words_for_each_kind() -> None:
    def hit(kind: str, **meta: Any) -> Hit:
        return Hit(id="x", score=1.0, text="t", tier="tier2", kind=kind, metadata=meta)

    assert hit("episode", session_id="s9").source == "turn, s9"
    assert hit("fact").source == "fact" and hit("fact", session_id="s2").source == "fact, s2"
    assert hit("chunk", source_type="document", session_id="s3").source == "indexed text, document, s3"
    assert hit("event", entities=["Orion", "Alice"]).source == "event about Orion, Alice"
    assert hit("entity").source == "entity card" and hit("other").source == "other"
    shown = render.hit_line(hit("event", entities=["Orion"], session_id="s4"))
    assert shown.endswith("t (event about Orion, s4)")
    assert hit("chunk", source_type="tool").to_dict()["source"] == "indexed text, tool"


def test_as_of_leaves_out_chunks_events_and_entities_not_known_then(api: MemoryAPI) -> None:
    _probe(api)
    env = api.recall("Orion billing", as_of=T0 - DAY)
    assert env["success"], env["error"]
    assert not {"chunk", "event", "entity"} & _kinds(env["data"]["hits"])


def test_an_entity_card_needs_its_name_or_a_match_and_never_a_participant(api: MemoryAPI) -> None:
    _probe(api)
    api.remember_message("I think Orion needs a new logo.", "s1", T0, speaker="Alice")
    assert api.flush(60)["data"]["drained"]
    unrelated = api.recall("weather forecast tomorrow")["data"]["hits"]
    assert "entity" not in _kinds(unrelated)
    # Alice is a participant of the conversation (a speaker): her card is not a candidate by name.
    cards = [h["text"] for h in api.recall("What did Alice say?")["data"]["hits"] if h["kind"] == "entity"]
    assert not any(c.startswith("Alice") for c in cards), cards
    # Lower case: found through the full-text index over names and aliases.
    found = api.recall("orn", tiers=["tier2"])["data"]["hits"]
    assert any(h["kind"] == "entity" and h["text"].startswith("Orion") for h in found), found


def test_an_event_of_a_fact_that_is_a_candidate_is_left_to_the_fact(api: MemoryAPI) -> None:
    api.remember_message("I moved to Lisbon last May.", "s1", T0, speaker="Ana")
    assert api.flush(60)["data"]["drained"]
    events = api.timeline_query(limit=10)["data"]
    assert any("Lisbon" in e["title"] for e in events), events  # the dated statement has its event
    hits = api.recall("When did Ana move to Lisbon?", limit=20)["data"]["hits"]
    facts = [h for h in hits if h["kind"] == "fact"]
    assert facts, hits
    assert "event" not in _kinds(hits)


def test_an_event_of_a_replaced_fact_is_left_out_with_it(api: MemoryAPI) -> None:
    """An event taken from a fact says what the fact says, dated. Once a newer statement replaced the
    fact, the event would put the replaced statement before the model unmarked (the fact itself is no
    candidate now): it is left out with its fact. As known before the replacement it is still there; an
    event of two facts stays while one of them holds."""
    t2 = api.tier2
    old = t2.facts.store("Caroline is going to a pottery retreat in July", subject="Caroline",
                         predicate="plans").fact  # fmt: skip
    kept = t2.facts.store("Caroline is bringing her kiln to the retreat", subject="Caroline",
                          predicate="plans").fact  # fmt: skip
    alone = t2.timeline.add("event", old.content, related_facts=(old.uuid,), timestamp=T0, actor="ingest")
    both = t2.timeline.add("event", "Caroline's pottery retreat with her kiln", timestamp=T0,
                           related_facts=(old.uuid, kept.uuid), actor="ingest")  # fmt: skip
    before = time.time()
    time.sleep(0.02)
    new = t2.facts.store("Caroline is joining a mentorship program for LGBTQ youth", subject="Caroline",
                         predicate="states").fact  # fmt: skip
    assert t2.facts.supersede(old.uuid, new.uuid, actor="ingest")
    assert set(t2.timeline.for_recall([alone.uuid, both.uuid])) == {both.uuid}
    assert set(t2.timeline.for_recall([alone.uuid, both.uuid], recorded_by=before)) == {alone.uuid, both.uuid}
    hits = api.recall("When is the pottery retreat?", limit=20)["data"]["hits"]
    assert not [h for h in hits if h["text"].startswith(old.content)], hits


def test_a_listing_of_events_marks_an_event_of_replaced_statements(api: MemoryAPI) -> None:
    """A listing of events is history: an event taken from statements replaced since stays in it, marked
    with when it stopped being true and what is believed in its place (the timeline query, an entity's
    story, the CLI's lines); an event of a statement that still holds is not marked."""
    from hermes_memory.cli._records import events as cli_lines

    t2 = api.tier2
    old = t2.facts.store("Caroline is going to a pottery retreat in July", subject="Caroline",
                         predicate="plans").fact  # fmt: skip
    kept = t2.facts.store("Caroline is bringing her kiln to the retreat", subject="Caroline",
                          predicate="plans").fact  # fmt: skip
    caroline = t2.entities.ensure("Caroline", "person").entity.uuid
    alone = t2.timeline.add("event", old.content, related_facts=(old.uuid,), related_entities=(caroline,),
                            timestamp=T0, actor="ingest")  # fmt: skip
    both = t2.timeline.add("event", "Caroline's pottery retreat with her kiln", timestamp=T0 + 60,
                           related_facts=(old.uuid, kept.uuid), actor="ingest")  # fmt: skip
    new = t2.facts.store("Caroline is doing a sailing course in July instead", subject="Caroline",
                         predicate="plans").fact  # fmt: skip
    assert t2.facts.supersede(old.uuid, new.uuid, actor="ingest", valid_to=T0 + 3600)
    listed = {e["uuid"]: e for e in api.timeline_query(limit=10)["data"]}
    assert listed[alone.uuid]["superseded_by"] == new.content
    assert listed[alone.uuid]["superseded_at"] == pytest.approx(T0 + 3600)
    assert listed[both.uuid]["superseded_at"] is None and listed[both.uuid]["superseded_by"] is None
    story = [i for i in api.timeline("Caroline")["data"] if i["kind"] == "event"]
    assert [i["superseded_by"] for i in story] == [new.content]
    lines = cli_lines(list(listed.values())).splitlines()
    assert [line for line in lines if "superseded" in line] == [
        line for line in lines if line.startswith(alone.uuid[:8])
    ]
    assert new.content in lines[[line[:8] for line in lines].index(alone.uuid[:8])]
    from hermes_memory.hermes.tools import MEMORY

    ctx = ToolContext(api=api, session_id="sess-1", writable=False, after_write=lambda: None)
    shown = json.loads(call_tool(ctx, MEMORY, {"action": "timeline_query", "limit": 10}))["result"]
    marked = {e["title"]: e["superseded_by"] for e in shown}
    assert marked[old.content] == new.content and marked[both.title] is None, marked


def test_the_providers_session_records_stay_out_of_recall_unless_weighted_in(tmp_path: Path) -> None:
    # A session event restates the session's first turns, which are candidates themselves: in the
    # block it would only repeat them (what a live agent saw before this rule).
    from hermes_memory.records import SESSION_EVENT

    opts: dict[str, Any] = {"tier3.embedding_model": "hashing"}
    title = "Hermes session on cli: my sister Ana lives in Porto"
    with MemoryAPI(hermes_home=tmp_path / "a", **opts) as api:
        assert api.timeline_add(SESSION_EVENT, title, timestamp=T0)["success"]
        hits = api.recall("Where does my sister Ana live?", limit=20)["data"]["hits"]
        assert "event" not in _kinds(hits), hits
    weighted = {**opts, "recall.overrides": {"session_event_scale": 1.0}}
    with MemoryAPI(hermes_home=tmp_path / "b", **weighted) as api:
        assert api.timeline_add(SESSION_EVENT, title, timestamp=T0)["success"]
        hits = api.recall("Where does my sister Ana live?", limit=20)["data"]["hits"]
        assert "event" in _kinds(hits), hits


def test_an_entity_card_as_of_shows_only_the_relations_known_then(api: MemoryAPI) -> None:
    _probe(api)  # Alice works_on Orion
    known = time.time()
    time.sleep(0.02)
    assert api.entity_ensure("Bo", "person")["success"]
    assert api.entity_link("Bo", "Orion", "maintains")["success"]
    orion = api.tier2.entities.find("Orion")[0].uuid
    now_card = api.tier2.entities.cards([orion], relations=5)[orion][1]
    assert sorted(now_card) == [("<-maintains", "Bo"), ("<-works_on", "Alice")]
    then_card = api.tier2.entities.cards([orion], relations=5, recorded_by=known)[orion][1]
    assert then_card == [("<-works_on", "Alice")]
    hits = api.recall("Orion", as_of=known + 0.01)["data"]["hits"]
    card = next(h["text"] for h in hits if h["kind"] == "entity")
    assert "Alice" in card and "Bo" not in card, card


def test_an_entity_card_leaves_out_a_relation_whose_evidence_was_replaced(api: MemoryAPI) -> None:
    """A card says what is believed of an entity now: "Ines lives in Graz" is gone from Ines' card once a
    newer statement replaced the fact it came from; as of before the replacement it is still there."""
    t2 = api.tier2
    ines = api.entity_ensure("Ines", "person")["data"]["uuid"]
    graz = api.entity_ensure("Graz", "place")["data"]["uuid"]
    linz = api.entity_ensure("Linz", "place")["data"]["uuid"]
    old = t2.facts.store("Ines lives in Graz", subject="Ines", predicate="states").fact
    t2.relations.link(ines, graz, "lives_in", evidence_fact_id=old.uuid)
    before = time.time()
    time.sleep(0.02)
    new = t2.facts.store("Ines relocated to Linz", subject="Ines", predicate="states").fact
    t2.relations.link(ines, linz, "lives_in", evidence_fact_id=new.uuid)
    assert t2.facts.supersede(old.uuid, new.uuid, actor="ingest")
    assert t2.entities.cards([ines], relations=5)[ines][1] == [("lives_in", "Linz")]
    then = t2.entities.cards([ines], relations=5, recorded_by=before)[ines][1]
    assert ("lives_in", "Graz") in then, then


def test_a_role_alias_leaves_the_card_once_every_relation_it_implies_was_replaced(api: MemoryAPI) -> None:
    """The alias "the user's boss" on Greta rests on ``reports_to`` from the user; when the fact behind that
    relation is replaced, the alias is left out of her card and of the most connected entities (as of
    before, it is still there). An alias no relation rests on, and a role still believed, stay."""
    t2 = api.tier2
    user = api.entity_ensure("the user", "person")["data"]["uuid"]
    greta = api.entity_ensure("Greta", "person", aliases=["the user's boss", "Gee"])["data"]["uuid"]
    roles = ["the user's boss", "the user's neighbour"]
    marek = api.entity_ensure("Marek", "person", aliases=roles)["data"]["uuid"]
    old = t2.facts.store("the user has a boss named Greta", subject="the user", predicate="reports_to").fact
    t2.relations.link(user, greta, "reports_to", evidence_fact_id=old.uuid)
    before = time.time()
    time.sleep(0.02)
    new = t2.facts.store("the user has a boss named Marek", subject="the user", predicate="reports_to").fact
    t2.relations.link(user, marek, "reports_to", evidence_fact_id=new.uuid)
    assert t2.facts.supersede(old.uuid, new.uuid, actor="ingest")
    cards = t2.entities.cards([greta, marek], relations=5)
    assert cards[greta][0].aliases == ("Gee",), cards
    assert cards[marek][0].aliases == ("the user's boss", "the user's neighbour"), cards
    assert t2.entities.cards([greta], relations=5, recorded_by=before)[greta][0].aliases == (
        "the user's boss", "Gee",
    )  # fmt: skip
    central = {e.name: e.aliases for e, _ in t2.entities.most_connected(limit=5)}
    assert central["Greta"] == ("Gee",) and "the user's boss" in central["Marek"], central


def test_a_card_that_says_nothing_but_a_name_is_shown_only_when_the_question_names_it(api: MemoryAPI) -> None:
    """Greta's card lost the role a newer statement replaced; found again by that role's words, "Greta
    Lindholm (person)" would tell the model nothing, so it is left out, unless the question names her."""
    t2 = api.tier2
    user = api.entity_ensure("the user", "person")["data"]["uuid"]
    greta = api.entity_ensure("Greta Lindholm", "person", aliases=["the user's boss"])["data"]["uuid"]
    old = t2.facts.store(
        "the user has a boss named Greta Lindholm", subject="the user", predicate="reports_to"
    ).fact
    t2.relations.link(user, greta, "reports_to", evidence_fact_id=old.uuid)
    new = t2.facts.store("the user works for themselves", subject="the user", predicate="states").fact
    assert t2.facts.supersede(old.uuid, new.uuid, actor="ingest")

    def cards(question: str) -> list[str]:
        return [h["text"] for h in api.recall(question)["data"]["hits"] if h["kind"] == "entity"]

    assert not cards("the boss"), cards("the boss")
    assert cards("Greta Lindholm") == ["Greta Lindholm (person)"]

"""The seed's limits (HMNL §10) each do what default.yaml says: tier2.max_facts (prune archives the least
important non-curated facts past it), tier2.max_entities (a new entity is refused; a turn is still
stored), graph.max_nodes (the graph keeps the most-seen entities), graph.auto_rebuild_interval_hours (a
graph held that long is rebuilt), limits.max_embedding_queue (back-pressure on turns, none lost), and
limits.session_index_max_age_days is removed with the reason."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.graph import service as graph_service

Opener = Callable[..., MemoryAPI]


def ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


# -- tier2.max_facts -------------------------------------------------------------------------------------
def test_max_facts_prune_archives_the_least_important_beyond_the_cap(open_api: Opener) -> None:
    api = open_api(**{"tier2.max_facts": 3})
    curated = ok(api.mirror_curated_write("add", "user", "User likes green tea."))["stored"]
    keep = ok(api.fact_store("Atlas ships on Friday.", importance=0.9))["uuid"]
    low = [ok(api.fact_store(f"Minor note number {i}.", importance=0.2))["uuid"] for i in range(3)]
    assert api.tier2.facts.count(active_only=True) == 5 + len(curated) - 1
    result = ok(api.prune())
    active = api.tier2.facts.count(active_only=True)
    assert active == 3 and result["over_cap_archived"] == 2 + len(curated) - 1
    assert result["over_cap_remaining"] == 0
    assert api.tier2.facts.get(keep, touch=False).is_active  # important stays
    assert all(api.tier2.facts.get(u, touch=False).is_active for u in curated)  # curated never archived
    archived = [u for u in low if not api.tier2.facts.get(u, touch=False).is_active]
    assert len(archived) == result["over_cap_archived"]
    entry = api.tier2.audit.entries(target_uuid=archived[0], action="fact_delete")[0]
    assert entry.diff["reason"] == "over_cap" and entry.diff["max_facts"] == 3
    assert ok(api.prune())["over_cap_archived"] == 0  # idempotent


def test_max_facts_counts_what_only_curated_facts_keep_over_the_cap(open_api: Opener) -> None:
    api = open_api(**{"tier2.max_facts": 1})
    ok(api.mirror_curated_write("add", "memory", "Deploys run from main."))
    ok(api.mirror_curated_write("add", "memory", "Staging is host blue."))
    result = ok(api.prune())
    assert result["over_cap_archived"] == 0 and result["over_cap_remaining"] >= 1


# -- tier2.max_entities -------------------------------------------------------------------------------
def test_max_entities_refuses_a_new_entity_and_keeps_existing_ones_usable(open_api: Opener) -> None:
    api = open_api(**{"tier2.max_entities": 2})
    ok(api.entity_ensure("Maya", "person"))
    ok(api.entity_ensure("Atlas", "project"))
    refused = api.entity_ensure("Orion", "project")
    assert refused["success"] is False and refused["meta"]["error_type"] == "conflict"
    assert "entity limit reached: 2 entities (config tier2.max_entities)" in refused["error"]
    again = ok(api.entity_ensure("Maya", "person", aliases=["M."]))  # an existing one still updates
    assert again["created"] is False and "M." in again["aliases"]
    assert api.tier2.entities.count() == 2


def test_max_entities_a_turn_past_the_cap_is_still_stored_whole(open_api: Opener) -> None:
    api = open_api(**{"tier2.max_entities": 1})
    ok(api.remember_turn("Maya works with Daniel at Acme in Berlin.", None, "s1"))
    ok(api.flush())
    assert api.tier2.entities.count() == 1
    assert api.tier2.episodes.count() >= 1
    hits = ok(api.recall("Daniel Acme", tiers=["tier2"]))["hits"]
    assert any("Daniel" in h["text"] for h in hits)


# -- graph.max_nodes ------------------------------------------------------------------------------------
def test_max_nodes_keeps_the_most_seen_entities_and_reports_the_rest(open_api: Opener) -> None:
    api = open_api(**{"graph.max_nodes": 2})
    for name, times in (("Maya", 3), ("Atlas", 2), ("Orion", 1)):
        for _ in range(times):
            ok(api.entity_ensure(name, "other"))
    ok(api.entity_link("Maya", "Atlas", "works_on"))
    ok(api.entity_link("Maya", "Orion", "knows"))
    report = ok(api.graph_rebuild())
    assert report["left_out_entities"] == 1 and report["max_nodes"] == 2
    kg = api.knowledge_graph()
    assert kg.entity_count == 2 and kg.relation_count == 1
    assert api.graph_traverse("Orion")["success"] is False  # left out: answered as unknown
    assert api.tier2.entities.count() == 3  # Tier 2 keeps every entity
    ok(api.entity_ensure("Vega", "other"))  # an incremental write past the cap is left out too
    assert api.knowledge_graph().entity_count == 2


# -- graph.auto_rebuild_interval_hours --------------------------------------------------------------
@pytest.mark.parametrize(("hours", "rebuilt"), [(1.0, True), (0.0, False)])
def test_a_graph_held_longer_than_the_interval_is_rebuilt(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch, hours: float, rebuilt: bool
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(graph_service, "_clock", lambda: clock[0])
    api = open_api(**{"graph.auto_rebuild_interval_hours": hours})
    ok(api.entity_ensure("Maya", "person"))
    kg = api.knowledge_graph()
    # Drift the graph away from Tier 2 (what a rebuild repairs): a node Tier 2 does not have.
    kg.remove_entity(api.tier2.entities.find("Maya")[0].uuid)
    assert kg.entity_count == 0
    clock[0] += 0.5 * 3600
    assert api.knowledge_graph().entity_count == 0  # within the interval: kept as is
    clock[0] += 0.6 * 3600
    assert (api.knowledge_graph().entity_count == 1) is rebuilt


# -- limits.max_embedding_queue -------------------------------------------------------------------------
@pytest.mark.parametrize(("cap", "embedded_before_the_turn"), [(2, 2), (1000, 1)])
def test_max_embedding_queue_makes_new_turns_wait_for_that_many_embeddings(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch, cap: int, embedded_before_the_turn: int
) -> None:
    api = open_api(**{"limits.max_embedding_queue": cap, "tier3.embed_batch_size": 1})
    for i in range(6):
        ok(api.semantic_index(f"Backlog text number {i} about a topic.", wait=False))
    sem = api.core.tiers.sem
    assert sem is not None
    real = sem.drain
    calls: list[int] = []

    def drain(**kwargs: Any) -> Any:
        report = real(**kwargs)
        calls.append(report.taken)
        if len(calls) == 1:  # a turn arrives while the backlog is being embedded
            ok(api.remember_turn("Maya adopted a cat.", None, "s1"))
        return report

    monkeypatch.setattr(sem, "drain", drain)
    api.core.ingest.drain_once()
    assert sum(calls) == embedded_before_the_turn
    assert api.tier2.ingest_queue.count() + api.tier2.inbox.count() >= 1  # waiting, not lost
    api.core.ingest.drain_once()
    assert any("adopted a cat" in e.text for e in api.tier2.episodes.latest(count=10))


# -- limits.session_index_max_age_days: removed ---------------------------------------------------------
def test_session_index_max_age_days_is_removed_with_the_reason(tmp_path: Path) -> None:
    assert not hasattr(load_config(hermes_home=tmp_path).limits, "session_index_max_age_days")
    with pytest.raises(ConfigError, match="was removed: turns and their vectors are never aged out"):
        load_config(hermes_home=tmp_path, limits={"session_index_max_age_days": 30})
    path = tmp_path / "c.yaml"
    path.write_text("limits:\n  session_index_max_age_days: 90\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="session_index_max_age_days' was removed"):
        load_config(path, hermes_home=tmp_path)


def test_every_limit_is_checked(tmp_path: Path) -> None:
    for key in ("tier2.max_facts", "tier2.max_entities", "graph.max_nodes", "limits.max_embedding_queue"):
        with pytest.raises(ConfigError, match="must be > 0"):
            load_config(hermes_home=tmp_path, **{key: 0})
    with pytest.raises(ConfigError, match="must be >= 0"):
        load_config(hermes_home=tmp_path, **{"graph.auto_rebuild_interval_hours": -1})
    assert time.time() > 0

"""The small body of knowledge the bad-input tests seed a store with (imported by test modules)."""

from __future__ import annotations

from hermes_memory.api import MemoryAPI


def seed_knowledge(api: MemoryAPI) -> None:
    """Facts, entities, a relation, a timeline event and a curated entry."""
    api.fact_store("Maya works at Nordlicht Labs.")
    api.fact_store("Atlas stores routes in Postgres.", "project", 0.9)
    api.entity_ensure("Maya Okafor", "person", ["Maya"])
    api.entity_ensure("Atlas", "project")
    api.entity_link("Maya", "Atlas", "leads")
    api.timeline_add("milestone", "Atlas kickoff", timestamp=1_700_000_000.0, related_entities=["Atlas"])
    api.curated_add("A curated entry that must survive.")

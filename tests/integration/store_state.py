"""What a store knows, as comparable data: the crash tests compare a recovered store with an
uninterrupted reference run by this snapshot."""

from __future__ import annotations

from typing import Any

from hermes_memory import MemoryAPI


def knowledge(api: MemoryAPI) -> dict[str, Any]:
    """Episodes, facts (with whether each is current), entities, chunks and the relation/event counts."""
    q = api.tier2.db.query
    return {
        "episodes": sorted((r["uuid"], r["text"]) for r in q("SELECT uuid, text FROM episodes")),
        "facts": sorted((r["content"], r["superseded_at"] is None) for r in q("SELECT * FROM facts")),
        "entities": sorted((r["name"], r["entity_type"]) for r in q("SELECT * FROM entities")),
        "relations": q("SELECT count(*) AS n FROM relations")[0]["n"],
        "events": q("SELECT count(*) AS n FROM timeline")[0]["n"],
        "chunks": sorted(r["text"] for r in q("SELECT text FROM chunks")),
    }

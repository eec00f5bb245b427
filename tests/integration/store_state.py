"""What a store knows, as comparable data: the crash tests compare a recovered store with an
uninterrupted reference run by this snapshot; the update tests read what a later turn closed."""

from __future__ import annotations

import time
from pathlib import Path
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


def closed_after(home: Path, earlier: str, later: str) -> list[str]:
    """The facts a turn said a day after another closes, through the write path with the real embedder."""
    day = 86400.0
    start = time.time() - 10 * day
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        api.remember_turn(earlier, "Noted.", "s1", start)
        api.remember_turn(later, "Sure.", "s1", start + day)
        assert api.flush()["success"]
        return [f.content for f in api.tier2.facts.superseded(limit=10)]

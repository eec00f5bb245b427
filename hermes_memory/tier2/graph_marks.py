"""What the knowledge graph (``graph/service.py``) reads of Tier 2 to know whether its saved file is still
the graph of the store: a fingerprint of a view's entities and relations, and the newest erasure."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.db import Database


@dataclass(frozen=True, slots=True)
class GraphState:
    """A view's entity and relation counts and its newest change (entity last seen, relation update)."""

    entities: int
    relations: int
    last_change: float


def graph_state(db: Database, view: ScopeView) -> GraphState:
    """The counts and newest change of the entities and relations ``view`` reads, in one query."""
    scoped, sp = view.where("scope")
    row = db.query_one(
        f"SELECT (SELECT count(*) FROM entities WHERE {scoped}) AS e, "
        f"(SELECT count(*) FROM relations WHERE {scoped}) AS r, "
        f"max(coalesce((SELECT max(last_seen) FROM entities WHERE {scoped}), 0), "
        f"coalesce((SELECT max(updated_at) FROM relations WHERE {scoped}), 0)) AS t",
        sp * 4,
    )
    assert row is not None  # an aggregate query always has its row
    return GraphState(int(row["e"]), int(row["r"]), float(row["t"]))


def newest_erasure(db: Database) -> int:
    """The id of the newest erasure (``forget``) recorded in the store, 0 when there was none."""
    row = db.query_one("SELECT coalesce(max(id), 0) AS n FROM erasures")
    return int(row["n"]) if row is not None else 0


__all__ = ["GraphState", "graph_state", "newest_erasure"]

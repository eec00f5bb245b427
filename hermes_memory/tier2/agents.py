"""The agents (scopes) that share one store: store-wide, for ``list_agents`` (Engram's)."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory.tier2.db import Database


@dataclass(frozen=True, slots=True)
class ScopeCount:
    """A scope that holds memory, with its stored episodes and facts (archived and superseded included)."""

    scope: str
    episodes: int
    facts: int


def scope_counts(db: Database) -> list[ScopeCount]:
    """Every scope holding episodes or facts, by name. One query over the two tables (the facts' scope
    index; episodes are counted per scope in one pass)."""
    rows = db.query(
        "SELECT scope, sum(e) AS episodes, sum(f) AS facts FROM ("
        "SELECT scope, count(*) AS e, 0 AS f FROM episodes GROUP BY scope UNION ALL "
        "SELECT scope, 0 AS e, count(*) AS f FROM facts GROUP BY scope) GROUP BY scope ORDER BY scope"
    )
    return [ScopeCount(str(r["scope"]), int(r["episodes"]), int(r["facts"])) for r in rows]


__all__ = ["ScopeCount", "scope_counts"]

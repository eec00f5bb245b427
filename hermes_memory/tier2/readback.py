"""Whole-store reads for the benchmarks (``bench/``): every episode, fact and timeline event of a Tier 2
database in every scope, in row order, as records, so a benchmark scores what was stored without running
SQL of its own."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory.records import Episode, Fact
from hermes_memory.tier2._util import loads_list
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.episodes import _row_to_episode
from hermes_memory.tier2.fact_rows import row_to_fact


@dataclass(frozen=True, slots=True)
class EventSpan:
    """When a timeline event happened (``end_timestamp``: None for a moment) and the turns it came from."""

    timestamp: float
    end_timestamp: float | None
    source_episodes: tuple[str, ...]


def all_episodes(db: Database) -> list[Episode]:
    """Every stored episode, in row order."""
    return [_row_to_episode(r) for r in db.query("SELECT * FROM episodes ORDER BY id")]


def all_facts(db: Database) -> list[Fact]:
    """Every stored fact (archived and superseded ones too), in row order."""
    return [row_to_fact(r) for r in db.query("SELECT * FROM facts ORDER BY id")]


def event_spans(db: Database, event_type: str) -> list[EventSpan]:
    """The time span and source turns of every timeline event of ``event_type``, in row order."""
    rows = db.query(
        "SELECT timestamp, end_timestamp, source_episodes FROM timeline WHERE event_type = ? ORDER BY id",
        (event_type,),
    )
    return [EventSpan(r["timestamp"], r["end_timestamp"], loads_list(r["source_episodes"])) for r in rows]


__all__ = ["EventSpan", "all_episodes", "all_facts", "event_spans"]

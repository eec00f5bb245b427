"""Tier 2: structured knowledge in SQLite (facts, entities, relations, timeline, episodes, audit)."""

from hermes_memory.tier2.db import Database
from hermes_memory.tier2.store import Tier2

__all__ = ["Database", "Tier2"]

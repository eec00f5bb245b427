"""Tier 2: structured knowledge (facts, entities, relations, timeline, episodes, audit) in SQLite, or on a
PostgreSQL server (``tier2.engines``)."""

from hermes_memory.tier2.db import Database, SqliteDatabase
from hermes_memory.tier2.store import Tier2

__all__ = ["Database", "SqliteDatabase", "Tier2"]

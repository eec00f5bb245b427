"""Tier 2 schema: numbered migrations, each applied together with its record in one transaction. Their
SQL is in ``schema_tables`` (1 to 10, 16 and 17; 14 adds a column when missing) and ``recall_log`` (11
and 12)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from hermes_memory.errors import StorageError
from hermes_memory.security.threats import DETECTOR_VERSION
from hermes_memory.tier2 import assistant_retire, verdicts
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.recall_log import (
    RECALL_CHANGES,
    RECALL_READS,
    RecallChange,
    recall_changes,
    recall_generation,
)
from hermes_memory.tier2.schema_tables import (
    AUDIT_SCOPE,
    DURABLE_VECTORS,
    EPISODE_NEIGHBOURS,
    EPISODE_SPEAKERS,
    ERASURES,
    FACT_ENTITIES_IN_ORDER,
    INGEST,
    INITIAL,
    MAINTENANCE,
    SEMANTIC,
    THREAT_DETECTOR,
    THREAT_VERDICTS,
    add_erasure_seen,
    add_erasure_words,
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    # Runs after the SQL, in the same transaction (a data backfill the SQL cannot express).
    then: Callable[[sqlite3.Connection], object] | None = None
    # The engine the migration is for (None: both); on the other one only its version is recorded.
    engine: str | None = None


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial", INITIAL),
    Migration(2, "semantic_chunks_and_embed_queue", SEMANTIC),
    Migration(3, "ingest_queue", INGEST),
    Migration(4, "maintenance_runs", MAINTENANCE),
    Migration(5, "audit_scope", AUDIT_SCOPE),
    Migration(6, "episode_neighbours_index", EPISODE_NEIGHBOURS),
    Migration(7, "durable_vectors", DURABLE_VECTORS),
    Migration(8, "threat_verdicts", THREAT_VERDICTS, then=verdicts.backfill),
    Migration(9, "erasures", ERASURES),
    Migration(10, "threat_detector_version", THREAT_DETECTOR, then=verdicts.expire_stale),
    Migration(11, "recall_reads", RECALL_READS),
    Migration(12, "recall_changes_subject_key", RECALL_CHANGES),
    # Data only: what earlier releases learned from the assistant's own words (``assistant_retire``).
    Migration(13, "retire_assistant_knowledge", "", then=assistant_retire.retire),
    Migration(14, "erasure_seen", "", then=add_erasure_seen),
    Migration(15, "erasure_words", "", then=add_erasure_words),
    # PostgreSQL only: the newest facts of an entity by one index probe (SQLite's rowid order is its
    # index's own).
    Migration(16, "fact_entities_in_order", FACT_ENTITIES_IN_ORDER, engine="postgresql"),
    Migration(17, "episode_speakers_index", EPISODE_SPEAKERS),
)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS memory_schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


def current_version(db: Database) -> int:
    db.execute(_VERSION_TABLE)
    row = db.query_one("SELECT max(version) AS v FROM memory_schema_version")
    return int(row["v"]) if row is not None and row["v"] is not None else 0


def migrate(db: Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply every migration newer than the DB's version; returns the versions applied.

    Each migration and its version row commit together, so a crash leaves the DB at a version boundary.
    Raises StorageError if the DB was written by a newer release.
    """
    applied: list[int] = []
    latest = migrations[-1].version if migrations else 0
    with db.atomic() as conn:
        conn.execute(_VERSION_TABLE)
    found = current_version(db)
    if found > latest:
        raise StorageError(
            f"memory database {db.location} has schema version {found}, newer than this release "
            f"supports ({latest}); upgrade hermes-memory"
        )
    if db.engine == "postgresql":
        from hermes_memory.tier2.pg.schema import BASELINE_VERSION

        applied = _baseline(db, tuple(m for m in migrations if m.version <= BASELINE_VERSION))
        migrations = tuple(m for m in migrations if m.version > BASELINE_VERSION)
    for migration in migrations:
        with db.atomic() as conn:
            # Re-read inside the write lock: another process may have migrated meanwhile.
            row = conn.execute("SELECT max(version) FROM memory_schema_version").fetchone()
            version = int(row[0]) if row[0] is not None else 0
            if migration.version <= version:
                continue
            if migration.engine in (None, db.engine):
                for statement in _split(migration.sql):
                    conn.execute(statement)
                if migration.then is not None:
                    migration.then(conn)
            conn.execute(
                "INSERT INTO memory_schema_version(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            applied.append(migration.version)
    return applied


def _baseline(db: Database, migrations: tuple[Migration, ...]) -> list[int]:
    """PostgreSQL: the schema up to ``BASELINE_VERSION`` at once (``pg.schema``) in an empty store,
    recorded as those migrations' versions; a store already at a version is left as it is. Later
    migrations run as on SQLite (their SQL translated by ``pg.dialect``)."""
    from hermes_memory.tier2.pg.schema import baseline

    with db.atomic() as conn:
        row = conn.execute("SELECT max(version) FROM memory_schema_version").fetchone()
        if row is not None and row[0] is not None:
            return []
        for statement in baseline(DETECTOR_VERSION):
            conn.script(statement)  # PostgreSQL's own SQL: not translated
        at = time.time()
        for migration in migrations:
            conn.execute(
                "INSERT INTO memory_schema_version(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, at),
            )
    return [m.version for m in migrations]


def _split(script: str) -> list[str]:
    """Split a migration into statements; trigger bodies keep their inner semicolons."""
    statements: list[str] = []
    buf: list[str] = []
    in_trigger = False
    for line in script.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER"):
            in_trigger = True
        if in_trigger:
            if upper == "END;":
                statements.append("\n".join(buf))
                buf, in_trigger = [], False
        elif stripped.endswith(";"):
            statements.append("\n".join(buf))
            buf = []
    if buf:
        statements.append("\n".join(buf))
    return statements


__all__ = [
    "MIGRATIONS",
    "Migration",
    "RecallChange",
    "current_version",
    "migrate",
    "recall_changes",
    "recall_generation",
]

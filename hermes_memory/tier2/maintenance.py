"""Store-wide reads and repairs for ``doctor``: queue and row counts, the fact invariants
(``superseded_by`` targets, single-valued predicates, ``fact_entities`` links) and the repair of each.
Every read and write here is store-wide (all scopes); repairs are audited where they change a record."""

from __future__ import annotations

from collections.abc import Collection

from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database

# The queue tables (turns to ingest, vectors to write): both count attempts and keep the last error.
QUEUES = ("ingest_queue", "embed_queue")
_COUNTABLE = frozenset({"facts", "entities", "relations", "timeline", "episodes", "chunks", *QUEUES})
_DANGLING = "superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM facts g WHERE g.uuid = f.superseded_by)"


def _n(db: Database, sql: str, params: tuple[object, ...] = ()) -> int:
    row = db.query_one(sql, params)
    return int(row[0]) if row is not None else 0


def _table(table: str) -> str:
    if table not in _COUNTABLE:
        raise ValueError(f"not a Tier 2 table with rows to count: {table!r}")
    return table


def row_count(db: Database, table: str) -> int:
    """Rows of ``table`` (a content or queue table), every scope."""
    return _n(db, f"SELECT count(*) FROM {_table(table)}")


def queued(db: Database, *, op: str, collection: str | None = None) -> int:
    """Vector writes queued with ``op`` ('upsert'/'delete'), of ``collection`` or of every one."""
    if collection is None:
        return _n(db, "SELECT count(*) FROM embed_queue WHERE op = ?", (op,))
    return _n(db, "SELECT count(*) FROM embed_queue WHERE collection = ? AND op = ?", (collection, op))


def stored_vectors(db: Database) -> int:
    """Vectors stored in Tier 2 (every model)."""
    return _n(db, "SELECT count(*) FROM vectors", ())


def stuck(db: Database, queue: str, max_attempts: int) -> int:
    """Rows of the queue table ``queue`` tried ``max_attempts`` times or more."""
    return _n(db, f"SELECT count(*) FROM {_queue(queue)} WHERE attempts >= ?", (max_attempts,))


def last_error(db: Database, queue: str) -> str | None:
    """The error of the newest row of ``queue`` that failed, if any."""
    row = db.query_one(
        f"SELECT last_error FROM {_queue(queue)} WHERE last_error IS NOT NULL ORDER BY id DESC LIMIT 1"
    )
    return None if row is None else str(row[0])


def _queue(name: str) -> str:
    if name not in QUEUES:
        raise ValueError(f"not a queue table: {name!r}")
    return name


def retry_stuck(db: Database, max_attempts: int) -> None:
    """Give every queued row tried ``max_attempts`` times or more a fresh start (one transaction)."""
    with db.atomic() as conn:
        for table in QUEUES:
            conn.execute(f"UPDATE {table} SET attempts = 0 WHERE attempts >= ?", (max_attempts,))


def dangling_superseded(db: Database) -> int:
    """Facts whose ``superseded_by`` names no fact."""
    return _n(db, f"SELECT count(*) FROM facts f WHERE {_DANGLING}")


def clear_dangling_superseded(db: Database, audit: AuditLog, *, actor: str) -> int:
    """Remove every ``superseded_by`` that names no fact (the fact stays closed), each change audited,
    in one transaction; returns how many."""
    with db.atomic() as conn:
        rows = conn.execute(f"SELECT uuid, superseded_by FROM facts f WHERE {_DANGLING}").fetchall()
        for row in rows:
            conn.execute("UPDATE facts SET superseded_by = NULL WHERE uuid = ?", (row[0],))
            audit.record(
                conn,
                action="doctor_clear_superseded_by",
                tier="tier2",
                actor=actor,
                target_uuid=row[0],
                diff={"missing_superseded_by": row[1]},
            )
        return len(rows)


def exclusive_conflicts(db: Database, predicates: Collection[str]) -> int:
    """Subjects (per scope) holding two different active values of one of the single-valued
    ``predicates`` (lower-case names)."""
    marks = ", ".join("?" for _ in predicates)
    return _n(
        db,
        "SELECT count(*) AS n FROM (SELECT 1 FROM facts WHERE is_archived = 0 AND superseded_at IS NULL "
        f"AND valid_to IS NULL AND subject IS NOT NULL AND lower(predicate) IN ({marks}) "
        "GROUP BY scope, lower(subject), lower(predicate) HAVING count(DISTINCT lower(object)) > 1) "
        "AS clashes",
        tuple(sorted(predicates)),
    )


def orphan_fact_entities(db: Database) -> int:
    """``fact_entities`` rows whose fact or entity is gone."""
    return _n(
        db,
        "SELECT count(*) FROM fact_entities fe "
        "WHERE NOT EXISTS (SELECT 1 FROM facts f WHERE f.uuid = fe.fact_uuid) "
        "OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.uuid = fe.entity_uuid)",
    )


def delete_orphan_fact_entities(db: Database) -> int:
    """Delete the ``fact_entities`` rows whose fact or entity is gone; returns how many."""
    with db.atomic() as conn:
        cur = conn.execute(
            "DELETE FROM fact_entities WHERE fact_uuid NOT IN (SELECT uuid FROM facts) "
            "OR entity_uuid NOT IN (SELECT uuid FROM entities)"
        )
        return int(cur.rowcount)


def rebuild_fts(db: Database, audit: AuditLog, table: str, *, actor: str) -> None:
    """Rebuild ``table``'s FTS index from its content table, audited, in one transaction."""
    with db.atomic() as conn:
        conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('rebuild')")
        audit.record(
            conn,
            action="doctor_fts_rebuild",
            tier="tier2",
            actor=actor,
            target_uuid=None,
            diff={"table": table},
        )


__all__ = [
    "QUEUES",
    "clear_dangling_superseded",
    "dangling_superseded",
    "delete_orphan_fact_entities",
    "exclusive_conflicts",
    "last_error",
    "orphan_fact_entities",
    "queued",
    "rebuild_fts",
    "retry_stuck",
    "row_count",
    "stored_vectors",
    "stuck",
]

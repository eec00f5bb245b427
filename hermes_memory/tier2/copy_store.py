"""One Tier 2 store copied into another, whatever their engines (``ops.migrate``): every scope's records,
the durable queues, the audit log, the forgets still being finished and the stored vectors, in one
transaction of the target, in the source's order; what the target derives itself (full-text indexes,
the change log recall follows, links of facts to their turns, vector sync marks) it derives."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_memory.errors import ConflictError
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.export_rows import store_columns

# Parents before the rows that point at them (uuids); each table read by ``id``.
TABLES = (
    "episodes", "entities", "entity_aliases", "facts", "fact_entities", "relations", "timeline", "chunks",
    "vectors", "embed_queue", "ingest_queue", "memory_audit_log", "maintenance_runs", "erasures",
)  # fmt: skip
_LINKS = {"entity_aliases": "alias_key, entity_uuid", "fact_entities": "fact_uuid, entity_uuid"}
_BATCH = 500


def counts(db: Database) -> dict[str, int]:
    """Rows per copied table, store-wide. Raises StorageError."""
    return {t: int(db.query(f"SELECT count(*) FROM {t}")[0][0]) for t in TABLES}


def _rows(db: Database, table: str, names: list[str]) -> Iterator[list[tuple[object, ...]]]:
    """``table``'s rows over ``names`` in batches, in the order they were written."""
    cols = ", ".join(names)
    if table in _LINKS:
        yield [tuple(r) for r in db.query(f"SELECT {cols} FROM {table} ORDER BY {_LINKS[table]}")]
        return
    last = -1
    while True:
        rows = db.query(f"SELECT id, {cols} FROM {table} WHERE id > ? ORDER BY id LIMIT ?", (last, _BATCH))
        if not rows:
            return
        last = int(rows[-1][0])
        yield [tuple(r)[1:] for r in rows]


def _flat(batch: list[tuple[object, ...]]) -> list[object]:
    return [value for row in batch for value in row]


def copy_store(source: Database, target: Database) -> dict[str, int]:
    """Copy every row of ``TABLES`` from ``source`` into ``target`` in one transaction of ``target``
    (all or nothing), then check the target holds as many rows of each as the source; returns the
    counts. Raises ConflictError when the target holds records already or the counts differ (nothing
    of the copy is kept then), StorageError when either store fails."""
    if any(counts(target).values()):
        raise ConflictError(
            f"the store at {target.location} is not empty: migrate copies into an empty store only"
        )
    before = counts(source)
    with target.atomic() as conn, target.bulk_load(conn):
        for table in TABLES:
            names = [c.name for c in store_columns(source, table)]
            row = f"({', '.join('?' * len(names))})"
            for rows in _rows(source, table, names):
                for at in range(0, len(rows), _BATCH):  # one statement a batch: the engine's
                    batch = rows[at : at + _BATCH]  # per-statement index upkeep runs once for it
                    values = ", ".join([row] * len(batch))
                    conn.execute(f"INSERT INTO {table}({', '.join(names)}) VALUES {values}", _flat(batch))
        copied = {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}
        if copied != before:
            wrong = {t: (before[t], copied[t]) for t in TABLES if before[t] != copied[t]}
            raise ConflictError(f"the copy does not hold what the source does (source, copy): {wrong}")
    target.after_bulk_load()
    return copied


__all__ = ["TABLES", "copy_store", "counts"]

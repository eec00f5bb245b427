"""Import an export all or nothing, within bounded memory, and only into the importing scope.

Two phases. **Stage** (``_import_stage``): the document is read piece by piece (``_jsonstream``: one row at a
time), every row is checked (columns, types, JSON payloads), moved into the view's scopes, threat-scanned
(the write-time verdict; a verdict in the document is never taken) and written to a staging database
beside the store in batches; the curated entries get the write-time threat scan, the stored vectors
their checks. Nothing of the memory is touched. **Apply**: one Tier 2 transaction reads the staged rows
back, parents first, and inserts them; every reference (link tables included) must name a row of this
import or a row the view can read — an unknown uuid and a uuid of another scope get the same error —
and a row whose own uuid is taken outside the view gets a fresh one. The curated entries to add are
written to a journal before the commit, which also records the import in the audit log; they are added
after it (``recovery`` finishes an import cut short between the two). Any failure before the commit
leaves nothing; the retry works.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import uuid as uuidlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory.errors import ConflictError, ValidationError
from hermes_memory.ops import recovery
from hermes_memory.ops._import_stage import Stage, Transform, feed_data, feed_stream
from hermes_memory.ops._jsonstream import JsonStream
from hermes_memory.ops.export import TABLES
from hermes_memory.tier1.curated_store import CuratedStore, serialize_entries
from hermes_memory.tier2 import Tier2, export_rows
from hermes_memory.tier2._util import dumps
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.export_rows import KEYED, readable

# Parents before children: every reference names a row already applied (episodes first: facts and
# timeline events list their source episodes).
APPLY_ORDER = (
    "episodes", "entities", "entity_aliases", "facts", "fact_entities", "relations", "timeline", "chunks",
    "ingest_queue",
)  # fmt: skip
# Columns that must name a row (table they point into); a miss refuses the import.
_HARD = {
    "entity_aliases": {"entity_uuid": "entities"},
    "fact_entities": {"fact_uuid": "facts", "entity_uuid": "entities"},
    "relations": {"from_entity_id": "entities", "to_entity_id": "entities"},
}
# Columns that may name a row; a miss is dropped (as a dangling reference in the exporting store was).
_SOFT = {"relations": {"evidence_fact_id": "facts"}}
_SOFT_LISTS = {
    "facts": {"source_episodes": "episodes"},
    "timeline": {"related_entities": "entities", "related_facts": "facts", "source_episodes": "episodes"},
}
_NOUN = {"entities": "entity", "facts": "fact", "episodes": "episode"}

# -- applying ---------------------------------------------------------------------------------------


def _resolve(
    conn: sqlite3.Connection, stage: Stage, table: str, index: int, row: dict[str, Any]
) -> dict[str, Any]:
    """``row`` with its references mapped to the rows they became and checked against the view: a hard
    reference that names nothing readable refuses the import (one message whether the uuid is unknown or
    of another scope), a soft one is dropped. Raises ValidationError."""
    view = stage.view
    out = dict(row)
    hard = dict(_HARD.get(table, {}))
    if table == "chunks" and row.get("source_uuid") is not None:
        hard["source_uuid"] = "facts" if row.get("source_kind") == "fact" else "episodes"
    for column, target in hard.items():
        value = stage.mapped(out.get(column))
        if not isinstance(value, str) or not readable(conn, view, target, value):
            raise ValidationError(
                f"export table {table!r} row {index}: {column} {row.get(column)!r} names no "
                f"{_NOUN[target]} of this export or of this memory"
            )
        out[column] = value
    for column, target in _SOFT.get(table, {}).items():
        value = stage.mapped(out.get(column))
        out[column] = value if isinstance(value, str) and readable(conn, view, target, value) else None
    for column, target in _SOFT_LISTS.get(table, {}).items():
        raw = out.get(column)
        if raw is None:
            continue
        try:
            items = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            items = None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ValidationError(
                f"export table {table!r} row {index}: {column} must be a JSON list of uuids"
            )
        kept = [m for m in map(stage.mapped, items) if readable(conn, view, target, m)]
        if kept != items:
            out[column] = dumps(kept)
    return out


def _apply(
    tier2: Tier2, curated: CuratedStore | None, stage: Stage, *, merge: bool, import_id: str, actor: str
) -> dict[str, Any]:
    view = stage.view
    imported = dict.fromkeys(APPLY_ORDER, 0)
    skipped = dict.fromkeys(APPLY_ORDER, 0)
    db_path = tier2.db.path
    journal: Path | None = None
    try:
        with tier2.db.atomic() as conn:
            has_curated = curated is not None and any(curated.entries(s) for s in stage.tier1)
            if not merge and (has_curated or not export_rows.is_empty(conn, view, TABLES)):
                raise ConflictError(
                    "import without merge needs an empty memory home; import with merge=True "
                    "(the CLI's --merge)"
                )
            for table in APPLY_ORDER:
                columns = stage.columns[table]
                key = KEYED.get(table)
                for index, staged in stage.staged(table):
                    row = _resolve(conn, stage, table, index, staged)
                    later = row.pop("superseded_by", None) if table == "facts" else None
                    existing = export_rows.duplicate(conn, view, table, row) if merge else None
                    if existing is not None:
                        if key is not None and row.get(key) != existing:
                            stage.remap(str(row[key]), existing)
                        skipped[table] += 1
                        continue
                    if key is not None and row.get(key) is not None:
                        row[key] = _own_key(conn, stage, table, key, index, row[key])
                    names = [c for c in columns if c in row]
                    ignore = merge and key is None
                    try:
                        inserted = export_rows.insert(conn, table, row, names, or_ignore=ignore)
                    except sqlite3.IntegrityError as exc:
                        raise ValidationError(
                            f"export table {table!r} row {index}: rejected by the schema: {exc}"
                        ) from exc
                    if not inserted:
                        skipped[table] += 1
                        continue
                    imported[table] += 1
                    if later is not None:  # linked once every fact of the import is in
                        stage.db.add_later(row["uuid"], later)
                    if table == "chunks":
                        tier2.embed_queue.enqueue(conn, CHUNKS_COLLECTION, str(row["uuid"]), "upsert")
                    elif table == "entities":
                        tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, str(row["uuid"]), "upsert")
                if table == "facts":
                    _link_superseded(conn, stage)
            vectors_added = export_rows.add_vectors(conn, stage.db.vectors())
            entries = _entries_to_add(curated, stage.tier1)
            marker = f"{recovery.IMPORT_TARGET}{import_id}"
            pending = sum(len(e) for e in entries.values())
            diff = {"imported": imported, "tier1_pending": pending}
            tier2.audit.record(
                conn, action="import", tier="tier2", actor=actor, target_uuid=marker, diff=diff
            )
            if entries:  # the commit point of the curated part: written before, applied after the commit
                journal = recovery.write_journal(db_path, import_id, entries)
    except BaseException:
        if journal is not None:
            journal.unlink(missing_ok=True)
        raise
    added = 0
    if journal is not None and curated is not None:
        added = recovery.apply_entries(curated, entries)
        journal.unlink()
    return {
        "imported": imported,
        "skipped": skipped,
        "tier1_added": added,
        "flagged": dict(stage.flagged),
        "vectors": f"{vectors_added} stored vectors imported; only texts without one are embedded",
    }


def _own_key(conn: sqlite3.Connection, stage: Stage, table: str, key: str, index: int, value: Any) -> Any:
    """The row's own uuid, or a fresh one when the uuid is taken outside the view (never said: that
    would tell the importer the uuid exists elsewhere). Raises ValidationError for a uuid the export
    holds twice."""
    if not export_rows.key_taken(conn, table, key, value):
        return value
    if export_rows.key_taken(conn, table, key, value, stage.view):
        raise ValidationError(
            f"export table {table!r} row {index}: {key} {value!r} appears twice in the export"
        )
    fresh = str(uuidlib.uuid4())
    stage.remap(str(value), fresh)
    return fresh


def _link_superseded(conn: sqlite3.Connection, stage: Stage) -> None:
    for batch in stage.db.later():
        for fact, ref in batch:
            target = stage.mapped(ref)
            if readable(conn, stage.view, "facts", target):
                export_rows.link_superseded(conn, fact, target)


def _entries_to_add(curated: CuratedStore | None, tier1: dict[str, list[str]]) -> dict[str, list[str]]:
    """The new curated entries, checked against the stores' limits now (before anything commits).
    Raises ConflictError when they do not fit."""
    if curated is None:
        return {}
    out: dict[str, list[str]] = {}
    for store, entries in tier1.items():
        current = curated.entries(store)
        new = [e for e in entries if e not in current]
        attempted = len(serialize_entries([*current, *new]))
        if attempted > curated.limit_for(store):
            raise ConflictError(
                f"the export's {store} entries would put the curated store at {attempted:,}/"
                f"{curated.limit_for(store):,} chars; consolidate it first (nothing was imported)"
            )
        if new:
            out[store] = new
    return out


# -- entry points -----------------------------------------------------------------------------------


def _run(
    tier2: Tier2, curated: CuratedStore | None, feed: Callable[[Stage], None], *, merge: bool,
    transform: Transform | None, actor: str,
) -> dict[str, Any]:  # fmt: skip
    view = tier2.view
    view.write_own  # noqa: B018 - the admin view cannot import: raises StorageError before any work
    tier2.ingest_queue.absorb()  # queued turns still in the inbox count as memory (merge, emptiness)
    info = {t: export_rows.store_columns(tier2.db, t) for t in TABLES}
    columns = {t: [c.name for c in cols] for t, cols in info.items()}
    required = {t: {c.name for c in cols if c.required} for t, cols in info.items()}
    db_path = tier2.db.path
    import_id = uuidlib.uuid4().hex
    with recovery.exclusive(db_path.parent, wait=True):
        for stale in db_path.parent.glob(f".{db_path.name}.import-*.staging.db*"):
            stale.unlink()  # an import killed while staging (we hold the lock: none runs now)
        path = db_path.with_name(f".{db_path.name}.import-{import_id}.staging.db")
        stage = Stage(path, columns, required, view, transform)
        try:
            feed(stage)
            stage.finish()
            return _apply(tier2, curated, stage, merge=merge, import_id=import_id, actor=actor)
        finally:
            stage.close()


def import_data(
    tier2: Tier2, curated: CuratedStore | None, data: Any, *, merge: bool = True,
    transform: Transform | None = None, actor: str = "user",
) -> dict[str, Any]:  # fmt: skip
    """Import an export given as data, all or nothing (see the module doc); returns counts per table.

    ``merge=True`` skips rows that duplicate rows of the view (same uuid, content hash or identity);
    ``merge=False`` needs an empty view and imports exactly. ``transform(table, row)`` (and
    ``transform("tier1", entries)``) may rewrite what is stored (secret redaction). Raises ValidationError
    for a malformed document or a reference outside the view, ThreatDetectedError for a flagged curated
    entry, ConflictError (not empty without merge; curated limits), StorageError (admin view, the store).
    """
    return _run(
        tier2, curated, lambda stage: feed_data(data, stage), merge=merge, transform=transform, actor=actor
    )


def import_file(
    tier2: Tier2, curated: CuratedStore | None, path: str | os.PathLike[str], *, merge: bool = True,
    transform: Transform | None = None, actor: str = "user",
) -> dict[str, Any]:  # fmt: skip
    """``import_data`` for an export file, read piece by piece (memory holds one row at a time).
    Raises ValidationError when the file is missing, unreadable or not JSON; what ``import_data`` raises."""

    def feed(stage: Stage) -> None:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block or never end
                raise ValidationError(f"export file {os.fspath(path)} is not a regular file")
            with open(path, encoding="utf-8") as fh:
                feed_stream(JsonStream(fh, os.fspath(path)), stage)
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the path
            raise ValidationError(f"cannot read export file {os.fspath(path)!r}: {exc}") from exc

    return _run(tier2, curated, feed, merge=merge, transform=transform, actor=actor)


__all__ = ["APPLY_ORDER", "import_data", "import_file"]

"""Import an export all or nothing, within bounded memory, and only into the importing scope.

Two phases. **Stage**: the document is read piece by piece (``_jsonstream``: one row in memory at a
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory.errors import ConflictError, ThreatDetectedError, ValidationError
from hermes_memory.ops import recovery
from hermes_memory.ops._jsonstream import JsonStream
from hermes_memory.ops.export import (
    FORMAT,
    TABLES,
    VERSION,
    _duplicate,
    _in_view,
    _into_view,
    _is_empty,
    _vector_row,
)
from hermes_memory.scoping import ScopeView
from hermes_memory.security.threats import first_threat
from hermes_memory.tier1.curated_store import CuratedStore, serialize_entries
from hermes_memory.tier2 import Tier2, verdicts
from hermes_memory.tier2._util import dumps, loads_dict, loads_list
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION

# Parents before children: every reference names a row already applied (episodes first: facts and
# timeline events list their source episodes).
APPLY_ORDER = (
    "episodes", "entities", "entity_aliases", "facts", "fact_entities", "relations", "timeline", "chunks",
    "ingest_queue",
)  # fmt: skip
_KEYED = {
    "entities": "uuid", "facts": "uuid", "relations": "uuid", "timeline": "uuid", "episodes": "uuid",
    "chunks": "uuid", "ingest_queue": "turn_uuid",
}  # fmt: skip
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
_BATCH = 2000
_MAX_TIER1_CHARS = 1 << 20

Transform = Callable[[str, Any], Any]


class _Stage:
    """The staging database of one import and what the document said besides its rows."""

    def __init__(
        self, path: Path, columns: dict[str, list[str]], required: dict[str, set[str]], view: ScopeView,
        transform: Transform | None,
    ):  # fmt: skip
        self.path = path
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # owner only from the start
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = OFF")  # scratch: a crash discards it anyway
        self.conn.execute("PRAGMA synchronous = OFF")
        self.conn.executescript(
            "CREATE TABLE rows(seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, body TEXT NOT NULL);"
            "CREATE INDEX rows_tbl ON rows(tbl, seq);"
            "CREATE TABLE vectors(model_id TEXT, text_hash TEXT, dim INTEGER, vector BLOB);"
            "CREATE TABLE remap(old TEXT PRIMARY KEY, new TEXT NOT NULL) WITHOUT ROWID;"
            "CREATE TABLE later(uuid TEXT NOT NULL, ref TEXT NOT NULL);"
        )
        self.conn.execute("BEGIN")
        self.columns = columns
        self.required = required
        self.view = view
        self.transform = transform
        self.meta: dict[str, Any] = {}
        self.tier1: dict[str, list[str]] = {}
        self.rows: dict[str, int] = dict.fromkeys(TABLES, 0)
        self.flagged = {"episodes": 0, "facts": 0}
        self.vectors = 0
        self._pending = 0
        self._saw_tier2 = False

    # -- staging ------------------------------------------------------------------------------------
    def _written(self) -> None:
        self._pending += 1
        if self._pending >= _BATCH:
            self.conn.execute("COMMIT")
            self.conn.execute("BEGIN")
            self._pending = 0

    def add_meta(self, key: str, value: Any) -> None:
        if key == "tier1":
            self.tier1 = _tier1(value if self.transform is None else self.transform("tier1", value))
        else:
            self.meta[key] = value
            if key == "format" and value != FORMAT:
                raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")

    def add_row(self, table: str, raw: Any) -> None:
        self._saw_tier2 = True
        if table not in TABLES:
            raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
        if not isinstance(raw, dict):
            raise ValidationError(f"export table {table!r} must be a list of objects")
        if self.transform is not None:
            raw = self.transform(table, raw)
        index = self.rows[table]
        _check_row(self.columns[table], self.required[table], table, index, raw)
        row = _into_view(self.view, table, raw)
        if table in ("episodes", "facts"):
            row["threat"] = _verdict(table, index, row)
            self.flagged[table] += row["threat"] == verdicts.FLAGGED
        self.conn.execute(
            "INSERT INTO rows(tbl, body) VALUES (?, ?)", (table, json.dumps(row, ensure_ascii=False))
        )
        self.rows[table] += 1
        self._written()

    def saw_table(self) -> None:
        self._saw_tier2 = True

    def add_vector(self, index: int, item: Any) -> None:
        self.conn.execute("INSERT INTO vectors VALUES (?, ?, ?, ?)", _vector_row(index, item))
        self.vectors += 1
        self._written()

    def finish(self) -> None:
        """Checks that need the whole document. Raises ValidationError."""
        if self.meta.get("format") != FORMAT:
            raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")
        if self.meta.get("version") != VERSION:
            found = self.meta.get("version")
            raise ValidationError(f"unsupported export version {found!r} (this release reads {VERSION})")
        if not self._saw_tier2:
            raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
        self.conn.execute("COMMIT")

    # -- reading back --------------------------------------------------------------------------------
    def staged(self, table: str) -> Iterator[tuple[int, dict[str, Any]]]:
        cursor = self.conn.execute("SELECT body FROM rows WHERE tbl = ? ORDER BY seq", (table,))
        index = 0
        while batch := cursor.fetchmany(_BATCH):
            for (body,) in batch:
                yield index, json.loads(body)
                index += 1

    def remap(self, old: str, new: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO remap VALUES (?, ?)", (old, new))

    def mapped(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        row = self.conn.execute("SELECT new FROM remap WHERE old = ?", (value,)).fetchone()
        return value if row is None else row[0]

    def close(self) -> None:
        self.conn.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def _tier1(value: Any) -> dict[str, list[str]]:
    """The curated entries of the document after the write-time checks. Raises ValidationError,
    ThreatDetectedError."""
    if not isinstance(value, dict) or not all(
        s in ("memory", "user") and isinstance(e, list) and all(isinstance(x, str) for x in e)
        for s, e in value.items()
    ):
        raise ValidationError("export 'tier1' must map 'memory'/'user' to lists of strings")
    if sum(len(x) for e in value.values() for x in e) > _MAX_TIER1_CHARS:
        raise ValidationError(f"export 'tier1' holds more than {_MAX_TIER1_CHARS} characters")
    out: dict[str, list[str]] = {}
    for store, entries in value.items():
        clean = [e.strip() for e in entries]
        for i, entry in enumerate(clean):
            if not entry:
                raise ValidationError(f"export 'tier1' {store!r} entry {i}: an entry cannot be empty")
            finding = first_threat(entry, "strict")
            if finding is not None:
                raise ThreatDetectedError(f"export 'tier1' {store!r} entry {i}: {finding.message}")
        out[store] = list(dict.fromkeys(clean))
    return out


def _check_row(columns: list[str], required: set[str], table: str, index: int, row: dict[str, Any]) -> None:
    unknown = set(row) - set(columns)
    if unknown:
        raise ValidationError(f"export table {table!r} row {index}: unknown columns {sorted(unknown)}")
    missing = required - set(row)
    if missing:
        raise ValidationError(f"export table {table!r} row {index}: missing columns {sorted(missing)}")
    for key, value in row.items():
        if value is not None and not isinstance(value, (str, int, float)):
            raise ValidationError(f"export table {table!r} row {index}: column {key!r} is not a scalar")


def _verdict(table: str, index: int, row: dict[str, Any]) -> int:
    def text(key: str) -> str:
        value = row.get(key)
        return "" if value is None else str(value)

    try:
        if table == "episodes":
            meta = loads_dict(row.get("metadata") if isinstance(row.get("metadata"), str) else None)
            return verdicts.episode_verdict(
                text("text"), text("speaker"), text("session_id"), text("role"), meta
            )
        sources = loads_list(
            row.get("source_episodes") if isinstance(row.get("source_episodes"), str) else None
        )
        return verdicts.fact_verdict(
            text("content"), text("category"), text("source_type"), text("source_id"), sources
        )
    except ValueError as exc:
        raise ValidationError(
            f"export table {table!r} row {index}: a JSON column is not JSON: {exc}"
        ) from exc


# -- feeding the stage ------------------------------------------------------------------------------


def _feed_stream(stream: JsonStream, stage: _Stage) -> None:
    for key in stream.members():
        if key == "tier2":
            if not stream.at("{"):
                raise ValidationError(
                    f"export 'tier2' must be an object with tables among {', '.join(TABLES)}"
                )
            for table in stream.members():
                if table not in TABLES:
                    raise ValidationError(
                        f"export 'tier2' must be an object with tables among {', '.join(TABLES)}"
                    )
                if not stream.at("["):
                    raise ValidationError(f"export table {table!r} must be a list of objects")
                stage.saw_table()
                for _ in stream.items():
                    stage.add_row(table, stream.value())
            stage.saw_table()
        elif key == "vectors" and stream.at("["):
            for index, _ in enumerate(stream.items()):
                stage.add_vector(index, stream.value())
        else:
            stage.add_meta(key, stream.value())
    stream.end()


def _feed_data(data: Any, stage: _Stage) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")
    for key in ("format", "version", "schema_version"):
        if key in data:
            stage.add_meta(key, data[key])
    if data.get("version") != VERSION:
        raise ValidationError(
            f"unsupported export version {data.get('version')!r} (this release reads {VERSION})"
        )
    stage.add_meta("tier1", data.get("tier1", {}))
    tier2 = data.get("tier2")
    if not isinstance(tier2, dict) or set(tier2) - set(TABLES):
        raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
    for table, rows in tier2.items():
        if not isinstance(rows, list):
            raise ValidationError(f"export table {table!r} must be a list of objects")
        stage.saw_table()
        for row in rows:
            stage.add_row(table, row)
    stage.saw_table()
    items = data.get("vectors")
    if isinstance(items, list):
        for index, item in enumerate(items):
            stage.add_vector(index, item)


# -- applying ---------------------------------------------------------------------------------------


def _readable(conn: sqlite3.Connection, view: ScopeView, table: str, value: str) -> bool:
    where, params = view.where("scope")
    return (
        conn.execute(f"SELECT 1 FROM {table} WHERE uuid = ? AND {where}", (value, *params)).fetchone()
        is not None
    )


def _resolve(
    conn: sqlite3.Connection, stage: _Stage, table: str, index: int, row: dict[str, Any]
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
        if not isinstance(value, str) or not _readable(conn, view, target, value):
            raise ValidationError(
                f"export table {table!r} row {index}: {column} {row.get(column)!r} names no "
                f"{_NOUN[target]} of this export or of this memory"
            )
        out[column] = value
    for column, target in _SOFT.get(table, {}).items():
        value = stage.mapped(out.get(column))
        out[column] = value if isinstance(value, str) and _readable(conn, view, target, value) else None
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
        kept = [m for m in map(stage.mapped, items) if _readable(conn, view, target, m)]
        if kept != items:
            out[column] = dumps(kept)
    return out


def _apply(
    tier2: Tier2, curated: CuratedStore | None, stage: _Stage, *, merge: bool, import_id: str, actor: str
) -> dict[str, Any]:
    view = stage.view
    imported = dict.fromkeys(APPLY_ORDER, 0)
    skipped = dict.fromkeys(APPLY_ORDER, 0)
    db_path = tier2.db.path
    journal: Path | None = None
    try:
        with tier2.db.atomic() as conn:
            has_curated = curated is not None and any(curated.entries(s) for s in stage.tier1)
            if not merge and (has_curated or not _is_empty(conn, view)):
                raise ConflictError("import without merge needs an empty memory home; use merge mode")
            for table in APPLY_ORDER:
                columns = stage.columns[table]
                key = _KEYED.get(table)
                for index, staged in stage.staged(table):
                    row = _resolve(conn, stage, table, index, staged)
                    later = row.pop("superseded_by", None) if table == "facts" else None
                    existing = _duplicate(conn, view, table, row) if merge else None
                    if existing is not None:
                        if key is not None and row.get(key) != existing:
                            stage.remap(str(row[key]), existing)
                        skipped[table] += 1
                        continue
                    if key is not None and row.get(key) is not None:
                        row[key] = _own_key(conn, stage, table, key, index, row[key])
                    names = [c for c in columns if c in row]
                    verb = "INSERT OR IGNORE" if merge and key is None else "INSERT"
                    try:
                        cur = conn.execute(
                            f"{verb} INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                            [row[n] for n in names],
                        )
                    except sqlite3.IntegrityError as exc:
                        raise ValidationError(
                            f"export table {table!r} row {index}: rejected by the schema: {exc}"
                        ) from exc
                    if not cur.rowcount:
                        skipped[table] += 1
                        continue
                    imported[table] += 1
                    if later is not None:  # linked once every fact of the import is in
                        stage.conn.execute("INSERT INTO later VALUES (?, ?)", (row["uuid"], later))
                    if table == "chunks":
                        tier2.embed_queue.enqueue(conn, CHUNKS_COLLECTION, str(row["uuid"]), "upsert")
                    elif table == "entities":
                        tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, str(row["uuid"]), "upsert")
                if table == "facts":
                    _link_superseded(conn, stage)
            vectors_added = _add_vectors(conn, stage)
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


def _own_key(conn: sqlite3.Connection, stage: _Stage, table: str, key: str, index: int, value: Any) -> Any:
    """The row's own uuid, or a fresh one when the uuid is taken outside the view (never said: that
    would tell the importer the uuid exists elsewhere). Raises ValidationError for a uuid the export
    holds twice."""
    if conn.execute(f"SELECT 1 FROM {table} WHERE {key} = ?", (value,)).fetchone() is None:
        return value
    where, params = _in_view(stage.view, table)
    if conn.execute(f"SELECT 1 FROM {table} WHERE {key} = ? AND {where}", (value, *params)).fetchone():
        raise ValidationError(
            f"export table {table!r} row {index}: {key} {value!r} appears twice in the export"
        )
    fresh = str(uuidlib.uuid4())
    stage.remap(str(value), fresh)
    return fresh


def _link_superseded(conn: sqlite3.Connection, stage: _Stage) -> None:
    cursor = stage.conn.execute("SELECT uuid, ref FROM later")
    while batch := cursor.fetchmany(_BATCH):
        for fact, ref in batch:
            target = stage.mapped(ref)
            if _readable(conn, stage.view, "facts", target):
                conn.execute("UPDATE facts SET superseded_by = ? WHERE uuid = ?", (target, fact))


def _add_vectors(conn: sqlite3.Connection, stage: _Stage) -> int:
    before = conn.total_changes
    cursor = stage.conn.execute("SELECT model_id, text_hash, dim, vector FROM vectors")
    while batch := cursor.fetchmany(_BATCH):
        conn.executemany(
            "INSERT OR IGNORE INTO vectors(model_id, text_hash, dim, vector, created_at) "
            "VALUES (?, ?, ?, ?, strftime('%s', 'now'))",
            batch,
        )
    return conn.total_changes - before


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
    tier2: Tier2, curated: CuratedStore | None, feed: Callable[[_Stage], None], *, merge: bool,
    transform: Transform | None, actor: str,
) -> dict[str, Any]:  # fmt: skip
    view = tier2.view
    view.write_own  # noqa: B018 - the admin view cannot import: raises StorageError before any work
    tier2.ingest_queue.absorb()  # queued turns still in the inbox count as memory (merge, emptiness)
    info = {t: [r for r in tier2.db.query(f"PRAGMA table_info({t})") if r["name"] != "id"] for t in TABLES}
    columns = {t: [r["name"] for r in rows] for t, rows in info.items()}
    required = {
        t: {r["name"] for r in rows if r["notnull"] and r["dflt_value"] is None} for t, rows in info.items()
    }
    db_path = tier2.db.path
    import_id = uuidlib.uuid4().hex
    with recovery.exclusive(db_path.parent, wait=True):
        for stale in db_path.parent.glob(f".{db_path.name}.import-*.staging.db*"):
            stale.unlink()  # an import killed while staging (we hold the lock: none runs now)
        path = db_path.with_name(f".{db_path.name}.import-{import_id}.staging.db")
        stage = _Stage(path, columns, required, view, transform)
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
        tier2, curated, lambda stage: _feed_data(data, stage), merge=merge, transform=transform, actor=actor
    )


def import_file(
    tier2: Tier2, curated: CuratedStore | None, path: str | os.PathLike[str], *, merge: bool = True,
    transform: Transform | None = None, actor: str = "user",
) -> dict[str, Any]:  # fmt: skip
    """``import_data`` for an export file, read piece by piece (memory holds one row at a time).
    Raises ValidationError when the file is missing, unreadable or not JSON; what ``import_data`` raises."""

    def feed(stage: _Stage) -> None:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block or never end
                raise ValidationError(f"export file {os.fspath(path)} is not a regular file")
            with open(path, encoding="utf-8") as fh:
                _feed_stream(JsonStream(fh, os.fspath(path)), stage)
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(f"cannot read export file {os.fspath(path)}: {exc}") from exc

    return _run(tier2, curated, feed, merge=merge, transform=transform, actor=actor)


__all__ = ["APPLY_ORDER", "import_data", "import_file"]

"""Tier 2 rows as the export document holds them (every column but the local ``id``), read through a
``ScopeView`` and written back by an import: the reads and writes of ``ops.export`` and
``ops.importer``, each inside the caller's transaction (``conn``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from hermes_memory.scoping import DEFAULT_SCOPE, ScopeView
from hermes_memory.tier2.db import Database

# Tables whose rows are identified by a uuid (others are link rows identified by all their columns).
KEYED = {
    "entities": "uuid", "facts": "uuid", "relations": "uuid", "timeline": "uuid", "episodes": "uuid",
    "chunks": "uuid", "ingest_queue": "turn_uuid",
}  # fmt: skip
# Tables whose rows carry a content hash (a duplicate of one is found by it).
HASHED = ("facts", "episodes", "chunks")
_LINKS = ("entity_aliases", "fact_entities")
_QUEUED_SCOPE = f"coalesce(json_extract(payload, '$.scope'), '{DEFAULT_SCOPE}')"


@dataclass(frozen=True)
class Column:
    """One column of a table (``PRAGMA table_info``)."""

    name: str
    notnull: bool
    default: Any

    @property
    def required(self) -> bool:
        """An import must give it: NOT NULL and no default."""
        return self.notnull and self.default is None


class StoredVector(NamedTuple):
    """A stored vector as the export carries it (``vector``: the float32 blob)."""

    model_id: str
    text_hash: str
    dim: int
    vector: bytes


def in_view(view: ScopeView, table: str) -> tuple[str, list[str]]:
    """SQL (no alias) restricting ``table``'s rows to the view, with its parameters."""
    if view.admin:
        return "1 = 1", []
    scoped, sp = view.where("scope")
    if table == "entity_aliases":
        return f"entity_uuid IN (SELECT uuid FROM entities WHERE {scoped})", sp
    if table == "fact_entities":
        return (
            f"fact_uuid IN (SELECT uuid FROM facts WHERE {scoped}) "
            f"AND entity_uuid IN (SELECT uuid FROM entities WHERE {scoped})",
            sp * 2,
        )
    if table == "ingest_queue":
        return view.where(_QUEUED_SCOPE)
    return scoped, sp


def _column(row: sqlite3.Row) -> Column:
    return Column(str(row["name"]), bool(row["notnull"]), row["dflt_value"])


def columns(conn: sqlite3.Connection, table: str) -> list[Column]:
    """``table``'s columns but ``id``, in table order, read in the caller's transaction."""
    return [_column(c) for c in conn.execute(f"PRAGMA table_info({table})").fetchall() if c["name"] != "id"]


def store_columns(db: Database, table: str) -> list[Column]:
    """``columns`` read outside a transaction. Raises StorageError."""
    return [_column(c) for c in db.query(f"PRAGMA table_info({table})") if c["name"] != "id"]


def read_rows(
    conn: sqlite3.Connection, view: ScopeView, table: str, names: Sequence[str]
) -> list[dict[str, Any]]:
    """The view's rows of ``table`` as {column: value} over ``names``, by ``id`` (link tables, which have
    none of their own, by every column)."""
    order = "id" if table not in _LINKS else ", ".join(names)
    where, params = in_view(view, table)
    rows = conn.execute(f"SELECT {', '.join(names)} FROM {table} WHERE {where} ORDER BY {order}", params)
    return [dict(zip(names, tuple(row), strict=True)) for row in rows.fetchall()]


def chunk_vectors(conn: sqlite3.Connection, view: ScopeView) -> list[StoredVector]:
    """The stored vectors of the view's chunks (every model), by model and text hash."""
    where, params = in_view(view, "chunks")
    rows = conn.execute(
        "SELECT v.model_id, v.text_hash, v.dim, v.vector FROM vectors v WHERE v.text_hash IN "
        f"(SELECT content_hash FROM chunks WHERE {where}) ORDER BY v.model_id, v.text_hash",
        params,
    ).fetchall()
    return [StoredVector(r[0], r[1], r[2], r[3]) for r in rows]


def is_empty(conn: sqlite3.Connection, view: ScopeView, tables: Iterable[str]) -> bool:
    """True when the view holds no row of ``tables`` (other scopes may)."""
    for table in tables:
        where, params = in_view(view, table)
        if conn.execute(f"SELECT 1 FROM {table} WHERE {where} LIMIT 1", params).fetchone() is not None:
            return False
    return True


def duplicate(conn: sqlite3.Connection, view: ScopeView, table: str, row: dict[str, Any]) -> str | None:
    """The existing row's key if ``row`` duplicates one of the view (same uuid, content hash, identity)."""
    key = KEYED.get(table)
    if key is not None and row.get(key) is not None:
        where, where_params = in_view(view, table)
        hit = conn.execute(
            f"SELECT {key} FROM {table} WHERE {key} = ? AND {where}", (row[key], *where_params)
        ).fetchone()
        if hit is not None:
            return str(hit[0])
    if table in HASHED and row.get("content_hash"):
        scope = row.get("scope", "default")
        extra = " AND source_uuid IS ?" if table == "chunks" else ""
        params: tuple[Any, ...] = (row["content_hash"], scope)
        if table == "chunks":
            params += (row.get("source_uuid"),)
        hit = conn.execute(
            f"SELECT uuid FROM {table} WHERE content_hash = ? AND scope = ?{extra}", params
        ).fetchone()
        if hit is not None:
            return str(hit[0])
    if table == "entities":
        hit = conn.execute(
            "SELECT uuid FROM entities WHERE scope = ? AND name_key = ? AND entity_type = ?",
            (row.get("scope", "default"), row.get("name_key"), row.get("entity_type")),
        ).fetchone()
        if hit is not None:
            return str(hit[0])
    if table == "relations":
        where, where_params = in_view(view, table)
        hit = conn.execute(
            "SELECT uuid FROM relations WHERE from_entity_id = ? AND to_entity_id = ? AND relation_type = ?"
            f" AND {where}",
            (row.get("from_entity_id"), row.get("to_entity_id"), row.get("relation_type"), *where_params),
        ).fetchone()
        if hit is not None:
            return str(hit[0])
    return None


def readable(conn: sqlite3.Connection, view: ScopeView, table: str, uuid: str) -> bool:
    """Whether the view can read the row of ``table`` with this uuid."""
    where, params = view.where("scope")
    return (
        conn.execute(f"SELECT 1 FROM {table} WHERE uuid = ? AND {where}", (uuid, *params)).fetchone()
        is not None
    )


def key_taken(
    conn: sqlite3.Connection, table: str, key: str, value: Any, view: ScopeView | None = None
) -> bool:
    """Whether a row of ``table`` has ``key`` = ``value`` (in the view, when one is given)."""
    if view is None:
        return conn.execute(f"SELECT 1 FROM {table} WHERE {key} = ?", (value,)).fetchone() is not None
    where, params = in_view(view, table)
    found = conn.execute(f"SELECT 1 FROM {table} WHERE {key} = ? AND {where}", (value, *params)).fetchone()
    return found is not None


def insert(conn: sqlite3.Connection, table: str, row: dict[str, Any], names: Sequence[str], *,
           or_ignore: bool) -> bool:  # fmt: skip
    """Insert ``row``'s ``names`` columns into ``table``; False when ``or_ignore`` skipped it (a
    conflict). Raises sqlite3.IntegrityError when the schema rejects it."""
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    cur = conn.execute(
        f"{verb} INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        [row[n] for n in names],
    )
    return bool(cur.rowcount)


def link_superseded(conn: sqlite3.Connection, fact_uuid: str, by_uuid: str) -> None:
    """Point an imported fact at the fact that superseded it (no audit: the import is audited)."""
    conn.execute("UPDATE facts SET superseded_by = ? WHERE uuid = ?", (by_uuid, fact_uuid))


def add_vectors(conn: sqlite3.Connection, batches: Iterable[Sequence[tuple[Any, ...]]]) -> int:
    """Store the vectors of ``batches`` ((model_id, text_hash, dim, blob) rows) not stored yet; returns
    how many were added."""
    added = 0
    for batch in batches:
        cursor = conn.executemany(
            "INSERT OR IGNORE INTO vectors(model_id, text_hash, dim, vector, created_at) "
            "VALUES (?, ?, ?, ?, strftime('%s', 'now'))",
            batch,
        )
        added += max(0, cursor.rowcount)
    return added


__all__ = [
    "HASHED",
    "KEYED",
    "Column",
    "StoredVector",
    "add_vectors",
    "chunk_vectors",
    "columns",
    "duplicate",
    "in_view",
    "insert",
    "is_empty",
    "key_taken",
    "link_superseded",
    "read_rows",
    "readable",
    "store_columns",
]

"""The SQL of moving rows between scopes (splitting a store that mixed a gateway's people, assigning a
quarantined session), of planning a whole scope's erasure, and the read-only peek ``status`` uses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.scoping import DEFAULT_SCOPE

# The tables whose rows move with a person (entities and relations stay; see core.people_split).
MOVED = ("episodes", "facts", "timeline", "chunks")
# Every table holding a scope's records, for a whole-scope erasure.
RECORDS = ("entities", "facts", "relations", "timeline", "episodes", "chunks")
# What a derived row names its sources by: (its source turns column, its session column).
_SOURCES = {"facts": "source_id", "timeline": "session_id", "chunks": "session_id"}
_GATEWAY_TURN = (
    "SELECT 1 FROM episodes WHERE json_extract(metadata, '$.source') = 'hermes' "
    "AND coalesce(json_extract(metadata, '$.platform'), '') NOT IN ('', 'cli', 'local') LIMIT 1"
)


def _table(name: str, allowed: tuple[str, ...]) -> str:
    if name not in allowed:
        raise ValueError(f"not a table of scoped records: {name!r}")
    return name


def episode_rows(conn: sqlite3.Connection, scope: str) -> list[tuple[str, str, str | None]]:
    """(uuid, session_id, metadata JSON) of every episode of ``scope``."""
    rows = conn.execute("SELECT uuid, session_id, metadata FROM episodes WHERE scope = ?", (scope,))
    return [(str(u), str(s), m) for u, s, m in rows.fetchall()]


def derived_rows(
    conn: sqlite3.Connection, table: str, scope: str
) -> list[tuple[str, str | None, str | None]]:
    """(uuid, sources, session id) of every fact, timeline event or chunk of ``scope``: ``sources`` is
    the JSON list of source episodes (a chunk's single ``source_uuid`` for chunks)."""
    session = _SOURCES[_table(table, ("facts", "timeline", "chunks"))]
    sources = "source_uuid" if table == "chunks" else "source_episodes"
    rows = conn.execute(f"SELECT uuid, {sources}, {session} FROM {table} WHERE scope = ?", (scope,))
    return [(str(u), src, sid) for u, src, sid in rows.fetchall()]


def count_rows(conn: sqlite3.Connection, table: str, scope: str) -> int:
    return int(
        conn.execute(f"SELECT count(*) FROM {_table(table, MOVED)} WHERE scope = ?", (scope,)).fetchone()[0]
    )


def set_scope(conn: sqlite3.Connection, table: str, uuid: str, scope: str) -> None:
    """Move one row to ``scope`` (inside the caller's transaction)."""
    conn.execute(f"UPDATE {_table(table, MOVED)} SET scope = ? WHERE uuid = ?", (scope, uuid))


def scope_uuids(conn: sqlite3.Connection, table: str, scopes: list[str]) -> list[str]:
    """The uuids of every row of ``table`` in ``scopes``."""
    marks = ",".join("?" * len(scopes))
    rows = conn.execute(f"SELECT uuid FROM {_table(table, RECORDS)} WHERE scope IN ({marks})", scopes)
    return [str(r[0]) for r in rows.fetchall()]


def queued_turns(conn: sqlite3.Connection, scope: str) -> list[int]:
    """The ids of the turns of ``scope`` still in the ingest queue."""
    rows = conn.execute(
        "SELECT id FROM ingest_queue WHERE coalesce(json_extract(payload, '$.scope'), ?) = ?",
        (DEFAULT_SCOPE, scope),
    )
    return [int(r[0]) for r in rows.fetchall()]


def peek(db: Path, quarantine: str) -> tuple[bool, int]:
    """Read-only: (the store holds gateway turns, turns waiting in ``quarantine``); (False, 0) when the
    store does not exist or cannot be read (status reports that itself)."""
    if not db.exists():
        return False, 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            gateway = conn.execute(_GATEWAY_TURN).fetchone() is not None
            row = conn.execute("SELECT count(*) FROM episodes WHERE scope = ?", (quarantine,)).fetchone()
    except sqlite3.Error:
        return False, 0
    return gateway, int(row[0])


__all__ = [
    "MOVED", "RECORDS", "count_rows", "derived_rows", "episode_rows", "peek", "queued_turns",
    "scope_uuids", "set_scope",
]  # fmt: skip

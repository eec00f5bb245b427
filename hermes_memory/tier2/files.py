"""Whole-file operations on a Tier 2 database for backup, restore and erasure: a plain connection to a
copied file, the "is it open elsewhere" probe, integrity and FTS checks, row counts, the restored
store's reset of what it derives, WAL checkpoints and compaction."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from hermes_memory.errors import StorageError
from hermes_memory.tier2 import verdicts
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION, EmbedQueue
from hermes_memory.tier2.db import Database

# The tables a backup's manifest counts.
COUNTED = ("facts", "entities", "relations", "timeline", "episodes", "chunks")
# The content tables with an FTS5 index (``<table>_fts``).
FTS_TABLES = ("facts", "entities", "timeline", "episodes", "chunks")
_FLAGGED_TABLES = ("episodes", "facts")


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}


class DatabaseFile:
    """A plain SQLite connection to a database file that is not a live store (a backup's copy), for
    the checks made before it is opened as one. Raises sqlite3.Error (the caller names the file)."""

    def __init__(self, path: str | os.PathLike[str]):
        self._conn = sqlite3.connect(str(path), isolation_level=None)

    def integrity(self) -> tuple[Any, ...] | None:
        """The first row of SQLite's ``integrity_check`` (``("ok",)`` for a sound file)."""
        row: tuple[Any, ...] | None = self._conn.execute("PRAGMA integrity_check").fetchone()
        return row

    def counts(self) -> dict[str, int]:
        """Row count of every ``COUNTED`` table."""
        return _counts(self._conn)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> DatabaseFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def in_use(db_path: Path) -> bool:
    """Whether another process has the memory database open (a running agent, the MCP server).

    In WAL mode every open connection holds a shared lock on the file, so an exclusive lock is granted
    only when nobody else has it open. Never opens the file with ``open()`` (see ``tier2.db``).
    Raises StorageError for any SQLite failure but a lock.
    """
    if not db_path.exists():
        return False
    probe = sqlite3.connect(str(db_path), timeout=0.2, isolation_level=None)
    try:
        probe.execute("PRAGMA locking_mode = EXCLUSIVE")
        probe.execute("BEGIN EXCLUSIVE")
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return True
        raise StorageError(f"cannot check whether {db_path} is in use: {exc}") from exc
    except sqlite3.DatabaseError:
        return False  # not a database at all (force replaces it): nobody can have it open as one
    finally:
        probe.close()


def integrity_messages(db: Database) -> list[str]:
    """Every row of SQLite's ``integrity_check`` (``["ok"]`` for a sound file); the engine's own check
    on another engine. Raises StorageError."""
    return db.integrity_messages()


def check_fts(db: Database, table: str, *, with_content: bool = False) -> None:
    """Run FTS5's integrity check of ``table``'s index; ``with_content`` also compares the index with
    its content table (in a transaction of its own). Raises StorageError naming the mismatch."""
    db.check_fts(table, with_content=with_content)


def row_counts(db: Database) -> dict[str, int]:
    """Row count of every ``COUNTED`` table, store-wide. Raises StorageError."""
    return {t: int(db.query(f"SELECT count(*) FROM {t}")[0][0]) for t in COUNTED}


def flagged_counts(db: Database) -> dict[str, int]:
    """How many episodes and facts carry the threat verdict "flagged", store-wide."""
    return {t: int(db.query(f"SELECT count(*) FROM {t} WHERE threat = 1")[0][0]) for t in _FLAGGED_TABLES}


def reset_derived(conn: sqlite3.Connection, queue: EmbedQueue) -> None:
    """In the caller's transaction: forget every threat verdict and recompute it, forget how far the
    vector engines synced, and queue every chunk and entity for a vector write (a restored store
    derives these itself, never takes them from the file)."""
    conn.execute("UPDATE episodes SET threat = NULL")
    conn.execute("UPDATE facts SET threat = NULL")
    verdicts.backfill(conn)
    conn.execute("DELETE FROM vector_sync")
    queue.clear(conn)
    for (uuid,) in conn.execute("SELECT uuid FROM chunks ORDER BY id").fetchall():
        queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")
    for (uuid,) in conn.execute("SELECT uuid FROM entities ORDER BY id").fetchall():
        queue.enqueue(conn, ENTITIES_COLLECTION, uuid, "upsert")


def checkpoint(db: Database) -> bool:
    """Checkpoint the WAL into the database and truncate it; False when a reader (of another process)
    kept it from being truncated. Raises StorageError."""
    return db.checkpoint()


def compact(db: Database) -> bool:
    """Make removed text unrecoverable from the database files: merge the FTS segments, VACUUM (rewrites
    every page, so no free page keeps old text), truncate the WAL. False when a reader of another
    process keeps the WAL from being truncated. On another engine, the engine's own compaction. Raises
    StorageError."""
    return db.compact(FTS_TABLES)


__all__ = [
    "COUNTED",
    "FTS_TABLES",
    "DatabaseFile",
    "check_fts",
    "checkpoint",
    "compact",
    "flagged_counts",
    "in_use",
    "integrity_messages",
    "reset_derived",
    "row_counts",
]

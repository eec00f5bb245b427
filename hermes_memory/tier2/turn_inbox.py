"""The turn inbox: a small SQLite file beside the Tier 2 database that ``remember_turn`` commits to.

Why a second file: the ingestion worker holds Tier 2's write lock for a whole turn's transaction
(episodes, chunks, extracted knowledge), and an insert into the same file waits for it — the tail of
``remember_turn`` (measured at 10k turns: p95 ~10 ms, max ~0.5 s). The inbox has its own lock, held only
for single-row inserts and deletes.

How a turn moves on (``IngestQueue.absorb``): inbox rows are copied into the ``ingest_queue`` table in one
Tier 2 transaction (INSERT OR IGNORE by turn key, oldest first) and only then deleted from the inbox. A
crash between the two leaves a row in both places; moving it again is harmless: a turn still queued is
ignored, and a turn already written is recognised by its first episode and dropped
(``Ingestor.process``). So a turn is never lost and never written twice.

The file is created by the first ``add`` (opening a store creates nothing new).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_memory.errors import StorageError
from hermes_memory.tier2.db import Database, SqliteDatabase

_SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_uuid TEXT NOT NULL UNIQUE,
    payload TEXT NOT NULL,
    enqueued_at REAL NOT NULL
)
"""
# Why the rows here could not be moved into Tier 2 (its disk full, a file size limit): one row, cleared
# by the next move that succeeds, so ``status`` can say the queue is stuck and why. Additive: a release
# that does not know it ignores it.
_ERRORS_SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox_error (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    error TEXT NOT NULL,
    at REAL NOT NULL
)
"""


def inbox_path(db_path: str | os.PathLike[str]) -> Path:
    """Where the inbox of the Tier 2 database at ``db_path`` lives (``tier2.db`` -> ``tier2-inbox.db``)."""
    path = Path(db_path)
    return path.with_name(f"{path.stem}-inbox{path.suffix or '.db'}")


class TurnInbox:
    """The inbox file of one Tier 2 database; thread-safe, opened on first use.

    Raises StorageError when the file cannot be created, opened or written.
    """

    def __init__(self, path: str | os.PathLike[str], *, wal: bool = True, busy_timeout_ms: int = 30000):
        self.path = Path(path)
        self._wal = wal
        self._busy_timeout_ms = busy_timeout_ms
        self._db: Database | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _open(self, *, create: bool) -> Database | None:
        with self._lock:
            if self._closed:
                raise StorageError(f"turn inbox {self.path} is closed")
            if self._db is None:
                if not create and not self.path.exists():
                    return None  # nothing was ever added (by any process)
                db = SqliteDatabase(self.path, wal=self._wal, busy_timeout_ms=self._busy_timeout_ms)
                try:
                    with db.atomic() as conn:
                        conn.execute(_SCHEMA)
                        conn.execute(_ERRORS_SCHEMA)
                except BaseException:
                    db.close()
                    raise
                self._db = db
            return self._db

    def add(self, turn_key: str, payload: str, enqueued_at: float) -> bool:
        """Commit one row; False when a row with this key is already waiting here."""
        db = self._open(create=True)
        assert db is not None
        with db.atomic() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO inbox(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)",
                (turn_key, payload, enqueued_at),
            )
            return bool(cur.rowcount == 1)

    def add_many(self, rows: Sequence[tuple[str, str, float]]) -> list[bool]:
        """Commit (turn key, payload, enqueued_at) rows in ONE transaction, all or none; for each, False
        when a row with its key was already waiting here."""
        db = self._open(create=True)
        assert db is not None
        with db.atomic() as conn:
            return [
                conn.execute(
                    "INSERT OR IGNORE INTO inbox(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)", row
                ).rowcount
                == 1
                for row in rows
            ]

    def oldest(self, limit: int, *, after: int = 0) -> list[sqlite3.Row]:
        """Up to ``limit`` rows (id, turn_uuid, payload, enqueued_at) with id > ``after``, oldest first."""
        db = self._open(create=False)
        if db is None:
            return []
        return db.query(
            "SELECT id, turn_uuid, payload, enqueued_at FROM inbox WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )

    def remove(self, ids: Sequence[int]) -> None:
        """Delete rows that were moved (commits at once)."""
        db = self._open(create=False)
        if db is None or not ids:
            return
        with db.atomic() as conn:
            conn.executemany("DELETE FROM inbox WHERE id = ?", [(i,) for i in ids])

    def note_error(self, error: str, at: float) -> None:
        """Record why the waiting rows could not be moved on (replaces an earlier note)."""
        db = self._open(create=True)
        assert db is not None
        with db.atomic() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO inbox_error(id, error, at) VALUES (1, ?, ?)", (error[:2000], at)
            )

    def last_error(self) -> str | None:
        """The noted reason the waiting rows could not be moved on, if any."""
        db = self._open(create=False)
        if db is None:
            return None
        row = db.query_one("SELECT error FROM inbox_error WHERE id = 1")
        return None if row is None else str(row["error"])

    def clear_error(self) -> None:
        db = self._open(create=False)
        if db is not None:
            with db.atomic() as conn:
                conn.execute("DELETE FROM inbox_error")

    def count(self, where: str = "1 = 1", params: Sequence[Any] = ()) -> int:
        """Rows waiting (matching ``where``, an SQL condition over the inbox's columns)."""
        db = self._open(create=False)
        if db is None:
            return 0
        row = db.query_one(f"SELECT count(*) AS n FROM inbox WHERE {where}", params)
        return int(row["n"]) if row is not None else 0

    def compact(self) -> bool:
        """Rewrite the file and truncate its WAL, so no deleted turn's text stays in a free page (after a
        forget). False when a reader in another process kept the WAL from being truncated. Raises
        StorageError."""
        db = self._open(create=False)
        if db is None:
            return True
        db.execute("VACUUM")
        row = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return row is None or int(row[0]) == 0

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._db is not None:
                self._db.close()
                self._db = None


__all__ = ["TurnInbox", "inbox_path"]

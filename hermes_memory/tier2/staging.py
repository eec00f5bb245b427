"""The scratch database an import stages its document in (``ops._import_stage``), beside the store:
the checked rows as JSON text, the stored vectors, the uuids the import gave new values, and the
supersession links to set once every fact is in. Written in batches without a journal (a crash
discards it anyway); owner-only from the start; removed with its side files on ``close``."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Rows per transaction while staging, and per read when reading back.
BATCH = 2000

_SCHEMA = (
    "CREATE TABLE rows(seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, body TEXT NOT NULL);"
    "CREATE INDEX rows_tbl ON rows(tbl, seq);"
    "CREATE TABLE vectors(model_id TEXT, text_hash TEXT, dim INTEGER, vector BLOB);"
    "CREATE TABLE remap(old TEXT PRIMARY KEY, new TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE later(uuid TEXT NOT NULL, ref TEXT NOT NULL);"
)


class StagingDb:
    """One import's scratch database at ``path`` (which must not exist). Raises OSError when it cannot
    be created, sqlite3.Error when SQLite fails."""

    def __init__(self, path: Path):
        self.path = path
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # owner only from the start
        self._conn = sqlite3.connect(str(path), isolation_level=None)
        self._conn.execute("PRAGMA journal_mode = OFF")  # scratch: a crash discards it anyway
        self._conn.execute("PRAGMA synchronous = OFF")
        self._conn.executescript(_SCHEMA)
        self._conn.execute("BEGIN")
        self._pending = 0

    # -- writing (in batches of BATCH rows per transaction) ---------------------------------------------
    def _written(self) -> None:
        self._pending += 1
        if self._pending >= BATCH:
            self._conn.execute("COMMIT")
            self._conn.execute("BEGIN")
            self._pending = 0

    def add_row(self, table: str, body: str) -> None:
        """Stage one row of ``table`` (its JSON text), after the rows staged before it."""
        self._conn.execute("INSERT INTO rows(tbl, body) VALUES (?, ?)", (table, body))
        self._written()

    def add_vector(self, row: tuple[str, str, int, bytes]) -> None:
        """Stage one stored vector (model_id, text_hash, dim, blob)."""
        self._conn.execute("INSERT INTO vectors VALUES (?, ?, ?, ?)", row)
        self._written()

    def commit(self) -> None:
        """Commit what is staged (the document is read whole); later writes commit one by one."""
        self._conn.execute("COMMIT")

    # -- reading back (and what applying records) --------------------------------------------------------
    def rows(self, table: str) -> Iterator[str]:
        """The staged rows of ``table`` (JSON text), in the order they were staged."""
        cursor = self._conn.execute("SELECT body FROM rows WHERE tbl = ? ORDER BY seq", (table,))
        while batch := cursor.fetchmany(BATCH):
            for (body,) in batch:
                yield str(body)

    def vectors(self) -> Iterator[list[tuple[Any, ...]]]:
        """The staged vectors, a batch of (model_id, text_hash, dim, blob) rows at a time."""
        cursor = self._conn.execute("SELECT model_id, text_hash, dim, vector FROM vectors")
        while batch := cursor.fetchmany(BATCH):
            yield batch

    def remap(self, old: str, new: str) -> None:
        """Record that the document's uuid ``old`` became ``new``."""
        self._conn.execute("INSERT OR REPLACE INTO remap VALUES (?, ?)", (old, new))

    def mapped(self, old: str) -> str | None:
        """What ``old`` became, or None when it kept its value."""
        row = self._conn.execute("SELECT new FROM remap WHERE old = ?", (old,)).fetchone()
        return None if row is None else str(row[0])

    def add_later(self, uuid: str, ref: str) -> None:
        """Record that fact ``uuid`` is superseded by ``ref`` (a uuid of the document), to link later."""
        self._conn.execute("INSERT INTO later VALUES (?, ?)", (uuid, ref))

    def later(self) -> Iterator[list[tuple[str, str]]]:
        """The recorded (fact, superseding ref) pairs, a batch at a time."""
        cursor = self._conn.execute("SELECT uuid, ref FROM later")
        while batch := cursor.fetchmany(BATCH):
            yield [(str(u), str(r)) for u, r in batch]

    def close(self) -> None:
        """Close and remove the database and its side files."""
        self._conn.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


__all__ = ["BATCH", "StagingDb"]

"""Looks at a Tier 2 file (or its turn inbox) without opening the store: read-only connections that never
create, migrate or lock it for writing, for ``hermes-memory status`` and the provider's availability
check. A file that is missing reads as empty; one that cannot be read gives None."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# The tables whose rows can be counted here (a table name cannot be a bound parameter).
_COUNTABLE = frozenset({"chunks", "embed_queue", "inbox", "ingest_queue"})


@dataclass(frozen=True, slots=True)
class Failures:
    """Queued turns that failed to be written, and the newest error (None: none recorded)."""

    count: int
    last_error: str | None


@lru_cache(maxsize=1)
def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 (Tier 2 needs it). An in-memory check, no files."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


def count_rows(path: Path, table: str) -> int | None:
    """Rows of ``table`` (one of the queue/chunk tables) in the SQLite file at ``path``: 0 when the file
    or the table does not exist, None when it cannot be read. Raises ValueError for another table."""
    if table not in _COUNTABLE:
        raise ValueError(f"cannot count rows of {table!r}: one of {sorted(_COUNTABLE)} expected")
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone()
        if exists is None:
            return 0
        row = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()  # table: checked above
        return int(row[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


# The reads status makes of a store, in SQL both engines run as written (``tier2.pg.peek`` too).
QUEUE_FAILURES_SQL = (
    "SELECT count(*), (SELECT last_error FROM ingest_queue WHERE last_error IS NOT NULL "
    "ORDER BY id DESC LIMIT 1) FROM ingest_queue WHERE last_error IS NOT NULL"
)
LAST_RUNS_SQL = (
    "SELECT job, triggered_by, started_at, finished_at, status, error FROM maintenance_runs r "
    "WHERE id = (SELECT id FROM maintenance_runs WHERE job = r.job "
    "ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY job"
)


def queue_failures(db_path: Path) -> Failures | None:
    """Turns in the ingest queue of the store at ``db_path`` with an error, and the newest error; None
    when the file cannot be read."""
    row = _first_row(db_path, "ingest_queue", QUEUE_FAILURES_SQL)
    if row is None:
        return None
    return Failures(int(row[0]), row[1]) if row else Failures(0, None)


def inbox_failure(path: Path) -> Failures | None:
    """The turn inbox at ``path``: how many turns wait in it and the error that stopped moving them on
    (count 0 and no error when none was recorded); None when the file cannot be read."""
    row = _first_row(path, "inbox_error", "SELECT (SELECT count(*) FROM inbox), error FROM inbox_error")
    if row is None:
        return None
    return Failures(int(row[0]), row[1]) if row else Failures(0, None)


def turns_behind(db_path: Path) -> int | None:
    """Stored turns of the store at ``db_path`` not yet searchable by meaning (a text of theirs waits in
    the embed queue), read without opening the store; None when the file cannot be read."""
    from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, TURNS_BEHIND_SQL

    row = _first_row(db_path, "embed_queue", TURNS_BEHIND_SQL, (CHUNKS_COLLECTION,))
    if row is None:
        return None
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class LastRun:
    """The latest recorded run of one maintenance job."""

    job: str
    triggered_by: str
    started_at: float
    finished_at: float | None
    status: str
    error: str | None


def last_runs(db_path: Path) -> dict[str, LastRun] | None:
    """The latest run of each maintenance job in the store at ``db_path`` (jobs that never ran are
    absent), read without opening the store for writing; None when the file cannot be read."""
    if not db_path.exists():
        return {}
    try:
        conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='maintenance_runs'")
        if found.fetchone() is None:
            return {}
        rows = conn.execute(LAST_RUNS_SQL).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return {row[0]: LastRun(*row) for row in rows}


def _first_row(path: Path, table: str, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The first row of ``sql`` (with ``params``) on the SQLite file at ``path`` opened read-only; () when
    the file or ``table`` does not exist or there is no row, None when it cannot be read."""
    if not path.exists():
        return ()
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,))
        if found.fetchone() is None:
            return ()
        row = conn.execute(sql, params).fetchone()
        return () if row is None else tuple(row)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


__all__ = [
    "LAST_RUNS_SQL",
    "QUEUE_FAILURES_SQL",
    "Failures",
    "LastRun",
    "count_rows",
    "fts5_available",
    "inbox_failure",
    "last_runs",
    "queue_failures",
]

"""Threat verdicts written with the rows recall shows (episodes, facts): scanned once, when written.

A row's ``threat`` column is 0 when every string recall may show from it is clean (``threats.is_clean``
at ``strict``, the scope recall neutralises with), 1 when something in it is flagged, and NULL when it was
never scanned (written by an older release or imported): reading then neutralises it as before, so a
missing verdict costs time, never safety. Rows are never trusted more than their verdict says.

A verdict is as good as the detector that gave it: ``threat_detector`` (migration 10) records which
``DETECTOR_VERSION`` the stored verdicts come from. When the detector changes, ``refresh`` (run at every
open) sets every verdict back to NULL in one statement (so those rows are neutralised when read until
scanned again) and then re-scans the NULL rows a bounded number at a time (``RESCAN_PER_OPEN`` per open,
in transactions of ``_BATCH`` rows); ``pending`` says whether any may be left, so a store with nothing
to re-scan pays one primary-key read per open.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from hermes_memory.security.threats import DETECTOR_VERSION, is_clean
from hermes_memory.tier2._util import loads_dict, loads_list
from hermes_memory.tier2.db import Database

CLEAN = 0
FLAGGED = 1
_BATCH = 500
# Rows re-scanned per open after a detector change (~50-100 us each: a bounded pause at open; the rest
# waits for the next open and is neutralised when read meanwhile).
RESCAN_PER_OPEN = 2000
# Rows an idle background worker re-scans per one-second cycle until none is left (≈ 60 ms of CPU).
RESCAN_PER_IDLE = 500
_TABLES = ("episodes", "facts")


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (dict values, list items, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def verdict(texts: Iterable[str | None]) -> int:
    """CLEAN when none of the texts holds anything the threat scan flags, else FLAGGED."""
    # One scan of the texts joined: a match inside one text is a match in the join ("\n" is a word
    # boundary and folds into nothing), so a clean join means every text is clean.
    return CLEAN if is_clean("\n".join(t for t in texts if t)) else FLAGGED


def episode_verdict(
    text: str, speaker: str | None, session_id: str, role: str, metadata: Mapping[str, Any] | None
) -> int:
    return verdict([text, speaker, session_id, role, *strings(metadata or {})])


def fact_verdict(
    content: str, category: str, source_type: str, source_id: str | None, source_episodes: Iterable[str]
) -> int:
    return verdict([content, category, source_type, source_id, *source_episodes])


def merged(old: int | None, added: int | None) -> int | None:
    """The verdict of a row that gained strings with verdict ``added``: unknown stays unknown."""
    if old is None or added is None:
        return None
    return max(old, added)


def backfill(conn: sqlite3.Connection) -> int:
    """Scan every episode and fact without a verdict and store it; returns how many rows were scanned.
    Runs inside the caller's transaction (migration 8, an import)."""
    episodes = _backfill_table(
        conn, "episodes", "text, speaker, session_id, role, metadata",
        lambda r: episode_verdict(r[1], r[2], r[3], r[4], loads_dict(r[5])),
    )  # fmt: skip
    facts = _backfill_table(
        conn, "facts", "content, category, source_type, source_id, source_episodes",
        lambda r: fact_verdict(r[1], r[2], r[3], r[4], loads_list(r[5])),
    )  # fmt: skip
    return episodes + facts


def _backfill_table(
    conn: sqlite3.Connection, table: str, columns: str, verdict_of: Callable[[sqlite3.Row], int]
) -> int:
    """Store ``verdict_of(row)`` for every row of ``table`` without a verdict (``row[0]`` is its id,
    then ``columns``), in batches; returns how many rows were scanned."""
    rows = conn.execute(f"SELECT id, {columns} FROM {table} WHERE threat IS NULL").fetchall()
    for start in range(0, len(rows), _BATCH):
        part = rows[start : start + _BATCH]
        conn.executemany(f"UPDATE {table} SET threat = ? WHERE id = ?", [(verdict_of(r), r[0]) for r in part])
    return len(rows)


def _verdict_of(table: str) -> tuple[str, Callable[[sqlite3.Row], int]]:
    if table == "episodes":
        return "text, speaker, session_id, role, metadata", (
            lambda r: episode_verdict(r[1], r[2], r[3], r[4], loads_dict(r[5]))
        )
    return "content, category, source_type, source_id, source_episodes", (
        lambda r: fact_verdict(r[1], r[2], r[3], r[4], loads_list(r[5]))
    )


def expire_stale(conn: sqlite3.Connection) -> bool:
    """When the stored verdicts come from an older detector: set them all back to NULL and record this
    detector, with a re-scan pending. Returns whether they were expired. Runs in the caller's
    transaction (migration 10, ``refresh``)."""
    row = conn.execute("SELECT version FROM threat_detector WHERE id = 1").fetchone()
    if row is not None and int(row[0]) >= DETECTOR_VERSION:
        return False
    for table in _TABLES:
        conn.execute(f"UPDATE {table} SET threat = NULL WHERE threat IS NOT NULL")
    conn.execute(
        "INSERT INTO threat_detector(id, version, pending) VALUES (1, ?, 1) "
        "ON CONFLICT(id) DO UPDATE SET version = excluded.version, pending = 1",
        (DETECTOR_VERSION,),
    )
    return True


def rescan(db: Database, limit: int = RESCAN_PER_OPEN) -> int:
    """Scan up to ``limit`` rows without a verdict (episodes first), ``_BATCH`` per transaction; clears
    ``pending`` when none is left. Returns how many rows were scanned."""
    done = 0
    for table in _TABLES:
        columns, verdict_of = _verdict_of(table)
        while done < limit:
            with db.atomic() as conn:
                rows = conn.execute(
                    f"SELECT id, {columns} FROM {table} WHERE threat IS NULL LIMIT ?",
                    (min(_BATCH, limit - done),),
                ).fetchall()
                conn.executemany(
                    f"UPDATE {table} SET threat = ? WHERE id = ?", [(verdict_of(r), r[0]) for r in rows]
                )
            done += len(rows)
            if len(rows) < _BATCH:
                break
        if done >= limit:
            return done
    with db.atomic() as conn:
        conn.execute("UPDATE threat_detector SET pending = 0 WHERE id = 1")
    return done


def refresh(db: Database, limit: int = RESCAN_PER_OPEN) -> int:
    """At open: expire verdicts of an older detector, then re-scan up to ``limit`` rows while a re-scan
    is pending. Returns how many rows were scanned (0 on the common path: one primary-key read)."""
    row = db.query_one("SELECT version, pending FROM threat_detector WHERE id = 1")
    if row is not None and int(row["version"]) >= DETECTOR_VERSION and not row["pending"]:
        return 0
    if row is None or int(row["version"]) < DETECTOR_VERSION:
        with db.atomic() as conn:
            expire_stale(conn)
    return rescan(db, limit)


__all__ = [
    "CLEAN",
    "FLAGGED",
    "RESCAN_PER_IDLE",
    "RESCAN_PER_OPEN",
    "backfill",
    "episode_verdict",
    "expire_stale",
    "fact_verdict",
    "merged",
    "refresh",
    "rescan",
    "strings",
    "verdict",
]

"""The ``erasures`` table (migration 9): each forget's record of what is left to purge outside its
transaction, struck off step by step (``ops.erasure`` runs the steps). Store-wide: the steps are."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.tier2.db import Database


@dataclass(frozen=True)
class Erasure:
    """One recorded erasure; ``steps`` are the ones still to do."""

    id: int
    target: str
    started_at: float
    steps: tuple[str, ...]


def record(
    conn: sqlite3.Connection,
    *,
    target: str,
    scope: str | None,
    actor: str,
    steps: Sequence[str],
    vector_ids: Sequence[str],
    curated: Mapping[str, Sequence[str]],
    seen: Mapping[str, Any] | None = None,
    words: str | None = None,
) -> int:
    """Record an erasure in the caller's transaction (the one deleting its rows); returns its id.
    ``curated``: the curated entries to remove per store (none: nothing recorded); ``seen``: what to
    scrub from the file of what the agent saw (``ops.seen_file.scrub``'s arguments); ``words``: what
    every host matches its own files against (``ops.erasure_words``, as JSON; kept)."""
    cur = conn.execute(
        "INSERT INTO erasures(target, scope, actor, started_at, steps, vector_ids, curated, seen, words)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (target, scope, actor, time.time(), json.dumps(list(steps)), json.dumps(list(vector_ids)),
         json.dumps({s: list(e) for s, e in curated.items()}) if curated else None,
         json.dumps(dict(seen)) if seen else None, words),
    )  # fmt: skip
    row = cur.fetchone()
    assert row is not None
    return int(row[0])


def unfinished(db: Database) -> list[Erasure]:
    """Erasures with steps left, oldest first (any scope). Raises StorageError."""
    rows = db.query(
        "SELECT id, target, started_at, steps FROM erasures WHERE finished_at IS NULL ORDER BY id"
    )
    return [Erasure(r["id"], r["target"], r["started_at"], tuple(json.loads(r["steps"]))) for r in rows]


def strike(db: Database, erasure_id: int, step: str) -> None:
    """Strike ``step`` off the erasure (finished when none is left); nothing when it is gone."""
    with db.atomic() as conn:
        row = conn.execute("SELECT steps FROM erasures WHERE id = ?", (erasure_id,)).fetchone()
        if row is None:
            return
        steps = [s for s in json.loads(row[0]) if s != step]
        finished = time.time() if not steps else None
        conn.execute(
            "UPDATE erasures SET steps = ?, finished_at = ? WHERE id = ?",
            (json.dumps(steps), finished, erasure_id),
        )


def curated_entries(db: Database, erasure_id: int) -> dict[str, list[str]]:
    """The curated entries the erasure still has to remove, per store (empty once dropped)."""
    row = db.query_one("SELECT curated FROM erasures WHERE id = ?", (erasure_id,))
    entries: dict[str, list[str]] = json.loads(row["curated"]) if row is not None and row["curated"] else {}
    return entries


def drop_curated(db: Database, erasure_id: int) -> None:
    """Drop the curated entries from the record (they are removed)."""
    with db.atomic() as conn:
        conn.execute("UPDATE erasures SET curated = NULL WHERE id = ?", (erasure_id,))


def seen_match(db: Database, erasure_id: int) -> dict[str, Any]:
    """What the erasure still has to scrub from the file of what the agent saw (empty once dropped)."""
    row = db.query_one("SELECT seen FROM erasures WHERE id = ?", (erasure_id,))
    match: dict[str, Any] = json.loads(row["seen"]) if row is not None and row["seen"] else {}
    return match


def drop_seen(db: Database, erasure_id: int) -> None:
    """Drop the names and texts from the record (the file is scrubbed)."""
    with db.atomic() as conn:
        conn.execute("UPDATE erasures SET seen = NULL WHERE id = ?", (erasure_id,))


@dataclass(frozen=True)
class Recorded:
    """An erasure as a host that follows it sees it: ``words`` (JSON, None in a record older than them)."""

    id: int
    started_at: float
    words: str | None


def recorded_after(db: Database, after: int, limit: int = 100) -> list[Recorded]:
    """Up to ``limit`` erasures with an id above ``after``, oldest first. Raises StorageError."""
    rows = db.query(
        "SELECT id, started_at, words FROM erasures WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
    )
    return [Recorded(r["id"], r["started_at"], r["words"]) for r in rows]


def started_at(db: Database, erasure_id: int) -> float | None:
    """When the erasure was recorded; None when the store has none with that id."""
    row = db.query_one("SELECT started_at FROM erasures WHERE id = ?", (erasure_id,))
    return None if row is None else float(row["started_at"])


__all__ = [
    "Erasure", "Recorded", "curated_entries", "drop_curated", "drop_seen", "record", "recorded_after",
    "seen_match", "started_at", "strike", "unfinished",
]  # fmt: skip

"""The durable turn queue: one small insert per remembered turn; a row leaves only when its turn has been
fully written (episodes, extracted knowledge, chunks) in the same transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory.tier2._util import dumps, now
from hermes_memory.tier2.db import Database


@dataclass(frozen=True, slots=True)
class QueuedTurn:
    id: int
    turn_uuid: str
    payload: dict[str, Any]
    attempts: int


class IngestQueue:
    def __init__(self, db: Database):
        self._db = db

    def enqueue(self, turn_uuid: str, payload: Mapping[str, Any]) -> bool:
        """Commit one row (idempotent per ``turn_uuid``); returns False if the turn was already queued."""
        with self._db.atomic() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO ingest_queue(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)",
                (turn_uuid, dumps(dict(payload)), now()),
            )
            return cur.rowcount == 1

    def pending(self, limit: int, *, max_attempts: int | None = None) -> list[QueuedTurn]:
        sql = "SELECT * FROM ingest_queue"
        params: list[Any] = []
        if max_attempts is not None:
            sql += " WHERE attempts < ?"
            params.append(max_attempts)
        rows = self._db.query(sql + " ORDER BY id LIMIT ?", [*params, limit])
        return [QueuedTurn(r["id"], r["turn_uuid"], json.loads(r["payload"]), r["attempts"]) for r in rows]

    def done(self, conn: sqlite3.Connection, item: QueuedTurn) -> None:
        """Remove a processed row inside the transaction that wrote the turn."""
        conn.execute("DELETE FROM ingest_queue WHERE id = ?", (item.id,))

    def fail(self, item: QueuedTurn, error: str) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "UPDATE ingest_queue SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:2000], item.id),
            )

    def count(self) -> int:
        row = self._db.query_one("SELECT count(*) AS n FROM ingest_queue")
        return int(row["n"]) if row else 0

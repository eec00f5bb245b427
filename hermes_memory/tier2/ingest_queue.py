"""The durable turn queue: one small insert per remembered turn; a row leaves only when its turn has been
fully written (episodes, extracted knowledge, chunks) in the same transaction."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hermes_memory.errors import StorageError, StorageFullError
from hermes_memory.records import TurnPayload
from hermes_memory.scoping import DEFAULT_SCOPE, ScopeView
from hermes_memory.tier2._util import dumps, now
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.turn_inbox import TurnInbox

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueuedTurn:
    id: int
    turn_uuid: str
    payload: TurnPayload
    attempts: int


# The scope of a queued turn is in its payload; rows written before scoping have none (= default).
_ROW_SCOPE = f"coalesce(json_extract(payload, '$.scope'), '{DEFAULT_SCOPE}')"


class IngestQueue:
    """The turn queue of one ``ScopeView``: turns are queued under its own scope and only its own
    turns are pending for it (a worker never writes another agent's turn); admin sees every row."""

    def __init__(self, db: Database, view: ScopeView, inbox: TurnInbox | None = None):
        self._db = db
        self._view = view
        # With an inbox, enqueue commits there (never waiting for the worker's turn transaction);
        # ``absorb`` moves rows into this table. See ``turn_inbox``.
        self._inbox = inbox

    def _mine(self) -> tuple[str, list[Any]]:
        if self._view.admin:
            return "1 = 1", []
        return f"{_ROW_SCOPE} = ?", [self._view.own]

    def key(self, turn_id: str) -> str:
        """The queue key (and episode-id seed) of a turn id: scoped, so two agents' ids never collide;
        the default scope keeps the bare id (what stores written before scoping hold)."""
        own = self._view.write_own
        return turn_id if own == DEFAULT_SCOPE else f"{own}\x1f{turn_id}"

    def enqueue(self, turn_uuid: str, payload: TurnPayload) -> bool:
        """Commit one row under the view's own scope (idempotent per ``turn_uuid`` within the scope);
        returns False if the turn was already queued. Raises StorageError for the admin view."""
        body = replace(payload, scope=self._view.write_own).to_dict()
        if self._inbox is not None:
            return self._inbox.add(self.key(turn_uuid), dumps(body), now())
        with self._db.atomic() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO ingest_queue(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)",
                (self.key(turn_uuid), dumps(body), now()),
            )
            return bool(cur.rowcount == 1)

    def enqueue_many(self, turns: Sequence[tuple[str, TurnPayload]]) -> list[bool]:
        """``enqueue`` of several turns in ONE transaction (all committed or none); for each, False if
        it was already queued. Raises StorageError for the admin view."""
        at = now()
        rows = [(self.key(uuid), dumps(replace(payload, scope=self._view.write_own).to_dict()), at)
                for uuid, payload in turns]  # fmt: skip
        if self._inbox is not None:
            return self._inbox.add_many(rows)
        sql = "INSERT OR IGNORE INTO ingest_queue(turn_uuid, payload, enqueued_at) VALUES (?, ?, ?)"
        with self._db.atomic() as conn:
            return [conn.execute(sql, row).rowcount == 1 for row in rows]

    def absorb(self, batch: int = 512) -> int:
        """Move every inbox row (all scopes) into this table, oldest first; returns how many moved.

        Must not run inside a Tier 2 transaction (a rollback of it would lose the moved rows).
        """
        moved = last = 0
        while self._inbox is not None:
            rows = self._inbox.oldest(batch, after=last)  # by id: a row that stayed is not read twice
            if not rows:
                break
            last = rows[-1]["id"]
            try:
                with self._db.atomic() as conn:
                    conn.executemany(
                        "INSERT OR IGNORE INTO ingest_queue(turn_uuid, payload, enqueued_at) "
                        "VALUES (?, ?, ?)",
                        [(r["turn_uuid"], r["payload"], r["enqueued_at"]) for r in rows],
                    )
            except StorageFullError as exc:
                self._note_inbox_error(f"{type(exc).__name__}: {exc}")
                raise
            if moved == 0 and self._inbox.last_error() is not None:
                self._inbox.clear_error()
            # Only after the commit: a crash in between leaves the rows in both (see turn_inbox).
            self._inbox.remove([r["id"] for r in rows])
            moved += len(rows)
        return moved

    def pending(self, limit: int, *, max_attempts: int | None = None) -> list[QueuedTurn]:
        self.absorb()
        mine, params = self._mine()
        sql = f"SELECT * FROM ingest_queue WHERE {mine}"
        if max_attempts is not None:
            sql += " AND attempts < ?"
            params.append(max_attempts)
        rows = self._db.query(sql + " ORDER BY id LIMIT ?", [*params, limit])
        return [QueuedTurn(r["id"], r["turn_uuid"], _payload(r), r["attempts"]) for r in rows]

    def done(self, conn: sqlite3.Connection, item: QueuedTurn) -> None:
        """Remove a processed row inside the transaction that wrote the turn."""
        conn.execute("DELETE FROM ingest_queue WHERE id = ?", (item.id,))

    def fail(self, item: QueuedTurn, error: str) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "UPDATE ingest_queue SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:2000], item.id),
            )

    def _note_inbox_error(self, error: str) -> None:
        assert self._inbox is not None
        try:
            self._inbox.note_error(error, now())
        except StorageError as note:  # the inbox's disk may be full too: the caller raises the cause
            log.warning("could not record why the turn inbox is stuck: %s", note)

    def note_error(self, item: QueuedTurn, error: str) -> None:
        """Record why ``item`` could not be written without counting it as an attempt: the store, not
        the turn, failed (no room to write), so the turn is never retired for it."""
        with self._db.atomic() as conn:
            conn.execute("UPDATE ingest_queue SET last_error = ? WHERE id = ?", (error[:2000], item.id))

    def failing(self) -> tuple[int, str | None]:
        """How many of this view's queued turns failed to be written (they carry an error; they stay
        queued and are retried), and the newest such error."""
        mine, params = self._mine()
        failed = f"FROM ingest_queue WHERE {mine} AND last_error IS NOT NULL"
        row = self._db.query_one(
            f"SELECT count(*) AS n, (SELECT last_error {failed} ORDER BY id DESC LIMIT 1) AS last {failed}",
            [*params, *params],
        )
        count, last = (int(row["n"]), row["last"]) if row is not None else (0, None)
        stuck = self._inbox.last_error() if self._inbox is not None else None
        if stuck is not None:  # the inbox rows could not even be moved into the queue
            count += self._inbox.count(mine, params) if self._inbox is not None else 0
            last = stuck
        return count, last

    def count(self) -> int:
        """Turns waiting (in this table or still in the inbox).

        The inbox is read first: ``absorb`` commits a row here before it deletes it there, so a row
        moved between the two reads is counted twice, never missed (a flush must not see 0 too early)."""
        mine, params = self._mine()
        waiting = self._inbox.count(mine, params) if self._inbox is not None else 0
        row = self._db.query_one(f"SELECT count(*) AS n FROM ingest_queue WHERE {mine}", params)
        return (int(row["n"]) if row else 0) + waiting


def _payload(row: sqlite3.Row) -> TurnPayload:
    """The typed payload of a queue row (any format a release wrote). Raises StorageError naming the
    turn when the row is not a turn (its JSON damaged outside this package)."""
    try:
        return TurnPayload.from_dict(json.loads(row["payload"]))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise StorageError(f"queued turn {row['turn_uuid']!r} has an unreadable payload: {exc}") from exc


__all__ = [
    "IngestQueue",
    "QueuedTurn",
]

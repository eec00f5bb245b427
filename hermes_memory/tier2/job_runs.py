"""The durable record of maintenance runs (table ``maintenance_runs``): one row per run, opened as
'running' when it starts and closed as 'ok' or 'failed' with its result. The scheduler reads it to know
what ran last; a row left 'running' by a crash marks a run that must simply be done again."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from hermes_memory.errors import StorageError
from hermes_memory.tier2._util import dumps
from hermes_memory.tier2.db import Database

TRIGGERS = ("manual", "schedule")


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: int
    job: str
    triggered_by: str
    started_at: float
    finished_at: float | None
    status: str  # running | ok | failed
    result: dict[str, Any] | None
    error: str | None

    @property
    def duration_s(self) -> float | None:
        return None if self.finished_at is None else max(0.0, self.finished_at - self.started_at)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "duration_s": self.duration_s}


def _row_to_run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"],
        job=row["job"],
        triggered_by=row["triggered_by"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        result=json.loads(row["result"]) if row["result"] else None,
        error=row["error"],
    )


class RunLog:
    def __init__(self, db: Database):
        self._db = db

    def start(self, job: str, at: float, triggered_by: str, *, lease_s: float | None = None) -> int | None:
        """Open a 'running' row and return its id.

        With ``lease_s``, return None instead when another run of the job started less than ``lease_s``
        seconds before ``at`` and has not finished (checked and claimed in one write transaction, so two
        processes ticking together do not both run it). A crashed run stops blocking after the lease.
        """
        with self._db.atomic() as conn:
            if lease_s is not None:
                busy = conn.execute(
                    "SELECT 1 FROM maintenance_runs WHERE job = ? AND status = 'running' AND started_at > ?",
                    (job, at - lease_s),
                ).fetchone()
                if busy is not None:
                    return None
            cur = conn.execute(
                "INSERT INTO maintenance_runs(job, triggered_by, started_at, status) "
                "VALUES (?, ?, ?, 'running') RETURNING id",
                (job, triggered_by, at),
            )
            row = cur.fetchone()
            if row is None:
                raise StorageError("maintenance_runs: the insert returned no row id")
            return int(row[0])

    def finish(
        self,
        run_id: int,
        at: float,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> RunRecord:
        """Close a run as 'ok' or 'failed' and return it."""
        with self._db.atomic() as conn:
            conn.execute(
                "UPDATE maintenance_runs SET finished_at = ?, status = ?, result = ?, error = ? WHERE id = ?",
                (at, status, None if result is None else dumps(result), error, run_id),
            )
            row = conn.execute("SELECT * FROM maintenance_runs WHERE id = ?", (run_id,)).fetchone()
        return _row_to_run(row)

    def last(self, job: str, *, status: str | None = None) -> RunRecord | None:
        """The latest run of ``job`` (optionally with this status), by start time."""
        sql = "SELECT * FROM maintenance_runs WHERE job = ?"
        params: list[Any] = [job]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        row = self._db.query_one(sql + " ORDER BY started_at DESC, id DESC LIMIT 1", params)
        return None if row is None else _row_to_run(row)

    def recent(self, *, job: str | None = None, limit: int = 20) -> list[RunRecord]:
        """The newest runs, newest first."""
        sql = "SELECT * FROM maintenance_runs"
        params: list[Any] = []
        if job is not None:
            sql += " WHERE job = ?"
            params.append(job)
        rows = self._db.query(sql + " ORDER BY started_at DESC, id DESC LIMIT ?", [*params, limit])
        return [_row_to_run(r) for r in rows]

    def trim(self, before: float) -> int:
        """Delete finished runs started before ``before``, except each job's latest successful run (the
        scheduler's baseline). Returns how many rows went."""
        with self._db.atomic() as conn:
            cur = conn.execute(
                "DELETE FROM maintenance_runs WHERE started_at < ? AND status != 'running' AND id NOT IN "
                "(SELECT max(id) FROM maintenance_runs WHERE status = 'ok' GROUP BY job)",
                (before,),
            )
            return int(cur.rowcount)

    def tracking_since(self) -> float:
        """When this store began recording runs (the maintenance_runs migration), as the scheduler's
        baseline for a job that never ran: its first due time is the first fire time after that."""
        row = self._db.query_one(
            "SELECT applied_at FROM memory_schema_version WHERE name = 'maintenance_runs'"
        )
        if row is None:
            raise StorageError(
                f"memory database {self._db.path} has no maintenance_runs table (not migrated)"
            )
        return float(row["applied_at"])


__all__ = ["TRIGGERS", "RunLog", "RunRecord"]

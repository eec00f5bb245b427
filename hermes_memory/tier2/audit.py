"""The audit log: every write records action, tier, actor, target and a JSON diff."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hermes_memory.records import AuditEntry
from hermes_memory.tier2._util import dumps, now
from hermes_memory.tier2.db import Database


class AuditLog:
    def __init__(self, db: Database):
        self._db = db

    def record(
        self,
        conn: sqlite3.Connection,
        *,
        action: str,
        tier: str,
        actor: str,
        target_uuid: str | None,
        diff: dict[str, Any] | None = None,
        success: bool = True,
    ) -> None:
        """Append one entry inside the caller's transaction (so it commits with the write)."""
        conn.execute(
            "INSERT INTO memory_audit_log(timestamp, action, tier, actor, target_uuid, diff, success) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (now(), action, tier, actor, target_uuid, None if diff is None else dumps(diff), int(success)),
        )

    def entries(
        self, *, target_uuid: str | None = None, action: str | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        clauses, params = [], []
        if target_uuid is not None:
            clauses.append("target_uuid = ?")
            params.append(target_uuid)
        if action is not None:
            clauses.append("action = ?")
            params.append(action)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.query(
            f"SELECT * FROM memory_audit_log {where} ORDER BY id DESC LIMIT ?", (*params, limit)
        )
        return [
            AuditEntry(
                id=row["id"],
                timestamp=row["timestamp"],
                action=row["action"],
                tier=row["tier"],
                actor=row["actor"],
                target_uuid=row["target_uuid"],
                diff=json.loads(row["diff"]) if row["diff"] else None,
                success=bool(row["success"]),
            )
            for row in rows
        ]

    def count(self) -> int:
        row = self._db.query_one("SELECT count(*) AS n FROM memory_audit_log")
        return int(row["n"]) if row else 0

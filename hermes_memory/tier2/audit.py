"""The audit log: every write records action, tier, actor, target and a JSON diff."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hermes_memory.records import AuditEntry
from hermes_memory.scoping import DEFAULT_SCOPE, ScopeView
from hermes_memory.tier2._util import dumps, now
from hermes_memory.tier2.db import Database

# An entry's scope is its target row's scope (looked up when it is written); entries written before
# scoping have NULL, i.e. "default". "" marks store-wide entries only the admin view reads.
_TARGET_TABLES = ("facts", "entities", "relations", "timeline", "episodes")
_TARGET_SCOPE = " UNION ALL ".join(f"SELECT scope FROM {t} WHERE uuid = ?" for t in _TARGET_TABLES)
ADMIN_ONLY = ""


def visible_entries(view: ScopeView) -> tuple[str, list[str]]:
    """SQL selecting the audit entries a view may read, with its parameters: entries of its readable
    scopes, and Tier 1 (curated) entries, which are per Hermes home and shared by design."""
    if view.admin:
        return "1 = 1", []
    scoped, sp = view.where(f"coalesce(scope, '{DEFAULT_SCOPE}')")
    return f"(tier = 'tier1' OR {scoped})", sp


class AuditLog:
    """The audit log as one ``ScopeView`` sees it: reads return the view's entries only."""

    def __init__(self, db: Database, view: ScopeView):
        self._db = db
        self._view = view

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
        scope: str | None = None,
    ) -> None:
        """Append one entry inside the caller's transaction (so it commits with the write).

        Its scope is ``scope``, else the target row's, else the view's fact scope (store-wide admin
        entries without a target row are visible to the admin view only).
        """
        if scope is None and target_uuid is not None:
            row = conn.execute(f"{_TARGET_SCOPE} LIMIT 1", (target_uuid,) * len(_TARGET_TABLES)).fetchone()
            scope = None if row is None else str(row[0])
        if scope is None:
            scope = ADMIN_ONLY if self._view.admin else self._view.fact_scope
        conn.execute(
            "INSERT INTO memory_audit_log(timestamp, action, tier, actor, target_uuid, diff, success, scope) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                now(), action, tier, actor, target_uuid, None if diff is None else dumps(diff), int(success),
                scope,
            ),
        )  # fmt: skip

    def entries(
        self, *, target_uuid: str | None = None, action: str | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        visible, vp = visible_entries(self._view)
        clauses: list[str] = [visible]
        params: list[Any] = [*vp]
        if target_uuid is not None:
            clauses.append("target_uuid = ?")
            params.append(target_uuid)
        if action is not None:
            clauses.append("action = ?")
            params.append(action)
        where = f"WHERE {' AND '.join(clauses)}"
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
        visible, vp = visible_entries(self._view)
        row = self._db.query_one(f"SELECT count(*) AS n FROM memory_audit_log WHERE {visible}", vp)
        return int(row["n"]) if row else 0


__all__ = [
    "ADMIN_ONLY",
    "AuditLog",
    "visible_entries",
]

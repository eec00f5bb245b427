"""Relations: typed, weighted edges between entities, each optionally backed by an evidence fact."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from hermes_memory.errors import NotFoundError
from hermes_memory.records import Relation
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2._util import new_uuid, now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database


def _row_to_relation(row: sqlite3.Row) -> Relation:
    return Relation(
        uuid=row["uuid"],
        from_entity_id=row["from_entity_id"],
        to_entity_id=row["to_entity_id"],
        relation_type=row["relation_type"],
        strength=row["strength"],
        evidence_fact_id=row["evidence_fact_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class RelationStore:
    """Relations of one ``ScopeView``: both endpoints must be readable; new relations go to its fact
    scope; reads see only relations in its readable scopes."""

    def __init__(self, db: Database, audit: AuditLog, view: ScopeView):
        self._db = db
        self._audit = audit
        self._view = view

    def link(
        self,
        from_uuid: str,
        to_uuid: str,
        relation_type: str,
        *,
        strength: float = 1.0,
        evidence_fact_id: str | None = None,
        actor: str = "user",
    ) -> tuple[Relation, bool]:
        """Create the relation, or refresh the existing one (new strength, evidence, updated_at).

        Returns the relation and whether it was created. Raises NotFoundError for unknown endpoints.
        """
        at = now()
        scope = self._view.write_facts
        scoped, sp = self._view.where("scope")
        with self._db.atomic() as conn:
            for ref in (from_uuid, to_uuid):
                found = conn.execute(f"SELECT 1 FROM entities WHERE uuid = ? AND {scoped}", (ref, *sp))
                if found.fetchone() is None:
                    raise NotFoundError(f"no entity with uuid {ref!r}")
            if (
                evidence_fact_id is not None
                and conn.execute(
                    f"SELECT 1 FROM facts WHERE uuid = ? AND {scoped}", (evidence_fact_id, *sp)
                ).fetchone()
                is None
            ):
                raise NotFoundError(f"no fact with uuid {evidence_fact_id!r}")
            # The pair is unique store-wide; a relation another scope holds between these (readable)
            # entities cannot exist unless both are shared, so the lookup stays within the view.
            row = conn.execute(
                "SELECT * FROM relations WHERE from_entity_id = ? AND to_entity_id = ? AND relation_type = ?"
                f" AND {scoped}",
                (from_uuid, to_uuid, relation_type, *sp),
            ).fetchone()
            if row is None:
                uuid = new_uuid()
                conn.execute(
                    "INSERT INTO relations(uuid, from_entity_id, to_entity_id, relation_type, strength,"
                    " evidence_fact_id, created_at, updated_at, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (uuid, from_uuid, to_uuid, relation_type, strength, evidence_fact_id, at, at, scope),
                )
                action, diff = "relation_create", {"new": {"type": relation_type, "strength": strength}}
            else:
                uuid = row["uuid"]
                conn.execute(
                    "UPDATE relations SET strength = ?, evidence_fact_id = coalesce(?, evidence_fact_id), "
                    "updated_at = ? WHERE uuid = ?",
                    (strength, evidence_fact_id, at, uuid),
                )
                action = "relation_update"
                diff = {"old": {"strength": row["strength"]}, "new": {"strength": strength}}
            self._audit.record(conn, action=action, tier="tier2", actor=actor, target_uuid=uuid, diff=diff)
            new_row = conn.execute("SELECT * FROM relations WHERE uuid = ?", (uuid,)).fetchone()
        return _row_to_relation(new_row), row is None

    def set_strengths(self, updates: Sequence[tuple[str, float]], *, actor: str = "recall") -> None:
        """Write new strengths (e.g. Hebbian reinforcement) for several relations in one transaction."""
        scoped, sp = self._view.where("scope")
        with self._db.atomic() as conn:
            at = now()
            for uuid, strength in updates:
                conn.execute(
                    f"UPDATE relations SET strength = ?, updated_at = ? WHERE uuid = ? AND {scoped}",
                    (strength, at, uuid, *sp),
                )
            if updates:
                self._audit.record(
                    conn,
                    action="relation_reinforce",
                    tier="tier2",
                    actor=actor,
                    target_uuid=None,
                    diff={"new": {uuid: strength for uuid, strength in updates}},
                )

    def get(self, uuid: str) -> Relation:
        """The relation with this uuid. Raises NotFoundError (also for one outside the view)."""
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT * FROM relations WHERE uuid = ? AND {scoped}", (uuid, *sp))
        if row is None:
            raise NotFoundError(f"no relation with uuid {uuid!r}")
        return _row_to_relation(row)

    def for_entity(self, entity_uuid: str, *, relation_type: str | None = None) -> list[Relation]:
        scoped, sp = self._view.where("scope")
        sql = f"SELECT * FROM relations WHERE (from_entity_id = ? OR to_entity_id = ?) AND {scoped}"
        params: list[str] = [entity_uuid, entity_uuid, *sp]
        if relation_type is not None:
            sql += " AND relation_type = ?"
            params.append(relation_type)
        return [_row_to_relation(r) for r in self._db.query(sql + " ORDER BY id", params)]

    def all(self) -> list[Relation]:
        """Every relation in the view, oldest first."""
        scoped, sp = self._view.where("scope")
        rows = self._db.query(f"SELECT * FROM relations WHERE {scoped} ORDER BY id", sp)
        return [_row_to_relation(r) for r in rows]

    def count(self) -> int:
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT count(*) AS n FROM relations WHERE {scoped}", sp)
        return int(row["n"]) if row else 0

    def delete(self, uuid: str, *, actor: str = "user") -> None:
        scoped, sp = self._view.where("scope")
        with self._db.atomic() as conn:
            found = conn.execute(f"SELECT scope FROM relations WHERE uuid = ? AND {scoped}", (uuid, *sp))
            row = found.fetchone()
            if row is None:
                raise NotFoundError(f"no relation with uuid {uuid!r}")
            conn.execute("DELETE FROM relations WHERE uuid = ?", (uuid,))
            self._audit.record(
                conn, action="relation_delete", tier="tier2", actor=actor, target_uuid=uuid,
                scope=row["scope"],
            )  # fmt: skip


__all__ = [
    "RelationStore",
]

"""Supersession: closing a believed fact as replaced by another (bitemporal: it stays, with ``valid_to``,
``superseded_at`` and ``superseded_by`` set), on request or when a new fact contradicts it."""

from __future__ import annotations

import sqlite3

from hermes_memory.errors import NotFoundError
from hermes_memory.tier2._util import now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.fact_reads import FactReads
from hermes_memory.tier2.fact_rows import subject_names


class FactSupersession(FactReads):
    """The writes that close facts as replaced, each with its audit entry in the caller's transaction
    (``supersede`` opens its own)."""

    _audit: AuditLog

    def supersede(
        self,
        uuid: str,
        by_uuid: str,
        *,
        actor: str = "user",
        valid_to: float | None = None,
        reason: str | None = None,
    ) -> bool:
        """Close a believed fact as replaced by ``by_uuid`` (bitemporal: it stays, with ``valid_to`` —
        ``valid_to`` when given, the new statement's world time, else now — ``superseded_at`` and
        ``superseded_by`` set). Returns False when it was not believed any more.
        Raises NotFoundError when either fact is unknown in this view."""
        at = now()
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            for wanted in (uuid, by_uuid):
                if (
                    conn.execute(
                        f"SELECT 1 FROM facts f WHERE f.uuid = ? AND {scoped}", (wanted, *sp)
                    ).fetchone()
                    is None
                ):
                    raise NotFoundError(f"no fact with uuid {wanted!r}")
            cur = conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ? AND is_archived = 0 AND superseded_at IS NULL",
                (valid_to if valid_to is not None else at, at, by_uuid, at, uuid),
            )
            if cur.rowcount == 0:
                return False
            self._audit.record(
                conn, action="fact_supersede", tier="tier2", actor=actor, target_uuid=uuid,
                diff={"superseded_by": by_uuid, **({"reason": reason} if reason else {})},
            )  # fmt: skip
        return True

    def _supersede_conflicts(
        self,
        conn: sqlite3.Connection,
        new_uuid_: str,
        subject: str,
        predicate: str,
        obj: str,
        scope: str,
        at: float,
        actor: str,
        valid_from: float | None,
    ) -> list[str]:
        # "the user" and "user" (and "The user") name one subject: how a statement was phrased must not
        # decide whether it replaces the older one.
        names = subject_names(subject)
        spelled = ",".join("?" * len(names))
        rows = conn.execute(
            f"SELECT uuid, object FROM facts WHERE scope = ? AND lower(subject) IN ({spelled}) "
            "AND lower(predicate) = lower(?) AND uuid != ? AND is_archived = 0 AND superseded_at IS NULL",
            (scope, *names, predicate, new_uuid_),
        ).fetchall()
        closed: list[str] = []
        for row in rows:
            if (row["object"] or "").casefold() == obj.casefold():
                continue
            conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ?",
                (valid_from if valid_from is not None else at, at, new_uuid_, at, row["uuid"]),
            )
            self._audit.record(
                conn,
                action="fact_supersede",
                tier="tier2",
                actor=actor,
                target_uuid=row["uuid"],
                diff={"superseded_by": new_uuid_},
            )
            closed.append(row["uuid"])
        return closed

    def _supersede_in_valid_time(
        self,
        conn: sqlite3.Connection,
        new_uuid_: str,
        triple: tuple[str, str, str],
        scope: str,
        interval: tuple[float, float | None],
        at: float,
        actor: str,
    ) -> list[str]:
        """``store(by_valid_time=True)``'s conflicts: the believed facts with the same subject and
        predicate, another object and a valid interval overlapping ``interval``."""
        subject, predicate, obj = triple
        start, end = interval
        names = subject_names(subject)
        spelled = ",".join("?" * len(names))
        rows = conn.execute(
            "SELECT uuid, object, coalesce(valid_from, recorded_at) AS since, valid_to FROM facts "
            f"WHERE scope = ? AND lower(subject) IN ({spelled}) AND lower(predicate) = lower(?) "
            "AND uuid != ? AND is_archived = 0 AND superseded_at IS NULL",
            (scope, *names, predicate, new_uuid_),
        ).fetchall()
        closed: list[str] = []
        new_end = end
        for row in rows:
            since, until = float(row["since"]), row["valid_to"]
            overlaps = (until is None or until > start) and (end is None or since < end)
            if (row["object"] or "").casefold() == obj.casefold() or not overlaps:
                continue
            if since > start:  # the new statement is the older value: it ends where this one begins
                new_end = since if new_end is None else min(new_end, since)
                continue
            conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ?",
                (start if until is None else min(float(until), start), at, new_uuid_, at, row["uuid"]),
            )
            self._audit.record(
                conn, action="fact_supersede", tier="tier2", actor=actor, target_uuid=row["uuid"],
                diff={"superseded_by": new_uuid_, "valid_to": start, "was_valid_to": until},
            )  # fmt: skip
            closed.append(row["uuid"])
        if new_end != end:
            conn.execute("UPDATE facts SET valid_to = ? WHERE uuid = ?", (new_end, new_uuid_))
        return closed


__all__ = ["FactSupersession"]

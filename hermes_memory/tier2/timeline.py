"""The timeline: dated events with importance, linked to entities and facts."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from hermes_memory.errors import NotFoundError
from hermes_memory.records import Event
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2._util import dumps, loads_list, new_uuid, now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.search import bm25_uuid_scores


def _row_to_event(row: sqlite3.Row) -> Event:
    return Event(
        uuid=row["uuid"],
        event_type=row["event_type"],
        title=row["title"],
        description=row["description"],
        related_entities=loads_list(row["related_entities"]),
        related_facts=loads_list(row["related_facts"]),
        session_id=row["session_id"],
        timestamp=row["timestamp"],
        importance=row["importance"],
    )


class TimelineStore:
    """Timeline events of one ``ScopeView`` (written to its fact scope, read from its readable scopes)."""

    def __init__(self, db: Database, audit: AuditLog, view: ScopeView):
        self._db = db
        self._audit = audit
        self._view = view

    def add(
        self,
        event_type: str,
        title: str,
        *,
        description: str | None = None,
        importance: float = 0.5,
        related_entities: Sequence[str] = (),
        related_facts: Sequence[str] = (),
        session_id: str | None = None,
        timestamp: float | None = None,
        end_timestamp: float | None = None,
        source_episodes: Sequence[str] = (),
        actor: str = "user",
    ) -> Event:
        """Record an event (at ``timestamp``, default now). Raises StorageError for the admin view."""
        scope = self._view.write_facts
        at = now()
        uuid = new_uuid()
        when = timestamp if timestamp is not None else at
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT INTO timeline(uuid, event_type, title, description, related_entities, related_facts,"
                " session_id, timestamp, end_timestamp, importance, source_episodes, created_at, scope)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uuid,
                    event_type,
                    title,
                    description,
                    dumps(list(related_entities)),
                    dumps(list(related_facts)),
                    session_id,
                    when,
                    end_timestamp,
                    importance,
                    dumps(list(source_episodes)),
                    at,
                    scope,
                ),
            )
            self._audit.record(
                conn,
                action="timeline_add",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={"new": {"event_type": event_type, "title": title, "timestamp": when}},
            )
            row = conn.execute("SELECT * FROM timeline WHERE uuid = ?", (uuid,)).fetchone()
        return _row_to_event(row)

    def query(
        self,
        *,
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        entity_uuid: str | None = None,
        limit: int = 20,
    ) -> list[Event]:
        """Events within [start, end] (inclusive), newest first."""
        scoped, sp = self._view.where("scope")
        clauses: list[str] = [scoped]
        params: list[Any] = [*sp]
        if start is not None:
            clauses.append("coalesce(end_timestamp, timestamp) >= ?")
            params.append(start)
        if end is not None:
            clauses.append("timestamp <= ?")
            params.append(end)
        if event_type is not None:
            clauses.append("event_type = ?")
            params.append(event_type)
        if entity_uuid is not None:
            clauses.append("EXISTS (SELECT 1 FROM json_each(related_entities) WHERE value = ?)")
            params.append(entity_uuid)
        sql = f"SELECT * FROM timeline WHERE {' AND '.join(clauses)} ORDER BY timestamp DESC, id DESC LIMIT ?"
        return [_row_to_event(r) for r in self._db.query(sql, [*params, limit])]

    def bm25_scores(self, query: str, *, limit: int) -> dict[str, float]:
        """Events whose title or description matches free text, as uuid -> BM25 score, best first."""
        scoped, sp = self._view.where("t.scope")
        return bm25_uuid_scores(self._db, "timeline_fts", "timeline", query, scoped, sp, limit)

    def in_period(self, start: float, end: float, *, limit: int) -> list[str]:
        """The uuids of events overlapping [start, end], most important first."""
        scoped, sp = self._view.where("scope")
        rows = self._db.query(
            f"SELECT uuid FROM timeline WHERE {scoped} AND coalesce(end_timestamp, timestamp) >= ? "
            "AND timestamp <= ? ORDER BY importance DESC, timestamp DESC, id DESC LIMIT ?",
            (*sp, start, end, limit),
        )
        return [str(r[0]) for r in rows]

    def for_recall(
        self, uuids: Sequence[str], *, recorded_by: float | None = None
    ) -> dict[str, tuple[Event, tuple[str, ...], list[str]]]:
        """By uuid: the event, the episodes it was taken from, and the names of its related entities
        (those in the view), for the events of ``uuids`` in the view (recorded by ``recorded_by``). An
        event taken from facts says what they say, dated: once every one of them is superseded (by
        ``recorded_by``; by now without it) it is left out with them, so that a replaced statement never
        reaches a reader through its event, unmarked."""
        if not uuids:
            return {}
        scoped, sp = self._view.where("scope", by_key=True)
        query = f"SELECT * FROM timeline WHERE uuid IN ({{keys}}) AND {scoped}"
        rows = self._db.query_keys(query, list(dict.fromkeys(uuids)), sp)
        events = {
            r["uuid"]: (_row_to_event(r), tuple(loads_list(r["source_episodes"])))
            for r in rows
            if recorded_by is None or r["created_at"] <= recorded_by
        }
        replaced = self._superseded(sorted({f for event, _ in events.values() for f in event.related_facts}),
                                    recorded_by)  # fmt: skip
        if replaced:
            events = {
                uuid: (event, sources)
                for uuid, (event, sources) in events.items()
                if not (event.related_facts and replaced.issuperset(event.related_facts))
            }
        related = sorted({e for event, _ in events.values() for e in event.related_entities})
        names: dict[str, str] = {}
        if related:
            escoped, ep = self._view.where("scope", by_key=True)
            found = self._db.query_keys(
                f"SELECT uuid, name FROM entities WHERE uuid IN ({{keys}}) AND {escoped}", related, ep
            )
            names = {str(r[0]): str(r[1]) for r in found}
        return {
            uuid: (event, sources, [names[e] for e in event.related_entities if e in names])
            for uuid, (event, sources) in events.items()
        }

    def _superseded(self, facts: Sequence[str], by: float | None) -> set[str]:
        """Those of ``facts`` (uuids, in the view) superseded by ``by`` (by now without it)."""
        if not facts:
            return set()
        scoped, sp = self._view.where("scope", by_key=True)
        rows = self._db.query_keys(
            f"SELECT uuid, superseded_at FROM facts WHERE uuid IN ({{keys}}) AND {scoped} "
            "AND superseded_at IS NOT NULL", facts, sp,
        )  # fmt: skip
        return {str(r[0]) for r in rows if by is None or float(r[1]) <= by}

    def get(self, uuid: str) -> Event:
        """The event with this uuid. Raises NotFoundError (also for one outside the view)."""
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT * FROM timeline WHERE uuid = ? AND {scoped}", (uuid, *sp))
        if row is None:
            raise NotFoundError(f"no timeline event with uuid {uuid!r}")
        return _row_to_event(row)

    def count(self) -> int:
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT count(*) AS n FROM timeline WHERE {scoped}", sp)
        return int(row["n"]) if row else 0


__all__ = [
    "TimelineStore",
]

"""Facts: ``FactStore`` and its writes — store (dedup by content hash, closing what a new fact
contradicts), update, soft and hard delete, deduplicate. Its reads, search, history and supersession are
the ``fact_*`` modules it joins."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.records import Fact
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import verdicts
from hermes_memory.tier2._util import content_hash, dumps, loads_list, new_uuid, now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.fact_history import FactHistory, current_facts
from hermes_memory.tier2.fact_reads import AccessLog
from hermes_memory.tier2.fact_rows import ScoredFact, StoredFact, row_to_fact, subject_names, true_at
from hermes_memory.tier2.fact_search import FactSearch
from hermes_memory.tier2.fact_supersession import FactSupersession
from hermes_memory.tier2.verdicts import fact_verdict

_UPDATABLE = frozenset({"content", "category", "confidence", "expires_at", "importance", "valid_from"})


class FactStore(FactSupersession, FactHistory, FactSearch):
    """CRUD and search for facts. Writes run in one transaction together with their audit entry.

    Lookups and access counts are ``FactReads``', text search ``FactSearch``'s, reads across time
    ``FactHistory``'s and closing replaced facts ``FactSupersession``'s.

    Bound to a ``ScopeView``: reads see only its readable scopes (a fact outside is "not found"),
    new facts go to its ``fact_scope``.
    """

    def __init__(
        self,
        db: Database,
        audit: AuditLog,
        view: ScopeView,
        *,
        auto_dedupe: bool = True,
        accesses: AccessLog | None = None,
    ):
        self._db = db
        self._audit = audit
        self._view = view
        self._auto_dedupe = auto_dedupe
        self.accesses = accesses if accesses is not None else AccessLog()

    @property
    def auto_dedupe(self) -> bool:
        return self._auto_dedupe

    def store(
        self,
        content: str,
        *,
        category: str = "general",
        confidence: float = 1.0,
        source_type: str = "user",
        source_id: str | None = None,
        actor: str = "user",
        expires_at: float | None = None,
        valid_from: float | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        exclusive: bool = True,
        source_episodes: Sequence[str] = (),
        extractor: str = "manual",
        importance: float = 0.5,
        entity_uuids: Iterable[str] = (),
        valid_to: float | None = None,
        by_valid_time: bool = False,
    ) -> StoredFact:
        """Store a fact, or return the active fact with the same normalised content.

        With subject, predicate and object set and ``exclusive`` true, an active fact with the same
        subject and predicate but another object is superseded (closed, never deleted).

        ``by_valid_time`` (``assert_fact``: a statement with its world time): only facts whose valid
        interval overlaps the new one's conflict; one that began earlier (or at the same time: a
        correction) is closed at the new one's ``valid_from`` and superseded, and when the conflicting
        fact began later, the new one is the
        older value: it ends (``valid_to``) where that one begins and supersedes nothing. A duplicate is
        then only the same content with the same valid interval.
        """
        at = now()
        digest = content_hash(content)
        scope = self._view.write_facts
        with self._db.atomic() as conn:
            if self._auto_dedupe:
                # An expired fact is not "known" any more: restating it must make it visible again.
                same_time = ""
                if by_valid_time:
                    same_time = "AND coalesce(f.valid_from, f.recorded_at) = ? AND f.valid_to IS ? "
                existing = conn.execute(
                    "SELECT * FROM facts f WHERE f.scope = ? AND f.content_hash = ? AND f.is_archived = 0 "
                    f"AND f.superseded_at IS NULL AND (f.expires_at IS NULL OR f.expires_at > ?) {same_time}"
                    "ORDER BY f.id LIMIT 1",
                    (scope, digest, at,
                     *((valid_from if valid_from is not None else at, valid_to) if by_valid_time else ())),
                ).fetchone()  # fmt: skip
                if existing is not None:
                    fact = self._merge_duplicate(conn, existing, confidence, source_episodes, actor, at)
                    self._link_entities(conn, fact.uuid, entity_uuids)
                    closed: tuple[str, ...] = ()
                    if subject and predicate and object and not existing["predicate"]:
                        # The same statement, now understood (a mirrored note, then its extraction): it
                        # gets its subject/predicate/object and replaces what it contradicts.
                        conn.execute(
                            "UPDATE facts SET subject = ?, predicate = ?, object = ? WHERE id = ?",
                            (subject, predicate, object, existing["id"]),
                        )
                        if exclusive:
                            closed = tuple(
                                self._supersede_conflicts(
                                    conn, fact.uuid, subject, predicate, object, scope, at, actor, valid_from
                                )
                            )
                        row = conn.execute("SELECT * FROM facts WHERE id = ?", (existing["id"],)).fetchone()
                        fact = row_to_fact(row)
                    return StoredFact(fact=fact, created=False, superseded=closed)
            uuid = new_uuid()
            sources = list(dict.fromkeys(source_episodes))
            conn.execute(
                "INSERT INTO facts(uuid, content, content_hash, category, confidence, source_type, source_id,"
                " created_at, updated_at, expires_at, recorded_at, valid_from, subject, predicate, object,"
                " source_episodes, extractor, importance, scope, threat, valid_to)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uuid,
                    content,
                    digest,
                    category,
                    confidence,
                    source_type,
                    source_id,
                    at,
                    at,
                    expires_at,
                    at,
                    valid_from if valid_from is not None else at,
                    subject,
                    predicate,
                    object,
                    dumps(sources),
                    extractor,
                    importance,
                    scope,
                    fact_verdict(content, category, source_type, source_id, sources),
                    valid_to,
                ),
            )
            superseded: list[str] = []
            if exclusive and subject and predicate and object and by_valid_time:
                start = valid_from if valid_from is not None else at
                superseded = self._supersede_in_valid_time(
                    conn, uuid, (subject, predicate, object), scope, (start, valid_to), at, actor
                )
            elif exclusive and subject and predicate and object:
                superseded = self._supersede_conflicts(
                    conn, uuid, subject, predicate, object, scope, at, actor, valid_from
                )
            self._link_entities(conn, uuid, entity_uuids)
            self._audit.record(
                conn,
                action="fact_store",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={
                    "new": {"content": content, "category": category, "confidence": confidence},
                    "superseded": superseded,
                },
            )
            row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (uuid,)).fetchone()
        return StoredFact(fact=row_to_fact(row), created=True, superseded=tuple(superseded))

    def _merge_duplicate(
        self,
        conn: sqlite3.Connection,
        row: sqlite3.Row,
        confidence: float,
        source_episodes: Sequence[str],
        actor: str,
        at: float,
    ) -> Fact:
        known = loads_list(row["source_episodes"])
        episodes = list(dict.fromkeys([*known, *source_episodes]))
        seen = set(known)
        added = [e for e in episodes if e not in seen]
        threat = verdicts.merged(row["threat"], verdicts.verdict(added)) if added else row["threat"]
        new_conf = max(float(row["confidence"]), confidence)
        conn.execute(
            "UPDATE facts SET confidence = ?, source_episodes = ?, updated_at = ?, threat = ? WHERE id = ?",
            (new_conf, dumps(episodes), at, threat, row["id"]),
        )
        self._audit.record(
            conn,
            action="fact_dedupe",
            tier="tier2",
            actor=actor,
            target_uuid=row["uuid"],
            diff={"old": {"confidence": row["confidence"]}, "new": {"confidence": new_conf}},
        )
        merged = conn.execute("SELECT * FROM facts WHERE id = ?", (row["id"],)).fetchone()
        return row_to_fact(merged)

    def _link_entities(self, conn: sqlite3.Connection, fact_uuid: str, entity_uuids: Iterable[str]) -> None:
        for entity_uuid in entity_uuids:
            conn.execute(
                "INSERT OR IGNORE INTO fact_entities(fact_uuid, entity_uuid) VALUES (?, ?)",
                (fact_uuid, entity_uuid),
            )

    # -- writes ---------------------------------------------------------------------------------
    def update(self, uuid: str, *, actor: str = "user", **fields: Any) -> Fact:
        """Change content, category, confidence, expires_at, importance or valid_from.

        Raises ValidationError for other fields and NotFoundError for an unknown uuid.
        """
        unknown = sorted(set(fields) - _UPDATABLE)
        if unknown:
            raise ValidationError(
                f"cannot update fact field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_UPDATABLE))}"
            )
        if not fields:
            raise ValidationError("fact_update needs at least one field to change")
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            row = conn.execute(f"SELECT * FROM facts f WHERE f.uuid = ? AND {scoped}", (uuid, *sp)).fetchone()
            if row is None:
                raise NotFoundError(f"no fact with uuid {uuid!r}")
            values = dict(fields)
            if "content" in values:
                values["content_hash"] = content_hash(values["content"])
            values["updated_at"] = now()
            values["threat"] = fact_verdict(
                values.get("content", row["content"]), values.get("category", row["category"]),
                row["source_type"], row["source_id"], loads_list(row["source_episodes"]),
            )  # fmt: skip
            assignments = ", ".join(f"{k} = ?" for k in values)
            conn.execute(f"UPDATE facts SET {assignments} WHERE uuid = ?", [*values.values(), uuid])
            self._audit.record(
                conn,
                action="fact_update",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={"old": {k: row[k] for k in fields}, "new": fields},
            )
            new_row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (uuid,)).fetchone()
        return row_to_fact(new_row)

    def delete(self, uuid: str, *, soft: bool = True, actor: str = "user") -> bool:
        """Archive (soft) or remove (hard) a fact. Raises NotFoundError for an unknown uuid."""
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            row = conn.execute(
                f"SELECT f.id, f.is_archived, f.scope FROM facts f WHERE f.uuid = ? AND {scoped}", (uuid, *sp)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no fact with uuid {uuid!r}")
            if soft:
                conn.execute("UPDATE facts SET is_archived = 1, updated_at = ? WHERE uuid = ?", (now(), uuid))
            else:
                conn.execute("DELETE FROM facts WHERE uuid = ?", (uuid,))
            # The audit log keeps that a deletion happened, never the deleted content.
            self._audit.record(
                conn,
                action="fact_delete",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={"soft": soft},
                scope=row["scope"],
            )
        return True

    def deduplicate(self, *, actor: str = "cron") -> int:
        """Archive active duplicates (same scope and hash, never across scopes), keeping the oldest;
        returns how many merged."""
        merged = 0
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            groups = conn.execute(
                f"SELECT f.scope, f.content_hash FROM facts f WHERE {scoped} AND f.is_archived = 0 "
                "AND f.superseded_at IS NULL GROUP BY f.scope, f.content_hash HAVING count(*) > 1",
                sp,
            ).fetchall()
            for group in groups:
                rows = conn.execute(
                    "SELECT * FROM facts WHERE scope = ? AND content_hash = ? AND is_archived = 0 "
                    "AND superseded_at IS NULL ORDER BY id",
                    (group["scope"], group["content_hash"]),
                ).fetchall()
                keep, dups = rows[0], rows[1:]
                for dup in dups:
                    self._merge_duplicate(
                        conn, keep, dup["confidence"], loads_list(dup["source_episodes"]), actor, now()
                    )
                    keep = conn.execute("SELECT * FROM facts WHERE id = ?", (keep["id"],)).fetchone()
                    conn.execute(
                        "UPDATE facts SET is_archived = 1, superseded_by = ?, updated_at = ? WHERE id = ?",
                        (keep["uuid"], now(), dup["id"]),
                    )
                    merged += 1
        return merged


__all__ = [
    "AccessLog",
    "FactStore",
    "ScoredFact",
    "StoredFact",
    "current_facts",
    "subject_names",
    "true_at",
]

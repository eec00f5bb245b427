"""MemoryAPI's Tier 2 knowledge over time: facts, timeline events, their history and the audit trail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope
from hermes_memory.errors import ValidationError
from hermes_memory.records import AsOf


class FactsHistoryAPI(EnvelopeEdge):
    """Facts, events and their history (``Memory.knowledge``, ``Memory.history``)."""

    # -- Tier 2: facts (Memory.knowledge) ---------------------------------------------------------
    def fact_store(
        self,
        content: str,
        category: str = "general",
        confidence: float = 1.0,
        source: str = "user",
        *,
        source_id: str | None = None,
        expires_at: float | None = None,
        ttl_days: float | None = None,
        importance: float | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
    ) -> Envelope:
        """Store a fact (deduplicated by normalised content). ``subject``/``predicate``/``object`` say
        what it is about (all three: a newer object for the same subject and predicate supersedes the
        older fact); without them they are read from the text when it states them, so ``fact_history``
        finds the fact under its subject. Without ``importance`` the fact's salience on write (wording,
        explicit cues such as "remember this", novelty against the nearest facts) is stored as its
        importance, which recall ranks by and prune decays from."""

        def call() -> dict[str, Any]:
            stored = self._core.knowledge.store_fact(
                v.text("content", content, max_chars=self._core.tiers.max_chars).strip(),
                category=v.choice("category", category, v.FACT_CATEGORIES),
                confidence=v.unit_interval("confidence", confidence),
                source=v.choice("source", source, v.SOURCE_TYPES),
                source_id=v.optional_text("source_id", source_id, max_chars=500),
                importance=None if importance is None else v.unit_interval("importance", importance),
                expires_at=c.ttl_expiry(expires_at, ttl_days),
                triple=c.triple(subject, predicate, object),
            )
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return self._run("tier2", call)

    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        valid_from: float | datetime | str | None = None,
        valid_to: float | datetime | str | None = None,
        *,
        category: str | None = None,
        confidence: float = 1.0,
        source: str = "user",
        source_id: str | None = None,
        importance: float | None = None,
    ) -> Envelope:
        """Engram's triple with valid time: (subject, predicate, object) true from ``valid_from``
        (default now) until ``valid_to`` (default open; times as Unix seconds, datetime or ISO-8601).
        An older value of the same subject and predicate whose valid time overlaps is superseded (closed
        at ``valid_from``, kept for history and ``as_of``), as the fact store does for contradictions; a
        value already known to begin later makes this one the older value (it ends where that begins).
        data: the fact, ``created``, ``superseded`` (uuids)."""

        def call() -> dict[str, Any]:
            checked = c.asserted_triple(subject, predicate, object, valid_from, valid_to, category=category,
                               confidence=confidence, source=source, source_id=source_id,
                               importance=importance)  # fmt: skip
            stored = self._core.knowledge.assert_fact(**checked)
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return self._run("tier2", call)

    def fact_query(
        self,
        query: str | None = None,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.5,
        *,
        as_of: float | Mapping[str, Any] | str | None = None,
    ) -> Envelope:
        """Facts matching free text (BM25) and filters; without text, the newest. ``as_of``: a time
        (believed then), or ``{"valid": t, "known": t}`` (true at ``valid`` as known at ``known``)."""

        def call() -> list[dict[str, Any]]:
            max_chars = self._core.tiers.max_chars
            text = None if query is None else v.text("query", query, max_chars=max_chars, allow_empty=True)
            found = self._core.knowledge.query_facts(
                text.strip() if text else None,
                category=None if category is None else v.choice("category", category, v.FACT_CATEGORIES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
                min_confidence=v.unit_interval("min_confidence", min_confidence),
                as_of=c.as_of(as_of),
            )
            return [{**s.fact.to_dict(), "score": round(s.score, 6)} for s in found]

        return self._run("tier2", call)

    def fact_get(self, uuid: str) -> Envelope:
        """One fact by uuid."""
        return self._run(
            "tier2", lambda: self._core.knowledge.get_fact(v.text("uuid", uuid, max_chars=100)).to_dict()
        )

    def fact_update(self, uuid: str, **fields: Any) -> Envelope:
        """Change content, category, confidence, expires_at or importance of a fact."""

        def call() -> dict[str, Any]:
            ref = v.text("uuid", uuid, max_chars=100)
            checked = c.fact_fields(fields, self._core.tiers.max_chars)
            return self._core.knowledge.update_fact(ref, checked).to_dict()

        return self._run("tier2", call)

    def fact_correct(
        self, uuid: str, text: str, *, reason: str = "corrected", actor: str | None = None
    ) -> Envelope:
        """Correct a believed fact: ``text`` is stored as a new fact (same category) that supersedes it
        in one transaction (the old one closed now and kept in the history, ``superseded_by`` naming
        the correction, audited with ``actor`` and ``reason``); never an in-place rewrite. data:
        ``fact`` (the correction), ``replaced``, ``created``. An unknown uuid, a fact no longer
        believed, an empty text, text with markup (HTML tags, ``javascript:``) or the same statement
        is a validation error; a text Hermes' scanner refuses, a threat error."""

        def call() -> dict[str, Any]:
            ref = v.text("uuid", uuid, max_chars=100).strip()
            checked = c.correction_text(text, self._core.tiers.max_chars)
            why = v.text("reason", reason, max_chars=500).strip() or "corrected"
            who = v.optional_text("actor", actor, max_chars=100)
            return self._core.knowledge.correct_fact(ref, checked, reason=why, actor=who).to_dict()

        return self._run("tier2", call)

    def fact_delete(self, uuid: str, soft: bool = True) -> Envelope:
        """Archive (soft=True) or permanently remove a fact."""

        def call() -> dict[str, Any]:
            v.text("uuid", uuid, max_chars=100)
            if not isinstance(soft, bool):
                raise ValidationError(f"soft must be true or false, got {v.shown(soft)}")
            self._core.knowledge.delete_fact(uuid, soft=soft)
            return {"uuid": uuid, "deleted": True, "soft": soft}

        return self._run("tier2", call)

    # -- Tier 2: timeline and audit (Memory.knowledge) --------------------------------------------
    def timeline_add(
        self,
        event_type: str,
        title: str,
        description: str | None = None,
        importance: float = 0.5,
        related_entities: Sequence[str] | None = None,
        *,
        timestamp: float | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """Record a dated event; related entities are given by name, alias or uuid."""

        def call() -> dict[str, Any]:
            checked = c.event(
                event_type, title, description, importance, related_entities,
                timestamp=timestamp, session_id=session_id, max_chars=self._core.tiers.max_chars,
            )  # fmt: skip
            return self._core.knowledge.add_event(**checked).to_dict()

        return self._run("tier2", call)

    def timeline_query(
        self,
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        limit: int = 20,
        *,
        entity: str | None = None,
    ) -> Envelope:
        """Events within [start, end], newest first; optionally of one type or about one entity."""

        def call() -> list[dict[str, Any]]:
            lo, hi = v.optional_time("start", start), v.optional_time("end", end)
            if lo is not None and hi is not None and lo > hi:
                raise ValidationError(f"start ({lo}) is after end ({hi})")
            events = self._core.knowledge.query_events(
                start=lo, end=hi,
                event_type=None if event_type is None else v.choice("event_type", event_type, v.EVENT_TYPES),
                entity=None if entity is None else v.text("entity", entity, max_chars=200).strip(),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )  # fmt: skip
            return [e.to_dict() for e in events]

        return self._run("tier2", call)

    def audit_log(self, limit: int = 50, target_uuid: str | None = None) -> Envelope:
        """The newest audit entries (what was written, by whom, when)."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=c.MAX_LIMIT)
            target = v.optional_text("target_uuid", target_uuid, max_chars=100)
            return [e.to_dict() for e in self._core.knowledge.audit_log(limit=lim, target_uuid=target)]

        return self._run("tier2", call)

    # -- history ----------------------------------------------------------------------------------------
    def why(self, fact_uuid: str) -> Envelope:
        """Where a fact came from: source episodes, extractor, confidence, when it was learned, and
        what superseded it (or what it superseded)."""

        def call() -> dict[str, Any]:
            return self._core.history.why(v.text("fact_uuid", fact_uuid, max_chars=100).strip()).to_dict()

        return self._run("tier2", call)

    def fact_history(self, subject: str, *, as_of: float | Mapping[str, Any] | str | None = None) -> Envelope:
        """Every fact about a subject, oldest first, superseded ones included with their validity; with
        ``as_of`` a time, those recorded by then; with ``{"valid": t, "known": t}``, those true at
        ``valid`` as known at ``known`` (default now)."""

        def call() -> list[dict[str, Any]]:
            name = v.text("subject", subject, max_chars=200).strip()
            point = c.as_of(as_of)
            at = point if isinstance(point, AsOf) or point is None else AsOf(None, point)
            return [f.to_dict() for f in self._core.history.fact_history(name, at)]

        return self._run("tier2", call)

    def as_of(
        self,
        valid: float | datetime | str | None = None,
        known: float | datetime | str | None = None,
        *,
        subject: str | None = None,
        query: str | None = None,
        limit: int = 50,
    ) -> Envelope:
        """Bitemporal: the facts that were true at ``valid`` (world time; default ``known``) according to
        what memory knew at ``known`` (system time; default now) — about ``subject`` (name or alias),
        matching ``query``, or the newest. Times as Unix seconds, datetime or ISO-8601. A fact
        superseded later was still open-ended as known before its supersession was recorded."""

        def call() -> list[dict[str, Any]]:
            point = AsOf(c.point_in_time("valid", valid), c.point_in_time("known", known))
            name = None if subject is None else v.text("subject", subject, max_chars=200).strip()
            limit_chars = self._core.tiers.max_chars
            text = None if query is None else v.text("query", query, max_chars=limit_chars).strip()
            lim = v.positive_int("limit", limit, maximum=c.MAX_LIMIT)
            return [f.to_dict() for f in self._core.history.as_of(point, subject=name, query=text, limit=lim)]

        return self._run("tier2", call)

    def contradictions(self, limit: int = 50) -> Envelope:
        """Facts that were superseded by a contradicting newer fact, newest first, with both sides."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            return [c.to_dict() for c in self._core.history.contradictions(lim)]

        return self._run("tier2", call)

    def timeline(self, entity: str, limit: int = 100) -> Envelope:
        """An entity's story: its timeline events and the facts about it, in time order."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            name = v.text("entity", entity, max_chars=200).strip()
            return [item.to_dict() for item in self._core.history.timeline(name, lim)]

        return self._run("tier2", call)


__all__ = ["FactsHistoryAPI"]

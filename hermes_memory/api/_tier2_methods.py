"""MemoryAPI methods of Tier 2 (facts, entities, relations, timeline). Validation happens here."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import ValidationError
from hermes_memory.extract.entities import thing_name_problem
from hermes_memory.records import Entity, Fact, Relation
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier2 import Tier2

_MAX_LIMIT = 1000


class Tier2Methods:
    """Mixed into MemoryAPI; expects ``_tier2()``, ``_max_chars``, ``actor`` and ``scope``."""

    actor: str
    scope: str
    _max_chars: int

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def _secret_free(self, text: str) -> str:
        """``text`` with credentials redacted (config ``security.redact_secrets``), else unchanged."""
        raise NotImplementedError

    def _on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        """Derived stores (Tier 3) follow a fact write; runs inside the write's transaction."""
        raise NotImplementedError

    def _on_entity_change(self, entity: Entity) -> None:
        """Derived stores (Tier 3, graph) follow an entity write; runs inside its transaction."""
        raise NotImplementedError

    def _on_relation_change(self, relation: Relation) -> None:
        """Derived stores (the graph) follow a relation write."""
        raise NotImplementedError

    # -- facts ----------------------------------------------------------------------------------
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
        importance: float = 0.5,
    ) -> Envelope:
        """Store a fact (deduplicated by normalised content)."""

        def call() -> dict[str, Any]:
            text = v.text("content", content, max_chars=self._max_chars).strip()
            ensure_safe(text)  # first: what Hermes' scanner refuses is refused, never stored redacted
            text = self._secret_free(text)
            v.choice("category", category, v.FACT_CATEGORIES)
            conf = v.unit_interval("confidence", confidence)
            v.choice("source", source, v.SOURCE_TYPES)
            v.optional_text("source_id", source_id, max_chars=500)
            imp = v.unit_interval("importance", importance)
            expiry = v.optional_time("expires_at", expires_at)
            if ttl_days is not None:
                days = v.number_value("ttl_days", ttl_days)
                if days <= 0:
                    raise ValidationError(f"ttl_days must be > 0, got {days!r}")
                expiry = v.timestamp("ttl_days (as an expiry time)", time.time() + days * 86400.0)
            tier2 = self._tier2()
            with tier2.db.atomic():
                stored = tier2.facts.store(
                    text, category=category, confidence=conf, source_type=source, source_id=source_id,
                    actor=self.actor, expires_at=expiry, importance=imp,
                )  # fmt: skip
                if stored.created:
                    self._on_fact_change(stored.fact)
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return run("tier2", call)

    def fact_query(
        self,
        query: str | None = None,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.5,
        *,
        as_of: float | None = None,
    ) -> Envelope:
        """Facts matching free text (BM25) and filters; without text, the newest."""

        def call() -> list[dict[str, Any]]:
            text = (
                None if query is None else v.text("query", query, max_chars=self._max_chars, allow_empty=True)
            )
            if category is not None:
                v.choice("category", category, v.FACT_CATEGORIES)
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            conf = v.unit_interval("min_confidence", min_confidence)
            when = v.optional_time("as_of", as_of)
            found = self._tier2().facts.query(
                text.strip() if text else None,
                category=category,
                limit=lim,
                min_confidence=conf,
                as_of=when,
            )
            return [{**s.fact.to_dict(), "score": round(s.score, 6)} for s in found]

        return run("tier2", call)

    def fact_get(self, uuid: str) -> Envelope:
        """One fact by uuid."""
        return run("tier2", lambda: self._tier2().facts.get(v.text("uuid", uuid, max_chars=100)).to_dict())

    def fact_update(self, uuid: str, **fields: Any) -> Envelope:
        """Change content, category, confidence, expires_at or importance of a fact."""

        def call() -> dict[str, Any]:
            v.text("uuid", uuid, max_chars=100)
            checked: dict[str, Any] = {}
            for key, value in fields.items():
                if key == "content":
                    text = v.text("content", value, max_chars=self._max_chars).strip()
                    ensure_safe(text)
                    checked[key] = self._secret_free(text)
                elif key == "category":
                    checked[key] = v.choice("category", value, v.FACT_CATEGORIES)
                elif key in ("confidence", "importance"):
                    checked[key] = v.unit_interval(key, value)
                elif key in ("expires_at", "valid_from"):
                    checked[key] = v.optional_time(key, value)
                else:
                    checked[key] = value  # the store names the allowed fields
            tier2 = self._tier2()
            with tier2.db.atomic():
                fact = tier2.facts.update(uuid, actor=self.actor, **checked)
                if "content" in checked:
                    self._on_fact_change(fact, removed=True)
                    self._on_fact_change(fact)
            return fact.to_dict()

        return run("tier2", call)

    def fact_delete(self, uuid: str, soft: bool = True) -> Envelope:
        """Archive (soft=True) or permanently remove a fact."""

        def call() -> dict[str, Any]:
            v.text("uuid", uuid, max_chars=100)
            if not isinstance(soft, bool):
                raise ValidationError(f"soft must be true or false, got {v.shown(soft)}")
            tier2 = self._tier2()
            with tier2.db.atomic():
                fact = tier2.facts.get(uuid, touch=False)
                tier2.facts.delete(uuid, soft=soft, actor=self.actor)
                if not soft:
                    self._on_fact_change(fact, removed=True)
            return {"uuid": uuid, "deleted": True, "soft": soft}

        return run("tier2", call)

    # -- entities and relations -----------------------------------------------------------------
    def entity_ensure(
        self,
        name: str,
        entity_type: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> Envelope:
        """Create an entity or return the existing one with this name/alias and type."""

        def call() -> dict[str, Any]:
            clean = v.text("name", name, max_chars=200).strip()
            v.choice("entity_type", entity_type, v.ENTITY_TYPES)
            alias_list = v.string_list("aliases", aliases, max_chars=200)
            desc = v.optional_text("description", description, max_chars=self._max_chars)
            for value in (clean, *alias_list, *([desc] if desc else [])):
                ensure_safe(value)
            desc = None if desc is None else self._secret_free(desc)
            problem = thing_name_problem(clean)
            if problem is not None:  # a sentence, "False", "Entry added": not a thing in the user's world
                raise ValidationError(f"entity name {clean[:80]!r} {problem}")
            tier2 = self._tier2()
            with tier2.db.atomic():
                ensured = tier2.entities.ensure(
                    clean,
                    entity_type,
                    aliases=alias_list,
                    description=desc,
                    actor=self.actor,
                )
                self._on_entity_change(ensured.entity)
            return {**ensured.entity.to_dict(), "created": ensured.created}

        return run("tier2", call)

    def entity_link(
        self,
        from_name: str,
        to_name: str,
        relation: str,
        strength: float = 1.0,
        *,
        evidence_fact_id: str | None = None,
    ) -> Envelope:
        """Relate two existing entities (by name, alias or uuid) with a typed, weighted edge."""

        def call() -> dict[str, Any]:
            tier2 = self._tier2()
            src = tier2.entities.resolve(v.text("from_name", from_name, max_chars=200).strip())
            dst = tier2.entities.resolve(v.text("to_name", to_name, max_chars=200).strip())
            rel_type = v.text("relation", relation, max_chars=100).strip().lower().replace(" ", "_")
            weight = v.unit_interval("strength", strength)
            fact = v.optional_text("evidence_fact_id", evidence_fact_id, max_chars=100)
            rel, created = tier2.relations.link(
                src.uuid,
                dst.uuid,
                rel_type,
                strength=weight,
                evidence_fact_id=fact,
                actor=self.actor,
            )
            self._on_relation_change(rel)
            return {**rel.to_dict(), "from_name": src.name, "to_name": dst.name, "created": created}

        return run("tier2", call)

    def entity_query(
        self, name: str | None = None, entity_type: str | None = None, limit: int = 10
    ) -> Envelope:
        """Entities by name/alias (case-insensitive, then full-text) and/or type."""

        def call() -> list[dict[str, Any]]:
            text = None if name is None else v.text("name", name, max_chars=200, allow_empty=True).strip()
            if entity_type is not None:
                v.choice("entity_type", entity_type, v.ENTITY_TYPES)
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            tier2 = self._tier2()
            out = []
            for entity, score in tier2.entities.query(text or None, entity_type=entity_type, limit=lim):
                relations = [r.to_dict() for r in tier2.relations.for_entity(entity.uuid)]
                out.append({**entity.to_dict(), "score": round(score, 6), "relations": relations})
            return out

        return run("tier2", call)

    # -- timeline -------------------------------------------------------------------------------
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
            v.choice("event_type", event_type, v.EVENT_TYPES)
            clean = v.text("title", title, max_chars=500).strip()
            desc = v.optional_text("description", description, max_chars=self._max_chars)
            for value in (clean, *([desc] if desc else [])):
                ensure_safe(value)
            clean = self._secret_free(clean)
            desc = None if desc is None else self._secret_free(desc)
            imp = v.unit_interval("importance", importance)
            when = v.optional_time("timestamp", timestamp)
            sid = v.optional_text("session_id", session_id, max_chars=200)
            tier2 = self._tier2()
            refs = v.string_list("related_entities", related_entities, max_chars=200)
            uuids = [tier2.entities.resolve(ref.strip()).uuid for ref in refs]
            event = tier2.timeline.add(
                event_type,
                clean,
                description=desc,
                importance=imp,
                related_entities=uuids,
                timestamp=when,
                session_id=sid,
                actor=self.actor,
            )
            return event.to_dict()

        return run("tier2", call)

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
            lo = v.optional_time("start", start)
            hi = v.optional_time("end", end)
            if lo is not None and hi is not None and lo > hi:
                raise ValidationError(f"start ({lo}) is after end ({hi})")
            if event_type is not None:
                v.choice("event_type", event_type, v.EVENT_TYPES)
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            tier2 = self._tier2()
            entity_uuid = None
            if entity is not None:
                entity_uuid = tier2.entities.resolve(v.text("entity", entity, max_chars=200).strip()).uuid
            events = tier2.timeline.query(
                start=lo, end=hi, event_type=event_type, entity_uuid=entity_uuid, limit=lim
            )
            return [e.to_dict() for e in events]

        return run("tier2", call)

    def audit_log(self, limit: int = 50, target_uuid: str | None = None) -> Envelope:
        """The newest audit entries (what was written, by whom, when)."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            target = v.optional_text("target_uuid", target_uuid, max_chars=100)
            return [e.to_dict() for e in self._tier2().audit.entries(target_uuid=target, limit=lim)]

        return run("tier2", call)

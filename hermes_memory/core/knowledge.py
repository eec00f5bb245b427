"""Tier 2 knowledge in the core: facts, entities and their relations, the timeline and the audit log.

Arguments are checked by the caller (``MemoryAPI`` validates its input). This service applies the
store's policy to every text it writes — what Hermes' scanner refuses is refused (ThreatDetectedError,
before any redaction), credentials are redacted — and keeps the derived stores (Tier 3, the graph)
following each write inside its transaction."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import ValidationError
from hermes_memory.extract.classify import category_for
from hermes_memory.extract.entities import thing_name_problem
from hermes_memory.extract.phrasing import render
from hermes_memory.extract.salience import Salience, write_salience
from hermes_memory.records import AsOf, AuditEntry, Entity, Event, Fact, Relation
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier2.entities import EnsuredEntity
from hermes_memory.tier2.fact_rows import ScoredFact, StoredFact

if TYPE_CHECKING:
    from hermes_memory.core.triples import Triple


@dataclass(frozen=True, slots=True)
class Link:
    """A relation between two entities, with their names; ``created`` is False for an existing edge."""

    relation: Relation
    from_name: str
    to_name: str
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.relation.to_dict(), "from_name": self.from_name, "to_name": self.to_name,
                "created": self.created}  # fmt: skip


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """An entity found by name, its match score and its relations."""

    entity: Entity
    score: float
    relations: tuple[Relation, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.entity.to_dict(), "score": round(self.score, 6),
                "relations": [r.to_dict() for r in self.relations]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Correction:
    """A correction: the fact now believed and the one it replaced (closed, ``superseded_by`` set);
    ``created`` is False when the corrected statement was already stored (it is believed again)."""

    fact: Fact
    replaced: Fact
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {"fact": self.fact.to_dict(), "replaced": self.replaced.to_dict(), "created": self.created}


class Knowledge:
    """Facts, entities, relations, events and the audit log of one ``Tiers``."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    # -- facts ----------------------------------------------------------------------------------
    def store_fact(
        self,
        content: str,
        *,
        category: str = "general",
        confidence: float = 1.0,
        source: str = "user",
        source_id: str | None = None,
        expires_at: float | None = None,
        importance: float | None = None,
        triple: Triple | None = None,
    ) -> StoredFact:
        """Store a fact (deduplicated by normalised content). Its subject/predicate/object are
        ``triple`` when given (all three: a newer object of the same subject and predicate supersedes the
        older fact) or read from the text (``derive_triple``; never superseding: the text was not stated
        as a triple), so ``history`` finds it under its subject. Without ``importance``, its salience on
        write (``extract.salience``) is stored as its importance."""
        from hermes_memory.core.triples import derive_triple  # the write path: a read never imports it

        t = self._tiers
        ensure_safe(content)  # first: what Hermes' scanner refuses is refused, never stored redacted
        text = t.secret_free(content)
        about = triple if triple is not None else derive_triple(text)
        tier2 = t.tier2()
        if importance is None:
            importance = self.salience(text, category=category).score
        with tier2.db.atomic():
            stored = tier2.facts.store(
                text, category=category, confidence=confidence, source_type=source, source_id=source_id,
                actor=t.actor, expires_at=expires_at, importance=importance,
                subject=about.subject if about else None, predicate=about.predicate if about else None,
                object=about.object if about else None, exclusive=bool(triple and triple.exclusive),
            )  # fmt: skip
            if stored.created:
                t.on_fact_change(stored.fact)
        return stored

    def correct_fact(self, uuid: str, content: str, *, reason: str, actor: str | None = None) -> Correction:
        """Store ``content`` as a correction of the believed fact ``uuid``: a new fact (same category)
        that supersedes it (closed now, kept with ``superseded_by`` and an audit entry giving ``actor``,
        default this store's, and ``reason``), both in one transaction; never an in-place rewrite.
        Raises NotFoundError for an unknown fact, ValidationError for one no longer believed or a
        correction saying the same, ThreatDetectedError for what Hermes' scanner refuses."""
        from hermes_memory.core.triples import derive_triple

        t = self._tiers
        who = actor or t.actor
        ensure_safe(content)
        text = t.secret_free(content)
        tier2 = t.tier2()
        old = tier2.facts.get(uuid, touch=False)
        if not old.is_active:
            raise ValidationError("that fact is no longer believed: correct the fact that replaced it")
        importance = self.salience(text, category=old.category).score
        about = derive_triple(text)
        with tier2.db.atomic():
            stored = tier2.facts.store(
                text, category=old.category, confidence=1.0, source_type="user", actor=who,
                importance=importance, exclusive=False, subject=about.subject if about else None,
                predicate=about.predicate if about else None, object=about.object if about else None,
            )  # fmt: skip
            if stored.fact.uuid == old.uuid:  # deduplicated into itself: the same statement
                raise ValidationError("the correction says the same as the fact")
            if old.uuid not in stored.superseded:
                tier2.facts.supersede(old.uuid, stored.fact.uuid, actor=who, reason=reason)
            if stored.created:
                t.on_fact_change(stored.fact)
        return Correction(stored.fact, tier2.facts.get(old.uuid, touch=False), stored.created)

    def salience(self, text: str, *, category: str | None = None) -> Salience:
        """Engram's salience of ``text`` written now: its wording and cues, and its novelty against the
        believed facts nearest to it (those sharing its rarest words: ``FactStore.near``)."""
        nearest = self._tiers.tier2().facts.near(text)
        return write_salience(text, category=category, nearest=nearest)

    def assert_fact(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: float | None = None,
        valid_to: float | None = None,
        category: str | None = None,
        confidence: float = 1.0,
        source: str = "user",
        source_id: str | None = None,
        importance: float | None = None,
    ) -> StoredFact:
        """Store the triple (subject, predicate, object) true from ``valid_from`` (default now) until
        ``valid_to`` (default open). An older value of the same subject and predicate whose valid time
        overlaps is superseded (closed at ``valid_from``, never deleted); a value that began later makes
        this one the older value (it ends where that one begins). Without ``importance``, its salience
        on write. Raises ValidationError (``valid_to`` not after ``valid_from``), ThreatDetectedError."""
        t = self._tiers
        for value in (subject, predicate, obj):
            ensure_safe(value)
        if valid_to is not None and valid_to <= (valid_from if valid_from is not None else time.time()):
            raise ValidationError("valid_to must be after valid_from (default: now)")
        content = t.secret_free(render(subject, predicate, obj, False, ""))
        kind = category if category is not None else category_for(predicate, content)
        if importance is None:
            importance = self.salience(content, category=kind).score
        tier2 = t.tier2()
        with tier2.db.atomic():
            stored = tier2.facts.store(
                content, category=kind, confidence=confidence, source_type=source, source_id=source_id,
                actor=t.actor, valid_from=valid_from, valid_to=valid_to, subject=subject,
                predicate=predicate, object=t.secret_free(obj), importance=importance, extractor="assert",
                by_valid_time=True,
            )  # fmt: skip
            if stored.created:
                t.on_fact_change(stored.fact)
        return stored

    def query_facts(
        self,
        query: str | None,
        *,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.5,
        as_of: float | AsOf | None = None,
    ) -> list[ScoredFact]:
        """Facts matching free text (BM25) and filters; without text, the newest. ``as_of``: believed
        then, or (an ``AsOf``) true at its valid time as known at its known time."""
        point = as_of if isinstance(as_of, AsOf) else AsOf(None, as_of)
        return self._tiers.tier2().facts.query(
            query,
            category=category,
            limit=limit,
            min_confidence=min_confidence,
            as_of=point.known,
            valid_at=point.valid,
        )

    def most_important_facts(
        self,
        *,
        limit: int,
        categories: Sequence[str] | None = None,
        subjects: Sequence[str] = (),
        exclude_source_types: Sequence[str] = (),
        min_confidence: float = 0.0,
    ) -> list[Fact]:
        """Facts believed now (in ``categories`` or about ``subjects``), clean by the threat scan, most
        important first; reading them is not a use (for the system prompt)."""
        return self._tiers.tier2().facts.most_important(
            limit=limit, categories=categories, subjects=subjects,
            exclude_source_types=exclude_source_types, min_confidence=min_confidence,
        )  # fmt: skip

    def central_entities(self, *, limit: int, exclude_names: Sequence[str] = ()) -> list[Entity]:
        """The entities with the most relations (degree centrality, from Tier 2: no graph is loaded),
        then the most mentioned."""
        return [
            e
            for e, _ in self._tiers.tier2().entities.most_connected(limit=limit, exclude_names=exclude_names)
        ]

    def get_fact(self, uuid: str) -> Fact:
        return self._tiers.tier2().facts.get(uuid)

    def update_fact(self, uuid: str, fields: dict[str, Any]) -> Fact:
        """Change the given fields of a fact (the store names the allowed ones)."""
        t = self._tiers
        checked = dict(fields)
        if "content" in checked:
            ensure_safe(checked["content"])
            checked["content"] = t.secret_free(checked["content"])
        tier2 = t.tier2()
        with tier2.db.atomic():
            fact = tier2.facts.update(uuid, actor=t.actor, **checked)
            if "content" in checked:
                t.on_fact_change(fact, removed=True)
                t.on_fact_change(fact)
        return fact

    def delete_fact(self, uuid: str, *, soft: bool = True) -> None:
        """Archive (soft) or permanently remove a fact. Raises NotFoundError."""
        t = self._tiers
        tier2 = t.tier2()
        with tier2.db.atomic():
            fact = tier2.facts.get(uuid, touch=False)
            tier2.facts.delete(uuid, soft=soft, actor=t.actor)
            if not soft:
                t.on_fact_change(fact, removed=True)

    # -- entities and relations -----------------------------------------------------------------
    def ensure_entity(
        self,
        name: str,
        entity_type: str,
        *,
        aliases: Sequence[str] = (),
        description: str | None = None,
    ) -> EnsuredEntity:
        """Create an entity or return the existing one with this name/alias and type."""
        t = self._tiers
        for value in (name, *aliases, *([description] if description else [])):
            ensure_safe(value)
        desc = None if description is None else t.secret_free(description)
        problem = thing_name_problem(name)
        if problem is not None:  # a sentence, "False", "Entry added": not a thing in the user's world
            raise ValidationError(f"entity name {name[:80]!r} {problem}")
        tier2 = t.tier2()
        with tier2.db.atomic():
            ensured = tier2.entities.ensure(
                name, entity_type, aliases=list(aliases), description=desc, actor=t.actor
            )
            t.on_entity_change(ensured.entity)
        return ensured

    def link(
        self,
        from_ref: str,
        to_ref: str,
        relation: str,
        *,
        strength: float = 1.0,
        evidence_fact_id: str | None = None,
    ) -> Link:
        """Relate two existing entities (by name, alias or uuid). Raises NotFoundError."""
        t = self._tiers
        tier2 = t.tier2()
        src = tier2.entities.resolve(from_ref)
        dst = tier2.entities.resolve(to_ref)
        rel, created = tier2.relations.link(
            src.uuid, dst.uuid, relation, strength=strength, evidence_fact_id=evidence_fact_id,
            actor=t.actor,
        )  # fmt: skip
        t.on_relation_change(rel)
        return Link(rel, src.name, dst.name, created)

    def query_entities(
        self, name: str | None, *, entity_type: str | None = None, limit: int = 10
    ) -> list[EntityMatch]:
        """Entities by name/alias (case-insensitive, then full-text) and/or type, with their relations."""
        tier2 = self._tiers.tier2()
        return [
            EntityMatch(entity, score, tuple(tier2.relations.for_entity(entity.uuid)))
            for entity, score in tier2.entities.query(name, entity_type=entity_type, limit=limit)
        ]

    # -- timeline and audit -----------------------------------------------------------------------
    def add_event(
        self,
        event_type: str,
        title: str,
        *,
        description: str | None = None,
        importance: float = 0.5,
        related_entities: Sequence[str] = (),
        timestamp: float | None = None,
        session_id: str | None = None,
    ) -> Event:
        """Record a dated event; related entities by name, alias or uuid (NotFoundError)."""
        t = self._tiers
        for value in (title, *([description] if description else [])):
            ensure_safe(value)
        tier2 = t.tier2()
        uuids = [tier2.entities.resolve(ref).uuid for ref in related_entities]
        return tier2.timeline.add(
            event_type, t.secret_free(title),
            description=None if description is None else t.secret_free(description),
            importance=importance, related_entities=uuids, timestamp=timestamp, session_id=session_id,
            actor=t.actor,
        )  # fmt: skip

    def query_events(
        self,
        *,
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        entity: str | None = None,
        limit: int = 20,
    ) -> list[Event]:
        """Events within [start, end], newest first; optionally of one type or about one entity (by
        name, alias or uuid: NotFoundError). An event of statements replaced since is marked
        (``FactHistory.mark_replaced``)."""
        tier2 = self._tiers.tier2()
        entity_uuid = None if entity is None else tier2.entities.resolve(entity).uuid
        return tier2.facts.mark_replaced(tier2.timeline.query(
            start=start, end=end, event_type=event_type, entity_uuid=entity_uuid, limit=limit
        ))  # fmt: skip

    def audit_log(self, *, limit: int = 50, target_uuid: str | None = None) -> list[AuditEntry]:
        """The newest audit entries (what was written, by whom, when)."""
        return self._tiers.tier2().audit.entries(target_uuid=target_uuid, limit=limit)


__all__ = ["EntityMatch", "Knowledge", "Link"]

"""What memory knows and how it changed: where a fact came from (``why``), a subject's history, the
contradictions resolved, an entity's timeline. Facts are bitemporal: a superseded fact is closed,
never deleted, so every answer here is read from Tier 2 as it stands."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from hermes_memory.core.tiers import Tiers
from hermes_memory.core.user_subject import subjects_for, user_names
from hermes_memory.errors import NotFoundError
from hermes_memory.extract.kin import kin_predicate
from hermes_memory.records import AsOf, AuditEntry, Episode, Event, Fact

FactStatus = Literal["active", "ended", "superseded", "archived"]


@dataclass(frozen=True)
class FactState:
    """A fact with its status (``active``, ``ended``, ``superseded`` or ``archived``)."""

    fact: Fact
    status: FactStatus

    @classmethod
    def of(cls, fact: Fact) -> FactState:
        if fact.is_archived:
            return cls(fact, "archived")
        if fact.superseded_at is not None:
            return cls(fact, "superseded")
        if fact.valid_to is not None:
            return cls(fact, "ended")
        return cls(fact, "active")

    def to_dict(self) -> dict[str, Any]:
        return {**self.fact.to_dict(), "status": self.status}


@dataclass(frozen=True)
class Missing:
    """A record a fact points at that is no longer in memory."""

    uuid: str

    def to_dict(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "missing": True}


@dataclass(frozen=True)
class FactOrigin:
    """``why``: a fact, the episodes it was learned from, what superseded it, what it superseded and
    its audit trail (newest 50 entries)."""

    fact: FactState
    source_episodes: tuple[Episode | Missing, ...]
    superseded_by: FactState | Missing | None
    supersedes: tuple[FactState, ...]
    audit: tuple[AuditEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        fact = self.fact.fact
        return {
            "fact": self.fact.to_dict(),
            "learned_at": fact.recorded_at,
            "extractor": fact.extractor,
            "confidence": fact.confidence,
            "source": {"type": fact.source_type, "id": fact.source_id},
            "source_episodes": [e.to_dict() for e in self.source_episodes],
            "superseded_by": None if self.superseded_by is None else self.superseded_by.to_dict(),
            "supersedes": [f.to_dict() for f in self.supersedes],
            "audit": [e.to_dict() for e in self.audit],
        }


@dataclass(frozen=True)
class Contradiction:
    """A fact superseded by a contradicting newer one (``new`` is None when no successor is named)."""

    old: FactState
    new: FactState | Missing | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old.to_dict(),
            "new": None if self.new is None else self.new.to_dict(),
            "superseded_at": self.old.fact.superseded_at,
        }


@dataclass(frozen=True)
class TimelineItem:
    """One step of an entity's story: a timeline event or a fact, at its time."""

    kind: Literal["event", "fact"]
    time: float
    record: Event | FactState

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "time": self.time, **self.record.to_dict()}


class History:
    """Explanations read from Tier 2. Raises ConfigError when Tier 2 is off, NotFoundError for an
    unknown fact or entity."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def why(self, fact_uuid: str) -> FactOrigin:
        """Where a fact came from: source episodes, extractor, confidence, when it was learned, and
        what superseded it (or what it superseded)."""
        tier2 = self._tiers.tier2()
        fact = tier2.facts.get(fact_uuid, touch=False)
        episodes: list[Episode | Missing] = []
        for uuid in fact.source_episodes:
            try:
                episodes.append(tier2.episodes.get(uuid))
            except NotFoundError:
                episodes.append(Missing(uuid))
        return FactOrigin(
            fact=FactState.of(fact),
            source_episodes=tuple(episodes),
            superseded_by=None if not fact.superseded_by else self._fact_or_missing(fact.superseded_by),
            supersedes=tuple(FactState.of(f) for f in tier2.facts.superseded_by(fact.uuid)),
            audit=tuple(tier2.audit.entries(target_uuid=fact.uuid, limit=50)),
        )

    def fact_history(self, subject: str, as_of: AsOf | None = None) -> list[FactState]:
        """Every fact about a subject (or the entity an alias names), oldest first, superseded ones
        included with their validity; with ``as_of``, only those recorded by its ``known`` time, and
        with its ``valid`` time only those true then as known at ``known`` (default now)."""
        tier2 = self._tiers.tier2()
        point = as_of if as_of is not None else AsOf()
        # The user ("user", "me", the user's name) is asked about under every name the user goes by.
        subjects = subjects_for(subject, user_names(tier2, self._tiers.curated))
        found: dict[str, Fact] = {}
        for name in subjects:
            facts = tier2.facts.history(name, known=point.known, valid_at=point.valid)
            if not facts:
                # The subject may be an alias: resolve it to the canonical entity name.
                for entity in tier2.entities.find(name):
                    facts = tier2.facts.history(entity.name, known=point.known, valid_at=point.valid)
                    if facts:
                        break
            found.update((f.uuid, f) for f in facts if f.uuid not in found)
        held = _role(subject)
        if held is not None:  # "the user's manager": also who held the role ("the user reports_to Greta")
            owner, predicate = held
            for name in subjects_for(owner, user_names(tier2, self._tiers.curated)):
                facts = tier2.facts.history(name, known=point.known, valid_at=point.valid)
                found.update((f.uuid, f) for f in facts if f.predicate == predicate and f.uuid not in found)
        ordered = found.values() if len(subjects) == 1 and held is None else sorted(
            found.values(), key=lambda f: (f.recorded_at or f.created_at, f.valid_from or 0)
        )
        return [FactState.of(f) for f in ordered]

    def as_of(self, point: AsOf, *, subject: str | None = None, query: str | None = None,
              limit: int = 50) -> list[FactState]:  # fmt: skip
        """Bitemporal: the facts true at ``point.valid`` (default: ``point.known``) according to what
        was known at ``point.known`` (default now) — about ``subject`` (name or alias), matching
        ``query`` (BM25), or the newest; a fact's status is as it stands now."""
        known = point.known if point.known is not None else time.time()
        at = AsOf(point.valid if point.valid is not None else known, known)
        if subject is not None:
            return self.fact_history(subject, at)[-limit:]
        found = self._tiers.tier2().facts.query(
            query, limit=limit, min_confidence=0.0, as_of=at.known, valid_at=at.valid, touch=False
        )
        return [FactState.of(s.fact) for s in found]

    def contradictions(self, limit: int) -> list[Contradiction]:
        """Facts superseded by a contradicting newer fact, newest first, with both sides."""
        tier2 = self._tiers.tier2()
        return [
            Contradiction(
                FactState.of(old), self._fact_or_missing(old.superseded_by) if old.superseded_by else None
            )
            for old in tier2.facts.superseded(limit=limit)
        ]

    def timeline(self, entity: str, limit: int) -> list[TimelineItem]:
        """An entity's (name, alias or uuid) timeline events and the facts about it, in time order;
        the last ``limit`` of them."""
        tier2 = self._tiers.tier2()
        found = tier2.entities.resolve(entity)
        items = [
            TimelineItem("event", event.timestamp, event)
            for event in tier2.facts.mark_replaced(tier2.timeline.query(entity_uuid=found.uuid, limit=limit))
        ]
        seen: set[str] = set()
        for fact in [*tier2.facts.history(found.name), *tier2.facts.about_entity(found.uuid)]:
            if fact.uuid in seen:
                continue
            seen.add(fact.uuid)
            when = fact.valid_from if fact.valid_from is not None else fact.created_at
            items.append(TimelineItem("fact", when, FactState.of(fact)))
        items.sort(key=lambda item: (item.time, item.kind))
        return items[-limit:]

    def _fact_or_missing(self, uuid: str) -> FactState | Missing:
        try:
            return FactState.of(self._tiers.tier2().facts.get(uuid, touch=False))
        except NotFoundError:
            return Missing(uuid)


def _role(subject: str) -> tuple[str, str] | None:
    """(owner, relation) of a role someone holds for someone ("the user's manager" -> ("the user",
    "reports_to")), None for any other subject."""
    owner, sep, role = subject.strip().rpartition("'s ")
    predicate = kin_predicate(role.casefold()) if sep and owner else None
    return (owner, predicate) if predicate is not None else None


__all__ = ["Contradiction", "FactOrigin", "FactState", "History", "Missing", "TimelineItem"]

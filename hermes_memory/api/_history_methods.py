"""MemoryAPI methods that explain what memory knows and how it changed: why, history, contradictions,
an entity's timeline (bitemporal facts: superseded facts are closed, never deleted)."""

from __future__ import annotations

from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import NotFoundError
from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2


def _status(fact: Fact) -> str:
    if fact.is_archived:
        return "archived"
    if fact.superseded_at is not None:
        return "superseded"
    if fact.valid_to is not None:
        return "ended"
    return "active"


def _fact(fact: Fact) -> dict[str, Any]:
    return {**fact.to_dict(), "status": _status(fact)}


class HistoryMethods:
    """Mixed into MemoryAPI; expects ``_tier2()`` and ``scope``."""

    scope: str

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def why(self, fact_uuid: str) -> Envelope:
        """Where a fact came from: source episodes, extractor, confidence, when it was learned, and
        what superseded it (or what it superseded)."""

        def call() -> dict[str, Any]:
            tier2 = self._tier2()
            fact = tier2.facts.get(v.text("fact_uuid", fact_uuid, max_chars=100).strip(), touch=False)
            episodes = []
            for uuid in fact.source_episodes:
                try:
                    episodes.append(tier2.episodes.get(uuid).to_dict())
                except NotFoundError:
                    episodes.append({"uuid": uuid, "missing": True})
            superseded_by = None
            if fact.superseded_by:
                try:
                    superseded_by = _fact(tier2.facts.get(fact.superseded_by, touch=False))
                except NotFoundError:
                    superseded_by = {"uuid": fact.superseded_by, "missing": True}
            replaced = [_fact(f) for f in tier2.facts.superseded_by(fact.uuid)]
            audit = [e.to_dict() for e in tier2.audit.entries(target_uuid=fact.uuid, limit=50)]
            return {
                "fact": _fact(fact),
                "learned_at": fact.recorded_at,
                "extractor": fact.extractor,
                "confidence": fact.confidence,
                "source": {"type": fact.source_type, "id": fact.source_id},
                "source_episodes": episodes,
                "superseded_by": superseded_by,
                "supersedes": replaced,
                "audit": audit,
            }

        return run("tier2", call)

    def fact_history(self, subject: str) -> Envelope:
        """Every fact about a subject, oldest first, superseded ones included with their validity."""

        def call() -> list[dict[str, Any]]:
            name = v.text("subject", subject, max_chars=200).strip()
            tier2 = self._tier2()
            facts = tier2.facts.history(name)
            if not facts:
                # The subject may be an alias: resolve it to the canonical entity name.
                for entity in tier2.entities.find(name):
                    facts = tier2.facts.history(entity.name)
                    if facts:
                        break
            return [_fact(f) for f in facts]

        return run("tier2", call)

    def contradictions(self, limit: int = 50) -> Envelope:
        """Facts that were superseded by a contradicting newer fact, newest first, with both sides."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            tier2 = self._tier2()
            out = []
            for old in tier2.facts.superseded(limit=lim):
                new = None
                if old.superseded_by:
                    try:
                        new = _fact(tier2.facts.get(old.superseded_by, touch=False))
                    except NotFoundError:
                        new = {"uuid": old.superseded_by, "missing": True}
                out.append({"old": _fact(old), "new": new, "superseded_at": old.superseded_at})
            return out

        return run("tier2", call)

    def timeline(self, entity: str, limit: int = 100) -> Envelope:
        """An entity's story: its timeline events and the facts about it, in time order."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            tier2 = self._tier2()
            found = tier2.entities.resolve(v.text("entity", entity, max_chars=200).strip())
            items: list[dict[str, Any]] = []
            for event in tier2.timeline.query(entity_uuid=found.uuid, limit=lim):
                items.append({"kind": "event", "time": event.timestamp, **event.to_dict()})
            seen: set[str] = set()
            for fact in [*tier2.facts.history(found.name),
                         *tier2.facts.about_entity(found.uuid)]:  # fmt: skip
                if fact.uuid in seen:
                    continue
                seen.add(fact.uuid)
                when = fact.valid_from if fact.valid_from is not None else fact.created_at
                items.append({"kind": "fact", "time": when, **_fact(fact)})
            items.sort(key=lambda item: (item["time"], item["kind"]))
            return items[-lim:]

        return run("tier2", call)

"""Frozen records passed between the stores and the API. Times are Unix seconds (UTC)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def _to_dict(obj: Any) -> dict[str, Any]:
    data = asdict(obj)
    for key, value in data.items():
        if isinstance(value, tuple):
            data[key] = list(value)
    return data


@dataclass(frozen=True, slots=True)
class Fact:
    uuid: str
    content: str
    content_hash: str
    category: str
    confidence: float
    source_type: str
    source_id: str | None
    created_at: float
    updated_at: float
    expires_at: float | None
    access_count: int
    last_accessed: float | None
    is_archived: bool
    # bitemporal: world time (valid_*) and system time (recorded_at / superseded_at)
    valid_from: float | None = None
    valid_to: float | None = None
    recorded_at: float | None = None
    superseded_at: float | None = None
    superseded_by: str | None = None
    # structure used for contradiction detection (same subject+predicate, other object)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    # provenance
    source_episodes: tuple[str, ...] = ()
    extractor: str = "manual"
    importance: float = 0.5
    scope: str = "default"

    @property
    def is_active(self) -> bool:
        return not self.is_archived and self.superseded_at is None and self.valid_to is None

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class Entity:
    uuid: str
    name: str
    entity_type: str
    aliases: tuple[str, ...]
    description: str | None
    first_seen: float
    last_seen: float
    occurrence_count: int
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class Relation:
    uuid: str
    from_entity_id: str
    to_entity_id: str
    relation_type: str
    strength: float
    evidence_fact_id: str | None
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class Event:
    uuid: str
    event_type: str
    title: str
    description: str | None
    related_entities: tuple[str, ...]
    related_facts: tuple[str, ...]
    session_id: str | None
    timestamp: float
    importance: float

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class Episode:
    """One raw message of a conversation (a turn half), stored verbatim."""

    uuid: str
    session_id: str
    role: str
    speaker: str | None
    text: str
    timestamp: float
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str = "default"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    timestamp: float
    action: str
    tier: str
    actor: str
    target_uuid: str | None
    diff: dict[str, Any] | None
    success: bool

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result from any tier. ``score`` is in [0, 1], higher is closer/more relevant."""

    id: str
    score: float
    text: str
    tier: str
    kind: str
    timestamp: float | None = None
    source_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # What ``dataclasses.asdict`` gives (containers copied, tuples as lists), without its deep
        # generic walk: recall turns every hit it returns into one.
        return {
            "id": self.id, "score": self.score, "text": self.text, "tier": self.tier, "kind": self.kind,
            "timestamp": self.timestamp, "source_ids": list(self.source_ids),
            "metadata": _copied(self.metadata),
        }  # fmt: skip


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return value


__all__ = ["AuditEntry", "Entity", "Episode", "Event", "Fact", "Hit", "Relation"]

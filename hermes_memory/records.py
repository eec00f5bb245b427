"""Frozen records passed between the stores and the API. Times are Unix seconds (UTC)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
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
    # Read, never stored: of an event taken from facts that were all replaced since, when the last of them
    # stopped being true and the statement believed now in its place (None when nothing believed does).
    superseded_at: float | None = None
    superseded_by: str | None = None

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

    @property
    def source(self) -> str:
        """Where the hit comes from, in words (what its rendered line ends with): ``turn, <session>``,
        ``fact[, <session>]``, ``curated memory|user``, ``indexed text, <source type>[, <session>]``,
        ``event[ about <entities>][, <session>]``, ``entity card``; other kinds their kind."""
        meta = self.metadata
        session = meta.get("session_id")
        kind = self.kind
        if kind == "episode":
            return f"turn, {session}"
        if kind == "fact":
            return "fact" + (f", {session}" if session else "")
        if kind == "curated":
            return f"curated {meta.get('store', '')}".strip()
        if kind == "chunk":
            return f"indexed text, {meta.get('source_type')}" + (f", {session}" if session else "")
        if kind == "event":
            about = meta.get("entities")
            named = f" about {', '.join(str(n) for n in about)}" if isinstance(about, list) and about else ""
            return f"event{named}" + (f", {session}" if session else "")
        if kind == "entity":
            return "entity card"
        return kind

    def to_dict(self) -> dict[str, Any]:
        # What ``dataclasses.asdict`` gives (containers copied, tuples as lists), without its deep
        # generic walk: recall turns every hit it returns into one; plus ``source`` (in words).
        return {
            "id": self.id, "score": self.score, "text": self.text, "tier": self.tier, "kind": self.kind,
            "source": self.source, "timestamp": self.timestamp, "source_ids": list(self.source_ids),
            "metadata": _copied(self.metadata),
        }  # fmt: skip


# ``Hit``'s slots, set directly by ``hit_of``.
(_SET_ID, _SET_SCORE, _SET_TEXT, _SET_TIER, _SET_KIND, _SET_TIMESTAMP, _SET_SOURCE_IDS, _SET_METADATA) = (
    Hit.__dict__[name].__set__ for name in (f.name for f in fields(Hit))
)


def hit_of(
    id: str,
    score: float,
    text: str,
    tier: str,
    kind: str,
    timestamp: float | None,
    source_ids: tuple[str, ...],
    metadata: dict[str, Any],
) -> Hit:
    """``Hit(id, score, text, tier, kind, timestamp, source_ids, metadata)``, its slots set directly: the
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (~1.6 us a hit, ~0.8 us
    so), and recall builds a hundred and more hits a recall (rescored, explained). The same hit."""
    hit: Hit = object.__new__(Hit)
    _SET_ID(hit, id)
    _SET_SCORE(hit, score)
    _SET_TEXT(hit, text)
    _SET_TIER(hit, tier)
    _SET_KIND(hit, kind)
    _SET_TIMESTAMP(hit, timestamp)
    _SET_SOURCE_IDS(hit, source_ids)
    _SET_METADATA(hit, metadata)
    return hit


_CONTAINERS = (dict, list, tuple)


def _copied(value: Any) -> Any:
    if isinstance(value, dict):  # a hit's metadata: mostly plain values, copied without a call each
        return {key: _copied(item) if isinstance(item, _CONTAINERS) else item for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return value


@dataclass(frozen=True, slots=True)
class TurnMessage:
    """One message of a remembered turn, as queued (before it becomes an ``Episode``)."""

    role: str  # "user" | "assistant"
    text: str
    speaker: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "speaker": self.speaker}

    @classmethod
    def from_dict(cls, raw: Any) -> TurnMessage:
        """A message read back from the queue (``speaker`` may be absent). Raises ValueError."""
        if not isinstance(raw, dict):
            raise ValueError(f"a message must be an object, got {type(raw).__name__}")
        role, text, speaker = raw.get("role"), raw.get("text"), raw.get("speaker")
        if not isinstance(role, str) or not isinstance(text, str):
            raise ValueError("a message needs 'role' and 'text' strings")
        if speaker is not None and not isinstance(speaker, str):
            raise ValueError(f"a message's 'speaker' must be a string or null, got {type(speaker).__name__}")
        return cls(role, text, speaker)


@dataclass(frozen=True, slots=True)
class TurnPayload:
    """A remembered turn as the durable queue holds it (its row's JSON: ``to_dict``/``from_dict``).

    ``scope`` is None for rows queued before scoping (they belong to the default scope); ``metadata``
    is the caller's (absent in the oldest rows: empty)."""

    session_id: str
    time: float
    messages: tuple[TurnMessage, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The queue row's JSON object (the same keys as every release wrote)."""
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "time": self.time,
            "messages": [m.to_dict() for m in self.messages],
            "metadata": self.metadata,
        }
        if self.scope is not None:
            out["scope"] = self.scope
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> TurnPayload:
        """A payload read back from the queue, in any format a release wrote. Raises ValueError."""
        if not isinstance(raw, dict):
            raise ValueError(f"a turn payload must be an object, got {type(raw).__name__}")
        session_id, when, messages = raw.get("session_id"), raw.get("time"), raw.get("messages")
        metadata, scope = raw.get("metadata", {}), raw.get("scope")
        if not isinstance(session_id, str):
            raise ValueError("a turn payload needs a 'session_id' string")
        if isinstance(when, bool) or not isinstance(when, int | float):
            raise ValueError("a turn payload needs a numeric 'time'")
        if not isinstance(messages, list):
            raise ValueError("a turn payload needs a 'messages' list")
        if not isinstance(metadata, dict):
            raise ValueError("a turn payload's 'metadata' must be an object")
        if scope is not None and not isinstance(scope, str):
            raise ValueError("a turn payload's 'scope' must be a string")
        return cls(session_id, when, tuple(TurnMessage.from_dict(m) for m in messages), metadata, scope)


@dataclass(frozen=True, slots=True)
class AsOf:
    """A bitemporal point: world time ``valid`` (what was true then) as known at system time ``known``
    (what memory had recorded by then). None: not fixed (``known`` None is now; ``valid`` None asks only
    what was believed at ``known``, as a plain ``as_of`` time does)."""

    valid: float | None = None
    known: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "known": self.known}


# The timeline event type the Hermes provider records each finished session under.
SESSION_EVENT = "session"
#: The extractor of the facts that restate a user's clause in the third person (stored by the update
#: writer so that a later statement can close them; recall finds their turns instead).
RESTATEMENT = "updates-v1"

__all__ = [
    "RESTATEMENT",
    "SESSION_EVENT",
    "AsOf",
    "AuditEntry",
    "Entity",
    "Episode",
    "Event",
    "Fact",
    "Hit",
    "Relation",
    "TurnMessage",
    "TurnPayload",
    "hit_of",
]

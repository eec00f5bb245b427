"""Input and output records of the rule-based extraction pipeline (frozen, no behaviour beyond checks).

Offsets (``span``) are ``(start, end)`` character offsets into ``MessageInput.text``, end exclusive.
Times are aware UTC datetimes; a period's ``end`` is exclusive (the first instant after it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from hermes_memory.errors import ValidationError

ENTITY_TYPES: frozenset[str] = frozenset(
    {"person", "place", "org", "project", "tool", "tech", "concept", "event", "pet", "other"}
)

#: The fixed fact categories.
#: user         — biographical state of a person: lives_in, works_at, studies_at, is_a, is_from, owns
#: preference   — likes, dislikes, prefers, interested_in, wants, plays
#: relationship — person-to-person and pets: married_to, sibling_of, parent_of, friend_of, has_pet, ...
#: event        — something that happened or is planned at a time: visited, attended, moved_to, adopted, plans
#: project      — works_on / building / writing something
#: tool         — uses (a tool or technology)
#: domain       — statements between non-person things: depends_on
#: general      — any other first-person statement kept as a clean sentence (predicate ``states``)
CATEGORIES: tuple[str, ...] = (
    "user",
    "preference",
    "relationship",
    "event",
    "project",
    "tool",
    "domain",
    "general",
)

GRANULARITIES: tuple[str, ...] = ("day", "week", "month", "year")
#: Who speaks. ``"user"``: a human participant — the person the memory is about, and any other human
#: in the conversation (both speakers of an imported chat between two people are ``"user"``, each with
#: their own ``speaker`` name). ``"assistant"``: the AI agent. The AI's words are never evidence of facts
#: about anyone else; it is a subject only when it states something about itself.
ROLES: frozenset[str] = frozenset({"user", "assistant"})

Span = tuple[int, int]


def _require_str(value: object, what: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a str, got {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class MessageInput:
    """One message (a turn half). ``addressee`` is the other participant, so "you" can be resolved.
    ``role`` is ``"user"`` (a human) or ``"assistant"`` (the AI agent, see ROLES); ``replying_to`` is the
    text of the message this one answers, so an AI reply that only echoes it yields nothing.

    ``time`` must be timezone-aware; it is converted to UTC. Raises ValidationError on wrong types.
    """

    text: str
    time: datetime
    speaker: str | None = None
    role: str = "user"
    addressee: str | None = None
    replying_to: str | None = None

    def __post_init__(self) -> None:
        _require_str(self.text, "text")
        _require_str(self.speaker, "speaker", optional=True)
        _require_str(self.addressee, "addressee", optional=True)
        _require_str(self.replying_to, "replying_to", optional=True)
        _require_str(self.role, "role")
        if self.role not in ROLES:
            raise ValidationError(f"role must be 'user' or 'assistant', got {self.role!r}")
        if not isinstance(self.time, datetime):
            raise ValidationError(f"time must be a datetime, got {type(self.time).__name__}")
        if self.time.tzinfo is None or self.time.utcoffset() is None:
            raise ValidationError("time must be timezone-aware (UTC)")
        object.__setattr__(self, "time", self.time.astimezone(UTC))

    @property
    def speaker_name(self) -> str:
        """The name "I" resolves to: the speaker, else "the user" / "the assistant"."""
        name = (self.speaker or "").strip()
        return name if name else f"the {self.role}"

    @property
    def is_ai(self) -> bool:
        """Whether the AI agent wrote this message (role ``"assistant"``)."""
        return self.role == "assistant"

    @property
    def user_name(self) -> str:
        """Who "the user" is in this message: the speaker when a human speaks, else the addressee."""
        if not self.is_ai:
            return self.speaker_name
        name = (self.addressee or "").strip()
        return name if name else "the user"


@dataclass(frozen=True, slots=True)
class KnownEntity:
    """An entity already in memory: canonical name, type and aliases used for linking mentions."""

    name: str
    entity_type: str
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _require_str(self.name, "KnownEntity.name")
        _require_str(self.entity_type, "KnownEntity.entity_type")
        if not isinstance(self.aliases, tuple) or not all(isinstance(a, str) for a in self.aliases):
            raise ValidationError("KnownEntity.aliases must be a tuple of str")


# Surface forms that must never link to a known entity even if someone stored them as an alias.
_UNLINKABLE = frozenset(
    "i me my you your we us our he him his she her they them it its this that the a an and or of "
    "to in on at is was be".split()
)


class KnownEntities:
    """Lookup of known entities by lower-cased surface form (name or alias).

    Build it once and pass it to every ``extract`` call; ``update`` keeps it current as entities are
    written (the ingest's linking cache), where it can do so exactly. Raises ValidationError when an
    item is not a KnownEntity.
    """

    __slots__ = (
        "_ambiguous",
        "_by_name",
        "_by_surface",
        "_entities",
        "_rank",
        "_repeated",
        "first_words",
        "max_tokens",
    )

    def __init__(self, entities: Iterable[KnownEntity] = ()) -> None:
        self._entities: list[KnownEntity] = []
        self._by_name: dict[str, KnownEntity] = {}  # casefolded name -> the entity (the last one listed)
        self._rank: dict[str, int] = {}  # casefolded name -> its place in the list (the first one's)
        self._repeated: set[str] = set()  # casefolded names listed more than once
        self._by_surface: dict[str, KnownEntity] = {}
        self._ambiguous: set[str] = set()
        # first word of every surface -> the most words any surface starting with it has
        self.first_words: dict[str, int] = {}
        self.max_tokens = 1
        for entity in entities:
            if not isinstance(entity, KnownEntity):
                raise ValidationError(f"KnownEntities takes KnownEntity items, got {type(entity).__name__}")
            self._append(entity)

    def _append(self, entity: KnownEntity) -> None:
        name = entity.name.casefold()
        if name in self._rank:
            self._repeated.add(name)
        self._rank.setdefault(name, len(self._entities))
        self._by_name[name] = entity
        self._entities.append(entity)
        for key in _surface_keys(entity):
            # The first entity claiming a surface keeps it: canonical names are listed first.
            claimed = self._by_surface.setdefault(key, entity)
            if claimed is not entity and claimed.name.casefold() != entity.name.casefold():
                self._ambiguous.add(key)
            self._count_words(key)

    def _count_words(self, key: str) -> None:
        size = min(6, key.count(" ") + 1)
        first = key.split(" ", 1)[0]
        self.first_words[first] = max(self.first_words.get(first, 0), size)
        self.max_tokens = max(self.max_tokens, size)

    def update(self, entity: KnownEntity) -> bool:
        """Take in a new entity, or a known one (same name) that keeps every surface form it had, with
        the lookup a fresh build over the list with ``entity`` put in would give (a known one keeps its
        place). False, and nothing changed, for anything else (a surface form dropped): build anew."""
        if not isinstance(entity, KnownEntity):
            raise ValidationError(f"KnownEntities takes KnownEntity items, got {type(entity).__name__}")
        name = entity.name.casefold()
        old = self._by_name.get(name)
        if old is None:
            self._append(entity)
            return True
        old_keys = set(_surface_keys(old))
        new_keys = _surface_keys(entity)
        if not old_keys <= set(new_keys) or name in self._repeated:
            return False
        rank = self._rank[name]
        self._entities[rank] = entity
        self._by_name[name] = entity
        for key in new_keys:
            claimed = self._by_surface.get(key)
            if claimed is None or claimed is old:
                self._by_surface[key] = entity
            elif key not in old_keys:  # another entity claims it too: the one listed first keeps it
                self._ambiguous.add(key)
                if self._rank[claimed.name.casefold()] > rank:
                    self._by_surface[key] = entity
            self._count_words(key)
        return True

    def get(self, surface: str) -> KnownEntity | None:
        """The known entity a surface form (any case) names, or None."""
        return self._by_surface.get(" ".join(surface.casefold().split()))

    def is_ambiguous(self, surface: str) -> bool:
        """Whether several differently named entities claim this surface form (e.g. two sisters)."""
        return " ".join(surface.casefold().split()) in self._ambiguous

    def __len__(self) -> int:
        return len(self._entities)

    def __iter__(self) -> Iterator[KnownEntity]:
        return iter(tuple(self._entities))


def _surface_keys(entity: KnownEntity) -> list[str]:
    """The lookup keys of an entity's name and aliases (in that order; too short or unlinkable ones
    left out)."""
    keys = []
    for surface in (entity.name, *entity.aliases):
        key = " ".join(surface.casefold().split())
        if len(key) >= 2 and key not in _UNLINKABLE:
            keys.append(key)
    return keys


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """An entity mentioned in the message.

    ``owner``/``role`` are set for relational mentions: "my sister" said by Caroline gives
    name "Caroline's sister", owner "Caroline", role "sister".
    """

    name: str
    entity_type: str
    aliases: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()
    confidence: float = 0.5
    known: bool = False
    owner: str | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """A directed edge between two extracted entities (names match ``ExtractedEntity.name``)."""

    subject: str
    predicate: str
    object: str
    negated: bool = False
    confidence: float = 0.5
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class TemporalMention:
    """A time expression resolved against the message time.

    ``is_relative`` is true when the anchor (message time) was needed: "yesterday", "last May",
    "May 8" (no year). ``label`` is the absolute rendering, e.g. "8 May 2023", "May 2023",
    "the week of 1 May 2023", "summer 2022", "2022".
    """

    text: str
    start: datetime
    end: datetime
    granularity: str
    is_relative: bool
    span: Span
    label: str


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """A clean third-person statement ("Caroline moved to Boston") plus its structure.

    ``exclusive`` marks single-valued predicates (lives_in, works_at, studies_at, married_to): a new
    object supersedes the old one. ``when`` is the time expression of the clause, if any.
    """

    content: str
    subject: str
    predicate: str
    object: str | None
    category: str
    confidence: float
    salience: float
    content_hash: str
    negated: bool = False
    exclusive: bool = False
    when: TemporalMention | None = None
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """Everything extracted from one message.

    ``is_noise`` gates fact extraction only (greetings, thanks, "ok", emoji): a noise message has no
    facts or relations. ``noise_reason`` is one of "empty", "no_words", "filler". ``salience`` in
    [0, 1] rates the whole message (for episode importance); ``truncated`` is true when the
    message was longer than the extraction window and only its head was read.
    """

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()
    facts: tuple[ExtractedFact, ...] = ()
    temporal: tuple[TemporalMention, ...] = ()
    is_noise: bool = False
    noise_reason: str | None = None
    salience: float = 0.0
    truncated: bool = False


__all__ = [
    "CATEGORIES",
    "ENTITY_TYPES",
    "GRANULARITIES",
    "ExtractedEntity",
    "ExtractedFact",
    "ExtractedRelation",
    "ExtractionResult",
    "KnownEntities",
    "KnownEntity",
    "MessageInput",
    "Span",
    "TemporalMention",
]

"""Input and output records of the rule-based extraction pipeline (frozen, no behaviour beyond checks).

Offsets (``span``) are ``(start, end)`` character offsets into ``MessageInput.text``, end exclusive.
Times are aware UTC datetimes; a period's ``end`` is exclusive (the first instant after it).
"""

from __future__ import annotations

from collections import Counter
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

    Build it once and pass it to every ``extract`` call. ``update`` and ``remove`` keep it current as
    entities are written (the ingest's linking cache), giving exactly what a fresh build over the list
    so changed would give. Raises ValidationError when an item is not a KnownEntity.
    """

    __slots__ = ("_all_sizes", "_ambiguous", "_by_name", "_by_surface", "_claims", "_entities", "_next",
                 "_sizes", "first_words", "max_tokens")  # fmt: skip

    def __init__(self, entities: Iterable[KnownEntity] = ()) -> None:
        self._entities: dict[int, KnownEntity] = {}  # order key -> entity, in list order
        self._next = 0
        self._by_name: dict[str, list[int]] = {}  # casefolded name -> its order keys (more: repeated)
        # surface key -> (order key, entity) of every entity claiming it, in list order
        self._claims: dict[str, list[tuple[int, KnownEntity]]] = {}
        self._by_surface: dict[str, KnownEntity] = {}
        self._ambiguous: set[str] = set()
        # first word of every surface -> the most words any surface starting with it has
        self.first_words: dict[str, int] = {}
        self.max_tokens = 1
        self._sizes: dict[str, Counter[int]] = {}  # first word -> how many surfaces have each size
        self._all_sizes: Counter[int] = Counter()  # the same over every first word
        for entity in entities:
            self._append(_checked(entity))

    def _append(self, entity: KnownEntity) -> None:
        """``entity`` listed last."""
        order = self._next
        self._next += 1
        self._entities[order] = entity
        self._by_name.setdefault(entity.name.casefold(), []).append(order)
        self._claim(order, entity)

    def _claim(self, order: int, entity: KnownEntity) -> None:
        for key in _surface_keys(entity):
            claims = self._claims.setdefault(key, [])
            claims.append((order, entity))
            if len(claims) > 1 and claims[-2][0] > order:
                claims.sort(key=lambda claim: claim[0])
            self._settle(key)
            self._count(key, 1)

    def _unclaim(self, order: int, entity: KnownEntity) -> None:
        for key in _surface_keys(entity):
            claims = self._claims[key]
            claims[:] = [claim for claim in claims if claim[0] != order]
            if not claims:
                del self._claims[key]
            self._settle(key)
            self._count(key, -1)

    def _settle(self, key: str) -> None:
        """The first entity claiming a surface keeps it (canonical names are listed first); it is
        ambiguous when a later one has another name."""
        claims = self._claims.get(key)
        if not claims:
            self._by_surface.pop(key, None)
            self._ambiguous.discard(key)
            return
        first = claims[0][1]
        self._by_surface[key] = first
        name = first.name.casefold()
        if any(other.name.casefold() != name for _, other in claims[1:]):
            self._ambiguous.add(key)
        else:
            self._ambiguous.discard(key)

    def _count(self, key: str, step: int) -> None:
        size = min(6, key.count(" ") + 1)
        first = key.split(" ", 1)[0]
        sizes = self._sizes.setdefault(first, Counter())
        for counter in (sizes, self._all_sizes):
            counter[size] += step
            if counter[size] <= 0:
                del counter[size]
        if sizes:
            self.first_words[first] = max(sizes)
        else:
            del self._sizes[first]
            self.first_words.pop(first, None)
        self.max_tokens = max(self._all_sizes, default=1)

    def update(self, entity: KnownEntity) -> bool:
        """Put ``entity`` in: in the place of the known one with its name, else last. False, and nothing
        changed, when several listed entities have its name (build anew)."""
        orders = self._by_name.get(_checked(entity).name.casefold())
        if orders is None:
            self._append(entity)
            return True
        if len(orders) > 1:
            return False
        order = orders[0]
        old = self._entities[order]
        if old != entity:
            self._unclaim(order, old)
            self._entities[order] = entity  # in its place
            self._claim(order, entity)
        return True

    def remove(self, name: str) -> bool:
        """Take out the entity with this name (any case; none: nothing to do). False, and nothing changed,
        when several listed entities have it (build anew)."""
        orders = self._by_name.get(name.casefold())
        if orders is None:
            return True
        if len(orders) > 1:
            return False
        order = orders[0]
        del self._by_name[name.casefold()]
        self._unclaim(order, self._entities.pop(order))
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
        return iter(tuple(self._entities.values()))


def _checked(entity: object) -> KnownEntity:
    """``entity``, when it is a KnownEntity. Raises ValidationError otherwise."""
    if not isinstance(entity, KnownEntity):
        raise ValidationError(f"KnownEntities takes KnownEntity items, got {type(entity).__name__}")
    return entity


def _surface_keys(entity: KnownEntity) -> list[str]:
    """The distinct lookup keys of an entity's name and aliases (in that order; too short or
    unlinkable ones left out)."""
    keys: dict[str, None] = {}
    for surface in (entity.name, *entity.aliases):
        key = " ".join(surface.casefold().split())
        if len(key) >= 2 and key not in _UNLINKABLE:
            keys[key] = None
    return list(keys)


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

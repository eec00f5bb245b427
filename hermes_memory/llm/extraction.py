"""Optional LLM extraction on top of the rule-based one: more facts, entities and relations per turn.

``LLMKnowledge`` is the ingestion ``KnowledgeWriter`` when ``llm.enabled`` is true. Inside the turn's
transaction it runs exactly the rule-based path, so a turn is written completely without any LLM. The
LLM is asked only *after* the turn has committed (``after_commit``): the transaction holds the
database's write lock, and ``remember_turn`` on the agent's thread needs that lock for its one insert —
an LLM call there (up to timeout x retries) would stall the agent. The LLM's additions are then
written in a second, short transaction.

Conservative by construction: LLM facts never supersede anything (``exclusive=False``), a fact whose
subject is not grounded in the turn (a speaker, or a name in the text) is dropped, and duplicates of
what the rules already found are skipped (content hash and near-duplicate test). Any LLM failure —
timeout, invalid JSON, wrong schema after retries and refinement — is logged as a warning, audited,
and leaves the rule-based result as the turn's knowledge. After a transport failure a circuit breaker
skips the LLM for ``cooldown_s``, so a dead endpoint cannot slow ingestion to a crawl.

With ``instances`` (config ``llm.instance_extraction``, on by default with the LLM) the same call also
names the turn's instances with their categories, stored as facts citing the turn (``llm.instances``);
off, the prompt and schema are exactly ``SYSTEM_PROMPT`` and ``EXTRACTION_SCHEMA``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hermes_memory.extract.dedup import content_hash, is_near_duplicate
from hermes_memory.extract.entities import thing_name_problem
from hermes_memory.extract.prefilter import classify_noise
from hermes_memory.extract.types import CATEGORIES, ENTITY_TYPES
from hermes_memory.ingest.knowledge import RuleBasedKnowledge
from hermes_memory.ingest.worker import AfterCommit, Changes
from hermes_memory.llm.breaker import TRIPPING_KINDS, CircuitBreaker
from hermes_memory.llm.client import JSONSchema, LLMClient, LLMError
from hermes_memory.llm.instances import (
    FACT_CATEGORY,
    INSTANCES_PROPERTY,
    PREDICATE,
    PROMPT_RULE,
    InstanceDraft,
    check_messages,
    grounded_source,
    instance_drafts,
)
from hermes_memory.llm.structured import StructuredLLM
from hermes_memory.records import Entity, Episode, Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.entities import EntityLimitError
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)

MAX_FACTS = 20
MAX_ENTITIES = 30
MAX_RELATIONS = 20
DEFAULT_CONFIDENCE = 0.7
_PREDICATE_CHARS = re.compile(r"[^a-z0-9]+")
_SPACE = re.compile(r"\s+")

_NAME = {"type": "string", "minLength": 1, "maxLength": 100}
EXTRACTION_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": MAX_FACTS,
            "items": {
                "type": "object",
                "required": ["content", "subject", "predicate", "category"],
                "properties": {
                    "content": {"type": "string", "minLength": 1, "maxLength": 500},
                    "subject": _NAME,
                    "predicate": {"type": "string", "minLength": 1, "maxLength": 60},
                    "object": {"type": ["string", "null"], "maxLength": 200},
                    "category": {"enum": list(CATEGORIES)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "message": {"type": "integer", "minimum": 1},
                },
            },
        },
        "entities": {
            "type": "array",
            "maxItems": MAX_ENTITIES,
            "items": {
                "type": "object",
                "required": ["name", "type"],
                "properties": {
                    "name": _NAME,
                    "type": {"enum": sorted(ENTITY_TYPES)},
                    "aliases": {"type": "array", "maxItems": 10, "items": _NAME},
                },
            },
        },
        "relations": {
            "type": "array",
            "maxItems": MAX_RELATIONS,
            "items": {
                "type": "object",
                "required": ["subject", "predicate", "object"],
                "properties": {
                    "subject": _NAME,
                    "predicate": {"type": "string", "minLength": 1, "maxLength": 60},
                    "object": _NAME,
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        },
    },
}

SYSTEM_PROMPT = (
    "You extract durable knowledge from one conversation turn for an agent's long-term memory.\n"
    "Return facts, entities and relations that the messages state or clearly imply; never invent.\n"
    "- A fact is one short third-person sentence that names people (never 'I', 'me' or 'you'), e.g. "
    "'Caroline moved to Denver in May 2023'. subject: who or what it is about; predicate: a short "
    "snake_case verb (lives_in, works_at, likes, owns, visited, plans, uses, ...); object: the other "
    "side or null; category: one of " + ", ".join(CATEGORIES) + "; message: the [number] of the message "
    "it comes from.\n"
    "- Entities: people, places, organisations, projects, tools named in the messages.\n"
    "- Relations: subject and object are entity names.\n"
    "- Skip greetings, questions, small talk and anything listed under <known_facts>.\n"
    "- The assistant (role assistant) is an AI: its words are never evidence (it repeats memory, tool "
    "results or the user): take no fact from them, and never make the assistant a subject.\n"
    "- Return empty lists when nothing is worth remembering."
)


def extraction_schema(instances: bool) -> JSONSchema:
    """The reply's schema: ``EXTRACTION_SCHEMA``, with ``instances`` (config ``llm.instance_extraction``)
    an optional list of instances too."""
    if not instances:
        return EXTRACTION_SCHEMA
    properties = {**EXTRACTION_SCHEMA["properties"], "instances": INSTANCES_PROPERTY}
    return {**EXTRACTION_SCHEMA, "properties": properties}


def system_prompt(instances: bool) -> str:
    """The system prompt: ``SYSTEM_PROMPT``, with ``instances`` the instance rule before its last line."""
    if not instances:
        return SYSTEM_PROMPT
    head, _, last = SYSTEM_PROMPT.rpartition("\n")
    return f"{head}\n{PROMPT_RULE}\n{last}"


@dataclass(frozen=True, slots=True)
class FactDraft:
    """A fact the LLM proposes (texts with runs of whitespace collapsed); not yet grounded or stored.
    ``message``: the 1-based number of the message it comes from, None for the whole turn."""

    content: str
    subject: str
    predicate: str
    category: str
    object: str | None = None
    confidence: float = DEFAULT_CONFIDENCE
    message: int | None = None


@dataclass(frozen=True, slots=True)
class EntityDraft:
    """An entity the LLM names (name and aliases with whitespace collapsed, empty aliases dropped)."""

    name: str
    entity_type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RelationDraft:
    """A relation the LLM proposes between two entity names; ``predicate`` as the LLM wrote it."""

    subject: str
    predicate: str
    object: str
    confidence: float = 0.6


@dataclass(frozen=True, slots=True)
class Drafts:
    """What the LLM proposes for one turn, read from its reply (checked against ``EXTRACTION_SCHEMA``)."""

    facts: tuple[FactDraft, ...] = ()
    entities: tuple[EntityDraft, ...] = ()
    relations: tuple[RelationDraft, ...] = ()
    instances: tuple[InstanceDraft, ...] = ()

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> Drafts:
        """The drafts of a reply that passed ``extraction_schema`` (a missing list is empty; a
        confidence that is not a number gets the default)."""
        facts = tuple(
            FactDraft(
                content=_clean(item["content"]),
                subject=_clean(item["subject"]),
                predicate=item["predicate"],
                category=item["category"],
                object=_clean(item["object"]) if isinstance(item.get("object"), str) else None,
                confidence=_unit(item.get("confidence"), DEFAULT_CONFIDENCE),
                message=item.get("message") if isinstance(item.get("message"), int) else None,
            )
            for item in reply.get("facts") or []
        )
        entities = tuple(
            EntityDraft(
                name=_clean(item["name"]),
                entity_type=item["type"],
                aliases=tuple(a for a in map(_clean, item.get("aliases") or []) if a),
            )
            for item in reply.get("entities") or []
        )
        relations = tuple(
            RelationDraft(
                subject=_clean(item["subject"]),
                predicate=item["predicate"],
                object=_clean(item["object"]),
                confidence=_unit(item.get("confidence"), 0.6),
            )
            for item in reply.get("relations") or []
        )
        return cls(facts, entities, relations, instance_drafts(reply))


def turn_prompt(episodes: Sequence[Episode], known_facts: Sequence[str]) -> str:
    """The user prompt for one turn: its messages (numbered, with speaker and date) and what is known."""
    date = datetime.fromtimestamp(episodes[0].timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f'<turn date="{date}">']
    for index, episode in enumerate(episodes, start=1):
        who = episode.speaker or f"the {episode.role}"
        lines.append(f"[{index}] {who} ({episode.role}): {episode.text}")
    lines.append("</turn>")
    lines.append("<known_facts>")
    lines.extend(f"- {fact}" for fact in known_facts)
    lines.append("</known_facts>")
    return "\n".join(lines)


class LLMKnowledge:
    """A ``KnowledgeWriter`` (the rule-based path, inside the transaction) plus an after-commit step
    that adds what the LLM finds. Never raises because of the LLM; storage errors propagate."""

    def __init__(
        self,
        rules: RuleBasedKnowledge,
        client: LLMClient,
        *,
        model: str,
        semantic: SemanticMemory | None,
        max_retries: int = 3,
        cooldown_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_facts: Callable[[list[Fact]], object] | None = None,
        instances: bool = False,
    ):
        self._rules = rules
        self._instances = instances  # config llm.instance_extraction: instances in the same call
        self._on_facts = on_facts  # the facts the LLM added to a turn, after their commit
        self._llm = StructuredLLM(client, max_retries=max_retries, sleep=sleep)
        self._semantic = semantic
        self.extractor = f"llm:{model}"
        self._breaker = CircuitBreaker(cooldown_s, clock)

    def __call__(self, tier2: Tier2, episodes: list[Episode], changes: Changes) -> None:
        """The rule-based extraction, inside the turn's transaction (no LLM here; see module doc)."""
        self._rules(tier2, episodes, changes)

    # The staged form (the ingestor's batches), the rule-based writer's own.
    def prepare(self, tier2: Tier2, episodes: list[Episode]) -> Any:
        return self._rules.prepare(tier2, episodes)

    def settled(self, episodes: list[Episode], prepared: Any) -> bool:
        return self._rules.settled(episodes, prepared)

    def write(self, tier2: Tier2, episodes: list[Episode], prepared: Any, changes: Changes) -> None:
        self._rules.write(tier2, episodes, prepared, changes)

    def forget(self) -> None:
        self._rules.forget()

    def after_commit(self, tier2: Tier2, follow: AfterCommit | None = None) -> AfterCommit:
        """An ``AfterCommit`` that runs ``follow`` on the turn, then the LLM step, then ``follow`` on
        what the LLM added (so the graph sees LLM entities and relations too)."""

        def hook(changes: Changes) -> None:
            if follow is not None:
                follow(changes)
            extra = self.enrich(tier2, changes)
            if follow is not None and (extra.entities or extra.relations):
                follow(extra)

        return hook

    def enrich(self, tier2: Tier2, changes: Changes) -> Changes:
        """Ask the LLM about a committed turn and write the extra knowledge; empty on any LLM failure.

        Raises StorageError only if writing the additions fails (the turn itself is already stored).
        """
        extra = Changes()
        episodes = [e for e in changes.episodes if e.text.strip()]
        names = tuple(e.speaker for e in episodes if e.speaker)
        if all(classify_noise(e.text, names).is_noise for e in episodes):
            return extra  # greetings and thanks: nothing for the LLM either
        if self._breaker.is_open():
            log.debug("LLM extraction skipped for turn %s: circuit open", _turn_id(episodes))
            self._audit(tier2, episodes, {"fallback": "circuit open"}, success=False)
            return extra
        known = _turn_facts(tier2, episodes)
        try:
            reply = self._llm.generate(
                system_prompt(self._instances),
                turn_prompt(episodes, [f.content for f in known]),
                extraction_schema(self._instances),
                check=lambda value: _check_reply(value, len(episodes), self._instances),
            )
        except LLMError as exc:
            log.warning(
                "LLM extraction failed for turn %s (%s: %s); kept the rule-based knowledge only",
                _turn_id(episodes), exc.kind, exc,
            )  # fmt: skip
            if exc.kind in TRIPPING_KINDS:
                self._breaker.trip()
            self._audit(tier2, episodes, {"fallback": f"{exc.kind}: {exc}"[:500]}, success=False)
            return extra
        new_facts: list[Fact] = []
        with tier2.db.atomic():
            drafts = Drafts.from_reply(reply)
            counts = self._write(tier2, episodes, changes, known, drafts, extra, new_facts)
            if self._instances:
                counts["instances"] = self._write_instances(tier2, episodes, known, drafts.instances)
            self._audit(tier2, episodes, counts, success=True)
        if new_facts and self._on_facts is not None:
            self._on_facts(new_facts)  # HAEMA's write-time reconstruction (config llm.write_reconstruction)
        return extra

    # -- writing ----------------------------------------------------------------------------------
    def _write(
        self,
        tier2: Tier2,
        episodes: list[Episode],
        changes: Changes,
        known: list[Fact],
        drafts: Drafts,
        extra: Changes,
        new_facts: list[Fact],
    ) -> dict[str, Any]:
        first = episodes[0]
        haystack = " ".join(e.text for e in episodes).casefold()
        speakers = {e.speaker.casefold() for e in episodes if e.speaker}
        uuids: dict[str, str] = {}
        for entity in changes.entities:
            for surface in (entity.name, *entity.aliases):
                uuids.setdefault(surface.casefold(), entity.uuid)
        added = {"facts": 0, "entities": 0, "relations": 0, "skipped": 0}
        # The AI is never a person of the user's world, nor the subject of a fact.
        assistants = {(e.speaker or "the assistant").casefold() for e in episodes if e.role == "assistant"}
        for proposed in drafts.entities:
            name = proposed.name
            if name.casefold() in assistants:
                added["skipped"] += 1
                continue
            if name.casefold() not in haystack and name.casefold() not in speakers:
                added["skipped"] += 1
                continue
            if thing_name_problem(name) is not None:  # a sentence, a literal, a tool echo: no thing
                added["skipped"] += 1
                continue
            try:
                ensured = tier2.entities.ensure(
                    name, proposed.entity_type, aliases=list(proposed.aliases), actor="llm",
                    seen_at=first.timestamp, any_type=True,
                )  # fmt: skip
            except EntityLimitError:  # tier2.max_entities: the name is not made an entity
                added["skipped"] += 1
                continue
            for surface in (ensured.entity.name, *ensured.entity.aliases):
                uuids.setdefault(surface.casefold(), ensured.entity.uuid)
            if ensured.created:
                added["entities"] += 1
                extra.entities.append(ensured.entity)
                if self._semantic is not None:
                    self._semantic.index_entity(ensured.entity)
        for draft in drafts.relations:
            src = _resolve(tier2, uuids, draft.subject)
            dst = _resolve(tier2, uuids, draft.object)
            if src is None or dst is None or src == dst:
                added["skipped"] += 1
                continue
            relation, created = tier2.relations.link(
                src, dst, _predicate(draft.predicate), actor="llm", strength=draft.confidence
            )
            if created:
                added["relations"] += 1
                extra.relations.append(relation)
        seen = {content_hash(f.content) for f in known}  # punctuation- and case-insensitive
        known_texts = [f.content for f in known]
        for fact in drafts.facts:
            content, subject = fact.content, fact.subject
            grounded = subject.casefold() in speakers or subject.casefold() in haystack
            digest = content_hash(content)
            if (
                not grounded
                or digest in seen
                or any(is_near_duplicate(content, text) for text in known_texts)
            ):
                added["skipped"] += 1
                continue
            seen.add(digest)
            known_texts.append(content)
            index = fact.message
            source = (episodes[index - 1],) if index is not None else tuple(episodes)
            if (len(source) == 1 and source[0].role == "assistant") or subject.casefold() in assistants:
                added["skipped"] += 1  # the AI's words are no evidence, and the AI is no subject
                continue
            obj = fact.object
            linked = [u for u in (uuids.get(subject.casefold()), uuids.get((obj or "").casefold())) if u]
            stored = tier2.facts.store(
                content,
                category=fact.category,
                confidence=fact.confidence,
                source_type="session",
                source_id=first.session_id,
                actor="llm",
                valid_from=source[0].timestamp,
                subject=subject,
                predicate=_predicate(fact.predicate),
                object=obj or None,
                exclusive=False,  # an LLM guess never closes a fact; newer facts may close it
                source_episodes=tuple(e.uuid for e in source),
                extractor=self.extractor,
                importance=0.5,
                entity_uuids=linked,
            )
            if stored.created:
                added["facts"] += 1
                new_facts.append(stored.fact)
                if self._semantic is not None:
                    self._semantic.index_fact(stored.fact)
            else:
                added["skipped"] += 1
        return {"model": self.extractor, **added}

    def _write_instances(
        self, tier2: Tier2, episodes: list[Episode], known: list[Fact], drafts: Sequence[InstanceDraft]
    ) -> int:
        """Store each grounded instance as a fact citing its message (``llm.instances``); how many were
        new. Never exclusive; not handed to ``on_facts`` (a reconstruction would retire them)."""
        seen = {content_hash(f.content) for f in known}
        added = 0
        for draft in drafts:
            source = grounded_source(draft, episodes)
            text = draft.text
            if source is None or content_hash(text) in seen:
                continue
            seen.add(content_hash(text))
            stored = tier2.facts.store(
                text, category=FACT_CATEGORY, confidence=DEFAULT_CONFIDENCE, source_type="session",
                source_id=episodes[0].session_id, actor="llm", valid_from=source[0].timestamp,
                subject=draft.who, predicate=PREDICATE, object=draft.instance, exclusive=False,
                source_episodes=tuple(e.uuid for e in source), extractor=self.extractor, importance=0.5,
            )  # fmt: skip
            if stored.created:
                added += 1
                if self._semantic is not None:
                    self._semantic.index_fact(stored.fact)
        return added

    def _audit(self, tier2: Tier2, episodes: list[Episode], diff: dict[str, Any], *, success: bool) -> None:
        with tier2.db.atomic() as conn:
            tier2.audit.record(
                conn, action="llm_extract", tier="tier2", actor="llm", target_uuid=episodes[0].uuid,
                diff={"turn": _turn_id(episodes), "extractor": self.extractor, **diff}, success=success,
            )  # fmt: skip


def _check_reply(value: dict[str, Any], messages: int, instances: bool) -> list[str]:
    errors = check_messages(value, messages) if instances else []
    for index, fact in enumerate(value.get("facts") or []):
        number = fact.get("message")
        if isinstance(number, int) and not 1 <= number <= messages:
            errors.append(f"$.facts[{index}].message: {number} is not a message number (1..{messages})")
    return errors


def _turn_facts(tier2: Tier2, episodes: list[Episode]) -> list[Fact]:
    """What the rules stored for this turn: the newest facts that cite one of its episodes."""
    ids = {e.uuid for e in episodes}
    recent = tier2.facts.query(None, limit=100, touch=False)
    return [s.fact for s in recent if ids.intersection(s.fact.source_episodes)]


def _resolve(tier2: Tier2, uuids: dict[str, str], name: str) -> str | None:
    if not name:
        return None
    found = uuids.get(name.casefold())
    if found is not None:
        return found
    entities: list[Entity] = tier2.entities.find(name)
    return entities[0].uuid if entities else None


def _turn_id(episodes: list[Episode]) -> str:
    return str(episodes[0].metadata.get("turn_uuid", episodes[0].uuid))


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _predicate(text: str) -> str:
    return _PREDICATE_CHARS.sub("_", text.casefold()).strip("_")[:40] or "states"


def _unit(value: Any, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0.0, min(1.0, float(value)))
    return default


__all__ = [
    "EXTRACTION_SCHEMA",
    "SYSTEM_PROMPT",
    "CircuitBreaker",
    "Drafts",
    "EntityDraft",
    "FactDraft",
    "LLMKnowledge",
    "RelationDraft",
    "extraction_schema",
    "system_prompt",
    "turn_prompt",
]

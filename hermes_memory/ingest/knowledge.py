"""Turn the rule-based extraction of a turn's messages into Tier 2 knowledge: entities, relations, facts
(with subject/predicate/object for supersession and the source episodes for ``why``) and timeline events.
Runs inside the turn's transaction (see ``worker.Ingestor``)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from hermes_memory.extract import KnownEntities, KnownEntity, MessageInput, extract
from hermes_memory.extract.lexicon import type_of_name
from hermes_memory.extract.phrasing import as_sentence
from hermes_memory.extract.types import ExtractedFact, ExtractedRelation, ExtractionResult
from hermes_memory.ingest.worker import Changes
from hermes_memory.records import Episode, Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.entities import EntityLimitError, better_type
from hermes_memory.tier3.semantic import SemanticMemory
from hermes_memory.updates import StatementUpdates, update_detector
from hermes_memory.updates.statement import Known
from hermes_memory.updates.writer import HOLDER_TYPES

log = logging.getLogger(__name__)

EXTRACTOR = "rules-v1"

# A change of state implies the new state, which is single-valued: "moved to Denver" means "lives in
# Denver" from then on, and must close "lives in Boston" (bitemporal supersession).
_STARTED_JOB = re.compile(r"^(?:working|to work|a (?:new )?job)\s+(?:at|for)\s+(?P<org>.+)$", re.IGNORECASE)


def implied_state(fact: ExtractedFact, object_type: str | None = None) -> tuple[str, str, str] | None:
    """(predicate, object, content) of the current state a change implies, or None. ``object_type``: the
    entity type of what the fact's object names; a move to an organisation ("moved to the Evelina
    children's hospital") is no new home."""
    if fact.negated or fact.object is None or fact.predicate == "plans":
        return None
    if fact.predicate == "moved_to" and not _organisation(fact.object, object_type):
        return "lives_in", fact.object, as_sentence(f"{fact.subject} lives in {fact.object}")
    if fact.predicate in ("started", "began", "joined"):
        match = _STARTED_JOB.match(fact.object.strip())
        if match:
            org = match.group("org").strip().rstrip(".!")
            return "works_at", org, as_sentence(f"{fact.subject} works at {org}")
    return None


def _organisation(name: str, entity_type: str | None) -> bool:
    """Whether an object names an organisation: its entity's type, or its own words ("the Evelina
    children's hospital", "Lindqvist & Berg Ltd")."""
    return entity_type == "org" or type_of_name(name.split(), "", "")[0] == "org"


class RuleBasedKnowledge:
    """A ``KnowledgeWriter``: extracts from each episode and writes what it found.

    Keeps the known entities (names, aliases, types) in memory so linking needs no query per turn.
    Staged use (the ingestor's batches): ``prepare`` extracts before the write transaction,
    ``write`` stores inside it; ``settled`` says whether the next turn may be extracted before this
    one is written (its write leaves the known entities as they are), so a batch extracts exactly what
    turn-by-turn processing would.
    """

    def __init__(self, semantic: SemanticMemory | None, updates: StatementUpdates | None = None):
        self._semantic = semantic
        # What a user's statement makes no longer true, decided by meaning (see ``updates``).
        self.updates = updates if updates is not None else StatementUpdates(lambda: update_detector(semantic))
        self._known: dict[str, KnownEntity] | None = None
        self._lookup: KnownEntities | None = None  # built from ``_known``; updated (or reset) with it
        self._holder_names: Known | None = None  # ``_holders``, until ``_known`` changes
        self._lock = threading.Lock()
        self.names_over_cap = 0  # names not made entities because of tier2.max_entities (logged once)

    def _known_entities(self, tier2: Tier2) -> KnownEntities:
        with self._lock:
            if self._known is None:
                self._known = {
                    e.name.casefold(): KnownEntity(e.name, e.entity_type, tuple(e.aliases))
                    for e in tier2.entities.all()
                }
            if self._lookup is None:
                self._lookup = KnownEntities(self._known.values())
            return self._lookup

    def forget(self) -> None:
        """Drop the cache (after a rolled-back write: it may name entities that were never stored)."""
        with self._lock:
            self._holder_names = None
            self._known = None
            self._lookup = None

    def __call__(self, tier2: Tier2, episodes: list[Episode], changes: Changes) -> None:
        self.write(tier2, episodes, [], changes)

    def prepare(self, tier2: Tier2, episodes: list[Episode]) -> list[ExtractionResult]:
        """Extract from the episodes (drafts: nothing is read from them but text, time, speaker and
        role) outside any transaction, in order, stopping after the first whose write could change
        the known entities (the rest is extracted by ``write``, after it)."""
        out: list[ExtractionResult] = []
        for index in range(len(episodes)):
            result = _extract(episodes, index, self._known_entities(tier2))
            out.append(result)
            if not self._settles(result):
                break
        return out

    def settled(self, episodes: list[Episode], prepared: list[ExtractionResult]) -> bool:
        """Whether every episode was extracted and none of the writes changes the known entities."""
        return len(prepared) == len(episodes) and all(self._settles(r) for r in prepared)

    def write(
        self, tier2: Tier2, episodes: list[Episode], prepared: list[ExtractionResult], changes: Changes
    ) -> None:
        """Store the knowledge of the turn's episodes (inside its transaction); ``prepared`` holds the
        results ``prepare`` extracted from the first episodes, the others are extracted here."""
        for index, episode in enumerate(episodes):
            if index < len(prepared):
                result = prepared[index]
            else:
                result = _extract(episodes, index, self._known_entities(tier2))
            if not result.is_noise:
                self._write(tier2, episode, result, changes)

    def _settles(self, result: ExtractionResult) -> bool:
        """True when storing ``result`` leaves the known entities as they are (every entity found is
        known under this name, with these aliases, and keeps its type)."""
        if result.is_noise or not result.entities:
            return True
        with self._lock:
            known = self._known
            if known is None:
                return False
            for found in result.entities:
                entity = known.get(found.name.casefold())
                if entity is None or entity.name != found.name:
                    return False
                if found.entity_type != entity.entity_type and better_type(
                    entity.entity_type, found.entity_type
                ):
                    return False
                keys = {a.casefold() for a in entity.aliases} | {entity.name.casefold()}
                if any(a.casefold() not in keys for a in found.aliases):
                    return False
                if any(a.casefold() in known for a in entity.aliases):
                    return False  # a write would drop that (placeholder) entry from the cache
            return True

    def _write(self, tier2: Tier2, episode: Episode, result: ExtractionResult, changes: Changes) -> None:
        uuids: dict[str, str] = {}
        for found in result.entities:
            # One entity per thing: a name seen before under another (guessed) type is that entity.
            try:
                ensured = tier2.entities.ensure(
                    found.name, found.entity_type, aliases=found.aliases, actor="ingest",
                    seen_at=episode.timestamp, any_type=True,
                )  # fmt: skip
            except EntityLimitError as exc:
                # The cap's policy for turns: the turn, its facts and chunks are stored; a name new past
                # the cap is not made an entity (its relations are left out with it).
                if not self.names_over_cap:
                    log.warning("%s (turns are still stored; later names are counted, not logged)", exc)
                self.names_over_cap += 1
                continue
            uuids[found.name.casefold()] = ensured.entity.uuid
            changes.entities.append(ensured.entity)
            entity = ensured.entity
            changed = self._remember(entity.name, entity.entity_type, entity.aliases)
            if (ensured.created or changed) and self._semantic is not None:
                self._semantic.index_entity(entity)
        stored_facts: list[tuple[tuple[int, int], Fact]] = []
        kinds = {found.name.casefold(): found.entity_type for found in result.entities}
        for fact in result.facts:
            linked = [
                u
                for u in (uuids.get(fact.subject.casefold()), uuids.get((fact.object or "").casefold()))
                if u
            ]
            when = fact.when
            stored = tier2.facts.store(
                fact.content,
                category=fact.category,
                confidence=max(0.0, min(1.0, fact.confidence)),
                source_type="session",
                source_id=episode.session_id,
                actor="ingest",
                valid_from=when.start.timestamp() if when is not None else episode.timestamp,
                subject=fact.subject,
                predicate=fact.predicate,
                object=fact.object,
                exclusive=fact.exclusive and not fact.negated,
                source_episodes=(episode.uuid,),
                extractor=EXTRACTOR,
                importance=max(0.0, min(1.0, fact.salience)),
                entity_uuids=linked,
            )
            if stored.created and self._semantic is not None:
                self._semantic.index_fact(stored.fact)
            stored_facts.append((fact.span, stored.fact))
            state = implied_state(fact, kinds.get((fact.object or "").casefold()))
            if state is not None and when is not None and when.start.timestamp() > episode.timestamp:
                state = None  # "I'm moving to Berlin in March": a plan, not yet where the user lives
            if state is not None:
                predicate, obj, content = state
                implied = tier2.facts.store(
                    content, category="user", confidence=max(0.0, min(1.0, fact.confidence)),
                    source_type="session", source_id=episode.session_id, actor="ingest",
                    valid_from=when.start.timestamp() if when is not None else episode.timestamp,
                    subject=fact.subject, predicate=predicate, object=obj, exclusive=True,
                    source_episodes=(episode.uuid,), extractor=EXTRACTOR,
                    importance=max(0.0, min(1.0, fact.salience)), entity_uuids=linked,
                )  # fmt: skip
                if implied.created and self._semantic is not None:
                    self._semantic.index_fact(implied.fact)
            if when is not None and stored.created:
                tier2.timeline.add(
                    "event", fact.content, description=f"{when.label} (from {when.text!r})",
                    importance=max(0.0, min(1.0, fact.salience)), related_entities=linked,
                    related_facts=(stored.fact.uuid,), session_id=episode.session_id,
                    timestamp=when.start.timestamp(), end_timestamp=when.end.timestamp(),
                    source_episodes=(episode.uuid,), actor="ingest",
                )  # fmt: skip
        for rel in result.relations:
            src, dst = uuids.get(rel.subject.casefold()), uuids.get(rel.object.casefold())
            if rel.negated or src is None or dst is None or src == dst:
                continue
            relation, _ = tier2.relations.link(
                src, dst, rel.predicate, strength=max(0.0, min(1.0, rel.confidence)), actor="ingest",
                evidence_fact_id=_evidence(rel, result.facts, stored_facts),
            )  # fmt: skip
            changes.relations.append(relation)
        # The facts it stores restate the user's clauses and are not embedded (``StatementUpdates.apply``).
        self.updates.apply(tier2, episode, stored_facts, self._holders(tier2))

    def _holders(self, tier2: Tier2) -> Known:
        """The lower-cased names (and aliases) of the known entities, holders apart (kept until the
        known entities change)."""
        self._known_entities(tier2)
        with self._lock:
            if self._holder_names is None:
                known = list((self._known or {}).values())
                names = [(e.entity_type in HOLDER_TYPES, n.casefold())
                         for e in known for n in (e.name, *e.aliases)]  # fmt: skip
                holders = frozenset(n for holder, n in names if holder)
                self._holder_names = Known(holders, frozenset(n for _, n in names) - holders)
            return self._holder_names

    def _remember(self, name: str, entity_type: str, aliases: tuple[str, ...]) -> bool:
        """Keep the linking cache current (new entity, alias or type); True when a known entity changed."""
        entity = KnownEntity(name, entity_type, tuple(aliases))
        with self._lock:
            if self._known is None:
                return False
            old = self._known.get(name.casefold())
            lookup = self._lookup
            for alias in aliases:  # a placeholder ("the user's dog") that took this name is gone
                gone = self._known.pop(alias.casefold(), None)
                if gone is not None and lookup is not None and not lookup.remove(gone.name):
                    lookup = None
            self._known[name.casefold()] = entity
            self._holder_names = None
            if lookup is not None and not lookup.update(entity):
                lookup = None
            self._lookup = lookup  # kept as a fresh build would make it, else built on the next extraction
            return old is not None and old != entity


def _extract(episodes: list[Episode], index: int, known: KnownEntities) -> ExtractionResult:
    """Extract episode ``index`` of a turn, by role: the assistant is never a person of the user's world
    unless the user names it (a "you" that resolved to the assistant makes no entity, fact or relation
    about it); the assistant's own words yield nothing (``extract``)."""
    result = extract(_message(episodes, index), known)
    episode = episodes[index]
    text = episode.text.casefold()
    ai = {
        e.speaker.casefold()
        for e in episodes
        if e.role == "assistant" and e.speaker and e.speaker.casefold() not in text
    }
    if episode.role == "assistant" or not ai:
        return result
    return replace(
        result,
        entities=tuple(e for e in result.entities if e.name.casefold() not in ai),
        relations=tuple(
            r for r in result.relations if r.subject.casefold() not in ai and r.object.casefold() not in ai
        ),
        facts=tuple(
            f
            for f in result.facts
            if f.subject.casefold() not in ai and (f.object or "").casefold() not in ai
        ),
    )


def _message(episodes: list[Episode], index: int) -> MessageInput:
    """What extraction reads of episode ``index`` of a turn: the AI's reply is read against the
    user's words (an echo of them yields nothing)."""
    episode = episodes[index]
    speakers = [e.speaker for e in episodes if e.speaker]
    others = [s for s in speakers if s != episode.speaker]
    return MessageInput(
        text=episode.text,
        time=datetime.fromtimestamp(episode.timestamp, tz=UTC),
        speaker=episode.speaker,
        role=episode.role if episode.role in ("user", "assistant") else "user",
        addressee=others[0] if others else None,
        replying_to=episodes[index - 1].text if index > 0 else None,
    )


def _evidence(
    relation: ExtractedRelation,
    found: Sequence[ExtractedFact],
    stored: Sequence[tuple[tuple[int, int], Fact]],
) -> str | None:
    """The stored fact that states ``relation``: the one with its subject, object and predicate, else its
    subject and object, else the one whose span overlaps the relation's most. A relation whose evidence
    a newer statement replaces is then left out of the entity cards ("Anna lives in Leeds" after "Anna
    relocated to Bristol"). None when no fact says it."""

    def key(pair: tuple[ExtractedFact, tuple[tuple[int, int], Fact]]) -> tuple[bool, bool, int]:
        fact, ((start, end), _) = pair
        same = (fact.subject.casefold(), (fact.object or "").casefold()) == (
            relation.subject.casefold(), relation.object.casefold()
        )  # fmt: skip
        overlap = min(end, relation.span[1]) - max(start, relation.span[0])
        return same and fact.predicate == relation.predicate, same, overlap

    scored = [(key(pair), pair[1][1].uuid) for pair in zip(found, stored, strict=True)]
    best = max(scored, key=lambda row: row[0], default=None)  # the first of equals, in the message's order
    return best[1] if best is not None and (best[0][1] or best[0][2] > 0) else None


__all__ = [
    "EXTRACTOR",
    "RuleBasedKnowledge",
    "implied_state",
]

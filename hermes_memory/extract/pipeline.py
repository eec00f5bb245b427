"""``extract(message)``: one message in, entities, relations, facts and dates out. No LLM, no I/O.

Flow per message: mask code -> noise gate -> sentence windows -> per sentence: entities, dates;
per clause of a declarative sentence: relations (verb patterns) and facts. A fact's content is the
clause rewritten in the third person ("I went there yesterday" -> "Caroline went there on 7 May
2023"); when the rewrite is not clean (an unresolved "it"/"they", too long) a template of the
relation is used instead. First-person clauses without a known pattern still become facts
(predicate ``states``, no object) when they carry enough content words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hermes_memory.errors import ValidationError
from hermes_memory.extract import classify, dedup
from hermes_memory.extract.entities import find_entities, thing_name_problem
from hermes_memory.extract.mentions import EntityContext, Mention
from hermes_memory.extract.phrasing import article_for, as_sentence, is_plural, plan_object, render
from hermes_memory.extract.prefilter import MAX_MESSAGE_CHARS, classify_noise, mask_code, split_sentences
from hermes_memory.extract.relations import EXCLUSIVE_PREDICATES, HOBBIES, PAST_FORMS, Triple, find_triples
from hermes_memory.extract.speech import is_echo, is_question, split_requests
from hermes_memory.extract.temporal import as_phrase, find_temporal
from hermes_memory.extract.types import (
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
    ExtractionResult,
    KnownEntities,
    MessageInput,
    TemporalMention,
)
from hermes_memory.extract.wording import (
    among_group,
    clause_subject,
    has_unresolved_reference,
    is_low_value,
    rewrite_clause,
    speaker_alone,
    split_clauses,
)

#: At most this many sentence windows of a message are read.
MAX_SENTENCES = 60
#: At most this many facts are kept per message (the most salient).
MAX_FACTS = 8
#: A scene-setting time dates events in this many following sentences.
_SCENE_SENTENCES = 2
_FUTURE = re.compile(r"\b(?:will|going to|gonna|plans?|planning|wants?|hopes?|can't wait|would)\b")
_CONCEPT_PREDICATES = frozenset({"likes", "dislikes", "prefers", "interested_in", "plays", "studies"})
_EMPTY = KnownEntities()


@dataclass(slots=True)
class _State:
    """Accumulators for one message."""

    mentions: list[Mention]
    temporal: list[TemporalMention]
    relations: list[ExtractedRelation]
    facts: list[ExtractedFact]


def extract(message: MessageInput, known: KnownEntities | None = None) -> ExtractionResult:
    """Extract entities, relations, facts and time mentions from one message.

    Deterministic and never fails on odd text. Raises ValidationError when ``message`` is not a
    MessageInput or ``known`` is not a KnownEntities.
    """
    if not isinstance(message, MessageInput):
        raise ValidationError(f"extract() takes a MessageInput, got {type(message).__name__}")
    if known is not None and not isinstance(known, KnownEntities):
        raise ValidationError(f"known must be a KnownEntities, got {type(known).__name__}")
    text = message.text[:MAX_MESSAGE_CHARS]
    masked, _ = mask_code(text)
    names = tuple(n for n in (message.speaker, message.addressee) if n)
    verdict = classify_noise(masked, names)
    speaker = message.speaker_name
    ctx = EntityContext(speaker, message.addressee, known or _EMPTY, message.user_name)
    state = _State([], [], [], [])
    if verdict.reason not in ("empty", "no_words"):
        # A time that sets the scene ("Last night was amazing! We celebrated ...") dates the events
        # told in the next sentences of the same message, until another time is named.
        scene: TemporalMention | None = None
        scene_left = 0
        for sentence in split_sentences(masked)[:MAX_SENTENCES]:
            if message.is_ai and is_echo(sentence.text, message.replying_to):
                continue  # the AI repeating or acknowledging the user is no evidence of anything
            mentions = find_entities(sentence.text, sentence.start, ctx)
            times = find_temporal(sentence.text, message.time, sentence.start)
            mentions = [m for m in mentions if not any(_overlaps(m.start, m.end, t.span) for t in times)]
            asks = is_question(sentence.text)
            if asks:  # a question asserts nothing: it only links what is known
                mentions = [m for m in mentions if m.known]
            state.mentions.extend(mentions)
            state.temporal.extend(times)
            if not (verdict.is_noise or asks):
                for clause, start in _clauses(sentence.text):
                    offset = sentence.start + start
                    _clause_facts(message, clause, offset, mentions, times, state, scene)
                    earlier = [t for t in times if t.span[0] < offset + len(clause)]
                    if earlier:
                        scene, scene_left = earlier[-1], _SCENE_SENTENCES + 1
            if times:
                scene, scene_left = times[-1], _SCENE_SENTENCES + 1
            scene_left -= 1
            if scene_left <= 0:
                scene = None
    _kin_relations(state)
    _fold_relational_pets(state)
    if message.is_ai:
        _own_statements(state, speaker)
    entities = _entities(state.mentions, text)
    facts = tuple(_as_sentence(f) for f in dedup.merge_facts(state.facts))
    if len(facts) > MAX_FACTS:
        keep = set(sorted(range(len(facts)), key=lambda i: -facts[i].salience)[:MAX_FACTS])
        facts = tuple(f for i, f in enumerate(facts) if i in keep)
    return ExtractionResult(
        entities=entities,
        relations=_unique_relations(state.relations),
        facts=facts,
        temporal=tuple(state.temporal),
        is_noise=verdict.is_noise,
        noise_reason=verdict.reason,
        salience=classify.message_salience(
            (f.salience for f in facts), is_noise=verdict.is_noise, has_entities=bool(entities)
        ),
        truncated=len(message.text) > MAX_MESSAGE_CHARS,
    )


def _as_sentence(fact: ExtractedFact) -> ExtractedFact:
    """The fact as the sentence it is read as (``as_sentence``): a relative's or a triple's fact is built
    on its subject as the message names it ("the user")."""
    content = as_sentence(fact.content)
    return fact if content == fact.content else replace(fact, content=content)


def _clauses(sentence: str) -> list[tuple[str, int]]:
    """The clauses of a sentence, a request tacked onto a statement ("... and please keep answers
    short") split off as its own, so the statement's fact does not run on into it."""
    return [
        (piece, start + at)
        for clause, start in split_clauses(sentence)
        for piece, at in split_requests(clause)
    ]


def _own_statements(state: _State, speaker: str) -> None:
    """The AI agent's message is never evidence: it repeats memory, tool results or the user, so no
    fact, relation or entity comes of it, and the AI is never a person of the user's world from its own
    words (``speaker``: its name)."""
    del speaker  # named for the reader: even what the AI says about itself is no fact
    state.facts.clear()
    state.relations.clear()
    state.mentions.clear()


def _unique_relations(relations: list[ExtractedRelation]) -> tuple[ExtractedRelation, ...]:
    seen: dict[tuple[str, str, str, bool], ExtractedRelation] = {}
    for r in relations:
        key = (r.subject.casefold(), r.predicate, r.object.casefold(), r.negated)
        if key not in seen or r.confidence > seen[key].confidence:
            seen[key] = r
    return tuple(seen.values())


def _overlaps(start: int, end: int, span: tuple[int, int]) -> bool:
    return start < span[1] and span[0] < end


def _clause_facts(
    message: MessageInput,
    clause: str,
    offset: int,
    mentions: list[Mention],
    times: list[TemporalMention],
    state: _State,
    scene: TemporalMention | None = None,
) -> None:
    first = len(state.facts)
    _clause_facts_inner(message, clause, offset, mentions, times, state)
    if scene is None:
        return
    for i in range(first, len(state.facts)):
        fact = state.facts[i]
        if fact.when is None and fact.category == "event" and not _FUTURE.search(fact.content.lower()):
            content = f"{fact.content} {as_phrase(scene)}"
            state.facts[i] = replace(
                fact,
                content=content,
                content_hash=dedup.content_hash(content),
                when=scene,
                salience=classify.salience(
                    content, fact.category, has_time=True, negated=fact.negated, confidence=fact.confidence
                ),
            )


def _clause_facts_inner(
    message: MessageInput,
    clause: str,
    offset: int,
    mentions: list[Mention],
    times: list[TemporalMention],
    state: _State,
) -> None:
    speaker, addressee = message.speaker_name, message.addressee
    clause_times = [t for t in times if offset <= t.span[0] < offset + len(clause)]
    when = clause_times[0] if clause_times else None
    rewritten = rewrite_clause(clause, offset, clause_times, speaker, addressee, mentions)
    # "We have two kids", "My wife and I moved": a fact has one holder, the speaker.
    alone = speaker_alone(rewritten, speaker) if rewritten is not None else None
    rewritten = alone or rewritten
    stops = tuple(t.span[0] - offset for t in clause_times)
    triples = find_triples(clause, offset, mentions, speaker, addressee, stops)
    role_factor = 0.8 if message.role == "assistant" else 1.0
    for i, triple in enumerate(triples):
        # One clause, one rewritten sentence: further triples ("... and Docker") get their own template.
        fact = _triple_fact(triple, rewritten if i == 0 else None, when, role_factor)
        if fact is not None:
            state.facts.append(fact)
        relation = _triple_relation(triple, state, role_factor)
        if relation is not None:
            state.relations.append(relation)
    if triples or rewritten is None or among_group(rewritten, speaker):
        return
    subject = speaker if alone else clause_subject(clause, speaker, mentions, offset, clause_times)
    if subject is None or is_low_value(clause):
        return
    has_time = when is not None
    category = classify.category_for("states", rewritten, has_time=has_time)
    confidence = round(0.6 * role_factor, 3)
    state.facts.append(
        ExtractedFact(
            content=rewritten,
            subject=subject,
            predicate="states",
            object=None,
            category=category,
            confidence=confidence,
            salience=classify.salience(
                rewritten, category, has_time=has_time, first_person=subject == speaker, confidence=confidence
            ),
            content_hash=dedup.content_hash(rewritten),
            when=when,
            span=(offset, offset + len(clause)),
        )
    )


def _triple_fact(
    triple: Triple,
    rewritten: str | None,
    when: TemporalMention | None,
    role_factor: float,
) -> ExtractedFact | None:
    predicate, obj = triple.predicate, _third_person_words(triple.object_text, triple.subject)
    category = classify.category_for(predicate, obj)
    if triple.modality == "planned" and predicate not in ("plans", "wants"):
        predicate, obj = "plans", plan_object(predicate, obj)
    elif triple.modality == "past":
        predicate = PAST_FORMS.get(predicate, predicate)
    if triple.specific and predicate not in ("plans", "wants"):
        if rewritten is None:
            return None
        predicate, obj = "states", ""
    content = rewritten
    if content is not None and not _names(content, triple.subject):
        content = None  # the rewrite lost who it is about
    if content is None:
        if has_unresolved_reference(obj):
            return None
        content = render(triple.subject, predicate, obj, triple.negated, triple.object_kind)
        if when is not None and predicate not in EXCLUSIVE_PREDICATES:
            content = f"{content} {as_phrase(when)}"
    has_time = when is not None
    if predicate != "states":
        category = classify.category_for(predicate, content, has_time=has_time)
    confidence = round(triple.confidence * role_factor, 3)
    return ExtractedFact(
        content=content,
        subject=triple.subject,
        predicate=predicate,
        object=obj or None,
        category=category,
        confidence=confidence,
        salience=classify.salience(
            content,
            category,
            has_time=has_time,
            first_person=triple.subject_kind in ("speaker", "we", "implied"),
            negated=triple.negated,
            confidence=confidence,
        ),
        content_hash=dedup.content_hash(content),
        negated=triple.negated,
        exclusive=predicate in EXCLUSIVE_PREDICATES and not triple.negated and triple.modality == "actual",
        when=when,
        span=(triple.start, triple.end),
    )


def _names(content: str, subject: str) -> bool:
    """Whether a rewritten clause names ``subject``: "the user's sister" is also "their sister" once
    the user is named ("The user thinks their sister is moving")."""
    low, subject = content.lower(), subject.lower()
    owner, _, owned = subject.partition("'s ")
    return subject in low or bool(owned and owner in low and f"their {owned}" in low)


def _third_person_words(text: str, speaker: str) -> str:
    """Possessives inside an object phrase: "continue my edu" -> "continue Caroline's edu"."""
    text = re.sub(r"\bme\b(?!-)", speaker, text, flags=re.I)
    return re.sub(r"\b(?:my|our)\b(?!-)", f"{speaker}'s", text, flags=re.I)


def _triple_relation(triple: Triple, state: _State, role_factor: float) -> ExtractedRelation | None:
    """An edge only for what holds (not plans or wishes) between two entities."""
    if triple.modality == "planned" or triple.predicate in ("plans", "wants") or triple.specific:
        return None
    predicate = triple.predicate
    if triple.modality == "past":
        if predicate not in PAST_FORMS:
            return None
        predicate = PAST_FORMS[predicate]
    target = triple.object_mention
    if target is None:
        target = _implied_object(triple)
        if target is None:
            return None
        state.mentions.append(target)
    if triple.subject_mention is None:
        state.mentions.append(Mention(triple.subject, "person", triple.start, triple.start, 1.0, known=True))
    elif triple.subject_mention.name == target.name:
        return None
    if target.entity_type == "other" and triple.object_kind in ("place", "org", "person", "tool"):
        target.entity_type = triple.object_kind  # "moved to Xyz": an unknown name typed by its verb
    return ExtractedRelation(
        subject=triple.subject,
        predicate=predicate,
        object=target.name,
        negated=triple.negated,
        confidence=round(triple.confidence * role_factor, 3),
        span=(triple.start, triple.end),
    )


def _implied_object(triple: Triple) -> Mention | None:
    """A concept ("hiking") or the subject's pet ("Melanie's dog") when the object is no named entity."""
    words = triple.object_text.split()
    if not words:
        return None
    if triple.object_kind == "pet" or (triple.predicate == "adopted" and words[-1].lower() in _PET_HEADS):
        name = f"{triple.subject}'s {words[-1].lower()}"
        return Mention(
            name,
            "pet",
            triple.end,
            triple.end,
            0.7,
            owner=triple.subject,
            role=words[-1].lower(),
            kin_predicate="has_pet",
        )
    if triple.predicate in _CONCEPT_PREDICATES and _is_concept(words):
        return Mention(triple.object_text, "concept", triple.end, triple.end, 0.6)
    return None


# Words that make an object phrase a poor graph node: "seeing", "to", "hard", "making sure veterans".
_LIGHT_GERUNDS = frozenset(
    """seeing going having making doing getting being watching talking holding playing learning trying using
    taking giving putting keeping letting finding thinking looking working spending feeling hearing saying
    sharing knowing coming helping""".split()
)
_NOT_CONCEPT = frozenset(
    """over than instead rather versus vs
    a an the my your our his her their its this that these those both all any every lots many more most
    such so too very really just also to of and or with for in on at from about into it them hard well fast
    much lot often together again alone away back out up down off around nonstop constantly regularly
    everyday daily lately recently""".split()
)


def _is_concept(words: list[str]) -> bool:
    """Whether an object phrase ("hiking", "live music", "helping people") names a reusable concept."""
    lowered = [w.lower() for w in words]
    if not 1 <= len(words) <= 3 or any(w != lw for w, lw in zip(words, lowered, strict=True)):
        return False
    if any(w in _NOT_CONCEPT for w in lowered) or lowered[-1].endswith("ly"):
        return False
    if len(words) == 1 and lowered[0].endswith("ing") and lowered[0] not in HOBBIES:
        return False  # "sinking", "escaping": a verb cut from its phrase, not a pastime
    return not (lowered[0] in _LIGHT_GERUNDS and (len(words) == 1 or lowered[0] in ("making", "getting")))


_PET_HEADS = frozenset(
    "dog dogs cat cats puppy puppies pup kitten kittens horse bunny rabbit hamster".split()
)


def _kin_relations(state: _State) -> None:
    """Relations (and, for named relatives and pets, facts) implied by "my sister Anna", "my dog"."""
    named = {m.name.casefold() for m in state.mentions}
    for mention in list(state.mentions):
        if mention.owner is None or mention.kin_predicate is None or mention.owner == mention.name:
            continue
        if mention.owner.casefold() not in named:  # "my" was read as part of "my dog": the owner is an entity
            named.add(mention.owner.casefold())
            owner = Mention(mention.owner, "person", mention.start, mention.start, 1.0, known=True)
            state.mentions.append(owner)
        relation = ExtractedRelation(
            mention.owner,
            mention.kin_predicate,
            mention.name,
            confidence=0.8,
            span=(mention.start, mention.end),
        )
        if relation not in state.relations:
            state.relations.append(relation)
        stated = any(
            f.subject == mention.owner and f.predicate == mention.kin_predicate and f.object == mention.name
            for f in state.facts
        )
        # A named relative or pet, unless the clause's own fact says it ("I have a brother called Max").
        if mention.aliases and mention.role and not stated and not _said_as(state, mention):
            content = f"{mention.owner} has {article_for(mention.role)} {mention.role} named {mention.name}"
            if is_plural(mention.role):
                content = f"{mention.owner}'s {mention.role} include {mention.name}"
            elif mention.identity:  # said as a slot the name fills: kept in that shape (``updates.shape``)
                content = f"{mention.owner}'s {mention.role} is {mention.name}"
            state.facts.append(
                ExtractedFact(
                    content=content,
                    subject=mention.owner,
                    predicate=mention.kin_predicate,
                    object=mention.name,
                    category="relationship",
                    confidence=0.8,
                    salience=classify.salience(content, "relationship", confidence=0.8),
                    content_hash=dedup.content_hash(content),
                    span=(mention.start, mention.end),
                )
            )


def _said_as(state: _State, mention: Mention) -> bool:
    """Whether a fact stated in the clause's own words already names the owner's relative or pet by its
    role and the name it is called by ("The user has a brother called Max"): it becomes the fact of that
    relation (its predicate and object), and no second fact says it again. A fact that says something
    else of them ("The user's sister Ana is a nurse") stays as it is, beside the relation's own."""
    assert mention.role is not None and mention.kin_predicate is not None
    role = re.compile(rf"\b{re.escape(mention.role)}\s+(?:named|called)\s+{re.escape(mention.name)}\b", re.I)
    for i, fact in enumerate(state.facts):
        if fact.subject == mention.owner and fact.predicate == "states" and role.search(fact.content):
            state.facts[i] = replace(fact, predicate=mention.kin_predicate, object=mention.name,
                                     category="relationship")  # fmt: skip
            return True
    return False


def _fold_relational_pets(state: _State) -> None:
    """ "I have two cats, Pixel and Nova": the unnamed "Sam's cats" the verb implied are the named ones,
    whose own relations are already there; drop the unnamed node and its edges."""
    named = {
        alias.casefold()
        for m in state.mentions
        if m.owner is not None and m.entity_type == "pet"
        for alias in m.aliases
    }
    if not named:
        return
    unnamed = {
        m.name.casefold()
        for m in state.mentions
        if not m.aliases and m.entity_type == "pet" and m.owner is not None
        and (m.name.casefold() in named or m.name.casefold().removesuffix("s") in named)
    }  # fmt: skip
    if not unnamed:
        return
    state.mentions[:] = [m for m in state.mentions if m.name.casefold() not in unnamed]
    state.relations[:] = [r for r in state.relations if r.object.casefold() not in unnamed]


def _entities(mentions: list[Mention], text: str) -> tuple[ExtractedEntity, ...]:
    """One entity per name, with every span and surface form it was mentioned by."""
    groups: dict[str, list[Mention]] = {}
    for mention in mentions:
        groups.setdefault(mention.name.casefold(), []).append(mention)
    out: list[ExtractedEntity] = []
    for group in groups.values():
        best = max(group, key=lambda m: (m.known, m.entity_type != "other", m.confidence))
        if not best.known and thing_name_problem(best.name) is not None:
            continue  # a sentence, a literal or a tool echo is no thing in the user's world
        aliases: dict[str, None] = {}
        spans: dict[tuple[int, int], None] = {}
        for m in group:
            for alias in m.aliases:
                aliases[alias] = None
            if m.end > m.start:
                spans[(m.start, m.end)] = None
                surface = text[m.start : m.end]
                if (
                    surface != best.name
                    and surface[:1].isupper()
                    and surface.split()[0].lower() not in _PRONOUNS
                ):
                    aliases[surface] = None
        out.append(
            ExtractedEntity(
                name=best.name,
                entity_type=best.entity_type,
                aliases=tuple(a for a in aliases if a != best.name),
                spans=tuple(spans),
                confidence=round(max(m.confidence for m in group), 3),
                known=any(m.known for m in group),
                owner=best.owner,
                role=best.role,
            )
        )
    return tuple(out)


_PRONOUNS = frozenset("i me my mine myself you your yours yourself our".split())


__all__ = ["MAX_FACTS", "MAX_SENTENCES", "extract"]
